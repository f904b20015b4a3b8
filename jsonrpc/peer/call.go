package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// Request is one request for Call.
type Request struct {
	// ID is the request's id; zero means the next one (NextID).
	ID     jsonrpc.ID
	Method string
	// Params is the request's params (a JSON object), or nil.
	Params json.RawMessage
	// Route goes with the frame (see transport.Route).
	Route *transport.Route
	// Timeout is the idle timeout, which Extend resets and Hold stops
	// for a while; MaxTimeout caps the request's total time whatever
	// Extend and Hold say. Zero or negative means none. Both count from
	// before the request is written and run, held and extended alike,
	// during the write: over HTTP, writing can take as long as the peer
	// takes to answer, and the peer may ask a person on another stream
	// meanwhile.
	Timeout, MaxTimeout time.Duration
	// Send writes the encoded request; nil writes it to the connection.
	// (The MCP session sends through its lifecycle, which may open a new
	// session and send the frame again.)
	Send func(ctx context.Context, f transport.Frame) error
	// Abandon, when set, is called once the caller stopped waiting before
	// the response arrived (its context ended: reason "cancelled by the
	// user", or "timeout" for a deadline; or a timeout expired: reason
	// "timeout"): the place to tell the peer so (MCP:
	// notifications/cancelled).
	Abandon func(id jsonrpc.ID, reason string)
	// Quiet makes a response that arrives after the caller gave up pass
	// without a warning (a probe whose failure is expected).
	Quiet bool
}

// TimeoutError reports a request that got no answer in time.
type TimeoutError struct {
	Method string
	After  time.Duration
	// Max is true when the hard cap, not the idle timeout, expired.
	Max bool
	// Waiting, when set, says what the transport was still waiting for
	// before the request could even be sent (see transport.WaitError).
	Waiting string
	// Wait is that *transport.WaitError, whose chain says more (an OAuth
	// authorization that waited for the browser matches
	// oauthflow.ErrNoResponse), nil otherwise.
	Wait error
	// Awaiting, when set, says where the response was still awaited once
	// the request was sent (see transport.AnswerAwaiter): the server
	// answered it with a stream that never carried the response. Advice
	// meant for a server that never answered at all does not fit then.
	Awaiting string
	// Unended, when set, says what the peer wrote that is not yet a
	// message (see transport.UnendedLineReporter): a server that does
	// not end its messages with a newline seems not to answer.
	Unended string
}

// ErrTimeout is matched by every *TimeoutError.
var ErrTimeout = errors.New("timed out")

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("no response after %s", e.After)
	if e.Max {
		msg += " (the maximum total time, even with progress)"
	}
	if e.Waiting != "" {
		msg += " (" + e.Waiting + ")"
	}
	if e.Unended != "" {
		msg += "; " + e.Unended
	}
	return msg
}

