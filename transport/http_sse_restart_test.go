package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/transport"
)

// restartingServer is a hand-written HTTP+SSE server (2024-11-05) that can
// restart: every GET /sse opens a session of its own, whose endpoint is
// /msg?s=N; restart ends every stream and forgets every session (a POST
// in one is answered 404), as a restarted server would; down makes every
// GET fail with 503 until up. It answers initialize, ping and
// resources/subscribe; tools/call is never answered.
type restartingServer struct {
	mu       sync.Mutex
	seq      int
	sessions map[string]*restartSession
	down     bool
	log      []string // "N METHOD" per POSTed message, "GET" per GET
}

type restartSession struct {
	out chan string
	end chan struct{}
}

func newRestartingServer() *restartingServer {
	return &restartingServer{sessions: map[string]*restartSession{}}
}

func (s *restartingServer) restart(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, ss := range s.sessions {
		close(ss.end)
		delete(s.sessions, id)
	}
	s.down = down
}

func (s *restartingServer) logged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *restartingServer) count(entry string) int {
	n := 0
	for _, e := range s.logged() {
		if e == entry {
			n++
		}
	}
	return n
}

func (s *restartingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/sse":
		s.mu.Lock()
		s.log = append(s.log, "GET")
		if s.down {
			s.mu.Unlock()
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		s.seq++
		id := fmt.Sprint(s.seq)
		ss := &restartSession{out: make(chan string, 8), end: make(chan struct{})}
		s.sessions[id] = ss
		s.mu.Unlock()
		serveSSEStream(w, r, "/msg?s="+id, ss.out, ss.end)
	case r.Method == "POST" && r.URL.Path == "/msg":
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		id := r.URL.Query().Get("s")
		s.mu.Lock()
		ss := s.sessions[id]
		s.log = append(s.log, id+" "+m.Method)
		s.mu.Unlock()
		if ss == nil {
			http.Error(w, "Could not find session", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2024-11-05","capabilities":{"tools":{},"resources":{"subscribe":true}},"serverInfo":{"name":"restarting","version":"1"}}`
		case "ping", "resources/subscribe":
			result = `{}`
		default:
			return
		}
		ss.out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	default:
		http.NotFound(w, r)
	}
}

// A held HTTP+SSE session outlives a server restart: the request under
// way when the stream ends fails at once with an error that says so, the
// stream is opened again (a new session: a new endpoint), the session is
// initialized anew and subscribed again to what it was, and a request
// after that works.
func TestLegacyStreamRestart(t *testing.T) { synctest.Test(t, testLegacyStreamRestart) }

func testLegacyStreamRestart(t *testing.T) {
	srv := newRestartingServer()
	u := serveMem(t, srv)
	rec := newRecorder()
	sess, conn := mustDial(t, transport.HTTPOptions{URL: u + "/sse", Mode: transport.ModeSSE}, rec)
	ctx := callCtx(t)
	if err := sess.Subscribe(ctx, "test://a"); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	lost := make(chan error, 1)
	go func() {
		_, err := sess.Call(ctx, "tools/call", map[string]any{"name": "slow"})
		lost <- err
	}()
	synctest.Wait()
	if srv.count("1 tools/call") != 1 {
		t.Fatalf("tools/call not POSTed; log: %q", srv.logged())
	}

	srv.restart(false)
	err := <-lost
	if !errors.Is(err, transport.ErrStreamLost) || !strings.Contains(err.Error(), "SSE stream (GET "+u+"/sse) ended before the response arrived (an HTTP+SSE session ends with its stream)") {
		t.Errorf("the call under way: err = %v", err)
	}
	testwait.For(t, "the renewal's note", func() bool { return strings.Contains(rec.allNotes(), "re-initialized") })
	want := "session expired: the HTTP+SSE session ended with the server's SSE stream (GET " + u + "/sse), which ended; re-initialized a new session; subscribed to test://a again"
	if notes := rec.allNotes(); notes != want {
		t.Errorf("notes:\n%s\nwant:\n%s", notes, want)
	}
	if _, err := sess.Call(ctx, "ping", nil); err != nil {
		t.Fatalf("ping after the restart: %v", err)
	}
	for _, e := range []string{"2 initialize", "2 notifications/initialized", "2 resources/subscribe", "2 ping"} {
		if srv.count(e) != 1 {
			t.Errorf("%q logged %d times, want 1; log: %q", e, srv.count(e), srv.logged())
		}
	}
	if d := conn.Describe(); !strings.Contains(d, "messages to "+u+"/msg?s=2") {
		t.Errorf("Describe = %q", d)
	}
	if len(rec.warnings) != 0 || len(rec.departures) != 0 {
		t.Errorf("warnings: %q; departures: %q", rec.warnings, rec.departures)
	}
}

// A POST answered 404 by an endpoint that took messages before means the
// server forgot the session while its stream looked open: the stream is
// dropped and opened again, and the request is sent again in the new
// session, once.
func TestLegacyPost404Renews(t *testing.T) { synctest.Test(t, testLegacyPost404Renews) }

func testLegacyPost404Renews(t *testing.T) {
	srv := newRestartingServer()
	u := serveMem(t, srv)
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u + "/sse", Mode: transport.ModeSSE}, rec)
	// The server forgets session 1 but keeps its stream open.
	srv.mu.Lock()
	old := srv.sessions["1"]
	delete(srv.sessions, "1")
	srv.mu.Unlock()
	defer close(old.end)
	if _, err := sess.Call(callCtx(t), "ping", nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	for _, e := range []string{"1 ping", "2 initialize", "2 ping"} {
		if srv.count(e) != 1 {
			t.Errorf("%q logged %d times, want 1; log: %q", e, srv.count(e), srv.logged())
		}
	}
	if notes := rec.allNotes(); !strings.Contains(notes, "HTTP 404") || strings.Count(notes, "re-initialized") != 1 {
		t.Errorf("notes: %q", notes)
	}
}

