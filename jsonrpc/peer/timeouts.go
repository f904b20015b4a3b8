package peer

import (
	"context"
	"sync"
	"time"
)

// timeouts runs a request's two timeouts from before it is written: the
// idle timer, which progress (Extend) restarts and a person answering the
// peer (Hold) stops, and the hard cap, which nothing stops. The write and
// the wait for the response share them: over Streamable HTTP a POST
// answered with JSON is written until the response arrives, and the
// server may ask its question on another stream meanwhile.
type timeouts struct {
	req        Request
	idleTimer  *time.Timer
	hardTimer  *time.Timer
	idle, hard <-chan time.Time
	held       bool
	holdEdge   <-chan struct{}
}

func (p *Peer) startTimeouts(req Request) *timeouts {
	t := &timeouts{req: req}
	t.held, t.holdEdge = p.holds.state()
	if req.Timeout > 0 {
		t.idleTimer = time.NewTimer(req.Timeout)
		t.idle = t.idleTimer.C
		if t.held {
			t.idleTimer.Stop()
		}
	}
	if req.MaxTimeout > 0 {
		t.hardTimer = time.NewTimer(req.MaxTimeout)
		t.hard = t.hardTimer.C
	}
	return t
}

// set reports whether the request has a timeout at all.
func (t *timeouts) set() bool { return t.idleTimer != nil || t.hardTimer != nil }

func (t *timeouts) stop() {
	if t.idleTimer != nil {
		t.idleTimer.Stop()
	}
	if t.hardTimer != nil {
		t.hardTimer.Stop()
	}
}

// extended restarts the idle timer on progress, unless it is held.
func (t *timeouts) extended() {
	if t.idleTimer != nil && !t.held {
		t.idleTimer.Reset(t.req.Timeout)
	}
}

// holdChanged stops the idle timer when a person started answering the
// peer, and restarts it from its full length when the last one is done.
func (t *timeouts) holdChanged(p *Peer) {
	t.held, t.holdEdge = p.holds.state()
	if t.idleTimer != nil {
		if t.held {
			t.idleTimer.Stop()
		} else {
			t.idleTimer.Reset(t.req.Timeout)
		}
	}
}

func (t *timeouts) idleError() *TimeoutError {
	return &TimeoutError{Method: t.req.Method, After: t.req.Timeout}
}

func (t *timeouts) hardError() *TimeoutError {
	return &TimeoutError{Method: t.req.Method, After: t.req.MaxTimeout, Max: true}
}

// whileWriting runs the timeouts until written is closed, and ends wctx
// with context.DeadlineExceeded when one expires (returning its error),
// or with ctx's error when ctx ends first (returning nil).
func (t *timeouts) whileWriting(ctx context.Context, p *Peer, pc *Pending, wctx *writeContext, written <-chan struct{}) *TimeoutError {
	for {
		select {
		case <-pc.extend:
			t.extended()
		case <-t.holdEdge:
			t.holdChanged(p)
		case <-t.idle:
			wctx.end(context.DeadlineExceeded)
			return t.idleError()
		case <-t.hard:
			wctx.end(context.DeadlineExceeded)
			return t.hardError()
		case <-ctx.Done():
			wctx.end(ctx.Err())
			return nil
		case <-written:
			return nil
		}
	}
}

// writeContext is the context of a request's write. It ends with its
// parent or when one of the request's timeouts expires, with
// context.DeadlineExceeded as a deadline would (transports wrap it, and
// what the caller advises depends on it); unlike a deadline, the idle
// timeout can be held and restarted meanwhile.
type writeContext struct {
	context.Context // the parent, for Deadline and Value
	done            chan struct{}
	once            sync.Once
	err             error // set before done is closed
}

func newWriteContext(parent context.Context) *writeContext {
	return &writeContext{Context: parent, done: make(chan struct{})}
}

func (c *writeContext) Done() <-chan struct{} { return c.done }

func (c *writeContext) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func (c *writeContext) end(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}
