package apps

// This file is the only place where the host encodes and decodes the
// JSON-RPC 2.0 messages it exchanges with views (spec "Communication
// Protocol": MCP Apps is JSON-RPC over postMessage). When the module's
// leaf package jsonrpc lands (issue 12: Message, ID, DecodeFrame and the
// encoders), this file becomes a thin layer over it, and Error an alias of
// its error type; nothing else in the package parses or builds JSON-RPC.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// JSON-RPC error codes the host answers views with (JSON-RPC 2.0, section
// 5.1). The spec's own refusals ("Link opening denied by user", "Message
// sending denied"...) use the implementation-defined -32000.
const (
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeRefused is the host's refusal by policy (spec "MCP Apps Specific
	// Messages": "code: -32000, // Implementation-defined error").
	CodeRefused = -32000
)

// Error is a JSON-RPC error object. A Backend returns one (or wraps one)
// to have the view receive the server's error as the server sent it;
// any other error reaches the view as an internal error.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
}

// message is one decoded JSON-RPC message from a view.
type message struct {
	id     json.RawMessage // nil for a notification
	method string          // "" for a response
	params json.RawMessage // nil when absent
	result json.RawMessage // a response's result, nil when absent
	err    *Error          // a response's error
}

func (m *message) isRequest() bool      { return m.method != "" && m.id != nil }
func (m *message) isNotification() bool { return m.method != "" && m.id == nil }
func (m *message) isResponse() bool     { return m.method == "" }

// errMalformed is wrapped by every decoding failure.
var errMalformed = errors.New("not a JSON-RPC 2.0 message")

// decodeMessage decodes and checks one message. Member names are matched
// exactly (encoding/json alone would accept "ID" for "id"). A batch is
// refused: postMessage carries one message per event.
func decodeMessage(raw []byte) (message, error) {
	var m message
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		what := "not a JSON object"
		if len(trimmed) > 0 && trimmed[0] == '[' {
			what = "a batch (an array), which postMessage does not carry"
		}
		return m, fmt.Errorf("%w: %s", errMalformed, what)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil {
		return m, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if v, ok := members["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return m, fmt.Errorf(`%w: "jsonrpc" is not "2.0"`, errMalformed)
	}
	if id, ok := members["id"]; ok {
		if !validID(id) {
			return m, fmt.Errorf("%w: id %s is neither a string nor an integer", errMalformed, clip(id))
		}
		m.id = id
	}
	if p, ok := members["params"]; ok {
		if len(p) == 0 || p[0] != '{' {
			return m, fmt.Errorf("%w: params is not an object", errMalformed)
		}
		m.params = p
	}
	result, hasResult := members["result"]
	errv, hasError := members["error"]
	if mv, ok := members["method"]; ok {
		if err := json.Unmarshal(mv, &m.method); err != nil || m.method == "" {
			return m, fmt.Errorf("%w: method is not a non-empty string", errMalformed)
		}
		if hasResult || hasError {
			return m, fmt.Errorf("%w: a request or notification with a result or error", errMalformed)
		}
		return m, nil
	}
	if m.id == nil {
		return m, fmt.Errorf("%w: neither a method nor an id", errMalformed)
	}
	if hasResult == hasError {
		return m, fmt.Errorf("%w: a response needs exactly one of result and error", errMalformed)
	}
	if hasResult {
		m.result = result
		return m, nil
	}
	var e Error
	if err := json.Unmarshal(errv, &e); err != nil || e.Message == "" && e.Code == 0 {
		return m, fmt.Errorf("%w: error is not an object with a code and a message", errMalformed)
	}
	m.err = &e
	return m, nil
}

// validID reports whether id is a JSON string or an integer (MCP ids are
// never null; JSON-RPC discourages fractions).
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		var s string
		return json.Unmarshal(id, &s) == nil
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

// idKey is the key a request id is matched by: its JSON text, so that the
// number 1 and the string "1" stay different.
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// clip shortens raw JSON for an error message.
func clip(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// peekRequestID returns the id of something that looks like a request
// even when it failed to decode, so that the refusal can be answered;
// nil when there is none.
func peekRequestID(raw []byte) json.RawMessage {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.Method == nil || !validID(probe.ID) {
		return nil
	}
	return probe.ID
}

type wireRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type wireNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type wireResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type wireError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *Error          `json:"error"`
}

// encodeRequest encodes a request of the host's to a view.
func encodeRequest(id int64, method string, params any) ([]byte, error) {
	return marshal(wireRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
}

// encodeNotification encodes a notification to a view.
func encodeNotification(method string, params any) ([]byte, error) {
	return marshal(wireNotification{JSONRPC: "2.0", Method: method, Params: params})
}

// encodeResult encodes the answer to a view's request id.
func encodeResult(id json.RawMessage, result any) ([]byte, error) {
	return marshal(wireResult{JSONRPC: "2.0", ID: id, Result: result})
}

// encodeError encodes an error answer to a view's request id.
func encodeError(id json.RawMessage, e *Error) ([]byte, error) {
	return marshal(wireError{JSONRPC: "2.0", ID: id, Error: e})
}

// marshal encodes v compactly, leaving <, > and & as they are: the
// messages travel as JSON text (never inside HTML), and --wire shows them
// as a JSON-RPC peer would send them.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// asError returns the JSON-RPC error err is or wraps, or an internal
// error describing err.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
