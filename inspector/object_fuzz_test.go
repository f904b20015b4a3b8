package inspector

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzParseObject checks the order-keeping object that mcpx edits results
// and params through: ParseObject accepts exactly the JSON objects (and
// empty input), finds the members encoding/json finds (the last of
// duplicates wins), and Marshal writes them back as a valid object that
// parses to the same.
func FuzzParseObject(f *testing.F) {
	for _, fr := range fuzzing.Frames() {
		f.Add(fr)
	}
	f.Add([]byte(`{"a":1,"b":2,"a":3}`))
	f.Add([]byte(`{"a":1} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseObject(data)
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
