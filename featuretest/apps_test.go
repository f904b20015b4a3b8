package featuretest

// MCP Apps through the mcpx binary (cmd.Run): `mcpx tools call NAME --ui
// --no-browser` against the real example app server from npm and against
// a server of this package with the hand-written test app, the printed
// URL opened in one headless chromium (internal/browsertest), and what a
// person sees in the view and in mcpx's output checked.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/cmd"
	"github.com/mcpx-dev/mcpx/internal/browsertest"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/record"
)

// runAppsServer serves the "apps" test server: the hand-written test app
// (apps/testdata/app.html, path in $APPS_HTML) as ui://test/app, its
// _meta.ui on the resources/read content or, with $APPS_UI_META_IN=list,
// on the resources/list entry only, with a
// tool that shows it, one for views only and one for the model only, and
// tools whose views cannot be shown.
func runAppsServer() error {
	html, err := os.ReadFile(os.Getenv("APPS_HTML"))
	if err != nil {
		return err
	}
	page := strings.Replace(string(html), `<html lang="en">`,
		`<html lang="en" data-declared="`+os.Getenv("APPS_DECLARED")+`/probe" data-undeclared="`+os.Getenv("APPS_UNDECLARED")+`/probe">`, 1)
	server := mcp.NewServer(&mcp.Implementation{Name: "apps-test", Version: "1.0.0"}, nil)
	resource := func(uri, mimeType, text string, meta mcp.Meta) {
		var listMeta mcp.Meta
		if os.Getenv("APPS_UI_META_IN") == "list" {
			// As the ext-apps SDK's registerAppResource does: _meta.ui on
			// the resources/list entry only.
			meta, listMeta = nil, meta
		}
		server.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: mimeType, Meta: listMeta},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: text, Meta: meta}}}, nil
			})
	}
	resource("ui://test/app", "text/html;profile=mcp-app", page, mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{os.Getenv("APPS_DECLARED")}}}})
	resource("ui://test/wrong-type", "text/html", page, nil)
	resource("ui://test/not-html", "text/html;profile=mcp-app", `{"error":"this is JSON"}`, nil)
	resource("ui://test/silent", "text/html;profile=mcp-app", `<!DOCTYPE html><html><body><p id="x">I never say ui/initialize</p></body></html>`, nil)
	n := 0
	tool := func(name, uri string, visibility []string, result func() string) {
		ui := map[string]any{}
		if uri != "" {
			ui["resourceUri"] = uri
		}
		if visibility != nil {
			ui["visibility"] = visibility
		}
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`), Meta: mcp.Meta{"ui": ui}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: result()}}}, nil
			})
	}
	tool("show", "ui://test/app", nil, func() string { return "Sunny in Paris" })
	tool("refresh", "ui://test/app", []string{"app"}, func() string { n++; return fmt.Sprintf("refreshed %d", n) })
	tool("secret", "", []string{"model"}, func() string { return "the model's secret" })
	tool("missing", "ui://test/missing", nil, func() string { return "called missing" })
	tool("wrong-type", "ui://test/wrong-type", nil, func() string { return "called wrong-type" })
	tool("not-html", "ui://test/not-html", nil, func() string { return "called not-html" })
	tool("silent", "ui://test/silent", nil, func() string { return "called silent" })
	return server.Run(context.Background(), &mcp.StdioTransport{})
}

// appsServer is the server part of an mcpx command line for the apps test
// server; declared and undeclared are the origins its view fetches.
func appsServer(t *testing.T, declared, undeclared string) []string {
	html, err := filepath.Abs("../apps/testdata/app.html")
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--env", serverEnv + "=apps", "--env", "APPS_HTML=" + html,
		"--env", "APPS_DECLARED=" + declared, "--env", "APPS_UNDECLARED=" + undeclared, "--", os.Args[0]}
}

// npmApp is the server part of an mcpx command line for an example app
// server from npm, over stdio; skipped (or failed under
// MCPX_REQUIRE_INTEROP=1) when it is not installed.
func npmApp(t *testing.T, pkg string) []string {
	t.Helper()
	node, script := testservers.NPMApp(t, pkg)
	return []string{"--", node, script, "--stdio"}
}

// liveMcpx is an mcpx command running in the background, interrupted
// (Ctrl-C) by the test.
type liveMcpx struct {
	t       *testing.T
	args    []string
	stdout  syncBuffer
	stderr  syncBuffer
	signals chan os.Signal
	done    chan int
	code    int
}

func startMcpx(t *testing.T, args ...string) *liveMcpx {
	t.Helper()
	return startMcpxIn(t, strings.NewReader(""), args...)
}

// startMcpxIn is startMcpx reading stdin from in (not a terminal).
func startMcpxIn(t *testing.T, in io.Reader, args ...string) *liveMcpx {
	t.Helper()
	return startMcpxEnv(t, nil, in, args...)
}

// startMcpxEnv is startMcpxIn with the environment variables env.
func startMcpxEnv(t *testing.T, env map[string]string, in io.Reader, args ...string) *liveMcpx {
	t.Helper()
	m := &liveMcpx{t: t, args: args, signals: make(chan os.Signal, 1), done: make(chan int, 1)}
	ios := &cmd.IOStreams{
		In: in, Out: &m.stdout, ErrOut: &m.stderr, Signals: m.signals,
		Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return "1"
			}
			return env[k]
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	go func() {
		code := cmd.Run(ctx, args, ios)
		if c, ok := in.(io.Closer); ok {
			c.Close() // a test writing to mcpx's stdin is not left blocked
		}
		m.done <- code
	}()
	t.Cleanup(func() {
		if m.done != nil {
			cancel()
			<-m.done
		}
	})
	return m
}

var viewURL = regexp.MustCompile(`open (http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]+/#([A-Za-z0-9_-]+)) in a browser`)

// url waits for the view's URL on stderr and returns it and the view's id.
func (m *liveMcpx) url() (string, string) {
	m.t.Helper()
	var found []string
	testwait.Poll(testwait.Bound, func() bool {
		found = viewURL.FindStringSubmatch(m.stderr.String())
		return found != nil || m.exited()
	})
	if found == nil {
		m.t.Fatalf("mcpx printed no view URL:\n%s", m.stderr.String())
	}
	return found[1], found[2]
}

func (m *liveMcpx) exited() bool {
	select {
	case code := <-m.done:
		m.code, m.done = code, nil
		return true
	default:
		return m.done == nil
	}
}

// waitStderr waits (bounded) for s on stderr.
func (m *liveMcpx) waitStderr(s string) {
	m.t.Helper()
	if !testwait.Poll(testwait.Bound, func() bool { return strings.Contains(m.stderr.String(), s) }) {
		m.t.Fatalf("stderr never showed %q:\n%s", s, m.stderr.String())
	}
}

// interrupt presses Ctrl-C and waits for mcpx to end; it returns the exit
// code.
func (m *liveMcpx) interrupt() int {
	m.t.Helper()
	if !m.exited() {
		m.signals <- os.Interrupt
		select {
		case code := <-m.done:
			m.code, m.done = code, nil
		case <-time.After(testwait.Bound):
			m.t.Fatal("mcpx did not end after Ctrl-C")
		}
	}
	m.t.Logf("mcpx %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(m.args, " "), m.code, m.stdout.String(), m.stderr.String())
	return m.code
}

// wait waits for mcpx to end on its own.
func (m *liveMcpx) wait() int {
	m.t.Helper()
	if !testwait.Poll(testwait.Bound, m.exited) {
		m.t.Fatal("mcpx did not end")
	}
	m.t.Logf("mcpx %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(m.args, " "), m.code, m.stdout.String(), m.stderr.String())
	return m.code
}

var isoTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// viewMessages returns the methods of a trace's view events, as
// "v2h ui/initialize", and of its client-to-server tools/call frames.
func traceMethods(t *testing.T, name string) (views []string, toolCalls int) {
	t.Helper()
	tr, err := record.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tr.Events {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		switch {
		case e.Kind == record.KindView:
			_ = json.Unmarshal(e.Data, &m)
			what := m.Method
			if what == "" {
				what = "response"
			}
			views = append(views, string(e.Dir)+" "+what)
		case e.Kind == record.KindFrame && e.Dir == record.ClientToServer && bytes.Contains(e.Data, []byte(`"tools/call"`)):
			toolCalls++
		}
	}
	return views, toolCalls
}

func TestAppsThroughMcpx(t *testing.T) {
	bctx := browser.Tab(t, 4*time.Minute)

	// The real example app: its view rendered from the tool's result, its
	// button's tools/call through mcpx to the server and back, its log
	// line in mcpx's output, every message on --wire and in the trace.
	t.Run("real app", func(t *testing.T) {
		t.Parallel() // one tab each in the shared browser; the subtests share nothing else
		server := npmApp(t, "server-basic-vanillajs")
		trace := filepath.Join(t.TempDir(), "apps.jsonl")
		m := startMcpx(t, append([]string{"tools", "call", "get-time", "--ui", "--no-browser", "--wire", "--record", trace}, server...)...)
		u, id := m.url()
		tab := browsertest.NewTab(t, bctx)
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		first := browsertest.WaitViewText(t, tab, id, browsertest.CSS("#server-time"), isoTime.MatchString)
		if n := browsertest.DistinctColors(browsertest.Screenshot(t, tab)); n < 20 {
			t.Errorf("the screenshot has %d colours: blank?", n)
		}
		m.waitStderr("stays open until Ctrl-C")
		if !strings.Contains(m.stdout.String(), first) {
			t.Errorf("the view shows %s, the terminal's result:\n%s", first, m.stdout.String())
		}
		browsertest.ClickInView(t, tab, id, browsertest.Button("Get Server Time"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#server-time"), func(s string) bool { return isoTime.MatchString(s) && s != first })
		browsertest.ClickInView(t, tab, id, browsertest.Button("Send Log"))
		m.waitStderr("view get-time| [info] This is log text.")
		browsertest.ClickInView(t, tab, id, browsertest.Button("Send Message"))
		m.waitStderr("view get-time asks to say (user): This is message text.")
		// No terminal to ask: the link is declined, not opened.
		browsertest.ClickInView(t, tab, id, browsertest.Button("Open Link"))
		m.waitStderr("warning: view get-time asked to open https://modelcontextprotocol.io/: declined (no terminal to ask)")
		if code := m.interrupt(); code != 0 {
			t.Errorf("exit %d after Ctrl-C, want 0", code)
		}
		errOut := m.stderr.String()
		for _, want := range [][2]string{
			{`view→host [view get-time] {`, `"method":"ui/initialize"`},
			{`host→view [view get-time] {"jsonrpc":"2.0","id":0,"result":{`, `"hostInfo":{"name":"mcpx"`},
			{`host→view [view get-time] {"jsonrpc":"2.0","method":"ui/notifications/tool-input"`, ``},
			{`host→view [view get-time] {"jsonrpc":"2.0","method":"ui/notifications/tool-result"`, first},
			{`view→host [view get-time] {`, `"method":"tools/call","params":{"name":"get-time"`},
			{`host→view [view get-time] {"jsonrpc":"2.0","id":1,"method":"ui/resource-teardown"`, ``},
			{`→ send {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{`, `"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`},
		} {
			if !hasLine(errOut, want[0], want[1]) {
				t.Errorf("--wire lacks a line with %s and %s", want[0], want[1])
			}
		}
		views, calls := traceMethods(t, trace)
		for _, want := range []string{"v2h ui/initialize", "h2v response", "v2h ui/notifications/initialized",
			"h2v ui/notifications/tool-input", "h2v ui/notifications/tool-result", "v2h tools/call", "h2v ui/resource-teardown"} {
			if !containsString(views, want) {
				t.Errorf("the trace's view events lack %q: %q", want, views)
			}
		}
		if calls != 2 {
			t.Errorf("the trace has %d tools/call frames to the server, want 2 (the command's, the view's)", calls)
		}

		// The recorded server's app opens from the trace alone.
		t.Run("replayed", func(t *testing.T) {
			m := startMcpx(t, "tools", "call", "get-time", "--ui", "--no-browser",
				"--env", serverEnv+"=mcpx", "--", os.Args[0], "replay", trace)
			u, id := m.url()
			tab := browsertest.NewTab(t, bctx)
			if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitViewText(t, tab, id, browsertest.CSS("#server-time"), func(s string) bool { return s == first })
			if code := m.interrupt(); code != 0 {
				t.Errorf("exit %d after Ctrl-C, want 0", code)
			}
		})
	})

	// The test app: the model-only tool refused, the app-only one called,
	// the CSP blocking an undeclared origin, a flood reported.
	t.Run("test app", func(t *testing.T) {
		t.Parallel() // one tab each in the shared browser; the subtests share nothing else
		declared, declaredHits := probe(t)
		undeclared, undeclaredHits := probe(t)
		// Closing the page ends the command after the page grace, here
		// shorter than the 5 s that allow for a reload.
		m := startMcpxEnv(t, map[string]string{"MCPX_UI_PAGE_GRACE": "100ms"}, strings.NewReader(""),
			append([]string{"tools", "call", "show", "city=Paris", "--ui", "--no-browser"}, appsServer(t, declared, undeclared)...)...)
		u, id := m.url()
		tab := browsertest.NewTab(t, bctx)
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#result"), func(s string) bool { return s == "Sunny in Paris" })
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#input"), func(s string) bool { return s == `{"city":"Paris"}` })
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#call"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#refreshed"), func(s string) bool { return s == "refreshed 1" })
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#secret"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#secret-result"), func(s string) bool { return strings.HasPrefix(s, "refused: ") })
		m.waitStderr(`warning: view show: refused the view's request: tools/call of "secret"`)
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#fetch"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#fetch-undeclared"), func(s string) bool { return s == "blocked" })
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#fetch-declared"), func(s string) bool { return s == "allowed" })
		if declaredHits.Load() == 0 || undeclaredHits.Load() != 0 {
			t.Errorf("requests: declared %d, undeclared %d", declaredHits.Load(), undeclaredHits.Load())
		}
		// The host declares downloadFile; with no terminal to ask, the
		// download is declined.
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#save"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#download"), func(s string) bool { return s == "refused: Download denied by user" })
		m.waitStderr("warning: view show asked to download export.json: declined (no terminal to ask)")
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#flood"))
		m.waitStderr("the view sends too many messages")
		// Closing the page ends the command.
		if err := chromedp.Cancel(tab); err != nil {
			t.Fatal(err)
		}
		if code := m.wait(); code != 0 {
			t.Errorf("exit %d after the page closed, want 0", code)
		}
		wantContains(t, "stderr", m.stderr.String(), "mcpx: the page was closed")
		if strings.Contains(m.stderr.String(), "the model's secret") {
			t.Error("the model-only tool was called")
		}
	})

	// --on-ui-download accept saves a view's download without asking,
	// into --ui-downloads, byte-exact, never over an existing file.
	t.Run("download accepted", func(t *testing.T) {
		t.Parallel() // one tab each in the shared browser; the subtests share nothing else
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "export.json"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		m := startMcpx(t, append([]string{"tools", "call", "show", "city=Oslo", "--ui", "--no-browser",
			"--on-ui-download", "accept", "--ui-downloads", dir}, appsServer(t, "http://127.0.0.1:1", "http://127.0.0.1:2")...)...)
		u, id := m.url()
		tab := browsertest.NewTab(t, bctx)
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#input"), func(s string) bool { return s == `{"city":"Oslo"}` })
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#save"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#download"), func(s string) bool { return s == "saved" })
		saved := filepath.Join(dir, "export (1).json")
		m.waitStderr("mcpx: view show: saved " + saved + " (18 B)")
		if got, err := os.ReadFile(saved); err != nil || string(got) != "{\"city\": \"Paris\"}\n" {
			t.Errorf("%s: %q, %v", saved, got, err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "export.json")); string(got) != "mine" {
			t.Errorf("export.json became %q", got)
		}
		if code := m.interrupt(); code != 0 {
			t.Errorf("exit %d after Ctrl-C, want 0", code)
		}
	})

	// A server that declares the view's CSP on its resources/list entry
	// only (the ext-apps SDK's registerAppResource): the view may reach
	// the declared origin, and only it.
	t.Run("csp in the listing", func(t *testing.T) {
		t.Parallel() // one tab each in the shared browser; the subtests share nothing else
		declared, declaredHits := probe(t)
		undeclared, undeclaredHits := probe(t)
		m := startMcpx(t, append([]string{"tools", "call", "show", "city=Lima", "--ui", "--no-browser", "-v", "--env", "APPS_UI_META_IN=list"},
			appsServer(t, declared, undeclared)...)...)
		u, id := m.url()
		tab := browsertest.NewTab(t, bctx)
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#input"), func(s string) bool { return s == `{"city":"Lima"}` })
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#fetch"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#fetch-undeclared"), func(s string) bool { return s == "blocked" })
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#fetch-declared"), func(s string) bool { return s == "allowed" })
		if declaredHits.Load() == 0 || undeclaredHits.Load() != 0 {
			t.Errorf("requests: declared %d, undeclared %d", declaredHits.Load(), undeclaredHits.Load())
		}
		if code := m.interrupt(); code != 0 {
			t.Errorf("exit %d after Ctrl-C, want 0", code)
		}
		wantContains(t, "stderr", m.stderr.String(), "view show: its _meta.ui is its resources/list entry's")
		wantContains(t, "stderr", m.stderr.String(), "warning: view show may reach other origins: connect to "+declared)
	})

	// The REPL: :ui on declares MCP Apps, a call with --ui opens its view,
	// which stays live while the REPL reads on; the next view appears in
	// the open page; exit tears them down.
	t.Run("repl", func(t *testing.T) {
		t.Parallel() // one tab each in the shared browser; the subtests share nothing else
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		m := startMcpxIn(t, pr, append([]string{"repl", "--no-browser", "--wire"}, appsServer(t, "http://127.0.0.1:1", "http://127.0.0.1:2")...)...)
		say := func(line string) {
			if _, err := io.WriteString(pw, line+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		say(":ui")
		m.waitStderr("MCP Apps is off")
		say(":ui on")
		m.waitStderr("MCP Apps is on: reconnecting to declare it")
		say("tools call show city=Rome --ui")
		u, id := m.url()
		tab := browsertest.NewTab(t, bctx)
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#input"), func(s string) bool { return s == `{"city":"Rome"}` })
		browsertest.ClickInView(t, tab, id, browsertest.CSS("#call"))
		browsertest.WaitViewText(t, tab, id, browsertest.CSS("#refreshed"), func(s string) bool { return s == "refreshed 1" })
		say("tools call show city=Oslo --ui")
		m.waitStderr("the view of show is shown in the open page")
		if !testwait.Poll(testwait.Bound, func() bool {
			return strings.Count(m.stderr.String(), `"method":"ui/notifications/initialized"`) == 2
		}) {
			t.Fatal("the second view did not initialize in the open page")
		}
		say("exit")
		if code := m.wait(); code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
		if n := strings.Count(m.stderr.String(), `"method":"ui/resource-teardown"`); n != 2 {
			t.Errorf("%d teardowns at exit, want 2", n)
		}
		wantContains(t, "stdout", m.stdout.String(), "Sunny in Paris")
	})

	// App-provided tools (draft spec): the budget allocator example app
	// registers tools of its own; the REPL lists them when the view
	// initializes, and :ui call calls one, whose result is printed as a
	// tool's; the next call sees what the first changed.
	t.Run("repl view tools", func(t *testing.T) {
		t.Parallel() // one tab each in the shared browser; the subtests share nothing else
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		m := startMcpxIn(t, pr, append([]string{"repl", "--ui", "--no-browser"}, npmApp(t, "server-budget-allocator")...)...)
		say := func(line string) {
			if _, err := io.WriteString(pw, line+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("stderr:\n%s\nstdout:\n%s", m.stderr.String(), m.stdout.String())
			}
		})
		say("tools call get-budget-data --ui")
		u, _ := m.url()
		tab := browsertest.NewTab(t, bctx)
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		m.waitStderr("view get-budget-data offers tools: get-allocations, set-allocation, set-total-budget, set-company-stage, get-benchmark-comparison (:ui call get-budget-data TOOL [JSON] calls one)")
		say(`:ui call get-budget-data set-total-budget {"amount": 123456}`)
		say(":ui call get-budget-data get-allocations")
		// A tool the view does not offer: a usage error, which ends the
		// REPL reading a script.
		say(":ui call get-budget-data format-disk")
		if code := m.wait(); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		wantContains(t, "stderr", m.stderr.String(), "the view of get-budget-data offers no tool format-disk (it offers: get-allocations, ")
		wantContains(t, "stdout", m.stdout.String(), `"totalBudget": 123456`)
	})

	// A view that never sends ui/initialize: a bounded wait, a clear
	// error, nothing left running. (The bound also has to cover opening
	// the page, beside the other subtests on a loaded machine: 8s, as 4s
	// once was not with both cores busy.)
	t.Run("silent view", func(t *testing.T) {
		t.Parallel() // one tab each in the shared browser; the subtests share nothing else
		m := startMcpx(t, append([]string{"tools", "call", "silent", "--ui", "--no-browser", "--ui-timeout", "8s"}, appsServer(t, "http://127.0.0.1:1", "http://127.0.0.1:2")...)...)
		u, _ := m.url()
		tab := browsertest.NewTab(t, bctx)
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		if code := m.wait(); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		wantContains(t, "stderr", m.stderr.String(), "mcpx: the view of silent: the view did not initialize within 8s: it did not send ui/initialize (--ui-timeout waits longer)")
		wantContains(t, "stdout", m.stdout.String(), "called silent")
	})
}

// Views that cannot be shown: each a clear error before the tool is
// called, mcpx ended; a view no browser opens: a bounded wait.
func TestAppsBadViews(t *testing.T) {
	server := appsServer(t, "http://127.0.0.1:1", "http://127.0.0.1:2")
	for _, tc := range []struct{ tool, want string }{
		{"missing", `mcpx: cannot open the view of tool "missing": the view's resource could not be read: ui://test/missing:`},
		{"wrong-type", `mcpx: cannot open the view of tool "wrong-type": the view's resource has the wrong MIME type: ui://test/wrong-type is "text/html", not "text/html;profile=mcp-app"`},
		{"not-html", `mcpx: cannot open the view of tool "not-html": the view's resource is not a valid HTML document: ui://test/not-html: the document does not start with <!DOCTYPE html> or <html>`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			r := run(t, "", append([]string{"tools", "call", tc.tool, "--ui", "--no-browser"}, server...)...)
			r.wantCode(t, 1)
			wantContains(t, "stderr", r.stderr, tc.want)
			if strings.Contains(r.stdout, "called") {
				t.Error("the tool was called although its view cannot be shown")
			}
		})
	}
	t.Run("no page", func(t *testing.T) {
		r := run(t, "", append([]string{"tools", "call", "show", "--ui", "--no-browser", "--ui-timeout", "200ms"}, server...)...)
		r.wantCode(t, 1)
		wantContains(t, "stderr", r.stderr, "the host page was not opened: no browser opened http://127.0.0.1:", "within 200ms (--ui-timeout waits longer)")
		wantContains(t, "stdout", r.stdout, "Sunny in Paris")
	})
	// The 2026-07-28 era declares the extension in every request's _meta,
	// beside the tasks extension.
	t.Run("modern era", func(t *testing.T) {
		r := run(t, "", "tools", "list", "--ui", "--protocol-era", "modern", "--wire", "--env", serverEnv+"=modern", "--", os.Args[0])
		r.wantCode(t, 0)
		wantContains(t, "stderr", r.stderr, `"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`)
	})
	t.Run("tools list", func(t *testing.T) {
		r := run(t, "", append([]string{"tools", "list", "--ui"}, server...)...)
		r.wantCode(t, 0)
		wantContains(t, "stdout", r.stdout, "refresh [view] [app only]", "show [view]")
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, "secret") && strings.Contains(l, "[") {
				t.Errorf("secret marked: %q", l)
			}
		}
	})
}

// hasLine reports whether a line of out contains both a and b.
func hasLine(out, a, b string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, a) && strings.Contains(l, b) {
			return true
		}
	}
	return false
}

// probe is an HTTP origin that counts the requests it gets.
func probe(t *testing.T) (string, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(s.Close)
	return s.URL, &n
}
