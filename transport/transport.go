// Package transport moves whole JSON-RPC frames between mcpx and an MCP server.
//
// A transport knows framing (newline-delimited stdio, HTTP bodies, SSE events),
// HTTP headers, session ids and process management, and nothing about MCP
// methods. Frames are kept as the exact bytes that crossed the wire so that
// the layers above can show, record and replay malformed traffic faithfully.
package transport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Frame is one message as it crossed the wire. Data holds the raw bytes,
// without the transport's delimiter (the stdio newline, the SSE "data:"
// prefix); it is not guaranteed to be valid JSON. Data is never changed
// once the frame was read or handed to Write: an observer (a Tap's
// FrameFunc, a recorder) may keep it without copying it.
type Frame struct {
	Data []byte
	// Meta carries transport details about how the frame travelled, when the
	// transport has any (HTTP status, SSE event id, ...). Nil for stdio.
	Meta *Meta
	// Route, on an outgoing frame, asks for the stateless request style of
	// protocol revision 2026-07-28: the frame stands alone (no session), and
	// a transport with an envelope (HTTP) mirrors the route into it. Nil for
	// everything of the handshake era. See Route.
	Route *Route
}

// Route is neutral routing metadata for one outgoing message of the
// 2026-07-28 protocol revision, set by the session, which knows MCP. The
// transport does not interpret it beyond its binding: Streamable HTTP sends
// it as the MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-{Name}
// headers, encoding unsafe values (spec 2026-07-28:
// basic/transports/streamable-http, "Request Metadata"); stdio has no
// envelope and ignores it. A frame with a Route carries no session id and
// is cancelled by closing its response stream, where the binding has one.
type Route struct {
	// ProtocolVersion is the version the message's _meta declares.
	ProtocolVersion string
	// Method is the JSON-RPC method.
	Method string
	// Name is the name-shaped identifier of the request (a tool or prompt
	// name, a resource URI, a task id); "" for none.
	Name string
	// Params are values mirrored from the request's arguments, in order.
	Params []RouteParam
}

// RouteParam is one mirrored argument: Name is the header name's suffix
// (Mcp-Param-{Name}), Value its plain value before any encoding.
type RouteParam struct {
	Name, Value string
}

// Meta is transport-level information attached to a frame. Fields are
// optional; zero values mean "not applicable".
type Meta struct {
	HTTPMethod  string `json:"httpMethod,omitempty"`
	URL         string `json:"url,omitempty"`
	HTTPStatus  int    `json:"httpStatus,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	SessionID   string `json:"sessionId,omitempty"`
	// StreamID names the SSE stream the frame arrived on (e.g. "post-3", "get").
	StreamID string `json:"streamId,omitempty"`
	EventID  string `json:"eventId,omitempty"`
}

// Conn is a bidirectional, frame-oriented connection to one MCP peer.
//
// Read is called by a single goroutine (the session's read loop). Write may
// be called concurrently. Close is idempotent, unblocks Read and releases
// every resource the connection owns (including a child process).
type Conn interface {
	// Read returns the next frame from the peer. It returns an error wrapping
	// ErrClosed after Close, or a *PeerExitError / other transport error
	// when the peer goes away.
	Read(ctx context.Context) (Frame, error)
	// Write sends one frame to the peer.
	Write(ctx context.Context, f Frame) error
	// Close shuts the connection down.
	Close() error
}

// Describer is implemented by connections that can say what they are
// connected to, for display ("stdio: node server.js", "streamable-http: ...").
type Describer interface {
	Describe() string
}

// Event is out-of-band transport information that is not a frame: a line the
// server wrote on stderr, a note about a transport decision, an HTTP exchange.
// Observers receive events to display or record them.
type Event struct {
	Time time.Time
	Kind EventKind
	// Text is the event's human-readable content (a stderr line, a note).
	Text string
	// Meta carries HTTP details for EventHTTP and EventStream.
	Meta *Meta
	// Retry is the reconnection delay an SSE event asked for (its retry
	// field), for EventStream.
	Retry time.Duration
}

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	// EventStderr is one line of the server process's standard error.
	EventStderr EventKind = "stderr"
	// EventNote is a transport decision worth telling the person about
	// ("falling back to HTTP+SSE", "session re-initialized", "server exited").
	EventNote EventKind = "note"
	// EventDropped tells of a message from the server that mcpx dropped
	// unread (longer than the maximum message size) and that no error
	// tells of: a notification, or a response whose request could not be
	// found; or (over Streamable HTTP) the server's own messages that
	// will not arrive, its GET stream refused for leading to another
	// origin. Something the server sent is missing, so unlike a note it is
	// for the person whatever the verbosity, over every transport.
	EventDropped EventKind = "dropped"
	// EventHTTP describes one HTTP request or response at the HTTP layer.
	EventHTTP EventKind = "http"
	// EventStream is SSE stream metadata that carries no frame: a priming
	// event (an event id, perhaps a retry delay, and no data) that a
	// client delivers nothing for.
	EventStream EventKind = "stream"
)

// Observer receives transport events. It must not block for long; it is
// called from the transport's own goroutines.
type Observer func(Event)

// Errors that callers match with errors.Is.
var (
	// ErrClosed is returned by Read and Write after Close.
	ErrClosed = errors.New("connection closed")
	// ErrConnect marks failures to establish the connection (a server binary
	// that cannot be started, a refused TCP connection).
	ErrConnect = errors.New("cannot connect")
)

// WaitError reports what a transport was still waiting for when the
// caller's context ended, so that a timeout can say what never came (the
// HTTP+SSE endpoint event, for one). It wraps the context's error:
// errors.Is(err, context.DeadlineExceeded) still holds.
type WaitError struct {
	// For says what never came, for people ("the HTTP+SSE stream GET URL
	// sent no endpoint event").
	For string
	Err error
}

func (e *WaitError) Error() string { return e.For + ": " + e.Err.Error() }

func (e *WaitError) Unwrap() error { return e.Err }

// PeerExitError reports that a stdio server process ended.
type PeerExitError struct {
	// Status is the process's exit description ("exit status 1", "signal: killed").
	Status string
	// Code is the exit code, or -1 when the process was killed by a signal.
	Code int
	// LastStderr holds the last lines the server wrote on stderr, newest last.
	LastStderr []string
}

func (e *PeerExitError) Error() string {
	return "server exited (" + e.Status + ")"
}

// LastLines returns the last n lines of LastStderr that are not blank,
// trimmed, oldest first: what a message about the exit quotes (the
// server's own last words are usually why it died). A line longer than
// a few hundred bytes is cut, saying how long it was: a stderr line is
// kept whole up to a megabyte, and a server that dies after writing a
// minified stack trace or a JSON dump would otherwise make the one-line
// error megabytes long. Control characters are left for the message's
// own escaping.
func (e *PeerExitError) LastLines(n int) []string {
	var out []string
	for i := len(e.LastStderr) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimSpace(e.LastStderr[i]); l != "" {
			if t := cutAt(l, maxExcerpt); len(t) < len(l) {
				l = t + fmt.Sprintf("… (%d bytes)", len(l))
			}
			out = append([]string{l}, out...)
		}
	}
	return out
}
