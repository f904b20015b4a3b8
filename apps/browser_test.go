package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpx-dev/mcpx/internal/browsertest"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// These tests open views in a real browser, Debian's chromium, headless
// (./scripts/test installs it), with the helpers of internal/browsertest.
// Without it they are skipped, or fail under MCPX_REQUIRE_INTEROP=1.

// browser is the one headless chromium of this package's tests: each
// test gets a tab of it in a browser context of its own.
var browser browsertest.Shared

func TestMain(m *testing.M) {
	// The tests wait for the browser and for their hosts' timeouts.
	testwait.RaiseParallel(4)
	code := m.Run()
	browser.Close()
	os.Exit(code)
}

// newBrowser gives the test a tab of the shared headless chromium, for
// the test's lifetime (90s at most).
func newBrowser(t *testing.T) context.Context { return browser.Tab(t, 90*time.Second) }

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	browsertest.Eventually(t, what, f)
}

func css(sel string) string     { return browsertest.CSS(sel) }
func button(text string) string { return browsertest.Button(text) }

func waitViewText(t *testing.T, ctx context.Context, viewID, elem string, ok func(string) bool) string {
	t.Helper()
	return browsertest.WaitViewText(t, ctx, viewID, elem, ok)
}

func clickInView(t *testing.T, ctx context.Context, viewID, elem string) {
	t.Helper()
	browsertest.ClickInView(t, ctx, viewID, elem)
}

func screenshot(t *testing.T, ctx context.Context) image.Image {
	t.Helper()
	return browsertest.Screenshot(t, ctx)
}

func countColor(img image.Image, r, g, b uint8) int { return browsertest.CountColor(img, r, g, b) }
func distinctColors(img image.Image) int            { return browsertest.DistinctColors(img) }

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
	t.Cleanup(func() { // what went over the wire, should a step fail
		if t.Failed() {
			rec.mu.Lock()
			for _, w := range rec.wire {
				t.Logf("%s %.200s", w.Direction, w.Raw)
			}
			for _, p := range rec.problems {
				t.Logf("problem: %v", p)
			}
			rec.mu.Unlock()
		}
	})
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
	// Without a Handlers.DownloadFile the host does not declare
	// downloadFile (the view does not offer to download).
	clickInView(t, bctx, id, css("#save"))
	waitViewText(t, bctx, id, css("#download"), func(s string) bool { return s == "not offered" })
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
	// The browser's side drops the notifications over mcpx's rate and
	// tells how many.
	rec.waitFor(t, "the flood reported", func(r *recorder) bool {
		return r.hasProblem(ErrFlood, "the host page dropped") && r.hasProblem(ErrFlood, "(too many messages)")
	})
	rec.mu.Lock()
	logs := len(rec.logs)
	rec.mu.Unlock()
	if logs > 1000 {
		t.Errorf("%d of the 5000 flooding messages were handed on", logs)
	}
	// The teardown's answer is neither dropped with the flood nor held up
	// behind it: from the sandbox's own process (127.0.0.2, another site)
	// the flood reaches the page for a while after it was reported, and
	// the answer was dropped with it (Close failed two times in three
	// before a full queue kept room for answers: host.js, ANSWER_RESERVE)
	// or, on a busy machine, came too late behind the flood (the view's
	// sandbox now drops the notifications over mcpx's rate before they
	// cross to the page's process, sandbox.js: a teardown after the
	// flood took 0.7-1.2 s idle, 2.6-2.9 s on a loaded machine, and
	// takes 20-280 ms).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := v.Close(ctx, "test over"); err != nil {
		t.Fatalf("Close after the flood: %v", err)
	}
}

