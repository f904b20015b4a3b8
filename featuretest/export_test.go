package featuretest

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpx-dev/mcpx/internal/browsertest"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

// These tests open `mcpx trace export --html` pages from file:// in a real
// browser, Debian's chromium, headless (./scripts/test installs it).
// Without it they are skipped, or fail under MCPX_REQUIRE_INTEROP=1.

// browser is the one headless chromium of this package's tests (the
// HTML export pages and the MCP Apps views), stopped by TestMain.
var browser browsertest.Shared

// openPage opens the page at path from file:// in a tab of the shared
// headless chromium for the test's lifetime (bounded), waiting until its
// script has rendered it.
func openPage(t *testing.T, path string) context.Context {
	t.Helper()
	bctx := browser.Tab(t, 90*time.Second)
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "file", Path: abs}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(u.String())); err != nil {
		t.Fatalf("opening %s in chromium: %v", u.String(), err)
	}
	wctx, wcancel := context.WithTimeout(bctx, 20*time.Second)
	defer wcancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #count`))); err != nil {
		t.Fatalf("the page did not render within 20s: %v", err)
	}
	return bctx
}

// eval evaluates a script expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// visible lists the page's shown rows as "kind method" strings.
const visible = `[...document.querySelectorAll(".item")].filter((e) => !e.hidden && !e.closest("section").hidden).map((e) => e.dataset.kind + " " + e.dataset.method)`

// setSelect picks a value of a filter and tells the page.
func setSelect(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	eval[bool](t, ctx, `(() => { const s = document.getElementById(`+strconv.Quote(id)+`); s.value = `+strconv.Quote(value)+
		`; s.dispatchEvent(new Event("change")); return s.value === `+strconv.Quote(value)+` })()`)
}

