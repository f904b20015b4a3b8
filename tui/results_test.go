package tui

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
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

// TestNothingDroppedSilently: what a renderer does not show in its own
// way (annotations, _meta, members the spec does not define, on a block,
// a resource's contents, a prompt message or the result) is shown as it
// came, under what it belongs to; what the protocol itself puts on every
// result (resultType "complete", reserved _meta keys) is not.
func TestNothingDroppedSilently(t *testing.T) {
	for _, c := range []struct {
		name   string
		render func(p *Printer)
		want   string
	}{
		{"a tool result", func(p *Printer) {
			p.ToolResult(json.RawMessage(`{"content":[` +
				`{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.7},"_meta":{"k":"\u009b"},"x-extra":12345678901234567890},` +
				`{"type":"image","data":"AAAA","mimeType":"image/png","annotations":{"lastModified":"2025-01-12T15:00:58Z"}},` +
				`{"type":"resource","resource":{"uri":"x:/r","text":"body","_meta":{"m":1}},"annotations":{"priority":1}}` +
				`],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"mine":true},"later":1e400}`))
		}, "hi\n" +
			`  annotations: {"audience":["user"],"priority":0.7}` + "\n" +
			`  _meta: {"k":"\u009b"}` + "\n" +
			`  x-extra (not in the spec): 12345678901234567890` + "\n" +
			"[image: image/png, 3 B; use -o FILE to save it]\n" +
			`  annotations: {"lastModified":"2025-01-12T15:00:58Z"}` + "\n" +
			"[resource] x:/r\nbody\n" +
			`  _meta: {"m":1}` + "\n" +
			`  annotations: {"priority":1}` + "\n" +
			"Also in the result:\n" +
			`  _meta: {"mine":true}` + "\n" +
			`  later (not in the spec): 1e400` + "\n"},
		{"a result of members mcpx does not know", func(p *Printer) {
			p.ToolResult(json.RawMessage(`{"content":[],"dup":1,"dup":2,"c1` + "\u009b" + `":"` + "\u202e" + `"}`))
		}, "Also in the result:\n  dup (not in the spec): 1\n  dup (not in the spec): 2\n  c1\\u009b (not in the spec): \"\\u202e\"\n"},
		{"a member given twice", func(p *Printer) {
			p.ToolResult(json.RawMessage(`{"content":[{"type":"text","text":"first","text":"second"}]}`))
		}, "second\n  text (given again later; the later one is shown): \"first\"\n"},
		{"only what the protocol puts on every result", func(p *Printer) {
			p.ToolResult(json.RawMessage(`{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`))
		}, "(empty result)\n"},
		{"a text block with annotations, duplicating structured content", func(p *Printer) {
			p.ToolResult(json.RawMessage(`{"content":[{"type":"text","text":"{\"a\":1}","annotations":{"audience":["assistant"]}}],"structuredContent":{"a":1}}`))
		}, "{\"a\":1}\n  annotations: {\"audience\":[\"assistant\"]}\nStructured content:\n{\n  \"a\": 1\n}\n"},
		{"a resource read", func(p *Printer) {
			p.ReadResult(json.RawMessage(`{"contents":[{"uri":"x:/r","text":"t","blob":"AAAA"}],"ttlMs":5,"cacheScope":"public","next":"x"}`))
		}, "t\n[binary: unknown type, 3 B; use -o FILE to save it]\nAlso in the result:\n  next (not in the spec): \"x\"\n"},
		{"a prompt", func(p *Printer) {
			p.PromptResult(json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"q"},"name":"ada"},{"role":"user"}],"_meta":{"m":1}}`))
		}, "[user]\nq\n  name (not in the spec): \"ada\"\n[user]\n(no content)\nAlso in the result:\n  _meta: {\"m\":1}\n"},
	} {
		out := printed(c.render)
		assertTerminalSafe(t, out)
		if out != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, out, c.want)
		}
	}
}

// TestBase64Summaries: data is summarised with its decoded size, and
// data that is not base64 says so (-o could not write it).
func TestBase64Summaries(t *testing.T) {
	for raw, want := range map[string]string{
		`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`: "[image: image/png, 8 B; use -o FILE to save it]\n",
		`{"type":"image","data":"AAE","mimeType":"image/png"}`:          "[image: image/png, 2 B; use -o FILE to save it]\n",
		`{"type":"audio","data":"!!!!","mimeType":"audio/wav"}`:         "[audio: audio/wav, 4 characters that are not valid base64 (illegal base64 data at input byte 0); --json shows them]\n",
		`{"type":"audio","mimeType":"audio/wav"}`:                       "[audio: audio/wav, no data]\n",
		`{"type":"resource","resource":{"uri":"x:/b","blob":"-_-_"}}`:   "[resource] x:/b\n[binary: unknown type, 4 characters that are not valid base64 (illegal base64 data at input byte 0); --json shows them]\n",
	} {
		if out := printed(func(p *Printer) { p.Content(json.RawMessage(raw)) }); out != want {
			t.Errorf("%s:\n got %q\nwant %q", raw, out, want)
		}
	}
}

// TestCompletionAsItCame: values that are not strings, and a total or
// hasMore of another type, are shown as they came, marked.
func TestCompletionAsItCame(t *testing.T) {
	out := printed(func(p *Printer) {
		p.Completion(json.RawMessage(`{"completion":{"values":["a\u001b",5,null],"total":12345678901234567890,"hasMore":"yes","x":1}}`))
	})
	want := "a\\x1b\n5 (not a string)\nnull (not a string)\n(12345678901234567890 in total; hasMore \"yes\", not a boolean)\n  x (not in the spec): 1\n"
	if out != want {
		t.Errorf("got %q\nwant %q", out, want)
	}
}

// TestResourceSizeAsItCame: a size that is not a count of bytes is shown
// as it came, not as 0 B.
func TestResourceSizeAsItCame(t *testing.T) {
	out := printed(func(p *Printer) {
		p.Resources([]json.RawMessage{
			json.RawMessage(`{"name":"a","uri":"x:/a","size":12345678901234567890}`),
			json.RawMessage(`{"name":"b","uri":"x:/b","size":-5}`),
			json.RawMessage(`{"name":"c","uri":"x:/c","size":"\u009b"}`),
		})
	})
	assertTerminalSafe(t, out)
	if !containsAll(out, "12345678901234567890 (not a size)", "-5 (not a size)", `"\u009b" (not a size)`) || strings.Contains(out, "0 B") {
		t.Errorf("got %q", out)
	}
}

// TestInfoShowsTheRest: what info does not render in its own way (the
// serverInfo's websiteUrl, icons and unknown members; members of the
// result the spec does not define) is shown as it came; a 2026-07-28
// discover result's reserved _meta (the serverInfo) is not repeated.
func TestInfoShowsTheRest(t *testing.T) {
	info := &inspector.ServerInfo{
		ProtocolVersion: "2025-11-25",
		Implementation:  inspector.Implementation{Name: "srv", Version: "1"},
		Capabilities:    json.RawMessage(`{}`),
		Raw:             json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"srv","version":"1","websiteUrl":"https://x.example","build":7},"instructions":"","extra":{"a":1}}`),
	}
	out := printed(func(p *Printer) { p.Info(info, "") })
	if !containsAll(out, "Server info:\n  websiteUrl: \"https://x.example\"\n  build (not in the spec): 7\nCapabilities:", "Also in the result:\n  extra (not in the spec): {\"a\":1}\n") {
		t.Errorf("legacy:\n%s", out)
	}
	info.Raw = json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}}}`)
	if out := printed(func(p *Printer) { p.Info(info, "") }); strings.Contains(out, "Server info:") || strings.Contains(out, "Also in the result:") {
		t.Errorf("modern:\n%s", out)
	}
}

// TestListItemsAsTheyCame: an item that is not an object, or has no name,
// is a row that says so, not a blank one.
func TestListItemsAsTheyCame(t *testing.T) {
	out := printed(func(p *Printer) {
		p.Tools([]json.RawMessage{json.RawMessage(`5`), json.RawMessage(`"x` + "\u009b" + `"`), json.RawMessage(`{"name":7,"inputSchema":{"type":"object"}}`)})
	})
	assertTerminalSafe(t, out)
	var rows []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	if want := []string{"5 (not an object)", `"x\u009b" (not an object)`, "(no name)"}; strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", rows, want)
	}
}
