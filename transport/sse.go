package transport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// legacySSE is the HTTP+SSE transport of protocol revision 2024-11-05
// (spec 2024-11-05: basic/transports, "HTTP with SSE"): a GET opens an SSE
// stream whose first event, "endpoint", names the URL to POST messages to;
// every server message arrives on the stream as a "message" event.
//
// The revision ties a session to its stream: the endpoint names the
// session, and a server forgets it when the stream ends (a restart ends
// every stream). With a listener for the end of a session (see
// OnServerStreamEnd) the stream is opened again, a new session that the
// listener initializes; without one the connection ends with the stream.
type legacySSE struct {
	b     *httpBase
	url   string
	shown string // url for messages, redacted (see RedactURL)

	mu sync.Mutex
	// stream is the open stream, nil before open and while it is being
	// opened again; up is closed once one is open, and replaced when it
	// ends.
	stream *sseStream
	up     chan struct{}
	onEnd  func(error) // learns that a session ended with its stream
}

// sseStream is one GET of the SSE stream, and with it one session.
type sseStream struct {
	endpoint string
	opened   time.Time
	// ctx ends with the stream, aborting its session's POSTs under way.
	ctx    context.Context
	cancel context.CancelFunc

	// Under legacySSE.mu:
	// pending are the requests POSTed in the session that the stream
	// still owes a response, by loose key (see requestIDs): when it ends
	// they are lost (see LossReporter).
	pending map[string]bool
	// accepted is set once the endpoint took a message: a 404 from it
	// after that means the server forgot the session; over once the
	// stream ended (its requests were reported lost).
	accepted, over bool
	// dropped says why mcpx ended the stream, "" when the server did;
	// why how it ended, once it did.
	dropped, why string
}

func newLegacySSE(b *httpBase, u string) *legacySSE {
	return &legacySSE{b: b, url: u, shown: RedactURL(u), up: make(chan struct{})}
}

// Endpoint returns the URL messages are POSTed to, "" before open and
// while the stream is being opened again.
func (l *legacySSE) Endpoint() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stream == nil {
		return ""
	}
	return l.stream.endpoint
}

// OnServerStreamEnd registers fn to learn that a session ended with its
// stream, which is being opened again (see ServerStreamEndReporter): fn
// gets an error matching ErrSessionExpired, and must start a new session
// (initialize) once the stream is open again, which POSTs wait for.
func (l *legacySSE) OnServerStreamEnd(fn func(error)) {
	l.mu.Lock()
	l.onEnd = fn
	l.mu.Unlock()
}

// open GETs the SSE stream and waits (bounded by ctx) for the endpoint
// event. Then a goroutine reads the stream for the connection's life.
func (l *legacySSE) open(ctx context.Context) error {
	x, p, endpoint, err := l.dial(ctx)
	if err != nil {
		return err
	}
	st, err := l.install(ctx, x, endpoint)
	if err != nil {
		return err
	}
	if !l.b.spawn(func() { l.run(x, p, st) }) {
		x.close()
		return ErrClosed
	}
	return nil
}

