package inspector

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// wait bounds every wait in these tests; nothing should come near it.
const wait = 10 * time.Second

// fakeServer is the far end of a transport.Pipe, driven by the test. A
// goroutine reads every frame the session sends into a queue, so the
// session's writes never block on the test.
type fakeServer struct {
	t    *testing.T
	conn transport.Conn
	in   chan transport.Frame
}

func newFakeServer(t *testing.T, conn transport.Conn) *fakeServer {
	f := &fakeServer{t: t, conn: conn, in: make(chan transport.Frame, 1000)}
	go func() {
		for {
			fr, err := conn.Read(context.Background())
			if err != nil {
				close(f.in)
				return
			}
			f.in <- fr
		}
	}()
	return f
}

// nextFrame returns the next frame the session sent.
func (f *fakeServer) nextFrame() transport.Frame {
	f.t.Helper()
	select {
	case fr, ok := <-f.in:
		if !ok {
			f.t.Fatal("connection closed while the server waited for a frame")
		}
		return fr
	case <-time.After(wait):
		f.t.Fatal("the session sent nothing")
	}
	panic("unreachable")
}

// next returns the next single message the session sent.
func (f *fakeServer) next() *jsonrpc.Message {
	f.t.Helper()
	fr := f.nextFrame()
	msgs, batch, err := jsonrpc.DecodeFrame(fr.Data)
	if err != nil || batch || len(msgs) != 1 {
		f.t.Fatalf("session sent %q: want one message (err %v, batch %v)", fr.Data, err, batch)
	}
	if len(msgs[0].Problems) > 0 {
		f.t.Errorf("session sent a malformed message %s: %v", fr.Data, msgs[0].Problems)
	}
	return msgs[0]
}

// nextRequest returns the next message, which must be a request for method.
func (f *fakeServer) nextRequest(method string) *jsonrpc.Message {
	f.t.Helper()
	m := f.next()
	if !m.IsRequest() || m.Method != method {
		f.t.Fatalf("session sent %s, want a %s request", m.Raw, method)
	}
	return m
}

// send writes one raw frame to the session.
func (f *fakeServer) send(raw string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := f.conn.Write(ctx, transport.Frame{Data: []byte(raw)}); err != nil {
		f.t.Fatalf("server write: %v", err)
	}
}

// reply answers request m with result (raw JSON).
func (f *fakeServer) reply(m *jsonrpc.Message, result string) {
	f.t.Helper()
	f.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":` + result + `}`)
}

// quiet checks that the session sends nothing more until it sends the
// marker notification that the test triggers with mark.
func (f *fakeServer) quietUntil(mark func()) {
	f.t.Helper()
	mark()
	m := f.next()
	if m.Method != "test/marker" {
		f.t.Fatalf("session sent %s before the marker", m.Raw)
	}
}

// warnings collects the session's warnings.
type warnings struct {
	t  *testing.T
	ch chan string
}

func (w *warnings) add(s string) { w.ch <- s }

// depart is add for Options.OnDeparture.
func (w *warnings) depart(_ context.Context, s string) { w.ch <- s }

// expect waits for a warning containing every one of subs.
func (w *warnings) expect(subs ...string) string {
	w.t.Helper()
	for {
		select {
		case s := <-w.ch:
			if containsAll(s, subs...) {
				return s
			}
			w.t.Errorf("unexpected warning %q while waiting for one with %q", s, subs)
		case <-time.After(wait):
			w.t.Fatalf("no warning with %q", subs)
		}
	}
}

// none fails if a warning is queued.
func (w *warnings) none() {
	w.t.Helper()
	select {
	case s := <-w.ch:
		w.t.Errorf("unexpected warning %q", s)
	default:
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// newTestSession starts a session (no lifecycle run) on a pipe to a fake
// server. opts.OnWarning is set to collect warnings.
func newTestSession(t *testing.T, opts Options) (*Session, *fakeServer, *warnings) {
	t.Helper()
	client, server := transport.Pipe()
	w := &warnings{t: t, ch: make(chan string, 1000)}
	opts.OnWarning = w.add
	s := NewSession(client, opts)
	srv := newFakeServer(t, server)
	t.Cleanup(func() {
		s.Close()
		w.none()
	})
	return s, srv, w
}

type callResult struct {
	res json.RawMessage
	err error
}

// goCall runs s.Call in a goroutine.
func goCall(ctx context.Context, s *Session, method string, params any, opts ...CallOption) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := s.Call(ctx, method, params, opts...)
		ch <- callResult{res, err}
	}()
	return ch
}

func result(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatal("call did not return")
	}
	panic("unreachable")
}

// mark sends the marker notification that quietUntil waits for.
func mark(t *testing.T, s *Session) func() {
	return func() {
		t.Helper()
		if err := s.Notify(context.Background(), "test/marker", nil); err != nil {
			t.Fatalf("marker: %v", err)
		}
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
