// Package browsertest drives Debian's chromium, headless, through
// chromedp for the tests that show MCP Apps views (package apps, and
// featuretest through the mcpx binary): it finds a view's document in the
// host page's frames, reads and clicks in it as a person would, and
// judges screenshots. Without chromium the tests are skipped, or fail
// under MCPX_REQUIRE_INTEROP=1 (./scripts/test installs it).
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// Chromium finds the browser.
func Chromium(t testing.TB) string {
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

// allocatorOptions are the flags of every headless chromium of the tests.
func allocatorOptions(exe string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
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
		// The views' sandbox frames (127.0.0.2, beside the page on
		// 127.0.0.1) in the page's process, so in its frame tree: a frame
		// of another process is a target to attach to (viewWorld), and
		// chromedp's attach walks the target's document in the caller's
		// goroutine while its event loop reads the same node map, a data
		// race -race reports when the view's DOM changes meanwhile. The
		// process model changes no origin's rules (the sandbox is still
		// another origin, its CSP still set).
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process"),
		chromedp.WindowSize(1200, 1000),
	}
}

// Shared is one headless chromium for a test binary: started by the first
// test that asks for a tab (Tab) and stopped by Close, which the
// package's TestMain calls after m.Run. Each Tab is in a browser context
// of its own (cookies, storage and cache apart).
type Shared struct {
	once   sync.Once
	ctx    context.Context // the browser's first tab
	cancel context.CancelFunc
	err    error
}

// Tab opens a tab of the shared browser in a browser context of its own,
// for the test's lifetime (limit at most). NewTab opens more tabs in the
// same browser context.
func (s *Shared) Tab(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	exe := Chromium(t)
	s.once.Do(func() { s.start(exe) })
	if s.err != nil {
		t.Fatalf("starting chromium: %v", s.err)
	}
	tctx, tcancel := chromedp.NewContext(s.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(tcancel)
	ctx, cancel := context.WithTimeout(tctx, limit)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 1000)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// start starts the browser, its start bounded to a minute.
func (s *Shared) start(exe string) {
	actx, acancel := chromedp.NewExecAllocator(context.Background(), allocatorOptions(exe)...)
	bctx, bcancel := chromedp.NewContext(actx)
	s.ctx = bctx
	s.cancel = func() { bcancel(); acancel() }
	// The first Do starts the browser, which then lives as long as bctx:
	// its start is bounded here, not through a deadline on bctx.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case s.err = <-started:
	case <-time.After(time.Minute):
		s.err = errors.New("no browser after a minute")
	}
	if s.err != nil {
		s.cancel()
	}
}

// Close stops the browser if a test started it.
func (s *Shared) Close() {
	if s.cancel != nil {
		s.cancel()
	}
}

// NewTab opens another tab beside bctx (from Shared.Tab), closed when t
// ends.
func NewTab(t testing.TB, bctx context.Context) context.Context {
	t.Helper()
	tctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(1200, 1000)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return tctx
}

