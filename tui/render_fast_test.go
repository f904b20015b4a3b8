package tui

import (
	"encoding/json"
	"reflect"
	"testing"
)

var toolEntrySeeds = []string{
	`{"name":"a","title":"T","description":"d","inputSchema":{"type":"object"}}`,
	`{"NAME":"a","Name":"b","inputschema":null}`, `{"name":"a","title":5,"description":"d"}`,
	`{"name":"caf\u00e9\n"}`, `[]`, `"x"`, `null`, `{}`, `{"name":null,"inputSchema":[1, 2]}`, `{"name":"a"`,
}

// TestReadToolEntryAsUnmarshal: a tool (valid JSON, as a list's items
// are) is read as json.Unmarshal reads it.
func TestReadToolEntryAsUnmarshal(t *testing.T) {
	for _, s := range toolEntrySeeds {
		if !json.Valid([]byte(s)) {
			continue
		}
		var want toolEntry
		_ = json.Unmarshal([]byte(s), &want)
		if got := readToolEntry(json.RawMessage(s)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", s, got, want)
		}
	}
}

func FuzzReadToolEntry(f *testing.F) {
	for _, s := range toolEntrySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		var want toolEntry
		_ = json.Unmarshal([]byte(s), &want)
		if got := readToolEntry(json.RawMessage(s)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", s, got, want)
		}
	})
}

// TestCacheHintReadsTwoMembers: the hint is what decoding the whole result
// gives.
func TestCacheHintReadsTwoMembers(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"tools":[{"ttlMs":5}],"ttlMs":60000,"cacheScope":"session"}`, "cache hint: "},
		{`{"TTLMS":1000}`, "cache hint: "},
		{`{"ttlMs":1000,"ttlMs":0}`, ""},
		{`{"ttlMs":"x"}`, ""},
		{`{"tools":[]}`, ""},
		{`[]`, ""},
	} {
		got := CacheHint(json.RawMessage(c.raw), false)
		if c.want == "" && got != "" || c.want != "" && (len(got) <= len(c.want) || got[:len(c.want)] != c.want) {
			t.Errorf("%s: %q, want %q…", c.raw, got, c.want)
		}
	}
}

// A result without hints (most) is not decoded at all.
func TestCacheHintOfNoHintsDecodesNothing(t *testing.T) {
	raw := json.RawMessage(`{}`)
	if n := testing.AllocsPerRun(10, func() { CacheHint(raw, true) }); n != 0 {
		t.Fatalf("CacheHint allocates %v times", n)
	}
}