// dial GETs the SSE stream and reads it up to its endpoint event,
// returning the stream (still bound to ctx) and the endpoint.
func (l *legacySSE) dial(ctx context.Context) (*exchange, *sseReader, string, error) {
	req, err := l.b.newRequest(ctx, http.MethodGet, l.url, nil)
	if err != nil {
		return nil, nil, "", err
	}
	req.Header.Set("Accept", "text/event-stream")
	x, err := l.b.send(ctx, req)
	if err != nil {
		return nil, nil, "", err
	}
	resp := x.resp
	if resp.StatusCode != http.StatusOK {
		e := l.b.httpError("GET", l.url, resp, x.bodyExcerpt())
		x.close()
		return nil, nil, "", e
	}
	if mediaType(resp) != "text/event-stream" {
		e := fmt.Errorf("%w: GET %s: the server answered with Content-Type %s, not an SSE stream (text/event-stream)",
			ErrTransport, l.shown, QuoteExcerpt(resp.Header.Get("Content-Type")))
		x.close()
		return nil, nil, "", e
	}
	p := newSSEReaderLimit(resp.Body, "", l.b.opts.MaxMessageSize)
	for {
		ev, err := p.Next()
		if err != nil {
			x.close()
			if ctx.Err() != nil {
				return nil, nil, "", &WaitError{For: fmt.Sprintf("the HTTP+SSE stream GET %s sent no endpoint event", l.url), Err: ctx.Err()}
			}
			if l.b.ctx.Err() != nil {
				return nil, nil, "", ErrClosed
			}
			if errors.Is(err, ErrFrameTooLarge) {
				return nil, nil, "", fmt.Errorf("%w: GET %s: %w", ErrTransport, l.shown, err)
			}
			return nil, nil, "", fmt.Errorf("%w: GET %s: the SSE stream ended before its endpoint event", ErrTransport, l.shown)
		}
		if ev.Type != "endpoint" {
			// Nothing should come first, but a message is still a message.
			l.handle(resp, ev)
			continue
		}
		ref := strings.TrimSpace(string(ev.Data))
		if len(ref) > maxEndpoint {
			x.close()
			return nil, nil, "", fmt.Errorf("%w: GET %s: the endpoint event is %d bytes long, more than the %s mcpx takes for a URL (every message would be POSTed to it)",
				ErrTransport, l.shown, len(ref), FormatSize(maxEndpoint))
		}
		endpoint, err := l.resolve(resp, ref)
		if err != nil {
			x.close()
			return nil, nil, "", fmt.Errorf("%w: GET %s: %w", ErrTransport, l.shown, err)
		}
		l.b.note("HTTP+SSE: the server's endpoint for messages is %s", endpoint)
		// From now on an event over the limit is that message's loss, not
		// the connection's: the one stream carries every message of the
		// session.
		p.skipEvents()
		return x, p, endpoint, nil
	}
}

// install makes x, a stream dial opened with ctx, the open stream, bound
// to the connection rather than ctx, and lets the POSTs waiting for one go.
func (l *legacySSE) install(ctx context.Context, x *exchange, endpoint string) (*sseStream, error) {
	if !x.stop() {
		x.close()
		return nil, ctx.Err()
	}
	sctx, cancel := context.WithCancel(l.b.ctx)
	x.stop = context.AfterFunc(sctx, x.cancel)
	st := &sseStream{endpoint: endpoint, opened: time.Now(), ctx: sctx, cancel: cancel}
	l.mu.Lock()
	l.stream = st
	close(l.up)
	l.mu.Unlock()
	return st, nil
}

// maxEndpoint is the longest endpoint event mcpx takes. Every message is
// POSTed to the URL it names, in a request line that servers and proxies
// refuse much longer (nginx's buffer for one is 8 KiB), and it is quoted
// in errors and shown by -v; a session id in its query fits many times.
const maxEndpoint = 8 << 10

// resolve resolves ref, the endpoint event's URL, against the URL that
// answered resp, the stream: after redirects, the last one (RFC 3986
// section 5.1.3; a stream moved to /v2/sse names its endpoint "messages"
// for /v2/messages). Over a socket the result is the socket's URL
// (socketEndpoint.resolve).
//
// The endpoint gets every message of the session, with the connection's
// credentials, so it must be on the origin of l.url, the URL the person
// gave. And the stream must have been answered there: a stream a redirect
// led to another origin got no credentials (RedirectPolicy), and its
// endpoint event is that origin's word, which must not choose where they
// go — not even a URL on the first origin. A 2024-11-05 session lives on
// the server holding its stream, so no working server is refused.
func (l *legacySSE) resolve(resp *http.Response, ref string) (string, error) {
	answered := resp.Request.URL
	var (
		endpoint string
		same     bool
		err      error
	)
	if l.b.sock != nil {
		// Redirects never leave the socket (socketEndpoint.dial).
		endpoint, same, err = l.b.sock.resolve(l.b.sock.socketURL(answered), ref)
	} else {
		first, perr := url.Parse(l.url)
		if perr != nil {
			return "", perr
		}
		if !SameOrigin(first, answered) {
			return "", fmt.Errorf("the HTTP+SSE stream was answered by %s, on another origin (a redirect led there), which cannot name where mcpx sends messages with the credentials for %s; give that server's URL instead",
				ShortURL(answered.String()), RedactURL(first.Scheme+"://"+first.Host))
		}
		var u *url.URL
		if u, err = answered.Parse(ref); err == nil {
			endpoint, same = u.String(), SameOrigin(first, u)
		}
	}
	switch {
	case err != nil:
		// url.Parse's error quotes the whole event, which may be as long
		// as a message.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("the endpoint event %s is not a URL: %s", QuoteExcerpt(ref), Excerpt(err.Error()))
	case !same:
		return "", fmt.Errorf("the endpoint event names %s, on a different origin; mcpx refuses to send messages there", ShortURL(endpoint))
	}
	return endpoint, nil
}

