package transport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// HTTPConn is a Conn to an MCP server over HTTP: Streamable HTTP, the
// legacy HTTP+SSE transport, or (in auto mode) whichever of the two the
// server answers to. Nothing goes over the network until the first Write,
// which in auto mode is where the transport is chosen: the first POST
// (the initialize request) either succeeds, making this Streamable HTTP, or
// is refused with a status the spec names, and the same frame is sent
// again over HTTP+SSE (spec: basic/transports, "Backwards Compatibility").
type HTTPConn struct {
	b    *httpBase
	mode HTTPMode
	// modeWhy says why mode is not auto (HTTPOptions.ModeReason).
	modeWhy string
	url     string

	st  *streamable
	sse *legacySSE

	decideMu sync.Mutex // held while the first Write chooses the transport

	mu      sync.Mutex
	active  HTTPMode // ModeStreamable or ModeSSE once chosen, "" before
	why     string   // how the transport was chosen, for Describe
	closeMu sync.Once
}

// NewHTTP returns an HTTP connection for opts. It validates the options
// but does not connect.
func NewHTTP(opts HTTPOptions) (*HTTPConn, error) {
	u, err := ParseEndpoint(opts.URL)
	if err != nil {
		return nil, err
	}
	switch opts.Mode {
	case "":
		opts.Mode = ModeAuto
	case ModeAuto, ModeStreamable, ModeSSE:
	default:
		return nil, fmt.Errorf("unknown HTTP transport %q (choose auto, http or sse)", opts.Mode)
	}
	b, err := newHTTPBase(opts)
	if err != nil {
		return nil, err
	}
	c := &HTTPConn{b: b, mode: opts.Mode, modeWhy: cmp.Or(opts.ModeReason, "chosen by the caller"), url: u.String()}
	c.st = newStreamable(b, c.url)
	c.sse = newLegacySSE(b, c.url)
	return c, nil
}

func (c *HTTPConn) chosen() HTTPMode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active
}

func (c *HTTPConn) choose(m HTTPMode, why string) {
	c.mu.Lock()
	c.active, c.why = m, why
	c.mu.Unlock()
}

// Write sends one frame: a POST to the MCP endpoint (Streamable HTTP) or to
// the endpoint the SSE stream named (HTTP+SSE). It returns once the server
// answered the POST's headers (and, for a JSON answer, its body), so HTTP
// failures surface here; frames that answer it are queued for Read.
func (c *HTTPConn) Write(ctx context.Context, f Frame) error {
	if c.b.isClosed() {
		return ErrClosed
	}
	m := c.chosen()
	if m == "" {
		c.decideMu.Lock()
		if m = c.chosen(); m == "" {
			err := c.first(ctx, f)
			c.decideMu.Unlock()
			return err
		}
		c.decideMu.Unlock()
	}
	if m == ModeSSE {
		if f.Route != nil {
			return fmt.Errorf("%w: protocol revision 2026-07-28 runs over Streamable HTTP only; this server speaks the HTTP+SSE transport", ErrTransport)
		}
		return c.sse.post(ctx, f)
	}
	return c.st.post(ctx, f, false)
}

