package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/tui"
)

// $COLORFGBG says whether the terminal is dark or light; anything else
// leaves the theme to the browser.
func TestTerminalTheme(t *testing.T) {
	for in, want := range map[string]string{
		"15;0": "dark", "0;15": "light", "7;default;8": "dark", "0;7": "light", "": "", "x": "", "1;99": "",
	} {
		if got := terminalTheme(in); got != want {
			t.Errorf("COLORFGBG=%q: %q, want %q", in, got, want)
		}
	}
}

// The --ui flags' mistakes are usage errors before any server starts;
// --no-browser with a server command is --ui's, not a misplaced OAuth
// flag.
func TestUIFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "list", "--ui-theme", "pink", "--", "false"}, `--ui-theme must be light, dark or auto, not "pink"`},
		{[]string{"tools", "list", "--ui-timeout", "0s", "--", "false"}, "--ui-timeout must be positive"},
		{[]string{"tools", "list", "--ui", "--ui-downloads", "/nonexistent/dir", "--", "false"}, "--ui-downloads /nonexistent/dir: no such file or directory; give an existing directory"},
		{[]string{"tools", "list", "--ui", "--ui-downloads", "ui_test.go", "--", "false"}, "--ui-downloads ui_test.go: not a directory; give an existing directory"},
		{[]string{"tools", "list", "--ui", "--on-ui-download", "yes", "--", "false"}, `--on-ui-download must be prompt, decline or accept, not "yes"`},
		{[]string{"tools", "list", "--ui", "--on-ui-download", "prompt", "--", "false"}, "--on-ui-download prompt needs a terminal on stdin and stderr; use decline or accept"},
	} {
		r := runMcpx(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want a usage error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	r := runMcpx(t, nil, "ping", "--no-browser", "--", "false")
	if strings.Contains(r.stderr, "applies to HTTP servers") {
		t.Errorf("--no-browser with a server command: %s", r.stderr)
	}
}

// confirmer is a Person that answers Confirm with yes or no, and
// remembers the question.
type confirmer struct {
	inspector.Person
	yes      bool
	question string
}

func (c *confirmer) Confirm(_ context.Context, q string, _ bool) (bool, error) {
	c.question = q
	return c.yes, nil
}

// A view's ui/open-link is opened only after the person said yes, never
// without a terminal; with --no-browser it is printed.
func TestViewOpenLink(t *testing.T) {
	const link = "https://example.com/x"
	v := apps.ViewInfo{ID: "v", Tool: "show\x1b[2J"}
	for _, tc := range []struct {
		name      string
		person    *confirmer
		noBrowser bool
		wantErr   error
		opened    bool
		out       string
	}{
		{"yes", &confirmer{yes: true}, false, nil, true, ""},
		{"no", &confirmer{}, false, apps.ErrDenied, false, ""},
		{"no terminal", nil, false, apps.ErrDenied, false, "declined (no terminal to ask)"},
		{"yes, no browser", &confirmer{yes: true}, true, nil, false, "open " + link + " yourself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			var opened []string
			o := viewHostOptions{ui: uiDesc{noBrowser: tc.noBrowser}, console: tui.NewConsole(&out, false, false),
				openURL: func(u string) error { opened = append(opened, u); return nil }}
			if tc.person != nil {
				o.ui.person = tc.person
			}
			err := viewHandlers(o).OpenLink(context.Background(), v, link)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			if got := len(opened) == 1 && opened[0] == link; got != tc.opened {
				t.Errorf("opened %q", opened)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("output %q lacks %q", out.String(), tc.out)
			}
			if tc.person != nil && (!strings.Contains(tc.person.question, link) || strings.Contains(tc.person.question, "\x1b")) {
				t.Errorf("question %q", tc.person.question)
			}
		})
	}
}

// The page grace is 5 s, or $MCPX_UI_PAGE_GRACE; a bad value is a usage
// error that names the variable.
func TestPageGrace(t *testing.T) {
	for v, want := range map[string]time.Duration{"": defaultPageGrace, "100ms": 100 * time.Millisecond, " 2m ": 2 * time.Minute, "0s": 0} {
		ios, _, _ := NewTestIOStreams(nil)
		ios.Getenv = func(k string) string {
			if k == pageGraceEnv {
				return v
			}
			return ""
		}
		if got, err := pageGrace(ios); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"5", "soon", "-1s"} {
		ios, _, _ := NewTestIOStreams(nil)
		ios.Getenv = func(string) string { return v }
		_, err := pageGrace(ios)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "$MCPX_UI_PAGE_GRACE") {
			t.Errorf("%q: %v, want a usage error naming the variable", v, err)
		}
	}
}

