package transport_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/transport"
)

// With inspector.Options.ServerStreamOnDemand the session holds the GET
// stream for server-initiated messages (transport.ServerStreamer) and opens
// it only when it may need it (issue 13): never for a session that declares
// no client capability, before the first request during which the server
// may call back into sampling or elicitation, and at once (before
// notifications/initialized) for a session that declares roots, which the
// server may ask for at any time.
func TestServerStreamOnDemand(t *testing.T) {
	for _, tc := range []struct {
		name, caps string
		onDemand   bool
		// GETs after the handshake, after tools/list, after two tools/calls
		afterOpen, afterList, afterCalls int
	}{
		{"no capabilities", `{}`, true, 0, 0, 0},
		{"sampling", `{"sampling":{}}`, true, 0, 0, 1},
		{"elicitation", `{"elicitation":{}}`, true, 0, 0, 1},
		{"roots", `{"roots":{}}`, true, 1, 1, 1},
		{"always", `{}`, false, 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog()
			conn := streamableConn(t, l.wrap)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sess, err := inspector.Connect(ctx, conn, inspector.Options{
				Lifecycle:            &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "t", Version: "0"}, Capabilities: json.RawMessage(tc.caps)},
				ServerStreamOnDemand: tc.onDemand,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			check := func(when string, want int) {
				t.Helper()
				if got := l.count("GET", "*"); got != want {
					t.Errorf("%s: %d GET requests, want %d (%s)", when, got, want, l.summary())
				}
			}
			check("after the handshake", tc.afterOpen)
			if tc.afterOpen > 0 {
				// Opened before the server hears the session is ready.
				var order []string
				for _, s := range l.all() {
					if s.Method == "GET" || s.RPC == "notifications/initialized" {
						order = append(order, s.Method)
					}
				}
				if len(order) < 2 || order[0] != "GET" {
					t.Errorf("GET and notifications/initialized in the order %v, want the GET first", order)
				}
			}
			if _, err := sess.List(ctx, inspector.ListTools, nil); err != nil {
				t.Fatal(err)
			}
			check("after tools/list", tc.afterList)
			for range 2 {
				if got := toolText(t, sess, "echo", map[string]any{"message": "hi"}); got != "Echo: hi" {
					t.Fatalf("echo = %q", got)
				}
			}
			check("after two tools/calls", tc.afterCalls)
			if tc.afterCalls > tc.afterList {
				// The stream was open before the first call went out.
				var first string
				for _, s := range l.all() {
					if s.Method == "GET" || s.RPC == "tools/call" {
						first = s.Method + " " + s.RPC
						break
					}
				}
				if first != "GET " {
					t.Errorf("first of GET and tools/call: %q, want the GET", first)
				}
			}
		})
	}
}

// A server that takes the GET for server-initiated messages and never
// answers it holds neither the handshake of a session that listens nor a
// call that waits for the stream: past the request timeout the session
// goes on without the stream, with a note, and does not ask again.
func TestServerStreamNeverAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		onDemand bool
	}{
		{"listening session", false},
		{"stream on demand", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out the timeout
			l := newLog()
			hang := func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					l.record(r)
					if r.Method == http.MethodGet {
						<-r.Context().Done()
						return
					}
					h.ServeHTTP(w, r)
				})
			}
			conn := streamableConn(t, hang)
			var mu sync.Mutex
			var notes []string
			const timeout = time.Second // (also every request's, on a loaded machine)
			ctx, cancel := context.WithTimeout(context.Background(), testwait.Bound)
			defer cancel()
			sess, err := inspector.Connect(ctx, conn, inspector.Options{
				Lifecycle:            &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "t", Version: "0"}, Capabilities: json.RawMessage(`{"elicitation":{}}`)},
				ServerStreamOnDemand: tc.onDemand,
				Timeout:              timeout,
				OnNote: func(s string) {
					mu.Lock()
					notes = append(notes, s)
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			for range 2 {
				if got := toolText(t, sess, "echo", map[string]any{"message": "hi"}); got != "Echo: hi" {
					t.Fatalf("echo = %q", got)
				}
			}
			if n := l.count("GET", "*"); n != 1 {
				t.Errorf("%d GET requests, want 1 (%s)", n, l.summary())
			}
			mu.Lock()
			defer mu.Unlock()
			want := "no stream for server-initiated messages: the server did not answer its GET within 1s; going on without it"
			if !slices.Equal(notes, []string{want}) {
				t.Errorf("notes %q, want %q", notes, want)
			}
		})
	}
}

// streamableConn serves the test server over Streamable HTTP through wrap
// and connects to it (closed with the test).
func streamableConn(t *testing.T, wrap func(http.Handler) http.Handler) *transport.HTTPConn {
	t.Helper()
	u := testservers.Streamable(t, testservers.NewServer(), &mcp.StreamableHTTPOptions{}, wrap)
	opts := transport.HTTPOptions{URL: u}
	if c := memClient(t, u); c != nil {
		opts.Client = c
	}
	conn, err := transport.NewHTTP(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
