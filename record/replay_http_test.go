package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/transport"
)

func post(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestReplayHandlerSessions(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()

	// Without a session, only initialize is accepted.
	if r := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusBadRequest {
		t.Errorf("no session: %d", r.StatusCode)
	}
	if r := post(t, srv.URL, "nope", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %d", r.StatusCode)
	}
	// Two sessions, each replayed from the start, answered with JSON.
	var ids []string
	for i := 0; i < 2; i++ {
		r := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}`)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || string(body) != `{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":"2025-11-25"}}` {
			t.Fatalf("initialize: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), body)
		}
		ids = append(ids, r.Header.Get("Mcp-Session-Id"))
	}
	if ids[0] == "" || ids[0] == ids[1] {
		t.Fatalf("session ids %q", ids)
	}
	// The notification sent after notifications/initialized waits for a
	// GET stream; it is parked until one opens.
	if r := post(t, srv.URL, ids[0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		t.Errorf("notification: %d", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	buf := make([]byte, 4096)
	n, _ := io.ReadAtLeast(get.Body, buf, len("event: message\ndata: {}\n\n"))
	if got := string(buf[:n]); !strings.Contains(got, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`) {
		t.Errorf("GET stream: %q", got)
	}
	// DELETE ends a session; it is then unknown.
	del, _ := http.NewRequest("DELETE", srv.URL, nil)
	del.Header.Set("Mcp-Session-Id", ids[1])
	if r, err := http.DefaultClient.Do(del); err != nil || r.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", r, err)
	}
	if r := post(t, srv.URL, ids[1], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: %d", r.StatusCode)
	}
	if r := post(t, srv.URL, ids[0], `{"jsonrpc":"2.0","id":9,"method":"ping"}`); r.StatusCode != 200 {
		t.Errorf("the other session: %d", r.StatusCode)
	} else if b, _ := io.ReadAll(r.Body); string(b) != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Errorf("ping: %s", b)
	}
	req, _ = http.NewRequest("PUT", srv.URL, nil)
	if r, _ := http.DefaultClient.Do(req); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", r.StatusCode)
	}
}

// A client that sends a request's headers and then stops sending its body
// gets 408 Request Timeout once nothing came for bodyStallTimeout, and
// its connection is closed; a body that keeps arriving, however slowly
// in all, is read. Before, the listener waited for the body for ever.
func TestReadRequestBodyStall(t *testing.T) {
	// Not parallel: it sets bodyStallTimeout.
	defer func(d time.Duration) { bodyStallTimeout = d }(bodyStallTimeout)
	// A second: under load (CI, race detector) 300 ms passed between two
	// writes 100 ms apart.
	bodyStallTimeout = time.Second
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readRequestBody(w, r, 0)
		if ok {
			w.Write([]byte("read " + string(body)))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	dial := func() net.Conn {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		dl, _ := ctx.Deadline()
		c.SetDeadline(dl)
		return c
	}
	c := dial()
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\n{", srv.Listener.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a stalled body got no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close || !strings.Contains(string(b), "stopped arriving") {
		t.Errorf("a stalled body: %d (close %v) %s, want 408 and the connection closed", resp.StatusCode, resp.Close, b)
	}

	// Twelve pieces 100ms apart: longer than bodyStallTimeout in all,
	// never that long without bytes.
	c2 := dial()
	defer c2.Close()
	fmt.Fprintf(c2, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 12\r\n\r\n", srv.Listener.Addr())
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < 12; i++ {
		<-tick.C
		if _, err := c2.Write([]byte{'0' + byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err = http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "read 0123456789:;" {
		t.Errorf("a slow but steady body: %d %s, want it read", resp.StatusCode, b)
	}
}

// A client that sends initialize in a loop and never ends a session does
// not make the replay keep every session: beyond maxHTTPSessions the
// oldest is ended (404 from then on, which tells a client to begin
// again), the newest go on. DELETE of an ended or unknown session is 404.
func TestReplayHandlerSessionsBounded(t *testing.T) {
	// Not parallel: it sets maxHTTPSessions.
	defer func(n int) { maxHTTPSessions = n }(maxHTTPSessions)
	maxHTTPSessions = 3
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := rp.Handler().(*replayHandler)
	srv := httptest.NewServer(h)
	defer srv.Close()
	var ids []string
	for i := 0; i < 10; i++ {
		r := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("initialize %d: %d", i, r.StatusCode)
		}
		ids = append(ids, r.Header.Get("Mcp-Session-Id"))
	}
	h.mu.Lock()
	n, order := len(h.sessions), len(h.order)
	h.mu.Unlock()
	if n != 3 || order > 2*3 {
		t.Errorf("after 10 sessions: %d kept (order %d), want 3", n, order)
	}
	if r := post(t, srv.URL, ids[0], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("the oldest session: %d, want 404", r.StatusCode)
	}
	if r := post(t, srv.URL, ids[9], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusOK {
		t.Errorf("the newest session: %d, want 200", r.StatusCode)
	}
	del := func(id string) int {
		req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := del(ids[9]); got != http.StatusOK {
		t.Errorf("DELETE of a live session: %d", got)
	}
	for _, id := range []string{ids[9], ids[0], "nosuch"} {
		if got := del(id); got != http.StatusNotFound {
			t.Errorf("DELETE of %q (ended or unknown): %d, want 404", id, got)
		}
	}
}

// A client that sends its bearer token in a message too (under a name
// that is no secret's) matches the recording, where the recorder, told
// the recorded client's token, redacted it; and what replay reports of a
// request it has no answer for does not give the token away.
func TestReplayHTTPLearnsClientCredentials(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"[redacted]"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Echo: [redacted]"}]}}`,
	)
	tr.Header.RedactRules = RedactRules
	var devs strings.Builder
	rp, err := NewReplayer(tr, ReplayOptions{OnDeviation: func(d Deviation) { devs.WriteString(d.Message + "\n") }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	send := func(session, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tk-LIVE-CRED-0001")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	r, _ := send("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	id := r.Header.Get("Mcp-Session-Id")
	send(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if _, body := send(id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"tk-LIVE-CRED-0001"}}}`); !strings.Contains(body, `"Echo: [redacted]"`) {
		t.Errorf("the call was not answered from the recording: %s", body)
	}
	_, body := send(id, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"tk-LIVE-CRED-0001 again"}}}`)
	if !strings.Contains(body, `[redacted] again`) || strings.Contains(body+devs.String(), "tk-LIVE") {
		t.Errorf("the unanswered call's error, or the deviation, shows the token:\n%s\n%s", body, devs.String())
	}
}

// A handshake-era server refuses a client's server/discover probe with
// HTTP 400 and a JSON-RPC error whose id is null (server-everything says
// "Server not initialized"); the client then falls back to initialize.
// The replay refuses the probe the same way, rather than answering it
// with an event stream that carries the error and never the response
// (the Go SDK's client then failed to connect at all).
func TestReplayHandlerRefusesWithANullIDError(t *testing.T) {
	t.Parallel()
	const (
		discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		refusal  = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`
	)
	meta := func(status int) *transport.Meta {
		m := &transport.Meta{HTTPMethod: "POST", URL: "http://127.0.0.1:1/mcp", HTTPStatus: status}
		if status != 0 {
			m.ContentType = "application/json"
		}
		return m
	}
	tr := &Trace{Header: Header{Format: Format, Version: Version, Redacted: true, Transport: "http"}}
	for i, e := range []Event{
		{Kind: KindFrame, Dir: ClientToServer, Data: []byte(discover), Meta: meta(0),
			Route: &transport.Route{ProtocolVersion: "2026-07-28", Method: "server/discover"}},
		{Kind: KindHTTP, Text: "400 Bad Request application/json ← POST http://127.0.0.1:1/mcp", Meta: meta(400)},
		{Kind: KindFrame, Dir: ServerToClient, Data: []byte(refusal), Meta: meta(400)},
		{Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`), Meta: meta(0)},
		{Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25"}}`), Meta: meta(200)},
	} {
		e.Time = time.Duration(i) * time.Millisecond
		tr.Events = append(tr.Events, e)
	}
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(discover))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || string(body) != refusal {
		t.Fatalf("server/discover: %d %s %q (%v); want 400 and the recorded error", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
	}
	r := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	if b, _ := io.ReadAll(r.Body); r.StatusCode != 200 || string(b) != `{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-11-25"}}` {
		t.Errorf("initialize after the refused probe: %d %s", r.StatusCode, b)
	}
}

// dropsCalls is a Streamable HTTP server that answers initialize and
// takes notifications, but closes the connection of a tools/call POST
// without an answer (a server that crashed, a proxy that dropped it).
func dropsCalls(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method != "POST":
		w.WriteHeader(http.StatusMethodNotAllowed)
	case strings.Contains(string(body), `"method":"initialize"`):
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"drops","version":"1"}}}`)
	case strings.Contains(string(body), `"method":"tools/call"`):
		panic(http.ErrAbortHandler)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// A request whose POST failed (the server closed the connection without
// an answer) is no request the client left unanswered: the recording
// notes the failure, not a client that closed the connection with it
// pending. Its replay fails that POST the same way, at once. Before, the
// trace said the client left with the request unanswered, and the replay
// kept the POST open, leaving the client to wait for its timeout where the
// recorded client got an error at once.
func TestReplayHTTPFailsAPOSTThatFailed(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(dropsCalls))
	defer up.Close()
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, RecorderOptions{Header: Header{Transport: "http", Target: "http: drops"}})
	if err != nil {
		t.Fatal(err)
	}
	const (
		initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		call        = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	)
	// session runs the client's side on conn and returns the error of the
	// tools/call's POST.
	session := func(conn transport.Conn) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		defer conn.Close()
		if err := conn.Write(ctx, transport.Frame{Data: []byte(initialize)}); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, transport.Frame{Data: []byte(initialized)}); err != nil {
			t.Fatal(err)
		}
		err := conn.Write(ctx, transport.Frame{Data: []byte(call)})
		if err == nil {
			// The transport may report the POST's failure on Read.
			_, err = conn.Read(ctx)
		}
		if ctx.Err() != nil {
			t.Fatalf("the tools/call's POST did not fail within 5s: %v", err)
		}
		return err
	}
	c, err := transport.NewHTTP(transport.HTTPOptions{URL: up.URL, Observer: rec.Observe})
	if err != nil {
		t.Fatal(err)
	}
	if err := session(rec.Wrap(c)); err == nil {
		t.Fatal("the tools/call's POST succeeded live")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	failed, left := 0, 0
	for _, e := range tr.Events {
		switch {
		case e.Kind != KindNote:
		case strings.HasPrefix(e.Text, sendFailedNote):
			failed++
		case strings.HasPrefix(e.Text, ClientEndedNote):
			left++
			t.Errorf("note %q", e.Text)
		}
	}
	if failed != 1 || left != 0 {
		t.Errorf("%d notes that a frame could not be sent (want 1), %d that the client left with requests unanswered (want 0)", failed, left)
	}

	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	c, err = transport.NewHTTP(transport.HTTPOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := session(c); err == nil || !strings.Contains(err.Error(), "the server closed the connection without answering") {
		t.Fatalf("the tools/call's POST in the replay: %v, want the connection closed without an answer", err)
	}
}

// Replayed over a connection that has no POST to fail (stdio), a request
// whose POST failed in an HTTP recording is answered with an error saying
// so, at once, rather than never.
func TestReplayOverStdioAnswersAFailedPOST(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`,
		`# `+sendFailedNote+`: transport failure: POST http://127.0.0.1:1: the server closed the connection without answering (EOF)`,
	)
	tr.Header.Transport = "http"
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"mcpx replay: the recorded client's POST of this request failed: transport failure: POST http://127.0.0.1:1: the server closed the connection without answering (EOF)"}}`)
}

// Over Streamable HTTP a client has several POSTs in flight: when one
// fails, its note may be recorded after another request's frame. The
// note names its request (re), so that the replay fails that one and
// answers the other. Before, the note was read as the latest client
// frame's, the other request's: it was lost (that one was answered
// already) or would fail it, and the one that failed waited in the
// replay for an answer that never came.
func TestReplayHTTPFailsTheFailedOfTwoConcurrentPOSTs(t *testing.T) {
	t.Parallel()
	okArrived := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"name":"fails"`):
			// Fail only once the other call's frame was recorded (it
			// is recorded before its POST is sent).
			select {
			case <-okArrived:
			case <-time.After(5 * time.Second):
			}
			panic(http.ErrAbortHandler)
		case strings.Contains(string(body), `"name":"works"`):
			close(okArrived)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}`)
		default:
			r.Body = io.NopCloser(bytes.NewReader(body))
			dropsCalls(w, r)
		}
	}))
	defer up.Close()
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, RecorderOptions{Header: Header{Transport: "http", Target: "http: drops"}})
	if err != nil {
		t.Fatal(err)
	}
	// session runs the client's side on conn: the handshake, then the
	// call that fails (id 2) and, while its POST is in flight, the one
	// that works (id 3). It returns what each got.
	session := func(conn transport.Conn, sending <-chan struct{}) (fails, works string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p := peer.New(conn, peer.Options{})
		p.Start()
		defer p.Close()
		if _, err := p.Call(ctx, peer.Request{Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)}); err != nil {
			t.Fatal(err)
		}
		if err := p.Notify(ctx, peer.Notification{Method: "notifications/initialized"}); err != nil {
			t.Fatal(err)
		}
		outcome := func(m *jsonrpc.Message, err error) string {
			switch {
			case err != nil:
				return "error: " + err.Error()
			case m.Error != nil:
				return "JSON-RPC error: " + m.Error.Message
			}
			return "result: " + string(m.Result)
		}
		got := make(chan string, 1)
		go func() {
			got <- outcome(p.Call(ctx, peer.Request{ID: jsonrpc.Int(2), Method: "tools/call", Params: json.RawMessage(`{"name":"fails"}`)}))
		}()
		// The second call once the first one's POST is under way (its
		// frame recorded).
		select {
		case <-sending:
		case <-ctx.Done():
			t.Fatal("the failing call was not sent within 5s")
		}
		works = outcome(p.Call(ctx, peer.Request{ID: jsonrpc.Int(3), Method: "tools/call", Params: json.RawMessage(`{"name":"works"}`)}))
		return <-got, works
	}
	c, err := transport.NewHTTP(transport.HTTPOptions{URL: up.URL, Observer: rec.Observe})
	if err != nil {
		t.Fatal(err)
	}
	sc := &sendingConn{Conn: c, sending: make(chan struct{}), what: `"name":"fails"`}
	fails, works := session(rec.Wrap(sc), sc.sending)
	if !strings.HasPrefix(fails, "error: ") || !strings.HasPrefix(works, "result: ") {
		t.Fatalf("live: the call that fails got %q, the one that works %q", fails, works)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Events {
		if e.Kind == KindNote && strings.HasPrefix(e.Text, sendFailedNote) {
			notes = append(notes, string(e.Re))
		}
	}
	if len(notes) != 1 || notes[0] != "2" {
		t.Errorf("the notes that a frame could not be sent name requests %q, want one naming 2", notes)
	}
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	if c, err = transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	sc = &sendingConn{Conn: c, sending: make(chan struct{}), what: `"name":"fails"`}
	fails, works = session(sc, sc.sending)
	if !strings.Contains(fails, "the server closed the connection without answering") || works != `result: {"content":[{"type":"text","text":"done"}]}` {
		t.Errorf("replayed: the call that fails got %q (want its POST closed without an answer), the one that works %q", fails, works)
	}
}

// sendingConn closes sending when a frame holding what starts to be
// written.
type sendingConn struct {
	transport.Conn
	what    string
	sending chan struct{}
	once    sync.Once
}

func (c *sendingConn) Write(ctx context.Context, f transport.Frame) error {
	if strings.Contains(string(f.Data), c.what) {
		c.once.Do(func() { close(c.sending) })
	}
	return c.Conn.Write(ctx, f)
}
