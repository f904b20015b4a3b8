package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// routedConn is a connection with headers, as Streamable HTTP is: it
// records the routes and the cancellations it is asked for.
type routedConn struct {
	transport.Conn
	mu        sync.Mutex
	routes    []*transport.Route
	cancelled []string
}

func (c *routedConn) Write(ctx context.Context, f transport.Frame) error {
	c.mu.Lock()
	c.routes = append(c.routes, f.Route)
	c.mu.Unlock()
	return c.Conn.Write(ctx, f)
}

func (c *routedConn) CarriesRoutes() bool { return true }

func (c *routedConn) CancelRequest(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled = append(c.cancelled, id)
	return true
}

func (c *routedConn) lastRoute() *transport.Route {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.routes[len(c.routes)-1]
}

// newModernSession starts a session with lifecycle life on a pipe, routed
// (like HTTP) when routed is set.
func newModernSession(t *testing.T, life Lifecycle, routed bool, opts Options) (*Session, *fakeServer, *warnings, *routedConn) {
	t.Helper()
	client, server := transport.Pipe()
	var rc *routedConn
	conn := client
	if routed {
		rc = &routedConn{Conn: client}
		conn = rc
	}
	w := &warnings{t: t, ch: make(chan string, 1000)}
	opts.OnWarning = w.add
	opts.Lifecycle = life
	s := NewSession(conn, opts)
	srv := newFakeServer(t, server)
	t.Cleanup(func() { s.Close() })
	return s, srv, w, rc
}

func metaOf(t *testing.T, m *jsonrpc.Message) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p.Meta
}

const discoverOK = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":1000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`

// openModern runs Open against the fake server's discover answer.
func openModern(t *testing.T, s *Session, srv *fakeServer) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- s.life.Open(context.Background(), s) }()
	srv.reply(srv.nextRequest("server/discover"), discoverOK)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestModernDecorate(t *testing.T) {
	m := &Modern{ClientInfo: Implementation{Name: "mcpx", Version: "1"}, Capabilities: json.RawMessage(`{"roots":{}}`), LogLevel: "info"}
	got, err := m.Decorate("tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcpx","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/logLevel":"info"}}`
	if !jsonEqual(t, got, []byte(want)) {
		t.Errorf("got %s", got)
	}
	// What the caller put in _meta stays.
	got, _ = m.Decorate("tools/call", json.RawMessage(`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","progressToken":7}}`))
	if !strings.Contains(string(got), `"io.modelcontextprotocol/protocolVersion":"2099-01-01"`) || !strings.Contains(string(got), `"progressToken":7`) {
		t.Errorf("caller's _meta lost: %s", got)
	}
	// Notifications carry no per-request fields.
	got, _ = m.Decorate("notifications/cancelled", json.RawMessage(`{"requestId":1}`))
	if string(got) != `{"requestId":1}` {
		t.Errorf("notification decorated: %s", got)
	}
}

func TestModernOpen(t *testing.T) {
	s, srv, _, _ := newModernSession(t, &Modern{Reason: "test"}, false, Options{})
	openModern(t, s, srv)
	info := s.Server()
	if info.Era != "modern" || info.Implementation.Name != "fake" || info.ProtocolVersion != "2026-07-28" ||
		info.TTLMs == nil || *info.TTLMs != 1000 || info.CacheScope != "public" || info.EraReason != "test" {
		t.Errorf("server info: %+v", info)
	}
}

