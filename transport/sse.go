package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// legacySSE is the HTTP+SSE transport of protocol revision 2024-11-05
// (spec 2024-11-05: basic/transports, "HTTP with SSE"): a GET opens an SSE
// stream whose first event, "endpoint", names the URL to POST messages to;
// every server message arrives on the stream as a "message" event.
type legacySSE struct {
	b     *httpBase
	url   string
	shown string // url for messages, redacted (see RedactURL)

	mu       sync.Mutex
	endpoint string
}

func newLegacySSE(b *httpBase, u string) *legacySSE {
	return &legacySSE{b: b, url: u, shown: RedactURL(u)}
}

// Endpoint returns the URL messages are POSTed to, "" before open.
func (l *legacySSE) Endpoint() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endpoint
}

// open GETs the SSE stream and waits (bounded by ctx) for the endpoint
// event. Then a goroutine reads the stream for the connection's life.
func (l *legacySSE) open(ctx context.Context) error {
	req, err := l.b.newRequest(ctx, http.MethodGet, l.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	x, err := l.b.send(ctx, req)
	if err != nil {
		return err
	}
	resp := x.resp
	if resp.StatusCode != http.StatusOK {
		e := l.b.httpError("GET", l.url, resp, x.bodyExcerpt())
		x.close()
		return e
	}
	if mediaType(resp) != "text/event-stream" {
		e := fmt.Errorf("%w: GET %s: the server answered with Content-Type %q, not an SSE stream (text/event-stream)",
			ErrTransport, l.shown, resp.Header.Get("Content-Type"))
		x.close()
		return e
	}
	p := newSSEReaderLimit(resp.Body, "", l.b.opts.MaxMessageSize)
	base, _ := url.Parse(l.url)
	for {
		ev, err := p.Next()
		if err != nil {
			x.close()
			if ctx.Err() != nil {
				return &WaitError{For: fmt.Sprintf("the HTTP+SSE stream GET %s sent no endpoint event", l.url), Err: ctx.Err()}
			}
			if l.b.ctx.Err() != nil {
				return ErrClosed
			}
			if errors.Is(err, ErrFrameTooLarge) {
				return fmt.Errorf("%w: GET %s: %w", ErrTransport, l.shown, err)
			}
			return fmt.Errorf("%w: GET %s: the SSE stream ended before its endpoint event", ErrTransport, l.shown)
		}
		if ev.Type != "endpoint" {
			// Nothing should come first, but a message is still a message.
			l.handle(resp, ev)
			continue
		}
		ref := strings.TrimSpace(string(ev.Data))
		endpoint, same, err := l.resolve(base, ref)
		if err != nil {
			x.close()
			return fmt.Errorf("%w: GET %s: the endpoint event %q is not a URL: %w", ErrTransport, l.shown, ref, err)
		}
		if !same {
			x.close()
			return fmt.Errorf("%w: GET %s: the endpoint event names %s, on a different origin; mcpx refuses to send messages there",
				ErrTransport, l.shown, RedactURL(endpoint))
		}
		l.mu.Lock()
		l.endpoint = endpoint
		l.mu.Unlock()
		l.b.note("HTTP+SSE: the server's endpoint for messages is %s", endpoint)
		break
	}
	if !x.stop() {
		x.close()
		return ctx.Err()
	}
	// From now on an event over the limit is that message's loss, not the
	// connection's: the one stream carries every message of the session.
	p.skipEvents()
	if !l.b.spawn(func() { l.run(x, p) }) {
		x.close()
		return ErrClosed
	}
	return nil
}

// handle delivers one event from the stream.
// resolve resolves ref, the endpoint event's URL, against base, the SSE
// URL (l.url parsed), reporting whether it is on base's origin: over a
// socket, as the http://localhost URL the requests go to, the result
// being the socket's URL (socketEndpoint.resolve).
func (l *legacySSE) resolve(base *url.URL, ref string) (endpoint string, sameOrigin bool, err error) {
	if l.b.sock != nil {
		return l.b.sock.resolve(l.url, ref)
	}
	u, err := base.Parse(ref)
	if err != nil {
		return "", false, err
	}
	return u.String(), SameOrigin(base, u), nil
}

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

// run reads the stream until it ends, which ends the connection: the
// 2024-11-05 transport ties the session to this one stream.
func (l *legacySSE) run(x *exchange, p *sseReader) {
	defer x.release()
	var attributed bool // (see SkippedMessageError.report)
	for {
		ev, err := p.Next()
		var sk *SkippedMessageError
		if errors.As(err, &sk) {
			l.b.skipped(sk, fmt.Sprintf("HTTP+SSE stream GET %s: ", l.shown), &attributed)
			continue
		}
		if err != nil {
			if l.b.ctx.Err() != nil {
				return
			}
			if errors.Is(err, ErrFrameTooLarge) {
				l.b.fail(fmt.Errorf("%w: the server's SSE stream (GET %s): %w", ErrTransport, l.url, err))
				return
			}
			why := "ended"
			if !errors.Is(err, io.EOF) {
				why = "broke: " + err.Error()
			}
			l.b.fail(fmt.Errorf("%w: the server's SSE stream (GET %s) %s", ErrTransport, l.shown, why))
			return
		}
		if !l.handle(x.resp, ev) {
			return
		}
	}
}

// post sends one frame to the endpoint. Answers arrive on the stream; the
// POST's own body (usually "Accepted") is ignored.
func (l *legacySSE) post(ctx context.Context, f Frame) error {
	ep := l.Endpoint()
	req, err := l.b.newRequest(ctx, http.MethodPost, ep, f.Data)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	x, err := l.b.send(ctx, req)
	if err != nil {
		return err
	}
	if s := x.resp.StatusCode; s < 200 || s > 299 {
		e := l.b.httpError("POST", ep, x.resp, x.bodyExcerpt())
		x.close()
		return e
	}
	x.close()
	return nil
}