// handle delivers one event from the stream.
func (l *legacySSE) handle(resp *http.Response, ev sseEvent) bool {
	meta := &Meta{HTTPMethod: "GET", URL: l.url, HTTPStatus: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), StreamID: "sse"}
	if ev.HasID {
		meta.EventID = ev.ID
	}
	switch {
	case len(ev.Data) == 0:
		l.b.observe(EventHTTP, fmt.Sprintf("SSE sse: event %q id=%q with no data", ev.Type, ev.ID), meta)
		return true
	case ev.Type != "message":
		l.b.note("HTTP+SSE: ignored an event of type %q", ev.Type)
		return true
	}
	return l.b.deliver(Frame{Data: ev.Data, Meta: meta})
}

// maxSSEReopenWait caps the wait between two attempts to open the
// stream again, which doubles from ReconnectDelay (defaultSSEReopenWait
// when unset): the default five attempts span about 15 seconds, long
// enough for a server to restart, short enough to say soon that it did
// not.
const (
	defaultSSEReopenWait = 500 * time.Millisecond
	maxSSEReopenWait     = 8 * time.Second
	// sseReopenTimeout bounds one attempt, up to the endpoint event.
	sseReopenTimeout = 10 * time.Second
	// sseSettled is how long a stream lasts before its end counts as
	// news rather than one more failed attempt: a server that ends every
	// stream soon after it opened is given up on as one that refuses.
	sseSettled = 30 * time.Second
)

// reopenWait is the wait before attempt n (from 1) to open the stream
// again.
func (l *legacySSE) reopenWait(n int) time.Duration {
	d := l.b.opts.ReconnectDelay
	if d <= 0 {
		d = defaultSSEReopenWait
	}
	for ; n > 1 && d < maxSSEReopenWait; n-- {
		d *= 2
	}
	return min(d, maxSSEReopenWait)
}

