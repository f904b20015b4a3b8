package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/transport"
)

// requestLog serves the test server over Streamable HTTP and logs what
// reaches it: the JSON-RPC method of each POST, GET for a GET (DELETE, the
// end of a session, is left out).
func requestLog(t *testing.T) (url string, take func() string) {
	var mu sync.Mutex
	var seen []string
	url = testservers.Streamable(t, newTestServer(""), nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			what := r.Method
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var m struct {
					Method string `json:"method"`
				}
				_ = json.Unmarshal(body, &m)
				what = m.Method
			}
			if r.Method != http.MethodDelete {
				mu.Lock()
				seen = append(seen, what)
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	})
	return url, func() string {
		mu.Lock()
		defer mu.Unlock()
		s := strings.Join(seen, " ")
		seen = nil
		return s
	}
}

// recordGetStream records a tools/list over Streamable HTTP by a client
// that opens the GET stream at negotiation (as mcpx does), after
// notifications/initialized (as the Inspector CLI does), or never.
func recordGetStream(t *testing.T, u, when string) *Trace {
	t.Helper()
	name := filepath.Join(t.TempDir(), "get.jsonl")
	rec, err := Create(t.Context(), name, RecorderOptions{Header: Header{Transport: "http", Target: u}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Observer: rec.Observe})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if when != "negotiated" {
		conn.HoldServerStream()
	}
	sess, err := inspector.Connect(ctx, rec.Wrap(conn), inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "t", Version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if when == "initialized" {
		if err := conn.OpenServerStream(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sess.Call(ctx, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Verify opens the GET stream for server-initiated messages where the
// recorded client opened its own, and not at all when it never did: what
// a server sends outside any request depends on it (server-everything
// announces the tools it adds on notifications/initialized on that stream
// only when it is open by then, so a verify that opened it at negotiation
// reported notifications the Inspector CLI's recording could not have).
// A trace without the client's HTTP requests (recorded over stdio) gets
// the stream at negotiation, as before.
func TestVerifyFollowsTheRecordedGetStream(t *testing.T) {
	t.Parallel()
	u, take := requestLog(t)
	for _, tc := range []struct{ when, want string }{
		{"negotiated", "initialize GET notifications/initialized tools/list"},
		{"initialized", "initialize notifications/initialized GET tools/list"},
		{"never", "initialize notifications/initialized tools/list"},
	} {
		t.Run(tc.when, func(t *testing.T) {
			tr := recordGetStream(t, u, tc.when)
			if got := take(); got != tc.want {
				t.Fatalf("recorded: the server saw %q, want %q", got, tc.want)
			}
			res := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{})
			if !res.OK() || res.Exchanges != 2 {
				t.Fatalf("%s", reportOf(res))
			}
			if got := take(); got != tc.want {
				t.Errorf("verify: the server saw %q, want %q (as recorded)", got, tc.want)
			}
		})
	}
	t.Run("stdio trace", func(t *testing.T) {
		tr, _ := recordSession(t, stdioDialer(t, helper("sdk")), "stdio", []call{{method: "tools/list", params: `{}`}})
		res := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{})
		if !res.OK() {
			t.Fatalf("%s", reportOf(res))
		}
		if got, want := take(), "initialize GET notifications/initialized tools/list"; got != want {
			t.Errorf("verify: the server saw %q, want %q", got, want)
		}
	})
}

// A trace that starts mid-session (the REPL's :record) shows neither the
// handshake's HTTP requests nor whether the client had opened its GET
// stream by then (mcpx had): verify opens it at negotiation, as before.
func TestVerifyPreludeOpensTheGetStreamAtNegotiation(t *testing.T) {
	t.Parallel()
	u, take := requestLog(t)
	name := filepath.Join(t.TempDir(), "mid.jsonl")
	var hs Handshake
	var rec atomic.Pointer[Recorder]
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Observer: func(ev transport.Event) {
		if r := rec.Load(); r != nil {
			r.Observe(ev)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	tap := transport.Tap(conn, func(at time.Time, dir transport.Direction, f transport.Frame) {
		hs.Frame(at, dir, f)
		if r := rec.Load(); r != nil {
			r.Frame(at, dir, f)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sess, err := inspector.Connect(ctx, tap, inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "t", Version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Create(ctx, name, RecorderOptions{Header: Header{Transport: "http", Target: u}})
	if err != nil {
		t.Fatal(err)
	}
	r.Prelude(hs.Frames())
	rec.Store(r)
	if _, err := sess.Call(ctx, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	take()
	res := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{})
	if !res.OK() || res.Exchanges != 2 {
		t.Fatalf("%s", reportOf(res))
	}
	if got, want := take(), "initialize GET notifications/initialized tools/list"; got != want {
		t.Errorf("verify: the server saw %q, want %q", got, want)
	}
}

// A live server that takes the GET for server-initiated messages and never
// answers it does not hold verify, wherever the recording opened the
// stream: past the timeout that is a mismatch and the run goes on.
func TestVerifyGetStreamNeverAnswered(t *testing.T) {
	t.Parallel()
	u, _ := requestLog(t)
	hanging := testservers.Streamable(t, newTestServer(""), nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				<-r.Context().Done()
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	for _, when := range []string{"negotiated", "initialized"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel() // each waits out the timeout
			tr := recordGetStream(t, u, when)
			res := verifyAgainst(t, tr, newHTTPConn(t, hanging), VerifyOptions{Timeout: time.Second})
			want := "the GET for server-initiated messages got no answer within 1s"
			if len(res.Mismatches) != 1 || res.Mismatches[0].Problem != want || res.Exchanges != 2 {
				t.Errorf("%d exchanges verified, mismatches:\n%s\nwant 2 and only %q", res.Exchanges, reportOf(res), want)
			}
		})
	}
}

// A POST the live server never answers, not even with its headers, ends
// at the timeout as an answer that never comes does (exit 6 for the
// command): over Streamable HTTP the request is written until its
// response comes, and the write held the run until the server gave up.
func TestVerifyPostNeverAnswered(t *testing.T) {
	t.Parallel()
	u, _ := requestLog(t)
	hanging := testservers.Streamable(t, newTestServer(""), nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				if bytes.Contains(body, []byte(`"tools/list"`)) {
					<-r.Context().Done()
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			h.ServeHTTP(w, r)
		})
	})
	tr := recordGetStream(t, u, "negotiated")
	res := verifyAgainst(t, tr, newHTTPConn(t, hanging), VerifyOptions{Timeout: time.Second})
	var timeout *peer.TimeoutError
	if !errors.As(res.Lost, &timeout) || timeout.Method != "tools/list" || res.OK() {
		t.Fatalf("lost %v, report:\n%s", res.Lost, reportOf(res))
	}
}
