// Package inspector is the MCP session on top of a transport connection: id
// allocation and response matching, the protocol lifecycle, capabilities,
// server-to-client requests, notifications, progress, cancellation and
// pagination, plus the rendering of results for people.
package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/mcp"
)

// Message is one decoded JSON-RPC 2.0 message. Raw keeps the exact bytes it
// was decoded from so nothing the server sent is lost or normalised.
type Message struct {
	Raw    json.RawMessage
	ID     json.RawMessage // nil for notifications
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
	// Problems lists ways the message departs from JSON-RPC 2.0, for the
	// session to report (an inspector never hides a server's mistake).
	Problems []string
	// emptyMethod is set when the method member is there but "": the
	// message is still a request or notification (one no handler has),
	// never a response.
	emptyMethod bool
}

func (m *Message) hasMethod() bool { return m.Method != "" || m.emptyMethod }

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.hasMethod() && m.ID != nil }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.hasMethod() && m.ID == nil }

// IsResponse reports whether m is a response (no method).
func (m *Message) IsResponse() bool { return !m.hasMethod() }

// DecodeFrame decodes one frame into its messages. A frame is a single
// message or, from 2025-03-26 servers, a batch (a JSON array of messages).
// A frame that is not JSON at all is an error; a JSON value that is not a
// message yields a Message with Problems.
//
// The messages' Raw, ID, Params and Result are slices of data, not copies:
// a large result costs nothing more than the frame it arrived in.
func DecodeFrame(data []byte) (msgs []*Message, batch bool, err error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, false, fmt.Errorf("empty line")
	}
	if !json.Valid(trimmed) {
		return nil, false, fmt.Errorf("not valid JSON")
	}
	if trimmed[0] == '[' {
		rawjson.Elements(trimmed, func(e []byte) bool {
			msgs = append(msgs, decodeMessage(e))
			return true
		})
		if len(msgs) == 0 {
			return nil, true, fmt.Errorf("empty batch")
		}
		return msgs, true, nil
	}
	return []*Message{decodeMessage(trimmed)}, false, nil
}

// decodeMessage decodes one message of a valid JSON frame. Member names
// match as encoding/json matches them (exactly, else without regard to
// case), and a method member that is neither a string nor null makes
// the message "not a JSON object", as decoding it into a struct would.
func decodeMessage(raw json.RawMessage) *Message {
	m := &Message{Raw: raw}
	// A frame's values are never empty: an array's elements and the frame
	// itself were checked to be JSON.
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		m.Problems = append(m.Problems, "not a JSON object")
		return m
	}
	var jsonrpc, method *string
	var id, params, result, rpcError json.RawMessage
	typeErr := false
	optString := func(v []byte) *string {
		if rawjson.IsNull(v) {
			return nil
		}
		s, ok := rawjson.String(v)
		if !ok {
			typeErr = true
			return nil
		}
		return &s
	}
	rawjson.Members(raw, func(name, v []byte) bool {
		switch memberName(name, "jsonrpc", "id", "method", "params", "result", "error") {
		case "jsonrpc":
			// A wrong version ("jsonrpc": 2.0) is a problem of the
			// message, not a reason to drop it.
			if s, ok := rawjson.String(v); ok {
				jsonrpc = &s
			}
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
	if typeErr {
		m.Problems = append(m.Problems, "not a JSON object")
		return m
	}
	if jsonrpc == nil || *jsonrpc != "2.0" {
		m.Problems = append(m.Problems, `missing "jsonrpc": "2.0"`)
	}
	if method != nil {
		m.Method = *method
		if m.Method == "" {
			m.Problems = append(m.Problems, "empty method name")
			m.emptyMethod = true
		}
	}
	if len(id) > 0 {
		m.ID = id
		if !validID(id) && !(m.IsResponse() && string(id) == "null") {
			m.Problems = append(m.Problems, "id must be a string or an integer, got "+string(id))
		}
	}
	m.Params = params
	if m.IsResponse() {
		switch {
		case len(result) > 0 && len(rpcError) > 0:
			m.Problems = append(m.Problems, "response has both result and error")
		case len(result) == 0 && len(rpcError) == 0:
			m.Problems = append(m.Problems, "neither a request, a notification nor a response (no method, result or error)")
		}
		if m.ID == nil {
			m.Problems = append(m.Problems, "response without an id")
		}
		m.Result = result
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
				m.Error = &RPCError{Code: CodeInternalError, Message: "malformed error: " + string(rpcError)}
			} else {
				m.Error = &RPCError{Code: *e.Code, Data: e.Data}
				if e.Message != nil {
					m.Error.Message = *e.Message
				}
			}
		}
	}
	return m
}

// memberName returns which of names the quoted member name q stands for,
// as encoding/json matches struct fields: exactly, else without regard to
// case; "" for none.
func memberName(q []byte, names ...string) string {
	for _, n := range names {
		if rawjson.NameIs(q, n) {
			return n
		}
	}
	name := rawjson.Name(q)
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return n
		}
	}
	return ""
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil
	}
	return false
}

// idKey turns an id into a map key that keeps strings and numbers apart
// (the JSON-RPC id "1" is not the id 1).
func idKey(id json.RawMessage) string {
	if len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s:" + s
		}
	}
	return "n:" + strings.TrimSpace(string(id))
}

// otherTypeKey is the key the same id would have with the other JSON type,
// used to diagnose servers that echo a numeric id back as a string.
func otherTypeKey(id json.RawMessage) string {
	if len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "n:" + s
		}
	}
	return "s:" + strings.TrimSpace(string(id))
}

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

var codeNames = map[int]string{
	CodeParseError:     "parse error",
	CodeInvalidRequest: "invalid request",
	CodeMethodNotFound: "method not found",
	CodeInvalidParams:  "invalid params",
	CodeInternalError:  "internal error",
}

func init() {
	for code, name := range mcp.CodeNames() {
		codeNames[code] = name
	}
}

// CodeName returns a readable name for a JSON-RPC or MCP error code, or "".
func CodeName(code int) string { return codeNames[code] }

// RPCError is a JSON-RPC error object. When the server answers a request
// with an error, the session returns it as a Go error (wrapped with the
// method), so callers can match it with errors.As and still print Data.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	name := CodeName(e.Code)
	if name != "" {
		return fmt.Sprintf("server error %d (%s): %s", e.Code, name, e.Message)
	}
	return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
}

// encodeRequest builds a request frame. Params must be a JSON object or nil.
func encodeRequest(id int64, method string, params json.RawMessage) []byte {
	return encodeRequestID(json.RawMessage(strconv.FormatInt(id, 10)), method, params)
}

// encodeRequestID builds a request frame with a raw id (a JSON string or
// integer).
func encodeRequestID(id json.RawMessage, method string, params json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"method":`)
	writeJSONString(&b, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// encodeNotification builds a notification frame.
func encodeNotification(method string, params json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	writeJSONString(&b, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// encodeResponse builds a response frame answering the request with id.
func encodeResponse(id json.RawMessage, result json.RawMessage, rpcErr *RPCError) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if rpcErr != nil {
		e, _ := json.Marshal(rpcErr)
		b.WriteString(`,"error":`)
		b.Write(e)
	} else {
		if len(result) == 0 {
			result = json.RawMessage("{}")
		}
		b.WriteString(`,"result":`)
		b.Write(result)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

// compactJSON returns v as compact JSON bytes. RawMessage values are
// compacted (stdio frames must not contain newlines) but otherwise kept.
func compactJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(x) == 0 {
			return nil, nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, x); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return json.Marshal(v)
}