// A trace of real server-everything sessions (HTTP and stdio, appended to
// one trace) exported as HTML renders in chromium: every session, every
// request paired with its response, the errors marked, the method filter
// and the search at work, each message expandable; the screenshot is not
// blank. The HAR export of the same trace has its HTTP exchanges.
func TestExportHTMLEverything(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "everything.jsonl")
	run(t, "", args("tools", "call", "echo", "message=hi", "--record", trace, srv)...).wantCode(t, 0)
	run(t, "", args("tools", "call", "nosuchtool", "--record", trace, srv)...).wantCode(t, 5)
	run(t, "", args("call", "nosuch/method", "--record", trace, everythingStdio(t))...).wantCode(t, 5)
	page, harFile := filepath.Join(dir, "everything.html"), filepath.Join(dir, "everything.har")
	run(t, "", "trace", "export", trace, "--html", page, "--har", harFile).wantCode(t, 0)

	// The HAR: the HTTP sessions' exchanges with their SSE events, the
	// stdio session's messages as stdio:// entries.
	var har struct {
		Log struct {
			Entries []struct {
				Request struct{ Method, URL string }
				SSE     []struct{ Data string } `json:"_sse"`
			}
		}
	}
	b, err := os.ReadFile(harFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &har); err != nil {
		t.Fatal(err)
	}
	var echoed, stdio bool
	for _, e := range har.Log.Entries {
		for _, ev := range e.SSE {
			echoed = echoed || strings.Contains(ev.Data, "Echo: hi")
		}
		stdio = stdio || e.Request.URL == "stdio://session-3/nosuch/method"
	}
	if !echoed || !stdio {
		t.Errorf("the HAR lacks the echo's SSE event (%v) or the stdio entry (%v)", echoed, stdio)
	}

	ctx := openPage(t, page)
	if n := eval[int](t, ctx, `document.querySelectorAll("section.session").length`); n != 3 {
		t.Errorf("%d sessions shown, want 3", n)
	}
	if n := eval[int](t, ctx, `performance.getEntriesByType("resource").length`); n != 0 {
		t.Errorf("the page fetched %d resources", n)
	}
	checkScreenshot(t, ctx)

	// Pairing: every request has its response, with the same method, in
	// the same session.
	pairs := eval[[]string](t, ctx, `[...document.querySelectorAll('.item[data-kind="request"]')].map((q) => {
		const r = q.dataset.pair && document.getElementById(q.dataset.pair);
		return q.dataset.method + (r ? " -> " + r.dataset.kind + " " + r.dataset.method + " " + (r.dataset.session === q.dataset.session) : " unanswered");
	})`)
	for _, m := range []string{"initialize", "tools/list", "tools/call", "nosuch/method"} {
		if !containsString(pairs, m+" -> response "+m+" true") {
			t.Errorf("no %s request paired with its response: %q", m, pairs)
		}
	}
	for _, p := range pairs {
		if !strings.Contains(p, "-> response") {
			t.Errorf("request not paired: %s", p)
		}
	}
	echo := eval[string](t, ctx, `(() => { const q = [...document.querySelectorAll('.item[data-kind="request"][data-method="tools/call"]')].find((e) => e.textContent.includes("echo"));
		return q ? document.getElementById(q.dataset.pair).querySelector(".sum").textContent : "" })()`)
	if !strings.Contains(echo, "Echo: hi") {
		t.Errorf("the echo's response row shows %q", echo)
	}

	// Errors: the JSON-RPC error and the tool's isError are marked.
	errs := eval[[]string](t, ctx, `[...document.querySelectorAll(".item.error")].map((e) => e.dataset.kind + " " + e.dataset.method + ": " + e.querySelector(".sum").textContent)`)
	if !containsPrefix(errs, "response nosuch/method: error -32601") || !containsPrefix(errs, "response tools/call: isError: true") {
		t.Errorf("error rows %q", errs)
	}

	// The method filter.
	all := eval[[]string](t, ctx, visible)
	setSelect(t, ctx, "f-method", "tools/list")
	shown := eval[[]string](t, ctx, visible)
	if len(shown) < 2 || len(shown) >= len(all) {
		t.Errorf("filtered by tools/list: %d of %d rows shown", len(shown), len(all))
	}
	for _, s := range shown {
		if !strings.HasSuffix(s, " tools/list") {
			t.Errorf("filtered by tools/list, shows %q", s)
		}
	}
	if c := eval[string](t, ctx, `document.getElementById("count").textContent`); c != strconv.Itoa(len(shown))+" of "+strconv.Itoa(len(all))+" events" {
		t.Errorf("count %q", c)
	}
	setSelect(t, ctx, "f-method", "")

	// The search, typed.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#f-search"), "Echo: hi")); err != nil {
		t.Fatal(err)
	}
	found := eval[[]string](t, ctx, visible)
	if !containsString(found, "response tools/call") || len(found) >= len(all)/2 {
		t.Errorf("searching for \"Echo: hi\" shows %q", found)
	}

	// A message expands as indented JSON.
	pretty := eval[string](t, ctx, `(() => { const e = [...document.querySelectorAll('.item[data-kind="response"]')].find((e) => !e.hidden && e.textContent.includes("Echo: hi"));
		e.querySelector(".row").click(); return e.querySelector(".detail pre").textContent })()`)
	if !strings.Contains(pretty, "\"text\": \"Echo: hi\"") || !strings.Contains(pretty, "\n  \"result\": {") {
		t.Errorf("the expanded response reads %q", pretty)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsPrefix(list []string, p string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

// checkScreenshot captures the page and checks that it shows something:
// many colours, and more than a sliver of it not background.
func checkScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("MCPX_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, t.Name()+".png"), b, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bg := img.At(img.Bounds().Max.X-1, img.Bounds().Max.Y-1)
	colours := map[[3]uint32]bool{}
	differ, total := 0, 0
	br, bgG, bb, _ := bg.RGBA()
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 12, g >> 12, b >> 12}] = true
			total++
			if absDiff(r, br)+absDiff(g, bgG)+absDiff(b, bb) > 3*0x1000 {
				differ++
			}
		}
	}
	if size := img.Bounds().Size(); size.X < 800 || size.Y < 600 {
		t.Errorf("screenshot is %v", size)
	}
	if len(colours) < 16 || differ*100 < total {
		t.Errorf("the screenshot looks blank: %d colours, %d of %d pixels differ from the background", len(colours), differ, total)
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// A trace whose frames, stderr and session description hold markup and
// script: the page shows the text and runs none of it.
func TestExportHTMLHostileFrame(t *testing.T) {
	t.Parallel()
	const attack = `</script><script>window.pwned=1;document.title="pwned"</script><img src=x onerror="window.pwned=2"><!--`
	dir := t.TempDir()
	trace := filepath.Join(dir, "hostile.jsonl")
	// The attack goes into the frames verbatim (encoding/json would
	// escape its < and >).
	quoted := []byte(`"` + strings.ReplaceAll(attack, `"`, `\"`) + `"`)
	rec, err := record.Create(context.Background(), trace, record.RecorderOptions{
		Header:      record.Header{Transport: "stdio", Target: "stdio: " + attack},
		SessionText: "stdio: " + attack,
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec.Frame(now, transport.Outgoing, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(quoted) + `}}`)})
	rec.Observe(transport.Event{Time: now, Kind: transport.EventStderr, Text: attack})
	rec.Frame(now, transport.Incoming, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(quoted) + `}]}}`)})
	rec.Frame(now, transport.Incoming, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":` + string(quoted) + `}`)})
	rec.Frame(now, transport.Incoming, transport.Frame{Data: []byte(attack)})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "hostile.html")
	run(t, "", "trace", "export", trace, "--html", page).wantCode(t, 0)

	ctx := openPage(t, page)
	if got := eval[string](t, ctx, `typeof window.pwned`); got != "undefined" {
		t.Errorf("window.pwned is %s: the trace's script ran", got)
	}
	if got := eval[string](t, ctx, `document.title`); got != "hostile.jsonl" {
		t.Errorf("document.title = %q", got)
	}
	if n := eval[int](t, ctx, `document.scripts.length`); n != 2 {
		t.Errorf("the page has %d scripts, want its own 2", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("img, iframe, object, embed").length`); n != 0 {
		t.Errorf("the page has %d elements from the trace's markup", n)
	}
	// The text is shown as text: in the rows, the session's heading and
	// the expanded message.
	texts := eval[[]string](t, ctx, `[...document.querySelectorAll(".sum, .method, h2")].map((e) => e.textContent)`)
	shown := 0
	for _, s := range texts {
		if strings.Contains(s, attack) {
			shown++
		}
	}
	if shown < 5 {
		t.Errorf("the attack's text is shown in %d places, want at least 5 (heading, tool name, stderr, method, not-JSON line): %q", shown, texts)
	}
	pre := eval[string](t, ctx, `(() => { const e = document.querySelector('.item[data-kind="response"]'); e.querySelector(".row").click(); return e.querySelector(".detail pre").textContent })()`)
	if !strings.Contains(pre, `"text": "</script><script>window.pwned=1;document.title=\"pwned\"</script><img`) {
		t.Errorf("the expanded response reads %q", pre)
	}
	if got := eval[string](t, ctx, `typeof window.pwned + " " + document.title`); got != "undefined hostile.jsonl" {
		t.Errorf("after expanding: %s", got)
	}
	checkScreenshot(t, ctx)
}