// A multi-round request: the embedded request is answered by the handler,
// the retry is a new request with inputResponses and the exact request
// state, and it ends when the result is complete.
func TestModernMultiRound(t *testing.T) {
	asked := make(chan *jsonrpc.Message, 4)
	handlers := map[string]RequestHandler{
		"elicitation/create": func(ctx context.Context, req *jsonrpc.Message) (any, error) {
			asked <- req
			return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
		},
	}
	var shown []string
	var mu sync.Mutex
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(n string) { mu.Lock(); shown = append(shown, n); mu.Unlock() }}, false, Options{
		Handlers: handlers,
		OnServerRequest: func(req *jsonrpc.Message, res json.RawMessage, err *jsonrpc.Error) {
			mu.Lock()
			shown = append(shown, "answered "+req.Method+" "+string(res))
			mu.Unlock()
		},
	})
	openModern(t, s, srv)
	ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "greet", "arguments": map[string]string{"x": "1"}})
	first := srv.nextRequest("tools/call")
	// The state is opaque: escapes and all, it must come back byte for byte.
	const state = `"st\u0061te <&> \"q\""`
	srv.reply(first, `{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":`+state+`}`)
	if m := <-asked; m.Method != "elicitation/create" || !strings.Contains(string(m.Params), "Name?") {
		t.Errorf("handler got %s", m.Raw)
	}
	retry := srv.nextRequest("tools/call")
	if retry.ID.String() == first.ID.String() {
		t.Errorf("the retry reused id %s", retry.ID)
	}
	var p struct {
		Name           string                     `json:"name"`
		Arguments      json.RawMessage            `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage            `json:"requestState"`
	}
	if err := json.Unmarshal(retry.Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "greet" || string(p.Arguments) != `{"x":"1"}` || string(p.RequestState) != state ||
		string(p.InputResponses["who"]) != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Errorf("retry params: %s", retry.Params)
	}
	if len(metaOf(t, retry)) == 0 {
		t.Error("the retry has no _meta")
	}
	srv.reply(retry, `{"resultType":"complete","content":[{"type":"text","text":"hi Ada"}]}`)
	r := result(t, ch)
	if r.err != nil || !strings.Contains(string(r.res), "hi Ada") {
		t.Fatalf("result %s, %v", r.res, r.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !containsAll(strings.Join(shown, "\n"), `tools/call: the server needs input (round 1 of at most 10): elicitation/create (who)`, `answered elicitation/create {"action":"accept"`) {
		t.Errorf("rounds not shown: %q", shown)
	}
}

// A sampling request embedded in an input round that the person declines
// (spec 2026-07-28: client/sampling, "Error Handling") gets no response:
// the retry leaves it out, and what was answered is shown as the
// refusal. Asked again, it ends the call without asking the person again.
func TestModernDeclinedSampling(t *testing.T) {
	person := &scriptedPerson{} // an empty reply: declined
	smp := sampler(t, "prompt", person)
	var shown []string
	var mu sync.Mutex
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{
		Handlers: map[string]RequestHandler{mcp.MethodSamplingCreateMessage: Adapt(smp.Handle)},
		OnInputRequest: func(req *jsonrpc.Message, res json.RawMessage, err *jsonrpc.Error) {
			mu.Lock()
			shown = append(shown, fmt.Sprintf("%s %s %v", req.Method, res, err))
			mu.Unlock()
		},
		OnServerRequest: func(req *jsonrpc.Message, res json.RawMessage, err *jsonrpc.Error) {
			t.Errorf("an input request shown as a server request: %s", req.Method)
		},
	})
	openModern(t, s, srv)
	ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "ask"})
	round := `{"resultType":"input_required","inputRequests":{"llm":{"method":"sampling/createMessage","params":` + samplingParams + `}},"requestState":"s"}`
	srv.reply(srv.nextRequest("tools/call"), round)
	retry := srv.nextRequest("tools/call")
	if strings.Contains(string(retry.Params), `"llm"`) || !strings.Contains(string(retry.Params), `"requestState":"s"`) {
		t.Errorf("retry params: %s", retry.Params)
	}
	srv.reply(retry, round)
	if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), `asked again for input "llm"`) || !strings.Contains(r.err.Error(), "User rejected sampling request") {
		t.Errorf("err %v", r.err)
	} else if strings.Contains(r.err.Error(), "server error") || errors.As(r.err, new(*jsonrpc.Error)) {
		// The refusal is mcpx's; the server never saw it.
		t.Errorf("err %v reads as the server's", r.err)
	} else if !errors.Is(r.err, ErrProtocolViolation) {
		// Asking again for what mcpx said it could not give is the
		// server's departure from the protocol.
		t.Errorf("err %v is not an ErrProtocolViolation", r.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shown) != 2 || !strings.Contains(shown[0], "sampling/createMessage") || !strings.Contains(shown[0], "User rejected sampling request") {
		t.Errorf("shown %q", shown)
	}
	if len(person.samples) != 2 {
		t.Errorf("the person was asked %d times", len(person.samples))
	}
}

// Without inputRequests the retry carries only the state; without a state
// it carries none. The rounds are capped.
func TestModernRoundsCapped(t *testing.T) {
	s, srv, _, _ := newModernSession(t, &Modern{MaxRounds: 2, OnNote: func(string) {}}, false, Options{})
	openModern(t, s, srv)
	ch := goCall(context.Background(), s, "prompts/get", map[string]any{"name": "p"})
	for i := 0; i < 3; i++ {
		m := srv.nextRequest("prompts/get")
		if i > 0 && (!strings.Contains(string(m.Params), `"requestState":"s"`) || strings.Contains(string(m.Params), "inputResponses")) {
			t.Errorf("retry %d params: %s", i, m.Params)
		}
		srv.reply(m, `{"resultType":"input_required","requestState":"s"}`)
	}
	r := result(t, ch)
	if r.err == nil || !strings.Contains(r.err.Error(), "still needs input after 2 rounds") {
		t.Fatalf("err %v", r.err)
	}
	if errors.Is(r.err, ErrProtocolViolation) {
		// mcpx's bound, which a server asking on may well be within.
		t.Errorf("err %v is an ErrProtocolViolation", r.err)
	}
}

// An input_required answer with neither input requests nor state leaves
// nothing to retry with: it ends the call at once, saying so, instead of
// sending the same request again round after round.
func TestModernInputRequiredWithNothing(t *testing.T) {
	for _, answer := range []string{`{"resultType":"input_required"}`, `{"resultType":"input_required","inputRequests":{}}`} {
		s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{})
		openModern(t, s, srv)
		ch := goCall(context.Background(), s, "resources/read", map[string]any{"uri": "a://b"})
		srv.reply(srv.nextRequest("resources/read"), answer)
		r := result(t, ch)
		if r.err == nil || !strings.Contains(r.err.Error(), "neither input requests nor requestState") || !errors.Is(r.err, ErrProtocolViolation) {
			t.Fatalf("%s: err %v", answer, r.err)
		}
		srv.quietUntil(mark(t, s))
		s.Close()
	}
}

func TestModernResultTypes(t *testing.T) {
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{})
	openModern(t, s, srv)
	// input_required is allowed only on tools/call, prompts/get and
	// resources/read.
	ch := goCall(context.Background(), s, "tools/list", nil)
	srv.reply(srv.nextRequest("tools/list"), `{"resultType":"input_required","requestState":"x"}`)
	if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), "allows only for tools/call") || !errors.Is(r.err, ErrProtocolViolation) {
		t.Errorf("err %v", r.err)
	}
	ch = goCall(context.Background(), s, "tools/call", map[string]any{"name": "x"})
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"mystery"}`)
	if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), `resultType "mystery"`) || !errors.Is(r.err, ErrProtocolViolation) {
		t.Errorf("err %v", r.err)
	}
	// A resultType that is not a string is no value mcpx recognizes
	// either: "A resultType of any value unrecognized by the client MUST
	// be considered invalid" (spec 2026-07-28: basic/index, "ResultType").
	for _, rt := range []string{`1`, `true`, `{"type":"complete"}`, `["complete"]`} {
		ch = goCall(context.Background(), s, "tools/call", map[string]any{"name": "x"})
		srv.reply(srv.nextRequest("tools/call"), `{"resultType":`+rt+`,"content":[]}`)
		if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), "resultType "+rt) || !errors.Is(r.err, ErrProtocolViolation) {
			t.Errorf("resultType %s: err %v", rt, r.err)
		}
	}
	// No resultType: complete.
	ch = goCall(context.Background(), s, "tools/call", map[string]any{"name": "x"})
	srv.reply(srv.nextRequest("tools/call"), `{"content":[]}`)
	if r := result(t, ch); r.err != nil {
		t.Errorf("err %v", r.err)
	}
}

