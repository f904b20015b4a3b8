package apps

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// fakeBackend is an in-process MCP server: three tools (show, with a
// view; refresh, for the app only; secret, for the model only) and the
// view's resource.
type fakeBackend struct {
	mu        sync.Mutex
	html      string
	mime      string
	meta      string // the resource content's _meta, raw
	listMeta  string // the resource's resources/list entry's _meta, raw
	listErr   error  // what resources/list fails with
	listings  int    // ListedResource calls
	calls     []string
	reads     []string
	readErr   error
	callBlock chan struct{} // when set, tools/call waits for it (or ctx)
	called    chan struct{} // poked after each tools/call is counted
}

const (
	showTool    = `{"name":"show","description":"shows","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://test/app"}}}`
	refreshTool = `{"name":"refresh","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://test/app","visibility":["app"]}}}`
	secretTool  = `{"name":"secret","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["model"]}}}`
)

func newFakeBackend(html string) *fakeBackend {
	return &fakeBackend{html: html, mime: MIMEType, called: make(chan struct{}, 1)}
}

func (b *fakeBackend) ListTools(ctx context.Context) ([]json.RawMessage, error) {
	return []json.RawMessage{json.RawMessage(showTool), json.RawMessage(refreshTool), json.RawMessage(secretTool)}, nil
}

func (b *fakeBackend) CallTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	b.mu.Lock()
	b.calls = append(b.calls, string(params))
	n := len(b.calls)
	block := b.callBlock
	b.mu.Unlock()
	select {
	case b.called <- struct{}{}:
	default:
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	switch p.Name {
	case "refresh":
		return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"refreshed %d"}]}`, n)), nil
	case "fails":
		return nil, &Error{Code: -32602, Message: "no such thing"}
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"called ` + p.Name + `"}]}`), nil
}

func (b *fakeBackend) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reads = append(b.reads, uri)
	if b.readErr != nil {
		return nil, b.readErr
	}
	if uri != "ui://test/app" {
		return nil, &Error{Code: -32002, Message: "resource not found"}
	}
	c := map[string]any{"uri": uri, "mimeType": b.mime, "text": b.html}
	if b.meta != "" {
		c["_meta"] = json.RawMessage(b.meta)
	}
	return json.Marshal(map[string]any{"contents": []any{c}})
}

func (b *fakeBackend) ListedResource(ctx context.Context, uri string) (json.RawMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.listings++
	if b.listErr != nil {
		return nil, b.listErr
	}
	if uri != "ui://test/app" {
		return nil, nil
	}
	e := map[string]any{"uri": uri, "name": "app", "mimeType": MIMEType}
	if b.listMeta != "" {
		e["_meta"] = json.RawMessage(b.listMeta)
	}
	return json.Marshal(e)
}

func (b *fakeBackend) toolCalls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

// waitCalls waits (bounded) until the backend has been called n times.
// The host tells its observer about a view's tools/call before it calls
// the backend, so the recorder's events cannot say when that happened.
func (b *fakeBackend) waitCalls(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(b.toolCalls()) < n {
		select {
		case <-b.called:
		case <-deadline:
			t.Fatalf("timed out waiting for %d tools/call to reach the server; it has %q", n, b.toolCalls())
		}
	}
}

// recorder collects what the host hands to its program.
type recorder struct {
	mu       sync.Mutex
	wire     []WireMessage
	logs     []string
	problems []error
	states   []State
	messages []string
	contexts []string
	links    []string
	linkErr  error
	changed  chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) options(b Backend) Options {
	return Options{
		Backend:  b,
		HostInfo: Implementation{Name: "mcpx-test", Version: "0.1"},
		Observer: func(m WireMessage) {
			r.mu.Lock()
			r.wire = append(r.wire, m)
			r.mu.Unlock()
			r.poke()
		},
		Handlers: Handlers{
			Log: func(v ViewInfo, params json.RawMessage) {
				r.mu.Lock()
				r.logs = append(r.logs, string(params))
				r.mu.Unlock()
				r.poke()
			},
			Message: func(ctx context.Context, v ViewInfo, params json.RawMessage) error {
				r.mu.Lock()
				r.messages = append(r.messages, string(params))
				r.mu.Unlock()
				r.poke()
				return nil
			},
			ModelContext: func(ctx context.Context, v ViewInfo, params json.RawMessage) error {
				r.mu.Lock()
				r.contexts = append(r.contexts, string(params))
				r.mu.Unlock()
				r.poke()
				return nil
			},
			OpenLink: func(ctx context.Context, v ViewInfo, url string) error {
				r.mu.Lock()
				r.links = append(r.links, url)
				err := r.linkErr
				r.mu.Unlock()
				r.poke()
				return err
			},
			Problem: func(v ViewInfo, err error) {
				r.mu.Lock()
				r.problems = append(r.problems, err)
				r.mu.Unlock()
				r.poke()
			},
			State: func(v ViewInfo, s State) {
				r.mu.Lock()
				r.states = append(r.states, s)
				r.mu.Unlock()
				r.poke()
			},
		},
	}
}

// waitFor waits (bounded) until cond holds on the recorder.
func (r *recorder) waitFor(t *testing.T, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.After(testwait.Bound)
	for {
		r.mu.Lock()
		ok := cond(r)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; problems %v, logs %q, states %v", what, r.problems, r.logs, r.states)
		}
	}
}

