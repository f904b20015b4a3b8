package tui

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestStructuredContentShownOnce(t *testing.T) {
	for _, c := range []struct {
		name, text string
		dropped    bool
	}{
		{"the same JSON", `{"n":3,"s":"x"}`, true},
		{"the same JSON laid out otherwise", "{\n  \"s\": \"x\",\n  \"n\": 3.0\n}\n", true},
		{"other JSON", `{"n":4,"s":"x"}`, false},
		{"prose", "n is 3", false},
		{"JSON and more", `{"n":3,"s":"x"} and then some`, false},
	} {
		raw, _ := json.Marshal(map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": c.text}},
			"structuredContent": json.RawMessage(`{"s":"x","n":3}`),
		})
		out := printed(func(p *Printer) { p.ToolResult(raw) })
		head, body, ok := strings.Cut(out, "Structured content:\n")
		if !ok || !jsonEqual(t, []byte(body), []byte(`{"s":"x","n":3}`)) {
			t.Fatalf("%s: no structured content in %q", c.name, out)
		}
		if dropped := head == ""; dropped != c.dropped {
			t.Errorf("%s: text block dropped = %v, want %v (output %q)", c.name, dropped, c.dropped, out)
		}
	}
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{64}`)

func TestBinaryNeverDumped(t *testing.T) {
	data := base64.StdEncoding.EncodeToString(make([]byte, 3000))
	escaped := strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\xff\xfe\xfd", 1000))), "/", `\/`)
	for _, c := range []struct {
		name, raw string
		words     []string
	}{
		{"unknown block type", `{"content":[{"type":"video","data":"` + data + `","mimeType":"video/mp4"}]}`,
			[]string{"[video content]", `"mimeType": "video/mp4"`, "base64 data, about 2.9 KiB; use -o FILE to save it"}},
		{"structured content", `{"content":[],"structuredContent":{"caption":"x","png":"` + data + `"}}`,
			[]string{`"caption": "x"`, "base64 data, about 2.9 KiB"}},
		{"escaped slashes", `{"content":[],"structuredContent":{"png":"` + escaped + `"}}`,
			[]string{"base64 data, about 2.9 KiB"}},
		{"a malformed image block", `{"content":[{"type":"image","data":"` + data + `","mimeType":7}]}`,
			[]string{"base64 data"}},
		{"an image without a type", `{"content":[{"type":"image","data":"` + data + `"}]}`,
			[]string{"[image: unknown type, 2.9 KiB; use -o FILE to save it]"}},
	} {
		out := printed(func(p *Printer) { p.ToolResult(json.RawMessage(c.raw)) })
		if base64Run.MatchString(out) {
			t.Errorf("%s: base64 dumped: %.200q", c.name, out)
		}
		if !containsAll(out, c.words...) {
			t.Errorf("%s: output %q lacks %q", c.name, out, c.words)
		}
	}
	// Short strings of base64 letters (ids, hashes) are shown.
	out := printed(func(p *Printer) {
		p.ToolResult(json.RawMessage(`{"content":[],"structuredContent":{"sha":"` + data[:100] + `"}}`))
	})
	if !strings.Contains(out, data[:100]) {
		t.Errorf("a short string was elided: %q", out)
	}
	// The hint is the command's.
	out = printed(func(p *Printer) {
		p.WithSaveHint("--json has it").ToolResult(json.RawMessage(`{"content":[{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}`))
	})
	if out != "[audio: audio/wav, 3 B; --json has it]\n" {
		t.Errorf("audio: %q", out)
	}
}

func TestCacheHintSaysSomething(t *testing.T) {
	for _, c := range []struct {
		raw        string
		quiet, all string
	}{
		{`{"tools":[],"ttlMs":0,"cacheScope":"public"}`, "", "cache hint: ttl 0 (stale at once), scope public"},
		{`{"tools":[],"cacheScope":"private"}`, "", "cache hint: scope private"},
		{`{"tools":[]}`, "", ""},
		{`{"tools":[],"ttlMs":300000,"cacheScope":"private"}`, "cache hint: ttl 5m0s, scope private", "cache hint: ttl 5m0s, scope private"},
		{`{"tools":[],"ttlMs":-5}`, "cache hint: ttl -5ms (negative, which the spec forbids: taken as 0)", "cache hint: ttl -5ms (negative, which the spec forbids: taken as 0)"},
		{`{"tools":[],"ttlMs":0,"cacheScope":"shared\u001b"}`, `cache hint: ttl 0 (stale at once), scope shared\x1b (neither public nor private)`, `cache hint: ttl 0 (stale at once), scope shared\x1b (neither public nor private)`},
	} {
		if got := CacheHint(json.RawMessage(c.raw), false); got != c.quiet {
			t.Errorf("CacheHint(%s, false) = %q, want %q", c.raw, got, c.quiet)
		}
		if got := CacheHint(json.RawMessage(c.raw), true); got != c.all {
			t.Errorf("CacheHint(%s, true) = %q, want %q", c.raw, got, c.all)
		}
	}
}

func TestEscapeMessage(t *testing.T) {
	for in, want := range map[string]string{
		"one line":                           "one line",
		"first\nsecond\r\nthird\n\n":         "first\n> second\n> third",
		"red \x1b[31m\nbell\a\u009b\rreturn": "red \\x1b[31m\n> bell\\x07\\u009b\\rreturn",
		"tab\there":                          "tab\there",
	} {
		if got := EscapeMessage(in, "> "); got != want {
			t.Errorf("EscapeMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