// run reads the stream until it ends, then (with a listener: see
// OnServerStreamEnd) opens it again, at most maxReconnects times in a
// row with a growing wait, and reads that; when it cannot, the connection
// ends, saying why.
func (l *legacySSE) run(x *exchange, p *sseReader, st *sseStream) {
	failures := 0
	for {
		err := l.consume(x, p, st)
		x.release()
		if l.b.ctx.Err() != nil {
			st.cancel()
			return
		}
		if errors.Is(err, ErrFrameTooLarge) {
			// An SSE line too long to parse: the stream cannot be read
			// past it. (An event whose data is over the limit is skipped.)
			st.cancel()
			l.b.fail(fmt.Errorf("%w: the server's SSE stream (GET %s): %w", ErrTransport, l.url, err))
			return
		}
		if time.Since(st.opened) >= sseSettled {
			failures = 0
		}
		why := l.ended(st, err)
		if why == "" {
			return
		}
		var last error
		state := why // for the notes: how the last attempt went
		for {
			failures++
			if failures > l.b.maxReconnects() {
				msg := fmt.Sprintf("%v: the server's SSE stream (GET %s) %s, and opening it again failed %d times",
					ErrTransport, l.shown, why, l.b.maxReconnects())
				errs := []error{ErrTransport}
				if last != nil {
					msg += "; the last attempt: " + causeText(last)
					errs = append(errs, last)
				}
				l.b.fail(&messageError{msg: RedactURLs(msg), errs: errs})
				return
			}
			d := l.reopenWait(failures)
			l.b.note("HTTP+SSE: the SSE stream (GET %s) %s; opening it again in %s (attempt %d of %d)", l.shown, state, d, failures, l.b.maxReconnects())
			if !sleepCtx(l.b.ctx, d) {
				return
			}
			ctx, cancel := context.WithTimeout(l.b.ctx, sseReopenTimeout)
			nx, np, endpoint, err := l.dial(ctx)
			if err == nil {
				st, err = l.install(ctx, nx, endpoint)
			}
			cancel()
			if err == nil {
				x, p = nx, np
				break
			}
			if l.b.ctx.Err() != nil {
				return
			}
			if !retryable(err) {
				l.b.fail(&messageError{
					msg:  RedactURLs(fmt.Sprintf("%v: the server's SSE stream (GET %s) %s, and opening it again failed: %s", ErrTransport, l.shown, why, causeText(err))),
					errs: []error{ErrTransport, err},
				})
				return
			}
			last, state = err, "could not be opened again ("+causeText(err)+")"
		}
	}
}

// consume reads the stream until it ends, returning why it ended.
func (l *legacySSE) consume(x *exchange, p *sseReader, st *sseStream) error {
	var attributed bool // (see SkippedMessageError.report)
	for {
		ev, err := p.Next()
		var sk *SkippedMessageError
		if errors.As(err, &sk) {
			l.b.skipped(sk, fmt.Sprintf("HTTP+SSE stream GET %s: ", l.shown), &attributed)
			continue
		}
		if err != nil {
			return err
		}
		if ev.Type == "message" && len(ev.Data) > 0 {
			l.settle(st, ev.Data)
		}
		if !l.handle(x.resp, ev) {
			return ErrClosed
		}
	}
}

// ended is told that st ended with err. Without a listener (see
// OnServerStreamEnd) the connection ends, and ended returns "".
// Otherwise the requests st still owed a response are lost (see
// LossReporter), the POSTs under way in its session are aborted, the
// listener is told, and ended returns how the stream ended, for the
// attempts to open it again.
func (l *legacySSE) ended(st *sseStream, err error) string {
	l.mu.Lock()
	why := st.dropped
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range st.pending {
			if !yield(id) {
				return
			}
		}
	})
	st.pending, st.over = nil, true
	l.unlink(st)
	fn := l.onEnd
	l.mu.Unlock()
	switch {
	case why != "":
	case err == nil || errors.Is(err, io.EOF):
		why = "ended"
	default:
		why = "broke: " + err.Error()
	}
	l.mu.Lock()
	st.why = why
	l.mu.Unlock()
	st.cancel()
	what := fmt.Sprintf("the server's SSE stream (GET %s) %s", l.shown, why)
	if fn == nil {
		l.b.fail(fmt.Errorf("%w: %s", ErrTransport, what))
		return ""
	}
	if len(ids) > 0 {
		l.b.reportLost(ids, streamLost(nil, "%s before the response arrived (an HTTP+SSE session ends with its stream)", what))
	}
	fn(&messageError{
		msg:  RedactURLs(fmt.Sprintf("session expired: the HTTP+SSE session ended with the server's SSE stream (GET %s), which %s", l.shown, why)),
		errs: []error{ErrSessionExpired, ErrTransport},
	})
	return why
}

// drop ends st, whose session the server no longer knows (why says how
// mcpx knows), so that it is opened again.
func (l *legacySSE) drop(st *sseStream, why string) {
	l.mu.Lock()
	if st.dropped == "" {
		st.dropped = why
	}
	l.unlink(st)
	l.mu.Unlock()
	st.cancel()
}

