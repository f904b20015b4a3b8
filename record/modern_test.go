package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// The stateless 2026-07-28 era ("modern"): routes in traces, verify with
// routes, replay over HTTP without sessions, against the official Go
// SDK's stateless server.

// modernCalls exercise the modern test server: plain tools, a tool with
// x-mcp-header parameters (mirrored into Mcp-Param headers over HTTP; the
// tool answers with the headers it saw, so a verification notices missing
// ones), a multi-round tool (answered by the session's elicitation
// handler), a resource and a prompt.
var modernCalls = []call{
	{method: "tools/list", params: `{}`},
	{method: "tools/call", params: `{"name":"echo","arguments":{"message":"hello"}}`},
	{method: "tools/call", params: `{"name":"region","arguments":{"region":"eu west","priority":7,"query":"q"}}`},
	{method: "tools/call", params: `{"name":"confirm","arguments":{}}`},
	{method: "resources/read", params: `{"uri":"test://doc"}`},
	{method: "prompts/get", params: `{"name":"greet","arguments":{"name":"Ada"}}`},
}

func modernLife() inspector.Lifecycle {
	return &inspector.Modern{
		ClientInfo:   inspector.Implementation{Name: "record-test", Version: "1.0"},
		Capabilities: json.RawMessage(`{"elicitation":{"form":{}}}`),
	}
}

