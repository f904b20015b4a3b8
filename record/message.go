package record

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
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

// parseMessage decodes a message in place: its id, params, result and
// error are slices of data. Member names match as encoding/json matches
// struct fields, and a message whose method is neither a string nor null
// is invalid, as decoding it into a struct would fail.
func parseMessage(data []byte) message {
	m := message{raw: data}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' || !scanJSON(t, nil).valid {
		return m
	}
	var id, params, result, rpcErr json.RawMessage
	var method *string
	bad := false
	rawjson.Members(t, func(name, v []byte) bool {
		switch memberName(name, "id", "method", "params", "result", "error") {
		case "id":
			id = v
		case "params":
			params = v
		case "result":
			result = v
		case "error":
			rpcErr = v
		case "method":
			method = nil
			if !rawjson.IsNull(v) {
				s, ok := rawjson.String(v)
				if !ok {
					bad = true
				}
				method = &s
			}
		}
		return true
	})
	if bad {
		return m
	}
	if string(id) == "null" {
		id = nil
	}
	m.id, m.params, m.result, m.err = id, params, result, rpcErr
	switch {
	case method != nil && len(id) > 0:
		m.kind, m.method = kindRequest, *method
	case method != nil:
		m.kind, m.method = kindNotification, *method
	case len(result) > 0 || len(rpcErr) > 0:
		m.kind = kindResponse
	}
	return m
}

// memberName returns which of names the quoted member name q stands for,
// matched as encoding/json matches struct fields (exactly, else without
// regard to case); "" for none.
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

// excerptJSON shortens raw JSON for a message: compacted (when it is
// JSON) and cut at max bytes. Only the part shown is compacted.
func excerptJSON(raw []byte, max int) string {
	if !scanJSON(raw, nil).valid {
		return shorten(string(raw[:min(len(raw), max+utf8.UTFMax)]), max)
	}
	return shorten(string(compactPrefix(nil, raw, max, false)), max)
}

// compactPrefix appends valid JSON raw to dst without insignificant white
// space, as json.Compact does (and, with html, escaping <, >, & and
// U+2028, U+2029 in strings, as json.Marshal does), stopping once more
// than max bytes were appended.
func compactPrefix(dst, raw []byte, max int, html bool) []byte {
	start := len(dst)
	inString, escaped := false, false
	for i := 0; i < len(raw) && len(dst)-start <= max; i++ {
		c := raw[i]
		switch {
		case !inString:
			if isSpace(c) {
				continue
			}
			inString = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case html && (c == '<' || c == '>' || c == '&'):
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			continue
		case html && c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			dst = append(dst, `\u202`...)
			dst = append(dst, "0123456789abcdef"[raw[i+2]&0xf])
			i += 2
			continue
		}
		dst = append(dst, c)
	}
	return dst
}
