package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// These tests open views in a real browser, Debian's chromium, headless
// (./scripts/test installs it). Without it they are skipped, or fail
// under MCPX_REQUIRE_INTEROP=1.

// chromium finds the browser.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testservers.RequireInterop() {
		t.Fatal("chromium is not installed (MCPX_REQUIRE_INTEROP=1; ./scripts/test installs it)")
	}
	t.Skip("chromium is not installed (./scripts/test installs it; set MCPX_REQUIRE_INTEROP=1 to make this a failure)")
	return ""
}

// browser is the one headless chromium of this package's tests, started
// by the first test that asks for one (newBrowser) and stopped by
// TestMain: each test gets a tab of its own in a browser context of its
// own (cookies, storage and cache apart), which costs a fraction of a new
// browser's start.
var browser struct {
	once   sync.Once
	ctx    context.Context // the browser's first tab
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	// The tests wait for the browser and for their hosts' timeouts.
	testwait.RaiseParallel(4)
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// startBrowser starts the shared browser with exe, bounded to a minute.
func startBrowser(exe string) {
	actx, acancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.WindowSize(1200, 1000),
	)
	bctx, bcancel := chromedp.NewContext(actx)
	browser.ctx = bctx
	browser.cancel = func() { bcancel(); acancel() }
	// The first Run starts the browser, which then lives as long as bctx:
	// its start is bounded here, not through a deadline on bctx.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case browser.err = <-started:
	case <-time.After(time.Minute):
		browser.err = errors.New("no browser after a minute")
	}
	if browser.err != nil {
		browser.cancel()
	}
}

// newBrowser gives the test a tab of the shared headless chromium in a
// browser context of its own, for the test's lifetime (90s at most).
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	browser.once.Do(func() { startBrowser(exe) })
	if browser.err != nil {
		t.Fatalf("starting chromium: %v", browser.err)
	}
	tctx, tcancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(tcancel)
	ctx, cancel := context.WithTimeout(tctx, 90*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 1000)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// eventually retries f every 50ms until it succeeds, for 20s.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// viewWorld is an isolated script world in the view's own document: the
// inner frame of the view's sandbox frame (found by the view's sandbox
// URL in the frame tree). It sees the view's DOM, not its scripts.
func viewWorld(ctx context.Context, viewID string) (runtime.ExecutionContextID, error) {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return 0, err
	}
	var find func(n *page.FrameTree) *page.FrameTree
	find = func(n *page.FrameTree) *page.FrameTree {
		if strings.HasSuffix(n.Frame.URL, "/view/"+viewID) && len(n.ChildFrames) > 0 && n.Frame.ParentID != "" {
			if p := n.ChildFrames[0]; p != nil {
				return p
			}
		}
		for _, c := range n.ChildFrames {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	inner := find(tree.FrameTree)
	if inner == nil {
		return 0, fmt.Errorf("the view's frame is not there yet")
	}
	w, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: inner.Frame.ID, WorldName: "mcpx-test"})
	if err != nil {
		return 0, err
	}
	return w.ExecutionContextID, nil
}

// inView evaluates expr in the view's document.
func inView[T any](ctx context.Context, viewID, expr string) (T, error) {
	var zero T
	w, err := viewWorld(ctx, viewID)
	if err != nil {
		return zero, err
	}
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, func(p *runtime.EvaluateParams) { p.ContextID = w }))
}

// css is the view's element matching a CSS selector, as a script
// expression.
func css(sel string) string { return `document.querySelector(` + strconv.Quote(sel) + `)` }

// button is the view's button labelled text.
func button(text string) string {
	return `[...document.querySelectorAll("button")].find((b) => b.textContent.trim() === ` + strconv.Quote(text) + `)`
}

// waitViewText waits until the text of the view's element (a script
// expression: css, button) satisfies ok, and returns it.
func waitViewText(t *testing.T, ctx context.Context, viewID, elem string, ok func(string) bool) string {
	t.Helper()
	var got string
	eventually(t, "the view's "+elem, func() error {
		s, err := inView[string](ctx, viewID, `((`+elem+`) || {}).textContent || ""`)
		if err != nil {
			return err
		}
		got = s
		if !ok(s) {
			return fmt.Errorf("text %q", s)
		}
		return nil
	})
	return got
}

