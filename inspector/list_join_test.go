package inspector

import (
	"encoding/json"
	"testing"
)

// TestJoinItemsAsMarshal: the merged list is byte for byte what
// json.Marshal makes of the items.
func TestJoinItemsAsMarshal(t *testing.T) {
	for _, items := range [][]json.RawMessage{
		nil,
		{json.RawMessage(`{"name":"a"}`)},
		{json.RawMessage(` { "name" : "a <b> & c" ,"d":[1, 2] }`), json.RawMessage("\"\u2028x\u2029\""), json.RawMessage(`null`)},
	} {
		want, err := json.Marshal(items)
		if items == nil {
			want = []byte("[]")
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := joinItems(items, 0)
		if err != nil || string(got) != string(want) {
			t.Errorf("joinItems = %s, %v; json.Marshal = %s", got, err, want)
		}
	}
}

// FuzzJoinItems checks joinItems against json.Marshal for any valid
// items (the in-place copy of compact items included).
func FuzzJoinItems(f *testing.F) {
	f.Add([]byte(`{"name":"a"}`), []byte(`[1, 2]`))
	f.Add([]byte(`{"d":"a <b> & c"}`), []byte("\"\u2028x\\\"\u2029\""))
	f.Add([]byte(`"\\"`), []byte(`{"a":"\" x"}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if !json.Valid(a) || !json.Valid(b) {
			return
		}
		items := []json.RawMessage{a, b}
		want, err := json.Marshal(items)
		if err != nil {
			t.Fatal(err)
		}
		got, err := joinItems(items, 0)
		if err != nil || string(got) != string(want) {
			t.Fatalf("joinItems(%q, %q) = %s, %v; json.Marshal = %s", a, b, got, err, want)
		}
	})
}