// Eventually retries f every 50ms until it succeeds, for 20s.
func Eventually(t testing.TB, what string, f func() error) {
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
		if now := (errRetryNow{}); errors.As(err, &now) {
			continue
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// viewWorld is an isolated script world in the view's own document: the
// inner frame of the view's sandbox frame (found by the view's sandbox
// URL). It sees the view's DOM, not its scripts. The sandbox frame is in
// the page's frame tree when it is of the page's site; of another site
// (the sandbox on 127.0.0.2, the page on 127.0.0.1) chromium runs it in a
// process of its own, as a target of type "iframe" that the page's frame
// tree does not show: then the world is in that target, and the context
// returned is attached to it (kept for the tab's other looks: attached).
func viewWorld(ctx context.Context, viewID string) (wctx context.Context, id runtime.ExecutionContextID, done func(), err error) {
	suffix := "/view/" + viewID
	var find func(n *page.FrameTree, top bool) *page.FrameTree
	find = func(n *page.FrameTree, top bool) *page.FrameTree {
		if strings.HasSuffix(n.Frame.URL, suffix) && len(n.ChildFrames) > 0 && (n.Frame.ParentID != "" || top) {
			if p := n.ChildFrames[0]; p != nil {
				return p
			}
		}
		for _, c := range n.ChildFrames {
			if f := find(c, false); f != nil {
				return f
			}
		}
		return nil
	}
	wctx, done = ctx, func() {}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, 0, nil, err
	}
	inner := find(tree.FrameTree, false)
	if inner == nil {
		// Another site's sandbox frame: a target of its own, whose parent
		// is a frame of this tab (the same page may be open in others).
		ours := map[cdp.FrameID]bool{}
		var walk func(n *page.FrameTree)
		walk = func(n *page.FrameTree) {
			ours[n.Frame.ID] = true
			for _, c := range n.ChildFrames {
				walk(c)
			}
		}
		walk(tree.FrameTree)
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			return nil, 0, nil, err
		}
		for _, info := range infos {
			if info.Type != "iframe" || !ours[info.ParentFrameID] || !strings.HasSuffix(info.URL, suffix) {
				continue
			}
			fctx := attachedTo(ctx, info.TargetID)
			tree, err := chromedp.Call(fctx, page.GetFrameTree, cdp.Empty{})
			if err != nil {
				forgetAttached(ctx, info.TargetID)
				return nil, 0, nil, err
			}
			if inner = find(tree.FrameTree, true); inner == nil {
				break
			}
			wctx = fctx
			break
		}
	}
	if inner == nil {
		return nil, 0, nil, fmt.Errorf("the view's frame is not there yet")
	}
	w, err := chromedp.Call(wctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: inner.Frame.ID, WorldName: "mcpx-test"})
	if err != nil {
		done()
		return nil, 0, nil, err
	}
	return wctx, w.ExecutionContextID, done, nil
}

// attached keeps the contexts attached to the sandbox frames that run
// as targets of their own (viewWorld), one per tab and target, for as
// long as the tab is open. Attaching anew for each evaluation (a
// WaitViewText looks many times) gave chromedp a data race each time:
// its new target's document walk (documentUpdated, in the caller's
// goroutine) writes the node map that its event loop reads when the
// view's DOM changes meanwhile, which -race reported under load.
var attached = struct {
	sync.Mutex
	m map[attachKey]attachedCtx
}{m: map[attachKey]attachedCtx{}}

type attachKey struct {
	tab    *chromedp.Context
	target target.ID
}

type attachedCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// attachedTo returns the context attached to the target id beside the
// tab of ctx, attaching it the first time (and again once it ended).
func attachedTo(ctx context.Context, id target.ID) context.Context {
	key := attachKey{chromedp.FromContext(ctx), id}
	attached.Lock()
	defer attached.Unlock()
	if a, ok := attached.m[key]; ok && a.ctx.Err() == nil {
		return a.ctx
	}
	c, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	attached.m[key] = attachedCtx{ctx: c, cancel: cancel}
	return c
}

// forgetAttached detaches from the target id beside the tab of ctx (it
// failed: gone, or detached), so that the next look attaches anew.
func forgetAttached(ctx context.Context, id target.ID) {
	key := attachKey{chromedp.FromContext(ctx), id}
	attached.Lock()
	defer attached.Unlock()
	if a, ok := attached.m[key]; ok {
		a.cancel()
		delete(attached.m, key)
	}
}

// InView evaluates expr in the view's document, with the evaluate options
// opts (chromedp.EvalAwaitPromise for a promise).
func InView[T any](ctx context.Context, viewID, expr string, opts ...chromedp.EvaluateOption) (T, error) {
	var zero T
	wctx, w, done, err := viewWorld(ctx, viewID)
	if err != nil {
		return zero, err
	}
	defer done()
	opts = append(opts, func(p *runtime.EvaluateParams) { p.ContextID = w })
	return chromedp.Run(wctx, chromedp.Evaluate[T](expr, opts...))
}

// CSS is the view's element matching a CSS selector, as a script
// expression.
func CSS(sel string) string { return `document.querySelector(` + strconv.Quote(sel) + `)` }

// Button is the view's button labelled text.
func Button(text string) string {
	return `[...document.querySelectorAll("button")].find((b) => b.textContent.trim() === ` + strconv.Quote(text) + `)`
}