// first sends the first frame and settles the transport.
func (c *HTTPConn) first(ctx context.Context, f Frame) error {
	if f.Route != nil {
		return c.firstRouted(ctx, f)
	}
	switch c.mode {
	case ModeSSE:
		if err := c.sse.open(ctx); err != nil {
			return err
		}
		c.choose(ModeSSE, c.modeWhy)
		return c.sse.post(ctx, f)
	case ModeStreamable:
		if err := c.st.post(ctx, f, false); err != nil {
			return err
		}
		c.choose(ModeStreamable, c.modeWhy)
		return nil
	}
	err := c.st.post(ctx, f, true)
	var fb *fallbackError
	if !errors.As(err, &fb) {
		if err == nil {
			c.choose(ModeStreamable, "auto-detected: the first POST was accepted")
			c.b.note("Streamable HTTP: the server accepted the first POST to %s", c.url)
		}
		return err
	}
	c.b.note("POST %s answered HTTP %d %s; trying the HTTP+SSE transport of protocol 2024-11-05 (GET %s)",
		c.url, fb.status, http.StatusText(fb.status), c.url)
	if err := c.sse.open(ctx); err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrConnect) || errors.Is(err, ErrClosed) {
			return err
		}
		msg := fmt.Sprintf("POST %s: HTTP %d %s", RedactURL(c.url), fb.status, http.StatusText(fb.status))
		if fb.body != "" {
			msg += ": " + Excerpt(fb.body)
		}
		// Said once: the second failure's own "transport failure: " prefix
		// would repeat the first's.
		return &messageError{
			msg:  fmt.Sprintf("%v: %s; and it is not an HTTP+SSE server either: %s", ErrTransport, msg, causeText(err)),
			errs: []error{ErrTransport, err},
		}
	}
	c.choose(ModeSSE, fmt.Sprintf("auto-detected: POST answered HTTP %d %s, so mcpx fell back to HTTP+SSE (2024-11-05)",
		fb.status, http.StatusText(fb.status)))
	return c.sse.post(ctx, f)
}

// firstRouted sends a first frame of the stateless 2026-07-28 style, which
// exists only on Streamable HTTP. An answer (a result, or a JSON-RPC error
// that came with a 4xx status) settles the transport as Streamable HTTP;
// a refusal without one settles nothing, so that a handshake-era initialize
// sent next still goes through the usual detection (spec 2026-07-28:
// basic/transports/streamable-http, "Backward Compatibility").
func (c *HTTPConn) firstRouted(ctx context.Context, f Frame) error {
	if c.mode == ModeSSE {
		return fmt.Errorf("%w: protocol revision 2026-07-28 runs over Streamable HTTP only, not the HTTP+SSE transport (%s)", ErrTransport, c.modeWhy)
	}
	if err := c.st.post(ctx, f, false); err != nil {
		return err
	}
	why := c.modeWhy
	if c.mode == ModeAuto {
		why = "auto-detected: the server answered a 2026-07-28 request"
	}
	c.choose(ModeStreamable, why)
	return nil
}

// CarriesRoutes reports true: Streamable HTTP mirrors a Frame's Route into
// headers (see RouteCarrier).
func (c *HTTPConn) CarriesRoutes() bool { return true }

// CancelRequest closes the response stream of a request sent with a Route
// (see RequestCanceller).
func (c *HTTPConn) CancelRequest(id string) bool { return c.st.cancelRouted(id) }

// ForgetRequest closes the response stream of request id, once it owes
// no other request a response (see RequestForgetter).
func (c *HTTPConn) ForgetRequest(id string) { c.st.forgetRequest(id) }

// Awaiting says which POST's SSE stream still owes the response to
// request id (see AnswerAwaiter).
func (c *HTTPConn) Awaiting(id string) string { return c.st.awaiting(id) }

// ForgetSession drops session id, which the server no longer knows (see
// SessionForgetter).
func (c *HTTPConn) ForgetSession(id string) { c.st.ForgetSession(id) }

// OnServerStreamEnd registers fn to learn that the stream for
// server-initiated messages ended for good (see ServerStreamEndReporter).
//
// Over HTTP+SSE the stream is the session's (spec 2024-11-05:
// basic/transports, "HTTP with SSE"): when it ends, fn is told that the
// session ended (an error matching ErrSessionExpired) and the stream is
// opened again, a new session for fn to initialize, which later Writes
// wait for; if it cannot be, the connection ends saying why. Without fn
// the connection ends with the stream.
func (c *HTTPConn) OnServerStreamEnd(fn func(error)) {
	c.st.OnServerStreamEnd(fn)
	c.sse.OnServerStreamEnd(fn)
}

// OnRequestLost registers fn to learn about requests whose response
// stream ended before the response and cannot go on (see LossReporter).
func (c *HTTPConn) OnRequestLost(fn func(id string, err error)) {
	c.b.lostMu.Lock()
	c.b.onLost = fn
	c.b.lostMu.Unlock()
}

