package sessiond

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// wait bounds every wait in these tests; nothing should come near it.
const wait = 10 * time.Second

// testServer is an in-process Go SDK server with the tools the tests use.
type testServer struct {
	srv *mcp.Server
	// initialized counts notifications/initialized: a session that
	// initializes the server once, however many commands attach, sees 1.
	initialized atomic.Int32
	// sessions receives the server session once it is initialized.
	sessions chan *mcp.ServerSession
	// started receives the name of each blocking call as it starts, and
	// cancelled as its context ends.
	started, cancelled chan string
	// burst receives the number of progress notifications chatty sent,
	// once it has sent them all.
	burst chan int
	// wrap, when set, wraps the held session's connection to the server.
	wrap func(*pipeConn) transport.Conn
}

func newTestServer() *testServer {
	ts := &testServer{sessions: make(chan *mcp.ServerSession, 1), started: make(chan string, 10), cancelled: make(chan string, 10), burst: make(chan int, 1)}
	ts.srv = mcp.NewServer(&mcp.Implementation{Name: "sessiond-test", Version: "1.0.0"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			ts.initialized.Add(1)
			ts.sessions <- req.Session
		},
	})
	obj := map[string]any{"type": "object"}
	ts.srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Message string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return textResult("Echo: " + a.Message), nil
	})
	// block runs until it is cancelled, reporting progress once.
	ts.srv.AddTool(&mcp.Tool{Name: "block", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Tag string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "working " + a.Tag})
		}
		ts.started <- a.Tag
		<-ctx.Done()
		ts.cancelled <- a.Tag
		return nil, ctx.Err()
	})
	// chatty sends n progress notifications at once, then returns.
	ts.srv.AddTool(&mcp.Tool{Name: "chatty", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ N int }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		tok := req.Params.GetProgressToken()
		for i := range a.N {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Message: "item"}); err != nil {
				return nil, err
			}
		}
		ts.burst <- a.N
		return textResult(fmt.Sprintf("sent %d", a.N)), nil
	})
	// ask elicits a name from the client and returns what came back.
	ts.srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
		}})
		if err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil
	})
	return ts
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// pipeConn is our end of an in-process server's pipes.
type pipeConn struct {
	*transport.StreamConn
	closers []io.Closer
}

func (c *pipeConn) Close() error {
	c.StreamConn.Close()
	for _, cl := range c.closers {
		cl.Close()
	}
	return nil
}

// connect runs ts on pipes and returns the connection to it.
func (ts *testServer) connect(t *testing.T) transport.Conn {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	if _, err := ts.srv.Connect(t.Context(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil); err != nil {
		t.Fatal(err)
	}
	pc := &pipeConn{StreamConn: transport.NewStream(cr, cw), closers: []io.Closer{cr, cw, sr, sw}}
	if ts.wrap != nil {
		return ts.wrap(pc)
	}
	return pc
}

// held is a daemon serving a session with ts, in the background.
type held struct {
	d     *Daemon
	dir   string
	name  string
	sess  *inspector.Session
	ts    *testServer
	ss    *mcp.ServerSession
	notes chan string
	// kept receives each notification's method after the daemon took it.
	kept   chan string
	served chan error
	cancel context.CancelFunc
}

// sessionDir returns a private directory for sockets, short enough for a
// socket path.
func sessionDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func startHeld(t *testing.T, opts Options, fallback map[string]inspector.RequestHandler) *held {
	t.Helper()
	ts := newTestServer()
	h := startHeldOn(t, opts, fallback, ts, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"},
		Capabilities: json.RawMessage(`{"elicitation":{}}`)})
	select {
	case h.ss = <-h.ts.sessions:
	case <-time.After(wait):
		t.Fatal("the server was not initialized")
	}
	return h
}

func startHeldOn(t *testing.T, opts Options, fallback map[string]inspector.RequestHandler, ts *testServer, life inspector.Lifecycle) *held {
	t.Helper()
	h := startHeldConn(t, opts, fallback, ts.connect(t), life)
	h.ts = ts
	return h
}

// startHeldConn starts a daemon serving a session over conn, to a server
// of the test's own (h.ts is nil).
func startHeldConn(t *testing.T, opts Options, fallback map[string]inspector.RequestHandler, conn transport.Conn, life inspector.Lifecycle) *held {
	t.Helper()
	h := &held{notes: make(chan string, 100), kept: make(chan string, 100), served: make(chan error, 1)}
	if opts.Dir == "" {
		opts.Dir = sessionDir(t)
	}
	if opts.Name == "" {
		opts.Name = "t"
	}
	opts.OnNote = func(s string) { h.notes <- s }
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.d, h.dir, h.name = d, opts.Dir, opts.Name
	sess, err := inspector.Connect(t.Context(), conn, inspector.Options{
		Lifecycle:      life,
		Handlers:       d.Handlers(fallback),
		OnNotification: func(m *jsonrpc.Message) { d.OnNotification(m); h.kept <- m.Method },
		OnWarning:      func(s string) { h.notes <- "warning: " + s },
	})
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	h.sess = sess
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	ready := make(chan Status, 1)
	go func() {
		h.served <- d.Serve(ctx, sess, ServeOptions{Target: "in-process", Ready: func(st Status) error { ready <- st; return nil }})
	}()
	select {
	case <-ready:
	case <-time.After(wait):
		t.Fatal("Serve never got ready")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.served:
		case <-time.After(wait):
			t.Error("Serve did not end")
		}
	})
	return h
}

// command attaches a command's MCP session to the held one.
func (h *held) command(t *testing.T, opts inspector.Options) *inspector.Session {
	t.Helper()
	conn, err := Dial(t.Context(), h.dir, h.name, DialOptions{Label: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Lifecycle == nil {
		opts.Lifecycle = &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "command", Version: "1"}}
	}
	s, err := inspector.Connect(t.Context(), conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callText(t *testing.T, s *inspector.Session, ctx context.Context, tool, args string, opts ...inspector.CallOption) (string, error) {
	t.Helper()
	raw, err := s.CallTool(ctx, tool, json.RawMessage(args), opts...)
	if err != nil {
		return "", err
	}
	var res struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("result %s: %v", raw, err)
	}
	return res.Content[0].Text, nil
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("waited in vain for %s", what)
	}
	panic("unreachable")
}

func TestCommandsShareTheHeldSession(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	for i := range 3 {
		s := h.command(t, inspector.Options{})
		if got := s.Server().Implementation.Name; got != "sessiond-test" {
			t.Errorf("command %d sees server %q", i, got)
		}
		text, err := callText(t, s, t.Context(), "echo", fmt.Sprintf(`{"message":"hi %d"}`, i))
		if err != nil || text != fmt.Sprintf("Echo: hi %d", i) {
			t.Errorf("command %d: %q, %v", i, text, err)
		}
		s.Close()
	}
	if n := h.ts.initialized.Load(); n != 1 {
		t.Errorf("the server was initialized %d times, want once", n)
	}
}

// A command that cancels its request (Ctrl-C) cancels only that one: the
// server hears of it, another command's request goes on, and the session
// serves the next command.
func TestCancelEndsOnlyThatRequest(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	a := h.command(t, inspector.Options{})
	b := h.command(t, inspector.Options{})
	actx, acancel := context.WithCancel(t.Context())
	aerr := make(chan error, 1)
	go func() { _, err := callText(t, a, actx, "block", `{"tag":"a"}`); aerr <- err }()
	bctx, bcancel := context.WithCancel(t.Context())
	berr := make(chan error, 1)
	go func() { _, err := callText(t, b, bctx, "block", `{"tag":"b"}`); berr <- err }()
	started := map[string]bool{receive(t, h.ts.started, "a call"): true, receive(t, h.ts.started, "a call"): true}
	if !started["a"] || !started["b"] {
		t.Fatalf("started %v", started)
	}
	acancel()
	if err := receive(t, aerr, "a's call to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("a's call ended with %v", err)
	}
	if got := receive(t, h.ts.cancelled, "the server to hear of the cancellation"); got != "a" {
		t.Errorf("the server cancelled %q, want a", got)
	}
	select {
	case err := <-berr:
		t.Fatalf("b's call ended too: %v", err)
	default:
	}
	bcancel()
	receive(t, berr, "b's call to end")
	c := h.command(t, inspector.Options{})
	if text, err := callText(t, c, t.Context(), "echo", `{"message":"still here"}`); err != nil || text != "Echo: still here" {
		t.Errorf("after the cancellations: %q, %v", text, err)
	}
}