// WaitViewText waits until the text of the view's element (a script
// expression: CSS, Button) satisfies ok, and returns it. It waits on the
// view's own changes (a MutationObserver in the view's document, re-armed
// at most every second) rather than polling on a timer.
func WaitViewText(t testing.TB, ctx context.Context, viewID, elem string, ok func(string) bool) string {
	t.Helper()
	var got string
	last := "null" // no text seen yet: the first look answers at once
	Eventually(t, "the view's "+elem, func() error {
		s, err := InView[string](ctx, viewID, `new Promise((resolve) => {
			const text = () => ((`+elem+`) || {}).textContent || "";
			const last = `+last+`;
			if (text() !== last) { resolve(text()); return; }
			const o = new MutationObserver(() => { if (text() !== last) { o.disconnect(); resolve(text()); } });
			o.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
			setTimeout(() => { o.disconnect(); resolve(text()); }, 1000);
		})`, chromedp.EvalAwaitPromise)
		if err != nil {
			return err
		}
		got = s
		if q, err := json.Marshal(s); err == nil {
			last = string(q)
		}
		if !ok(s) {
			return errRetryNow{fmt.Errorf("text %q", s)}
		}
		return nil
	})
	return got
}

// errRetryNow is an error after which Eventually tries again at once: the
// attempt itself waited (on an event, bounded).
type errRetryNow struct{ error }

// ClickInView clicks the view's element (a script expression) with the
// mouse, as a person does: at its centre in the page, through both
// frames. The click waits until both frames show the element there, and
// the page has settled: the view's frame (of another site: a process of
// its own) learns of a resize, and its scrollIntoView scrolls the page,
// a moment later, and on a busy machine a click at the place computed
// before landed elsewhere.
func ClickInView(t testing.TB, ctx context.Context, viewID, elem string) {
	t.Helper()
	Eventually(t, "clicking "+elem, func() error {
		in, err := InView[[]float64](ctx, viewID, `(() => {
			const e = `+elem+`;
			e.scrollIntoView({block: "center"});
			const r = e.getBoundingClientRect(), f = window.frameElement.getBoundingClientRect();
			const x = r.left + r.width / 2, y = r.top + r.height / 2;
			const at = document.elementFromPoint(x, y);
			return [f.left + x, f.top + y, window.innerWidth, window.innerHeight, at !== null && (at === e || e.contains(at)) ? 1 : 0];
		})()`)
		if err != nil {
			return err
		}
		if len(in) != 5 || in[4] != 1 {
			return fmt.Errorf("%s is not what the view shows at its centre (%v)", elem, in)
		}
		// Where the point is in the page, after two frames of the page's
		// (a scroll the view started has been applied; at most 500 ms):
		// the same as before them, on the view's frame, of the view's size.
		at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(async () => {
			const f = document.getElementById(`+strconv.Quote(viewID)+`).querySelector("iframe");
			const pos = () => {
				const r = f.getBoundingClientRect();
				const x = r.left + f.clientLeft + `+fmt.Sprint(in[0])+`, y = r.top + f.clientTop + `+fmt.Sprint(in[1])+`;
				return [x, y, f.clientWidth, f.clientHeight, document.elementFromPoint(x, y) === f ? 1 : 0];
			};
			const before = pos();
			await new Promise((resolve) => {
				requestAnimationFrame(() => requestAnimationFrame(resolve));
				setTimeout(resolve, 500); // a page not drawing (hidden) draws no frame
			});
			const after = pos();
			return before.every((v, i) => v === after[i]) ? after : [];
		})()`, chromedp.EvalAwaitPromise))
		if err != nil {
			return err
		}
		switch {
		case len(at) != 5:
			return errors.New("the page is still moving the view's frame")
		case at[2] != in[2] || at[3] != in[3]:
			return fmt.Errorf("the view's window is %vx%v, its frame %vx%v: not resized yet", in[2], in[3], at[2], at[3])
		case at[4] != 1:
			return fmt.Errorf("the page does not show the view's frame at %v,%v", at[0], at[1])
		}
		return chromedp.Do(ctx, chromedp.MouseClickXY(at[0], at[1]))
	})
}

// Screenshot captures the tab and decodes it (and writes it to
// $MCPX_SCREENSHOTS/<test>.png when that is set).
func Screenshot(t testing.TB, ctx context.Context) image.Image {
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

// CountColor counts the pixels of img close to the colour r, g, b.
func CountColor(img image.Image, r, g, b uint8) int {
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

// DistinctColors counts the colours of img (capped): a blank page has
// one or two.
func DistinctColors(img image.Image) int {
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
