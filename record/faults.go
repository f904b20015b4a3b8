package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// Fault is a misbehaviour of the replayed server at chosen requests of the
// live client, for testing how a client (a host) copes with a server that
// is slow, goes away or fails: ReplayOptions.Faults.
//
// A fault applies to the frame (over HTTP, the POST) that holds a request
// it selects: the requests are counted as the replay receives them, over
// all its connections, by method and in all. Several faults may select
// the same request: the delays add up, then the connection is closed, or
// else the HTTP status sent, or else the error answered.
type Fault struct {
	// Method selects requests of this method; "" selects any.
	Method string
	// N selects the N-th request the replay receives (of Method, or of any
	// method), from 1; 0 selects every one.
	N int
	// Delay holds the answer back this long (on top of pacing).
	Delay time.Duration
	// Close closes the connection instead of answering: over a
	// transport.Conn (stdio) Serve closes it and returns, so the client
	// sees its server's output end; over HTTP the TCP connection is
	// closed without a response.
	Close bool
	// Error answers each request of the frame with this JSON-RPC error
	// instead of the recorded answer (the recorded exchange stays unused:
	// a retry gets it).
	Error *jsonrpc.Error
	// HTTPStatus answers the POST with this HTTP status and no JSON-RPC
	// answer (HTTP replay only: Handler).
	HTTPStatus int
}

// ErrHTTPFault is returned by Serve for a fault that needs HTTP (a
// status), which a connection without HTTP cannot carry.
var ErrHTTPFault = errors.New("an HTTP status fault needs the HTTP replay")

// faultMessage is the message of an injected error without one of its
// own, and the body of an injected HTTP status.
const faultMessage = "mcpx replay: injected fault"

// ParseFault parses a fault as `mcpx replay --fault` takes it:
// SELECTOR:ACTION, where SELECTOR is METHOD#N (the N-th request of that
// method, from 1), METHOD (every request of it), #N (the N-th request of
// any method) or * (every request), and ACTION is delay=DURATION (Go
// syntax: 2s, 150ms), close, error=CODE[,MESSAGE] or http=STATUS.
func ParseFault(spec string) (Fault, error) {
	sel, action, ok := strings.Cut(strings.TrimSpace(spec), ":")
	if !ok || sel == "" || action == "" {
		return Fault{}, fmt.Errorf("fault %q: want SELECTOR:ACTION, e.g. tools/call#2:delay=2s, tools/call:close, #3:error=-32603,boom or tools/list#1:http=503", spec)
	}
	var f Fault
	if sel != "*" {
		method, n, hasN := strings.Cut(sel, "#")
		f.Method = method
		if hasN {
			k, err := strconv.Atoi(n)
			if err != nil || k < 1 {
				return Fault{}, fmt.Errorf("fault %q: %q after # is not a request number (1, 2, ...)", spec, n)
			}
			f.N = k
		}
	}
	name, value, hasValue := strings.Cut(action, "=")
	switch name {
	case "delay":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return Fault{}, fmt.Errorf("fault %q: delay=%s is not a duration (2s, 150ms)", spec, value)
		}
		f.Delay = d
	case "close":
		if hasValue {
			return Fault{}, fmt.Errorf("fault %q: close takes no value", spec)
		}
		f.Close = true
	case "error":
		code, msg, _ := strings.Cut(value, ",")
		c, err := strconv.Atoi(code)
		if err != nil {
			return Fault{}, fmt.Errorf("fault %q: error=%s: the code is not an integer (e.g. error=-32603,message)", spec, code)
		}
		if msg == "" {
			msg = faultMessage
		}
		f.Error = &jsonrpc.Error{Code: c, Message: msg}
	case "http":
		st, err := strconv.Atoi(value)
		if err != nil || st < 100 || st > 599 {
			return Fault{}, fmt.Errorf("fault %q: http=%s is not an HTTP status (100-599)", spec, value)
		}
		f.HTTPStatus = st
	default:
		return Fault{}, fmt.Errorf("fault %q: unknown action %q (delay=DURATION, close, error=CODE[,MESSAGE] or http=STATUS)", spec, name)
	}
	return f, nil
}

