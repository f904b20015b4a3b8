package record

import (
	"strings"
	"testing"
)

func TestFindSpansAndSplice(t *testing.T) {
	t.Parallel()
	data := []byte(`{ "a" : {"secret":"s1", "n": [1, {"secret" : {"deep":true}}, "x"]},"b":"}{\"]","secret":null }`)
	spans := findSpans(data, func(p []elem) bool { return len(p) > 0 && p[len(p)-1].key == "secret" && p[len(p)-1].index < 0 })
	if len(spans) != 3 {
		t.Fatalf("found %d spans, want 3", len(spans))
	}
	var got []string
	for _, s := range spans {
		got = append(got, string(data[s.start:s.end]))
	}
	if strings.Join(got, "|") != `"s1"|{"deep":true}|null` {
		t.Errorf("spans hold %q", got)
	}
	out := splice(data, spans, func([]byte) []byte { return []byte(`"X"`) })
	want := `{ "a" : {"secret":"X", "n": [1, {"secret" : "X"}, "x"]},"b":"}{\"]","secret":"X" }`
	if string(out) != want {
		t.Errorf("splice:\n got %s\nwant %s", out, want)
	}
}

func TestFindSpansIndexesAndEscapedKeys(t *testing.T) {
	t.Parallel()
	data := []byte(`{"list":[10,[20,21],{"k":30}],"\u006bey":"v"}`)
	p := MustParsePath("$.list[1][0]")
	spans := findSpans(data, p.match)
	if len(spans) != 1 || string(data[spans[0].start:spans[0].end]) != "20" {
		t.Errorf("spans %v", spans)
	}
	spans = findSpans(data, MustParsePath("$.key").match)
	if len(spans) != 1 || string(data[spans[0].start:spans[0].end]) != `"v"` {
		t.Errorf("an escaped key was not decoded: %v", spans)
	}
	spans = findSpans(data, MustParsePath("$").match)
	if len(spans) != 1 || spans[0].start != 0 || spans[0].end != len(data) {
		t.Errorf("$ spans %v", spans)
	}
}

func TestRawHelpersSurviveBadInput(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "{", `{"a"`, `{"a":`, `[1,`, `{"a":[1,{"b":`, "]", `"abc`, `{"a" 1}`} {
		findSpans([]byte(s), func([]elem) bool { return false })
		topMember([]byte(s), "a")
		elements([]byte(s))
		mapMessages([]byte(s), func(b []byte) []byte { return b })
		hasTopMember([]byte(s), "b")
		eachMessage([]byte(s), func([]byte) {})
	}
}

func TestReplaceTopAndBatches(t *testing.T) {
	t.Parallel()
	msg := []byte(`{"jsonrpc":"2.0", "id" : 7 ,"result":{"id":1}}`)
	if got := string(replaceTop(msg, "id", []byte(`"x"`))); got != `{"jsonrpc":"2.0", "id" : "x" ,"result":{"id":1}}` {
		t.Errorf("replaceTop = %s", got)
	}
	if got := string(replaceTop([]byte(`{"a":1}`), "id", []byte("2"))); got != `{"a":1}` {
		t.Errorf("replaceTop without the member = %s", got)
	}
	batch := []byte(`[ {"id":1}, {"id":2} ]`)
	got := mapMessages(batch, func(m []byte) []byte { return replaceTop(m, "id", []byte("9")) })
	if string(got) != `[ {"id":9}, {"id":9} ]` {
		t.Errorf("mapMessages = %s", got)
	}
}

func TestHasTopMember(t *testing.T) {
	for _, tc := range []struct {
		data, key string
		want      bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"x":1}}`, "result", true},
		{` { "id" : 1 , "error" : {} }`, "error", true},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"result":1}}`, "result", false},
		{`{"a":"re\"sult","b":[{"result":1}]}`, "result", false},
		{`{"res\u0075lt":1}`, "result", true},
		{`[{"result":1}]`, "result", false},
		{`{"id":1,"result":`, "result", true}, // its value is not read
		{`{"id":`, "result", false},
	} {
		if got := hasTopMember([]byte(tc.data), tc.key); got != tc.want {
			t.Errorf("hasTopMember(%s, %q) = %v", tc.data, tc.key, got)
		}
	}
}
