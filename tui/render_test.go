package tui

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// assertTerminalSafe fails when out holds a byte a terminal would act on:
// any C0 control but newline and tab, DEL, or a C1 control.
func assertTerminalSafe(t *testing.T, out string) {
	t.Helper()
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("output has control %U at byte %d: %q", r, i, out)
		}
	}
}

func printed(f func(p *Printer)) string {
	var b bytes.Buffer
	f(NewPrinter(&b, false))
	return b.String()
}

func TestToolResultText(t *testing.T) {
	text := "line one\n\x1b[2Jcleared?\u009b\x07 done"
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	var isErr bool
	out := printed(func(p *Printer) { isErr = p.ToolResult(raw) })
	assertTerminalSafe(t, out)
	want := "line one\n" + `\x1b[2Jcleared?\u009b\x07 done` + "\n"
	if out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if isErr {
		t.Error("isError reported for a normal result")
	}
}

func TestToolResultIsError(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"no such city"}],"isError":true}`)
	var isErr bool
	out := printed(func(p *Printer) { isErr = p.ToolResult(raw) })
	if !isErr || !inspector.ToolResultIsError(raw) {
		t.Error("isError not reported")
	}
	if !strings.HasPrefix(out, "Tool error:") || !strings.Contains(out, "no such city") {
		t.Errorf("output %q", out)
	}
	if inspector.ToolResultIsError(json.RawMessage(`{"content":[]}`)) || inspector.ToolResultIsError(json.RawMessage(`nonsense`)) {
		t.Error("isError reported for results without it")
	}
}

func TestBinaryContentIsSummarised(t *testing.T) {
	data := bytes.Repeat([]byte{0x1b, 0x00, 0x9b, 0xff, 'P', 'N', 'G'}, 300)
	blob := base64.StdEncoding.EncodeToString(data)
	size := HumanSize(int64(len(data)))
	tests := []struct {
		name   string
		render func(p *Printer)
		words  []string
	}{
		{
			"image content",
			func(p *Printer) {
				p.ToolResult(json.RawMessage(fmt.Sprintf(`{"content":[{"type":"image","data":%q,"mimeType":"image/png"}]}`, blob)))
			},
			[]string{"image", "image/png", size},
		},
		{
			"audio content",
			func(p *Printer) {
				p.Content(json.RawMessage(fmt.Sprintf(`{"type":"audio","data":%q,"mimeType":"audio/wav"}`, blob)))
			},
			[]string{"audio", "audio/wav", size},
		},
		{
			"blob resource",
			func(p *Printer) {
				p.ReadResult(json.RawMessage(fmt.Sprintf(`{"contents":[{"uri":"file:///x.bin","mimeType":"application/octet-stream","blob":%q}]}`, blob)))
			},
			[]string{"binary", "application/octet-stream", size, "-o"},
		},
		{
			"embedded blob resource in a tool result",
			func(p *Printer) {
				p.ToolResult(json.RawMessage(fmt.Sprintf(`{"content":[{"type":"resource","resource":{"uri":"mem://b","blob":%q}}]}`, blob)))
			},
			[]string{"mem://b", "binary", "unknown type", size},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := printed(tt.render)
			assertTerminalSafe(t, out)
			if strings.Contains(out, blob[:32]) {
				t.Errorf("base64 data dumped: %q", out)
			}
			if !containsAll(out, tt.words...) {
				t.Errorf("output %q lacks %q", out, tt.words)
			}
		})
	}
}

func TestDecodeContents(t *testing.T) {
	data := []byte{0, 1, 2, 0x1b, 0xff}
	raw := fmt.Sprintf(`{"contents":[{"uri":"a","mimeType":"text/plain","text":"hi"},{"uri":"b","blob":%q},{"uri":"c","blob":%q}]}`,
		base64.StdEncoding.EncodeToString(data), base64.RawStdEncoding.EncodeToString(data))
	got, err := inspector.DecodeContents(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	bytesOf := func(rc inspector.ResourceContent) []byte {
		var b bytes.Buffer
		if _, err := rc.WriteTo(&b); err != nil {
			t.Fatalf("%s: %v", rc.URI, err)
		}
		return b.Bytes()
	}
	if len(got) != 3 || string(bytesOf(got[0])) != "hi" || got[0].Binary || !bytes.Equal(bytesOf(got[1]), data) || !got[1].Binary || !bytes.Equal(bytesOf(got[2]), data) {
		t.Errorf("DecodeContents = %+v", got)
	}
	bad, err := inspector.DecodeContents(json.RawMessage(`{"contents":[{"uri":"x","blob":"!!!"}]}`))
	if err != nil || len(bad) != 1 || bad[0].Check() == nil {
		t.Errorf("invalid base64 accepted (%v)", err)
	}
}

func TestStructuredContentAndJSON(t *testing.T) {
	structured := `{"zeta":1,"alpha":{"nested":[1,2,3]},"text":"x\u009by"}`
	out := printed(func(p *Printer) {
		p.ToolResult(json.RawMessage(`{"content":[],"structuredContent":` + structured + `}`))
	})
	assertTerminalSafe(t, out)
	head, body, ok := strings.Cut(out, "Structured content:\n")
	if !ok || head != "" {
		t.Fatalf("output %q", out)
	}
	if !jsonEqual(t, []byte(body), []byte(structured)) {
		t.Errorf("pretty JSON %q is not the structured content", body)
	}
	if strings.Index(body, "zeta") > strings.Index(body, "alpha") {
		t.Errorf("member order changed: %q", body)
	}
	if !strings.Contains(body, "\n") {
		t.Errorf("not pretty-printed: %q", body)
	}
	if out := printed(func(p *Printer) { p.ToolResult(json.RawMessage(`{"content":[]}`)) }); !strings.Contains(out, "empty") {
		t.Errorf("empty result: %q", out)
	}
}

func TestContentKinds(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		words []string
	}{
		{"resource link", `{"type":"resource_link","uri":"file:///a.txt","name":"a\u001b.txt","mimeType":"text/plain","description":"first\nsecond"}`, []string{"file:///a.txt", `a\x1b.txt`, "text/plain", "\n  first\n  second\n"}},
		{"embedded text resource", `{"type":"resource","resource":{"uri":"mem://t","mimeType":"text/plain","text":"body\u001b"}}`, []string{"mem://t", `body\x1b`}},
		{"unknown type", `{"type":"hologram","x":1}`, []string{"hologram", `"x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := printed(func(p *Printer) { p.Content(json.RawMessage(tt.raw)) })
			assertTerminalSafe(t, out)
			if !containsAll(out, tt.words...) {
				t.Errorf("output %q lacks %q", out, tt.words)
			}
		})
	}
}