// The question before a view's link is opened points out what makes the
// link easy to misread, as a URL elicitation's does.
func TestViewLinkQuestion(t *testing.T) {
	v := apps.ViewInfo{ID: "v", Tool: "show"}
	for _, tc := range []struct{ link, want string }{
		{"https://example.com/x", "The view of show asks to open https://example.com/x. Open it?"},
		{"https://example.com@evil.example/x", "(warning: the URL contains a user name before the host; the real host is evil.example). Open it?"},
		{"https://ex\u0430mple.com/", "(warning: the host contains non-ASCII characters: it may imitate another name)"},
		// As package apps hands it over (url.URL.String escapes the host).
		{"https://ex%D0%B0mple.com/", "(warning: the host contains non-ASCII characters: it may imitate another name)"},
		{"https://xn--exmple-4nf.com/", "(warning: the host contains Punycode (xn--exmple-4nf): it may imitate another name)"},
		{"http://example.com/", "(warning: the URL is not HTTPS)"},
	} {
		if got := linkQuestion(v, tc.link); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q in it", tc.link, got, tc.want)
		}
	}
}

// A view's ui/download-file is saved only after the person said yes,
// never without a terminal, into the --ui-downloads directory; the
// question names the files, their sizes and the directory, escaped; a
// file that cannot be saved is a warning and an error.
func TestViewDownload(t *testing.T) {
	v := apps.ViewInfo{ID: "v", Tool: "show\x1b[2J"}
	files := []apps.Download{
		{Name: "export.json", MIMEType: "application/json\x1b[31m", Data: []byte("{}\n")},
		{Name: "chart.png", Data: make([]byte, 2048)},
	}
	for _, tc := range []struct {
		name    string
		person  *confirmer
		policy  string // --on-ui-download, as validated
		dir     string // "" the test's directory, "-" a missing one
		wantErr error
		saved   bool
		out     string
	}{
		{"yes", &confirmer{yes: true}, downloadPrompt, "", nil, true, "saved "},
		{"no", &confirmer{}, downloadPrompt, "", apps.ErrDenied, false, ""},
		{"no terminal", nil, downloadDecline, "", apps.ErrDenied, false, "asked to download export.json, chart.png: declined (--on-ui-download decline)"},
		{"no terminal, no policy", nil, "", "", apps.ErrDenied, false, "asked to download export.json, chart.png: declined (no terminal to ask)"},
		{"accept", nil, downloadAccept, "", nil, true, "saved "},
		{"decline, not asked", &confirmer{yes: true}, downloadDecline, "", apps.ErrDenied, false, "declined (--on-ui-download decline)"},
		{"cannot save", &confirmer{yes: true}, downloadPrompt, "-", nil, false, "warning: view show"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.dir == "-" {
				dir = filepath.Join(dir, "gone")
			}
			var out strings.Builder
			o := viewHostOptions{ui: uiDesc{downloads: dir, onDownload: tc.policy}, console: tui.NewConsole(&out, false, false)}
			if tc.person != nil {
				o.ui.person = tc.person
			}
			err := viewHandlers(o).DownloadFile(context.Background(), v, files)
			switch {
			case tc.dir == "-":
				if err == nil || errors.Is(err, apps.ErrDenied) {
					t.Errorf("err %v, want a failure to save", err)
				}
			case !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil):
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "export.json"))
			if saved := string(got) == "{}\n"; saved != tc.saved {
				t.Errorf("export.json saved: %v (%q)", saved, got)
			}
			if tc.saved {
				if b, _ := os.ReadFile(filepath.Join(dir, "chart.png")); len(b) != 2048 {
					t.Errorf("chart.png holds %d bytes", len(b))
				}
			}
			if !strings.Contains(out.String(), tc.out) || strings.Contains(out.String(), "\x1b") {
				t.Errorf("output %q lacks %q (or has an escape)", out.String(), tc.out)
			}
			if tc.person != nil && tc.policy == downloadDecline && tc.person.question != "" {
				t.Errorf("asked %q under --on-ui-download decline", tc.person.question)
			}
			if tc.person != nil && tc.policy == downloadPrompt {
				q := tc.person.question
				for _, want := range []string{"export.json (application/json", "chart.png (2.0 KiB)", dir, "Save them?"} {
					if !strings.Contains(q, want) {
						t.Errorf("question %q lacks %q", q, want)
					}
				}
				if strings.Contains(q, "\x1b") {
					t.Errorf("question %q has an escape", q)
				}
			}
		})
	}
}