// String renders the fault as ParseFault reads it.
func (f Fault) String() string {
	sel := f.Method
	if f.N > 0 {
		sel += "#" + strconv.Itoa(f.N)
	}
	if sel == "" {
		sel = "*"
	}
	switch {
	case f.Close:
		return sel + ":close"
	case f.HTTPStatus != 0:
		return sel + ":http=" + strconv.Itoa(f.HTTPStatus)
	case f.Error != nil:
		return fmt.Sprintf("%s:error=%d,%s", sel, f.Error.Code, f.Error.Message)
	}
	return sel + ":delay=" + f.Delay.String()
}

// faultCounter counts the requests a Replayer received, for the faults'
// selectors.
type faultCounter struct {
	mu       sync.Mutex
	total    int
	byMethod map[string]int
}

// frameFault is what the faults do to one frame of the client.
type frameFault struct {
	delay  time.Duration
	close  bool
	status int
	err    *jsonrpc.Error
}

// faultsFor counts the requests of a frame the replay received and
// returns what the faults do to it.
func (r *Replayer) faultsFor(msgs []*jsonrpc.Message) frameFault {
	var ff frameFault
	if len(r.opts.Faults) == 0 {
		return ff
	}
	c := r.faults
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		if m.Kind() != jsonrpc.KindRequest {
			continue
		}
		c.total++
		c.byMethod[m.Method]++
		for _, f := range r.opts.Faults {
			n := c.total
			if f.Method != "" {
				if f.Method != m.Method {
					continue
				}
				n = c.byMethod[m.Method]
			}
			if f.N != 0 && f.N != n {
				continue
			}
			ff.delay += f.Delay
			ff.close = ff.close || f.Close
			if ff.status == 0 {
				ff.status = f.HTTPStatus
			}
			if ff.err == nil {
				ff.err = f.Error
			}
		}
	}
	return ff
}

// errorAnswer answers each request of msgs with e (a batch with a batch).
func errorAnswer(msgs []*jsonrpc.Message, batch bool, e *jsonrpc.Error) []byte {
	var answers [][]byte
	for _, m := range msgs {
		if m.Kind() == jsonrpc.KindRequest {
			answers = append(answers, jsonrpc.EncodeResponse(m.ID, nil, e))
		}
	}
	if !batch && len(answers) == 1 {
		return answers[0]
	}
	return append(append([]byte("["), bytes.Join(answers, []byte(","))...), ']')
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// paced reports whether what sc's server did is replayed at the recorded
// pace; it warns, once, when pacing was asked for a trace without timing.
func (r *Replayer) paced(sc *script) bool {
	if r.opts.Pace <= 0 {
		return false
	}
	if !sc.timed {
		r.untimed.Do(func() {
			if r.opts.OnWarning != nil {
				r.opts.OnWarning(fmt.Sprintf("session %d of the trace has no timing (a stable trace?): replaying it without pacing", sc.n))
			}
		})
		return false
	}
	return true
}

// pace waits until the time an output is due: after its recorded delay,
// scaled by ReplayOptions.Pace, from base (when the client message it
// follows came).
func (r *Replayer) pace(ctx context.Context, base time.Time, after time.Duration) error {
	return sleepCtx(ctx, time.Duration(float64(after)*r.opts.Pace)-time.Since(base))
}

// httpFault applies the faults to a POST holding msgs: it waits their
// delay, then closes the connection, answers with their HTTP status or
// their error (over HTTP+SSE, sse gets the error and the POST 202), and
// reports whether it answered the POST.
func (h *replayHandler) httpFault(w http.ResponseWriter, req *http.Request, msgs []*jsonrpc.Message, batch bool, sse *httpSession) bool {
	ff := h.r.faultsFor(msgs)
	if err := sleepCtx(req.Context(), ff.delay); err != nil {
		return true // the client left
	}
	switch {
	case ff.close:
		// The server closes the connection without a response.
		panic(http.ErrAbortHandler)
	case ff.status != 0:
		http.Error(w, fmt.Sprintf("%s (HTTP %d)", faultMessage, ff.status), ff.status)
		return true
	case ff.err != nil && sse != nil:
		sse.mu.Lock()
		sse.sse.push(errorAnswer(msgs, batch, ff.err))
		sse.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		return true
	case ff.err != nil:
		w.Header().Set("Content-Type", "application/json")
		w.Write(errorAnswer(msgs, batch, ff.err))
		return true
	}
	return false
}

// httpPace holds an HTTP answer back until the recorded time of the last
// thing the server did for it (the answer comes whole, its notifications
// with it), counted from base.
func (h *replayHandler) httpPace(ctx context.Context, sc *script, base time.Time, outs []output) error {
	if !h.r.paced(sc) {
		return nil
	}
	var last time.Duration
	for _, o := range outs {
		last = max(last, o.after)
	}
	return h.r.pace(ctx, base, last)
}

// ParsePace parses the pace of a replay as `mcpx replay --pace` takes it:
// "recorded" (the recorded speed, 1), or "recorded*F" (the recorded
// delays times F: recorded*0.5 is twice as fast, recorded*2 half as
// fast), for ReplayOptions.Pace.
func ParsePace(s string) (float64, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "recorded")
	if !ok {
		return 0, fmt.Errorf("pace %q: want recorded or recorded*F (e.g. recorded*0.5, twice as fast)", s)
	}
	if rest == "" {
		return 1, nil
	}
	f, err := strconv.ParseFloat(strings.TrimPrefix(rest, "*"), 64)
	if !strings.HasPrefix(rest, "*") || err != nil || f <= 0 || f > 1e6 {
		return 0, fmt.Errorf("pace %q: want recorded or recorded*F with F a positive number (e.g. recorded*0.5, twice as fast)", s)
	}
	return f, nil
}

