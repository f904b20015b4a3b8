// Package jsonrpc is JSON-RPC 2.0 as MCP uses it: the one decoder of
// frames in mcpx (a message or a batch, with the ways a message departs
// from the specification), the message and id types, error objects and
// codes, and the encoders of requests, notifications and responses. The
// connection engine on top of it is package jsonrpc/peer.
//
// It is a leaf (the standard library and internal/rawjson only): the
// transport, the MCP session and the trace library all build on it.
// Decoding is copy-free: a message's Raw, Params and Result are slices of
// the frame, so a large result costs nothing more than the frame it
// arrived in.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Kind classifies a message.
type Kind int

// Kinds of messages (JSON-RPC 2.0, sections 4 and 5).
const (
	// KindInvalid is a value that is no message: not an object, an object
	// whose method is neither a string nor null (see InvalidRequest), or
	// one with neither a method nor an id, result or error.
	KindInvalid Kind = iota
	// KindRequest has a method and an id.
	KindRequest
	// KindNotification has a method and no id.
	KindNotification
	// KindResponse has no method: a result, an error or at least an id.
	KindResponse
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Message is one decoded JSON-RPC 2.0 message. Raw keeps the exact bytes it
// was decoded from so nothing the peer sent is lost or normalised; Params,
// Result and ErrorRaw are the members as written.
type Message struct {
	Raw    json.RawMessage
	ID     ID // zero for notifications
	Method string
	Params json.RawMessage
	Result json.RawMessage
	// Error is a response's error member, decoded; a member that is not
	// an error object becomes an internal error that quotes it.
	Error *Error
	// ErrorRaw is the error member as written, nil when absent.
	ErrorRaw json.RawMessage
	// Problems lists ways the message departs from JSON-RPC 2.0, for the
	// caller to report (an inspector never hides a peer's mistake).
	Problems []string
	// emptyMethod is set when the method member is there but "": the
	// message is still a request or notification (one no handler has),
	// never a response.
	emptyMethod bool
	// badMethod is set when the method member is neither a string nor
	// null: the message is no request, notification or response.
	badMethod bool
}

func (m *Message) hasMethod() bool { return m.Method != "" || m.emptyMethod }

// InvalidRequest reports whether m is an invalid Request object with an id
// it can be answered with: an object whose method member is neither a
// string nor null, with an id that is a string or an integer. JSON-RPC 2.0,
// section 5.1: the receiver answers it with -32600 (Invalid Request) and
// that id, or its sender waits for an answer that never comes. m's ID is
// that id; its Kind is KindInvalid, so that it is never taken for a
// response to a request of the receiver's with the same id.
func (m *Message) InvalidRequest() bool { return m.badMethod && m.ID.Valid() }

// Kind classifies the message.
func (m *Message) Kind() Kind {
	switch {
	case m.badMethod:
		return KindInvalid
	case m.hasMethod() && m.ID.IsZero():
		return KindNotification
	case m.hasMethod():
		return KindRequest
	case m.Result != nil || m.ErrorRaw != nil || !m.ID.IsZero():
		return KindResponse
	}
	return KindInvalid
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Kind() == KindRequest }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Kind() == KindNotification }

// IsResponse reports whether m is a response (no method).
func (m *Message) IsResponse() bool { return m.Kind() == KindResponse }

// Decoding errors of DecodeFrame: a frame that holds no message at all.
var (
	ErrEmptyFrame = errors.New("empty line")
	ErrNotJSON    = errors.New("not valid JSON")
	ErrEmptyBatch = errors.New("empty batch")
	// ErrTooDeep is a frame nested deeper than the 10,000 levels Go's
	// encoding/json reads (RFC 8259 section 9 lets a parser limit it):
	// it may be valid JSON, and its top-level id and method can still
	// be read (see TopLevel), so that a request is answered.
	ErrTooDeep = fmt.Errorf("nested deeper than the %d levels mcpx reads", maxNesting)
)

// maxNesting is encoding/json's limit on nesting (json.Valid is false
// beyond it).
const maxNesting = 10000

