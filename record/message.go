package record

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// parseFrame splits a frame into its messages (one, or a batch's
// elements), as package jsonrpc decodes them. A frame that holds no
// message (not JSON, an empty batch) is one invalid message: a trace
// keeps it, and replay matches it byte for byte.
func parseFrame(data []byte) (msgs []*jsonrpc.Message, batch bool) {
	msgs, batch, err := jsonrpc.DecodeFrame(data)
	if err != nil {
		return []*jsonrpc.Message{{Raw: data, Problems: []string{err.Error()}}}, false
	}
	return msgs, batch
}

// parseMessage decodes one message (a frame that is not a batch); anything
// else is an invalid message.
func parseMessage(data []byte) *jsonrpc.Message {
	msgs, batch := parseFrame(data)
	if batch || len(msgs) != 1 {
		return &jsonrpc.Message{Raw: data}
	}
	return msgs[0]
}

// idKey is the canonical key of a raw id (see jsonrpc.ID.Key).
func idKey(raw []byte) string { return jsonrpc.RawID(raw).Key() }

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
func canonical(m *jsonrpc.Message, ignore []*Path) string {
	if m.Kind() == jsonrpc.KindInvalid {
		return "raw:" + string(m.Raw)
	}
	obj := map[string]any{}
	if m.Method != "" {
		obj["method"] = m.Method
	}
	for name, raw := range map[string]json.RawMessage{"params": m.Params, "result": m.Result, "error": m.ErrorRaw} {
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
	return m.Kind().String() + ":" + b.String()
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