// A server that does not come back: after a bounded number of attempts,
// each waiting longer, the connection ends with one line that says why,
// and a request waiting for the stream fails with it rather than hang.
func TestLegacyStreamGone(t *testing.T) { synctest.Test(t, testLegacyStreamGone) }

func testLegacyStreamGone(t *testing.T) {
	srv := newRestartingServer()
	u := serveMem(t, srv)
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u + "/sse", Mode: transport.ModeSSE}, rec)
	start := time.Now()
	srv.restart(true)
	select {
	case <-sess.Done():
	case <-time.After(time.Minute):
		t.Fatal("the session did not end")
	}
	// dial's ReconnectDelay is 20ms: 20+40+80+160+320.
	if d := time.Since(start); d != 620*time.Millisecond {
		t.Errorf("gave up after %s, want 620ms", d)
	}
	want := "transport failure: the server's SSE stream (GET " + u + "/sse) ended, and opening it again failed 5 times; the last attempt: GET " + u + "/sse: HTTP 503 Service Unavailable: restarting"
	if err := sess.Err(); err == nil || err.Error() != want || !errors.Is(err, transport.ErrTransport) {
		t.Errorf("Err = %v\nwant %s", err, want)
	}
	if n := srv.count("GET"); n != 6 {
		t.Errorf("%d GETs, want 6 (the first, and 5 attempts)", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := sess.Call(ctx, "ping", nil, inspector.WithTimeout(time.Second, time.Second)); err == nil {
		t.Error("ping after the end succeeded")
	}
	// The connection's end says why; the renewal that waited for the
	// stream adds no warning of its own.
	synctest.Wait()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.warnings) != 0 || len(rec.departures) != 0 {
		t.Errorf("warnings: %q; departures: %q", rec.warnings, rec.departures)
	}
}

// Without a session to start a new one (a bare connection), the
// connection ends with its stream, as before.
func TestLegacyStreamEndsBareConn(t *testing.T) { synctest.Test(t, testLegacyStreamEndsBareConn) }

func testLegacyStreamEndsBareConn(t *testing.T) {
	srv := newRestartingServer()
	u := serveMem(t, srv)
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: u + "/sse", Mode: transport.ModeSSE, Client: memClient(t, u)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := callCtx(t)
	if err := conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	srv.restart(false)
	_, err = conn.Read(ctx)
	if want := "transport failure: the server's SSE stream (GET " + u + "/sse) ended"; err == nil || err.Error() != want {
		t.Errorf("Read: %v, want %s", err, want)
	}
}

// A request made while the stream is being opened again waits for the new
// session's initialize, and goes out after it, in the new session.
func TestLegacyRequestWaitsForRenewal(t *testing.T) {
	synctest.Test(t, testLegacyRequestWaitsForRenewal)
}

func testLegacyRequestWaitsForRenewal(t *testing.T) {
	srv := newRestartingServer()
	u := serveMem(t, srv)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u + "/sse", Mode: transport.ModeSSE}, nil)
	srv.restart(false)
	// The connection has seen the stream end, and waits to open it again.
	synctest.Wait()
	if _, err := sess.Call(callCtx(t), "ping", nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	log := strings.Join(srv.logged(), "; ")
	want := "GET; 1 initialize; 1 notifications/initialized; GET; 2 initialize; 2 notifications/initialized; 2 ping"
	if log != want {
		t.Errorf("log: %s\nwant: %s", log, want)
	}
}
