package inspector

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzParseObject checks the order-keeping object that mcpx edits results
// and params through: ParseObject accepts exactly the JSON objects (and
// empty input), finds the members encoding/json finds (the last of
// duplicates wins) in the order the token decoder finds them, and Marshal writes them back as a valid object that
// parses to the same.
func FuzzParseObject(f *testing.F) {
	for _, fr := range fuzzing.Frames() {
		f.Add(fr)
	}
	f.Add([]byte(`{"a":1,"b":2,"a":3}`))
	f.Add([]byte(`{"a":1} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseObject(data)
		if cerr := CheckObject(data); (cerr == nil) != (err == nil) || cerr != nil && cerr.Error() != err.Error() {
			t.Fatalf("CheckObject(%q) = %v, ParseObject's error %v", data, cerr, err)
		}
		trimmed := bytes.TrimSpace(data)
		var want map[string]json.RawMessage
		isObject := len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &want) == nil
		switch {
		case len(trimmed) == 0:
			if err != nil || len(o.Keys()) != 0 {
				t.Fatalf("ParseObject(%q) = %v, %v; want an empty object", data, o, err)
			}
			return
		case (err == nil) != isObject:
			t.Fatalf("ParseObject(%q): error %v, but it is a JSON object: %v", data, err, isObject)
		case err != nil:
			return
		}
		if len(o.Keys()) != len(want) {
			t.Fatalf("ParseObject(%q) has members %q, want %d", data, o.Keys(), len(want))
		}
		for k, v := range want {
			if !o.Has(k) || !bytes.Equal(o.Get(k), v) {
				t.Fatalf("ParseObject(%q): member %q = %q, want %q", data, k, o.Get(k), v)
			}
		}
		// The in-place reading of valid objects and the token decoder
		// agree on members, their order and their bytes.
		tok, err := parseObjectTokens(trimmed)
		if err != nil || !slices.Equal(tok.Keys(), o.Keys()) {
			t.Fatalf("ParseObject(%q) has members %q; the token decoder %q, %v", data, o.Keys(), tok.Keys(), err)
		}
		for _, k := range o.Keys() {
			if !bytes.Equal(tok.Get(k), o.Get(k)) {
				t.Fatalf("ParseObject(%q): member %q = %q; the token decoder %q", data, k, o.Get(k), tok.Get(k))
			}
		}
		out := o.Marshal()
		again, err := ParseObject(out)
		if err != nil || !json.Valid(out) || len(again.Keys()) != len(o.Keys()) {
			t.Fatalf("ParseObject(%q).Marshal() = %q, which reads back as %v, %v", data, out, again, err)
		}
		for i, k := range o.Keys() {
			if again.Keys()[i] != k || !bytes.Equal(again.Get(k), o.Get(k)) {
				t.Fatalf("ParseObject(%q).Marshal() = %q changes member %q", data, out, k)
			}
		}
	})
}

// FuzzInputSchemaOf checks that the inputSchema read in place is the one
// encoding/json decodes from a tool.
func FuzzInputSchemaOf(f *testing.F) {
	f.Add([]byte(`{"name":"echo","inputSchema":{"type":"object"}}`))
	f.Add([]byte(`{"inputschema":1,"INPUTSCHEMA":null}`))
	f.Add([]byte(`{"inputSchema":{"a":[1,{"b":"}"}]},"x":"\"{"}`))
	f.Add([]byte(`["inputSchema"]`))
	f.Fuzz(func(t *testing.T, tool []byte) {
		if !json.Valid(tool) {
			return
		}
		var want struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		_ = json.Unmarshal(tool, &want)
		if got := inputSchemaOf(tool); !bytes.Equal(got, want.InputSchema) {
			t.Fatalf("inputSchemaOf(%q) = %q, encoding/json %q", tool, got, want.InputSchema)
		}
	})
}

// FuzzItemName checks that an item's name read in place is the one
// encoding/json decodes, and fails where it fails.
func FuzzItemName(f *testing.F) {
	f.Add([]byte(`{"name":"echo","inputSchema":{"type":"object"}}`))
	f.Add([]byte(`{"NAME":"a","name":null}`))
	f.Add([]byte(`{"name":1}`))
	f.Add([]byte(`{"name":"a\u00e9\ud800"}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`["name"]`))
	f.Fuzz(func(t *testing.T, it []byte) {
		var want struct {
			Name string `json:"name"`
		}
		werr := json.Unmarshal(it, &want)
		got, ok := itemName(it)
		if ok != (werr == nil) || ok && got != want.Name {
			t.Fatalf("itemName(%q) = %q, %v; encoding/json %q, %v", it, got, ok, want.Name, werr)
		}
	})
}