// unlink makes POSTs wait for the next stream when st is the open one.
// Called with l.mu held.
func (l *legacySSE) unlink(st *sseStream) {
	if l.stream == st {
		l.stream = nil
		l.up = make(chan struct{})
	}
}

// settle removes the requests that data, a message of st, answers from
// those st still owes a response.
func (l *legacySSE) settle(st *sseStream, data []byte) {
	l.mu.Lock()
	owed := len(st.pending) > 0
	l.mu.Unlock()
	if !owed {
		return
	}
	ids := responseIDs(data)
	l.mu.Lock()
	for _, id := range ids {
		delete(st.pending, id)
	}
	l.mu.Unlock()
}

// track counts the requests ids as owed a response by st (untrack undoes
// it for a POST that failed).
func (l *legacySSE) track(st *sseStream, ids []string, on bool) {
	if len(ids) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !on {
		for _, id := range ids {
			delete(st.pending, id)
		}
		return
	}
	if st.over {
		// The stream ended already: the POST is aborted.
		return
	}
	if st.pending == nil {
		st.pending = map[string]bool{}
	}
	for _, id := range ids {
		st.pending[id] = true
	}
}

// current returns the open stream, waiting, bounded by ctx, while it is
// being opened again.
func (l *legacySSE) current(ctx context.Context) (*sseStream, error) {
	for {
		l.mu.Lock()
		st, up := l.stream, l.up
		l.mu.Unlock()
		if st != nil {
			return st, nil
		}
		select {
		case <-up:
		case <-l.b.failed:
			// The connection ended, which Read reports: the error says
			// why, and matches ErrClosed too (no news for whoever waited).
			return nil, &messageError{msg: l.b.failErr.Error(), errs: []error{l.b.failErr, ErrClosed}}
		case <-l.b.ctx.Done():
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, &WaitError{For: fmt.Sprintf("the server's SSE stream (GET %s) ended and was not open again yet", l.shown), Err: ctx.Err()}
		}
	}
}

// post sends one frame to the endpoint of the open stream, waiting while
// it is being opened again. Answers arrive on the stream; the POST's own
// body (usually "Accepted") is ignored. A POST under way when the stream
// ends fails: the server may or may not have taken the message. A 404
// (or 410) from an endpoint that took messages before means the server
// forgot the session: the stream is opened again, and the error matches
// ErrSessionExpired.
func (l *legacySSE) post(ctx context.Context, f Frame) error {
	st, err := l.current(ctx)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(st.ctx, cancel)()
	req, err := l.b.newRequest(pctx, http.MethodPost, st.endpoint, f.Data)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	ids := requestIDs(f.Data)
	l.track(st, ids, true)
	x, err := l.b.send(pctx, req)
	if err != nil {
		l.track(st, ids, false)
		if st.ctx.Err() != nil && ctx.Err() == nil && l.b.ctx.Err() == nil {
			l.mu.Lock()
			why := cmp.Or(st.why, st.dropped, "ended")
			l.mu.Unlock()
			return streamLost(nil, "the server's SSE stream (GET %s) %s while the message was being POSTed (an HTTP+SSE session ends with its stream)", l.shown, why)
		}
		return err
	}
	s := x.resp.StatusCode
	if s >= 200 && s <= 299 {
		x.close()
		l.mu.Lock()
		st.accepted = true
		l.mu.Unlock()
		return nil
	}
	e := l.b.httpError("POST", st.endpoint, x.resp, x.bodyExcerpt())
	x.close()
	l.track(st, ids, false)
	l.mu.Lock()
	gone := st.accepted && (s == http.StatusNotFound || s == http.StatusGone)
	l.mu.Unlock()
	if !gone {
		return e
	}
	l.drop(st, fmt.Sprintf("was dropped: the server answered POST %s with HTTP %d, so it no longer knows the session", RedactURL(st.endpoint), s))
	return &messageError{
		msg:  RedactURLs(fmt.Sprintf("session expired: %v: the server no longer knows the HTTP+SSE session", e)),
		errs: []error{ErrSessionExpired, e},
	}
}