// LeadingObjects returns the JSON objects that a frame that is not JSON
// begins with, one after another (at most max of them): what a peer that
// writes two messages on one line, or a message followed by other text,
// sent. The frame is still no message (a message is one line of JSON),
// but the ids and methods of these (TopLevel) tell the requests it meant
// to answer or make.
func LeadingObjects(data []byte, max int) [][]byte {
	var out [][]byte
	i := rawjson.SkipSpace(data, 0)
	for len(out) < max && i < len(data) && data[i] == '{' {
		end := rawjson.SkipValue(data, i)
		if !json.Valid(data[i:end]) {
			break
		}
		out = append(out, data[i:end])
		i = rawjson.SkipSpace(data, end)
	}
	return out
}

// TopLevel returns the raw "id" and the "method" string of a frame that
// is a JSON object, read without decoding the rest (a frame DecodeFrame
// refused with ErrTooDeep): nil and "" for what it lacks.
func TopLevel(data []byte) (id json.RawMessage, method string) {
	rawjson.Members(data, func(name, v []byte) bool {
		switch string(name) {
		case `"id"`:
			id = v
		case `"method"`:
			_ = json.Unmarshal(v, &method)
		}
		return true
	})
	return id, method
}

// DecodeFrame decodes one frame into its messages. A frame is a single
// message or, from 2025-03-26 peers, a batch (a JSON array of messages,
// each decoded on its own whatever its neighbours are). A frame that is
// not JSON at all, nested too deep to read, or an empty batch, is an
// error (ErrEmptyFrame, ErrNotJSON, ErrTooDeep, ErrEmptyBatch); a JSON value that is not a message yields a
// Message of KindInvalid with Problems.
//
// Member names match as encoding/json matches struct fields (exactly,
// else without regard to case). The messages' Raw, ID, Params and Result
// are slices of data (or small copies), never copies of anything large.
func DecodeFrame(data []byte) (msgs []*Message, batch bool, err error) {
	trimmed := bytes.TrimSpace(data)
	// RFC 8259 section 8.1: a JSON text must not begin with a byte order
	// mark, and a parser may ignore one. Servers whose runtime writes one
	// to stdout exist (.NET's UTF-8 console encoding does); the frame is
	// read, and its messages say what was wrong with it.
	bom := bytes.HasPrefix(trimmed, byteOrderMark)
	if bom {
		trimmed = bytes.TrimSpace(trimmed[len(byteOrderMark):])
	}
	if len(trimmed) == 0 {
		return nil, false, ErrEmptyFrame
	}
	if !json.Valid(trimmed) {
		if rawjson.NestedBeyond(trimmed, maxNesting) {
			return nil, false, ErrTooDeep
		}
		return nil, false, ErrNotJSON
	}
	if trimmed[0] == '[' {
		rawjson.Elements(trimmed, func(e []byte) bool {
			msgs = append(msgs, decodeMessage(e))
			return true
		})
		if len(msgs) == 0 {
			return nil, true, ErrEmptyBatch
		}
		batch = true
	} else {
		msgs = []*Message{decodeMessage(trimmed)}
	}
	if bom {
		for _, m := range msgs {
			m.Problems = append(m.Problems, problemBOM)
		}
	}
	return msgs, batch, nil
}

// byteOrderMark is U+FEFF in UTF-8.
var byteOrderMark = []byte("\uFEFF")

// problemBOM is the Problem of a message whose frame began with a byte
// order mark.
const problemBOM = "the frame begins with a byte order mark, which JSON text must not (RFC 8259 section 8.1; skipped)"