// UnsupportedProtocolVersion: one retry with a version the server names,
// as a new request; a second refusal is final.
func TestModernVersionRetry(t *testing.T) {
	s, srv, _, rc := newModernSession(t, &Modern{ProtocolVersion: "2099-01-01", OnNote: func(string) {}}, true, Options{})
	errc := make(chan error, 1)
	go func() { errc <- s.life.Open(context.Background(), s) }()
	m := srv.nextRequest("server/discover")
	if v := string(metaOf(t, m)[mcp.MetaProtocolVersion]); v != `"2099-01-01"` {
		t.Errorf("version %s", v)
	}
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25"],"requested":"2099-01-01"}}}`)
	m2 := srv.nextRequest("server/discover")
	if v := string(metaOf(t, m2)[mcp.MetaProtocolVersion]); v != `"2026-07-28"` || m2.ID.String() == m.ID.String() {
		t.Errorf("retry %s", m2.Raw)
	}
	if r := rc.lastRoute(); r.ProtocolVersion != "2026-07-28" {
		t.Errorf("the header version %q does not follow the body", r.ProtocolVersion)
	}
	srv.reply(m2, discoverOK)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	ch := goCall(context.Background(), s, "tools/list", nil)
	for i := 0; i < 2; i++ {
		m := srv.nextRequest("tools/list")
		srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`)
	}
	r := result(t, ch)
	var uv *UnsupportedVersionError
	var rpcErr *jsonrpc.Error
	if !errors.As(r.err, &uv) || !errors.As(r.err, &rpcErr) || !strings.Contains(r.err.Error(), "UnsupportedProtocolVersion") {
		t.Fatalf("err %v", r.err)
	}
}

// Over a connection with headers: routes name the method and the tool, and
// carry x-mcp-header arguments; a tool with an invalid annotation is never
// called; HeaderMismatch re-lists the tools and retries once.
func TestModernRoutes(t *testing.T) {
	s, srv, _, rc := newModernSession(t, &Modern{OnNote: func(string) {}}, true, Options{})
	openModern(t, s, srv)
	tools := `{"resultType":"complete","tools":[
		{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"flag":{"type":"boolean","x-mcp-header":"Flag"},"nested":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}},
		{"name":"bad","inputSchema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"x-mcp-header":"A"}}}}]}`
	ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "geo", "arguments": map[string]any{"region": "eu", "n": 42, "flag": false, "nested": map[string]any{"zone": "z 1 "}}})
	srv.reply(srv.nextRequest("tools/list"), tools)
	call := srv.nextRequest("tools/call")
	r := rc.lastRoute()
	want := []transport.RouteParam{{Name: "Region", Value: "eu"}, {Name: "N", Value: "42"}, {Name: "Flag", Value: "false"}, {Name: "Zone", Value: "z 1 "}}
	if r.Method != "tools/call" || r.Name != "geo" || r.ProtocolVersion != "2026-07-28" || len(r.Params) != len(want) {
		t.Fatalf("route %+v", r)
	}
	for _, w := range want {
		found := false
		for _, p := range r.Params {
			found = found || p == w
		}
		if !found {
			t.Errorf("route lacks %+v: %+v", w, r.Params)
		}
	}
	// Mismatch: the tools are listed again and the call retried once.
	srv.send(`{"jsonrpc":"2.0","id":` + call.ID.String() + `,"error":{"code":-32020,"message":"Header mismatch"}}`)
	srv.reply(srv.nextRequest("tools/list"), tools)
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"complete","content":[]}`)
	if res := result(t, ch); res.err != nil {
		t.Fatal(res.err)
	}
	// The invalid tool: refused before anything is sent.
	ch = goCall(context.Background(), s, "tools/call", map[string]any{"name": "bad"})
	res := result(t, ch)
	var it *InvalidToolError
	if !errors.As(res.err, &it) || it.Tool != "bad" {
		t.Fatalf("err %v", res.err)
	}
	// Names of the other routed methods.
	for method, params := range map[string]string{"resources/read": `{"uri":"file:///a b"}`, "prompts/get": `{"name":"p"}`, "tasks/get": `{"taskId":"t1"}`} {
		ch := goCall(context.Background(), s, method, json.RawMessage(params))
		srv.reply(srv.nextRequest(method), `{"resultType":"complete","taskId":"t1","status":"working","contents":[],"messages":[]}`)
		result(t, ch)
		if r := rc.lastRoute(); r.Method != method || r.Name == "" {
			t.Errorf("%s route %+v", method, r)
		}
	}
}

// TestModernRoutesFromAnIncompleteList: a tools/list that stops early (a
// nextCursor that is not a string) still gives the headers of the tools on
// the pages it read.
func TestModernRoutesFromAnIncompleteList(t *testing.T) {
	var notes []string
	s, srv, _, rc := newModernSession(t, &Modern{OnNote: func(n string) { notes = append(notes, n) }}, true, Options{})
	openModern(t, s, srv)
	ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "geo", "arguments": map[string]any{"region": "eu"}})
	srv.reply(srv.nextRequest("tools/list"), `{"resultType":"complete","nextCursor":2,"tools":[
		{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}`)
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"complete","content":[]}`)
	if res := result(t, ch); res.err != nil {
		t.Fatal(res.err)
	}
	if r := rc.lastRoute(); len(r.Params) != 1 || r.Params[0] != (transport.RouteParam{Name: "Region", Value: "eu"}) {
		t.Errorf("route %+v, want the Region header", r)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "nextCursor is 2, not a string") {
		t.Errorf("notes %q, want the list's failure", notes)
	}
}

// In the stateless era a cancelled request is cancelled by the transport
// when it can (closing the stream) and with notifications/cancelled when it
// cannot (stdio).
func TestModernCancellation(t *testing.T) {
	for _, routed := range []bool{true, false} {
		s, srv, _, rc := newModernSession(t, &Modern{OnNote: func(string) {}}, routed, Options{})
		openModern(t, s, srv)
		ctx, cancel := context.WithCancel(context.Background())
		ch := goCall(ctx, s, "tools/call", map[string]any{"name": "slow"})
		if routed {
			// Over headers, the tools are listed first (x-mcp-header).
			srv.reply(srv.nextRequest("tools/list"), `{"tools":[]}`)
		}
		m := srv.nextRequest("tools/call")
		cancel()
		if r := result(t, ch); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("err %v", r.err)
		}
		if routed {
			srv.quietUntil(mark(t, s))
			rc.mu.Lock()
			if len(rc.cancelled) != 1 || rc.cancelled[0] != m.ID.String() {
				t.Errorf("cancelled %v, want [%s]", rc.cancelled, m.ID)
			}
			rc.mu.Unlock()
			continue
		}
		n := srv.next()
		if n.Method != "notifications/cancelled" || !strings.Contains(string(n.Params), `"requestId":`+m.ID.String()) {
			t.Errorf("sent %s", n.Raw)
		}
	}
}