// A command that goes away in the middle of a request (killed) has its
// request cancelled; the session lives on.
func TestCommandGoneCancelsItsRequests(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	conn, err := Dial(t.Context(), h.dir, h.name, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	if err := conn.Write(t.Context(), transport.Frame{Data: []byte(init)}); err != nil {
		t.Fatal(err)
	}
	f, err := conn.Read(t.Context())
	if err != nil || !strings.Contains(string(f.Data), `"sessiond-test"`) {
		t.Fatalf("initialize: %s, %v", f.Data, err)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{"tag":"gone"}}}`
	if err := conn.Write(t.Context(), transport.Frame{Data: []byte(call)}); err != nil {
		t.Fatal(err)
	}
	receive(t, h.ts.started, "the call")
	conn.Close()
	if got := receive(t, h.ts.cancelled, "the cancellation"); got != "gone" {
		t.Errorf("cancelled %q", got)
	}
	s := h.command(t, inspector.Options{})
	if _, err := callText(t, s, t.Context(), "echo", `{"message":"x"}`); err != nil {
		t.Error(err)
	}
}

// Progress reaches the command that asked for it, under its own token.
func TestProgressGoesToTheCaller(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	other := make(chan string, 10)
	bystander := h.command(t, inspector.Options{OnNotification: func(m *jsonrpc.Message) { other <- m.Method }})
	_ = bystander
	s := h.command(t, inspector.Options{})
	got := make(chan inspector.Progress, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := callText(t, s, ctx, "block", `{"tag":"p"}`, inspector.WithProgress(func(p inspector.Progress) { got <- p }))
		done <- err
	}()
	p := receive(t, got, "progress")
	if p.Message != "working p" || p.Progress != 1 {
		t.Errorf("progress %+v", p)
	}
	cancel()
	receive(t, done, "the call to end")
	select {
	case m := <-other:
		t.Errorf("the other command got %s", m)
	default:
	}
}

// A server request goes to the command whose request is in flight.
func TestServerRequestGoesToTheWaitingCommand(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	_ = h.command(t, inspector.Options{}) // attached, waiting on nothing
	s := h.command(t, inspector.Options{
		Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "command", Version: "1"}, Capabilities: json.RawMessage(`{"elicitation":{}}`)},
		Handlers: map[string]inspector.RequestHandler{
			"elicitation/create": func(context.Context, *jsonrpc.Message) (any, error) {
				return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
			},
		},
	})
	text, err := callText(t, s, t.Context(), "ask", `{}`)
	if err != nil || text != "accept Ada" {
		t.Errorf("ask: %q, %v", text, err)
	}
}

// With no command waiting, a server request is declined, or answered by
// the session's own policy, and noted for watch.
func TestServerRequestWithoutACommand(t *testing.T) {
	t.Run("declined", func(t *testing.T) {
		h := startHeld(t, Options{}, nil)
		res, err := h.ss.Elicit(t.Context(), &mcp.ElicitParams{Message: "anyone?", RequestedSchema: map[string]any{"type": "object"}})
		if err != nil || res.Action != "decline" {
			t.Fatalf("elicit: %+v, %v", res, err)
		}
		kept, err := TakeKept(t.Context(), h.dir, h.name)
		if err != nil || len(kept) != 1 || !strings.Contains(kept[0].Note, "elicitation/create while no command was waiting: declined") {
			t.Errorf("kept %+v, %v", kept, err)
		}
	})
	t.Run("policy", func(t *testing.T) {
		h := startHeld(t, Options{}, map[string]inspector.RequestHandler{
			"elicitation/create": func(context.Context, *jsonrpc.Message) (any, error) {
				return map[string]string{"action": "cancel"}, nil
			},
		})
		res, err := h.ss.Elicit(t.Context(), &mcp.ElicitParams{Message: "anyone?", RequestedSchema: map[string]any{"type": "object"}})
		if err != nil || res.Action != "cancel" {
			t.Fatalf("elicit: %+v, %v", res, err)
		}
	})
}

// Notifications go to the attached commands; while none is attached they
// are kept, bounded, for the next watch.
func TestNotificationsKeptBetweenCommands(t *testing.T) {
	h := startHeld(t, Options{Keep: 2}, nil)
	obj := map[string]any{"type": "object"}
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult(""), nil }
	for i := range 3 {
		h.ts.srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("new%d", i), InputSchema: obj}, noop)
		receive(t, h.kept, "the list_changed notification")
	}
	kept, err := TakeKept(t.Context(), h.dir, h.name)
	if err != nil || len(kept) != 3 {
		t.Fatalf("kept %d (want a note and the last 2), %v", len(kept), err)
	}
	// What was dropped is said first (it was older than what is kept).
	if kept[0].Note != "1 older one was dropped: while no command is attached, the session keeps only the newest 2, at most 4 MiB" {
		t.Errorf("the first kept is %+v", kept[0])
	}
	if !strings.Contains(string(kept[1].Message), "notifications/tools/list_changed") {
		t.Errorf("kept %s", kept[1].Message)
	}
	var logged bool
	for len(h.notes) > 0 && !logged {
		logged = strings.Contains(<-h.notes, "the notifications kept for mcpx @t watch reached their bound (the newest 2, at most 4 MiB): older ones are dropped")
	}
	if !logged {
		t.Error("the log does not say that notifications were dropped")
	}
	if st, err := GetStatus(t.Context(), h.dir, h.name); err != nil || st.Dropped != 1 || st.Kept != 0 {
		t.Errorf("status %+v, %v", st, err)
	}

	seen := make(chan string, 10)
	h.command(t, inspector.Options{OnNotification: func(m *jsonrpc.Message) { seen <- m.Method }})
	h.ts.srv.AddTool(&mcp.Tool{Name: "live", InputSchema: obj}, noop)
	receive(t, h.kept, "the daemon to pass it on")
	if m := receive(t, seen, "the notification at the command"); m != "notifications/tools/list_changed" {
		t.Errorf("command saw %s", m)
	}
	if kept, _ := TakeKept(t.Context(), h.dir, h.name); len(kept) != 0 {
		t.Errorf("kept %d while a command was attached", len(kept))
	}
}

func TestIdleTimeoutEndsTheSession(t *testing.T) {
	h := startHeld(t, Options{IdleTimeout: 50 * time.Millisecond}, nil)
	if err := receive(t, h.served, "the idle timeout"); !errors.Is(err, ErrIdle) {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil // for the cleanup
	select {
	case <-h.sess.Done():
	case <-time.After(wait):
		t.Error("the session is still open")
	}
	if _, err := os.Lstat(h.d.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left: %v", err)
	}
}

// The idle clock starts when the session is open, not when the daemon
// claimed its socket: a server that took most of the idle timeout to start
// (connect --idle-timeout 5s with a server that starts in 4.5s) is not
// ended a moment after it opened.
func TestIdleClockStartsWhenTheSessionIsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := New(Options{Dir: sessionDir(t), Name: "t", IdleTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		// No command attaches: a goroutine waiting in accept (network I/O)
		// would keep the bubble's clock from advancing.
		d.ln.Close()
		time.Sleep(4500 * time.Millisecond) // the server starting
		sess, err := inspector.Connect(t.Context(), newTestServer().connect(t), inspector.Options{
			Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}},
			Handlers:  d.Handlers(nil), OnNotification: d.OnNotification,
		})
		if err != nil {
			t.Fatal(err)
		}
		opened := time.Now()
		served := make(chan error, 1)
		go func() { served <- d.Serve(t.Context(), sess, ServeOptions{Target: "in-process"}) }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case err := <-served:
			t.Fatalf("the session ended %s after it opened: %v", time.Since(opened), err)
		default:
		}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		select {
		case err := <-served:
			if !errors.Is(err, ErrIdle) {
				t.Errorf("Serve: %v", err)
			}
		default:
			t.Fatalf("the session is still open %s after it opened", time.Since(opened))
		}
	})
}

// An attached command keeps the session from idling out.
func TestAttachedCommandIsNotIdle(t *testing.T) {
	h := startHeld(t, Options{IdleTimeout: 100 * time.Millisecond}, nil)
	s := h.command(t, inspector.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := callText(t, s, ctx, "block", `{"tag":"long"}`); done <- err }()
	receive(t, h.ts.started, "the call")
	// Several idle timeouts pass while the command waits.
	select {
	case err := <-h.served:
		t.Fatalf("the session ended with a command attached: %v", err)
	case <-time.After(400 * time.Millisecond):
	}
	cancel()
	receive(t, done, "the call")
	s.Close()
	if err := receive(t, h.served, "the idle timeout"); !errors.Is(err, ErrIdle) {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
}

func TestStop(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	s := h.command(t, inspector.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := callText(t, s, ctx, "block", `{"tag":"stop"}`); done <- err }()
	receive(t, h.ts.started, "the call")
	if err := Stop(t.Context(), h.dir, h.name); err != nil {
		t.Fatal(err)
	}
	// Stop returned after the session ended.
	select {
	case <-h.sess.Done():
	default:
		t.Error("Stop returned before the session was closed")
	}
	var ended *EndedError
	if err := receive(t, done, "the attached call"); !errors.As(err, &ended) || !strings.HasSuffix(err.Error(), "session t: the session was closed (mcpx disconnect)") {
		t.Errorf("the attached call ended with %v", err)
	}
	if err := receive(t, h.served, "Serve"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
	if _, err := Dial(t.Context(), h.dir, h.name, DialOptions{}); !errors.Is(err, ErrNoSession) || !errors.Is(err, transport.ErrConnect) {
		t.Errorf("Dial after Stop: %v", err)
	}
}

// A session process told to stop (Serve's context ends: a signal) tells
// the attached commands so, not "context canceled".
func TestInterruptedSessionTellsCommands(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	s := h.command(t, inspector.Options{})
	done := make(chan error, 1)
	go func() { _, err := callText(t, s, t.Context(), "block", `{"tag":"interrupted"}`); done <- err }()
	receive(t, h.ts.started, "the call")
	h.cancel()
	var ended *EndedError
	if err := receive(t, done, "the attached call"); !errors.As(err, &ended) || !strings.Contains(err.Error(), "the session process was interrupted") || strings.Contains(err.Error(), "context canceled") {
		t.Errorf("the attached call ended with %v", err)
	}
	if err := receive(t, h.served, "Serve"); !errors.Is(err, context.Canceled) {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
}

func TestNames(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	if _, err := New(Options{Name: h.name, Dir: h.dir}); !errors.Is(err, ErrExists) {
		t.Errorf("a second session of the name: %v", err)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", strings.Repeat("x", 65)} {
		if _, err := Dial(t.Context(), h.dir, bad, DialOptions{}); !errors.Is(err, ErrBadName) {
			t.Errorf("Dial %q: %v", bad, err)
		}
	}
	list, err := List(t.Context(), h.dir)
	if err != nil || len(list) != 1 || list[0].Name != h.name || list[0].Server != "sessiond-test 1.0.0" || list[0].Target != "in-process" || list[0].Era != "legacy" {
		t.Errorf("List: %+v, %v", list, err)
	}
}

// A socket whose session process was killed is replaced by the next
// session of the name, and List removes it.
func TestStaleSocket(t *testing.T) {
	dir := sessionDir(t)
	d, err := New(Options{Name: "old", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// As if the process was killed: the listener is gone, the file stays.
	d.ln.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
	d.ln.Close()
	if _, err := os.Lstat(filepath.Join(dir, "old.sock")); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(t.Context(), dir, "old", DialOptions{}); !errors.Is(err, ErrNoSession) ||
		err.Error() != `no session named "old" is open: its process had ended without closing (killed, or crashed)` {
		t.Errorf("Dial a stale socket: %v", err)
	}
	var stale *StaleError
	if list, err := List(t.Context(), dir); !errors.As(err, &stale) || stale.Name != "old" || len(list) != 0 {
		t.Errorf("List: %v, %v; want the stale socket reported", list, err)
	} else if !strings.HasPrefix(err.Error(), "session old had ended without closing (its process was killed, or crashed): its socket was removed") {
		t.Errorf("List: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "old.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("List left the stale socket: %v", err)
	}
	d2, err := New(Options{Name: "old", Dir: dir})
	if err != nil {
		t.Fatalf("a new session where a stale socket was: %v", err)
	}
	d2.Close()
}

// In the 2026-07-28 era a subscription's acknowledgement and
// notifications carry its request's id: they go to the command that
// listens, under its own id.
func TestModernSubscriptionGoesToItsCommand(t *testing.T) {
	srv := testservers.NewModernServer(nil, nil)
	h := startHeldOn(t, Options{}, nil, &testServer{srv: srv}, &inspector.Modern{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
	modern := func() inspector.Lifecycle {
		return &inspector.Modern{ClientInfo: inspector.Implementation{Name: "command", Version: "1"}}
	}
	_ = h.command(t, inspector.Options{Lifecycle: modern()}) // a bystander
	seen := make(chan string, 10)
	s := h.command(t, inspector.Options{Lifecycle: modern(), OnNotification: func(m *jsonrpc.Message) { seen <- m.Method }})
	if text, err := callText(t, s, t.Context(), "echo", `{"message":"hi"}`); err != nil || text != "Echo: hi" {
		t.Fatalf("echo: %q, %v", text, err)
	}
	acks := make(chan inspector.WatchAck, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.Watch(ctx, inspector.WatchSpec{Lists: true}, inspector.WatchHooks{OnAck: func(a inspector.WatchAck) { acks <- a }})
	}()
	ack := receive(t, acks, "the acknowledgement")
	if !ack.Granted.ToolsListChanged {
		t.Errorf("granted %+v", ack.Granted)
	}
	srv.AddTool(&mcp.Tool{Name: "new", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult(""), nil
	})
	if m := receive(t, seen, "the list change"); m != "notifications/tools/list_changed" {
		t.Errorf("the command saw %s", m)
	}
	cancel()
	receive(t, done, "the watch to end")
}

func TestRing(t *testing.T) {
	r := ring{maxItems: 3, maxBytes: 10}
	for _, s := range []string{"aaaa", "bbbb", "cc", "dddddddddddd", "e"} {
		r.add(Kept{Note: s})
	}
	var got []string
	items, lost, _ := r.take()
	for _, k := range items {
		got = append(got, k.Note)
	}
	// dddddddddddd is over the byte budget on its own; aaaa went for bytes.
	if strings.Join(got, ",") != "bbbb,cc,e" || r.dropped != 2 || lost != 2 {
		t.Errorf("kept %v, dropped %d, lost %d", got, r.dropped, lost)
	}
	if items, lost, _ := r.take(); len(items) != 0 || lost != 0 || r.bytes != 0 || r.dropped != 2 {
		t.Error("take did not empty the ring")
	}
	if !r.add(Kept{Note: strings.Repeat("f", 11)}) || r.add(Kept{Note: strings.Repeat("g", 11)}) {
		t.Error("add did not report the first loss since the take alone")
	}
}

// rawAttach attaches to h's session as a client other than mcpx would,
// on the socket itself, and sends frames.
func rawAttach(t *testing.T, h *held, frames ...string) net.Conn {
	t.Helper()
	nc, err := net.Dial("unix", h.d.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	lines := `{"mcpxSession":1,"op":"attach","label":"raw"}` + "\n"
	for _, f := range frames {
		lines += `{"frame":` + f + "}\n"
	}
	go func() { _, _ = io.WriteString(nc, lines) }()
	return nc
}

// A command that stops reading (suspended with Ctrl-Z, say) while a large
// answer is on its way does not hold the session up: it is detached, and
// the session ends when asked to, at once.
func TestCommandThatStopsReading(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	big := strings.Repeat("x", 2<<20) // far more than the socket buffers hold
	nc := rawAttach(t, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+big+`"}}}`)
	// The reply to the hello, then the beginning of the answer: the
	// session is writing it.
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	r := bufio.NewReader(nc)
	if _, err := r.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Peek(100); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := Stop(ctx, h.dir, h.name); err != nil {
		t.Fatalf("Stop while a command does not read: %v", err)
	}
	if err := receive(t, h.served, "Serve"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
}

// A first line too long for a hello is not read whole (memory), and the
// session serves the next command.
func TestLongHello(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	nc, err := net.Dial("unix", h.d.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go func() { _, _ = nc.Write(make([]byte, 4<<20)) }()
	// Sooner than the hello's time limit: the session gives up on it at
	// once.
	_ = nc.SetReadDeadline(time.Now().Add(helloTimeout / 2))
	if n, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the session answered a 4 MiB hello with %d bytes, %v; want the connection closed", n, err)
	}
	if note := receive(t, h.notes, "a note"); !strings.Contains(note, "a first line longer than 65536 bytes, which is no hello") {
		t.Errorf("noted %q", note)
	}
	s := h.command(t, inspector.Options{})
	if got, err := callText(t, s, t.Context(), "echo", `{"message":"x"}`); err != nil || got != "Echo: x" {
		t.Errorf("echo: %q, %v", got, err)
	}
}

// Processes that open a session of the same name at once where a stale
// socket was: one gets the name, the others ErrExists. None may remove
// the socket another just made, which would leave a session no command
// can reach.
func TestStaleSocketClaimedOnce(t *testing.T) {
	for round := range 50 {
		dir := sessionDir(t)
		ln, err := net.Listen("unix", filepath.Join(dir, "r.sock"))
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close() // stale
		ds := make([]*Daemon, 4)
		errs := make([]error, len(ds))
		var wg sync.WaitGroup
		for i := range ds {
			wg.Go(func() { ds[i], errs[i] = New(Options{Name: "r", Dir: dir}) })
		}
		wg.Wait()
		var open []*Daemon
		for i, d := range ds {
			if d != nil {
				open = append(open, d)
				defer d.Close()
			} else if !errors.Is(errs[i], ErrExists) {
				t.Errorf("round %d: New: %v", round, errs[i])
			}
		}
		if len(open) != 1 {
			t.Fatalf("round %d: %d sessions claimed the name", round, len(open))
		}
		if nc, err := net.Dial("unix", open[0].Socket()); err != nil {
			t.Fatalf("round %d: the session that claimed the name cannot be reached: %v", round, err)
		} else {
			nc.Close()
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("round %d: the directory holds %d entries, want the socket alone", round, len(entries))
		}
	}
}

// A session process that hangs (stopped, say) is given the command's own
// timeout when it is shorter than the usual wait for its reply.
func TestDialTimeout(t *testing.T) {
	dir := sessionDir(t)
	ln, err := net.Listen("unix", filepath.Join(dir, "hung.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(filepath.Join(dir, "hung.sock"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Connections are accepted (the backlog) and never answered.
	ctx, cancel := context.WithTimeout(t.Context(), replyTimeout/2)
	defer cancel()
	_, err = Dial(ctx, dir, "hung", DialOptions{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, transport.ErrConnect) || !strings.Contains(err.Error(), "session hung did not answer within 50ms") {
		t.Errorf("Dial: %v", err)
	}
}

// A burst of notifications (a tool's progress for each of many items)
// that the command reads more slowly than the server sends them waits in
// the session for it: the command is not detached.
func TestBurstReachesASlowCommand(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	s := h.command(t, inspector.Options{})
	const n = 8000 // some 1.2 MB through the session: far past the old bound of 1024 lines and what the socket buffers hold
	var got atomic.Int32
	sent := make(chan int, 1)
	progress := inspector.WithProgress(func(inspector.Progress) {
		if got.Add(1) == 1 {
			// The command reads nothing more until the server has sent
			// the whole burst (bounded: a failure is reported below).
			select {
			case m := <-h.ts.burst:
				sent <- m
			case <-time.After(wait):
			}
		}
	})
	text, err := callText(t, s, t.Context(), "chatty", fmt.Sprintf(`{"n":%d}`, n), progress)
	if err != nil || text != fmt.Sprintf("sent %d", n) {
		t.Fatalf("chatty: %q, %v", text, err)
	}
	if m := receive(t, sent, "the burst"); m != n {
		t.Errorf("the server sent %d", m)
	}
	if got.Load() != n {
		t.Errorf("%d progress notifications reached the command, want %d", got.Load(), n)
	}
}

// A command that does not read its notifications at all is detached when
// they pile up beyond the bounds, and told why.
func TestFloodDetachesACommandThatDoesNotRead(t *testing.T) {
	// A smaller bound than the session's, so that the flood is quick
	// under the race detector: the kernel's socket buffers take a few
	// thousand of these before the queue fills. No grace: the first
	// notification that finds the queue full detaches the command.
	defer func(n int, d time.Duration) { queueLen, stallLimit = n, d }(queueLen, stallLimit)
	queueLen, stallLimit = 1000, 0
	h := startHeld(t, Options{}, nil)
	nc := rawAttach(t, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty","arguments":{"n":20000},"_meta":{"progressToken":"p"}}}`)
	for note := receive(t, h.notes, "a note"); !strings.Contains(note, "does not read what the session sends: detached"); note = receive(t, h.notes, "a note") {
	}
	// What was written before the end, then why.
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	b, err := io.ReadAll(nc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"closed":"the command did not read what the server sent for 0s (1000 messages or 32 MiB waiting for it): it was detached"}`) {
		t.Errorf("the command was not told why it was detached: ...%s", b[max(0, len(b)-300):])
	}
}

// A command that reads, but more slowly than a flooding server sends,
// loses notifications rather than being detached: the answer to its own
// request reaches it, and it is told how many notifications it lost.
func TestFloodDropsNotificationsForASlowCommand(t *testing.T) {
	defer func(n int, d time.Duration) { queueLen, stallLimit = n, d }(queueLen, stallLimit)
	queueLen, stallLimit = 100, time.Hour
	h := startHeld(t, Options{}, nil)
	nc, err := net.Dial("unix", h.d.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	const n = 20000
	go func() {
		_, _ = io.WriteString(nc, `{"mcpxSession":1,"op":"attach","label":"slow","dropped":true}`+"\n"+
			`{"frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty","arguments":{"n":`+strconv.Itoa(n)+`},"_meta":{"progressToken":"p"}}}}`+"\n")
	}()
	// The command reads nothing until the server has sent the whole
	// burst, far more than the queue and the socket buffers hold.
	if m := receive(t, h.ts.burst, "the burst"); m != n {
		t.Fatalf("the server sent %d", m)
	}
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	r := bufio.NewReader(nc)
	// Every notification either reaches the command or is counted in a
	// line that says how many were dropped.
	var progress, dropped int
	var answered bool
	for !answered || progress+dropped < n {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d progress notifications and %d dropped (answered %v): %v", progress, dropped, answered, err)
		}
		var env struct {
			Closed, Dropped string
		}
		_ = json.Unmarshal(line, &env)
		switch s := string(line); {
		case env.Closed != "":
			t.Fatalf("the command was detached: %s", env.Closed)
		case env.Dropped != "":
			var k int
			if _, err := fmt.Sscanf(env.Dropped, "dropped %d notification(s) from the server: they came faster than this command could take them", &k); err != nil || k <= 0 {
				t.Fatalf("the command was told %q", env.Dropped)
			}
			dropped += k
		case strings.Contains(s, "notifications/progress"):
			progress++
		case strings.Contains(s, `"id":1`) && strings.Contains(s, "sent "+strconv.Itoa(n)):
			answered = true
		}
	}
	if progress+dropped != n || dropped == 0 {
		t.Errorf("%d progress notifications reached the command and %d were said dropped, of %d", progress, dropped, n)
	}
}

// List asks the sessions at once: a session process that hangs (here a
// socket that takes the connection and never answers) does not hold up
// the others, each of which would otherwise wait its turn for the one
// before to time out.
func TestListAsksAtOnce(t *testing.T) {
	dir := sessionDir(t)
	const n = 3
	accepted := make(chan struct{}, n)
	release := make(chan struct{})
	for i := range n {
		ln, err := net.Listen("unix", filepath.Join(dir, fmt.Sprintf("frozen%d.sock", i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			<-release
			c.Close()
		}()
	}
	done := make(chan error, 1)
	go func() {
		_, err := List(t.Context(), dir)
		done <- err
	}()
	// Far less than the reply timeout that a session asked in turn after
	// a frozen one would wait first.
	bound := time.After(replyTimeout / 2)
	for range n {
		select {
		case <-accepted:
		case <-bound:
			t.Fatal("List did not ask every session at once")
		}
	}
	close(release)
	select {
	case err := <-done:
		if err == nil {
			t.Error("List of sessions that answered nothing: no error")
		}
	case <-time.After(wait):
		t.Fatal("List did not return once the sessions closed")
	}
}

// A command may have at most maxInflight requests in flight through the
// session: one more is refused at once (a client that sends without
// reading answers would otherwise grow the session and the server
// without bound), and the requests in flight go on.
func TestInflightBounded(t *testing.T) {
	defer func(n int) { maxInflight = n }(maxInflight)
	maxInflight = 3
	h := startHeld(t, Options{}, nil)
	var frames []string
	for i := 1; i <= 4; i++ {
		frames = append(frames, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block","arguments":{"tag":"t%d"}}}`, i, i))
	}
	nc := rawAttach(t, h, frames...)
	for range 3 {
		receive(t, h.ts.started, "a blocking call")
	}
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	r := bufio.NewReader(nc)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no answer to the request over the limit: %v", err)
		}
		var env envelope
		if json.Unmarshal(line, &env) != nil || len(env.Frame) == 0 {
			continue // the reply to the hello
		}
		var m struct {
			ID    int `json:"id"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(env.Frame, &m) != nil || m.ID == 0 {
			continue // progress of the blocking calls
		}
		if m.ID != 4 || m.Error == nil || !strings.Contains(m.Error.Message, "has 3 requests in flight") {
			t.Fatalf("answer %s; want request 4 refused", env.Frame)
		}
		break
	}
	select {
	case tag := <-h.ts.started:
		t.Errorf("the request over the limit reached the server (%s)", tag)
	default:
	}
}

// While mcpx connect opens the session (a server slow to start, an
// authorization), the socket answers: a status says so, an attach is
// refused at once as such, and a stop ends the opening. A socket that
// accepted nothing held each of them until its wait ran out, and mcpx
// disconnect until the opening ended by itself.
func TestOpeningSessionAnswers(t *testing.T) {
	dir := sessionDir(t)
	d, err := New(Options{Name: "slow", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(t.Context(), wait/2)
	defer cancel()
	st, err := GetStatus(ctx, dir, "slow")
	if err != nil || !st.Opening || st.PID != os.Getpid() {
		t.Fatalf("status while opening: %+v, %v", st, err)
	}
	var opening *OpeningError
	if _, err := Dial(ctx, dir, "slow", DialOptions{}); !errors.As(err, &opening) || !errors.Is(err, transport.ErrConnect) ||
		!strings.HasPrefix(err.Error(), "session slow is still opening") {
		t.Fatalf("attach while opening: %v", err)
	}
	if list, err := List(ctx, dir); err != nil || len(list) != 1 || !list[0].Opening {
		t.Errorf("List while opening: %+v, %v", list, err)
	}
	openCtx := d.Opening(t.Context())
	stopped := make(chan error, 1)
	go func() { stopped <- Stop(ctx, dir, "slow") }()
	select {
	case <-openCtx.Done():
	case <-time.After(wait):
		t.Fatal("a stop request did not end the opening")
	}
	if cause := context.Cause(openCtx); !errors.Is(cause, ErrStoppedOpening) {
		t.Errorf("the opening ended with %v", cause)
	}
	// The opener gives up and closes: the stop request is answered.
	d.Close()
	if err := receive(t, stopped, "Stop"); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "slow.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left: %v", err)
	}
}

// Once served, the opening's context no longer ends with a stop: Serve does.
func TestOpeningContextOutlivesTheOpening(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	openCtx := h.d.Opening(t.Context())
	if err := Stop(t.Context(), h.dir, h.name); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, h.served, "Serve"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
	if openCtx.Err() != nil {
		t.Errorf("the opening's context ended after the session opened: %v", context.Cause(openCtx))
	}
}

// A message longer than the session takes from a command (its maximum
// message size) is refused by the command's end, which stays attached:
// the session detached it, and the command said the session process had
// gone away ("connection reset by peer").
func TestMessageLongerThanTheSessionTakes(t *testing.T) {
	h := startHeld(t, Options{MaxMessageSize: 1 << 10}, nil)
	s := h.command(t, inspector.Options{})
	_, err := callText(t, s, t.Context(), "echo", `{"message":"`+strings.Repeat("x", 2<<10)+`"}`)
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1<<10 || !strings.Contains(err.Error(), "is longer than the 1 KiB session t takes") {
		t.Fatalf("an oversized request: %v", err)
	}
	if got, err := callText(t, s, t.Context(), "echo", `{"message":"still here"}`); err != nil || got != "Echo: still here" {
		t.Errorf("the command after it: %q, %v", got, err)
	}
}

// A client other than mcpx that sends a line longer than the session
// takes is detached and told why, not reset.
func TestOversizedLineIsExplained(t *testing.T) {
	h := startHeld(t, Options{MaxMessageSize: 1 << 10}, nil)
	nc := rawAttach(t, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+strings.Repeat("x", 64<<10)+`"}}}`)
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	r := bufio.NewReader(nc)
	if _, err := r.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadBytes('\n')
	var env envelope
	if err != nil || json.Unmarshal(line, &env) != nil || !strings.Contains(env.Closed, "the command sent a message longer than the 1 KiB the session takes") {
		t.Fatalf("after an oversized line the command read %q, %v", line, err)
	}
}

// A message of exactly the maximum size goes through in both directions
// (the envelope around it is not counted), and one longer than the
// command's own limit is reported as such, not as a session that went
// away.
func TestMaxMessageSizeThroughTheSession(t *testing.T) {
	const limit = 4 << 10
	h := startHeld(t, Options{MaxMessageSize: limit}, nil)
	roundTrip := func(max int64, frame string) ([]byte, error) {
		t.Helper()
		c, err := Dial(t.Context(), h.dir, h.name, DialOptions{MaxMessageSize: max})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		defer cancel()
		if err := c.Write(ctx, transport.Frame{Data: []byte(frame)}); err != nil {
			return nil, err
		}
		for {
			f, err := c.Read(ctx)
			if err != nil || bytes.Contains(f.Data, []byte(`"id":1,`)) || bytes.Contains(f.Data, []byte(`"id":1}`)) {
				return f.Data, err
			}
		}
	}
	call := func(msg string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + msg + `"}}}`
	}
	// A request of exactly the session's limit.
	req := call(strings.Repeat("x", limit-len(call(""))))
	res, err := roundTrip(0, req)
	if err != nil || !bytes.Contains(res, []byte(`Echo: xxx`)) {
		t.Fatalf("a request of exactly %d bytes: %.100s, %v", limit, res, err)
	}
	// An answer of exactly the command's limit.
	res, err = roundTrip(int64(len(res)), req)
	if err != nil || !bytes.Contains(res, []byte(`Echo: xxx`)) {
		t.Fatalf("an answer of exactly the command's limit: %.100s, %v", res, err)
	}
	_, err = roundTrip(int64(len(res)-1), req)
	var ended *EndedError
	if !errors.Is(err, transport.ErrFrameTooLarge) || errors.As(err, &ended) ||
		!strings.Contains(err.Error(), "a message the session passed on from its server exceeds the maximum message size") {
		t.Errorf("an answer longer than the command's limit: %v", err)
	}
}

// crashingConn is a server connection whose end reads as the exit of a
// stdio server that said why on its stderr.
type crashingConn struct {
	*pipeConn
	crash func() // ends the server's output
}

func (c *crashingConn) Read(ctx context.Context) (transport.Frame, error) {
	f, err := c.pipeConn.Read(ctx)
	if errors.Is(err, io.EOF) {
		err = &transport.PeerExitError{Status: "exit status 3", Code: 3, LastStderr: []string{"starting", "", "fatal: the widget exploded"}}
	}
	return f, err
}

// A command attached when the server crashes is told what the server
// said last, as a command of its own would be; so is the next command
// that names the session, from its log, which it points to.
func TestServerCrashIsExplained(t *testing.T) {
	ts := newTestServer()
	var crash func()
	ts.wrap = func(pc *pipeConn) transport.Conn {
		crash = func() { pc.closers[3].Close() } // the server's stdout
		return &crashingConn{pipeConn: pc}
	}
	dir := sessionDir(t)
	h := startHeldOn(t, Options{Dir: dir, Log: LogPath(dir, "t")}, nil, ts, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
	s := h.command(t, inspector.Options{})
	done := make(chan error, 1)
	go func() { _, err := callText(t, s, t.Context(), "block", `{"tag":"crash"}`); done <- err }()
	receive(t, ts.started, "the call")
	if err := os.WriteFile(LogPath(h.dir, h.name), []byte("the log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	crash()
	var ended *EndedError
	if err := receive(t, done, "the attached call"); !errors.As(err, &ended) ||
		!strings.HasSuffix(err.Error(), "the session ended: the connection to the server ended: server exited (exit status 3); its last stderr lines: starting | fatal: the widget exploded") {
		t.Errorf("the attached call ended with %v", err)
	}
	var se *ServerEndedError
	if err := receive(t, h.served, "Serve"); !errors.As(err, &se) {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
	// The log as the session process writes it: its notes (the end's
	// among them), then a server's line that looks like one.
	log := "the log\n"
	for len(h.notes) > 0 {
		log += "mcpx: 12:00:00 " + <-h.notes + "\n"
	}
	log += "server| mcpx: session t ended: as the server says\n"
	if err := os.WriteFile(LogPath(h.dir, h.name), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Dial(t.Context(), h.dir, h.name, DialOptions{})
	if !errors.Is(err, ErrNoSession) || err.Error() != `no session named "t" is open; the last one ended: the connection to the server ended: server exited (exit status 3); its last stderr lines: starting | fatal: the widget exploded (its log: `+LogPath(h.dir, h.name)+`)` {
		t.Errorf("Dial after the session ended: %v", err)
	}
	// A log that does not say (an older mcpx's) is pointed to.
	if err := os.WriteFile(LogPath(h.dir, h.name), []byte("the log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Dial(t.Context(), h.dir, h.name, DialOptions{})
	if !errors.Is(err, ErrNoSession) || err.Error() != `no session named "t" is open; the log of the last one, `+LogPath(h.dir, h.name)+`, says how it ended` {
		t.Errorf("Dial after the session ended, its log silent: %v", err)
	}
}

// exitedConn is a server connection whose server has exited.
type exitedConn struct{}

func (exitedConn) Read(context.Context) (transport.Frame, error) {
	return transport.Frame{}, &transport.PeerExitError{Status: "exit status 3", Code: 3}
}
func (exitedConn) Write(context.Context, transport.Frame) error { return nil }
func (exitedConn) Close() error                                 { return nil }

// A request in flight when the connection to the server ends gets no
// answer from the session: the session ends and tells each command why.
// An error answer ("server error -32603 (internal error): mcpx session t:
// tools/call: server exited") raced with that, and won often, as if the
// server had answered it.
func TestNoAnswerOnceTheServerIsGone(t *testing.T) {
	sess := inspector.NewSession(exitedConn{}, inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}}})
	defer sess.Close()
	select {
	case <-sess.Done():
	case <-time.After(wait):
		t.Fatal("the session did not end")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a := &attachment{d: &Daemon{opts: Options{Name: "t"}, forwards: map[string]forward{}}, ctx: ctx, cancel: cancel,
		ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
	a.forward(ctx, sess, &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "tools/call", Params: json.RawMessage(`{"name":"echo"}`)})
	if b, ok := a.take(); ok {
		t.Errorf("the command was answered %s", b)
	}
}

// A runtime directory that is not there is named as the environment's.
func TestDirNamesTheRuntimeDirectory(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "missing")
	_, err := Dir(func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return rt
		}
		return ""
	})
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "session directory (in $XDG_RUNTIME_DIR, "+rt+"): ") {
		t.Errorf("Dir: %v", err)
	}
}

// A relative $TMPDIR (os.TempDir returns it as it is on Unix) is not
// where sessions go: each working directory would have its own, and a
// session opened in one was not found from another.
func TestDirIgnoresRelativeTMPDIR(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the temp directory is the system's on Windows")
	}
	t.Setenv("TMPDIR", "rel")
	dir, err := Dir(func(k string) string {
		if k == "TMPDIR" {
			return "rel"
		}
		return ""
	})
	if err != nil {
		t.Fatalf("Dir with TMPDIR=rel: %v", err)
	}
	if want := filepath.Join("/tmp", "mcpx-"+userTag()); dir != want {
		t.Errorf("Dir with TMPDIR=rel = %q, want %q", dir, want)
	}
}

// A directory that cannot be made, or that another user took first, is
// reported with what chose it and how to choose another: the error named
// $XDG_RUNTIME_DIR without saying what to do, and a temp directory
// ($TMPDIR) not at all.
func TestDirSaysHowToChooseAnother(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_RUNTIME_DIR": missing}, "session directory (in $XDG_RUNTIME_DIR, " + missing + "): mkdir " + filepath.Join(missing, "mcpx") + ": "},
		{map[string]string{"TMPDIR": missing}, "session directory (in the temp directory, " + missing + "): mkdir " + filepath.Join(missing, "mcpx-"+userTag()) + ": "},
	} {
		_, err := Dir(func(k string) string { return c.env[k] })
		var de *DirError
		if !errors.As(err, &de) || !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), c.want) || !strings.Contains(err.Error(), "; set XDG_RUNTIME_DIR") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Dir with %v: %v", c.env, err)
		}
	}
}