// A view whose frame is reloaded in the page (Chrome's "Reload frame")
// is shown again: a new document, given the HTML, the handshake, the
// tool's input and result again.
func TestBrowserFrameReloaded(t *testing.T) {
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	app, err := os.ReadFile("testdata/app.html")
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	h := newTestHost(t, rec.options(newFakeBackend(string(app))))
	v := openShow(t, h, `{"city":"Oslo"}`)
	id := v.Info().ID
	v.SetResult(json.RawMessage(`{"content":[{"type":"text","text":"Snow in Oslo"}]}`))
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	waitViewText(t, bctx, id, css("#result"), func(s string) bool { return s == "Snow in Oslo" })
	// Mark the document, so that only a new one can show the result.
	if _, err := browsertest.InView[bool](bctx, id, css("#result")+`.textContent = "old document"; true`); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => { const f = document.getElementById(`+strconv.Quote(id)+`).querySelector("iframe"); f.src = f.src; return true; })()`)); err != nil {
		t.Fatal(err)
	}
	waitViewText(t, bctx, id, css("#result"), func(s string) bool { return s == "Snow in Oslo" })
	waitViewText(t, bctx, id, css("#input"), func(s string) bool { return s == `{"city":"Oslo"}` })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.problems) > 0 || v.Err() != nil {
		t.Errorf("a reloaded frame is not a problem: %v %v", rec.problems, v.Err())
	}
}

// Large messages a view sends close together each reach the host: the
// page posts them in batches that fit the host's bound on a post
// (MaxMessageSize and room for the rest), counted in bytes of UTF-8, not
// as many as are queued. A batch over the bound is refused whole, and
// every message in it, the view's own and other views', is lost.
func TestBrowserLargeMessagesBatched(t *testing.T) {
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	app, err := os.ReadFile("testdata/app.html")
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	o := rec.options(newFakeBackend(string(app)))
	// 1.5 MiB, posts of at most 2.5 MiB: two messages of 1.4 MiB cannot
	// share one (smaller than the default 4 MiB, which took over ten
	// seconds under the race detector).
	o.MaxMessageSize = 3 << 19
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	id := v.Info().ID
	v.SetResult(json.RawMessage(`{"content":[{"type":"text","text":"ready"}]}`))
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	waitViewText(t, bctx, id, css("#result"), func(s string) bool { return s == "ready" })
	// 1.4 MiB each, under MaxMessageSize; the second and third wait while
	// the first is posted. The é of the last makes it 1.4 MiB in UTF-16
	// code units and 2.8 MiB in UTF-8: more than MaxMessageSize, dropped
	// by the page and reported.
	if _, err := browsertest.InView[bool](bctx, id, `(() => {
		const log = (data) => window.parent.postMessage({jsonrpc: "2.0", method: "notifications/message", params: {level: "info", data}}, "*");
		const big = "x".repeat(1400 << 10);
		log("first"); log(big); log(big); log("é".repeat(1400 << 10)); log("last");
		return true;
	})()`); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "the last log", func(r *recorder) bool {
		return len(r.logs) > 0 && strings.Contains(r.logs[len(r.logs)-1], `"last"`)
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.logs) != 4 {
		t.Errorf("the host got %d logs, want 4 (first, two of 1.4 MiB, last)", len(rec.logs))
	}
	if !rec.hasProblem(ErrFlood, "too large") {
		t.Errorf("the 2.8 MiB message was not reported as dropped: %v", rec.problems)
	}
}

// A view sees none of the cookies of a local service on 127.0.0.1 (a
// developer's web app), and its requests to it carry none of them: its
// sandbox is on 127.0.0.2, another host for cookies and another site
// (listenSandbox). On 127.0.0.1, as the host page, the view read them
// with document.cookie and, through a connectDomains it declared, sent
// SameSite ones along with its requests.
func TestBrowserViewSeesNoLocalCookies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("127.0.0.2 is certain to be there on Linux only")
	}
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	probed := make(chan string, 1)
	dev := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			w.Header().Add("Set-Cookie", "lax=secret-lax; Path=/; SameSite=Lax")
			w.Header().Add("Set-Cookie", "strict=secret-strict; Path=/; SameSite=Strict")
		case "/probe":
			select {
			case probed <- r.Header.Get("Cookie"):
			default:
			}
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(dev.Close)
	// The browser keeps the service's cookies for host 127.0.0.1.
	if err := chromedp.Do(bctx, chromedp.Navigate(dev.URL+"/login")); err != nil {
		t.Fatal(err)
	}
	if c, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.cookie`)); err != nil || !strings.Contains(c, "secret-lax") {
		t.Fatalf("the service's page has cookies %q (%v)", c, err)
	}
	b := newFakeBackend(`<!DOCTYPE html><html><body><p id="cookie"></p><p id="fetch"></p><script>
document.getElementById("cookie").textContent = "cookies: " + document.cookie;
fetch(` + strconv.Quote(dev.URL+"/probe") + `, {mode: "no-cors", credentials: "include"}).then(() => "done", (e) => "failed: " + e)
  .then((s) => { document.getElementById("fetch").textContent = s; });
</script></body></html>`)
	b.meta = `{"ui":{"csp":{"connectDomains":["` + dev.URL + `"]}}}`
	h := newTestHost(t, newRecorder().options(b))
	v := openShow(t, h, `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	if c := waitViewText(t, bctx, id, css("#cookie"), func(s string) bool { return strings.HasPrefix(s, "cookies: ") }); c != "cookies: " {
		t.Errorf("the view (sandbox %s) read the local service's cookies: %q", h.sandboxOrig, c)
	}
	if f := waitViewText(t, bctx, id, css("#fetch"), func(s string) bool { return s != "" }); f != "done" {
		t.Fatalf("the view's request to the local service: %s", f)
	}
	select {
	case c := <-probed:
		if c != "" {
			t.Errorf("the view's request to the local service carried its cookies: %q", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the view's request did not reach the local service")
	}
}

// sizeApp reports the containerDimensions the host gave it (at
// ui/initialize and in host-context-changed) beside the size of its own
// viewport, the frame it is shown in; a button asks for full screen.
const sizeApp = `<!DOCTYPE html><html><head><style>html,body{margin:0}</style></head><body>
<p id="inline">?</p><p id="full">?</p><button id="go">full</button>
<script>
let cd = null;
const report = (id) => { document.getElementById(id).textContent =
  JSON.stringify(cd) + " in " + window.innerWidth + "x" + window.innerHeight; };
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m.id === 1 && m.result) {
    cd = m.result.hostContext.containerDimensions;
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
    setTimeout(() => report("inline"), 300);
  } else if (m.method === "ui/notifications/host-context-changed" && m.params.containerDimensions) {
    cd = m.params.containerDimensions;
    setTimeout(() => report("full"), 300);
  }
});
document.getElementById("go").onclick = () => window.parent.postMessage({ jsonrpc: "2.0", id: 2, method: "ui/request-display-mode", params: { mode: "fullscreen" } }, "*");
window.parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26",
  appInfo: { name: "size", version: "1" }, appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] } } }, "*");
