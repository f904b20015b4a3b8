package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/apps"
)

// tools list marks the tools with a view and those for views only.
func TestToolsMarksViews(t *testing.T) {
	var b strings.Builder
	NewPrinter(&b, false).Tools([]json.RawMessage{
		json.RawMessage(`{"name":"plain","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"show","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://a/b"}}}`),
		json.RawMessage(`{"name":"refresh","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://a/b","visibility":["app"]}}}`),
		json.RawMessage(`{"name":"none","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://a/b","visibility":[]}}}`),
		json.RawMessage(`{"name":"old","inputSchema":{"type":"object"},"_meta":{"ui/resourceUri":"ui://a/b"}}`),
		json.RawMessage(`{"name":"bad","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["everyone"]}}}`),
	})
	lines := strings.Split(b.String(), "\n")
	want := map[string]string{"plain": "", "show": "[view]", "refresh": "[view] [app only]", "none": "[view] [hidden]", "old": "[view]", "bad": "[invalid _meta.ui]"}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		w, ok := want[f[0]]
		if !ok {
			continue
		}
		delete(want, f[0])
		got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), f[0]))
		if w == "" && strings.Contains(got, "[") || w != "" && !strings.HasPrefix(got, w) {
			t.Errorf("%s: %q, want marks %q", f[0], l, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing rows %v in:\n%s", want, b.String())
	}
}

// What a view sends reaches the terminal escaped, marked as the view's.
func TestViewConsoleEscapes(t *testing.T) {
	var b strings.Builder
	c := NewConsole(&b, false, false)
	v := apps.ViewInfo{ID: "v", Tool: "get\x1b]0;x\x07time"}
	c.ViewLog(v, json.RawMessage(`{"level":"info","data":"hi\u001b[2J there"}`))
	c.ViewMessage(v, json.RawMessage(`{"role":"user","content":[{"type":"text","text":"say\u001b[31m this"},{"type":"image","data":"x"}]}`))
	c.ViewModelContext(v, json.RawMessage(`{"content":[{"type":"text","text":"remember"}],"structuredContent":{"n":1}}`))
	c.ViewWire(apps.WireMessage{View: v, Direction: apps.FromView, Raw: []byte(`{"jsonrpc":"2.0","method":"x\u001b"}`), Time: time.Now()})
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control characters reached the terminal: %q", out)
	}
	for _, want := range []string{
		`|get\x1b]0;x\x07time| [info] hi\x1b[2J there`,
		`asks to say (user): say\x1b[31m this [image]`,
		`asks the model to remember: remember {"n":1}`,
		`view→host [view get\x1b]0;x\x07time] {"jsonrpc"`,
	} {
		if !strings.Contains(out, strings.TrimPrefix(want, "|")) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// On a terminal, what a view asks to say is wrapped at words, as the
// console's other lines for a person are.
func TestViewMessageWraps(t *testing.T) {
	var b strings.Builder
	c := NewConsole(&b, true, false)
	c.SetWidth(func() int { return 40 })
	v := apps.ViewInfo{ID: "v", Tool: "weather"}
	c.ViewMessage(v, json.RawMessage(`{"role":"user","content":[{"type":"text","text":"what is the weather like in Paris this weekend"}]}`))
	want := "view weather asks to say (user): what is\n  the weather like in Paris this weekend\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// A view's policy is told as it opens: each refused declaration, the
// origins it may reach, the features its frame may use; nothing for a
// view that declares nothing.
func TestViewPolicy(t *testing.T) {
	var b strings.Builder
	c := NewConsole(&b, false, false)
	v := apps.ViewInfo{ID: "v", Tool: "sh\x1b[2Jow"}
	c.ViewPolicy(v, apps.Policy{}, true)
	if b.Len() != 0 {
		t.Errorf("a view that declares nothing: %q", b.String())
	}
	c.ViewPolicy(v, apps.Policy{
		CSP:         apps.CSP{ConnectDomains: []string{"https://a.example", "wss://b.example"}, FrameDomains: []string{"https://f.example"}},
		Permissions: apps.Permissions{Camera: true, ClipboardWrite: true},
		Refused:     []string{`csp.connectDomains entry "*": a wildcard host admits every origin`},
	}, false)
	want := `warning: view sh\x1b[2Jow: refused its _meta.ui.csp.connectDomains entry "*": a wildcard host admits every origin
warning: view sh\x1b[2Jow may reach other origins: connect to https://a.example wss://b.example; frame https://f.example
mcpx: view sh\x1b[2Jow may ask the browser for camera, clipboard-write
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	// Where the declarations came from: notes with verbose only; a
	// malformed listing always warned of.
	for _, tc := range []struct {
		p           apps.Policy
		quiet, loud string
	}{
		{apps.Policy{Declared: apps.DeclaredInListing}, "",
			"mcpx: view sh\\x1b[2Jow: its _meta.ui is its resources/list entry's (its resources/read content declares none)\n"},
		{apps.Policy{ListingError: errors.New("resources/list: Method not found")}, "",
			"mcpx: view sh\\x1b[2Jow: its resources/read content declares no _meta.ui, and its resources/list entry could not be read (resources/list: Method not found): the view has the restrictive default policy\n"},
		{apps.Policy{ListingError: fmt.Errorf("%w: ui://a: its resources/list entry's _meta.ui: x", apps.ErrBadMeta)},
			"warning: view sh\\x1b[2Jow: ignored malformed _meta.ui: ui://a: its resources/list entry's _meta.ui: x; the view has the restrictive default policy\n", ""},
	} {
		for _, verbose := range []bool{false, true} {
			b.Reset()
			c.ViewPolicy(v, tc.p, verbose)
			want := tc.quiet
			if verbose {
				want += tc.loud
			}
			if b.String() != want {
				t.Errorf("verbose %v: got\n%q\nwant\n%q", verbose, b.String(), want)
			}
		}
	}
}

// tools list with the named server's application's filter marks what it
// hides, and says under the table which tools, by field.
func TestToolsMarksHidden(t *testing.T) {
	var b strings.Builder
	hides := map[string]string{"b": "disabled_tools", "c": "not in enabled_tools", "d": "disabled_tools"}
	NewPrinter(&b, false).WithHiddenTools("Codex", func(name string) (bool, string) {
		why, ok := hides[name]
		return ok, why
	}).Tools([]json.RawMessage{
		json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"b","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"c","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"d","inputSchema":{"type":"object"}}`),
	})
	want := "a\n" +
		"b [hidden from Codex]\n" +
		"c [hidden from Codex]\n" +
		"d [hidden from Codex]\n" +
		"2 tool(s) hidden from Codex by disabled_tools: b, d\n" +
		"1 tool(s) hidden from Codex (not in enabled_tools): c\n"
	var got string
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		got += strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")
		if strings.HasSuffix(l, "\n") {
			got += "\n"
		}
	}
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