// Both ways a server ends a subscription, and the acknowledgement.
func TestListenEnds(t *testing.T) {
	var notes []*jsonrpc.Message
	var nmu sync.Mutex
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{
		OnNotification: func(m *jsonrpc.Message) { nmu.Lock(); notes = append(notes, m); nmu.Unlock() },
	})
	openModern(t, s, srv)
	acks := make(chan ListenFilter, 4)
	filter := ListenFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"a://b"}}
	opts := ListenOptions{OnAck: func(g ListenFilter, _ *jsonrpc.Message) { acks <- g }}

	errc := make(chan error, 1)
	go func() { errc <- s.Listen(context.Background(), filter, opts) }()
	m := srv.nextRequest("subscriptions/listen")
	if !strings.Contains(string(m.Params), `"notifications":{"toolsListChanged":true,"resourceSubscriptions":["a://b"]}`) {
		t.Errorf("filter: %s", m.Params)
	}
	sub := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + m.ID.String() + `}`
	srv.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{` + sub + `,"notifications":{"toolsListChanged":true}}}`)
	if g := <-acks; !g.ToolsListChanged || len(filter.Missing(g).ResourceSubscriptions) != 1 {
		t.Errorf("ack %+v", g)
	}
	srv.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + sub + `}}`)
	srv.reply(m, `{"resultType":"complete",`+sub+`}`)
	var ended *ListenEndedError
	if err := <-errc; !errors.As(err, &ended) || !ended.Graceful {
		t.Fatalf("err %v", err)
	}

	go func() { errc <- s.Listen(context.Background(), filter, opts) }()
	m = srv.nextRequest("subscriptions/listen")
	srv.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + m.ID.String() + `,"reason":"bye"}}`)
	if err := <-errc; !errors.As(err, &ended) || ended.Graceful || ended.Reason != "bye" {
		t.Fatalf("err %v", err)
	}

	// The person ends it: nil, and the server is told.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errc <- s.Listen(ctx, filter, opts) }()
	m = srv.nextRequest("subscriptions/listen")
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := srv.next(); n.Method != "notifications/cancelled" {
		t.Errorf("sent %s", n.Raw)
	}
	nmu.Lock()
	defer nmu.Unlock()
	var methods []string
	for _, n := range notes {
		methods = append(methods, n.Method)
	}
	if got := strings.Join(methods, ","); !strings.HasPrefix(got, "notifications/tools/list_changed") || strings.Contains(got, "acknowledged") {
		t.Errorf("notifications delivered: %s", got)
	}
}

// What a server must not send on a subscription is warned about, and
// still shown: a notification before the acknowledgement, a type or a
// resource the filter did not ask for, a request-scoped log message. What
// was asked for, after the acknowledgement, draws no warning.
func TestListenWarnsAboutWhatTheServerMustNotSend(t *testing.T) {
	var delivered []string
	var mu sync.Mutex
	s, srv, w, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{
		OnNotification: func(m *jsonrpc.Message) { mu.Lock(); delivered = append(delivered, m.Method); mu.Unlock() },
	})
	openModern(t, s, srv)
	filter := ListenFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"a://b"}}
	errc := make(chan error, 1)
	go func() { errc <- s.Listen(context.Background(), filter, ListenOptions{}) }()
	m := srv.nextRequest("subscriptions/listen")
	sub := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + m.ID.String() + `}`
	other := `"_meta":{"io.modelcontextprotocol/subscriptionId":"someone-else"}`
	srv.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + sub + `}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{` + sub + `,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["a://b"]}}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + sub + `}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{` + sub + `,"uri":"a://b"}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{` + other + `}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{` + sub + `}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{` + sub + `,"uri":"a://other"}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{` + sub + `,"level":"info","data":"x"}}`)
	srv.reply(m, `{"resultType":"complete",`+sub+`}`)
	if err := <-errc; err == nil {
		t.Fatal("the graceful end was not reported")
	}
	w.expect("sent notifications/tools/list_changed on a subscription before acknowledging it")
	w.expect(`sent notifications/prompts/list_changed for subscription "someone-else", which mcpx never opened`)
	w.expect("sent notifications/prompts/list_changed on a subscription that did not ask for prompts list changes")
	w.expect(`sent notifications/resources/updated on a subscription that did not ask for updates of "a://other"`)
	w.expect("sent a log message, though no request of mcpx's asked for one")
	w.expect("without declaring the logging capability")
	w.expect("sent notifications/message on a subscription: it belongs on the response stream of the request")
	w.none()
	mu.Lock()
	defer mu.Unlock()
	if len(delivered) != 7 {
		t.Errorf("delivered %q, want every notification but the acknowledgement", delivered)
	}
}