// OnRequestDropped registers fn to answer the server's requests that
// were dropped for their size (see DropReporter).
func (c *HTTPConn) OnRequestDropped(fn func(id jsonrpc.ID, method string, err error)) {
	c.b.lostMu.Lock()
	c.b.onDropped = fn
	c.b.lostMu.Unlock()
}

// OnDeparture registers fn to learn about the server's departures from
// the transport's rules that the connection reads past (see
// DepartureReporter).
func (c *HTTPConn) OnDeparture(fn func(kind, msg string)) {
	c.b.lostMu.Lock()
	c.b.onDepart = fn
	c.b.lostMu.Unlock()
}

// Read returns the next frame from any of the connection's streams.
func (c *HTTPConn) Read(ctx context.Context) (Frame, error) {
	return c.b.read(ctx)
}

// Negotiated tells the connection the protocol version the session agreed
// on (see Negotiator). Over Streamable HTTP it sets MCP-Protocol-Version
// and opens the GET stream; over HTTP+SSE there is nothing to do.
func (c *HTTPConn) Negotiated(ctx context.Context, version string) error {
	if c.chosen() == ModeStreamable {
		return c.st.Negotiated(ctx, version)
	}
	return nil
}

// HoldServerStream makes Negotiated leave the GET stream closed until
// OpenServerStream opens it (see ServerStreamer).
func (c *HTTPConn) HoldServerStream() {
	c.st.mu.Lock()
	c.st.holdGet = true
	c.st.mu.Unlock()
}

// OpenServerStream opens the GET stream for server-initiated messages now,
// over Streamable HTTP (see ServerStreamer); over HTTP+SSE, whose one
// stream is the connection itself, there is nothing to do.
func (c *HTTPConn) OpenServerStream(ctx context.Context) error {
	if c.chosen() == ModeStreamable {
		return c.st.openGet(ctx)
	}
	return nil
}

// ServerStreamErr says why the GET stream for server-initiated messages
// was not opened at its last attempt (see ServerStreamReporter).
func (c *HTTPConn) ServerStreamErr() error {
	if c.chosen() != ModeStreamable {
		return nil
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return c.st.getErr
}

// Close ends every request and stream, then ends the session on the
// server with DELETE when there is one. It is idempotent.
func (c *HTTPConn) Close() error {
	c.closeMu.Do(func() {
		c.b.shutdown()
		if c.chosen() == ModeStreamable {
			c.st.deleteSession()
		}
		c.b.release()
	})
	return nil
}

// SessionID returns the Mcp-Session-Id in use, "" when there is none.
func (c *HTTPConn) SessionID() string { return c.st.SessionID() }

// Transport returns the transport in use (ModeStreamable or ModeSSE), ""
// before the first Write.
func (c *HTTPConn) Transport() HTTPMode { return c.chosen() }

// Describe says which transport is in use, why, and where.
func (c *HTTPConn) Describe() string {
	c.mu.Lock()
	m, why := c.active, c.why
	c.mu.Unlock()
	switch m {
	case ModeStreamable:
		d := "streamable-http: " + RedactURL(c.url)
		var extra []string
		if id := c.SessionID(); id != "" {
			extra = append(extra, "session "+id)
		}
		extra = append(extra, why)
		return d + " (" + strings.Join(extra, "; ") + ")"
	case ModeSSE:
		if ep := c.sse.Endpoint(); ep != "" {
			return fmt.Sprintf("http+sse: %s (messages to %s; %s)", RedactURL(c.url), RedactURL(ep), why)
		}
		return fmt.Sprintf("http+sse: %s (its SSE stream is being opened again; %s)", RedactURL(c.url), why)
	}
	return fmt.Sprintf("http (%s): %s (not connected yet)", c.mode, RedactURL(c.url))
}

// messageError is an error with a message of its own that still matches
// (errors.Is, errors.As) every error it was made from.
type messageError struct {
	msg  string
	errs []error
}

func (e *messageError) Error() string   { return e.msg }
func (e *messageError) Unwrap() []error { return e.errs }
