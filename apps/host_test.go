package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHandshakeInputThenResult(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	o.Theme = "dark"
	o.TimeZone = "Europe/Paris"
	h := newTestHost(t, o)
	v := openShow(t, h, `{"city":"Paris"}`)
	// The result is known before the view is shown: it must still come
	// after the handshake and the tool input.
	v.SetResult(json.RawMessage(`{"content":[{"type":"text","text":"sunny"}]}`))

	p := connectPage(t, h)
	var ve viewEvent
	if err := json.Unmarshal(p.next("view").data, &ve); err != nil {
		t.Fatal(err)
	}
	if ve.ID != v.Info().ID || ve.Tool != "show" || !strings.HasPrefix(ve.Sandbox, h.sandboxOrig+"/") {
		t.Fatalf("view event %+v", ve)
	}
	p.postBody(`{"env":{"timeZone":"America/New_York","locale":"fr-FR","dark":false,"inline":{"width":640,"maxHeight":500},"fullscreen":{"width":1000,"height":700}},"messages":[]}`)

	p.post(v.Info().ID, `{"jsonrpc":"2.0","method":"ui/notifications/sandbox-proxy-ready","params":{}}`)
	m := p.rpc()
	params := m["params"].(map[string]any)
	if m["method"] != "ui/notifications/sandbox-resource-ready" || params["html"] != minimalHTML {
		t.Fatalf("sandbox-resource-ready: %v", m)
	}
	p.post(v.Info().ID, `{"jsonrpc":"2.0","id":"init","method":"ui/initialize","params":{"protocolVersion":"2026-01-26","appInfo":{"name":"t","version":"1"},"appCapabilities":{}}}`)
	res := p.rpc()
	if res["id"] != "init" {
		t.Fatalf("answer %v", res)
	}
	r := res["result"].(map[string]any)
	if r["protocolVersion"] != ProtocolVersion {
		t.Errorf("protocolVersion %v", r["protocolVersion"])
	}
	if hi := r["hostInfo"].(map[string]any); hi["name"] != "mcpx-test" || hi["version"] != "0.1" {
		t.Errorf("hostInfo %v", hi)
	}
	caps := r["hostCapabilities"].(map[string]any)
	for _, k := range []string{"serverTools", "serverResources", "logging", "openLinks", "message", "updateModelContext", "sandbox"} {
		if caps[k] == nil {
			t.Errorf("hostCapabilities lacks %s: %v", k, caps)
		}
	}
	hc := r["hostContext"].(map[string]any)
	want := map[string]any{"theme": "dark", "displayMode": "inline", "locale": "fr-FR", "timeZone": "Europe/Paris", "platform": "web"}
	for k, w := range want {
		if hc[k] != w {
			t.Errorf("hostContext.%s = %v, want %v", k, hc[k], w)
		}
	}
	if d := hc["containerDimensions"].(map[string]any); d["width"] != float64(640) || d["maxHeight"] != float64(500) {
		t.Errorf("containerDimensions %v", d)
	}
	ti := hc["toolInfo"].(map[string]any)
	if ti["id"] != float64(7) || ti["tool"].(map[string]any)["name"] != "show" {
		t.Errorf("toolInfo %v", ti)
	}
	// Nothing is sent to the view before initialized: the answer to a
	// ping comes next.
	p.post(v.Info().ID, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := p.rpc(); m["id"] != "p" {
		t.Fatalf("sent before initialized: %v", m)
	}
	p.post(v.Info().ID, `{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}`)
	in := p.rpc()
	if in["method"] != "ui/notifications/tool-input" || in["params"].(map[string]any)["arguments"].(map[string]any)["city"] != "Paris" {
		t.Fatalf("tool-input: %v", in)
	}
	out := p.rpc()
	if out["method"] != "ui/notifications/tool-result" || out["params"].(map[string]any)["content"] == nil {
		t.Fatalf("tool-result: %v", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := v.Initialized(ctx); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "initialized state", func(r *recorder) bool {
		return len(r.states) >= 2 && r.states[0] == StateShown && r.states[1] == StateInitialized
	})
}

func TestToolCancelled(t *testing.T) {
	rec := newRecorder()
	h := newTestHost(t, rec.options(newFakeBackend(minimalHTML)))
	v := openShow(t, h, ``)
	p := connectPage(t, h)
	p.next("view")
	p.handshake(v.Info().ID)
	in := p.rpc()
	if in["method"] != "ui/notifications/tool-input" || len(in["params"].(map[string]any)["arguments"].(map[string]any)) != 0 {
		t.Fatalf("tool-input: %v", in)
	}
	v.Cancel("interrupted")
	v.SetResult(json.RawMessage(`{"content":[]}`)) // too late: the first outcome counts
	m := p.rpc()
	if m["method"] != "ui/notifications/tool-cancelled" || m["params"].(map[string]any)["reason"] != "interrupted" {
		t.Fatalf("tool-cancelled: %v", m)
	}
}

// A view's tools/call reaches the server only for tools whose visibility
// includes "app".
func TestToolsCallVisibility(t *testing.T) {
	rec := newRecorder()
	b := newFakeBackend(minimalHTML)
	h := newTestHost(t, rec.options(b))
	_, p, id := handshaken(t, h)

	p.post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refresh","arguments":{"n":1},"_meta":{"progressToken":"view-1","k":"v"}}}`)
	if m := p.rpc(); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("app tool: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"secret","arguments":{}}}`)
	m := p.rpc()
	if m["id"] != float64(3) || m["error"] == nil || m["error"].(map[string]any)["code"] != float64(CodeRefused) {
		t.Fatalf("model-only tool: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"elsewhere"}}`)
	if m := p.rpc(); m["error"] == nil {
		t.Fatalf("unknown tool: %v", m)
	}
	if calls := b.toolCalls(); len(calls) != 1 || calls[0] != `{"_meta":{"k":"v"},"arguments":{"n":1},"name":"refresh"}` {
		t.Errorf("the server got %q, want only the refresh call, without the view's progress token", calls)
	}
	rec.waitFor(t, "the refusals reported", func(r *recorder) bool {
		return r.hasProblem(ErrRefused, `"secret"`) && r.hasProblem(ErrRefused, `"elsewhere"`)
	})
}

// The server is asked for the tool the host checked: a member given
// twice reaches it once, as the host read it, and a member cased
// differently from name, arguments or _meta (which encoding/json would
// match and a JavaScript server would not) is refused, so that no
// reading of the params can call a tool the view may not call (spec
// "Visibility", "tools/call behavior").
func TestToolsCallParamsAsChecked(t *testing.T) {
	rec := newRecorder()
	b := newFakeBackend(minimalHTML)
	h := newTestHost(t, rec.options(b))
	_, p, id := handshaken(t, h)

	for i, params := range []string{
		`{"name":"secret","NAME":"refresh","arguments":{}}`,
		`{"name":"refresh","Arguments":{"a":1},"arguments":{}}`,
		`{"name":"refresh","_META":{"progressToken":1}}`,
	} {
		p.post(id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 10+i, params))
		m := p.rpc()
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(CodeInvalidParams) {
			t.Errorf("%s: answered %v, want invalid params", params, m)
		}
	}
	if calls := b.toolCalls(); len(calls) != 0 {
		t.Fatalf("ambiguous params reached the server: %q", calls)
	}
	p.post(id, `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"secret","name":"refresh","_meta":{"PROGRESSTOKEN":"t","progressToken":"u"}}}`)
	if m := p.rpc(); m["result"] == nil {
		t.Fatalf("duplicate name: %v", m)
	}
	if calls := b.toolCalls(); len(calls) != 1 || calls[0] != `{"name":"refresh"}` {
		t.Errorf("the server got %q, want the params as checked: {\"name\":\"refresh\"}", calls)
	}
	rec.waitFor(t, "the ambiguous params reported", func(r *recorder) bool {
		return r.hasProblem(ErrRefused, `"NAME"`)
	})

	// The name of a tool the server does not list is the view's text,
	// up to MaxMessageSize: the terminal is shown the start of it.
	p.post(id, `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"`+strings.Repeat("n", 1<<20)+`"}}`)
	p.rpc()
	rec.waitFor(t, "the unknown tool reported", func(r *recorder) bool { return r.hasProblem(ErrRefused, "does not list") })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, e := range rec.problems {
		if len(e.Error()) > 1000 {
			t.Errorf("a problem of %d bytes reported: %.100s…", len(e.Error()), e.Error())
		}
	}
}

func TestResourcesReadAndServerErrors(t *testing.T) {
	rec, _, p, id := startedView(t)
	p.post(id, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"ui://test/app"}}`)
	if m := p.rpc(); m["result"].(map[string]any)["contents"] == nil {
		t.Fatalf("resources/read: %v", m)
	}
	// The server's error reaches the view as the server sent it.
	p.post(id, `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"ui://other"}}`)
	if e := p.rpc()["error"].(map[string]any); e["code"] != float64(-32002) || e["message"] != "resource not found" {
		t.Fatalf("error: %v", e)
	}
	p.post(id, `{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`)
	if e := p.rpc()["error"].(map[string]any); e["code"] != float64(CodeMethodNotFound) {
		t.Fatalf("unknown method: %v", e)
	}
	p.post(id, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if m := p.rpc(); m["id"] != float64(8) || m["result"] == nil {
		t.Fatalf("ping: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/whatever"}`)
	rec.waitFor(t, "the unsupported methods reported", func(r *recorder) bool {
		return r.hasProblem(ErrUnsupported, `"sampling/createMessage"`) && r.hasProblem(ErrUnsupported, `"ui/notifications/whatever"`)
	})
}

// A page that goes away does not end its views: the next page shows them
// again.
func TestPageGoneKeepsViews(t *testing.T) {
	t.Parallel() // waits for the host's timeouts
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	o.ConnectTimeout = 100 * time.Millisecond
	h := newTestHost(t, o)
	p := connectPage(t, h)
	v := openShow(t, h, `{}`)
	p.next("view")
	p.handshake(v.Info().ID)
	p.rpc()
	p.close()
	rec.waitFor(t, "the page gone", func(r *recorder) bool { return r.states[len(r.states)-1] == StatePageGone })
	select {
	case <-v.Done():
		t.Fatalf("the view ended with the page: %v", v.Err())
	case <-time.After(5 * o.ConnectTimeout):
	}
	p2 := connectPage(t, h)
	p2.next("view")
	p2.handshake(v.Info().ID)
	if m := p2.rpc(); m["method"] != "ui/notifications/tool-input" {
		t.Fatalf("%v", m)
	}
}

func TestRequestsHandedToTheProgram(t *testing.T) {
	rec, v, p, id := startedView(t)

	p.post(id, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)
	rec.waitFor(t, "the log", func(r *recorder) bool { return len(r.logs) == 1 && strings.Contains(r.logs[0], "hello") })

	p.post(id, `{"jsonrpc":"2.0","id":10,"method":"ui/message","params":{"role":"user","content":[{"type":"text","text":"say this"}]}}`)
	if m := p.rpc(); m["result"] == nil {
		t.Fatalf("ui/message: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":11,"method":"ui/update-model-context","params":{"structuredContent":{"k":1}}}`)
	if m := p.rpc(); m["result"] == nil {
		t.Fatalf("ui/update-model-context: %v", m)
	}
	if got := string(v.ModelContext()); got != `{"structuredContent":{"k":1}}` {
		t.Errorf("ModelContext %s", got)
	}
	p.post(id, `{"jsonrpc":"2.0","id":12,"method":"ui/open-link","params":{"url":"https://example.com/a"}}`)
	if m := p.rpc(); m["result"] == nil {
		t.Fatalf("ui/open-link: %v", m)
	}
	rec.mu.Lock()
	rec.linkErr = ErrDenied
	rec.mu.Unlock()
	p.post(id, `{"jsonrpc":"2.0","id":13,"method":"ui/open-link","params":{"url":"https://example.com/b"}}`)
	if e := p.rpc()["error"].(map[string]any); e["code"] != float64(CodeRefused) || e["message"] != "Link opening denied by user" {
		t.Fatalf("denied link: %v", e)
	}
	// Not http(s): refused without asking.
	p.post(id, `{"jsonrpc":"2.0","id":14,"method":"ui/open-link","params":{"url":"javascript:alert(1)"}}`)
	if m := p.rpc(); m["error"] == nil {
		t.Fatalf("javascript: link: %v", m)
	}
	// Longer than a person can review (or a browser be started with):
	// refused without asking.
	p.post(id, `{"jsonrpc":"2.0","id":15,"method":"ui/open-link","params":{"url":"https://example.com/`+strings.Repeat("a", 300000)+`"}}`)
	if e, _ := p.rpc()["error"].(map[string]any); e == nil || e["code"] != float64(CodeRefused) || e["message"] != "Invalid URL: longer than 8192 bytes" {
		t.Fatalf("a 300 kB link: %v", e)
	}
	rec.waitFor(t, "the long link reported", func(r *recorder) bool { return r.hasProblem(ErrRefused, "URL of 300020 bytes") })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.messages) != 1 || !strings.Contains(rec.messages[0], "say this") {
		t.Errorf("messages %q", rec.messages)
	}
	if len(rec.links) != 2 || rec.links[0] != "https://example.com/a" {
		t.Errorf("links %q", rec.links)
	}
}

// A view's notifications/tools/list_changed (its own tools changed,
// draft spec "Standard MCP Messages": "App → Host") from a view that
// declared no tools is taken quietly: there is nothing to list, and it
// is no problem of the view's (TestAppTools: one that declared tools is
// listed again).
func TestViewToolsListChangedIsQuiet(t *testing.T) {
	rec, _, p, id := startedView(t)
	p.post(id, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, `{"jsonrpc":"2.0","method":"notifications/unheard-of"}`)
	// The unknown one after it is reported: the first was handled, quietly.
	rec.waitFor(t, "the unknown notification reported", func(r *recorder) bool {
		return r.hasProblem(ErrUnsupported, "unheard-of")
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.problems) != 1 {
		t.Errorf("problems %v, want only the unknown notification's", rec.problems)
	}
}

func TestDisplayModeAndSize(t *testing.T) {
	rec := newRecorder()
	h := newTestHost(t, rec.options(newFakeBackend(minimalHTML)))
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	p.postBody(`{"env":{"inline":{"width":600,"maxHeight":400},"fullscreen":{"width":1200,"height":800}},"messages":[]}`)
	p.handshake(id)
	p.rpc()

	p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"width":300,"height":311}}`)
	if e := p.next("size"); !strings.Contains(string(e.data), `"height":311`) {
		t.Fatalf("size event %s", e.data)
	}
	// The frame grows up to the maxHeight the view was told, no further
	// (spec "Container Dimensions": "up to this maximum height").
	p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"width":300,"height":99999}}`)
	if e := p.next("size"); !strings.Contains(string(e.data), `"height":400`) {
		t.Fatalf("size event %s, want the height cut to the maxHeight 400", e.data)
	}
	p.post(id, `{"jsonrpc":"2.0","id":20,"method":"ui/request-display-mode","params":{"mode":"pip"}}`)
	if m := p.rpc(); m["result"].(map[string]any)["mode"] != "inline" {
		t.Fatalf("pip: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":21,"method":"ui/request-display-mode","params":{"mode":"fullscreen"}}`)
	if e := p.next("mode"); !strings.Contains(string(e.data), `"fullscreen"`) {
		t.Fatalf("mode event %s", e.data)
	}
	changed := p.rpc()
	if changed["method"] != "ui/notifications/host-context-changed" {
		t.Fatalf("host-context-changed: %v", changed)
	}
	cp := changed["params"].(map[string]any)
	if cp["displayMode"] != "fullscreen" || cp["containerDimensions"].(map[string]any)["height"] != float64(800) {
		t.Fatalf("host-context-changed params %v", cp)
	}
	if m := p.rpc(); m["id"] != float64(21) || m["result"].(map[string]any)["mode"] != "fullscreen" {
		t.Fatalf("fullscreen: %v", m)
	}
	// The person leaves full screen in the page.
	p.postBody(`{"modes":[{"view":"` + id + `","mode":"inline"}],"messages":[]}`)
	p.next("mode")
	if m := p.rpc(); m["params"].(map[string]any)["displayMode"] != "inline" {
		t.Fatalf("back inline: %v", m)
	}
}

