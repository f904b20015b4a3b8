package apps

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/browsertest"
	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// sdkBackend is a Backend over an in-process go-sdk client session: what
// the CLI's session will be, in these tests.
type sdkBackend struct{ s *mcp.ClientSession }

// closeView tears the view down, as a test's last step.
func closeView(t *testing.T, v *View) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := v.Close(ctx, "test over"); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// noProblems fails t if the host reported a problem (r.mu held).
func (r *recorder) noProblems(t *testing.T) {
	t.Helper()
	if len(r.problems) > 0 {
		t.Errorf("problems: %v", r.problems)
	}
}

// realApp runs the example app pkg from npm (appServer) behind a test
// host whose program records what it sees, with a browser tab for its
// views.
func realApp(t *testing.T, pkg string) (bctx context.Context, b sdkBackend, rec *recorder, h *Host) {
	t.Helper()
	b = sdkBackend{appServer(t, pkg)}
	bctx = newBrowser(t)
	rec = newRecorder()
	return bctx, b, rec, newTestHost(t, rec.options(b))
}

func (b sdkBackend) ListTools(ctx context.Context) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for t, err := range b.s.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

func (b sdkBackend) CallTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p mcp.CallToolParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: err.Error()}
	}
	res, err := b.s.CallTool(ctx, &p)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (b sdkBackend) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	res, err := b.s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (b sdkBackend) ListedResource(ctx context.Context, uri string) (json.RawMessage, error) {
	for r, err := range b.s.Resources(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if r.URI == uri {
			return json.Marshal(r)
		}
	}
	return nil, nil
}

