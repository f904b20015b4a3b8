package transport

import (
	"context"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// Negotiator is implemented by connections that need to know the protocol
// version the session agreed on. The session calls it once the server's
// initialize result is accepted and before it sends anything else, so that
// every later HTTP request carries MCP-Protocol-Version and the GET stream
// for server-initiated messages is open before the next request goes out
// (spec: basic/transports, "Protocol Version Header" and "Listening for
// Messages from the Server"). It is called again after a re-initialize.
type Negotiator interface {
	Negotiated(ctx context.Context, protocolVersion string) error
}

// ServerStreamer is implemented by connections on which the client opens a
// stream for server-initiated messages apart from any request: Streamable
// HTTP's GET stream (spec: basic/transports, "Listening for Messages from
// the Server"). Negotiated opens it by default; a caller that reproduces
// another client (verify replaying a recorded host) calls HoldServerStream
// before the session's negotiation and OpenServerStream when, if ever, that
// client opened it, since what a server sends on the stream depends on
// whether and when it is open.
type ServerStreamer interface {
	// HoldServerStream makes Negotiated leave the stream closed.
	HoldServerStream()
	// OpenServerStream opens the stream now (replacing an open one) and
	// returns once the server answered; a server that offers none is
	// noted, not an error.
	OpenServerStream(ctx context.Context) error
}

// ServerStreamReporter is implemented by connections that can say why
// their stream for server-initiated messages is not open: the server's
// refusal of its last opening (an *HTTPError; 405 when it offers none,
// which the spec allows: basic/transports, "Listening for Messages from
// the Server"), nil when it is open or was never asked for. Such a refusal
// is only noted, not an error; a command whose whole point is what the
// server sends on its own (watch) tells the person.
type ServerStreamReporter interface {
	ServerStreamErr() error
}

// Find returns the first connection in c's decorator chain — c itself, then
// whatever each decorator's Unwrap returns — that implements T. Decorators
// such as Tap hide the optional interfaces of what they wrap; Find sees
// through them.
func Find[T any](c Conn) (T, bool) {
	for c != nil {
		if t, ok := c.(T); ok {
			return t, true
		}
		u, ok := c.(interface{ Unwrap() Conn })
		if !ok {
			break
		}
		c = u.Unwrap()
	}
	var zero T
	return zero, false
}

// RouteCarrier is implemented by connections whose binding carries a
// Frame's Route outside the message (Streamable HTTP: as headers). The
// session asks so it can apply rules that exist only there: tools whose
// x-mcp-header annotations are invalid cannot be called over such a
// connection (spec 2026-07-28: basic/transports/streamable-http, "Custom
// Headers from Tool Parameters").
type RouteCarrier interface {
	CarriesRoutes() bool
}

// AnswerAwaiter is implemented by connections that can say where the
// response to a request they sent is still awaited, for the message of a
// request that timed out: over Streamable HTTP, on the SSE stream the
// server answered the POST with (spec 2025-11-25: basic/transports,
// "Sending Messages to the Server"), which has not carried it. A server
// that opened that stream did answer the POST, which is worth telling
// from one that never did. Awaiting returns "" when there is no such
// stream. id is normalized as for LossReporter.
type AnswerAwaiter interface {
	Awaiting(id string) string
}

// RequestCanceller is implemented by connections on which a request sent
// with a Route is cancelled by closing its response stream rather than by
// a notifications/cancelled message (spec 2026-07-28: basic/transports,
// "Cancellation"). CancelRequest reports whether id names such a request
// (whatever its stream's state); the caller sends notifications/cancelled
// otherwise.
type RequestCanceller interface {
	CancelRequest(id string) bool
}

// RequestForgetter is implemented by connections that follow a request's
// response stream on their own after Write returned: Streamable HTTP
// reads the SSE stream answering a POST, and resumes it when it breaks
// (spec 2025-11-25: basic/transports, "Resumability and Redelivery").
// The caller calls ForgetRequest once it stopped waiting for request id
// (a timeout, the user's interrupt) and told the server so with
// notifications/cancelled: the stream is closed, which the client may do
// at any time, once it owes no other request a response, rather than
// kept open, and resumed when it breaks, for a response nobody waits for
// (a server that polls by closing its stream with a retry field was
// polled for as long as the session lasted). id is normalized as for
// LossReporter.
type RequestForgetter interface {
	ForgetRequest(id string)
}

// LossReporter is implemented by connections on which the response to one
// request can be lost while the connection lives on: in 2026-07-28
// Streamable HTTP, a response stream that ends before its response loses
// that request, and streams are not resumable (spec 2026-07-28:
// basic/transports/streamable-http, "Receiving Messages"); in earlier
// revisions, a broken stream that cannot be resumed loses the requests it
// still owed a response, and only those: redelivery is per stream (spec
// 2025-11-25: basic/transports, "Resumability and Redelivery"). The
// reason matches ErrStreamLost, and ErrSessionExpired when resuming found
// the session ended. The session registers fn before the first Write; fn
// is called with the request's id (normalized: a JSON string's contents,
// a number's digits) and the reason, from Read, after every frame that
// arrived before the loss was returned. Without fn the connection fails
// instead.
type LossReporter interface {
	OnRequestLost(fn func(id string, err error))
}

// DropReporter is implemented by connections that read past a message
// longer than the maximum message size and go on: when that message is a
// request of the peer's whose id it gives (when it has been read past, if
// the id comes after the params), fn is called with
// the id as sent, the request's method and the error it is to be
// answered with (matching ErrFrameTooLarge), from Read, in the order of
// the frames. The listener answers it, through the connection and its
// decorators (--wire, a recording), so that the peer does not wait for an
// answer that never comes. The session registers fn before the first
// Write; without fn such a request is only noted (EventDropped).
type DropReporter interface {
	OnRequestDropped(fn func(id jsonrpc.ID, method string, err error))
}

// SessionForgetter is implemented by connections that keep a session the
// server assigned (Streamable HTTP's Mcp-Session-Id). A server that
// restarted no longer knows the session; the spec has it answer 404, which
// the connection reports as ErrSessionExpired having forgotten the session
// itself (spec 2025-11-25: basic/transports, "Session Management"). Servers
// built on the TypeScript SDK's examples answer 400 instead, which may
// also refuse one bad request in a live session: the session finds out
// which (an HTTPError whose SessionID is set, and a ping refused the same
// way) and then calls ForgetSession, so that the next initialize starts a
// new session. id is the session to forget; a later one is kept.
type SessionForgetter interface {
	ForgetSession(id string)
}

// ServerStreamEndReporter is implemented by connections whose stream for
// server-initiated messages (Streamable HTTP's GET stream), once open,
// can end for good while the connection lives on: it broke and could not
// be reopened. fn is called, from the connection's own goroutine, with
// why: ErrSessionExpired when the server answered 404 to the session (it
// restarted, and forgot it), an *HTTPError whose SessionID is set for
// another refusal, the last failure when reconnecting gave up. Notifications
// and requests the server sends on its own no longer arrive then, which
// the session tells the person, or starts a new session for when the old
// one is gone (spec 2025-11-25: basic/transports, "Session Management").
// Over HTTP+SSE the one stream carries the session (spec 2024-11-05:
// basic/transports, "HTTP with SSE"): fn is told, with an error matching
// ErrSessionExpired, as soon as it ends, and the connection opens it
// again, a new session for fn to initialize, which Writes wait for; a
// connection without fn ends with its stream. The session registers fn
// before the first Write.
type ServerStreamEndReporter interface {
	OnServerStreamEnd(fn func(err error))
}

// DepartureReporter is implemented by connections that notice the
// server departing from the transport's rules in a way they read past:
// over Streamable HTTP, a POST that carried no request answered with a
// body where the spec has 202 Accepted and none, or with no body but
// another status (200 OK), an Mcp-Session-Id that changed after
// initialization (spec 2025-11-25: basic/transports,
// "Sending Messages to the Server" and "Session Management"). They are
// the server's departures from the protocol, as a frame that is not
// JSON-RPC is (--strict counts them), not a failure of the connection,
// which goes on. fn is called with the sort (kind: a plural phrase, "answers
// with a body to POSTs that carried no request") and the line that says
// it, from the goroutine that noticed; a sort the server can repeat with
// every message is told each time (the session says the first few and
// counts the rest), one it cannot is told once. The session registers fn
// before the first Write; without fn a departure is a note (EventNote).
type DepartureReporter interface {
	OnDeparture(fn func(kind, msg string))
}