func TestMalformedMessagesRefused(t *testing.T) {
	rec, _, p, id := startedView(t)
	p.post(id, `"just a string"`, `[1,2]`, `{"jsonrpc":"1.0","method":"x"}`, `{"jsonrpc":"2.0","id":"bad","method":7}`)
	m := p.rpc()
	if m["id"] != "bad" || m["error"].(map[string]any)["code"] != float64(CodeInvalidRequest) {
		t.Fatalf("answer to a malformed request: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":[1]}`)
	if m := p.rpc(); m["id"] != float64(30) || m["error"] == nil {
		t.Fatalf("params not an object: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":999,"result":{}}`)
	rec.waitFor(t, "the malformed messages reported", func(r *recorder) bool {
		n := 0
		for _, p := range r.problems {
			if errors.Is(p, ErrMalformed) {
				n++
			}
		}
		return n >= 6
	})
}

func TestFloodIsBounded(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	o.RateLimit, o.RateBurst = 1, 20
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	p.handshake(id) // 3 messages
	p.rpc()
	var msgs []string
	for range 100 {
		msgs = append(msgs, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}`)
	}
	p.post(id, msgs...)
	p.post(id, `{"jsonrpc":"2.0","id":40,"method":"ping"}`)
	if m := p.rpc(); m["id"] != float64(40) || m["error"] == nil {
		t.Fatalf("a request over the limit: %v", m)
	}
	rec.waitFor(t, "the flood reported", func(r *recorder) bool { return r.hasProblem(ErrFlood, "refused") })
	// The page itself reports what it dropped.
	if code := p.postBody(`{"dropped":[{"view":"` + id + `","count":4000,"why":"queue full"}],"messages":[]}`); code != http.StatusNoContent {
		t.Fatalf("post: %d", code)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.hasProblem(ErrFlood, "4000") {
		t.Error("the page's drops are not reported")
	}
	if n := len(rec.logs); n != 17 {
		t.Errorf("%d log messages handed on, want the 17 left of the burst", n)
	}
	fromView := 0
	for _, w := range rec.wire {
		if w.Direction == FromView {
			fromView++
		}
	}
	if fromView != 20 {
		t.Errorf("the observer saw %d messages from the view, want the 20 admitted", fromView)
	}
}

func TestViewThatNeverInitializes(t *testing.T) {
	t.Parallel() // waits for the host's timeouts
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	// One timer covers the proxy's load and the handshake: 300 ms ran out
	// in CI, under load, before the page's proxy-ready arrived ("its
	// sandbox proxy did not load"). The wait is for a message that never
	// comes, so only its length is spent.
	o.InitTimeout = 2 * time.Second
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	p.post(v.Info().ID, `{"jsonrpc":"2.0","method":"ui/notifications/sandbox-proxy-ready","params":{}}`)
	p.rpc()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := v.Initialized(ctx)
	if !errors.Is(err, ErrNoInitialize) || !strings.Contains(err.Error(), "did not send ui/initialize") {
		t.Fatalf("Initialized: %v", err)
	}
	select {
	case <-v.Done():
	case <-ctx.Done():
		t.Fatal("the view is not closed")
	}
	if e := p.next("closed"); !strings.Contains(string(e.data), "did not send ui/initialize") {
		t.Fatalf("closed event %s", e.data)
	}
	if len(h.Views()) != 0 {
		t.Error("the failed view is still listed")
	}
	rec.waitFor(t, "the problem", func(r *recorder) bool { return r.hasProblem(ErrNoInitialize, "") })
}

func TestNoPageOpened(t *testing.T) {
	t.Parallel() // waits for the host's timeouts
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	o.ConnectTimeout = 200 * time.Millisecond
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := v.Initialized(ctx); !errors.Is(err, ErrNoPage) {
		t.Fatalf("Initialized: %v", err)
	}
}

func TestTeardown(t *testing.T) {
	t.Parallel() // waits for the host's timeouts
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	o.TeardownTimeout = 300 * time.Millisecond
	b := o.Backend.(*fakeBackend)
	b.callBlock = make(chan struct{})
	h := newTestHost(t, o)
	p := connectPage(t, h)

	// A view that answers: Close waits for the answer, then the page
	// removes the view; its tools/call in flight is cancelled.
	v := openShow(t, h, `{}`)
	p.next("view")
	id := v.Info().ID
	p.handshake(id)
	p.rpc()
	p.post(id, `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"refresh"}}`)
	b.waitCalls(t, 1)
	errc := make(chan error, 1)
	go func() { errc <- v.Close(context.Background(), "done here") }()
	m := p.rpc()
	if m["method"] != "ui/resource-teardown" || m["params"].(map[string]any)["reason"] != "done here" {
		t.Fatalf("teardown: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":`+string(mustJSON(m["id"]))+`,"result":{}}`)
	if err := <-errc; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if e := p.next("closed"); !strings.Contains(string(e.data), "done here") {
		t.Fatalf("closed: %s", e.data)
	}

	// A view without a teardown handler answers "method not found": done.
	v3 := openShow(t, h, `{}`)
	p.next("view")
	p.handshake(v3.Info().ID)
	p.rpc()
	go func() { errc <- v3.Close(context.Background(), "done") }()
	m = p.rpc()
	p.post(v3.Info().ID, `{"jsonrpc":"2.0","id":`+string(mustJSON(m["id"]))+`,"error":{"code":-32601,"message":"Method not found"}}`)
	if err := <-errc; err != nil {
		t.Fatalf("Close of a view without a teardown handler: %v", err)
	}
	p.next("closed")

	// A view that does not answer: Close returns after TeardownTimeout.
	v2 := openShow(t, h, `{}`)
	p.next("view")
	p.handshake(v2.Info().ID)
	p.rpc()
	start := time.Now()
	err := v2.Close(context.Background(), "bye")
	if !errors.Is(err, ErrTeardown) {
		t.Fatalf("Close of a silent view: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	if _, err := h.Open(context.Background(), Call{Tool: json.RawMessage(showTool)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.Close(ctx) // not initialized: no teardown, nothing to wait for
	if _, err := h.Open(context.Background(), Call{Tool: json.RawMessage(showTool)}); !errors.Is(err, ErrClosed) {
		t.Errorf("Open after Close: %v", err)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// A second page takes over: the first is told, the view starts over.
func TestPageReplaced(t *testing.T) {
	rec := newRecorder()
	h := newTestHost(t, rec.options(newFakeBackend(minimalHTML)))
	v := openShow(t, h, `{}`)
	v.SetResult(json.RawMessage(`{"content":[]}`))
	p1 := connectPage(t, h)
	p1.next("view")
	p1.handshake(v.Info().ID)
	p1.rpc()
	p1.rpc()
	p2 := connectPage(t, h)
	p1.next("replaced")
	p2.next("view")
	p2.handshake(v.Info().ID)
	if m := p2.rpc(); m["method"] != "ui/notifications/tool-input" {
		t.Fatalf("%v", m)
	}
	if m := p2.rpc(); m["method"] != "ui/notifications/tool-result" {
		t.Fatalf("%v", m)
	}
	if code := p1.post(v.Info().ID, `{"jsonrpc":"2.0","method":"ping"}`); code != http.StatusConflict {
		t.Errorf("a post from the replaced page: %d", code)
	}
}

func TestObserverSeesEveryMessageInOrder(t *testing.T) {
	rec := newRecorder()
	h := newTestHost(t, rec.options(newFakeBackend(minimalHTML)))
	v := openShow(t, h, `{"a":1}`)
	v.SetResult(json.RawMessage(`{"content":[{"type":"text","text":"r"}]}`))
	p := connectPage(t, h)
	p.next("view")
	p.handshake(v.Info().ID)
	p.rpc()
	p.rpc()
	rec.waitFor(t, "7 messages", func(r *recorder) bool { return len(r.wire) >= 7 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []struct {
		d Direction
		s string
	}{
		{FromView, "sandbox-proxy-ready"}, {ToView, "sandbox-resource-ready"},
		{FromView, `"ui/initialize"`}, {ToView, `"hostContext"`},
		{FromView, "notifications/initialized"}, {ToView, "tool-input"}, {ToView, "tool-result"},
	}
	for i, w := range want {
		m := rec.wire[i]
		if m.Direction != w.d || !strings.Contains(string(m.Raw), w.s) || m.View.ID != v.Info().ID || m.Time.IsZero() {
			t.Errorf("message %d: %v %s, want %v %s", i, m.Direction, clip(m.Raw), w.d, w.s)
		}
	}
}

func TestOpenChecksTheResource(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(b *fakeBackend)
		tool   string
		want   error
	}{
		{"no view", nil, secretTool, ErrNoView},
		{"unreadable", func(b *fakeBackend) { b.readErr = &Error{Code: -32002, Message: "gone"} }, showTool, ErrResourceRead},
		{"wrong MIME type", func(b *fakeBackend) { b.mime = "text/html" }, showTool, ErrMIMEType},
		{"not HTML", func(b *fakeBackend) { b.html = `{"error":"oops"}` }, showTool, ErrInvalidHTML},
		{"bad meta", func(b *fakeBackend) { b.meta = `{"ui":{"csp":{"connectDomains":"x"}}}` }, showTool, ErrBadMeta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newFakeBackend(minimalHTML)
			if tc.mutate != nil {
				tc.mutate(b)
			}
			h := newTestHost(t, newRecorder().options(b))
			_, err := h.Open(context.Background(), Call{Tool: json.RawMessage(tc.tool)})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
		})
	}
}

// A view's _meta.ui comes from its resources/read content item, and from
// its resources/list entry only when the content item has none (the
// ext-apps SDK's listing-level fallback, which its registerAppResource
// relies on). The content item's, when present, is the whole declaration
// (no field taken from the entry); a listing that fails or is malformed
// leaves the restrictive default, and the view opens.
func TestListingDeclarations(t *testing.T) {
	const listed = `{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com","'unsafe-eval'"]},"permissions":{"camera":{}},"prefersBorder":true}}`
	defaultHeader := buildPolicy(CSP{}, Permissions{}, nil).Header
	defaultHeader = defaultHeader[:strings.Index(defaultHeader, "; frame-ancestors")]
	for _, tc := range []struct {
		name     string
		meta     string // the content item's _meta
		listMeta string
		listErr  error
		// want: the policy's connect-src and script-src, where the
		// declarations came from, whether the listing was asked.
		connect, script string
		declared        Declared
		listed          bool
		listingErr      error
		border          bool
	}{
		{name: "only listed", listMeta: listed,
			connect: "connect-src https://api.example.com;", script: "script-src 'self' 'unsafe-inline' https://cdn.example.com;",
			declared: DeclaredInListing, listed: true, border: true},
		{name: "content _meta without ui", meta: `{"other":{}}`, listMeta: listed,
			connect: "connect-src https://api.example.com;", script: "script-src 'self' 'unsafe-inline' https://cdn.example.com;",
			declared: DeclaredInListing, listed: true, border: true},
		{name: "content ui null", meta: `{"ui":null}`, listMeta: listed,
			connect: "connect-src https://api.example.com;", script: "script-src 'self' 'unsafe-inline' https://cdn.example.com;",
			declared: DeclaredInListing, listed: true, border: true},
		{name: "content wins whole", meta: `{"ui":{"csp":{"resourceDomains":["https://other.example.com"]}}}`, listMeta: listed,
			connect: "connect-src 'none';", script: "script-src 'self' 'unsafe-inline' https://other.example.com;",
			declared: DeclaredInContent},
		{name: "empty content ui wins", meta: `{"ui":{}}`, listMeta: listed,
			connect: "connect-src 'none';", script: "script-src 'self' 'unsafe-inline';",
			declared: DeclaredInContent},
		{name: "neither", connect: "connect-src 'none';", script: "script-src 'self' 'unsafe-inline';", listed: true},
		{name: "listing fails", listMeta: listed, listErr: &Error{Code: -32601, Message: "Method not found"},
			connect: "connect-src 'none';", script: "script-src 'self' 'unsafe-inline';", listed: true, listingErr: &Error{}},
		{name: "listing malformed", listMeta: `{"ui":{"csp":{"connectDomains":"https://api.example.com"}}}`,
			connect: "connect-src 'none';", script: "script-src 'self' 'unsafe-inline';", listed: true, listingErr: ErrBadMeta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newFakeBackend(minimalHTML)
			b.meta, b.listMeta, b.listErr = tc.meta, tc.listMeta, tc.listErr
			h := newTestHost(t, newRecorder().options(b))
			v := openShow(t, h, `{}`)
			p := v.Policy()
			if !strings.Contains(p.Header, tc.connect) || !strings.Contains(p.Header, tc.script) {
				t.Errorf("CSP %q, want %q and %q", p.Header, tc.connect, tc.script)
			}
			if tc.declared == DeclaredNowhere && !strings.HasPrefix(p.Header, defaultHeader) {
				t.Errorf("CSP %q, want the restrictive default %q", p.Header, defaultHeader)
			}
			if p.Declared != tc.declared {
				t.Errorf("declared in %q, want %q", p.Declared, tc.declared)
			}
			if b.listings > 0 != tc.listed {
				t.Errorf("%d listings, want some: %v", b.listings, tc.listed)
			}
			var rpc *Error
			switch {
			case tc.listingErr == nil && p.ListingError != nil:
				t.Errorf("listing error %v", p.ListingError)
			case tc.listingErr == ErrBadMeta && !errors.Is(p.ListingError, ErrBadMeta),
				tc.listingErr != nil && tc.listingErr != ErrBadMeta && !errors.As(p.ListingError, &rpc):
				t.Errorf("listing error %v, want %T %v", p.ListingError, tc.listingErr, tc.listingErr)
			}
			if got := v.res.prefersBorder != nil && *v.res.prefersBorder; got != tc.border {
				t.Errorf("prefersBorder %v, want %v", got, tc.border)
			}
			if tc.declared == DeclaredInListing {
				// Declared in the listing, checked as in the content: the
				// keyword refused, the permission granted.
				if len(p.Refused) != 1 || !strings.Contains(p.Refused[0], "unsafe-eval") || strings.Contains(p.Header, "unsafe-eval") ||
					p.Permissions.Allow() != "camera" || len(p.CSP.ConnectDomains) != 1 {
					t.Errorf("policy %+v", p)
				}
			} else if p.Permissions.Allow() != "" {
				t.Errorf("permissions %q, none declared", p.Permissions.Allow())
			}
		})
	}
}

// The listeners follow the local listener rule and serve nothing outside
// their per-run paths.
func TestListeners(t *testing.T) {
	b := newFakeBackend(minimalHTML)
	b.meta = `{"ui":{"csp":{"connectDomains":["https://api.example.com","'unsafe-eval'"]},"permissions":{"camera":{}}}}`
	h := newTestHost(t, newRecorder().options(b))
	v := openShow(t, h, `{}`)
	get := func(u string, header map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		for k, val := range header {
			req.Header.Set(k, val)
			if k == "Host" {
				req.Host = val
			}
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if !strings.HasPrefix(h.URL(), "http://127.0.0.1:") || !strings.HasPrefix(h.sandboxOrig, "http://127.0.0.") || h.hostOrigin == h.sandboxOrig {
		t.Fatalf("origins %s %s", h.hostOrigin, h.sandboxOrig)
	}
	if r := get(h.hostOrigin+"/", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("host root: %d", r.StatusCode)
	}
	if r := get(h.hostOrigin+"/"+h.sandboxToken+"/", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("the sandbox token on the host: %d", r.StatusCode)
	}
	page := get(h.URL(), nil)
	if page.StatusCode != http.StatusOK || !strings.Contains(page.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		!strings.Contains(page.Header.Get("Content-Security-Policy"), "frame-src "+h.sandboxOrig) {
		t.Errorf("host page: %d %q", page.StatusCode, page.Header.Get("Content-Security-Policy"))
	}
	if r := get(h.URL(), map[string]string{"Host": "evil.example:" + strings.TrimPrefix(h.hostOrigin, "http://127.0.0.1:")}); r.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("rebinding Host: %d", r.StatusCode)
	}
	if r := get(h.URL()+"events", map[string]string{"Origin": "https://evil.example"}); r.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: %d", r.StatusCode)
	}
	if r := get(h.URL()+"events", map[string]string{"Origin": h.sandboxOrig}); r.StatusCode != http.StatusForbidden {
		t.Errorf("the sandbox's Origin on the host: %d", r.StatusCode)
	}
	port := strings.TrimPrefix(h.hostOrigin, "http://127.0.0.1:")
	if r := get("http://localhost:"+port+"/"+h.hostToken+"/", nil); r.StatusCode != http.StatusTemporaryRedirect || r.Header.Get("Location") != h.URL() {
		t.Errorf("localhost: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	sb := get(h.sandboxURL(v.Info().ID), nil)
	csp := sb.Header.Get("Content-Security-Policy")
	if sb.StatusCode != http.StatusOK || csp != v.Policy().Header || !strings.Contains(csp, "frame-ancestors "+h.hostOrigin) ||
		!strings.Contains(csp, "connect-src https://api.example.com;") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("sandbox page: %d %q", sb.StatusCode, csp)
	}
	if len(v.Policy().Refused) != 1 || v.Policy().Permissions.Allow() != "camera" {
		t.Errorf("policy %+v", v.Policy())
	}
	if r := get(h.sandboxOrig+"/"+h.sandboxToken+"/view/nope", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown view: %d", r.StatusCode)
	}
	if r := get(h.sandboxOrig+"/"+h.hostToken+"/view/"+v.Info().ID, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("the host token on the sandbox: %d", r.StatusCode)
	}
}

// The views' sandbox is on a loopback host of its own, 127.0.0.2 where
// the system has it (Linux, Windows), so that views share no cookies with
// the local services on 127.0.0.1; the host page stays on 127.0.0.1, and
// both pages name the sandbox's actual origin.
func TestSandboxOwnLoopbackHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("127.0.0.2 is certain to be there on Linux only")
	}
	h := newTestHost(t, newRecorder().options(newFakeBackend(minimalHTML)))
	v := openShow(t, h, `{}`)
	hostURL, err := url.Parse(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	sandboxURL, err := url.Parse(h.sandboxURL(v.Info().ID))
	if err != nil {
		t.Fatal(err)
	}
	if hostURL.Hostname() != "127.0.0.1" || sandboxURL.Hostname() != "127.0.0.2" || h.sandboxOrig != "http://"+sandboxURL.Host {
		t.Fatalf("host page %s, sandbox %s (origin %s): want 127.0.0.1 and 127.0.0.2", h.URL(), sandboxURL, h.sandboxOrig)
	}
	if h.SandboxSharesCookies() {
		t.Error("SandboxSharesCookies on 127.0.0.2")
	}
	if !(&Host{sandboxOrig: "http://127.0.0.1:4000"}).SandboxSharesCookies() {
		t.Error("a sandbox fallen back to 127.0.0.1 does not say it shares cookies")
	}
	page, err := http.Get(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(page.Header.Get("Content-Security-Policy"), "frame-src "+h.sandboxOrig+";") ||
		!strings.Contains(string(body), `data-sandbox-origin="`+h.sandboxOrig+`"`) {
		t.Errorf("the host page does not name the sandbox %s: %q", h.sandboxOrig, page.Header.Get("Content-Security-Policy"))
	}
	// The sandbox listener admits requests addressed to 127.0.0.2 and
	// from its own origin (listenguard), and names the host page as the
	// only frame ancestor.
	req, _ := http.NewRequest(http.MethodGet, h.sandboxURL(v.Info().ID), nil)
	req.Header.Set("Origin", h.sandboxOrig)
	sb, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sb.Body.Close()
	if sb.StatusCode != http.StatusOK || !strings.HasSuffix(sb.Header.Get("Content-Security-Policy"), "frame-ancestors "+h.hostOrigin) {
		t.Errorf("sandbox page: %d %q", sb.StatusCode, sb.Header.Get("Content-Security-Policy"))
	}
}

// Where 127.0.0.2 cannot be listened on (macOS: EADDRNOTAVAIL), the
// sandbox falls back to 127.0.0.1; when neither can, the error names
// both.
func TestListenSandboxFallback(t *testing.T) {
	var tried []string
	refuse2 := func(network, address string) (net.Listener, error) {
		tried = append(tried, address)
		if strings.HasPrefix(address, "127.0.0.2:") {
			return nil, &net.OpError{Op: "listen", Net: network, Err: errors.New("bind: can't assign requested address")}
		}
		return net.Listen(network, address)
	}
	ln, err := listenSandbox(refuse2)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); host != "127.0.0.1" || !slices.Equal(tried, []string{"127.0.0.2:0", "127.0.0.1:0"}) {
		t.Errorf("listened on %s after trying %q, want 127.0.0.1 after 127.0.0.2", ln.Addr(), tried)
	}

	tried = nil
	ln, err = listenSandbox(func(network, address string) (net.Listener, error) {
		tried = append(tried, address)
		if strings.HasPrefix(address, "127.0.0.2:") {
			return net.Listen(network, "127.0.0.1:0") // stands for 127.0.0.2
		}
		return nil, errors.New("not asked")
	})
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if !slices.Equal(tried, []string{"127.0.0.2:0"}) {
		t.Errorf("tried %q, want 127.0.0.2 only", tried)
	}

	_, err = listenSandbox(func(network, address string) (net.Listener, error) {
		return nil, errors.New("refused " + address)
	})
	if err == nil || !strings.Contains(err.Error(), "refused 127.0.0.2:0") || !strings.Contains(err.Error(), "refused 127.0.0.1:0") {
		t.Errorf("both refused: %v", err)
	}
}

// A view that keeps sending requests while MaxInFlight of its own are in
// progress gets each refused, and the program is told once, not once per
// request (a terminal filled with the same warning).
func TestInFlightRefusalsReportedOnce(t *testing.T) {
	rec := newRecorder()
	b := newFakeBackend(minimalHTML)
	b.callBlock = make(chan struct{})
	defer close(b.callBlock)
	o := rec.options(b)
	o.MaxInFlight = 2
	h := newTestHost(t, o)
	_, p, id := handshaken(t, h)
	p.post(id, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"refresh"}}`,
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"refresh"}}`)
	b.waitCalls(t, 2)
	var msgs []string
	for i := range 50 {
		msgs = append(msgs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
	}
	p.post(id, msgs...)
	for i := range 50 {
		m := p.rpc()
		if m["id"] != float64(100+i) || m["error"] == nil {
			t.Fatalf("request %d over the in-flight limit: %v", i, m)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, e := range rec.problems {
		if errors.Is(e, ErrFlood) {
			n++
		}
	}
	if n != 1 || !rec.hasProblem(ErrFlood, "while 2 were in progress") {
		t.Errorf("%d flood problems reported for 50 refused requests, want 1: %v", n, rec.problems)
	}
}

// A sandbox that loads again in the same page (the person reloaded the
// frame, or the view its sandbox) is a new, empty document: it is sent
// the view's HTML again and starts over with the handshake, then gets the
// tool's input and result again. One that keeps reloading fails.
func TestSandboxReloaded(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	o.InitTimeout = time.Minute
	h := newTestHost(t, o)
	v := openShow(t, h, `{"city":"Paris"}`)
	v.SetResult(json.RawMessage(`{"content":[{"type":"text","text":"sunny"}]}`))
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	for round := range 2 {
		p.handshake(id)
		if m := p.rpc(); m["method"] != "ui/notifications/tool-input" {
			t.Fatalf("round %d: %v, want tool-input", round, m)
		}
		if m := p.rpc(); m["method"] != "ui/notifications/tool-result" {
			t.Fatalf("round %d: %v, want tool-result", round, m)
		}
	}
	rec.mu.Lock()
	problems := slices.Clone(rec.problems)
	rec.mu.Unlock()
	if len(problems) > 0 || v.Err() != nil {
		t.Fatalf("a reload is not a problem: %v %v", problems, v.Err())
	}
	// A view that reloads its sandbox without end.
	for range sandboxReloadBurst {
		p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/sandbox-proxy-ready","params":{}}`)
	}
	select {
	case <-v.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a view reloading without end is still open")
	}
	if err := v.Err(); !errors.Is(err, ErrFlood) || !strings.Contains(err.Error(), "reloaded") {
		t.Errorf("view error %v", err)
	}
}

// A view that keeps sending malformed messages (under the rate limit) is
// reported problemBurst times at once, then once a second, with the
// number of those left out: a warning a message would fill the terminal.
func TestProblemsBounded(t *testing.T) {
	rec, _, p, id := startedView(t)
	var msgs []string
	for range 100 {
		msgs = append(msgs, `{"jsonrpc":"1.0","method":"x"}`)
	}
	p.post(id, msgs...)
	rec.mu.Lock()
	n := len(rec.problems)
	rec.mu.Unlock()
	if n != problemBurst {
		t.Fatalf("%d problems reported for 100 malformed messages, want %d", n, problemBurst)
	}
	// As time passes, the next one is told, with the count of the others.
	deadline := time.Now().Add(15 * time.Second) // one a second: ample under load
	for {
		p.post(id, `{"jsonrpc":"1.0","method":"x"}`)
		rec.mu.Lock()
		n = len(rec.problems)
		last := rec.problems[n-1]
		rec.mu.Unlock()
		if n > problemBurst {
			if !errors.Is(last, ErrMalformed) || !strings.Contains(last.Error(), "more problems of this view not shown") {
				t.Errorf("the next problem: %v", last)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no problem reported after the burst")
		}
		select {
		case <-rec.changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// While the person is asked about one link of a view's, another
// ui/open-link of the view's is refused at once rather than queued: a
// view must not line up questions faster than they can be answered.
func TestOneLinkQuestionAtATime(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	asked := make(chan string, 4)
	answer := make(chan error)
	o.Handlers.OpenLink = func(ctx context.Context, v ViewInfo, url string) error {
		asked <- url
		select {
		case err := <-answer:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h := newTestHost(t, o)
	_, p, id := handshaken(t, h)
	link := func(n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ui/open-link","params":{"url":"https://example.com/%d"}}`, n, n)
	}
	p.post(id, link(1))
	if u := <-asked; u != "https://example.com/1" {
		t.Fatalf("asked about %s", u)
	}
	p.post(id, link(2), link(3))
	refused := map[float64]bool{}
	for range 2 {
		m := p.rpc()
		id, _ := m["id"].(float64)
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(CodeRefused) {
			t.Fatalf("a link while another is asked about: %v", m)
		}
		refused[id] = true
	}
	if !refused[2] || !refused[3] {
		t.Fatalf("refused %v, want links 2 and 3", refused)
	}
	answer <- nil
	if m := p.rpc(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("the link asked about: %v", m)
	}
	// Once answered, the next link is asked about.
	p.post(id, link(4))
	if u := <-asked; u != "https://example.com/4" {
		t.Fatalf("asked about %s", u)
	}
	answer <- ErrDenied
	if m := p.rpc(); m["id"] != float64(4) || m["error"] == nil {
		t.Fatalf("the denied link: %v", m)
	}
	if len(asked) > 0 {
		t.Errorf("asked about %s too", <-asked)
	}
	rec.waitFor(t, "the refused links reported", func(r *recorder) bool {
		return r.hasProblem(ErrRefused, "still asked about another link")
	})
}

// A page that does not read its event stream is disconnected once the
// events waiting for it pass maxPageQueued bytes, not only maxPageEvents
// events: a view answered with large results faster than the browser
// reads them must not fill the host's memory. One event larger than the
// bound is still queued when nothing else waits.
func TestPageQueueBoundedInBytes(t *testing.T) {
	c := newPageConn()
	c.limit = 1 << 20
	big := strings.Repeat("x", 2<<20)
	c.send("rpc", big)
	select {
	case <-c.gone:
		t.Fatal("one event larger than the bound, alone in the queue, disconnected the page")
	default:
	}
	c.next(<-c.events) // written
	chunk := strings.Repeat("y", 64<<10)
	for i := 0; i < 64; i++ { // 4 MiB, far fewer than maxPageEvents events
		c.send("rpc", chunk)
	}
	select {
	case <-c.gone:
	default:
		t.Fatalf("%d bytes queued for a page that does not read, and it is still connected", c.queued.Load())
	}
	if q := c.queued.Load(); q > c.limit {
		t.Errorf("%d bytes queued, more than the bound %d", q, c.limit)
	}
}