// waits reports whether answers may wait: paced, or delayed by a fault.
func (r *Replayer) waits() bool {
	if r.opts.Pace > 0 {
		return true
	}
	for _, f := range r.opts.Faults {
		if f.Delay > 0 {
			return true
		}
	}
	return false
}

// answerFrame answers one frame of the client on conn, as the faults say
// and at the pace asked (waits end early when gone is closed: the client
// left): closed reports that a fault closed the connection.
func (r *Replayer) answerFrame(ctx context.Context, gone <-chan struct{}, conn transport.Conn, c *replayConn, f transport.Frame) (closed bool, err error) {
	base := time.Now()
	wctx := ctx
	if r.waits() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-gone:
				cancel()
			case <-wctx.Done():
			}
		}()
	}
	msgs, batch := parseFrame(f.Data)
	ff := r.faultsFor(msgs)
	if err := sleepCtx(wctx, ff.delay); err != nil && ctx.Err() != nil {
		return false, ctx.Err()
	}
	switch {
	case ff.close:
		conn.Close()
		return true, nil
	case ff.err != nil:
		return false, conn.Write(ctx, transport.Frame{Data: errorAnswer(msgs, batch, ff.err)})
	}
	outs, err := c.handle(f.Data)
	if err != nil {
		return false, err
	}
	return r.send(ctx, wctx, conn, c.cur, outs, base)
}

// frameQueue holds the client's frames until they are answered, in order.
type frameQueue struct {
	mu     sync.Mutex
	frames []transport.Frame
	closed bool
	wake   chan struct{}
}

func newFrameQueue() *frameQueue { return &frameQueue{wake: make(chan struct{}, 1)} }

func (q *frameQueue) push(f transport.Frame) {
	q.mu.Lock()
	q.frames = append(q.frames, f)
	q.mu.Unlock()
	q.signal()
}

func (q *frameQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close lets pop report the end once the frames queued are taken.
func (q *frameQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// pop returns the next frame, waiting for one; false once closed and
// empty.
func (q *frameQueue) pop() (transport.Frame, bool) {
	for {
		q.mu.Lock()
		if len(q.frames) > 0 {
			f := q.frames[0]
			q.frames = q.frames[1:]
			q.mu.Unlock()
			return f, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return transport.Frame{}, false
		}
		<-q.wake
	}
}