// A socket path too long for a unix socket address says what avoids it:
// a shorter name where the directory leaves room for one, and the
// variables that choose the directory (it named XDG_RUNTIME_DIR alone,
// though without it the temp directory chose).
func TestSocketPathTooLong(t *testing.T) {
	dir := "/" + strings.Repeat("d", 80)
	_, err := socketPath(dir, strings.Repeat("n", 30))
	if err == nil || !strings.Contains(err.Error(), "; give the session a name of at most 16 characters, or set XDG_RUNTIME_DIR (or TMPDIR) to a shorter directory") {
		t.Errorf("socketPath: %v", err)
	}
	if _, err := socketPath(dir, strings.Repeat("n", 16)); err != nil {
		t.Errorf("a name of 16 characters: %v", err)
	}
	_, err = socketPath("/"+strings.Repeat("d", 100), "n")
	if err == nil || strings.Contains(err.Error(), "name of at most") || !strings.HasSuffix(err.Error(), "; set XDG_RUNTIME_DIR (or TMPDIR) to a shorter directory") {
		t.Errorf("socketPath of a deep directory: %v", err)
	}
}

// A connection closed without a word (another process's check that the
// session lives, before it would replace a stale socket) is not noted:
// it printed "a connection that said nothing useful: EOF" on the terminal
// of an mcpx connect that won a race for the name.
func TestProbeIsNotNoted(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	probe, err := net.Dial("unix", h.d.Socket())
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	junk, err := net.Dial("unix", h.d.Socket())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(junk, "junk\n")
	junk.Close()
	// Accepted after the probe, so the probe was accepted too.
	if note := receive(t, h.notes, "the junk noted"); !strings.Contains(note, "a connection that said nothing useful: session protocol error") {
		t.Fatalf("noted %q", note)
	}
	if err := Stop(t.Context(), h.dir, h.name); err != nil {
		t.Fatal(err)
	}
	receive(t, h.served, "Serve") // every connection was served
	h.served <- nil
	for len(h.notes) > 0 {
		if note := <-h.notes; strings.Contains(note, "said nothing useful") {
			t.Errorf("noted %q", note)
		}
	}
}

