package record

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// timedTrace is a session with its recorded timing: the server took 100ms
// to answer initialize, and answered the call 2s after it came, with a
// log message 500ms in.
func timedTrace() *Trace {
	tr := &Trace{Header: Header{Format: Format, Version: Version, Redacted: true}}
	add := func(ms int, dir Direction, data string) {
		tr.Events = append(tr.Events, Event{Time: time.Duration(ms) * time.Millisecond, Kind: KindFrame, Dir: dir, Data: []byte(data)})
	}
	add(0, ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	add(100, ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
	add(150, ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	add(1000, ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
	add(1500, ServerToClient, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half"}}`)
	add(3000, ServerToClient, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
	add(3100, ClientToServer, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`)
	add(3200, ServerToClient, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"b"}]}}`)
	return tr
}

// pipeClient drives a replay over an in-memory connection (inside a
// synctest bubble: its clock is the bubble's).
type pipeClient struct {
	t    *testing.T
	conn transport.Conn
	done <-chan error
}

func servePipe(t *testing.T, tr *Trace, opts ReplayOptions) *pipeClient {
	t.Helper()
	rp, err := NewReplayer(tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	conn, done := rp.ServePipe(t.Context())
	return &pipeClient{t: t, conn: conn, done: done}
}

func (c *pipeClient) send(s string) {
	c.t.Helper()
	if err := c.conn.Write(c.t.Context(), transport.Frame{Data: []byte(s)}); err != nil {
		c.t.Fatalf("send %s: %v", s, err)
	}
}

// recv reads the next frame and how long it took to come.
func (c *pipeClient) recv() (string, time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(c.t.Context(), time.Minute)
	defer cancel()
	f, err := c.conn.Read(ctx)
	return string(f.Data), time.Since(start), err
}

func (c *pipeClient) expect(want string, after time.Duration) {
	c.t.Helper()
	got, took, err := c.recv()
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	if got != want || took != after {
		c.t.Fatalf("got %s after %v, want %s after %v", got, took, want, after)
	}
}

func (c *pipeClient) close() error {
	c.conn.Close()
	return <-c.done
}

func TestReplayPace(t *testing.T) {
	for _, tc := range []struct {
		pace  float64
		scale float64 // of the recorded delays
	}{{0, 0}, {1, 1}, {0.5, 0.5}, {2, 2}} {
		synctest.Test(t, func(t *testing.T) {
			d := func(ms int) time.Duration { return time.Duration(float64(ms)*tc.scale) * time.Millisecond }
			c := servePipe(t, timedTrace(), ReplayOptions{Pace: tc.pace})
			c.send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`)
			c.expect(`{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-11-25"}}`, d(100))
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"a"}}`)
			c.expect(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half"}}`, d(500))
			c.expect(`{"jsonrpc":"2.0","id":"c","result":{"content":[]}}`, d(1500))
			if err := c.close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestReplayPaceUntimed(t *testing.T) {
	// A trace without timing (every offset 0): answered at once, with a
	// warning.
	tr := timedTrace()
	for i := range tr.Events {
		tr.Events[i].Time = 0
	}
	synctest.Test(t, func(t *testing.T) {
		var warnings []string
		c := servePipe(t, tr, ReplayOptions{Pace: 1, OnWarning: func(s string) { warnings = append(warnings, s) }})
		c.send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`)
		c.expect(`{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-11-25"}}`, 0)
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "no timing") {
			t.Errorf("warnings %q", warnings)
		}
	})
}

func mustFault(t *testing.T, spec string) Fault {
	t.Helper()
	f, err := ParseFault(spec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReplayFaultDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The second tools/call is held back 2s; the first is not.
		c := servePipe(t, timedTrace(), ReplayOptions{Faults: []Fault{mustFault(t, "tools/call#2:delay=2s")}})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`, 0)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
		c.expect(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half"}}`, 0)
		c.expect(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`, 0)
		c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`)
		c.expect(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"b"}]}}`, 2*time.Second)
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestReplayDelayEndsWhenTheClientLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := servePipe(t, timedTrace(), ReplayOptions{Pace: 1, Faults: []Fault{mustFault(t, "tools/call:delay=1h")}})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`, 100*time.Millisecond)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
		start := time.Now()
		c.conn.Close()
		if err := <-c.done; err != nil && !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Serve: %v", err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("Serve returned %v after the client left, want at once", took)
		}
	})
}

func TestReplayFaultClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := servePipe(t, timedTrace(), ReplayOptions{Faults: []Fault{mustFault(t, "tools/call:close")}})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`, 0)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
		if got, _, err := c.recv(); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("after the close: %q, %v; want ErrClosed", got, err)
		}
		if err := <-c.done; err != nil {
			t.Fatalf("Serve: %v", err)
		}
	})
}

func TestReplayFaultError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// #2: the second request of any method (the first tools/call);
		// retried, it gets the recorded answer.
		c := servePipe(t, timedTrace(), ReplayOptions{Faults: []Fault{mustFault(t, "#2:error=-32000,the server is unwell")}})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`, 0)
		c.send(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}`)
		got, _, err := c.recv()
		if err != nil {
			t.Fatal(err)
		}
		m := parseMessage([]byte(got))
		if m.ID.String() != `"x"` || m.Error == nil || m.Error.Code != -32000 || m.Error.Message != "the server is unwell" {
			t.Fatalf("answer %s", got)
		}
		c.send(`{"jsonrpc":"2.0","id":"y","method":"tools/call","params":{"name":"a"}}`)
		c.expect(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half"}}`, 0)
		c.expect(`{"jsonrpc":"2.0","id":"y","result":{"content":[]}}`, 0)
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestReplayFaultHTTPNeedsHTTP(t *testing.T) {
	rp, err := NewReplayer(timedTrace(), ReplayOptions{Faults: []Fault{mustFault(t, "tools/list:http=503")}})
	if err != nil {
		t.Fatal(err)
	}
	client, server := transport.Pipe()
	defer client.Close()
	if err := rp.Serve(t.Context(), server); !errors.Is(err, ErrHTTPFault) {
		t.Fatalf("Serve: %v, want ErrHTTPFault", err)
	}
}

