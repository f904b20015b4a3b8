package record

import (
	"bytes"
	"encoding/json"
	"strings"
)

// msgKind classifies a JSON-RPC message.
type msgKind int

const (
	kindInvalid msgKind = iota // not JSON, or not a JSON-RPC message
	kindRequest
	kindNotification
	kindResponse
)

func (k msgKind) String() string {
	switch k {
	case kindRequest:
		return "request"
	case kindNotification:
		return "notification"
	case kindResponse:
		return "response"
	}
	return "invalid"
}

// message is one JSON-RPC message of a frame, decoded just enough to match
// and pair it; raw keeps its exact bytes.
type message struct {
	raw    []byte
	kind   msgKind
	id     json.RawMessage
	method string
	params json.RawMessage
	result json.RawMessage
	err    json.RawMessage
}

// idKey is the message's id as a map key that keeps strings and numbers
// apart ("" when it has none).
func (m *message) idKey() string { return idKey(m.id) }

func idKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || string(id) == "null" {
		return ""
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s:" + s
		}
	}
	return "n:" + string(id)
}

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// parseFrame splits a frame into its messages (one, or a batch's
// elements). A frame that is not JSON yields one invalid message.
func parseFrame(data []byte) (msgs []message, batch bool) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && t[0] == '[' && json.Valid(t) {
		for _, s := range elements(t) {
			msgs = append(msgs, parseMessage(t[s.start:s.end]))
		}
		if len(msgs) > 0 {
			return msgs, true
		}
	}
	return []message{parseMessage(data)}, false
}

func parseMessage(data []byte) message {
	m := message{raw: data}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return m
	}
	var w wireMsg
	if json.Unmarshal(t, &w) != nil {
		return m
	}
	if string(w.ID) == "null" {
		w.ID = nil
	}
	m.id, m.params, m.result, m.err = w.ID, w.Params, w.Result, w.Error
	switch {
	case w.Method != nil && len(w.ID) > 0:
		m.kind, m.method = kindRequest, *w.Method
	case w.Method != nil:
		m.kind, m.method = kindNotification, *w.Method
	case len(w.Result) > 0 || len(w.Error) > 0:
		m.kind = kindResponse
	}
	return m
}

// decode parses JSON into a generic value, keeping numbers as written.
func decode(raw []byte) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// canonical returns a message's identity for matching: its method and
// params (or result and error, for a response), without its id or
// anything ignore selects, as JSON with sorted keys. Two requests that
// differ only in id, member order or whitespace have the same key.
func canonical(m message, ignore []*Path) string {
	if m.kind == kindInvalid {
		return "raw:" + string(m.raw)
	}
	obj := map[string]any{}
	if m.method != "" {
		obj["method"] = m.method
	}
	for name, raw := range map[string]json.RawMessage{"params": m.params, "result": m.result, "error": m.err} {
		if v, ok := decode(raw); ok {
			obj[name] = v
		}
	}
	v := removePaths(any(obj), ignore)
	// Ignoring the progress token (or anything else in _meta) must not
	// leave an empty _meta that the other side does not have.
	if p, ok := obj["params"].(map[string]any); ok {
		if m, ok := p["_meta"].(map[string]any); ok && len(m) == 0 {
			delete(p, "_meta")
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return m.kind.String() + ":" + b.String()
}

// excerptJSON shortens raw JSON for a message.
func excerptJSON(raw []byte, max int) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	return shorten(b.String(), max)
}