// fakeSession listens as session name in dir and runs serve on each
// connection.
func fakeSession(t *testing.T, dir, name string, serve func(net.Conn)) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(dir, name+".sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Chmod(filepath.Join(dir, name+".sock"), 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { nc.Close() })
			go serve(nc)
		}
	}()
}

// mcpx disconnect of a session process that does not answer (stopped
// with SIGSTOP, or hung) or does not end once asked fails in bounded time,
// saying so: it waited forever.
func TestStopIsBounded(t *testing.T) {
	defer func(r, e time.Duration) { replyTimeout, endTimeout = r, e }(replyTimeout, endTimeout)
	replyTimeout, endTimeout = 50*time.Millisecond, 50*time.Millisecond
	dir := sessionDir(t)
	fakeSession(t, dir, "frozen", func(net.Conn) {})
	fakeSession(t, dir, "stuck", func(nc net.Conn) {
		if _, err := bufio.NewReader(nc).ReadBytes('\n'); err == nil {
			_, _ = io.WriteString(nc, `{"ok":true,"status":{"name":"stuck","pid":42}}`+"\n")
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	var na *NotAnsweringError
	if err := Stop(ctx, dir, "frozen"); !errors.Is(err, transport.ErrConnect) || !errors.As(err, &na) || !strings.HasPrefix(err.Error(), "session frozen did not answer within 50ms: its process ") {
		t.Errorf("Stop a session that does not answer: %v", err)
	}
	// Where the system tells it, the error names the process to kill: mcpx
	// sessions cannot list a session that does not answer.
	if runtime.GOOS == "linux" && (na == nil || na.PID != os.Getpid() || !strings.Contains(na.Error(), fmt.Sprintf("its process (pid %d) may be stopped (SIGSTOP) or hung; once it is killed, mcpx connect frozen opens a new one", os.Getpid()))) {
		t.Errorf("Stop a session that does not answer: %v, not naming pid %d", na, os.Getpid())
	}
	var ne *NotEndedError
	if err := Stop(ctx, dir, "stuck"); !errors.As(err, &ne) || err.Error() != "session stuck was asked to end and did not within 50ms: its process (pid 42) may be hung" {
		t.Errorf("Stop a session that does not end: %v", err)
	}
	if ctx.Err() != nil {
		t.Error("Stop waited for the test's own bound")
	}
}

// dropsLargeAnswers is a server connection that drops an answer longer
// than limit as the transports do (see transport.LossReporter): the
// request it answers fails with a *transport.FrameTooLargeError.
type dropsLargeAnswers struct {
	*pipeConn
	limit  int
	mu     sync.Mutex
	onLost func(id string, err error)
}

func (c *dropsLargeAnswers) OnRequestLost(fn func(id string, err error)) {
	c.mu.Lock()
	c.onLost = fn
	c.mu.Unlock()
}

func (c *dropsLargeAnswers) Read(ctx context.Context) (transport.Frame, error) {
	for {
		f, err := c.pipeConn.Read(ctx)
		if err != nil || len(f.Data) <= c.limit {
			return f, err
		}
		msgs, _, derr := jsonrpc.DecodeFrame(f.Data)
		c.mu.Lock()
		fn := c.onLost
		c.mu.Unlock()
		if derr == nil && len(msgs) == 1 && msgs[0].IsResponse() && fn != nil {
			fn(msgs[0].ID.LooseKey(), &transport.FrameTooLargeError{What: "the server's answer", Limit: int64(c.limit)})
		}
	}
}

// An answer longer than the session's maximum message size fails the
// attached command's request as it would fail over a connection of the
// command's own — an error matching transport.ErrFrameTooLarge that says
// whose limit it was, for the advice — and the command stays attached.
// Before, it was a JSON-RPC error ("server error -32603: mcpx session t:
// …") that no advice could tell apart.
func TestAnswerLongerThanTheSessionTakes(t *testing.T) {
	const limit = 1 << 10
	ts := newTestServer()
	ts.wrap = func(pc *pipeConn) transport.Conn { return &dropsLargeAnswers{pipeConn: pc, limit: limit} }
	// (The session's own limit on what a command sends is larger: the
	// request goes through, its echo does not.)
	h := startHeldOn(t, Options{MaxMessageSize: 4 * limit}, nil, ts, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
	s := h.command(t, inspector.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	_, err := callText(t, s, ctx, "echo", `{"message":"`+strings.Repeat("x", limit)+`"}`)
	var tl *AnswerTooLargeError
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &tl) || tl.Name != "t" || tl.Limit != limit || !errors.Is(err, transport.ErrFrameTooLarge) || errors.As(err, &rpcErr) ||
		!strings.HasSuffix(err.Error(), "the server's answer exceeds the maximum message size of session t (1 KiB)") {
		t.Fatalf("the call: %v, want an *AnswerTooLargeError", err)
	}
	if got, err := callText(t, s, ctx, "echo", `{"message":"hi"}`); err != nil || got != "Echo: hi" {
		t.Errorf("the next call: %q, %v", got, err)
	}
}

// dropsLargeNotifications is a server connection that drops a message
// longer than limit as the transports drop a notification: it tells its
// observer (transport.EventDropped) and reads on.
type dropsLargeNotifications struct {
	*pipeConn
	limit   int
	observe func(transport.Event)
}

func (c *dropsLargeNotifications) Read(ctx context.Context) (transport.Frame, error) {
	for {
		f, err := c.pipeConn.Read(ctx)
		if err != nil || len(f.Data) <= c.limit {
			return f, err
		}
		c.observe(transport.Event{Time: time.Now(), Kind: transport.EventDropped,
			Text: fmt.Sprintf("dropped a message of %s, longer than the maximum message size (%s): %s", transport.FormatSize(int64(len(f.Data))), transport.FormatSize(int64(c.limit)), transport.Excerpt(string(f.Data)))})
	}
}

// startHeldDropping starts a held session whose connection drops the
// messages longer than limit, telling the daemon (Observe), and returns
// it with the server's session.
func startHeldDropping(t *testing.T, limit int) (*held, *mcp.ServerSession) {
	t.Helper()
	var d atomic.Pointer[Daemon]
	ts := newTestServer()
	ts.wrap = func(pc *pipeConn) transport.Conn {
		return &dropsLargeNotifications{pipeConn: pc, limit: limit, observe: func(ev transport.Event) { d.Load().Observe(ev) }}
	}
	h := startHeldOn(t, Options{}, nil, ts, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
	d.Store(h.d)
	return h, receive(t, ts.sessions, "the server's session")
}

// While no command is attached, a notification the session's connection
// drops for its size is kept for mcpx @NAME watch, in its place among the
// notifications kept; before, only the session's log said so.
func TestDroppedNotificationKeptForWatch(t *testing.T) {
	const limit = 1 << 10
	h, ss := startHeldDropping(t, limit)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "t", Progress: 1, Message: strings.Repeat("x", limit)}); err != nil {
		t.Fatal(err)
	}
	// A notification after it: once the session has it, the dropped one
	// was read before.
	h.ts.srv.AddTool(&mcp.Tool{Name: "after", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult(""), nil })
	receive(t, h.kept, "the notification after the dropped one")
	kept, err := TakeKept(t.Context(), h.dir, h.name)
	if err != nil || len(kept) != 2 {
		t.Fatalf("kept %+v, %v; want the dropped one's note and the notification after it", kept, err)
	}
	if !strings.HasPrefix(kept[0].Note, "dropped a message of ") || !strings.Contains(kept[0].Note, `"method":"notifications/progress"`) {
		t.Errorf("the first kept is %+v", kept[0])
	}
	if !strings.Contains(string(kept[1].Message), "notifications/tools/list_changed") {
		t.Errorf("the second kept is %+v", kept[1])
	}
}

// A notification the session's connection drops for its size is told to
// the command attached at that moment (its observer gets the
// EventDropped, with the transport's text), as its own connection would
// tell it; before, only the session's log said so. A command that did not
// ask for it (an older build) is not sent it, and goes on working.
func TestDroppedNotificationReachesTheCommand(t *testing.T) {
	const limit = 1 << 10
	h, ss := startHeldDropping(t, limit)

	events := make(chan transport.Event, 10)
	conn, err := Dial(t.Context(), h.dir, h.name, DialOptions{Label: t.Name(), Observer: func(ev transport.Event) { events <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := inspector.Connect(t.Context(), conn, inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "command", Version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A command of an older build does not ask for them (and would take
	// a line without a frame for a protocol error).
	older, olderLines := attachOlder(t, h)

	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "t", Progress: 1, Message: strings.Repeat("x", limit)}); err != nil {
		t.Fatal(err)
	}
	ev := receive(t, events, "the dropped notification's event")
	if ev.Kind != transport.EventDropped || !strings.HasPrefix(ev.Text, "dropped a message of ") ||
		!strings.Contains(ev.Text, `"method":"notifications/progress"`) {
		t.Errorf("event %+v", ev)
	}
	if got, err := callText(t, s, ctx, "echo", `{"message":"hi"}`); err != nil || got != "Echo: hi" {
		t.Errorf("a call after it: %q, %v", got, err)
	}
	// What the older command reads next is the answer to its next request.
	if _, err := io.WriteString(older, `{"frame":{"jsonrpc":"2.0","id":2,"method":"ping"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := olderLines.ReadBytes('\n'); err != nil || !strings.HasPrefix(string(line), `{"frame":{"jsonrpc":"2.0","id":2,`) {
		t.Errorf("the older command read %q, %v; want the answer to its ping", line, err)
	}
	select {
	case ev := <-events:
		t.Errorf("another event: %+v", ev)
	default:
	}
}

// A resource subscription is the held session's, shared by the commands:
// one command's resources/unsubscribe does not end it while another
// attached command is subscribed to the same resource (it still gets its
// updates), and the last subscriber's going away, without unsubscribing
// (Ctrl-C, killed), ends it at the server.
func TestSubscriptionSharedByCommands(t *testing.T) {
	const uri = "test://doc"
	ts := newTestServer()
	unsubscribed := make(chan string, 10)
	ts.srv = mcp.NewServer(&mcp.Implementation{Name: "sessiond-test", Version: "1.0.0"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) { ts.sessions <- req.Session },
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			unsubscribed <- req.Params.URI
			return nil
		},
	})
	ts.srv.AddResource(&mcp.Resource{URI: uri, Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "x"}}}, nil
	})
	h := startHeldOn(t, Options{}, nil, ts, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
	receive(t, ts.sessions, "the server's initialization")

	updated := make(chan string, 10)
	a := h.command(t, inspector.Options{})
	b := h.command(t, inspector.Options{OnNotification: func(m *jsonrpc.Message) {
		if m.Method == "notifications/resources/updated" {
			updated <- string(m.Params)
		}
	}})
	for _, s := range []*inspector.Session{a, b} {
		if _, err := s.Call(t.Context(), "resources/subscribe", map[string]string{"uri": uri}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Call(t.Context(), "resources/unsubscribe", map[string]string{"uri": uri}); err != nil {
		t.Fatal(err)
	}
	if len(unsubscribed) != 0 {
		t.Fatalf("the server was told to unsubscribe %s while command b is still subscribed", <-unsubscribed)
	}
	if err := ts.srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, updated, "the update at command b"); !strings.Contains(got, uri) {
		t.Errorf("b got %s", got)
	}
	b.Close()
	if got := receive(t, unsubscribed, "the unsubscribe once the last subscriber went away"); got != uri {
		t.Errorf("unsubscribed %q", got)
	}
}

// failingConn fails the writes of frames that name a tool "unreachable"
// or "refused", as an HTTP connection does a request it could not send.
type failingConn struct{ *pipeConn }

func (c failingConn) Write(ctx context.Context, f transport.Frame) error {
	switch {
	case bytes.Contains(f.Data, []byte(`"unreachable"`)):
		return fmt.Errorf("%w: POST http://127.0.0.1:1/mcp: connection refused", transport.ErrConnect)
	case bytes.Contains(f.Data, []byte(`"refused"`)):
		return fmt.Errorf("%w: the server refused the token", transport.ErrUnauthorized)
	}
	return c.pipeConn.Write(ctx, f)
}

// A request the session's connection to its server failed to carry fails
// the command's request as its own connection's failure would (exit 4, or
// 3 for refused credentials), not as an error the server answered
// (exit 5); the session goes on.
func TestConnectionFailureIsNotAServerError(t *testing.T) {
	ts := newTestServer()
	ts.wrap = func(pc *pipeConn) transport.Conn { return failingConn{pc} }
	h := startHeldOn(t, Options{}, nil, ts, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
	receive(t, ts.sessions, "the server's initialization")
	s := h.command(t, inspector.Options{})
	for tool, want := range map[string]error{"unreachable": transport.ErrTransport, "refused": transport.ErrUnauthorized} {
		_, err := s.Call(t.Context(), "tools/call", map[string]any{"name": tool})
		var rpcErr *jsonrpc.Error
		if !errors.Is(err, want) || errors.As(err, &rpcErr) {
			t.Errorf("%s: %v (%T), want an error matching %v and no JSON-RPC error", tool, err, err, want)
		}
		if err != nil && !strings.Contains(err.Error(), "session t: ") {
			t.Errorf("%s: %v does not name the session", tool, err)
		}
	}
	if text, err := callText(t, s, t.Context(), "echo", `{"message":"still"}`); err != nil || text != "Echo: still" {
		t.Errorf("after the failures: %q, %v", text, err)
	}
}

// What the held session does on its own (a new session with the server,
// which ended the old one) is told to the commands attached at that
// moment that asked for notes, as their own connection would tell them,
// and kept for mcpx @NAME watch while none is attached; before, only the
// session's log said so. A command of an older build is not sent it.
func TestTellReachesTheCommand(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	h.d.Tell("kept while none is attached")
	kept, err := TakeKept(t.Context(), h.dir, h.name)
	if err != nil || len(kept) != 1 || kept[0].Note != "kept while none is attached" {
		t.Fatalf("kept %+v, %v", kept, err)
	}

	notes := make(chan string, 10)
	conn, err := Dial(t.Context(), h.dir, h.name, DialOptions{Label: t.Name(), OnNote: func(s string) { notes <- s }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := inspector.Connect(t.Context(), conn, inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "command", Version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	older, olderLines := attachOlder(t, h)
	h.d.Tell("a new session")
	if got := receive(t, notes, "the note"); got != "a new session" {
		t.Errorf("note %q", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if got, err := callText(t, s, ctx, "echo", `{"message":"hi"}`); err != nil || got != "Echo: hi" {
		t.Errorf("a call after it: %q, %v", got, err)
	}
	if _, err := io.WriteString(older, `{"frame":{"jsonrpc":"2.0","id":2,"method":"ping"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := olderLines.ReadBytes('\n'); err != nil || !strings.HasPrefix(string(line), `{"frame":{"jsonrpc":"2.0","id":2,`) {
		t.Errorf("the older command read %q, %v; want the answer to its ping", line, err)
	}
}

// SetTarget changes what mcpx sessions shows the session connected to (a
// new session with the server has another session id).
func TestSetTargetShowsInStatus(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	h.d.SetTarget("streamable-http: http://127.0.0.1:1/mcp (session new)")
	st, err := GetStatus(t.Context(), h.dir, h.name)
	if err != nil || st.Target != "streamable-http: http://127.0.0.1:1/mcp (session new)" {
		t.Errorf("status %+v, %v", st, err)
	}
}

// attachOlder attaches a command of an older build, which asks for no
// envelope.Dropped or envelope.Note lines, and reads the reply and the
// answer to its first ping: it is attached.
func attachOlder(t *testing.T, h *held) (net.Conn, *bufio.Reader) {
	t.Helper()
	older := rawAttach(t, h, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	_ = older.SetReadDeadline(time.Now().Add(wait))
	lines := bufio.NewReader(older)
	for range 2 {
		if _, err := lines.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
	return older, lines
}

// cancelsConn is the held session's connection to the server, which
// tells the test the reason of each notifications/cancelled sent.
type cancelsConn struct {
	*pipeConn
	reasons chan string
}

func (c *cancelsConn) Write(ctx context.Context, f transport.Frame) error {
	var n struct {
		Method string
		Params struct{ Reason string }
	}
	if json.Unmarshal(f.Data, &n) == nil && n.Method == "notifications/cancelled" {
		c.reasons <- n.Params.Reason
	}
	return c.pipeConn.Write(ctx, f)
}

// A command whose timeout expires sends notifications/cancelled with its
// reason and exits: the server hears that reason, even when the session's
// write to the command (progress) failed first, the command gone. (The
// attachment ended at that failure, before its reader took the
// cancellation, and the server heard "cancelled by the user": flaky
// under load in e2e's sessions.txtar.)
func TestCommandsReasonOutlivesItsConnection(t *testing.T) {
	ts := newTestServer()
	reasons := make(chan string, 10)
	ts.wrap = func(pc *pipeConn) transport.Conn { return &cancelsConn{pipeConn: pc, reasons: reasons} }
	h := startHeldOn(t, Options{}, nil, ts, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
	conn, err := Dial(t.Context(), h.dir, h.name, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	if err := conn.Write(t.Context(), transport.Frame{Data: []byte(init)}); err != nil {
		t.Fatal(err)
	}
	if f, err := conn.Read(t.Context()); err != nil || !strings.Contains(string(f.Data), `"sessiond-test"`) {
		t.Fatalf("initialize: %s, %v", f.Data, err)
	}
	// The command reads no more: the session's next write to it fails.
	if err := conn.nc.(*net.UnixConn).CloseRead(); err != nil {
		t.Fatal(err)
	}
	h.d.mu.Lock()
	var a *attachment
	for a = range h.d.attached {
	}
	h.d.mu.Unlock()
	before := a.lastTake.Load()
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{"tag":"t"},"_meta":{"progressToken":"p"}}}`
	if err := conn.Write(t.Context(), transport.Frame{Data: []byte(call)}); err != nil {
		t.Fatal(err)
	}
	receive(t, ts.started, "the call")
	// The session's writer took the progress, which it cannot write.
	testwait.For(t, "the progress to be taken for the command", func() bool { return a.lastTake.Load() != before })
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`
	if err := conn.Write(t.Context(), transport.Frame{Data: []byte(cancel)}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if got := receive(t, reasons, "the server to be told"); got != "timeout" {
		t.Errorf("the server heard the request cancelled for %q, want the command's reason, timeout", got)
	}
	receive(t, ts.cancelled, "the call to end")
}

// A session whose socket is removed from under it (a cleaner of the temp
// directory, the runtime directory removed at logout) ends, its server
// with it: it served on, unreachable, and with --idle-timeout 0 its
// server ran for ever. A socket another session put in its place is left
// to that one: closing its listener removed whatever was at the path.
func TestSocketRemovedEndsTheSession(t *testing.T) {
	defer func(d time.Duration) { socketCheck = d }(socketCheck)
	socketCheck = 20 * time.Millisecond
	for _, replaced := range []bool{false, true} {
		h := startHeld(t, Options{IdleTimeout: -1, Log: "t.log"}, nil)
		if err := os.Remove(h.d.Socket()); err != nil {
			t.Fatal(err)
		}
		if replaced {
			fakeSession(t, h.dir, h.name, func(net.Conn) {})
		}
		if err := receive(t, h.served, "Serve's end"); !errors.Is(err, ErrSocketGone) {
			t.Errorf("Serve = %v", err)
		}
		h.served <- nil
		if _, err := os.Lstat(h.d.Socket()); replaced != (err == nil) {
			t.Errorf("replaced %v: the socket at the path: %v", replaced, err)
		}
		// The log says how it ended, for a command that names it later.
		for note := ""; !strings.HasPrefix(note, "session t ended: its socket was removed"); {
			note = receive(t, h.notes, "the end note")
		}
	}
}

// A session process that goes away without a word (killed, crashed)
// while a command is attached says so, and where its log is: the command
// was told only "the session process went away".
func TestSessionProcessGoneIsExplained(t *testing.T) {
	dir := sessionDir(t)
	fakeSession(t, dir, "k", func(nc net.Conn) {
		if _, err := bufio.NewReader(nc).ReadBytes('\n'); err == nil {
			_, _ = io.WriteString(nc, `{"ok":true,"status":{"name":"k","pid":42,"log":"/x/k.log"}}`+"\n")
		}
		nc.Close()
	})
	c, err := Dial(t.Context(), dir, "k", DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Read(t.Context())
	var ee *EndedError
	if !errors.As(err, &ee) || err.Error() != "session k: the session process went away without a word (killed, or crashed); its log, /x/k.log, may say why" {
		t.Errorf("Read = %v", err)
	}
}

// A session opened by an mcpx whose socket protocol is another (an
// upgrade came between) refuses its commands, saying to disconnect and
// connect again, and can be disconnected and listed: it refused the stop
// too, so that only kill ended it.
func TestOtherVersionCanStop(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	ask := func(op string) reply {
		t.Helper()
		nc, err := net.Dial("unix", h.d.Socket())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := fmt.Fprintf(nc, `{"mcpxSession":%d,"op":%q}`+"\n", protocolVersion+1, op); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(wait))
		line, err := bufio.NewReader(nc).ReadBytes('\n')
		var r reply
		if err != nil || json.Unmarshal(line, &r) != nil {
			t.Fatalf("%s: %q, %v", op, line, err)
		}
		return r
	}
	if r := ask(opAttach); r.OK || !strings.Contains(r.Error, "another mcpx version (disconnect and connect again)") {
		t.Errorf("attach: %+v", r)
	}
	if r := ask(opStatus); !r.OK || r.Status == nil || r.Status.Name != "t" || r.Status.PID != os.Getpid() {
		t.Errorf("status: %+v", r)
	}
	if r := ask(opStop); !r.OK {
		t.Errorf("stop: %+v", r)
	}
	if err := receive(t, h.served, "Serve's end"); err != nil {
		t.Errorf("Serve = %v", err)
	}
	h.served <- nil
}

// A credential the held session's connection learns while commands are
// attached (an access token OAuth refreshed) reaches each command that
// asked for them before anything that follows it (the answer of the
// server that echoes it), so that the command redacts it there as it
// does those of the attach reply; a command of an older build is not
// sent it.
func TestTellSecretReachesTheCommand(t *testing.T) {
	h := startHeld(t, Options{}, nil)
	secrets := make(chan string, 10)
	conn, err := Dial(t.Context(), h.dir, h.name, DialOptions{Label: t.Name(), OnSecret: func(s string) { secrets <- s }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := inspector.Connect(t.Context(), conn, inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "command", Version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	older, olderLines := attachOlder(t, h)
	h.d.TellSecret("at-REFRESHED-0001")
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if got, err := callText(t, s, ctx, "echo", `{"message":"hi"}`); err != nil || got != "Echo: hi" {
		t.Errorf("a call after it: %q, %v", got, err)
	}
	// Told before the answer that followed it was read.
	select {
	case got := <-secrets:
		if got != "at-REFRESHED-0001" {
			t.Errorf("secret %q", got)
		}
	default:
		t.Error("the secret was not told before the answer that followed it")
	}
	if _, err := io.WriteString(older, `{"frame":{"jsonrpc":"2.0","id":2,"method":"ping"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := olderLines.ReadBytes('\n'); err != nil || !strings.HasPrefix(string(line), `{"frame":{"jsonrpc":"2.0","id":2,`) {
		t.Errorf("the older command read %q, %v; want the answer to its ping", line, err)
	}
}