// A 2026-07-28 server's notification that names a subscription mcpx
// never opened, and a change notification that names none, are warned
// about, once a kind, and shown; one on a subscription of mcpx's, open or
// ended (what the server sent before it knew), is not. On a held
// session's connection, where other clients have subscriptions, nothing
// is.
func TestNotificationOutsideTheSubscriptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		life *Modern
		warn bool
	}{
		{"own connection", &Modern{}, true},
		{"held session", &Modern{Shared: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan string, 16)
			tc.life.OnNote = func(string) {}
			s, srv, w, _ := newModernSession(t, tc.life, false, Options{OnNotification: func(m *jsonrpc.Message) { got <- m.Method }})
			openModern(t, s, srv)
			shown := func(n string) {
				t.Helper()
				srv.send(n)
				select {
				case <-got:
				case <-time.After(wait):
					t.Fatalf("not shown: %s", n)
				}
			}
			expect := func(subs ...string) {
				t.Helper()
				if tc.warn {
					w.expect(subs...)
				}
				w.none()
			}
			ctx, cancel := context.WithCancel(context.Background())
			acked := make(chan struct{}, 1)
			errc := make(chan error, 1)
			go func() {
				errc <- s.Listen(ctx, ListenFilter{ToolsListChanged: true}, ListenOptions{OnAck: func(ListenFilter, *jsonrpc.Message) { acked <- struct{}{} }})
			}()
			m := srv.nextRequest("subscriptions/listen")
			sub := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + m.ID.String() + `}`
			srv.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{` + sub + `,"notifications":{"toolsListChanged":true}}}`)
			<-acked
			shown(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + sub + `}}`)
			// The id echoed as a string is still the subscription's.
			shown(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"` + m.ID.String() + `"}}}`)
			w.none()

			other := `"_meta":{"io.modelcontextprotocol/subscriptionId":999}`
			shown(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + other + `}}`)
			expect("sent notifications/tools/list_changed for subscription 999, which mcpx never opened", "basic/patterns/subscriptions")
			shown(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + other + `}}`)
			w.none() // once
			shown(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"a://b"}}`)
			expect("sent notifications/resources/updated without io.modelcontextprotocol/subscriptionId", "basic/patterns/subscriptions")
			shown(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"a://b"}}`)
			w.none() // once
			shown(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
			expect("sent notifications/prompts/list_changed without io.modelcontextprotocol/subscriptionId")

			cancel()
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if n := srv.next(); n.Method != "notifications/cancelled" {
				t.Fatalf("sent %s", n.Raw)
			}
			// Sent before the server knew the subscription ended.
			shown(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{` + sub + `}}`)
			w.none()
		})
	}
}

// A log message when no request asked for one breaks a MUST of
// 2026-07-28 and is warned about; one asked for (--log-level) is not, nor
// one on a connection shared with other clients, who may have asked.
func TestModernUnaskedLogMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		life *Modern
		warn bool
	}{
		{"no level", &Modern{}, true},
		{"--log-level", &Modern{LogLevel: "info"}, false},
		{"held session", &Modern{Shared: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.life.OnNote = func(string) {}
			s, srv, w, _ := newModernSession(t, tc.life, false, Options{})
			openModern(t, s, srv)
			ch := goCall(context.Background(), s, "tools/list", nil)
			m := srv.nextRequest("tools/list")
			srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)
			srv.reply(m, `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[]}`)
			if r := result(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
			if tc.warn {
				w.expect("sent a log message, though no request of mcpx's asked for one", "server/utilities/logging")
			}
			// The server declares no logging capability (discoverOK).
			w.expect("without declaring the logging capability")
			w.none()
		})
	}
}

// A cacheable result without caching hints breaks a MUST of 2026-07-28:
// warned about once a session, naming what is missing. Results of other
// requests need none.
func TestModernCacheHintsMissing(t *testing.T) {
	s, srv, w, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{})
	openModern(t, s, srv) // discoverOK has both
	w.none()
	ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "x"})
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"complete","content":[]}`)
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	w.none()
	for _, answer := range []string{`{"resultType":"complete","ttlMs":5,"tools":[]}`, `{"resultType":"complete","tools":[]}`} {
		ch = goCall(context.Background(), s, "tools/list", nil)
		srv.reply(srv.nextRequest("tools/list"), answer)
		if r := result(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
	}
	w.expect("the server's tools/list result has no cacheScope", "server/utilities/caching")
	w.none() // once

	// server/discover's, once it is a DiscoverResult.
	s, srv, w, _ = newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{})
	errc := make(chan error, 1)
	go func() { errc <- s.life.Open(context.Background(), s) }()
	srv.reply(srv.nextRequest("server/discover"), `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}`)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	w.expect("the server's server/discover result has no ttlMs or cacheScope")
	w.none()
}

// The acknowledgement of a subscription mcpx ended before the server
// acknowledged it (the REPL listening again with a new filter) is not
// shown as a notification; what the server sent on it is.
func TestListenLateAcknowledgement(t *testing.T) {
	got := make(chan string, 8)
	s, srv, w, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{
		OnNotification: func(m *jsonrpc.Message) { got <- m.Method + " " + string(m.Params) },
	})
	openModern(t, s, srv)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Listen(ctx, ListenFilter{ToolsListChanged: true}, ListenOptions{}) }()
	m := srv.nextRequest("subscriptions/listen")
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := srv.next(); n.Method != "notifications/cancelled" {
		t.Fatalf("sent %s", n.Raw)
	}
	sub := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + m.ID.String() + `}`
	srv.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{` + sub + `,"notifications":{"toolsListChanged":true}}}`)
	srv.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + sub + `}}`)
	if n := recv(t, got); !strings.HasPrefix(n, "notifications/tools/list_changed") {
		t.Errorf("delivered %s first", n)
	}
	w.none()
	// Another subscription's acknowledgement nobody waits for is shown,
	// after a warning: mcpx opened no such subscription.
	srv.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"other"},"notifications":{}}}`)
	if n := recv(t, got); !strings.HasPrefix(n, "notifications/subscriptions/acknowledged") {
		t.Errorf("delivered %s", n)
	}
	w.expect(`sent notifications/subscriptions/acknowledged for subscription "other", which mcpx never opened`)
	w.none()
}

