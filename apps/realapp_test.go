package apps

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// sdkBackend is a Backend over an in-process go-sdk client session: what
// the CLI's session will be, in these tests.
type sdkBackend struct{ s *mcp.ClientSession }

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
	s := appServer(t, "server-basic-vanillajs")
	bctx := newBrowser(t)
	b := sdkBackend{s}
	rec := newRecorder()
	h := newTestHost(t, rec.options(b))
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := v.Close(ctx, "test over"); err != nil {
		t.Errorf("Close: %v", err)
	}
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
	if len(rec.problems) > 0 {
		t.Errorf("problems: %v", rec.problems)
	}
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
			s := appServer(t, tc.pkg)
			bctx := newBrowser(t)
			b := sdkBackend{s}
			rec := newRecorder()
			h := newTestHost(t, rec.options(b))
			v := openToolView(t, h, b, tc.tool, `{}`)
			if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
				t.Fatal(err)
			}
			waitViewText(t, bctx, v.Info().ID, "document.body", tc.shows)
			if n := distinctColors(screenshot(t, bctx)); n < 20 {
				t.Errorf("the screenshot has %d colours: blank?", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := v.Close(ctx, "test over"); err != nil {
				t.Errorf("Close: %v", err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.problems) > 0 {
				t.Errorf("problems: %v", rec.problems)
			}
		})
	}
}