func httpDialer(t *testing.T, u string) func(transport.Observer) transport.Conn {
	return func(obs transport.Observer) transport.Conn {
		c, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
}

func newHTTPConn(t *testing.T, u string) transport.Conn {
	return httpDialer(t, u)(nil)
}

// recordModernHTTP records modernCalls against a fresh stateless server.
func recordModernHTTP(t *testing.T, red RedactOptions) (*Trace, sessionResult, string) {
	t.Helper()
	u := testservers.Modern(t, testservers.NewModernServer(nil, nil))
	tr, res := recordSessionWith(t, httpDialer(t, u), "http", modernCalls, modernLife(), red)
	return tr, res, u
}

func findRoute(t *testing.T, tr *Trace, method, name string) (*transport.Route, []byte) {
	t.Helper()
	for _, e := range tr.Frames() {
		if e.Dir == ClientToServer && e.Route != nil && e.Route.Method == method && e.Route.Name == name {
			return e.Route, e.Data
		}
	}
	t.Fatalf("no recorded %s %q with a route", method, name)
	return nil, nil
}

// reportOf lists a verification's mismatches for a test's failure.
func reportOf(res *VerifyResult) string {
	var b strings.Builder
	for _, m := range res.Mismatches {
		fmt.Fprintf(&b, "%s: %s\n", m.Label(), m.Problem)
		for _, d := range m.Diffs {
			fmt.Fprintf(&b, "    %s: recorded %s, live %s\n", d.Path, d.Recorded, d.Live)
		}
	}
	b.WriteString(res.Summary())
	return b.String()
}

func TestRoundTripModernHTTP(t *testing.T) {
	t.Parallel()
	tr, rec, u := recordModernHTTP(t, RedactOptions{})
	if tr.Header.Minor != Minor {
		t.Errorf("header minor %d, want %d", tr.Header.Minor, Minor)
	}
	if len(rec.serverRequests) != 1 || rec.serverRequests[0] != "elicitation/create" {
		t.Fatalf("the multi-round tool was not answered: %q", rec.serverRequests)
	}
	// Every client frame has its route; none has a session.
	for _, e := range tr.Frames() {
		if e.Meta != nil && e.Meta.SessionID != "" {
			t.Errorf("a modern frame has a session id: %+v", e.Meta)
		}
		if e.Dir != ClientToServer {
			continue
		}
		m := parseMessage(e.Data)
		if e.Route == nil || e.Route.Method != m.Method || e.Route.ProtocolVersion != "2026-07-28" {
			t.Errorf("frame %s: route %+v", e.Data, e.Route)
		}
	}
	r, _ := findRoute(t, tr, "tools/call", "region")
	if len(r.Params) != 2 || r.Params[0] != (transport.RouteParam{Name: "Priority", Value: "7"}) || r.Params[1] != (transport.RouteParam{Name: "Region", Value: "eu west"}) {
		t.Errorf("region's route params %+v", r.Params)
	}

	// Replayed over Streamable HTTP (strictly, twice: each client's
	// server/discover starts the recording over) and over a pipe.
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true, OnDeviation: func(d Deviation) { t.Errorf("deviation: %s", d.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	for i := 0; i < 2; i++ {
		checkSameSession(t, rec, exerciseEra(t, newHTTPConn(t, srv.URL+"/mcp"), modernCalls, modernLife()))
	}
	checkSameSession(t, rec, replayOverPipeEra(t, tr, modernCalls, modernLife()))

	// Verified against the same server, and a changed one.
	if res := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{}); !res.OK() || res.Exchanges != len(modernCalls)+2 {
		t.Fatalf("verify against the same server: %d exchanges\n%s", res.Exchanges, reportOf(res))
	}
	changed := testservers.NewModernServer(nil, nil)
	testservers.ChangeEcho(changed)
	checkFailsOnEcho(t, verifyAgainst(t, tr, newHTTPConn(t, testservers.Modern(t, changed)), VerifyOptions{}))
}

// replayOverPipeEra is replayOverPipe with a lifecycle.
func replayOverPipeEra(t *testing.T, tr *Trace, calls []call, life inspector.Lifecycle) sessionResult {
	t.Helper()
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true, OnDeviation: func(d Deviation) { t.Errorf("deviation: %s", d.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, done := rp.ServePipe(ctx)
	res := exerciseEra(t, conn, calls, life)
	if err := <-done; err != nil {
		t.Errorf("strict replay of the same session: %v", err)
	}
	return res
}

// Without routes, a modern server refuses the recorded requests; an older
// trace (no minor version) gets its routes derived from the messages.
func TestVerifyModernRoutes(t *testing.T) {
	t.Parallel()
	tr, _, u := recordModernHTTP(t, RedactOptions{})
	strip := func(minor int) *Trace {
		c := *tr
		c.Header.Minor = minor
		c.Events = append([]Event(nil), tr.Events...)
		for i := range c.Events {
			c.Events[i].Route = nil
		}
		return &c
	}
	if res := verifyAgainst(t, strip(0), newHTTPConn(t, u), VerifyOptions{}); !res.OK() {
		t.Errorf("verify of a trace older than routes:\n%s", reportOf(res))
	}
	// A minor-1 HTTP trace without routes says the client sent none: so
	// does verify, and the server refuses.
	res := verifyAgainst(t, strip(1), newHTTPConn(t, u), VerifyOptions{})
	if res.OK() || !strings.Contains(reportOf(res), `"code":-32020`) {
		t.Errorf("verify without routes passed or failed otherwise:\n%s", reportOf(res))
	}

	// A value the recording redacted in the header only (its name looked
	// secret) is taken from the frame again, per the recorded tools/list.
	c := *tr
	c.Events = append([]Event(nil), tr.Events...)
	for i, e := range c.Events {
		if e.Route != nil && e.Route.Name == "region" {
			r := *e.Route
			r.Params = []transport.RouteParam{{Name: "Priority", Value: "7"}, {Name: "Region", Value: Placeholder}}
			c.Events[i].Route = &r
		}
	}
	if res := verifyAgainst(t, &c, newHTTPConn(t, u), VerifyOptions{}); !res.OK() {
		t.Errorf("verify with a header redacted:\n%s", reportOf(res))
	}
}

// A trace recorded over stdio verifies over HTTP: the Mcp-Param values
// that were never on the wire come from the recorded x-mcp-header
// annotations (the region tool then sees the headers; it says so).
func TestVerifyModernStdioTraceOverHTTP(t *testing.T) {
	t.Parallel()
	tr, rec := recordSessionWith(t, stdioDialer(t, helper("modern")), "stdio", modernCalls, modernLife(), RedactOptions{})
	checkSameSession(t, rec, replayOverPipeEra(t, tr, modernCalls, modernLife()))
	if res := verifyAgainst(t, tr, startStdio(t, helper("modern")), VerifyOptions{}); !res.OK() {
		t.Fatalf("verify over stdio:\n%s", reportOf(res))
	}
	u := testservers.Modern(t, testservers.NewModernServer(nil, nil))
	res := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Method != "tools/call" || len(res.Mismatches[0].Diffs) != 1 ||
		!strings.Contains(res.Mismatches[0].Diffs[0].Live, "Mcp-Param-Region=eu west Mcp-Param-Priority=7") {
		t.Errorf("want only the region tool's answer to differ (it shows the headers):\n%s", reportOf(res))
	}
}

// Mirrored arguments are redacted with their frame: by --redact paths,
// sensitive names and known secrets, in routes and in the HTTP events that
// name the headers.
func TestModernRouteRedaction(t *testing.T) {
	t.Parallel()
	tr, _, u := recordModernHTTP(t, RedactOptions{Paths: []string{"$.params.arguments.region"}})
	r, data := findRoute(t, tr, "tools/call", "region")
	if !strings.Contains(string(data), `"region":"[redacted]"`) || len(r.Params) != 2 || r.Params[1].Value != Placeholder || r.Params[0].Value != "7" {
		t.Errorf("route %+v of %s", r.Params, data)
	}
	for _, e := range tr.Events {
		if e.Kind == KindHTTP && strings.Contains(e.Text, "eu west") {
			t.Errorf("an HTTP event names the redacted value: %s", e.Text)
		}
		if e.Kind == KindHTTP && strings.Contains(e.Text, "Mcp-Param-Region: [redacted]") {
			data = nil
		}
	}
	if data != nil {
		t.Error("no HTTP event shows the redacted header")
	}
	// Verify sends "[redacted]" in body and header alike: the server
	// accepts the request (and answers with what it saw).
	res := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{})
	if len(res.Mismatches) != 1 || !strings.Contains(res.Mismatches[0].Diffs[0].Live, "Mcp-Param-Region=[redacted]") {
		t.Errorf("verify of the redacted trace:\n%s", reportOf(res))
	}

	red, err := NewRedactor(RedactOptions{Secrets: []string{"TOKEN-123"}})
	if err != nil {
		t.Fatal(err)
	}
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"password":"hunter2","n":42,"flag":true,"k":"a TOKEN-123 b","plain":"x"}}}`)
	route := &transport.Route{ProtocolVersion: "2026-07-28", Method: "tools/call", Name: "q", Params: []transport.RouteParam{
		{Name: "Pw", Value: "hunter2"}, {Name: "Api-Key", Value: "x"}, {Name: "K", Value: "a TOKEN-123 b"}, {Name: "Plain", Value: "x"}, {Name: "N", Value: "42"},
	}}
	out, got := red.FrameRoute(frame, route)
	want := []string{Placeholder, Placeholder, "a [redacted] b", "x", "42"}
	for i, p := range got.Params {
		if p.Value != want[i] {
			t.Errorf("param %s = %q, want %q", p.Name, p.Value, want[i])
		}
	}
	if route.Params[0].Value != "hunter2" {
		t.Error("FrameRoute changed the caller's route")
	}
	if bytes.Contains(out, []byte("hunter2")) || got.Name != "q" || got.Method != "tools/call" {
		t.Errorf("frame %s, route %+v", out, got)
	}
	if _, same := (&Redactor{}).FrameRoute(frame, route); same != route {
		t.Error("a disabled redactor copied the route")
	}
}

// The HTTP replay of a stateless recording behaves as a 2026-07-28 server
// must: headers checked against the body, no sessions, no GET stream,
// unknown methods 404, notifications 202.
func TestReplayModernHTTPValidates(t *testing.T) {
	t.Parallel()
	tr, _, _ := recordModernHTTP(t, RedactOptions{})
	var devs []string
	rp, err := NewReplayer(tr, ReplayOptions{OnDeviation: func(d Deviation) { devs = append(devs, d.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"record-test","version":"1.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	region := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"region","arguments":{"region":"eu west","priority":7,"query":"q"},` + meta + `}}`
	post := func(body string, h map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("a stateless answer carries a session id")
		}
		return resp, string(b)
	}
	good := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "region", "Mcp-Param-Region": "eu west", "Mcp-Param-Priority": "7"}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range good {
			h[a] = b
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	for _, tc := range []struct {
		name   string
		h      map[string]string
		status int
		want   string
	}{
		{"good", good, 200, "Mcp-Param-Region=eu west"},
		{"encoded", with("Mcp-Param-Region", transport.EncodeHeaderValue(" eu west")), 400, `Mcp-Param-Region is \" eu west\"`},
		{"priority as 7.0", with("Mcp-Param-Priority", "7.0"), 200, "Mcp-Param-Region=eu west"},
		{"no version", with("MCP-Protocol-Version", ""), 400, "-32020"},
		{"other version", with("MCP-Protocol-Version", "2026-08-01"), 400, `MCP-Protocol-Version is \"2026-08-01\"`},
		{"other method", with("Mcp-Method", "tools/list"), 400, "Mcp-Method"},
		{"no name", with("Mcp-Name", ""), 400, "Mcp-Name header is missing"},
		{"other name", with("Mcp-Name", "echo"), 400, `Mcp-Name is \"echo\"`},
		{"no param", with("Mcp-Param-Region", ""), 400, "Mcp-Param-Region header is missing"},
		{"other param", with("Mcp-Param-Priority", "8"), 400, "Mcp-Param-Priority"},
	} {
		resp, body := post(region, tc.h)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: HTTP %d %s; want %d and %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	if len(devs) != 8 {
		t.Errorf("%d deviations reported, want 8 (one per refused request): %q", len(devs), devs)
	}

	resp, body := post(`{"jsonrpc":"2.0","id":8,"method":"nope/nope","params":{`+meta+`}}`, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "nope/nope"})
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "-32601") {
		t.Errorf("unknown method: HTTP %d %s", resp.StatusCode, body)
	}
	resp, _ = post(`{"jsonrpc":"2.0","method":"notifications/whatever"}`, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/whatever"})
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("notification: HTTP %d", resp.StatusCode)
	}
	resp, body = post(`[`+region+`]`, good)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "-32600") {
		t.Errorf("batch: HTTP %d %s", resp.StatusCode, body)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(method, srv.URL+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", "whatever")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s: HTTP %d, Allow %q", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

// A recording whose client never asked server/discover (a proxy saw a
// client that did not) still answers it, from what the recording shows;
// a legacy client gets the 2026-07-28 refusal, naming the flag.
func TestReplayModernDiscover(t *testing.T) {
	t.Parallel()
	tr, rec, _ := recordModernHTTP(t, RedactOptions{})
	c := *tr
	c.Events = nil
	skip := ""
	for _, e := range tr.Events {
		if e.Kind == KindFrame {
			m := parseMessage(e.Data)
			if m.Method == "server/discover" {
				skip = m.ID.Key()
				continue
			}
			if m.Kind() == jsonrpc.KindResponse && m.ID.Key() == skip {
				continue
			}
		}
		c.Events = append(c.Events, e)
	}
	rp, err := NewReplayer(&c, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	got := exerciseEra(t, newHTTPConn(t, srv.URL+"/mcp"), modernCalls, modernLife())
	var d struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal([]byte(got.results[0]), &d); err != nil || len(d.SupportedVersions) != 1 || d.SupportedVersions[0] != "2026-07-28" ||
		d.Capabilities["tools"] == nil || d.Capabilities["prompts"] == nil || !strings.Contains(string(d.Meta[mcp.MetaServerInfo]), "modern-test-server") {
		t.Errorf("made-up discover result %s (%v)", got.results[0], err)
	}
	if strings.Join(got.results[1:], "\n") != strings.Join(rec.results[1:], "\n") {
		t.Errorf("results differ:\n%q\n%q", got.results[1:], rec.results[1:])
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = inspector.Connect(ctx, newHTTPConn(t, srv.URL+"/mcp"), inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "x", Version: "1"}}})
	if err == nil || !strings.Contains(err.Error(), "-32020") {
		t.Errorf("a legacy client: %v", err)
	}
}

// Change notifications a stateless recording holds go to an open
// subscriptions/listen stream; request-scoped ones to the request's own.
func TestReplayModernListenStream(t *testing.T) {
	t.Parallel()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	lines := []string{
		`{"format":"mcpx-trace","version":1,"minor":1,"created":"2026-01-01T00:00:00Z","transport":"http","redacted":true}`,
		`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}},"route":{"protocolVersion":"2026-07-28","method":"subscriptions/listen"}}`,
		`{"t":2,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}}`,
		`{"t":3,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"touch",` + meta + `}},"route":{"protocolVersion":"2026-07-28","method":"tools/call","name":"touch"}}`,
		`{"t":4,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}}`,
		`{"t":5,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}`,
		`{"t":6,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{"content":[]}}}`,
	}
	tr, err := Read(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true, OnDeviation: func(d Deviation) { t.Errorf("deviation: %s", d.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	post := func(ctx context.Context, body, method, name string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	listen := post(ctx, `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta+`}}`, "subscriptions/listen", "")
	defer listen.Body.Close()
	events := bufio.NewReader(listen.Body)
	next := func() string {
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("listen stream: %v", err)
			}
			if strings.HasPrefix(line, "data: ") {
				return strings.TrimSpace(strings.TrimPrefix(line, "data: "))
			}
		}
	}
	if got := next(); !strings.Contains(got, "acknowledged") {
		t.Fatalf("first on the listen stream: %s", got)
	}
	call := post(ctx, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"touch",`+meta+`}}`, "tools/call", "touch")
	body, _ := io.ReadAll(call.Body)
	call.Body.Close()
	if !strings.Contains(string(body), "notifications/progress") || !strings.Contains(string(body), `"id":9,"result"`) || strings.Contains(string(body), "list_changed") {
		t.Errorf("the call's stream: %s", body)
	}
	if got := next(); !strings.Contains(got, "notifications/tools/list_changed") {
		t.Errorf("next on the listen stream: %s", got)
	}
}

// A multi-round request is retried with the live server's requestState
// when the recorded server gave another (a server whose states hold a
// nonce); the states themselves compare as recorded unless ignored.
func TestVerifyModernCarriesRequestState(t *testing.T) {
	t.Parallel()
	tr, _, u := recordModernHTTP(t, RedactOptions{})
	c := *tr
	c.Events = append([]Event(nil), tr.Events...)
	n := 0
	for i, e := range c.Events {
		if e.Kind == KindFrame && bytes.Contains(e.Data, []byte(`"requestState":"state-1 \u003c\u0026\u003e"`)) {
			c.Events[i].Data = bytes.ReplaceAll(e.Data, []byte(`"requestState":"state-1 \u003c\u0026\u003e"`), []byte(`"requestState":"nonce-42"`))
			n++
		}
	}
	if n != 2 {
		t.Fatalf("edited %d frames, want the state's answer and its retry", n)
	}
	res := verifyAgainst(t, &c, newHTTPConn(t, u), VerifyOptions{})
	if len(res.Mismatches) != 1 || len(res.Mismatches[0].Diffs) != 1 || res.Mismatches[0].Diffs[0].Path != "$.result.requestState" {
		t.Errorf("want only the state to differ:\n%s", reportOf(res))
	}
	if res := verifyAgainst(t, &c, newHTTPConn(t, u), VerifyOptions{Ignore: []string{"$.result.requestState"}}); !res.OK() {
		t.Errorf("with the state ignored:\n%s", reportOf(res))
	}
}

// The HTTP proxy passes a stateless session through, every header
// included, and records each request's route from its headers.
func TestHTTPProxyModern(t *testing.T) {
	t.Parallel()
	up := testservers.Modern(t, testservers.NewModernServer(nil, nil))
	proxyURL, readTrace := startHTTPProxy(t, up)
	want := exerciseEra(t, newHTTPConn(t, up), modernCalls, modernLife())
	got := exerciseEra(t, newHTTPConn(t, proxyURL+"/mcp"), modernCalls, modernLife())
	checkSameSession(t, want, got) // the region tool saw the same headers
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := findRoute(t, tr, "tools/call", "region")
	if r.ProtocolVersion != "2026-07-28" || len(r.Params) != 2 || r.Params[0] != (transport.RouteParam{Name: "Priority", Value: "7"}) || r.Params[1] != (transport.RouteParam{Name: "Region", Value: "eu west"}) {
		t.Errorf("route recorded by the proxy: %+v", r)
	}
	for _, e := range tr.Frames() {
		if e.Dir == ClientToServer && e.Route == nil {
			t.Errorf("no route for %s", e.Data)
		}
	}
	if res := verifyAgainst(t, tr, newHTTPConn(t, up), VerifyOptions{}); !res.OK() {
		t.Errorf("verify of the proxy's trace:\n%s", reportOf(res))
	}
	// Encoded values are recorded decoded.
	if r := requestRoute(http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {transport.EncodeHeaderValue("naïve")}, "Mcp-Param-X": {"=?base64?!!?="}}); r.Name != "naïve" || r.Params[0].Value != "=?base64?!!?=" {
		t.Errorf("requestRoute = %+v", r)
	}
	if requestRoute(http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}) != nil {
		t.Error("a handshake-era request got a route")
	}
}

// Routes are stored with their frames and read back; traces from before
// routes (minor 0) still read, and copying one does not make it claim
// routes.
func TestTraceRouteFormat(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w, err := newWriter(&b, Header{Transport: "http"})
	if err != nil {
		t.Fatal(err)
	}
	route := &transport.Route{ProtocolVersion: "2026-07-28", Method: "tools/call", Name: "x \"<y>\"", Params: []transport.RouteParam{{Name: "Region", Value: "eu\nwest"}, {Name: "N", Value: ""}}}
	if err := w.Write(Event{Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"id":1}`), Route: route}); err != nil {
		t.Fatal(err)
	}
	w.Write(Event{Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"id":2}`), Route: &transport.Route{Method: "m"}})
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], `"version":1,"minor":4`) ||
		lines[1] != `{"t":0,"kind":"frame","dir":"c2s","msg":{"id":1},"route":{"protocolVersion":"2026-07-28","method":"tools/call","name":"x \"<y>\"","params":[{"name":"Region","value":"eu\nwest"},{"name":"N","value":""}]}}` ||
		lines[2] != `{"t":0,"kind":"frame","dir":"c2s","msg":{"id":2},"route":{"method":"m"}}` {
		t.Errorf("written:\n%s", b.String())
	}
	for _, l := range lines[1:3] {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
	tr, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.Minor != Minor || len(tr.Events) != 2 {
		t.Fatalf("read %+v", tr)
	}
	got := tr.Events[0].Route
	if got.ProtocolVersion != route.ProtocolVersion || got.Method != route.Method || got.Name != route.Name || len(got.Params) != 2 || got.Params[0] != route.Params[0] || got.Params[1] != route.Params[1] {
		t.Errorf("read back %+v, want %+v", got, route)
	}

	old := `{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","redacted":true}` + "\n" +
		`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"},"future":{"x":1}}` + "\n"
	tr, err = Read(strings.NewReader(old))
	if err != nil || tr.Header.Minor != 0 || tr.Events[0].Route != nil {
		t.Fatalf("an older trace: %+v, %v", tr, err)
	}
	b.Reset()
	if _, err := tr.WriteTo(&b); err != nil || strings.Contains(b.String(), "minor") {
		t.Errorf("a copy of an older trace: %s (%v)", b.String(), err)
	}
}