</script></body></html>`

// The containerDimensions a view is told are the frame it is shown in
// (spec "Container Dimensions": a fixed width or height "controls the
// actual space the View occupies"; the view fills it): inline, its width,
// and full screen, its width and height.
func TestBrowserContainerDimensionsAreTheFrame(t *testing.T) {
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	b := newFakeBackend(sizeApp)
	b.meta = `{"ui":{"prefersBorder":true}}`
	h := newTestHost(t, newRecorder().options(b))
	v := openShow(t, h, `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	var cd struct{ Width, Height, MaxHeight *float64 }
	var w, ht int
	parse := func(s string) bool {
		i := strings.LastIndex(s, " in ")
		cd = struct{ Width, Height, MaxHeight *float64 }{}
		return i > 0 && json.Unmarshal([]byte(s[:i]), &cd) == nil && cd.Width != nil &&
			func() bool { _, err := fmt.Sscanf(s[i+4:], "%dx%d", &w, &ht); return err == nil }()
	}
	s := waitViewText(t, bctx, id, css("#inline"), parse)
	if int(*cd.Width) != w {
		t.Errorf("inline: told %s, the frame is %d wide", s, w)
	}
	clickInView(t, bctx, id, css("#go"))
	s = waitViewText(t, bctx, id, css("#full"), parse)
	if cd.Height == nil || int(*cd.Width) != w || int(*cd.Height) != ht {
		t.Errorf("full screen: told %s, the frame is %dx%d", s, w, ht)
	}
}

// downloadApp asks the host to download what its buttons say
// (ui/download-file, as the ext-apps SDK's App.downloadFile sends it),
// once the host declared downloadFile, and shows the answers.
const downloadApp = `<!DOCTYPE html><html><body>
<p id="caps">?</p><p id="out"></p>
<button id="text">text</button><button id="blob">blob</button><button id="evil">evil</button><button id="deny">deny</button>
<script>
let n = 10;
const out = document.getElementById("out");
const waiting = new Map();
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m.id === 1 && m.result) {
    document.getElementById("caps").textContent = "downloadFile" in m.result.hostCapabilities ? "can download" : "cannot";
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
  } else if (waiting.has(m.id)) {
    out.textContent += waiting.get(m.id) + ": " + (m.error ? "error " + m.error.message : "ok") + ";";
    waiting.delete(m.id);
  }
});
function download(what, resource) {
  const id = n++;
  waiting.set(id, what);
  window.parent.postMessage({ jsonrpc: "2.0", id, method: "ui/download-file", params: { contents: [{ type: "resource", resource }] } }, "*");
}
const bytes = new Uint8Array(256);
for (let i = 0; i < 256; i++) bytes[i] = i;
document.getElementById("text").onclick = () => download("text", { uri: "file:///export.json", mimeType: "application/json", text: "{\"città\": \"Zürich\"}\n" });
document.getElementById("blob").onclick = () => download("blob", { uri: "file:///bytes.bin", mimeType: "application/octet-stream", blob: btoa(String.fromCharCode(...bytes)) });
document.getElementById("evil").onclick = () => download("evil", { uri: "file:///..%2F..%2F.bashrc", text: "evil" });
document.getElementById("deny").onclick = () => download("deny", { uri: "file:///deny.txt", text: "no" });
window.parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26",
  appInfo: { name: "download", version: "1" }, appCapabilities: {} } }, "*");
</script></body></html>`

