package peer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// While a handler of the peer's request holds the timeouts (a person
// answering a form the peer asked for), our requests' idle timeouts do
// not run, and start again from their full length once it is answered;
// the hard cap runs on.
func TestHoldStopsIdleTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := transport.Pipe()
		answering := 10 * time.Second // the person's time
		p := New(a, Options{Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
			release := HoldTimeouts(ctx)
			defer release()
			time.Sleep(answering)
			release()
			release() // more than once is harmless
			return json.RawMessage(`{}`), nil
		}})
		p.Start()
		defer p.Close()
		r := &remote{t: t, conn: b}

		start := time.Now()
		ch := goCall(p, t.Context(), Request{Method: "tools/call", Timeout: time.Second, MaxTimeout: time.Hour})
		r.next()
		time.Sleep(500 * time.Millisecond)
		r.send(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create"}`)
		// (Read past the remote's usual bound: the answer takes the
		// person's time.)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if f, err := b.Read(ctx); err != nil || !strings.Contains(string(f.Data), `"e1"`) {
			t.Fatalf("the answer to the peer's request: %s, %v", f.Data, err)
		}
		res := <-ch
		// 0.5 s before the question, 10 s answering it, then a full idle
		// timeout of 1 s.
		if d := time.Since(start); !errors.Is(res.err, ErrTimeout) || d != 11500*time.Millisecond {
			t.Fatalf("idle timeout with a person answering: %v after %s, want a timeout after 11.5s", res.err, d)
		}

		// The hard cap is no idle timeout: a person's time counts.
		start = time.Now()
		ch = goCall(p, t.Context(), Request{Method: "tools/call", Timeout: time.Second, MaxTimeout: 3 * time.Second})
		r.next()
		r.send(`{"jsonrpc":"2.0","id":"e2","method":"elicitation/create"}`)
		res = <-ch
		var te *TimeoutError
		if d := time.Since(start); !errors.As(res.err, &te) || !te.Max || d != 3*time.Second {
			t.Fatalf("hard cap with a person answering: %v after %s, want the 3s cap", res.err, d)
		}
		if f, err := b.Read(ctx); err != nil || !strings.Contains(string(f.Data), `"e2"`) {
			t.Fatalf("the answer to the peer's second request: %s, %v", f.Data, err)
		}
	})
}

// HoldTimeouts outside a handler's context does nothing.
func TestHoldTimeoutsOutsideAHandler(t *testing.T) {
	HoldTimeouts(context.Background())()
}

// A request abandoned because its caller's context ended is abandoned
// for the caller's reason: the Reason it gave, a timeout for a deadline,
// the user's doing otherwise.
func TestCallerReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		deadline, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		time.Sleep(2 * time.Second)
		given, cancelGiven := context.WithCancelCause(t.Context())
		cancelGiven(Reason("timeout of the command's own"))
		unsaid, cancelUnsaid := context.WithCancelCause(t.Context())
		cancelUnsaid(Reason(""))
		plain, cancelPlain := context.WithCancel(t.Context())
		cancelPlain()
		for ctx, want := range map[context.Context]string{
			deadline: "timeout", given: "timeout of the command's own", unsaid: "cancelled by the user", plain: "cancelled by the user",
		} {
			if got := callerReason(ctx); got != want {
				t.Errorf("callerReason = %q, want %q", got, want)
			}
		}
	})
}

// The timeouts run during the write as they do afterwards (over HTTP a
// POST answered with JSON is written until its response arrives, while
// the peer asks a person on another stream): progress restarts the idle
// timeout, a hold stops it, the hard cap runs on, and an expired timeout
// ends the write's context as a deadline would.
func TestTimeoutsDuringTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := transport.Pipe()
		p := New(a, Options{})
		p.Start()
		defer p.Close()
		var writeErr error
		send := func(ctx context.Context, _ transport.Frame) error {
			<-ctx.Done()
			writeErr = ctx.Err()
			return &transport.WaitError{For: "the response", Err: ctx.Err()}
		}
		call := func(req Request, meanwhile func()) (time.Duration, error) {
			req.Method, req.Send = "tools/call", send
			start := time.Now()
			ch := goCall(p, t.Context(), req)
			time.Sleep(500 * time.Millisecond)
			meanwhile()
			res := <-ch
			return time.Since(start), res.err
		}

		d, err := call(Request{ID: jsonrpc.Int(100), Timeout: time.Second, MaxTimeout: time.Hour},
			func() { p.Extend(jsonrpc.Int(100)) })
		var te *TimeoutError
		if !errors.As(err, &te) || te.Max || te.Waiting != "the response" || d != 1500*time.Millisecond {
			t.Fatalf("progress during the write: %v after %s, want the idle timeout after 1.5s", err, d)
		}
		if !errors.Is(writeErr, context.DeadlineExceeded) {
			t.Errorf("the write's context ended with %v, want context.DeadlineExceeded", writeErr)
		}

		d, err = call(Request{Timeout: time.Second, MaxTimeout: time.Hour}, func() {
			release := p.Hold()
			time.Sleep(10 * time.Second)
			release()
		})
		if !errors.As(err, &te) || te.Max || d != 11500*time.Millisecond {
			t.Fatalf("a hold during the write: %v after %s, want the idle timeout after 11.5s", err, d)
		}

		release := p.Hold()
		d, err = call(Request{Timeout: time.Second, MaxTimeout: 3 * time.Second}, func() {})
		release()
		if !errors.As(err, &te) || !te.Max || d != 3*time.Second {
			t.Fatalf("a hold during the write: %v after %s, want the 3s cap", err, d)
		}
	})
}