// The per-request protocol fields of _meta do not count for matching: a
// client with another identity or other capabilities gets the recorded
// answers, and each difference is reported once per session (the
// identity only in strict mode), as a different initialize is.
func TestReplayModernOtherClient(t *testing.T) {
	t.Parallel()
	tr, rec, _ := recordModernHTTP(t, RedactOptions{})
	other := func() inspector.Lifecycle {
		return &inspector.Modern{
			ClientInfo:   inspector.Implementation{Name: "another-client", Version: "9.9"},
			Capabilities: json.RawMessage(`{"elicitation":{"form":{}},"roots":{}}`),
		}
	}
	for _, strict := range []bool{false, true} {
		var devs []string
		rp, err := NewReplayer(tr, ReplayOptions{Strict: strict, OnDeviation: func(d Deviation) { devs = append(devs, d.Message) }})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(rp.Handler())
		checkSameSession(t, rec, exerciseEra(t, newHTTPConn(t, srv.URL+"/mcp"), modernCalls, other()))
		srv.Close()
		// Any conforming client is served: without --strict nothing is
		// reported; with it, the differences are (and are no error).
		var want []string
		if strict {
			want = append(want, `the client declares the capabilities {"elicitation":{"form":{}},"roots":{}}, the recorded one declares the capabilities {"elicitation":{"form":{}}} (answered as recorded)`,
				`the client identifies itself as {"name":"another-client","version":"9.9"}, the recorded one identifies itself as {"name":"record-test","version":"1.0"} (answered as recorded)`)
		}
		if strings.Join(devs, "\n") != strings.Join(want, "\n") {
			t.Errorf("strict %v: deviations\n%s\nwant\n%s", strict, strings.Join(devs, "\n"), strings.Join(want, "\n"))
		}
	}
}