// faultPost sends one JSON-RPC frame to a replay's handler.
func faultPost(t *testing.T, url, session, body string) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(bytes.TrimSpace(b)), nil
}

func TestReplayFaultsHTTP(t *testing.T) {
	rp, err := NewReplayer(timedTrace(), ReplayOptions{Faults: []Fault{
		mustFault(t, "tools/call#1:http=503"),
		mustFault(t, "tools/call#2:close"),
		mustFault(t, "tools/call#3:error=-32603"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	resp, body, err := faultPost(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("initialize: %v %v", resp, err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`

	resp, body, err = faultPost(t, srv.URL, sid, call)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "injected fault") {
		t.Fatalf("http=503: %v %q %v", resp, body, err)
	}
	if _, _, err = faultPost(t, srv.URL, sid, call); err == nil || !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("close: %v, want the connection closed (EOF)", err)
	}
	resp, body, err = faultPost(t, srv.URL, sid, call)
	if err != nil || resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"mcpx replay: injected fault"}}` {
		t.Fatalf("error: %v %q %v", resp, body, err)
	}
	// The fourth call is answered as recorded.
	resp, body, err = faultPost(t, srv.URL, sid, call)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body, `"result":{"content":[]}`) {
		t.Fatalf("answer: %v %q %v", resp, body, err)
	}
}

func TestReplayPaceHTTP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rp, err := NewReplayer(timedTrace(), ReplayOptions{Pace: 1, Faults: []Fault{mustFault(t, "initialize:delay=1s")}})
		if err != nil {
			t.Fatal(err)
		}
		h := rp.Handler()
		serve := func(session, body string) (*httptest.ResponseRecorder, time.Duration) {
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			w := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(w, req)
			return w, time.Since(start)
		}
		// The recorded 100ms, and the fault's 1s.
		w, took := serve("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		if w.Code != 200 || took != 1100*time.Millisecond {
			t.Fatalf("initialize: %d after %v, want 200 after 1.1s", w.Code, took)
		}
		sid := w.Header().Get("Mcp-Session-Id")
		// The call's answer is held until its recorded 2s.
		w, took = serve(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
		if w.Code != 200 || took != 2*time.Second || !strings.Contains(w.Body.String(), `"id":2,"result":{"content":[]}`) {
			t.Fatalf("call: %d %q after %v, want its answer after 2s", w.Code, w.Body.String(), took)
		}
	})
}

func TestParseFault(t *testing.T) {
	for _, tc := range []struct{ spec, want, err string }{
		{spec: "tools/call#2:delay=2s", want: "tools/call#2:delay=2s"},
		{spec: "tools/call:close", want: "tools/call:close"},
		{spec: "#3:error=-32603,boom: bad", want: "#3:error=-32603,boom: bad"},
		{spec: "*:error=-1", want: "*:error=-1,mcpx replay: injected fault"},
		{spec: "tools/list#1:http=503", want: "tools/list#1:http=503"},
		{spec: "tools/call", err: "want SELECTOR:ACTION"},
		{spec: "tools/call#0:close", err: "not a request number"},
		{spec: "tools/call:delay=soon", err: "not a duration"},
		{spec: "tools/call:error=x", err: "the code is not an integer"},
		{spec: "tools/call:http=99", err: "not an HTTP status"},
		{spec: "tools/call:close=1", err: "close takes no value"},
		{spec: "tools/call:explode", err: `unknown action "explode"`},
	} {
		f, err := ParseFault(tc.spec)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseFault(%q) = %v, want error %q", tc.spec, err, tc.err)
			}
		case err != nil:
			t.Errorf("ParseFault(%q): %v", tc.spec, err)
		case f.String() != tc.want:
			t.Errorf("ParseFault(%q) = %s, want %s", tc.spec, f, tc.want)
		}
	}
}

// Over HTTP, where the recorded server went away (a ServerEndedNote) the
// POST of the request it was handling gets no answer: its connection
// closes, after what the server sent first; what came before is answered.
func TestReplayServerEndHTTP(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":2}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}`,
		"# "+ServerEndedNote+": server exited (exit status 3)",
	)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	resp, _, err := faultPost(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("initialize: %v %v", resp, err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":2}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("tools/call: %v, want the progress first", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if ctx.Err() != nil {
		t.Fatal("tools/call: the stream stayed open where the recorded server went away")
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(string(body), `"progress":1`) || strings.Contains(string(body), `"id":2`) {
		t.Fatalf("tools/call: %q, %v; want the progress, then the connection closed (unexpected EOF)", body, err)
	}
}
