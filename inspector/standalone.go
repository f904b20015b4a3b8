package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Server-initiated messages over Streamable HTTP come on the request's own
// response stream or on the GET stream the client MAY open (spec
// 2025-11-25: basic/transports, "Listening for Messages from the Server").
// With Options.ServerStreamOnDemand the session holds that stream
// (transport.ServerStreamer) and opens it only when it may need it: a
// session that declares roots once the handshake is done (the server may
// ask roots/list at any time), any other session that declares a client
// capability the server may call back into (sampling, elicitation) before
// the first request during which the server may do so — every request but
// the ones below. A caller that listens for notifications (watch, a REPL)
// leaves the option off: the stream opens at negotiation.

// quietMethods are the requests during which a server has no reason to
// call back into the client.
var quietMethods = map[string]bool{
	mcp.MethodInitialize:             true,
	mcp.MethodPing:                   true,
	mcp.MethodToolsList:              true,
	mcp.MethodPromptsList:            true,
	mcp.MethodResourcesList:          true,
	mcp.MethodResourcesTemplatesList: true,
	mcp.MethodLoggingSetLevel:        true,
	mcp.MethodTasksGet:               true,
	mcp.MethodTasksList:              true,
	mcp.MethodTasksCancel:            true,
}

// callbacks reports what the client capabilities declare: whether the
// server may send requests at any time (roots) and during a request of
// ours (roots, sampling, elicitation).
func callbacks(caps json.RawMessage) (anytime, during bool) {
	c, err := ParseObject(caps) // read in place: this runs for every request
	if err != nil {
		return false, false
	}
	roots := c.Has("roots")
	return roots, roots || c.Has("sampling") || c.Has("elicitation")
}

// legacyOf returns the handshake-era lifecycle in use, nil in the modern
// era (which has no GET stream).
func (s *Session) legacyOf() *Legacy {
	switch l := s.life.(type) {
	case *Legacy:
		return l
	case *Auto:
		if c, ok := l.current(); ok {
			if legacy, ok := c.(*Legacy); ok {
				return legacy
			}
		}
	}
	return nil
}

// listenBefore opens the stream for server-initiated messages, when the
// connection opens it on demand, before a request during which the server
// may call back into a capability the client declared.
func (s *Session) listenBefore(ctx context.Context, method string) error {
	if quietMethods[method] || !s.opts.ServerStreamOnDemand {
		return nil
	}
	s.streamMu.Lock()
	open := s.streamOpen
	s.streamMu.Unlock()
	if open {
		return nil // (listen's own checks, first: this runs for every request)
	}
	l := s.legacyOf()
	if l == nil {
		return nil
	}
	if _, during := callbacks(l.Capabilities); !during {
		return nil
	}
	return s.listen(ctx)
}

// listen opens the connection's stream for server-initiated messages, once
// per negotiated session, when the session holds it (see
// Options.ServerStreamOnDemand).
func (s *Session) listen(ctx context.Context) error {
	if !s.opts.ServerStreamOnDemand {
		return nil
	}
	ss, ok := transport.Find[transport.ServerStreamer](s.conn)
	if !ok {
		return nil
	}
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.streamOpen {
		return nil
	}
	if err := s.openStreamWithin(ctx, ss.OpenServerStream); err != nil {
		return fmt.Errorf("opening the stream for server-initiated messages: %w", err)
	}
	s.streamOpen = true
	return nil
}

// openStreamWithin runs open, which opens the stream for server-initiated
// messages and returns once the server answered it, within the request
// timeout (Options.Timeout): a server that takes the GET and never answers
// would otherwise hold the handshake, or the request waiting for the
// stream, for as long as ctx lives. Past the timeout the session goes on
// without the stream, with a note, as it does when the server offers none
// (the stream is optional: spec 2025-11-25, basic/transports, "Listening
// for Messages from the Server").
func (s *Session) openStreamWithin(ctx context.Context, open func(context.Context) error) error {
	if s.opts.Timeout <= 0 {
		return open(ctx)
	}
	octx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	err := open(octx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		s.note("no stream for server-initiated messages: the server did not answer its GET within %s; going on without it", s.opts.Timeout)
		return nil
	}
	return err
}

// ServerStreamErr says why the connection's stream for server-initiated
// messages is not open (its server refused it: see
// transport.ServerStreamReporter), nil when it is or the transport has
// none to open. Notifications and requests of the server's own then come
// only on the streams answering the client's requests.
func (s *Session) ServerStreamErr() error {
	if r, ok := transport.Find[transport.ServerStreamReporter](s.conn); ok {
		return r.ServerStreamErr()
	}
	return nil
}

// serverStreamEnded is told that the connection's stream for
// server-initiated messages ended for good (see
// transport.ServerStreamEndReporter). When the server no longer knows the
// session (it restarted: a 404, or a 400 that a ping in the session gets
// too), a new session is started at once, as the client must (spec
// 2025-11-25: basic/transports, "Session Management"), whose stream
// carries the server's messages again; a session that only listens
// (watch) sends nothing else that would find out. Otherwise the person
// is told that the server's own messages no longer arrive. gen is the
// generation of the session when the stream ended.
func (s *Session) serverStreamEnded(gen int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.opts.Timeout, DefaultTimeout))
	defer cancel()
	cause := err
	if !errors.Is(err, transport.ErrSessionExpired) {
		cause = s.unknownSession(ctx, "", err)
	}
	if cause == nil {
		s.warn("the stream for the server's own messages ended: %v; notifications and requests the server sends on its own no longer arrive", err)
		return
	}
	if err := s.renew(ctx, gen, "", cause); err != nil {
		select {
		case <-s.peer.Done():
			// The connection ended (which its end says) or is closing.
			return
		default:
		}
		if !errors.Is(err, transport.ErrClosed) {
			s.warn("the stream for the server's own messages ended: %v", err)
		}
	}
}

// holdServerStream makes the connection leave its stream for
// server-initiated messages closed at negotiation (see listen).
func (s *Session) holdServerStream() {
	if ss, ok := transport.Find[transport.ServerStreamer](s.conn); ok && s.opts.ServerStreamOnDemand {
		ss.HoldServerStream()
	}
}

// negotiatedStream is told that a session was (re)negotiated: its stream
// for server-initiated messages is not open yet.
func (s *Session) negotiatedStream() {
	s.streamMu.Lock()
	s.streamOpen = false
	s.streamMu.Unlock()
}