// A task the live server names otherwise than the recorded one is
// followed under its live id: the recorded tasks/get about it name the
// live task, and the live id compares as the recorded
// one (servers generate task ids: the official TypeScript SDK's are
// random). A request about a task no response created is sent as
// recorded.
func TestVerifyCarriesTaskIDs(t *testing.T) {
	t.Parallel()
	// The session follows each task with tasks/get until it completes.
	calls := []call{
		{method: "tools/call", params: `{"name":"job","arguments":{}}`},
		{method: "tools/call", params: `{"name":"job","arguments":{}}`},
	}
	tr, _ := recordSessionWith(t, httpDialer(t, (&testservers.RawModern{}).HTTP(t)), "http", calls, modernLife(), RedactOptions{})
	// edited returns tr with old replaced by new in the frames keep selects.
	edited := func(keep func(Event) bool, oldNew ...string) *Trace {
		c := *tr
		c.Events = append([]Event(nil), tr.Events...)
		for i, e := range c.Events {
			if e.Kind != KindFrame || !keep(e) {
				continue
			}
			for j := 0; j < len(oldNew); j += 2 {
				c.Events[i].Data = bytes.ReplaceAll(c.Events[i].Data, []byte(`"`+oldNew[j]+`"`), []byte(`"`+oldNew[j+1]+`"`))
			}
		}
		return &c
	}
	all := func(Event) bool { return true }
	renamed := edited(all, "task-1", "0f3a9c", "task-2", "77b1e4")
	if bytes.Contains(renamed.Events[len(renamed.Events)-1].Data, []byte("task-")) {
		t.Fatal("the trace still names task-N")
	}
	if res := verifyAgainst(t, renamed, newHTTPConn(t, (&testservers.RawModern{}).HTTP(t)), VerifyOptions{}); !res.OK() {
		t.Errorf("the tasks' live ids were not followed:\n%s", reportOf(res))
	}
	// The first poll of task-2 asks about task-9 instead.
	polls := 0
	unknown := edited(func(e Event) bool {
		if e.Dir == ClientToServer && bytes.Contains(e.Data, []byte(`"task-2"`)) && bytes.Contains(e.Data, []byte(`"tasks/get"`)) {
			polls++
			return polls == 1
		}
		return false
	}, "task-2", "task-9")
	res := verifyAgainst(t, unknown, newHTTPConn(t, (&testservers.RawModern{}).HTTP(t)), VerifyOptions{})
	// (and the next poll, which finds the task one poll behind).
	if len(res.Mismatches) != 2 || res.Mismatches[0].Method != "tasks/get" || !strings.Contains(reportOf(res), "unknown task task-9") {
		t.Errorf("want the poll of an unknown task to differ:\n%s", reportOf(res))
	}
}