// A task handle is polled with tasks/get, honouring pollIntervalMs, until
// it ends; its inlined result is the call's result.
func TestModernTaskPolling(t *testing.T) {
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{
		Handlers: map[string]RequestHandler{"elicitation/create": func(ctx context.Context, req *jsonrpc.Message) (any, error) {
			return json.RawMessage(`{"action":"accept","content":{"ok":true}}`), nil
		}},
	})
	openModern(t, s, srv)
	ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "job"})
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":10}`)
	start := time.Now()
	g := srv.nextRequest("tasks/get")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("poll after %s", d)
	}
	srv.reply(g, `{"resultType":"complete","taskId":"t1","status":"input_required","pollIntervalMs":10,"inputRequests":{"k":{"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}}}`)
	u := srv.nextRequest("tasks/update")
	if !strings.Contains(string(u.Params), `"taskId":"t1"`) || !strings.Contains(string(u.Params), `"inputResponses":{"k":{"action":"accept","content":{"ok":true}}}`) {
		t.Errorf("update %s", u.Params)
	}
	srv.reply(u, `{"resultType":"complete"}`)
	srv.reply(srv.nextRequest("tasks/get"), `{"resultType":"complete","taskId":"t1","status":"completed","result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`)
	r := result(t, ch)
	if r.err != nil || !strings.Contains(string(r.res), `"done"`) {
		t.Fatalf("%s %v", r.res, r.err)
	}
}

// Auto probes with server/discover and picks the era from the answer.
func TestAutoProbe(t *testing.T) {
	legacyInit := `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"old","version":"1"}}`
	cases := []struct {
		name    string
		answer  func(srv *fakeServer, m *jsonrpc.Message)
		era     string
		version string
	}{
		{"discover answers", func(srv *fakeServer, m *jsonrpc.Message) { srv.reply(m, discoverOK) }, "modern", ""},
		{"method not found", func(srv *fakeServer, m *jsonrpc.Message) {
			srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32601,"message":"Method not found"}}`)
		}, "legacy", "2025-11-25"},
		{"silence", func(srv *fakeServer, m *jsonrpc.Message) {}, "legacy", "2025-11-25"},
		{"only legacy versions", func(srv *fakeServer, m *jsonrpc.Message) {
			srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32022,"message":"no","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}}`)
		}, "legacy", "2025-06-18"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := &EraCache{}
			a := &Auto{Modern: &Modern{OnNote: func(string) {}}, Legacy: &Legacy{}, Cache: cache, Target: "x", ProbeTimeout: 100 * time.Millisecond}
			s, srv, _, _ := newModernSession(t, a, false, Options{})
			errc := make(chan error, 1)
			go func() { errc <- a.Open(context.Background(), s) }()
			c.answer(srv, srv.nextRequest("server/discover"))
			if c.era == "legacy" {
				init := srv.nextRequest("initialize")
				if !strings.Contains(string(init.Params), `"protocolVersion":"`+c.version+`"`) {
					t.Errorf("initialize %s", init.Params)
				}
				if _, ok := metaOf(t, init)[mcp.MetaProtocolVersion]; ok {
					t.Error("initialize carries modern _meta")
				}
				srv.reply(init, strings.Replace(legacyInit, "2025-11-25", c.version, 1))
				if n := srv.next(); n.Method != "notifications/initialized" {
					t.Errorf("sent %s", n.Raw)
				}
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			info := s.Server()
			if info.Era != c.era || !strings.HasPrefix(info.EraReason, "auto-detected") {
				t.Errorf("info %+v", info)
			}
			if d, ok := cache.Get("x"); !ok || d.Era != c.era {
				t.Errorf("cache %+v %v", d, ok)
			}
			// No cancellation for the probe, even when it timed out.
			srv.quietUntil(mark(t, s))
		})
	}
}

// A DiscoverResult (or -32022) naming only stateless versions mcpx does not
// speak is a modern server with no version in common: Auto reports it and
// does not fall back to initialize.
func TestAutoNoCommonModernVersion(t *testing.T) {
	for name, answer := range map[string]string{
		"result": `"result":{"supportedVersions":["2099-01-01"],"capabilities":{}}`,
		"error":  `"error":{"code":-32022,"message":"no","data":{"supported":["2099-01-01"],"requested":"2026-07-28"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			a := &Auto{Modern: &Modern{OnNote: func(string) {}}, Legacy: &Legacy{}, ProbeTimeout: wait}
			s, srv, _, _ := newModernSession(t, a, false, Options{})
			errc := make(chan error, 1)
			go func() { errc <- a.Open(context.Background(), s) }()
			m := srv.nextRequest("server/discover")
			srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,` + answer + `}`)
			var err error
			select {
			case err = <-errc:
			case fr := <-srv.in:
				t.Fatalf("the session sent %s after the probe", fr.Data)
			case <-time.After(wait):
				t.Fatal("Open did not return")
			}
			var uv *UnsupportedVersionError
			if !errors.As(err, &uv) || uv.HandshakeEra() || !strings.Contains(err.Error(), "2099-01-01") {
				t.Fatalf("err = %v, want an UnsupportedVersionError naming 2099-01-01", err)
			}
		})
	}
}

