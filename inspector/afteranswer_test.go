package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// sentLog is a Conn that notes, in order with the test's own events, each
// frame the session writes.
type sentLog struct {
	transport.Conn
	log *orderLog
}

func (c *sentLog) Write(ctx context.Context, f transport.Frame) error {
	c.log.add("sent " + string(f.Data))
	return c.Conn.Write(ctx, f)
}

type orderLog struct {
	mu     sync.Mutex
	events []string
}

func (l *orderLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// index returns the position of the first event starting with prefix, -1
// for none.
func (l *orderLog) index(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.events {
		if strings.HasPrefix(e, prefix) {
			return i
		}
	}
	return -1
}

// Ctrl-C at a question (the REPL): the handler answers cancel and defers
// the interruption with AfterAnswer. The answer is shown first, then the
// command is interrupted, and only then is the answer sent: the server
// cannot answer the call (or withdraw its question) in between. Even when
// the server then answers the call at once, the call reports the
// interruption.
func TestAfterAnswerInterruptsOnceTheAnswerIsShown(t *testing.T) {
	log := &orderLog{}
	callCtx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	client, server := transport.Pipe()
	w := &warnings{t: t, ch: make(chan string, 100)}
	s := NewSession(&sentLog{Conn: client, log: log}, Options{
		OnWarning: w.add,
		Handlers: map[string]RequestHandler{
			"elicitation/create": func(ctx context.Context, _ *jsonrpc.Message) (any, error) {
				AfterAnswer(ctx, func() {
					log.add("interrupt")
					interrupt()
				})
				return map[string]string{"action": "cancel"}, nil
			},
		},
		OnServerRequest: func(req *jsonrpc.Message, _ json.RawMessage, _ *jsonrpc.Error) { log.add("shown " + req.Method) },
	})
	srv := newFakeServer(t, server)
	t.Cleanup(func() { s.Close() })

	ch := goCall(callCtx, s, "tools/call", nil)
	call := srv.nextRequest("tools/call")
	srv.send(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{}}`)
	// The answer and the cancellation both arrive, in either order.
	var answered bool
	for range 2 {
		m := srv.next()
		switch {
		case m.ID.String() == `"e1"`:
			answered = true
		case m.Method == "notifications/cancelled":
		default:
			t.Fatalf("session sent %s", m.Raw)
		}
	}
	if !answered {
		t.Fatal("the elicitation was not answered")
	}
	// A server that answers the call as soon as its question is answered.
	srv.reply(call, `{"content":[]}`)
	if r := result(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Errorf("call = %s, %v; want the interruption", r.res, r.err)
	}
	shown, intr, sent := log.index("shown elicitation/create"), log.index("interrupt"), log.index(`sent {"jsonrpc":"2.0","id":"e1"`)
	if shown < 0 || intr < 0 || sent < 0 || !(shown < intr && intr < sent) {
		t.Errorf("events %q: want the answer shown, then the interruption, then the answer sent", log.events)
	}
	w.expect("late response to tools/call")
}

// Outside a server request's handler AfterAnswer runs fn at once.
func TestAfterAnswerOutsideAHandler(t *testing.T) {
	ran := false
	AfterAnswer(context.Background(), func() { ran = true })
	if !ran {
		t.Error("fn did not run")
	}
}

// In the 2026-07-28 era an input request's answer goes out with the
// retry: a question dismissed with Ctrl-C is shown answered, then the
// command is interrupted, and no retry is sent.
func TestAfterAnswerInModernInputRound(t *testing.T) {
	log := &orderLog{}
	callCtx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{
		Handlers: map[string]RequestHandler{"elicitation/create": func(ctx context.Context, _ *jsonrpc.Message) (any, error) {
			AfterAnswer(ctx, func() {
				log.add("interrupt")
				interrupt()
			})
			return json.RawMessage(`{"action":"cancel"}`), nil
		}},
		OnServerRequest: func(req *jsonrpc.Message, _ json.RawMessage, _ *jsonrpc.Error) { log.add("shown " + req.Method) },
	})
	openModern(t, s, srv)
	ch := goCall(callCtx, s, "tools/call", map[string]any{"name": "greet"})
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}}}}`)
	if r := result(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Errorf("call = %s, %v; want the interruption", r.res, r.err)
	}
	if shown, intr := log.index("shown elicitation/create"), log.index("interrupt"); shown < 0 || intr < shown {
		t.Errorf("events %q: want the answer shown, then the interruption", log.events)
	}
	// Nothing but (perhaps) a cancellation follows: no retry.
	srv.quietUntil(mark(t, s))
}