// appServer starts an example app server from npm over stdio (--stdio),
// declaring the extension, or skips (fails under MCPX_REQUIRE_INTEROP=1)
// when it is not installed.
func appServer(t *testing.T, pkg string) *mcp.ClientSession {
	t.Helper()
	node, script := testservers.NPMApp(t, pkg)
	caps := &mcp.ClientCapabilities{}
	var settings map[string]any
	_ = json.Unmarshal(ClientCapability(), &settings)
	caps.AddExtension(ExtensionID, settings)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-apps-test", Version: "0"}, &mcp.ClientOptions{Capabilities: caps})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(node, script, "--stdio")
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting %s: %v", pkg, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openToolView does what `mcpx tools call NAME --ui` does: the tool's
// definition from tools/list, its view opened, the call made and its
// result given to the view.
func openToolView(t *testing.T, h *Host, b sdkBackend, name, args string) *View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := b.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tool json.RawMessage
	for _, raw := range tools {
		if toolName(raw) == name {
			tool = raw
		}
	}
	if tool == nil {
		t.Fatalf("no tool %q", name)
	}
	v, err := h.Open(ctx, Call{Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.CallTool(ctx, json.RawMessage(`{"name":"`+name+`","arguments":`+args+`}`))
	if err != nil {
		v.Cancel(err.Error())
	} else {
		v.SetResult(res)
	}
	return v
}

var isoTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// The basic example app from npm, over stdio: its view rendered in the
// browser, its button calling the server's tool through the host, its
// log line reaching the program, its teardown answered.
func TestBrowserRealAppVanilla(t *testing.T) {
	bctx, b, rec, h := realApp(t, "server-basic-vanillajs")
	v := openToolView(t, h, b, "get-time", `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	first := waitViewText(t, bctx, id, css("#server-time"), isoTime.MatchString)
	img := screenshot(t, bctx)
	if n := distinctColors(img); n < 20 {
		t.Errorf("the screenshot has %d colours: blank?", n)
	}
	clickInView(t, bctx, id, button("Get Server Time"))
	second := waitViewText(t, bctx, id, css("#server-time"), func(s string) bool { return isoTime.MatchString(s) && s != first })
	if second <= first {
		t.Errorf("the time went from %s to %s", first, second)
	}
	clickInView(t, bctx, id, button("Send Log"))
	rec.waitFor(t, "the view's log", func(r *recorder) bool {
		return len(r.logs) == 1 && strings.Contains(r.logs[0], "This is log text.")
	})
	closeView(t, v)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	calls := 0
	for _, w := range rec.wire {
		if w.Direction == FromView && strings.Contains(string(w.Raw), `"method":"tools/call"`) {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("the observer saw %d tools/call from the view, want 1", calls)
	}
	rec.noProblems(t)
}

// The other example app servers: each view renders what the tool
// returned (text a person reads in it) and paints its page.
func TestBrowserRealApps(t *testing.T) {
	t.Parallel() // each app has a server and a tab of its own
	timestamp := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)
	for _, tc := range []struct {
		pkg, tool string
		shows     func(body string) bool
	}{
		{"server-basic-react", "get-time", timestamp.MatchString},
		{"server-basic-preact", "get-time", timestamp.MatchString},
		{"server-basic-svelte", "get-time", timestamp.MatchString},
		{"server-basic-solid", "get-time", timestamp.MatchString},
		{"server-basic-vue", "get-time", timestamp.MatchString},
		{"server-budget-allocator", "get-budget-data", func(s string) bool {
			return strings.Contains(s, "Budget Allocator") && strings.Contains(s, "Marketing") && strings.Contains(s, "Allocated:")
		}},
		{"server-cohort-heatmap", "get-cohort-data", func(s string) bool {
			return strings.Contains(s, "Cohort Retention Analysis") && strings.Contains(s, "M11")
		}},
		{"server-customer-segmentation", "get-customer-data", func(s string) bool {
			return strings.Contains(s, "Customer Segmentation") && regexp.MustCompile(`Enterprise\s*\(\d+\)`).MatchString(s)
		}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			bctx, b, rec, h := realApp(t, tc.pkg)
			v := openToolView(t, h, b, tc.tool, `{}`)
			if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
				t.Fatal(err)
			}
			waitViewText(t, bctx, v.Info().ID, "document.body", tc.shows)
			if n := distinctColors(screenshot(t, bctx)); n < 20 {
				t.Errorf("the screenshot has %d colours: blank?", n)
			}
			closeView(t, v)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.noProblems(t)
		})
	}
}

// The debug example app from npm, which has a button for each thing a
// view may ask of its host: every one is answered as the ext-apps SDK
// expects, through the real SDK on the view's side. The basic apps above
// ask only for tool calls and logs; this one also sends messages and
// model context with images and structured content, asks for each
// display mode (pip, which mcpx does not offer, is answered with the
// current mode), opens a link, calls an app-only tool, and calls a tool
// from its teardown handler before it answers the teardown.
func TestBrowserRealAppDebug(t *testing.T) {
	t.Parallel() // a server and a tab of its own
	bctx, b, rec, h := realApp(t, "server-debug")
	t.Cleanup(func() { // what went over the wire, should a step fail
		if t.Failed() {
			rec.mu.Lock()
			for _, w := range rec.wire {
				t.Logf("%s %.200s", w.Direction, w.Raw)
			}
			rec.mu.Unlock()
		}
	})
	v := openToolView(t, h, b, "debug-tool", `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	// The app logs each of its events through the app-only debug-log tool.
	waitViewText(t, bctx, id, "document.body", func(s string) bool { return strings.Contains(s, "Debug text content #1") })
	// sawAnswer reports whether the host answered a request of the view's
	// with a result that contains want.
	sawAnswer := func(r *recorder, want string) bool {
		for _, w := range r.wire {
			if w.Direction == ToView && strings.Contains(string(w.Raw), `"result":`) && strings.Contains(string(w.Raw), want) {
				return true
			}
		}
		return false
	}
	steps := []struct {
		button, what string
		done         func(r *recorder) bool
	}{
		{"send-message-text-btn", "the text message", func(r *recorder) bool {
			return len(r.messages) == 1 && strings.Contains(r.messages[0], `"text":"Hello from debug app!"`)
		}},
		{"send-message-image-btn", "the image message", func(r *recorder) bool {
			return len(r.messages) == 2 && strings.Contains(r.messages[1], `"type":"image"`) && strings.Contains(r.messages[1], `"mimeType":"image/png"`)
		}},
		{"log-error-btn", "the error log", func(r *recorder) bool {
			return len(r.logs) == 1 && strings.Contains(r.logs[0], `"level":"error"`)
		}},
		{"update-context-structured-btn", "the structured model context", func(r *recorder) bool {
			return len(r.contexts) == 1 && strings.Contains(r.contexts[0], `"structuredContent":{"debugState"`)
		}},
		{"update-context-image-btn", "the image model context", func(r *recorder) bool {
			return len(r.contexts) == 2 && strings.Contains(r.contexts[1], `"type":"image"`)
		}},
		{"display-fullscreen-btn", "fullscreen", func(r *recorder) bool { return sawAnswer(r, `{"mode":"fullscreen"}`) }},
		{"display-pip-btn", "pip answered with the current mode", func(r *recorder) bool {
			n := 0
			for _, w := range r.wire {
				if w.Direction == ToView && strings.Contains(string(w.Raw), `"result":{"mode":"fullscreen"}`) {
					n++
				}
			}
			return n == 2
		}},
		{"display-inline-btn", "inline", func(r *recorder) bool { return sawAnswer(r, `{"mode":"inline"}`) }},
		{"open-link-btn", "the link", func(r *recorder) bool {
			return len(r.links) == 1 && r.links[0] == "https://modelcontextprotocol.io/"
		}},
		{"call-debug-refresh-btn", "the app-only tool's result", func(r *recorder) bool { return sawAnswer(r, "Server timestamp: ") }},
	}
	for _, step := range steps {
		clickInView(t, bctx, id, css("#"+step.button))
		rec.waitFor(t, step.what, step.done)
	}
	// The app shows what the host answered.
	waitViewText(t, bctx, id, "document.body", func(s string) bool { return strings.Contains(s, "Server timestamp: ") })
	rec.mu.Lock()
	fromView := len(rec.wire)
	rec.mu.Unlock()
	closeView(t, v)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	teardownCall := false
	for _, w := range rec.wire[fromView:] {
		if w.Direction == FromView && strings.Contains(string(w.Raw), `"type":"onteardown"`) {
			teardownCall = true
		}
	}
	if !teardownCall {
		t.Error("the view's teardown handler did not call the server's debug-log tool")
	}
	rec.noProblems(t)
}

// The transcript example app from npm declares permissions (microphone,
// clipboardWrite) in its resource's _meta.ui, which no other pinned
// example does: its frame is allowed those features, and only those, as
// the browser's permissions policy of the view's document says.
func TestBrowserRealAppPermissions(t *testing.T) {
	t.Parallel() // a server and a tab of its own
	bctx, b, rec, h := realApp(t, "server-transcript")
	v := openToolView(t, h, b, "transcribe", `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "the view's handshake", func(r *recorder) bool { return slices.Contains(r.states, StateInitialized) })
	allowed, err := browsertest.InView[[]string](bctx, id, `["microphone", "clipboard-write", "camera", "geolocation"].filter((f) => document.featurePolicy.allowsFeature(f))`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"microphone", "clipboard-write"}; !slices.Equal(allowed, want) {
		t.Errorf("the view's document allows %q, want %q", allowed, want)
	}
	closeView(t, v)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.noProblems(t)
}

// The budget allocator example app from npm registers tools of its own
// (draft spec "App-Provided Tools", through the ext-apps SDK's
// App.registerTool): the host lists them once the view is initialized,
// and calls them; a call that changes the app's state is seen by the
// next.
func TestBrowserRealAppTools(t *testing.T) {
	t.Parallel() // a server and a tab of its own
	b := sdkBackend{appServer(t, "server-budget-allocator")}
	bctx := newBrowser(t)
	rec := newRecorder()
	o := rec.options(b)
	told := make(chan []AppTool, 4)
	o.Handlers.ViewTools = func(v ViewInfo, tools []AppTool) { told <- tools }
	h := newTestHost(t, o)
	v := openToolView(t, h, b, "get-budget-data", `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	var tools []AppTool
	select {
	case tools = <-told:
	case <-time.After(30 * time.Second):
		t.Fatal("the view's tools were not listed")
	}
	if got := toolNames(tools); got != "get-allocations,set-allocation,set-total-budget,set-company-stage,get-benchmark-comparison" {
		t.Errorf("the view offers %q", got)
	}
	waitViewText(t, bctx, id, "document.body", func(s string) bool { return strings.Contains(s, "Allocated:") })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := v.CallTool(ctx, "set-total-budget", json.RawMessage(`{"amount":123456}`))
	if err != nil || strings.Contains(string(res), `"isError":true`) {
		t.Fatalf("set-total-budget: %s, %v", res, err)
	}
	res, err = v.CallTool(ctx, "get-allocations", nil)
	if err != nil || !strings.Contains(string(res), `"totalBudget":123456`) {
		t.Fatalf("get-allocations after set-total-budget: %s, %v", res, err)
	}
	closeView(t, v)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.noProblems(t)
}