// The probe chose the handshake era (server/discover unanswered in time),
// but initialize is refused: Auto asks server/discover once more and goes
// on in the modern era when it answers (the first answer came late). When
// it fails too, a refusal as by a 2026-07-28 server says both eras failed,
// and any other refusal is returned as it came.
func TestAutoRediscover(t *testing.T) {
	modernRefusal := `"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}`
	otherRefusal := `"error":{"code":0,"message":"duplicate initialize"}`
	for _, tc := range []struct {
		name, refusal string
		answers       bool
		check         func(t *testing.T, err error)
	}{
		{"modern refusal, answered", modernRefusal, true, nil},
		{"other refusal, answered", otherRefusal, true, nil},
		{"modern refusal, fails", modernRefusal, false, func(t *testing.T, err error) {
			var ee *EraError
			if !errors.As(err, &ee) || ee.Other == nil || !containsAll(err.Error(), "-32022", "fails too", "not a DiscoverResult") {
				t.Fatalf("err = %v", err)
			}
		}},
		{"other refusal, fails", otherRefusal, false, func(t *testing.T, err error) {
			var ee *EraError
			if errors.As(err, &ee) || !strings.Contains(err.Error(), "duplicate initialize") {
				t.Fatalf("err = %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := &EraCache{}
			a := &Auto{Modern: &Modern{OnNote: func(string) {}}, Legacy: &Legacy{}, Cache: cache, Target: "x", ProbeTimeout: 50 * time.Millisecond}
			s, srv, _, _ := newModernSession(t, a, false, Options{})
			errc := make(chan error, 1)
			go func() { errc <- a.Open(context.Background(), s) }()
			srv.nextRequest("server/discover") // not answered in time
			init := srv.nextRequest("initialize")
			srv.send(`{"jsonrpc":"2.0","id":` + init.ID.String() + `,` + tc.refusal + `}`)
			again := srv.nextRequest("server/discover")
			if _, ok := metaOf(t, again)[mcp.MetaProtocolVersion]; !ok {
				t.Errorf("the second probe lacks the modern _meta: %s", again.Raw)
			}
			if tc.answers {
				srv.reply(again, discoverOK)
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
				if info := s.Server(); info.Era != "modern" || !strings.Contains(info.EraReason, "asked again") {
					t.Errorf("info %+v", info)
				}
				if d, _ := cache.Get("x"); d.Era != "modern" {
					t.Errorf("cached %+v", d)
				}
				return
			}
			srv.reply(again, `{"supportedVersions":"2026-07-28"}`)
			tc.check(t, <-errc)
		})
	}
}

// A server that answers neither server/discover nor initialize is said to.
func TestAutoSilentInBothEras(t *testing.T) {
	a := &Auto{Modern: &Modern{OnNote: func(string) {}}, Legacy: &Legacy{}, ProbeTimeout: 50 * time.Millisecond}
	s, srv, _, _ := newModernSession(t, a, false, Options{Timeout: 50 * time.Millisecond})
	errc := make(chan error, 1)
	go func() { errc <- a.Open(context.Background(), s) }()
	srv.nextRequest("server/discover")
	srv.nextRequest("initialize")
	select {
	case err := <-errc:
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "initialize: no response after 50ms; server/discover, sent first, got none either") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Open did not return")
	}
}

// A version mcpx does not know, asked for and supported by the server, is
// used, with a warning, as the handshake era does.
func TestModernUnknownVersionAccepted(t *testing.T) {
	s, srv, w, _ := newModernSession(t, &Modern{ProtocolVersion: "2099-01-01"}, false, Options{})
	errc := make(chan error, 1)
	go func() { errc <- s.life.Open(context.Background(), s) }()
	srv.reply(srv.nextRequest("server/discover"), `{"supportedVersions":["2099-01-01"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}`)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	w.expect("the server supports protocol version 2099-01-01, which mcpx does not know; going on as with 2026-07-28")
	if v := s.Server().ProtocolVersion; v != "2099-01-01" {
		t.Errorf("version %s", v)
	}
}

// A server/discover result with supportedVersions that is not a
// DiscoverResult comes from a broken modern server, not a handshake-era
// one: the modern era does not suggest the other.
func TestModernOpenMalformedDiscover(t *testing.T) {
	for raw, looksLegacy := range map[string]bool{
		`{"supportedVersions":"2026-07-28"}`: false,
		`{"tools":[]}`:                       true,
	} {
		s, srv, _, _ := newModernSession(t, &Modern{}, false, Options{})
		errc := make(chan error, 1)
		go func() { errc <- s.life.Open(context.Background(), s) }()
		srv.reply(srv.nextRequest("server/discover"), raw)
		err := <-errc
		var ee *EraError
		if err == nil || errors.As(err, &ee) != looksLegacy {
			t.Errorf("%s: err = %v, want an EraError: %v", raw, err, looksLegacy)
		}
	}
}

// refusingConn refuses every write with err, as an HTTP server answering
// with an error status does.
type refusingConn struct {
	transport.Conn
	err error
}

func (c *refusingConn) Write(ctx context.Context, f transport.Frame) error { return c.err }
func (c *refusingConn) CarriesRoutes() bool                                { return true }

// A probe that fails in a way that says nothing of the era (HTTP 5xx) is a
// ProbeError: Auto does not guess an era, and says the probe failed.
// A server that is down (502, 503, 504) is down whatever its era: that
// is no ProbeError, whose advice is to choose an era.
func TestAutoProbeFails(t *testing.T) {
	for status, probe := range map[int]bool{500: true, 501: true, 502: false, 503: false, 504: false} {
		client, _ := transport.Pipe()
		conn := &refusingConn{Conn: client, err: &transport.HTTPError{Method: "POST", URL: "http://x/mcp", Status: status}}
		a := &Auto{Modern: &Modern{OnNote: func(string) {}}, Legacy: &Legacy{}}
		s := NewSession(conn, Options{Lifecycle: a})
		err := a.Open(context.Background(), s)
		s.Close()
		var pe *ProbeError
		var he *transport.HTTPError
		if errors.As(err, &pe) != probe || !errors.As(err, &he) || a.Chosen() != nil {
			t.Errorf("HTTP %d: err = %v, chosen %v", status, err, a.Chosen())
		}
	}
}

// A 2026-07-28 server sends no requests, and its client sends no
// responses: "Servers MUST NOT initiate JSON-RPC requests, and clients do
// not send JSON-RPC responses" (spec 2026-07-28: basic/patterns), "The
// client MUST NOT write JSON-RPC responses" (basic/transports/stdio,
// "Sending Messages"), "The client MUST NOT send JSON-RPC responses"
// (basic/transports/streamable-http, "Sending Messages"). A request a
// server sends all the same (ping, or sampling, which this revision
// carries only inside InputRequiredResult) is shown as the departure it
// is and left unanswered, and no handler is asked.
func TestModernServerRequestsUnanswered(t *testing.T) {
	asked := make(chan string, 4)
	handlers := map[string]RequestHandler{
		"sampling/createMessage": func(ctx context.Context, req *jsonrpc.Message) (any, error) {
			asked <- req.Method
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`), nil
		},
	}
	for _, era := range []string{"modern", "auto"} {
		t.Run(era, func(t *testing.T) {
			var life Lifecycle = &Modern{}
			if era == "auto" {
				life = &Auto{Modern: &Modern{}, Legacy: &Legacy{}, ProbeTimeout: wait}
			}
			s, srv, w, _ := newModernSession(t, life, false, Options{Handlers: handlers})
			openModern(t, s, srv)
			srv.send(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
			srv.send(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`)
			// Answered concurrently, so warned about in either order.
			got := w.expect("not answered", "basic/patterns") + "\n" + w.expect("not answered", "basic/patterns")
			if !containsAll(got, "a ping request", "a sampling/createMessage request") {
				t.Errorf("warnings: %s", got)
			}
			srv.quietUntil(mark(t, s))
			select {
			case m := <-asked:
				t.Errorf("the handler was asked to answer %s", m)
			default:
			}
		})
	}
}