// A view's ui/download-file through the browser: the host declares
// downloadFile, the files reach the program exactly (text as UTF-8, a
// blob decoded), are saved under their sanitised names, never over one
// another, and a refusal reaches the view as the draft's error.
func TestBrowserDownloadFile(t *testing.T) {
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	dir := t.TempDir()
	rec := newRecorder()
	o := rec.options(newFakeBackend(downloadApp))
	o.Handlers.DownloadFile = func(ctx context.Context, v ViewInfo, files []Download) error {
		for _, f := range files {
			if f.Name == "deny.txt" {
				return ErrDenied
			}
			if _, err := SaveDownload(dir, f); err != nil {
				return err
			}
		}
		return nil
	}
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	waitViewText(t, bctx, id, css("#caps"), func(s string) bool { return s == "can download" })
	want := ""
	for _, b := range []string{"text", "blob", "text", "evil", "deny"} {
		clickInView(t, bctx, id, css("#"+b))
		if b == "deny" {
			want += "deny: error Download denied by user;"
		} else {
			want += b + ": ok;"
		}
		waitViewText(t, bctx, id, css("#out"), func(s string) bool { return s == want })
	}
	bytes := make([]byte, 256)
	for i := range bytes {
		bytes[i] = byte(i)
	}
	for name, content := range map[string]string{
		"export.json":     "{\"città\": \"Zürich\"}\n",
		"export (1).json": "{\"città\": \"Zürich\"}\n",
		"bytes.bin":       string(bytes),
		"_.._.bashrc":     "evil",
	} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != content {
			t.Errorf("%s: %q, %v; want %q", name, got, err, content)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("%d files saved, want 4", len(entries))
	}
}

// samplingApp asks the host for an LLM completion (sampling/createMessage,
// as the ext-apps SDK's App.createSamplingMessage sends it), once the
// host declared sampling, and shows the answers.
const samplingApp = `<!DOCTYPE html><html><body>
<p id="caps">?</p><p id="out"></p><button id="ask">ask</button>
<script>
let n = 10;
const out = document.getElementById("out");
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m.id === 1 && m.result) {
    const s = m.result.hostCapabilities.sampling;
    document.getElementById("caps").textContent = s ? (s.tools ? "sampling with tools" : "sampling") : "none";
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
  } else if (m.method === "ui/resource-teardown") {
    window.parent.postMessage({ jsonrpc: "2.0", id: m.id, result: {} }, "*");
  } else if (m.id >= 10) {
    out.textContent += (m.error ? "error " + m.error.code + " " + m.error.message : m.result.content.text) + ";";
  }
});
document.getElementById("ask").onclick = () => window.parent.postMessage({ jsonrpc: "2.0", id: n++, method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: { type: "text", text: "Say hi" } }], maxTokens: 20 } }, "*");
window.parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26",
  appInfo: { name: "sampling", version: "1" }, appCapabilities: {} } }, "*");
</script></body></html>`

// A view's sampling/createMessage through the browser: the host declares
// sampling with tools, the program gets the view's request and the view
// its answer, or the program's refusal as its error.
func TestBrowserSampling(t *testing.T) {
	t.Parallel() // a tab of its own
	bctx := newBrowser(t)
	rec := newRecorder()
	o := rec.options(newFakeBackend(samplingApp))
	asked := 0
	o.Handlers.Sample = func(ctx context.Context, v ViewInfo, params json.RawMessage) (json.RawMessage, error) {
		asked++ // one at a time per view
		if !strings.Contains(string(params), `"text":"Say hi"`) {
			return nil, fmt.Errorf("unexpected params %s", params)
		}
		if asked == 2 {
			return nil, &Error{Code: -1, Message: "User rejected sampling request"}
		}
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Hi there"},"model":"mcpx-human"}`), nil
	}
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	id := v.Info().ID
	if err := chromedp.Do(bctx, chromedp.Navigate(v.URL())); err != nil {
		t.Fatal(err)
	}
	waitViewText(t, bctx, id, css("#caps"), func(s string) bool { return s == "sampling with tools" })
	clickInView(t, bctx, id, css("#ask"))
	waitViewText(t, bctx, id, css("#out"), func(s string) bool { return s == "Hi there;" })
	clickInView(t, bctx, id, css("#ask"))
	waitViewText(t, bctx, id, css("#out"), func(s string) bool { return s == "Hi there;error -1 User rejected sampling request;" })
	closeView(t, v)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.noProblems(t)
}
