package record

import (
	"bytes"
	"encoding/json"
	"strings"

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
	return canonicalKey(m, ignore, nil, false)
}

// canonicalWith is canonical with normalizers applied to string values,
// and absent params the same as {} (JSON-RPC 2.0, section 4: params may be
// omitted; MCP clients differ in whether they send {}).
func canonicalWith(m *jsonrpc.Message, ignore []*Path, norm *Normalizers) string {
	return canonicalKey(m, ignore, norm, true)
}

func canonicalKey(m *jsonrpc.Message, ignore []*Path, norm *Normalizers, absentIsEmpty bool) string {
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
	if _, ok := obj["params"]; !ok && absentIsEmpty && m.Method != "" {
		obj["params"] = map[string]any{}
	}
	v := norm.Value(removePaths(any(obj), ignore))
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