// TestUnsupportedVersionErrorNamesFewVersions: the versions a server says
// it supports are named, at most ten and each cut, so a server's list of
// any length makes one line.
func TestUnsupportedVersionErrorNamesFewVersions(t *testing.T) {
	vs := []string{strings.Repeat("v", 1<<20)}
	for i := range 1000 {
		vs = append(vs, fmt.Sprintf("2000-01-%02d", i%28+1))
	}
	msg := (&UnsupportedVersionError{Requested: "2026-07-28", Supported: vs}).Error()
	if len(msg) > 1000 || !strings.Contains(msg, "… (1048576 bytes), 2000-01-01,") || !strings.HasSuffix(msg, " and 991 more)") {
		t.Errorf("message of %d bytes: %.400q", len(msg), msg)
	}
}

// lossConn reports lost requests, as Streamable HTTP does when a response
// stream ends before its response.
type lossConn struct {
	transport.Conn
	mu   sync.Mutex
	lost func(id string, err error)
}

func (c *lossConn) OnRequestLost(fn func(id string, err error)) {
	c.mu.Lock()
	c.lost = fn
	c.mu.Unlock()
}

func (c *lossConn) lose(t *testing.T, id jsonrpc.ID) {
	t.Helper()
	c.mu.Lock()
	fn := c.lost
	c.mu.Unlock()
	fn(id.LooseKey(), fmt.Errorf("%w: the stream broke", transport.ErrStreamLost))
}

// A request whose response stream is lost is re-issued once, as a new
// request with a new id (spec 2026-07-28: changelog, "A broken response
// stream loses the in-flight request; clients MUST re-issue it"), when it
// only reads; a tools/call, which may have run, is not: its loss is the
// error.
func TestModernLostStreamReissued(t *testing.T) {
	client, server := transport.Pipe()
	lc := &lossConn{Conn: client}
	var mu sync.Mutex
	var notes []string
	life := &Modern{OnNote: func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() }}
	s := NewSession(lc, Options{Lifecycle: life, OnWarning: func(string) {}})
	srv := newFakeServer(t, server)
	t.Cleanup(func() { s.Close() })
	openModern(t, s, srv)

	ch := goCall(context.Background(), s, "resources/read", map[string]any{"uri": "file:///a"})
	first := srv.nextRequest("resources/read")
	lc.lose(t, first.ID)
	again := srv.nextRequest("resources/read")
	if again.ID.Key() == first.ID.Key() {
		t.Errorf("re-issued with the same id %s", again.ID)
	}
	if !jsonEqual(t, first.Params, again.Params) {
		t.Errorf("re-issued with params %s, want %s", again.Params, first.Params)
	}
	srv.reply(again, `{"resultType":"complete","contents":[],"ttlMs":0,"cacheScope":"private"}`)
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	mu.Lock()
	if len(notes) != 1 || !strings.Contains(notes[0], "resources/read: its response stream was lost before the answer; re-issuing it as a new request") {
		t.Errorf("notes %q", notes)
	}
	mu.Unlock()

	// Once only: a second loss is the error.
	ch = goCall(context.Background(), s, "tools/list", nil)
	lc.lose(t, srv.nextRequest("tools/list").ID)
	lc.lose(t, srv.nextRequest("tools/list").ID)
	if r := result(t, ch); !errors.Is(r.err, transport.ErrStreamLost) {
		t.Errorf("tools/list lost twice: %v", r.err)
	}

	ch = goCall(context.Background(), s, "tools/call", map[string]any{"name": "x"})
	lc.lose(t, srv.nextRequest("tools/call").ID)
	if r := result(t, ch); !errors.Is(r.err, transport.ErrStreamLost) {
		t.Errorf("tools/call lost: %v", r.err)
	}
	srv.quietUntil(mark(t, s))
}

// A later round whose response stream is lost is re-issued as it was
// sent, with the input answered and the request state: it was re-issued
// with the first round's params, which started the request over, and a
// person was asked again for what they had answered.
func TestModernLostRoundReissuedAsSent(t *testing.T) {
	client, server := transport.Pipe()
	lc := &lossConn{Conn: client}
	asked := make(chan struct{}, 4)
	handlers := map[string]RequestHandler{
		"elicitation/create": func(ctx context.Context, req *jsonrpc.Message) (any, error) {
			asked <- struct{}{}
			return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
		},
	}
	s := NewSession(lc, Options{Lifecycle: &Modern{OnNote: func(string) {}}, OnWarning: func(string) {}, Handlers: handlers})
	srv := newFakeServer(t, server)
	t.Cleanup(func() { s.Close() })
	openModern(t, s, srv)

	ch := goCall(context.Background(), s, "prompts/get", map[string]any{"name": "p"})
	srv.reply(srv.nextRequest("prompts/get"), `{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s1"}`)
	round := srv.nextRequest("prompts/get")
	lc.lose(t, round.ID)
	again := srv.nextRequest("prompts/get")
	if again.ID.Key() == round.ID.Key() {
		t.Errorf("re-issued with the same id %s", again.ID)
	}
	for _, want := range []string{`"requestState":"s1"`, `"inputResponses":{"who":{"action":"accept"`} {
		if !strings.Contains(string(again.Params), want) {
			t.Errorf("re-issued with params %s, want %s in them", again.Params, want)
		}
	}
	srv.reply(again, `{"resultType":"complete","messages":[]}`)
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	if n := len(asked); n != 1 {
		t.Errorf("the person was asked %d times", n)
	}
	srv.quietUntil(mark(t, s))
}