// A view's sampling/createMessage is answered by --on-sampling's policy,
// as the server's: declined (the view gets the spec's -1), answered from
// the reply file (the results in turn, per view), told on the console
// with the view's name escaped; without a sampler (--no-sampling) the
// host offers views no sampling.
func TestViewSampling(t *testing.T) {
	if viewHandlers(viewHostOptions{}).Sample != nil {
		t.Error("a host without a sampler offers sampling")
	}
	v := apps.ViewInfo{ID: "v", Tool: "show\x1b[2J"}
	params := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"Hi"}}],"maxTokens":9}`)
	noClient := func() (*client, error) { return nil, errors.New("no session") }

	var out strings.Builder
	decline, err := inspector.NewSampler(context.Background(), inspector.SamplingPolicy{Mode: inspector.PolicyDecline}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := viewHostOptions{console: tui.NewConsole(&out, false, false), current: noClient, sampler: decline}
	_, err = viewHandlers(o).Sample(context.Background(), v, params)
	var rpc *apps.Error
	if !errors.As(err, &rpc) || rpc.Code != -1 {
		t.Errorf("declined: %v, want the spec's error -1", err)
	}
	if s := out.String(); !strings.Contains(s, `view show\x1b[2J asked for an LLM completion (sampling/createMessage): User rejected sampling request`) || strings.Contains(s, "\x1b") {
		t.Errorf("console:\n%s", s)
	}

	file := filepath.Join(t.TempDir(), "replies.json")
	if err := os.WriteFile(file, []byte(`[{"content":{"type":"text","text":"one"}},{"content":{"type":"text","text":"two"}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	replies, err := inspector.NewSampler(context.Background(), inspector.SamplingPolicy{Mode: inspector.PolicyFile, File: file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	o.sampler = replies
	h := viewHandlers(o)
	other := apps.ViewInfo{ID: "w", Tool: "other"}
	for _, want := range []struct {
		v    apps.ViewInfo
		text string
	}{{v, "one"}, {v, "two"}, {other, "one"}, {v, "two"}} {
		res, err := h.Sample(context.Background(), want.v, params)
		if err != nil || !strings.Contains(string(res), `"text":"`+want.text+`"`) {
			t.Errorf("view %s: %s, %v; want %q", want.v.ID, res, err, want.text)
		}
	}
	if s := out.String(); !strings.Contains(s, "view other asked for an LLM completion (sampling/createMessage): answered from "+file) {
		t.Errorf("console:\n%s", s)
	}
	// Tools are offered to views (the host declares sampling.tools).
	res, err := h.Sample(context.Background(), other, json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"Hi"}}],"tools":[{"name":"t","inputSchema":{"type":"object"}}],"maxTokens":9}`))
	if err != nil {
		t.Errorf("a request with tools: %s, %v", res, err)
	}
}

// The tools a view offers are shown with their names escaped, and how to
// call one where the person can (the REPL), or that mcpx does not.
func TestViewToolsLine(t *testing.T) {
	v := apps.ViewInfo{ID: "v", Tool: "board\x1b[2J"}
	tools := []apps.AppTool{{Name: "make_move"}, {Name: "reset\x1b]0;x\x07"}}
	for _, tc := range []struct {
		tools    []apps.AppTool
		callable bool
		want     string
	}{
		{tools, true, `view board\x1b[2J offers tools: make_move, reset\x1b]0;x\x07 (:ui call board\x1b[2J TOOL [JSON] calls one)`},
		{tools, false, `view board\x1b[2J offers tools: make_move, reset\x1b]0;x\x07 (mcpx has no model to call them; the REPL's :ui call does)`},
		{nil, true, `view board\x1b[2J offers no tools of its own now`},
	} {
		if got := viewToolsLine(v, tc.tools, tc.callable); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