// unended notes in e what the connection holds that is not yet a
// message, if it can tell (transport.UnendedLineReporter), and returns e.
func (p *Peer) unended(e *TimeoutError) *TimeoutError {
	if r, ok := transport.Find[transport.UnendedLineReporter](p.conn); ok {
		e.Unended = r.UnendedLine()
	}
	return e
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Unwrap returns the transport's WaitError, nil when there is none.
func (e *TimeoutError) Unwrap() error { return e.Wait }

// Call sends a request and waits for its response, which it returns as
// received: a JSON-RPC error is a response like a result (its Error is
// set). The error is the caller's context's, a *TimeoutError, the reason
// End gave, the reason the connection ended, or the write's.
func (p *Peer) Call(ctx context.Context, req Request) (*jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		// Never written, so never to be cancelled: a cancellation
		// "MUST correspond to the ID of a request previously issued in
		// the same direction" (spec 2025-11-25: basic/utilities/
		// cancellation).
		return nil, err
	}
	id := req.ID
	if id.IsZero() {
		id = p.NextID()
	}
	pc := p.Expect(ctx, id, req.Method, func() bool { return ctx.Err() != nil })
	defer p.Forget(pc)

	t := p.startTimeouts(req)
	defer t.stop()
	send := req.Send
	if send == nil {
		send = p.conn.Write
	}
	frame := transport.Frame{Data: jsonrpc.EncodeRequest(id, req.Method, req.Params), Route: req.Route}
	var err error
	var expired *TimeoutError
	if !t.set() {
		err = send(ctx, frame)
	} else {
		// The timeouts run during the write too, held like afterwards
		// while a person answers the peer.
		wctx := newWriteContext(ctx)
		written := make(chan struct{})
		watched := make(chan *TimeoutError, 1)
		go func() { watched <- t.whileWriting(ctx, p, pc, wctx, written) }()
		err = send(wctx, frame)
		close(written)
		expired = <-watched
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			p.abandon(pc, req, callerReason(ctx))
			return nil, ctx.Err()
		case expired != nil && errors.Is(err, context.DeadlineExceeded):
			p.unended(expired)
			p.abandon(pc, req, "timeout")
			var we *transport.WaitError
			if errors.As(err, &we) {
				expired.Waiting, expired.Wait = we.For, we
			}
			return nil, expired
		}
		return nil, p.WriteError(err)
	}
	if expired != nil {
		// A timeout expired just as the write succeeded.
		if !p.abandon(pc, req, "timeout") {
			return <-pc.resp, nil
		}
		return nil, expired
	}

	for {
		var giveUp error
		select {
		case m := <-pc.resp:
			return m, nil
		case <-pc.extend:
			t.extended()
			continue
		case <-t.holdEdge:
			// A person started or ended answering the peer (Hold).
			t.holdChanged(p)
			continue
		case <-t.idle:
			giveUp = p.unended(t.idleError())
		case <-t.hard:
			giveUp = p.unended(t.hardError())
		case <-ctx.Done():
			giveUp = ctx.Err()
		case why := <-pc.ended:
			// The request is over without a response; there is nothing to
			// cancel.
			p.mu.Lock()
			p.forgetLocked(pc)
			p.retire(pc.key, retirement{format: "late response to %s request %s, which had already ended", method: req.Method, id: id})
			p.mu.Unlock()
			select {
			case m := <-pc.resp:
				return m, nil
			default:
			}
			return nil, why
		case <-p.done:
			// A response may have been delivered just before the end.
			select {
			case m := <-pc.resp:
				return m, nil
			default:
			}
			return nil, p.err
		}
		reason := "timeout"
		if ctx.Err() != nil {
			reason = callerReason(ctx)
		}
		var te *TimeoutError
		if errors.As(giveUp, &te) {
			// Asked before abandon, which lets the stream go.
			if a, ok := transport.Find[transport.AnswerAwaiter](p.conn); ok {
				te.Awaiting = a.Awaiting(id.LooseKey())
			}
		}
		if !p.abandon(pc, req, reason) {
			// The response won the race; it is already on its way.
			return <-pc.resp, nil
		}
		return nil, giveUp
	}
}

// Notification is one notification for Notify.
type Notification struct {
	Method string
	Params json.RawMessage
	Route  *transport.Route
	// Send writes the encoded notification; nil writes it to the
	// connection.
	Send func(ctx context.Context, f transport.Frame) error
}

// Notify sends a notification. A failed write is explained as WriteError
// does.
func (p *Peer) Notify(ctx context.Context, n Notification) error {
	send := n.Send
	if send == nil {
		send = p.conn.Write
	}
	if err := send(ctx, transport.Frame{Data: jsonrpc.EncodeNotification(n.Method, n.Params), Route: n.Route}); err != nil {
		return p.WriteError(err)
	}
	return nil
}

// Reason is a cause (context.WithCancelCause) that gives the reason a
// request is abandoned with when its caller's context ends: a caller that
// passes on another's cancellation (a session forwarding a command's
// request) keeps that one's reason.
type Reason string

func (r Reason) Error() string { return "cancelled: " + string(r) }

// callerReason is why a request is abandoned when the caller's context
// ended: the Reason given as the cause, "timeout" for a deadline, anything
// else is the user's doing.
func callerReason(ctx context.Context) string {
	var r Reason
	switch {
	case errors.As(context.Cause(ctx), &r) && r != "":
		return string(r)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timeout"
	}
	return "cancelled by the user"
}

func (p *Peer) forgetLocked(pc *Pending) {
	if p.pending[pc.key] == pc {
		delete(p.pending, pc.key)
	}
}

// abandon stops waiting for a request and lets req.Abandon tell the peer.
// It reports false when the response had already arrived (it is then in
// pc's channel), in which case nothing is abandoned.
func (p *Peer) abandon(pc *Pending, req Request, reason string) bool {
	p.mu.Lock()
	if p.pending[pc.key] != pc {
		p.mu.Unlock()
		return false
	}
	p.forgetLocked(pc)
	if req.Quiet {
		p.retire(pc.key, retirement{})
	} else {
		p.retire(pc.key, retirement{format: "late response to %s request %s, which mcpx had already given up on", method: req.Method, id: pc.id})
	}
	p.mu.Unlock()
	if req.Abandon != nil {
		req.Abandon(pc.id, reason)
	}
	return true
}

// WriteError explains a failed write, preferring the reason the
// connection ended when it has (a write usually fails because the peer
// just went away; the read loop is given a moment to learn why).
func (p *Peer) WriteError(err error) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(50 * time.Millisecond):
		select {
		case <-p.done:
			return p.err
		default:
		}
	}
	return err
}