// clickInView clicks the view's element (a script expression) with the
// mouse, as a person does: at its centre in the page, through both
// frames.
func clickInView(t *testing.T, ctx context.Context, viewID, elem string) {
	t.Helper()
	eventually(t, "clicking "+elem, func() error {
		xy, err := inView[[]float64](ctx, viewID, `(() => {
			const e = `+elem+`;
			e.scrollIntoView({block: "center"});
			const r = e.getBoundingClientRect(), f = window.frameElement.getBoundingClientRect();
			return [f.left + r.left + r.width / 2, f.top + r.top + r.height / 2];
		})()`)
		if err != nil {
			return err
		}
		at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
			const f = document.getElementById(`+strconv.Quote(viewID)+`).querySelector("iframe");
			const r = f.getBoundingClientRect();
			return [r.left + f.clientLeft, r.top + f.clientTop];
		})()`))
		if err != nil {
			return err
		}
		return chromedp.Do(ctx, chromedp.MouseClickXY(at[0]+xy[0], at[1]+xy[1]))
	})
}

// screenshot captures the tab and decodes it.
func screenshot(t *testing.T, ctx context.Context) image.Image {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("MCPX_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".png"), b, 0o644)
	}
	return img
}

// countColor counts the pixels of img close to the colour r, g, b.
func countColor(img image.Image, r, g, b uint8) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr>>8, r) && near(pg>>8, g) && near(pb>>8, b) {
				n++
			}
		}
	}
	return n
}

func near(a uint32, b uint8) bool { return a+3 >= uint32(b) && a <= uint32(b)+3 }

// distinctColors counts the colours of img (capped).
func distinctColors(img image.Image) int {
	seen := map[uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|b>>8] = true
			if len(seen) > 1000 {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// probeServer counts the requests it gets.
func probeServer(t *testing.T) (string, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(s.Close)
	return s.URL, &n
}

// The hand-written test app, with the fake backend: what a person sees,
// and every path of the protocol that goes through the browser.
func TestBrowserTestApp(t *testing.T) {
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	declared, declaredHits := probeServer(t)
	undeclared, undeclaredHits := probeServer(t)
	app, err := os.ReadFile("testdata/app.html")
	if err != nil {
		t.Fatal(err)
	}
	html := strings.Replace(string(app), `<html lang="en">`,
		`<html lang="en" data-declared="`+declared+`/probe" data-undeclared="`+undeclared+`/probe">`, 1)
	b := newFakeBackend(html)
	b.meta = `{"ui":{"csp":{"connectDomains":["` + declared + `"]},"prefersBorder":true}}`
	rec := newRecorder()
	o := rec.options(b)
	o.Theme = "dark"
	h := newTestHost(t, o)
	v := openShow(t, h, `{"city":"Paris"}`)
	id := v.Info().ID
	v.SetResult(json.RawMessage(`{"content":[{"type":"text","text":"Sunny in Paris"}]}`))
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}

	// The view rendered the tool's input and result from the host.
	waitViewText(t, bctx, id, css("#result"), func(s string) bool { return s == "Sunny in Paris" })
	waitViewText(t, bctx, id, css("#input"), func(s string) bool { return s == `{"city":"Paris"}` })
	waitViewText(t, bctx, id, css("#theme"), func(s string) bool { return s == "dark" })
	waitViewText(t, bctx, id, css("#tool"), func(s string) bool { return s == "show" })
	img := screenshot(t, bctx)
	if n := countColor(img, 0xff, 0xf8, 0xe0); n < 20000 {
		t.Errorf("the screenshot shows %d pixels of the view's background, want a visible view", n)
	}

	// A button that calls an app tool round-trips to the server.
	clickInView(t, bctx, id, css("#call"))
	waitViewText(t, bctx, id, css("#refreshed"), func(s string) bool { return s == "refreshed 1" })
	// The model-only tool is refused, and never reaches the server.
	clickInView(t, bctx, id, css("#secret"))
	waitViewText(t, bctx, id, css("#secret-result"), func(s string) bool { return strings.HasPrefix(s, "refused: ") })
	if calls := b.toolCalls(); len(calls) != 1 {
		t.Errorf("the server got %q", calls)
	}
	// The view's log line reaches the program.
	clickInView(t, bctx, id, css("#log"))
	rec.waitFor(t, "the view's log", func(r *recorder) bool {
		return len(r.logs) == 1 && strings.Contains(r.logs[0], "hello from the view")
	})
	// The CSP blocks a fetch to an undeclared origin, not to a declared one.
	clickInView(t, bctx, id, css("#fetch"))
	waitViewText(t, bctx, id, css("#fetch-undeclared"), func(s string) bool { return s == "blocked" })
	waitViewText(t, bctx, id, css("#fetch-declared"), func(s string) bool { return s == "allowed" })
	if declaredHits.Load() == 0 || undeclaredHits.Load() != 0 {
		t.Errorf("requests: declared %d, undeclared %d", declaredHits.Load(), undeclaredHits.Load())
	}
	// size-changed resizes the frame; a display mode request is honoured.
	clickInView(t, bctx, id, css("#size"))
	eventually(t, "the frame's height", func() error {
		hgt, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById(`+strconv.Quote(id)+`).querySelector("iframe").style.height`))
		if err == nil && hgt != "611px" {
			err = fmt.Errorf("height %q", hgt)
		}
		return err
	})
	clickInView(t, bctx, id, css("#full"))
	waitViewText(t, bctx, id, css("#mode"), func(s string) bool { return s == "fullscreen" })
	full, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById(`+strconv.Quote(id)+`).classList.contains("fullscreen")`))
	if err != nil || !full {
		t.Errorf("the page does not show the view full screen: %v %v", full, err)
	}

	// Teardown goes through the browser and the view answers.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := v.Close(ctx, "test over"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var seen []string
	for _, w := range rec.wire {
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(w.Raw, &m)
		if m.Method != "" {
			seen = append(seen, w.Direction.String()+" "+m.Method)
		}
	}
	for _, want := range []string{
		"view→host ui/notifications/sandbox-proxy-ready", "host→view ui/notifications/sandbox-resource-ready",
		"view→host ui/initialize", "view→host ui/notifications/initialized",
		"host→view ui/notifications/tool-input", "host→view ui/notifications/tool-result",
		"view→host tools/call", "view→host notifications/message", "host→view ui/resource-teardown",
	} {
		if !strings.Contains(strings.Join(seen, "\n"), want) {
			t.Errorf("the observer did not see %s; it saw:\n%s", want, strings.Join(seen, "\n"))
		}
	}
	for _, p := range rec.problems {
		if !strings.Contains(p.Error(), `"secret"`) {
			t.Errorf("unexpected problem: %v", p)
		}
	}
}

// A view that floods the host, and one that sends a malformed message:
// both reported, the host still answering.
func TestBrowserFloodAndMalformed(t *testing.T) {
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	app, err := os.ReadFile("testdata/app.html")
	if err != nil {
		t.Fatal(err)
	}
	b := newFakeBackend(string(app))
	rec := newRecorder()
	h := newTestHost(t, rec.options(b))
	v := openShow(t, h, `{}`)
	id := v.Info().ID
	v.SetResult(json.RawMessage(`{"content":[{"type":"text","text":"ready"}]}`))
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	waitViewText(t, bctx, id, css("#result"), func(s string) bool { return s == "ready" })
	clickInView(t, bctx, id, css("#bad"))
	rec.waitFor(t, "the malformed message reported", func(r *recorder) bool { return r.hasProblem(ErrMalformed, "") })
	clickInView(t, bctx, id, css("#flood"))
	rec.waitFor(t, "the flood reported", func(r *recorder) bool { return r.hasProblem(ErrFlood, "") })
	rec.mu.Lock()
	logs := len(rec.logs)
	rec.mu.Unlock()
	if logs > 1000 {
		t.Errorf("%d of the 5000 flooding messages were handed on", logs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := v.Close(ctx, "test over"); err != nil {
		t.Fatalf("Close after the flood: %v", err)
	}
}
