package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// minElided is the shortest JSON string that is taken for binary data
// when it is all base64: shorter ones (an id, a hash) are shown.
const minElided = 1024

// elideBinary returns raw (valid JSON) with every string of at least
// minElided characters that holds nothing but base64 (standard or URL
// alphabet) replaced by a short description of it, so human output never
// dumps binary data; raw itself when there is none. --json output is never
// elided.
func elideBinary(raw []byte, hint string) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		j := i + 1
		b64 := true
		for ; j < len(raw) && raw[j] != '"'; j++ {
			switch c := raw[j]; {
			case c == '\\':
				j++
				// An escaped slash is base64's "/" as some encoders write it.
				if j < len(raw) && raw[j] != '/' {
					b64 = false
				}
			case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
				c == '+', c == '/', c == '=', c == '-', c == '_':
			default:
				b64 = false
			}
		}
		if b64 && j-i-1 >= minElided {
			n := len(bytes.ReplaceAll(raw[i+1:j], []byte(`\/`), []byte("/")))
			n = n * 3 / 4
			desc, _ := json.Marshal(fmt.Sprintf("[base64 data, about %s; %s]", HumanSize(int64(n)), hint))
			out = append(out, raw[last:i]...)
			out = append(out, desc...)
			last = j + 1
		}
		i = j
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// humanJSON prints JSON for people: pretty, with binary data elided.
func (p *Printer) humanJSON(raw json.RawMessage) {
	if !json.Valid(raw) {
		p.JSON(raw)
		return
	}
	p.JSON(elideBinary(raw, p.saveHint()))
}

// maxCompared bounds the text compared with structured content: a
// larger duplicate is printed twice rather than held twice more in memory.
const maxCompared = 8 << 20

// sameJSON reports whether the JSON text text is the same value as the
// JSON structured: a tool that returns structured content also returns it
// serialized in a text block (spec 2025-06-18 and later: server/tools,
// "Structured Content"), which need not be printed twice. Texts far
// longer than structured are not parsed.
func sameJSON(text string, structured []byte) bool {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '{' && t[0] != '[') || len(t) > 4*len(structured)+4096 || len(t) > maxCompared {
		return false
	}
	var a, b any
	da := json.NewDecoder(strings.NewReader(t))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(structured))
	db.UseNumber()
	if da.Decode(&a) != nil || da.More() || db.Decode(&b) != nil {
		return false
	}
	return reflect.DeepEqual(normalizeNumbers(a), normalizeNumbers(b))
}

// normalizeNumbers makes equal numbers written differently (1.0, 1, 1e0)
// compare equal.
func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	case map[string]any:
		for k, e := range v {
			v[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normalizeNumbers(e)
		}
	}
	return v
}