func TestListRendering(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"get-sum","description":"Adds\nnumbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a"]}}`),
		json.RawMessage(`{"name":"evil\u001b]0;x\u0007","description":"\u009b2J"}`),
	}
	out := printed(func(p *Printer) { p.Tools(tools) })
	assertTerminalSafe(t, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(tools) {
		t.Fatalf("%d lines for %d tools: %q", len(lines), len(tools), out)
	}
	if !containsAll(lines[0], "get-sum", "a:number*", "b:number", "Adds …") || !containsAll(lines[1], `evil\x1b]0;x\x07`, `\u009b2J`) {
		t.Errorf("tools output %q", out)
	}
	for name, render := range map[string]func(p *Printer){
		"tools":     func(p *Printer) { p.Tools(nil) },
		"resources": func(p *Printer) { p.Resources(nil) },
		"prompts":   func(p *Printer) { p.Prompts(nil) },
		"templates": func(p *Printer) { p.Templates(nil) },
	} {
		if out := printed(render); !strings.Contains(out, "(no "+strings.TrimSuffix(name, "s")) && !strings.Contains(out, "(no resource templates)") {
			t.Errorf("empty %s list: %q", name, out)
		}
	}
	out = printed(func(p *Printer) {
		p.Resources([]json.RawMessage{json.RawMessage(`{"name":"r","uri":"file:///r","mimeType":"text/plain","size":2048}`)})
		p.Prompts([]json.RawMessage{json.RawMessage(`{"name":"greet","arguments":[{"name":"who","required":true},{"name":"tone"}]}`)})
	})
	if !containsAll(out, "file:///r", "text/plain", HumanSize(2048), "greet", "who*", "tone") {
		t.Errorf("resources/prompts output %q", out)
	}
}

func TestInfoRendering(t *testing.T) {
	info := &inspector.ServerInfo{
		ProtocolVersion: "2025-06-18",
		Implementation:  inspector.Implementation{Name: "srv\x1b[1m", Version: "2.0", Title: "Nice"},
		Capabilities:    json.RawMessage(`{"tools":{"listChanged":true},"logging":{},"prompts":{"listChanged":false},"experimental":{"x":{"y":1}}}`),
		Instructions:    "Line one.\n\n\x1b[31mLine two.",
	}
	out := printed(func(p *Printer) { p.Info(info, "stdio: srv") })
	assertTerminalSafe(t, out)
	// A capability without features (logging) and an empty line of the
	// instructions end without the padding or the indent.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("a line ends in spaces: %q", line)
		}
	}
	if !strings.Contains(out, "\n  logging\n") || !strings.Contains(out, "  Line one.\n\n  ") {
		t.Errorf("info output:\n%s", out)
	}
	if !containsAll(out, `srv\x1b[1m 2.0 (Nice)`, "2025-06-18", "stdio: srv", "listChanged", "logging", "experimental", "x.y=1", "  Line one.\n", `\x1b[31mLine two.`) {
		t.Errorf("info output:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "prompts") && strings.Contains(line, "listChanged") {
			t.Errorf("a false flag shown as set: %q", line)
		}
	}
}

// With a width (a terminal), the server's instructions are wrapped at
// words, as are a tool's and a resource link's descriptions: prose the
// terminal broke mid-word.
func TestInfoInstructionsWrap(t *testing.T) {
	info := &inspector.ServerInfo{ProtocolVersion: "2025-06-18", Implementation: inspector.Implementation{Name: "srv"},
		Instructions: "Call search first, then fetch the documents it names, one at a time."}
	var b bytes.Buffer
	NewPrinter(&b, false).WithWidth(30).Info(info, "")
	want := "Instructions:\n  Call search first, then\n    fetch the documents it\n    names, one at a time.\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("info output:\n%s\nwant it to hold\n%s", b.String(), want)
	}
}

// A capability with a wide (CJK) name takes two columns a character:
// what it holds starts in the column every other capability's does, as
// on a terminal (tabwriter counted runes, and put it two columns left).
func TestInfoCapabilitiesWideKey(t *testing.T) {
	info := &inspector.ServerInfo{ProtocolVersion: "2025-06-18", Implementation: inspector.Implementation{Name: "srv"},
		Capabilities: json.RawMessage(`{"experimental":{"x":{}},"工具":{"listChanged":true}}`)}
	out := printed(func(p *Printer) { p.Info(info, "") })
	want := "Capabilities:\n  experimental  x\n  工具          listChanged\n"
	if !strings.Contains(out, want) {
		t.Errorf("info output:\n%s\nwant it to hold\n%s", out, want)
	}
}

// A server that names itself not at all is said to, not shown as a blank.
func TestInfoRenderingUnnamed(t *testing.T) {
	out := printed(func(p *Printer) { p.Info(&inspector.ServerInfo{ProtocolVersion: "2025-11-25"}, "") })
	if !strings.Contains(out, "(not named by the server)\n") || strings.Contains(out, "Server:\n") {
		t.Errorf("info output:\n%s", out)
	}
}

func TestPromptAndCompletionRendering(t *testing.T) {
	out := printed(func(p *Printer) {
		p.PromptResult(json.RawMessage(`{"description":"Weather","messages":[{"role":"user","content":{"type":"text","text":"Weather in Paris?"}},{"role":"assistant","content":[{"type":"text","text":"Sunny\u001b"}]}]}`))
	})
	assertTerminalSafe(t, out)
	if !containsAll(out, "Weather", "[user]", "Weather in Paris?", "[assistant]", `Sunny\x1b`) {
		t.Errorf("prompt output %q", out)
	}
	out = printed(func(p *Printer) {
		p.Completion(json.RawMessage(`{"completion":{"values":["paris","pa\u001bx"],"total":10,"hasMore":true}}`))
	})
	assertTerminalSafe(t, out)
	if !containsAll(out, "paris\n", `pa\x1bx`, "10 in total", "more available") {
		t.Errorf("completion output %q", out)
	}
}

func TestHumanSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {1 << 20, "1.0 MiB"}, {50 << 20, "50.0 MiB"}, {3 << 30, "3.0 GiB"},
	}
	for _, tt := range tests {
		if got := HumanSize(tt.n); got != tt.want {
			t.Errorf("HumanSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestPrinterColour(t *testing.T) {
	var plain, coloured bytes.Buffer
	NewPrinter(&plain, false).JSON(json.RawMessage(`{"a":1}`))
	NewPrinter(&coloured, true).JSON(json.RawMessage(`{"a":1}`))
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("colour without colour: %q", plain.String())
	}
	if !strings.Contains(coloured.String(), "\x1b[") {
		t.Errorf("no colour with colour: %q", coloured.String())
	}
}

func TestConsoleProgressLines(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		p    inspector.Progress
		want string
	}{
		{inspector.Progress{Progress: 3, Total: f(10), Message: "step"}, "progress: 3/10 (30%) step\n"},
		{inspector.Progress{Progress: 2.5}, "progress: 2.5\n"},
		{inspector.Progress{Progress: 0.1256, Total: f(1)}, "progress: 0.126/1 (13%)\n"},
		{inspector.Progress{Progress: 7, Total: f(0)}, "progress: 7\n"},
		{inspector.Progress{Progress: 1, Message: "evil\x1b[2J\r"}, `progress: 1 evil\x1b[2J\r` + "\n"},
		// Numbers a server may send that "%.3f" would show as 0, or with
		// hundreds of digits, and a ratio beyond float64.
		{inspector.Progress{Progress: 5, Total: f(1e-320)}, "progress: 5/1e-320\n"},
		{inspector.Progress{Progress: 1e300, Total: f(1e308)}, "progress: 1e+300/1e+308 (0%)\n"},
		{inspector.Progress{Progress: 0.0001}, "progress: 0.0001\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		NewConsole(&b, false, false).Progress("tools/call", tt.p)
		if b.String() != tt.want {
			t.Errorf("Progress(%+v) = %q, want %q", tt.p, b.String(), tt.want)
		}
	}
}

func TestConsoleProgressBarOnTerminal(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, true, false)
	total := 4.0
	c.Progress("call", inspector.Progress{Progress: 1, Total: &total})
	first := b.String()
	if strings.Contains(first, "\n") || !containsAll(first, "call", "1/4 (25%)", "█") {
		t.Errorf("first bar %q", first)
	}
	b.Reset()
	c.Println("a line above the bar")
	if !strings.HasPrefix(b.String(), "\r\x1b[K") || !strings.Contains(b.String(), "a line above the bar\n") || !strings.HasSuffix(b.String(), first) {
		t.Errorf("Println with a bar: %q", b.String())
	}
	b.Reset()
	c.Progress("call", inspector.Progress{Progress: 4, Total: &total})
	if !strings.HasPrefix(b.String(), "\r\x1b[K") || !strings.Contains(b.String(), "4/4 (100%)") {
		t.Errorf("redraw %q", b.String())
	}
	b.Reset()
	c.ClearProgress()
	c.Println("after")
	if b.String() != "\r\x1b[K"+"after\n" {
		t.Errorf("after ClearProgress: %q", b.String())
	}
}

func TestConsoleLines(t *testing.T) {
	ts := time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	tests := []struct {
		name  string
		do    func(c *Console)
		words []string
	}{
		{"warning", func(c *Console) { c.Warn("bad\x1b[0m frame") }, []string{"warning: ", `bad\x1b[0m frame`}},
		{"server stderr", func(c *Console) { c.ServerStderr("oops\x07") }, []string{"server| ", `oops\x07`}},
		{"stderr event", func(c *Console) { c.Event(transport.Event{Kind: transport.EventStderr, Text: "from server"}) }, []string{"server| from server"}},
		{"note event", func(c *Console) { c.Event(transport.Event{Kind: transport.EventNote, Text: "fell back"}) }, []string{"mcpx: fell back"}},
		{"log text", func(c *Console) {
			c.LogMessage(json.RawMessage(`{"level":"error","logger":"db","data":"conn\u001b lost"}`))
		}, []string{"[error]", "db:", `conn\x1b lost`}},
		{"log structured", func(c *Console) {
			c.LogMessage(json.RawMessage(`{"level":"info","data":{"a":1,"b":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28]}}`))
		}, []string{"[info]", `"a": 1`}},
		{"log malformed", func(c *Console) { c.LogMessage(json.RawMessage(`[1]`)) }, []string{"warning", "malformed"}},
		{"notification", func(c *Console) {
			c.Notification(&jsonrpc.Message{Method: "notifications/resources/updated", Params: json.RawMessage(`{"uri":"file:///\u001b"}`)})
		}, []string{"notification resource updated: ", `file:///\x1b`}},
		{"generic notification", func(c *Console) {
			c.Notification(&jsonrpc.Message{Method: "notifications/custom", Params: json.RawMessage(`{"k":"\u001b"}`)})
		}, []string{"notification notifications/custom", `{"k":"\u001b"}`}},
		{"notification message goes to the log view", func(c *Console) {
			c.Notification(&jsonrpc.Message{Method: "notifications/message", Params: json.RawMessage(`{"level":"debug","data":"hi"}`)})
		}, []string{"[debug] hi"}},
		{"server request", func(c *Console) {
			c.ServerRequest(&jsonrpc.Message{Method: "roots/list"}, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"})
		}, []string{"server request roots/list", "error", "no"}},
		{"server request without a method name", func(c *Console) {
			c.ServerRequest(&jsonrpc.Message{ID: jsonrpc.RawID([]byte(`"s\u001b6"`))}, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"})
		}, []string{`server request (no method name) "s\u001b6"`, "error -32600"}},
		{"input request left out", func(c *Console) {
			c.InputRequest(&jsonrpc.Message{Method: "roots/list"}, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not declared\u001b"})
		}, []string{"server request roots/list", "→ not answered (left out of inputResponses): not declared\\x1b"}},
		{"input request answered", func(c *Console) {
			c.InputRequest(&jsonrpc.Message{Method: "roots/list"}, json.RawMessage(`{"roots":[]}`), nil)
		}, []string{"server request roots/list", "→ answered: "}},
		{"wire send", func(c *Console) {
			c.Wire(ts, transport.Outgoing, transport.Frame{Data: []byte(`{"x":"\u001b"}` + "\x1b")})
		}, []string{"03:04:05.006", "send", `{"x":"\u001b"}\x1b`}},
		{"wire recv with meta", func(c *Console) {
			c.Wire(ts, transport.Incoming, transport.Frame{Data: []byte(`{}`), Meta: &transport.Meta{HTTPMethod: "POST", HTTPStatus: 200, SessionID: "s1"}})
		}, []string{"recv", "[POST 200 session=s1]", "{}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			c := NewConsole(&b, false, false)
			tt.do(c)
			out := b.String()
			assertTerminalSafe(t, out)
			if !strings.HasSuffix(out, "\n") {
				t.Errorf("output %q does not end a line", out)
			}
			if !containsAll(out, tt.words...) {
				t.Errorf("output %q lacks %q", out, tt.words)
			}
			if c.Writer() != &b {
				t.Error("Writer() is not the writer given")
			}
		})
	}
}

// A method name of any length is cut short on its line, in a notification
// and in a server request (the whole is on --wire).
func TestConsoleLongMethod(t *testing.T) {
	long := "notifications/" + strings.Repeat("m", 100<<10)
	for _, do := range []func(c *Console){
		func(c *Console) { c.Notification(&jsonrpc.Message{Method: long}) },
		func(c *Console) { c.ServerRequest(&jsonrpc.Message{Method: long}, json.RawMessage(`{}`), nil) },
	} {
		var b bytes.Buffer
		do(NewConsole(&b, false, false))
		if first, _, _ := strings.Cut(b.String(), "\n"); len(first) > 300 || !strings.HasSuffix(first, "m…") {
			t.Errorf("a line of %d bytes: %.60q…", len(first), first)
		}
	}
}

// The names a person types or tells apart — of tools, prompts, resources,
// templates and arguments, and URIs — are shown with their directional
// marks escaped: "ec\u200eho" reads as "echo" when they are not. The
// descriptions beside them keep theirs (Arabic and Hebrew need them).
func TestListNamesEscapeDirectionMarks(t *testing.T) {
	out := printed(func(p *Printer) {
		p.Tools([]json.RawMessage{json.RawMessage(`{"name":"ec\u200eho","description":"مرحبا\u200f!","inputSchema":{"type":"object","properties":{"ms\u200fg":{"type":"string"}}}}`)})
		p.Prompts([]json.RawMessage{json.RawMessage(`{"name":"gre\u061cet","arguments":[{"name":"wh\u200eo"}]}`)})
		p.Resources([]json.RawMessage{json.RawMessage(`{"name":"r\u200e","uri":"file:///\u200fr"}`)})
		p.Templates([]json.RawMessage{json.RawMessage(`{"name":"t\u200e","uriTemplate":"file:///\u200f{x}"}`)})
		p.ToolHelp(inspector.ToolInfo{Name: "ec\u200eho", InputSchema: json.RawMessage(`{"type":"object","properties":{"ms\u200fg":{"type":"string"}}}`)})
	})
	for _, s := range []string{`ec\u200eho`, `ms\u200fg:string`, "مرحبا\u200f!", `gre\u061cet`, `wh\u200eo`, `r\u200e`, `file:///\u200fr`, `t\u200e`, `file:///\u200f{x}`, "ec\\u200eho\n", `ms\u200fg  string`} {
		if !strings.Contains(out, s) {
			t.Errorf("the lists lack %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"ec\u200eho", "ms\u200fg", "gre\u061cet", "wh\u200eo", "r\u200e", "\u200fr", "t\u200e", "\u200f{"} {
		if strings.Contains(out, s) {
			t.Errorf("the lists hold %q raw:\n%s", s, out)
		}
	}
}

func TestSchemaSignature(t *testing.T) {
	schema := `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"},"e":{"enum":["x"]},"f":{}},"required":["a"]}`
	if got, want := SchemaSignature(json.RawMessage(schema)), "z:string a:number* e:string f"; got != want {
		t.Errorf("SchemaSignature = %q, want %q", got, want)
	}
	if got := SchemaSignature(json.RawMessage(`{"type":"object"}`)); got != "" {
		t.Errorf("no properties: %q", got)
	}
	if got := SchemaSignature(json.RawMessage(`{"properties":{"a\u001b[31m":{}}}`)); strings.ContainsRune(got, 0x1b) {
		t.Errorf("signature not escaped: %q", got)
	}
}

// Tool help shows the tool, then a table of its arguments from its
// input schema; what the server wrote is escaped.
func TestToolHelp(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","description":"Who\nto greet"},
		"count":{"type":"integer","default":3},
		"color":{"type":"string","enum":["red","green"]},
		"size":{"oneOf":[{"const":1,"title":"S"},{"const":2,"title":"M"}]},
		"maybe":{"type":["integer","null"]},
		"any":{}
	},"required":["name"]}`)
	var b bytes.Buffer
	NewPrinter(&b, false).ToolHelp(inspector.ToolInfo{Name: "paint", Title: "Paint", Description: "Paints \x1b[31mthings\x1b[0m.", InputSchema: schema})
	out := b.String()
	for _, s := range []string{"paint — Paint\n", "  Paints \\x1b[31mthings\\x1b[0m.\n", "Arguments:\n",
		"NAME", "TYPE", "REQUIRED", "DEFAULT", "ALLOWED", "DESCRIPTION",
		"name   string", "yes", "Who …", "count  integer", "3", "red, green", "integer|null", "any    any"} {
		if !strings.Contains(out, s) {
			t.Errorf("tool help lacks %q:\n%s", s, out)
		}
	}
	b.Reset()
	NewPrinter(&b, false).ToolHelp(inspector.ToolInfo{Name: "noargs", InputSchema: json.RawMessage(`{"type":"object"}`)})
	if !strings.Contains(b.String(), "This tool takes no arguments.") {
		t.Errorf("no-argument help:\n%s", b.String())
	}
}

// The spec's examples of a list result with caching hints get a cache
// hint line (spec 2026-07-28: server/utilities/caching).
func TestCacheHintOfSpecExamples(t *testing.T) {
	var dir string
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; dir == ""; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "shared", "spec", "2026-07-28", "examples")); err == nil && st.IsDir() {
			dir = filepath.Join(d, "shared", "spec", "2026-07-28", "examples")
		} else if filepath.Dir(d) == d {
			t.Skip("the 2026-07-28 spec (a sibling shared/spec/2026-07-28) is not present")
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ListToolsResult*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no ListToolsResult examples")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(data, &msg) == nil && msg.Result != nil {
			data = msg.Result
		}
		if CacheHint(data, true) == "" {
			t.Errorf("%s: no cache hint shown for a list result", filepath.Base(f))
		}
	}
}

// A progress bar stays on one row of the terminal, short of its last
// column: wrapped, its redraw (which erases one row) left a row behind at
// each update. The bar narrows first, then the label, then the line is cut.
func TestConsoleProgressBarFitsTheTerminal(t *testing.T) {
	total := 8.0
	for _, tc := range []struct {
		width   int
		label   string
		message string
		want    string
	}{
		{0, "call", "", "call [██████··················] 2/8 (25%)"},
		{120, "call", "", "call [██████··················] 2/8 (25%)"},
		{40, "call", "", "call [█████·················] 2/8 (25%)"},
		{40, "trigger-long-running-operation", "", "trigger-long-runn… [██······] 2/8 (25%)"},
		{30, "call", "fetching 日本語のページ", "call [██······] 2/8 (25%) fe…"},
		{2, "call", "", "…"},
	} {
		var b bytes.Buffer
		c := NewConsole(&b, true, false)
		c.SetWidth(func() int { return tc.width })
		c.Progress(tc.label, inspector.Progress{Progress: 2, Total: &total, Message: tc.message})
		if b.String() != tc.want {
			t.Errorf("width %d: %q, want %q", tc.width, b.String(), tc.want)
		}
		if tc.width > 0 && DisplayWidth(b.String()) >= tc.width {
			t.Errorf("width %d: %q takes %d columns", tc.width, b.String(), DisplayWidth(b.String()))
		}
	}
}

// On a terminal, a console line for a person to read (a warning, a note,
// a log message, a server's stderr) is broken at words to the terminal's
// width, its continuation indented, instead of being cut mid-word at the
// terminal's edge; a word wider than the terminal (a server's
// 10,000-character one) is cut to it. A wire frame is not broken: its JSON
// is copied whole. Off a terminal (no width), nothing is.
func TestConsoleWrapsAtWords(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 20)
	huge := strings.Repeat("w", 10000)
	for _, tc := range []struct {
		name string
		do   func(c *Console)
	}{
		{"warning", func(c *Console) { c.Warn(long + huge) }},
		{"note", func(c *Console) { c.Note(long + huge) }},
		{"told", func(c *Console) { c.Tell(long + huge) }},
		{"server stderr", func(c *Console) { c.ServerStderr(long + huge) }},
		{"log message", func(c *Console) {
			c.LogMessage(json.RawMessage(`{"level":"info","logger":"l","data":"` + long + huge + `"}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			c := NewConsole(&b, true, true)
			c.SetWidth(func() int { return 40 })
			tc.do(c)
			out := ansi.ReplaceAllString(b.String(), "")
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) < 250 {
				t.Fatalf("%d lines: %q", len(lines), out)
			}
			for i, l := range lines {
				if DisplayWidth(l) > 40 {
					t.Errorf("line %d takes %d columns: %q", i, DisplayWidth(l), l)
				}
				if i > 0 && !strings.HasPrefix(l, "  ") {
					t.Errorf("line %d is not indented as a continuation: %q", i, l)
				}
				if f := strings.Fields(l); i > 0 && i < 5 && (f[0] != "lorem" && f[0] != "ipsum") {
					t.Errorf("line %d does not begin at a word: %q", i, l)
				}
			}
			// (The line's own head, "warning:", "server|", is no sign of
			// it: the word, its pieces joined, is.)
			if !strings.Contains(strings.Join(strings.Fields(out), ""), huge) {
				t.Errorf("the word is lost: %q", out)
			}
		})
	}
	// What the person must read or act on is not dimmed, as a note is.
	var b bytes.Buffer
	c := NewConsole(&b, true, true)
	c.Tell("open this URL")
	if got := b.String(); got != "mcpx: open this URL\n" {
		t.Errorf("Tell printed %q", got)
	}
	b.Reset()
	// A server request's outcome, too.
	c = NewConsole(&b, true, false)
	c.SetWidth(func() int { return 40 })
	c.ServerRequest(&jsonrpc.Message{Method: "roots/list"}, nil, &jsonrpc.Error{Code: 1, Message: long})
	if got, want := b.String(), "server request roots/list\n  → answered: error 1: lorem ipsum lorem\n    ipsum lorem ipsum"; !strings.HasPrefix(got, want) {
		t.Errorf("a server request's lines: %q, want them to begin %q", got, want)
	}
	b.Reset()
	c.Wire(time.Now(), transport.Incoming, transport.Frame{Data: []byte(`{"k":"` + long + `"}`)})
	if strings.Count(b.String(), "\n") != 1 {
		t.Errorf("a wire frame is broken across lines: %q", b.String())
	}
	b.Reset()
	c = NewConsole(&b, false, false)
	c.Warn(long)
	if strings.Count(b.String(), "\n") != 1 {
		t.Errorf("off a terminal, a warning is broken across lines: %q", b.String())
	}
}

// mcpx's own lines on stdout (a tool's help's advice, what a list says
// under its table) are broken at words to the printer's width
// (WithWidth), as the console's lines are: printed whole, they were cut
// mid-word at a narrow terminal's edge. Without a width (not a terminal,
// --wide) they are printed as they were, byte for byte.
func TestPrinterOwnLinesWrapAtWords(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	advice := "Give arguments as key=value (typed by the schema); arrays and objects as JSON."
	hidden := "2 tool(s) hidden from Codex by disabled_tools: bravo-tool, delta-tool"
	for _, tc := range []struct {
		name, line string
		do         func(p *Printer)
	}{
		{"tool help", advice, func(p *Printer) { p.ToolHelp(inspector.ToolInfo{Name: "weather", InputSchema: schema}) }},
		{"hidden tools", hidden, func(p *Printer) {
			p.WithHiddenTools("Codex", func(name string) (bool, string) {
				return name != "alpha", "disabled_tools"
			}).Tools([]json.RawMessage{
				json.RawMessage(`{"name":"alpha","inputSchema":{"type":"object"}}`),
				json.RawMessage(`{"name":"bravo-tool","inputSchema":{"type":"object"}}`),
				json.RawMessage(`{"name":"delta-tool","inputSchema":{"type":"object"}}`),
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, colour := range []bool{false, true} {
				var whole, narrow bytes.Buffer
				tc.do(NewPrinter(&whole, colour))
				tc.do(NewPrinter(&narrow, colour).WithWidth(30))
				plain := ansi.ReplaceAllString(whole.String(), "")
				if !strings.Contains(plain, "\n"+tc.line+"\n") {
					t.Fatalf("without a width, the line is not whole:\n%s", plain)
				}
				out := ansi.ReplaceAllString(narrow.String(), "")
				at := strings.Index(out, strings.Fields(tc.line)[0]+" ")
				if at < 0 {
					t.Fatalf("the line is missing:\n%s", out)
				}
				lines := strings.Split(strings.TrimRight(out[at:], "\n"), "\n")
				for i, l := range lines {
					if DisplayWidth(l) > 30 {
						t.Errorf("line %d takes %d columns: %q", i, DisplayWidth(l), l)
					}
					if i > 0 && !strings.HasPrefix(l, "  ") {
						t.Errorf("line %d is not indented as a continuation: %q", i, l)
					}
				}
				if got := strings.Join(strings.Fields(out[at:]), " "); !strings.HasPrefix(got, tc.line) {
					t.Errorf("the line's words are %q, want %q", got, tc.line)
				}
			}
		})
	}
}