// decodeMessage decodes one message of a valid JSON frame. A method
// member that is neither a string nor null makes the message invalid
// (KindInvalid), with a Problem that says what the method is, and its id
// kept to answer it with (InvalidRequest).
func decodeMessage(raw json.RawMessage) *Message {
	m := &Message{Raw: raw}
	// A frame's values are never empty: an array's elements and the frame
	// itself were checked to be JSON.
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		m.Problems = append(m.Problems, "not a JSON object")
		return m
	}
	var method *string
	var jsonrpc, id, params, result, rpcError, badMethod json.RawMessage
	optString := func(v []byte) *string {
		if rawjson.IsNull(v) {
			return nil
		}
		s, ok := rawjson.String(v)
		if !ok {
			badMethod = v
			return nil
		}
		return &s
	}
	// seen marks the members read so far, to tell of a member given twice
	// (RFC 8259 section 4: names SHOULD be unique; parsers differ on
	// which one they keep, so the peer may mean the other).
	var seen, twice uint8
	rawjson.Members(raw, func(name, v []byte) bool {
		match := rawjson.MatchName(name, "jsonrpc", "id", "method", "params", "result", "error")
		if bit := memberBit(match); bit != 0 {
			twice |= seen & bit
			seen |= bit
		}
		switch match {
		case "jsonrpc":
			// A wrong version ("jsonrpc": 2.0) is a problem of the
			// message, not a reason to drop it.
			jsonrpc = v
		case "method":
			method = optString(v)
		case "id":
			id = v
		case "params":
			params = v
		case "result":
			result = v
		case "error":
			rpcError = v
		}
		return true
	})
	if badMethod != nil {
		m.badMethod = true
		m.ID = RawID(id)
		m.Problems = append(m.Problems, `"method" must be a string, not `+rawjson.Kind(badMethod)+" ("+rawjson.Excerpt(badMethod, 40)+")")
		return m
	}
	if twice != 0 {
		m.Problems = append(m.Problems, duplicateMembers(twice)...)
	}
	if jsonrpc == nil {
		m.Problems = append(m.Problems, `missing "jsonrpc": "2.0"`)
	} else if v, ok := rawjson.String(jsonrpc); !ok || v != "2.0" {
		// Said as it is: "missing" would send the reader looking for a
		// member that is there ("jsonrpc": "1.0").
		m.Problems = append(m.Problems, `"jsonrpc" must be "2.0", not `+rawjson.Excerpt(jsonrpc, 40))
	}
	if method != nil {
		m.Method = *method
		if m.Method == "" {
			m.Problems = append(m.Problems, "empty method name")
			m.emptyMethod = true
		}
	}
	m.ID = RawID(id)
	m.Params = params
	if m.hasMethod() {
		if !m.ID.IsZero() && !m.ID.Valid() {
			m.Problems = append(m.Problems, "id must be a string or an integer, got "+m.ID.Excerpt())
		}
		return m
	}
	m.Result, m.ErrorRaw = result, rpcError
	if !m.ID.IsZero() && !m.ID.Valid() && !m.ID.IsNull() {
		m.Problems = append(m.Problems, "id must be a string or an integer, got "+m.ID.Excerpt())
	}
	switch {
	case len(result) > 0 && len(rpcError) > 0:
		m.Problems = append(m.Problems, "response has both result and error")
	case len(result) == 0 && len(rpcError) == 0:
		m.Problems = append(m.Problems, "neither a request, a notification nor a response (no method, result or error)")
	}
	if m.ID.IsZero() {
		m.Problems = append(m.Problems, "response without an id")
	}
	if len(rpcError) > 0 {
		var e struct {
			Code    *int            `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		err := json.Unmarshal(rpcError, &e)
		if err != nil || e.Code == nil || e.Message == nil {
			m.Problems = append(m.Problems, "error member is not an object with code and message")
		}
		if err != nil || e.Code == nil {
			m.Error = &Error{Code: CodeInternalError, Message: "malformed error: " + string(rpcError)}
		} else {
			m.Error = &Error{Code: *e.Code, Data: e.Data}
			if e.Message != nil {
				m.Error.Message = *e.Message
			}
		}
	}
	return m
}

// memberNames are the members decodeMessage reads, in the order of their
// bits (memberBit).
var memberNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// memberBit returns the bit of the member name (one of memberNames), 0 for
// any other.
func memberBit(name string) uint8 {
	for i, n := range memberNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

// duplicateMembers says, for each member of twice (memberBit's bits), that
// the message gives it more than once: the last is the one read, as
// encoding/json and JavaScript's JSON.parse read it, but a peer whose
// parser keeps the first means something else.
func duplicateMembers(twice uint8) []string {
	var out []string
	for i, n := range memberNames {
		if twice&(1<<i) != 0 {
			out = append(out, `member "`+n+`" appears more than once; the last is read (RFC 8259 section 4: names should be unique)`)
		}
	}
	return out
}

// JSON-RPC 2.0 error codes (section 5.1).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// CodeName returns a readable name for one of JSON-RPC's own error codes,
// or "" (a protocol on top names its codes itself: see Error.Name).
func CodeName(code int) string {
	switch code {
	case CodeParseError:
		return "parse error"
	case CodeInvalidRequest:
		return "invalid request"
	case CodeMethodNotFound:
		return "method not found"
	case CodeInvalidParams:
		return "invalid params"
	case CodeInternalError:
		return "internal error"
	}
	return ""
}

// Error is a JSON-RPC error object. A session returns the peer's errors as
// Go errors (wrapped with the method), so callers can match them with
// errors.As and still print Data.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Name names Code for people where the protocol on top of JSON-RPC
	// defines it (MCP's codes: the engine's Options.CodeName fills it);
	// empty means JSON-RPC's own name for it, if any. It is not sent.
	Name string `json:"-"`
}

// Error describes the error as mcpx reports a server's answer.
func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = CodeName(e.Code)
	}
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	if len(msg) > maxErrorMessageShown {
		// A server may send a message of any length; the error is one
		// line for a person (the whole is in the message, and on --wire).
		msg = rawjson.Shorten(msg, maxErrorMessageShown) + fmt.Sprintf(" (%d bytes in all)", len(e.Message))
	}
	if name != "" {
		return fmt.Sprintf("server error %d (%s): %s", e.Code, name, msg)
	}
	return fmt.Sprintf("server error %d: %s", e.Code, msg)
}

// maxErrorMessageShown is the longest error message Error quotes whole, in
// bytes.
const maxErrorMessageShown = 4 << 10

// EncodeRequest builds a request frame. Params must be a JSON object (or
// array) or nil; id must not be zero.
func EncodeRequest(id ID, method string, params json.RawMessage) []byte {
	var b bytes.Buffer
	b.Grow(len(params) + len(method) + 48)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(id.raw)
	b.WriteString(`,"method":`)
	writeJSONString(&b, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// EncodeNotification builds a notification frame.
func EncodeNotification(method string, params json.RawMessage) []byte {
	var b bytes.Buffer
	b.Grow(len(params) + len(method) + 40)
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	writeJSONString(&b, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// EncodeResponse builds a response frame answering the request with id
// (null when id is zero: an answer to a request whose id could not be
// read), with rpcErr when it is set, else with result ({} when empty).
func EncodeResponse(id ID, result json.RawMessage, rpcErr *Error) []byte {
	return AppendResponse(make([]byte, 0, len(result)+len(id.raw)+48), id, result, rpcErr)
}

// AppendResponse appends to dst the response EncodeResponse returns: a
// caller that wraps a large result (the session protocol's envelope)
// builds the wrapping and the response in one buffer, not one for each.
func AppendResponse(dst []byte, id ID, result json.RawMessage, rpcErr *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if id.IsZero() {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id.raw...)
	}
	if rpcErr != nil {
		e, _ := json.Marshal(rpcErr)
		dst = append(dst, `,"error":`...)
		dst = append(dst, e...)
	} else {
		if len(result) == 0 {
			result = json.RawMessage("{}")
		}
		dst = append(dst, `,"result":`...)
		dst = append(dst, result...)
	}
	return append(dst, '}')
}

// EncodeBatch joins encoded messages into a batch frame.
func EncodeBatch(msgs [][]byte) []byte {
	return append(append([]byte("["), bytes.Join(msgs, []byte(","))...), ']')
}

// writeJSONString writes s as json.Marshal writes a string. A method name
// is plain ASCII (nothing to escape) and goes out as it is: json.Marshal
// of it for every frame was two thirds of what encoding a request cost
// (issue 13).
func writeJSONString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s)
			b.Write(enc)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}