func (r *recorder) hasProblem(target error, substr string) bool {
	for _, p := range r.problems {
		if errors.Is(p, target) && strings.Contains(p.Error(), substr) {
			return true
		}
	}
	return false
}

// fakePage is the host page played by the test: the event stream and
// the posts, speaking for one view's frame.
type fakePage struct {
	t      *testing.T
	h      *Host
	conn   string
	events chan pageEvent
	cancel context.CancelFunc
	done   chan struct{}
}

type pageEvent struct {
	name string
	data json.RawMessage
}

// connectPage opens the host's event stream as the page does.
func connectPage(t *testing.T, h *Host) *fakePage {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &fakePage{t: t, h: h, events: make(chan pageEvent, 1024), cancel: cancel, done: make(chan struct{})}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.URL()+"events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("events: %s", resp.Status)
	}
	go func() {
		defer close(p.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var name string
		var data strings.Builder
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if name != "" {
					p.events <- pageEvent{name, json.RawMessage(data.String())}
				}
				name = ""
				data.Reset()
			case strings.HasPrefix(line, "event: "):
				name = line[7:]
			case strings.HasPrefix(line, "data: "):
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(line[6:])
			}
		}
	}()
	t.Cleanup(func() { p.close() })
	hello := p.next("hello")
	var d struct {
		Conn string `json:"conn"`
	}
	_ = json.Unmarshal(hello.data, &d)
	p.conn = d.Conn
	return p
}

func (p *fakePage) close() {
	p.cancel()
	<-p.done
}

// next returns the next event, which must be named name.
func (p *fakePage) next(name string) pageEvent {
	p.t.Helper()
	for {
		select {
		case e := <-p.events:
			if e.name == "state" && name != "state" {
				continue
			}
			if e.name != name {
				p.t.Fatalf("page event %s %s, want %s", e.name, e.data, name)
			}
			return e
		case <-time.After(10 * time.Second):
			p.t.Fatalf("timed out waiting for page event %s", name)
			return pageEvent{}
		}
	}
}

// rpc returns the next message to the view (skipping other events when
// skip is set).
func (p *fakePage) rpc() map[string]any {
	p.t.Helper()
	for {
		select {
		case e := <-p.events:
			if e.name != "rpc" {
				if e.name == "state" || e.name == "size" || e.name == "mode" {
					continue
				}
				p.t.Fatalf("page event %s %s, want rpc", e.name, e.data)
			}
			var d struct {
				Msg map[string]any `json:"msg"`
			}
			if err := json.Unmarshal(e.data, &d); err != nil {
				p.t.Fatal(err)
			}
			return d.Msg
		case <-time.After(10 * time.Second):
			p.t.Fatal("timed out waiting for a message to the view")
		}
	}
}

// post sends the frames' messages for view id (raw JSON texts).
func (p *fakePage) post(id string, msgs ...string) int {
	p.t.Helper()
	var parts []string
	for _, m := range msgs {
		parts = append(parts, `{"view":"`+id+`","message":`+m+`}`)
	}
	return p.postBody(`{"messages":[` + strings.Join(parts, ",") + `]}`)
}

func (p *fakePage) postBody(body string) int {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.h.URL()+"post?c="+p.conn, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// handshake plays the sandbox and a view through ui/initialize and
// initialized, returning the initialize result.
func (p *fakePage) handshake(id string) map[string]any {
	p.t.Helper()
	p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/sandbox-proxy-ready","params":{}}`)
	if m := p.rpc(); m["method"] != "ui/notifications/sandbox-resource-ready" {
		p.t.Fatalf("after sandbox-proxy-ready: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"protocolVersion":"2026-01-26","appInfo":{"name":"t","version":"1"},"appCapabilities":{"availableDisplayModes":["inline","fullscreen"]}}}`)
	res := p.rpc()
	if res["id"] != float64(1) || res["result"] == nil {
		p.t.Fatalf("ui/initialize answer: %v", res)
	}
	p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}`)
	return res["result"].(map[string]any)
}

func newTestHost(t *testing.T, o Options) *Host {
	t.Helper()
	h, err := NewHost(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Close(ctx)
	})
	return h
}

func openShow(t *testing.T, h *Host, args string) *View {
	t.Helper()
	v, err := h.Open(context.Background(), Call{Tool: json.RawMessage(showTool), Arguments: json.RawMessage(args), RequestID: json.RawMessage(`7`)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const minimalHTML = `<!DOCTYPE html><html><body><p id="x">hi</p></body></html>`

// startedView opens the show view on a host serving a minimal view,
// connects a page and completes the handshake and the tool input: where
// the tests of what a view sends begin.
func startedView(t *testing.T) (*recorder, *View, *fakePage, string) {
	t.Helper()
	rec := newRecorder()
	v, p, id := handshaken(t, newTestHost(t, rec.options(newFakeBackend(minimalHTML))))
	return rec, v, p, id
}

// handshaken opens the show view on h, connects a page and completes the
// handshake and the tool input.
func handshaken(t *testing.T, h *Host) (*View, *fakePage, string) {
	t.Helper()
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	p.handshake(id)
	p.rpc() // tool-input
	return v, p, id
}
