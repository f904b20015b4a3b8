package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Object is a JSON object that keeps its members in their original order and
// their values as raw bytes. mcpx edits server results (merging list pages)
// and request params (adding _meta) through it, so everything it does not
// touch stays exactly as it was.
type Object struct {
	keys []string
	vals map[string]json.RawMessage
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]json.RawMessage{}} }

// ParseObject parses a JSON object. Empty input gives an empty object.
func ParseObject(data []byte) (*Object, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return NewObject(), nil
	}
	// Valid input (nearly always) is read in place, in one pass: the
	// token decoder below was a tenth of a REPL tool call's CPU. What is
	// not a valid object goes the slow way, which says what is wrong.
	if data[0] == '{' && json.Valid(data) {
		return parseValidObject(data), nil
	}
	return parseObjectTokens(data)
}

// CheckObject returns the error ParseObject returns for data, without
// building the object: a command checks its --args with it before the
// session types and sends them.
func CheckObject(data []byte) error {
	if data = bytes.TrimSpace(data); len(data) == 0 || data[0] == '{' && json.Valid(data) {
		return nil
	}
	_, err := parseObjectTokens(data)
	return err
}

// parseValidObject is ParseObject of a valid JSON object.
func parseValidObject(data []byte) *Object {
	o := NewObject()
	rawjson.Members(data, func(name, value []byte) bool {
		o.Set(memberName(name), json.RawMessage(bytes.Clone(value)))
		return true
	})
	return o
}

// memberName decodes the quoted member name q as encoding/json does
// (escapes decoded, invalid UTF-8 replaced by U+FFFD).
func memberName(q []byte) string {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1])
	}
	var s string
	_ = json.Unmarshal(q, &s) // q is a valid JSON string
	return s
}

// parseObjectTokens is ParseObject through encoding/json's tokens, with
// its errors.
func parseObjectTokens(data []byte) (*Object, error) {
	o := NewObject()
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected a JSON object, got %s", excerpt(data, 40))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.Set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("unexpected data after the JSON object: %s", excerpt(rest, 40))
	}
	return o, nil
}

// Get returns the raw value of key, or nil.
func (o *Object) Get(key string) json.RawMessage { return o.vals[key] }

// Has reports whether key is present.
func (o *Object) Has(key string) bool {
	_, ok := o.vals[key]
	return ok
}

// Keys returns the member names in order.
func (o *Object) Keys() []string { return o.keys }

// Set sets key to value, keeping its position when it already exists.
func (o *Object) Set(key string, value json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = value
}

// Delete removes key.
func (o *Object) Delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// Marshal encodes the object compactly, members in order. Names are
// written as json.Marshal writes strings, without its reflection.
func (o *Object) Marshal() json.RawMessage {
	n := 2
	for _, k := range o.keys {
		n += len(k) + len(o.vals[k]) + 8
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		v := o.vals[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		b = append(b, v...)
	}
	return append(b, '}')
}
