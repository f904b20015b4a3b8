package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// recorder collects what a connection reports: transport events, incoming
// frames, session notes and warnings, notifications.
type recorder struct {
	mu            sync.Mutex
	events        []transport.Event
	frames        []transport.Frame
	notes         []string
	warnings      []string
	departures    []string
	notifications []*jsonrpc.Message
	notified      chan struct{}
}

func newRecorder() *recorder { return &recorder{notified: make(chan struct{}, 16)} }

func (r *recorder) observe(ev transport.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) frame(_ time.Time, dir transport.Direction, f transport.Frame) {
	if dir != transport.Incoming {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames = append(r.frames, f)
}

func (r *recorder) eventText(kind transport.EventKind) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, ev := range r.events {
		if ev.Kind == kind {
			b.WriteString(ev.Text + "\n")
		}
	}
	return b.String()
}

// allDepartures returns the server's departures the session said.
func (r *recorder) allDepartures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.departures...)
}

func (r *recorder) allNotes() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.notes, "\n")
}

func (r *recorder) sessionOptions() inspector.Options {
	return inspector.Options{
		Lifecycle: &inspector.Legacy{
			ClientInfo:   inspector.Implementation{Name: "mcpx-test", Version: "0"},
			Capabilities: json.RawMessage(`{"roots":{}}`),
		},
		OnNote: func(s string) {
			r.mu.Lock()
			r.notes = append(r.notes, s)
			r.mu.Unlock()
		},
		OnWarning: func(s string) {
			r.mu.Lock()
			r.warnings = append(r.warnings, s)
			r.mu.Unlock()
		},
		OnDeparture: func(_ context.Context, s string) {
			r.mu.Lock()
			r.departures = append(r.departures, s)
			r.mu.Unlock()
		},
		OnNotification: func(m *jsonrpc.Message) {
			r.mu.Lock()
			r.notifications = append(r.notifications, m)
			r.mu.Unlock()
			select {
			case r.notified <- struct{}{}:
			default:
			}
		},
		Handlers: map[string]inspector.RequestHandler{
			"roots/list": func(context.Context, *jsonrpc.Message) (any, error) {
				return json.RawMessage(`{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}`), nil
			},
		},
	}
}

// dial opens an HTTP connection and an MCP session on it.
func dial(t *testing.T, opts transport.HTTPOptions, rec *recorder) (*inspector.Session, *transport.HTTPConn, error) {
	t.Helper()
	if rec == nil {
		rec = newRecorder()
	}
	opts.Observer = rec.observe
	if opts.Client == nil {
		if c := memClient(t, opts.URL); c != nil {
			opts.Client = c
		}
	}
	if opts.ReconnectDelay == 0 {
		opts.ReconnectDelay = 20 * time.Millisecond
	}
	conn, err := transport.NewHTTP(opts)
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sopts := rec.sessionOptions()
	sopts.Timeout = 10 * time.Second
	sess, err := inspector.Connect(ctx, transport.Tap(conn, rec.frame), sopts)
	if err != nil {
		return nil, conn, err
	}
	t.Cleanup(func() { sess.Close() })
	return sess, conn, nil
}

func mustDial(t *testing.T, opts transport.HTTPOptions, rec *recorder) (*inspector.Session, *transport.HTTPConn) {
	t.Helper()
	sess, conn, err := dial(t, opts, rec)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return sess, conn
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// toolText calls a tool and returns the text of its first content block.
func toolText(t *testing.T, sess *inspector.Session, name string, args any) string {
	t.Helper()
	res, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("tools/call %s: unexpected result %s", name, res)
	}
	return r.Content[0].Text
}

// seen is one request a test server received.
type seen struct {
	Method    string // HTTP method
	RPC       string // JSON-RPC method ("" for responses and GET/DELETE)
	ID        string
	Header    http.Header
	Body      []byte
	Time      time.Time
	LastEvent string
}

// reqLog records the requests a handler sees, JSON-RPC methods included.
type reqLog struct {
	mu   sync.Mutex
	reqs []seen
	hit  chan struct{}
}

func newLog() *reqLog { return &reqLog{hit: make(chan struct{}, 256)} }

func (l *reqLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.record(r)
		h.ServeHTTP(w, r)
	})
}

// record notes r, leaving its body readable.
func (l *reqLog) record(r *http.Request) seen {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s := seen{Method: r.Method, Header: r.Header.Clone(), Body: body, Time: time.Now(), LastEvent: r.Header.Get("Last-Event-ID")}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) == nil {
		s.RPC, s.ID = m.Method, string(m.ID)
	}
	l.mu.Lock()
	l.reqs = append(l.reqs, s)
	l.mu.Unlock()
	select {
	case l.hit <- struct{}{}:
	default:
	}
	return s
}

func (l *reqLog) all() []seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seen(nil), l.reqs...)
}

func (l *reqLog) count(method, rpc string) int {
	n := 0
	for _, s := range l.all() {
		if s.Method == method && (rpc == "*" || s.RPC == rpc) {
			n++
		}
	}
	return n
}

func (l *reqLog) find(method, rpc string) []seen {
	var out []seen
	for _, s := range l.all() {
		if s.Method == method && (rpc == "*" || s.RPC == rpc) {
			out = append(out, s)
		}
	}
	return out
}

// waitFor waits (bounded) until cond holds.
func (l *reqLog) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testwait.Poll(testwait.Bound, cond) {
		t.Fatalf("timed out waiting for %s; requests: %s", what, l.summary())
	}
}

func (l *reqLog) summary() string {
	var parts []string
	for _, s := range l.all() {
		parts = append(parts, fmt.Sprintf("%s %s %s", s.Method, s.RPC, s.Header.Get("Mcp-Session-Id")))
	}
	return strings.Join(parts, "; ")
}

// checkNoLeaks fails when goroutines of package transport are still
// running after the connection closed.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	var leaked []string
	gone := testwait.Poll(2*time.Second, func() bool {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		leaked = leaked[:0]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "mcpx/transport.(*") && !strings.Contains(g, "_test.go") {
				leaked = append(leaked, g)
			}
		}
		return len(leaked) == 0
	})
	if !gone {
		t.Fatalf("transport goroutines still running after Close:\n%s", strings.Join(leaked, "\n\n"))
	}
}
