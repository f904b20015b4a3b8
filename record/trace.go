// Package record turns MCP sessions into traces and traces back into
// sessions: the trace format (JSON Lines, documented in
// docs/trace-format.md), a Recorder that wraps a transport.Conn, a replay
// server that plays the recorded server back (over a transport.Conn or as
// an http.Handler), Verify, which re-sends a trace's client traffic to a
// live server and compares the answers, and recording proxies for stdio
// and HTTP.
//
// The package is meant to be imported by other projects too, typically
// from tests: record a session once, check the trace in, and verify the
// server against it in `go test` (see the package examples and the
// recordtest helper). Traces meant for a repository are written in the
// stable form (WriteStable, RecorderOptions.Stable), and a record mode
// (Mode, the MCPX_RECORD environment variable) says whether a test
// records or replays; record/sdktest does both for the official Go SDK.
// It depends only on the transport, the JSON-RPC layer
// (jsonrpc, whose engine jsonrpc/peer reads the connections of Verify and
// Replayer.Serve) and the MCP vocabulary (mcp): no terminal or
// command-line library comes with it. Frames are recorded through one
// plug, Recorder.Frame (a transport.FrameFunc), and events through
// Recorder.Observe (a transport.Observer).
//
// A server's test records a session once, with any client that talks
// over a transport.Conn (here mcpx's own, package inspector; ExampleCreate
// shows it whole):
//
//	rec, err := record.Create(ctx, "testdata/greeter.jsonl", record.RecorderOptions{Stable: true})
//	...
//	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: url, Observer: rec.Observe})
//	...
//	sess, err := inspector.Connect(ctx, rec.Wrap(conn), inspector.Options{...})
//	...
//	sess.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
//	sess.Close()
//	if err := rec.Close(); err != nil { // Close writes the trace
//		t.Fatal(err)
//	}
//
// and verifies the server against it on every run (ExampleVerify;
// recordtest.Verify does this and fails the test with a readable diff):
//
//	tr, err := record.ReadFile("testdata/greeter.jsonl")
//	...
//	live, err := transport.NewHTTP(transport.HTTPOptions{URL: url})
//	...
//	defer live.Close()
//	res, err := record.Verify(ctx, tr, live, record.VerifyOptions{})
//	...
//	for _, m := range res.Mismatches {
//		t.Errorf("%s: %s", m.Label(), m.Problem)
//	}
//
// A client's test is served the recorded server instead: NewReplayer,
// then Replayer.ServePipe (ExampleReplayer) or Replayer.Handler.
package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// Format is the name every trace's header line carries.
const Format = "mcpx-trace"

// Version is the trace format version this package writes and the newest
// it reads. Readers reject newer versions rather than misread them.
const Version = 1

// Minor is the format's minor version this package writes: additions that
// readers of the same Version may ignore (docs/trace-format.md,
// "Compatibility"). Minor 1 added the route of client-to-server frames, so
// a frame of a minor-1 trace without one was sent without one, while in an
// older trace its route was simply not recorded. Minor 2 added sessions
// (the s member of every event, session events), prelude frames, stream
// events, the re member, and the header's ignore and normalize lists.
// Minor 3 added view events: the messages between an MCP Apps host and
// its views (KindView). Minor 4 added the header's redactRules (see
// RedactRules): a reader that ignores it redacts live traffic by the
// rules of its own time, and may find a request whose secret members
// only the newer rules redacted unlike the recorded one.
const Minor = 4

// Header is the first line of a trace: what it is and where it came from.
type Header struct {
	// Format is always "mcpx-trace".
	Format string `json:"format"`
	// Version is the format version (see Version).
	Version int `json:"version"`
	// Minor is the minor version (see Minor); 0 for traces written before
	// there was one.
	Minor int `json:"minor,omitempty"`
	// Mcpx is the version of mcpx (or of the program using this package)
	// that wrote the trace.
	Mcpx string `json:"mcpx,omitempty"`
	// Created is when recording began (wall clock, UTC); absent from a
	// stable trace.
	Created time.Time `json:"created,omitzero"`
	// Transport is how the recorded client reached the server: "stdio",
	// "http" (Streamable HTTP or HTTP+SSE, see the events' metadata), or
	// "pipe" for in-process sessions.
	Transport string `json:"transport,omitempty"`
	// Target says which server was recorded (a command line, a URL), with
	// secrets removed.
	Target string `json:"target,omitempty"`
	// Redacted is false only when the trace was recorded with redaction
	// turned off (--no-redact): it may then hold secrets.
	Redacted bool `json:"redacted"`
	// Redact lists the JSONPath expressions redacted in addition to the
	// default sensitive keys (--redact), so that replay and verify can
	// redact live traffic the same way before comparing it.
	Redact []string `json:"redact,omitempty"`
	// RedactRules is the version of the rules that named the secret
	// members redacted (minor 4, see RedactRules); absent (0) in a trace
	// redacted by rules 1, and in one not redacted.
	RedactRules int `json:"redactRules,omitempty"`
	// Ignore lists what replay and verify leave out when they compare
	// messages, stored at recording time (minor 2): JSONPath expressions,
	// each perhaps scoped to one method as METHOD:JSONPATH (see
	// ParseIgnore). Later replays and verifies apply them in addition to
	// their own.
	Ignore []string `json:"ignore,omitempty"`
	// Normalize lists the normalizers replay and verify apply to string
	// values, live and recorded, before comparing them (minor 2; see
	// Normalizer).
	Normalize []Normalizer `json:"normalize,omitempty"`
	// Stable marks a trace written in the stable form (minor 3, see
	// WriteStable): no times, volatile values replaced by placeholders,
	// frames as canonical JSON laid out on several lines.
	Stable bool `json:"stable,omitempty"`
}

// Check reports a setting of the header that cannot be used, as a
// *HeaderError: an ignore, a normalizer or a redaction path that does not
// parse. Readers do not check them (showing a trace needs none of them);
// what applies them (Verify, replay, DiffTraces) fails on such a header,
// and a program that reads several traces before it uses any (mcpx
// verify) checks each at once.
func (h Header) Check() error {
	if _, err := ParseIgnores(h.Ignore); err != nil {
		return &HeaderError{Member: "ignore", Err: err}
	}
	if _, err := CompileNormalizers(h.Normalize, nil); err != nil {
		return &HeaderError{Member: "normalize", Err: err}
	}
	if _, err := ParsePaths(h.Redact); err != nil {
		return &HeaderError{Member: "redact", Err: err}
	}
	if h.RedactRules < 0 || h.RedactRules > RedactRules {
		return &HeaderError{Member: "redactRules", Err: &RulesError{Rules: h.RedactRules}}
	}
	return nil
}

// RedactOptions returns the redaction the trace was recorded with: what
// replay and verify apply to live traffic before they compare it with
// the trace (a trace without redactRules was redacted by rules 1).
func (h Header) RedactOptions() RedactOptions {
	return RedactOptions{Disabled: !h.Redacted, Paths: h.Redact, Rules: max(h.RedactRules, 1)}
}

// redactRules returns the rules the trace's members were redacted by: 0
// when it was not redacted.
func (h Header) redactRules() int {
	if !h.Redacted {
		return 0
	}
	return max(h.RedactRules, 1)
}

// HeaderError reports a setting of a trace's header that cannot be used
// (see Header.Check), or a member of the header whose value has the wrong
// JSON type (Mistyped), which no reader can read. The fix is in the
// trace's first line.
type HeaderError struct {
	// Member is the header's member that holds the setting: "ignore",
	// "normalize", "redact" or "redactRules"; for a mistyped value, the member's path
	// ("normalize", "normalize.pattern", "version").
	Member string
	// Err says what is wrong with it, naming the setting or the JSON type
	// the value has and the one it should have.
	Err error
	// Mistyped says the member's value has the wrong JSON type: the trace
	// cannot be read at all, and the error matches ErrNotTrace (though its
	// text says which member is wrong rather than "not an mcpx trace").
	Mistyped bool
}

func (e *HeaderError) Error() string {
	if e.Mistyped {
		return fmt.Sprintf("its header (line 1): %q %v; correct it there", e.Member, e.Err)
	}
	var rules *RulesError
	if errors.As(e.Err, &rules) && rules.Rules > RedactRules {
		// Nothing to correct: the trace is newer than the program.
		return fmt.Sprintf("its header (line 1): %v", e.Err)
	}
	what := map[string]string{"ignore": "ignores", "normalize": "normalizers", "redact": "redaction paths", "redactRules": "redaction rules"}[e.Member]
	return fmt.Sprintf("the %s of its header (line 1): %v; correct or remove it there", what, e.Err)
}

// Unwrap returns what is wrong with the setting.
func (e *HeaderError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotTrace) true for a mistyped member: the
// file cannot be read as a trace, as with any other header it cannot use.
func (e *HeaderError) Is(target error) bool { return e.Mistyped && target == ErrNotTrace }

// Kind says what an Event records.
type Kind string

// Event kinds.
const (
	// KindFrame is one JSON-RPC frame, exactly as it crossed the wire.
	KindFrame Kind = "frame"
	// KindStderr is one line the server process wrote on its stderr.
	KindStderr Kind = "stderr"
	// KindNote is a decision of the transport or session worth knowing
	// about ("session re-initialized", "falling back to HTTP+SSE").
	KindNote Kind = "note"
	// KindHTTP is one HTTP request or response at the HTTP layer. One
	// that answered a request without a JSON-RPC body (a refusal such as
	// a 400 text/plain) names the request in Event.Re.
	KindHTTP Kind = "http"
	// KindSession opens a session (minor 2): the first event of every
	// session, with its SessionInfo.
	KindSession Kind = "session"
	// KindStream is SSE stream metadata that is no frame (minor 2): a
	// priming event (an event id and perhaps a retry delay, no data), a
	// stream opened, closed or resumed.
	KindStream Kind = "stream"
	// KindView is one message between mcpx as an MCP Apps host and a view
	// it shows (minor 3; extension io.modelcontextprotocol/ui: JSON-RPC
	// over postMessage), exactly as sent or received, in Data, with the
	// view it belongs to in View and its direction HostToView or
	// ViewToHost. It is no frame of the session with the server: replay
	// and verify skip it, as older readers skip a kind they do not know.
	KindView Kind = "view"
)

// Direction says which way a frame travelled.
type Direction string

// Directions.
const (
	// ClientToServer is a frame the client sent ("c2s").
	ClientToServer Direction = "c2s"
	// ServerToClient is a frame the server sent ("s2c").
	ServerToClient Direction = "s2c"
	// HostToView is a message the host sent to a view ("h2v", minor 3).
	HostToView Direction = "h2v"
	// ViewToHost is a message a view sent to the host ("v2h", minor 3).
	ViewToHost Direction = "v2h"
)

// ViewInfo names the view of a view event (minor 3).
type ViewInfo struct {
	// ID identifies the view among the host's views.
	ID string `json:"id"`
	// Tool is the tool whose view it is.
	Tool string `json:"tool,omitempty"`
	// URI is the view's ui:// resource.
	URI string `json:"uri,omitempty"`
}

// Event is one line of a trace after the header.
type Event struct {
	// Time is the offset from the start of the recording, measured on the
	// monotonic clock (so it never goes backwards).
	Time time.Duration
	Kind Kind
	// Dir is set for frames; stderr lines are ServerToClient.
	Dir Direction
	// Data holds a frame's bytes exactly as they crossed the wire (after
	// redaction, when something had to be redacted).
	Data []byte
	// Text is the content of stderr, note and http events.
	Text string
	// Meta carries transport details (HTTP method, status, session id, SSE
	// stream and event id) when there are some.
	Meta *transport.Meta
	// Route is the routing metadata a client-to-server frame of the
	// stateless 2026-07-28 era was sent with (Streamable HTTP mirrors it
	// into the MCP-Protocol-Version, Mcp-Method, Mcp-Name and
	// Mcp-Param-{Name} headers), redacted like the frame; nil for frames of
	// the handshake era and for traces older than Minor 1.
	Route *transport.Route
	// Session is the session the event belongs to, from 1 (minor 2); 0
	// (events of older traces, events written without one) means 1.
	Session int
	// Prelude marks a frame written from the session's memory rather than
	// observed as it crossed the wire: the handshake a recording started
	// mid-session begins with.
	Prelude bool
	// Re names the request an http or note event is about, as the JSON of
	// its id: the request an HTTP refusal without a JSON-RPC body
	// answered.
	Re json.RawMessage
	// Retry is the reconnection delay a stream event's SSE event asked
	// for (the retry field), when it had one.
	Retry time.Duration
	// SessionInfo describes the session a KindSession event opens.
	SessionInfo *SessionInfo
	// View names the view of a KindView event.
	View *ViewInfo
}

// SessionInfo describes one session of a trace (minor 2): how the client
// reached the server, and, for a proxy, how the host reached the proxy.
type SessionInfo struct {
	// Transport is "stdio", "http" (Streamable HTTP) or "sse" (the legacy
	// HTTP+SSE transport); "pipe" for in-process sessions.
	Transport string `json:"transport,omitempty"`
	// Target is the server: a command line or a URL, secrets removed.
	Target string `json:"target,omitempty"`
	// Client says how the host reached a proxy, e.g. the remote address of
	// its connection; empty when mcpx was the client.
	Client string `json:"client,omitempty"`
	// Prelude is true when the session's first frames were written from
	// memory (a recording started mid-session): they carry Event.Prelude.
	Prelude bool `json:"prelude,omitempty"`
	// Name is the session's key for record modes (see Mode): a test's
	// name, a command line. Sessions without one are matched only by a
	// lookup without a name.
	Name string `json:"name,omitempty"`
}

// Messages decodes the frame an event holds (see package jsonrpc): one
// message, or a batch's. A frame that holds no message (not JSON, an empty
// batch) is one message of jsonrpc.KindInvalid, its Raw the whole frame.
// Events that are no frame hold no message.
func (e Event) Messages() (msgs []*jsonrpc.Message, batch bool) {
	if e.Kind != KindFrame {
		return nil, false
	}
	return parseFrame(e.Data)
}

// Trace is a whole trace file in memory. (TraceFile reads a large one a
// session at a time.)
type Trace struct {
	Header Header
	Events []Event
	// Warnings lists what the reader tolerated, such as a last line cut
	// short because the recording process was killed.
	Warnings []string
}

// Frames returns the trace's frame events, in order.
func (t *Trace) Frames() []Event {
	var out []Event
	for _, e := range t.Events {
		if e.Kind == KindFrame {
			out = append(out, e)
		}
	}
	return out
}

// wireEvent is the JSON form of an Event. A frame is stored in one of
// three ways, so that reading it back yields exactly the bytes recorded:
//
//   - msg: the frame itself, as JSON, when it is valid, compact JSON (the
//     usual case): the line holds the frame's bytes verbatim;
//   - msg and raw: valid JSON that is not compact (extra whitespace): msg
//     is the compacted JSON for tools, raw the exact text;
//   - raw alone: not JSON; b64 alone: not valid UTF-8 either.
type wireEvent struct {
	T     int64           `json:"t"`
	S     int             `json:"s,omitempty"`
	Kind  Kind            `json:"kind"`
	Dir   Direction       `json:"dir,omitempty"`
	Msg   json.RawMessage `json:"msg,omitempty"`
	Raw   *string         `json:"raw,omitempty"`
	B64   string          `json:"b64,omitempty"`
	Text  string          `json:"text,omitempty"`
	Route *wireRoute      `json:"route,omitempty"`
	Meta  *transport.Meta `json:"meta,omitempty"`
	// Minor 2.
	Prelude bool            `json:"prelude,omitempty"`
	Re      json.RawMessage `json:"re,omitempty"`
	Retry   int64           `json:"retry,omitempty"`
	Session *SessionInfo    `json:"session,omitempty"`
	// Minor 3.
	View *ViewInfo `json:"view,omitempty"`
}

// wireRoute is the JSON form of a transport.Route. Values are stored
// plain, as the session meant them, not in their header encoding.
type wireRoute struct {
	ProtocolVersion string      `json:"protocolVersion,omitempty"`
	Method          string      `json:"method,omitempty"`
	Name            string      `json:"name,omitempty"`
	Params          []wireParam `json:"params,omitempty"`
}

type wireParam struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (w *wireRoute) route() *transport.Route {
	r := &transport.Route{ProtocolVersion: w.ProtocolVersion, Method: w.Method, Name: w.Name}
	for _, p := range w.Params {
		r.Params = append(r.Params, transport.RouteParam{Name: p.Name, Value: p.Value})
	}
	return r
}

// writer writes a trace incrementally: the header when it is created, then
// each event as one line with a single Write call, so that a process that
// dies mid-session leaves a trace that is readable up to its last event.
// It is safe for concurrent use.
type writer struct {
	// old, for a copy of a trace older than minor 2, leaves out the
	// session numbers its events are read with.
	old bool
	// stable writes the stable form: no times, frames laid out (see
	// WriteStable); the caller has made the frames canonical.
	stable bool
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	cbuf   bytes.Buffer
	err    error
	// split, set by the caller of appendEvent, asks for a frame written
	// verbatim to be left out of the line: splitAt is then where it goes
	// and splitData the frame (nil when it was written in place).
	split     bool
	splitAt   int
	splitData []byte
}

// newWriter writes h (with Format and Version filled in) to w and returns a
// writer for the events.
func newWriter(w io.Writer, h Header) (*writer, error) {
	h.Minor = Minor
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	return newWriterAs(w, h)
}

// newWriterAs is newWriter keeping h.Minor (at most Minor) and h.Created: a
// trace copied from an older one must not claim what it does not hold.
func newWriterAs(w io.Writer, h Header) (*writer, error) {
	h.Format, h.Version, h.Minor = Format, Version, min(h.Minor, Minor)
	h.Created = h.Created.UTC()
	if h.Stable {
		// Nothing that changes from one recording to the next.
		h.Minor, h.Created, h.Mcpx = MinorStable, time.Time{}, ""
	}
	line, err := marshalLine(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(line); err != nil {
		return nil, fmt.Errorf("writing the trace header: %w", err)
	}
	return &writer{w: w, old: h.Minor < 2, stable: h.Stable}, nil
}

// marshalLine encodes v as one JSON line without HTML escaping.
func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write appends one event. After a failed write every later Write fails
// with the same error.
func (w *writer) Write(e Event) error {
	return w.write(e, nil)
}

// write is Write with the frame's scan result when the caller has it.
func (w *writer) write(e Event, scan *scanResult) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = w.appendEvent(w.buf[:0], e, scan)
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("writing the trace: %w", err)
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not keep a huge frame's buffer around
	}
	return w.err
}

// writeLine writes a line as it is, ending it with a newline.
func (w *writer) writeLine(line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = append(append(w.buf[:0], line...), '\n')
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("writing the trace: %w", err)
	}
	return w.err
}

// appendEvent encodes e as one line. It is written by hand, not with
// encoding/json, because it runs for every frame of a recorded session
// and must store the frame's bytes verbatim.
func (w *writer) appendEvent(b []byte, e Event, scan *scanResult) []byte {
	b = append(b, '{')
	if !w.stable {
		b = append(b, `"t":`...)
		b = strconv.AppendInt(b, e.Time.Microseconds(), 10)
		b = append(b, ',')
	}
	if e.Session > 0 && !w.old {
		b = append(b, `"s":`...)
		b = strconv.AppendInt(b, int64(e.Session), 10)
		b = append(b, ',')
	}
	b = append(b, `"kind":`...)
	b = appendString(b, string(e.Kind))
	if e.Dir != "" {
		b = append(b, `,"dir":`...)
		b = appendString(b, string(e.Dir))
	}
	if e.Kind == KindView {
		if e.View != nil {
			m, _ := marshalLine(e.View)
			b = append(b, `,"view":`...)
			b = append(b, bytes.TrimSuffix(m, []byte("\n"))...)
		}
		// Last, so that a message laid out on several lines (stable
		// traces) ends the event.
		b = w.appendFrame(b, e.Data, scan)
	}
	if e.Kind == KindFrame && !w.stable {
		b = w.appendFrame(b, e.Data, scan)
	}
	if e.Kind == KindFrame && e.Prelude {
		b = append(b, `,"prelude":true`...)
	}
	if e.Text != "" {
		b = append(b, `,"text":`...)
		b = appendString(b, e.Text)
	}
	if e.Route != nil && e.Kind == KindFrame {
		b = appendRoute(b, e.Route)
	}
	if e.Meta != nil && *e.Meta != (transport.Meta{}) {
		m, _ := json.Marshal(e.Meta)
		b = append(b, `,"meta":`...)
		b = append(b, m...)
	}
	if len(e.Re) > 0 && e.Kind != KindFrame {
		var c bytes.Buffer
		if json.Compact(&c, e.Re) == nil {
			b = append(b, `,"re":`...)
			b = append(b, c.Bytes()...)
		}
	}
	if e.Retry > 0 && e.Kind == KindStream {
		b = append(b, `,"retry":`...)
		b = strconv.AppendInt(b, e.Retry.Milliseconds(), 10)
	}
	if e.SessionInfo != nil && e.Kind == KindSession {
		m, _ := marshalLine(e.SessionInfo)
		b = append(b, `,"session":`...)
		b = append(b, bytes.TrimSuffix(m, []byte("\n"))...)
	}
	if e.Kind == KindFrame && w.stable {
		// Last, so that a frame laid out on several lines ends the event.
		b = w.appendFrame(b, e.Data, scan)
	}
	return append(b, '}', '\n')
}

// appendRoute appends a frame's route member.
func appendRoute(b []byte, r *transport.Route) []byte {
	b = append(b, `,"route":{`...)
	comma := false
	field := func(name, v string) {
		if v == "" {
			return
		}
		if comma {
			b = append(b, ',')
		}
		comma = true
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = appendString(b, v)
	}
	field("protocolVersion", r.ProtocolVersion)
	field("method", r.Method)
	field("name", r.Name)
	if len(r.Params) > 0 {
		if comma {
			b = append(b, ',')
		}
		b = append(b, `"params":[`...)
		for i, p := range r.Params {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendString(b, p.Name)
			b = append(b, `,"value":`...)
			b = appendString(b, p.Value)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func (w *writer) appendFrame(b []byte, data []byte, scan *scanResult) []byte {
	if !utf8.Valid(data) {
		b = append(b, `,"b64":"`...)
		b = base64.StdEncoding.AppendEncode(b, data)
		return append(b, '"')
	}
	var res scanResult
	if scan != nil {
		res = *scan
	} else {
		res = scanJSON(data, nil)
	}
	switch {
	case !res.valid:
		b = append(b, `,"raw":`...)
		return appendString(b, string(data))
	case res.compact && w.stable:
		b = append(b, `,"msg":`...)
		return appendLaidOut(b, data)
	case res.compact:
		// The usual case: the frame's bytes are the JSON, verbatim.
		b = append(b, `,"msg":`...)
		if w.split {
			w.splitAt, w.splitData = len(b), data
			return b
		}
		return append(b, data...)
	}
	w.cbuf.Reset()
	json.Compact(&w.cbuf, data)
	b = append(b, `,"msg":`...)
	b = append(b, w.cbuf.Bytes()...)
	b = append(b, `,"raw":`...)
	b = appendString(b, string(data))
	if w.cbuf.Cap() > 1<<20 {
		w.cbuf = bytes.Buffer{}
	}
	return b
}

// appendString appends s as a JSON string, escaping only what JSON
// requires (and the line separators U+2028 and U+2029, harmlessly).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Not reached for frames (they go to b64); text is made valid.
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// ErrNotTrace is matched by errors about input that is not an mcpx trace.
var ErrNotTrace = errors.New("not an mcpx trace")

// ErrNilArgument is matched by the error of a function given nil for
// something it cannot do without (a trace, a reader or writer, a
// connection): a mistake of the calling program, reported as an error
// rather than as a panic, which in a goroutine of Replayer.Serve would
// end the whole test binary.
var ErrNilArgument = errors.New("nil")

// matchingError is an error that says what it says and matches target,
// for errors whose text does not name target's.
type matchingError struct {
	msg    string
	target error
}

func (e *matchingError) Error() string        { return e.msg }
func (e *matchingError) Is(target error) bool { return target == e.target }

// nilArgument is the error of function fn given nil for arg.
func nilArgument(fn, arg string) error {
	return fmt.Errorf("record.%s: %s is %w", fn, arg, ErrNilArgument)
}

// nilSource reports whether src is no source of sessions: nil, or a nil
// *Trace or *TraceFile.
func nilSource(src SessionSource) bool {
	switch s := src.(type) {
	case nil:
		return true
	case *Trace:
		return s == nil
	case *TraceFile:
		return s == nil
	}
	return false
}

// VersionError reports a trace written in a format version this package
// does not know.
type VersionError struct{ Got int }

func (e *VersionError) Error() string {
	if e.Got > Version {
		return fmt.Sprintf("trace format version %d is newer than this mcpx understands (version %d); upgrade mcpx to read it", e.Got, Version)
	}
	return fmt.Sprintf("trace format version %d is not a valid version (this mcpx reads version %d)", e.Got, Version)
}

// MinorError reports a trace of a newer minor version than this package
// writes, which it was asked to write again: to add to its header (new
// ignores or normalizers), to add a session to a stable trace or hold a
// recording for it (RecorderOptions.Stable, Replace), to record it again
// (UpdateTrace). It reads such a trace (a minor version only adds what
// readers may ignore), and appends a session to it as it is, but writing it
// again would drop what the newer version added (members and events it
// does not know), and say an older minor.
type MinorError struct{ Got int }

func (e *MinorError) Error() string {
	return fmt.Sprintf("the trace is of format %d.%d, newer than this mcpx writes (%d.%d): writing it again would lose what %d.%d added; upgrade mcpx to record into it, or record to another file",
		Version, e.Got, Version, Minor, Version, e.Got)
}

// checkRewrite refuses to write again a trace whose header is h when it
// is of a newer minor version than this package writes.
func checkRewrite(h Header) error {
	if h.Minor > Minor {
		return &MinorError{Got: h.Minor}
	}
	return nil
}

// ReadOptions configure reading a trace.
type ReadOptions struct {
	// MaxMessageSize bounds a frame in the trace, in bytes: a line may be
	// that long plus room for the event's JSON around the frame (64 KiB,
	// or the limit itself when that is smaller; a frame near the limit
	// stored as raw text or base64 needs more). Zero means
	// transport.DefaultMaxMessageSize. A longer line is an error matching
	// transport.ErrFrameTooLarge that names its line, detected before
	// more than that was held: a file that is not a trace (/dev/zero)
	// cannot exhaust memory.
	MaxMessageSize int64
	// Sum has Index (and Open) compute TraceFile.Sum, the SHA-256 of the
	// bytes it read.
	Sum bool
}

// lineSlack is the most room a trace line has beyond the maximum message
// size, for the event's JSON around the frame.
const lineSlack = 64 << 10

// Read reads a whole trace with the default options (see
// ReadOptions.Read).
func Read(r io.Reader) (*Trace, error) { return ReadOptions{}.Read(r) }

// ReadFile reads the trace in the named file with the default options.
func ReadFile(name string) (*Trace, error) { return ReadOptions{}.ReadFile(name) }

// Read reads a whole trace. A last line cut short (the recording process
// was killed mid-write) is dropped with a warning in Trace.Warnings; any
// other malformed line, or one longer than the limit, is an error naming
// its line number. Frames are slices of the lines they were read from,
// never copied again.
func (o ReadOptions) Read(r io.Reader) (*Trace, error) {
	t := &Trace{}
	w, err := o.Stream(r, func(h Header) { t.Header = h }, func(e *Event) error {
		t.Events = append(t.Events, *e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.Warnings = w
	return t, nil
}

// Stream reads a trace as Read does, an event at a time, without holding
// them: header is given the header, then fn each event in the order of
// the file (an error fn returns ends the reading with it). It returns
// what Read puts in Trace.Warnings. A program that looks at each event
// once (a timeline printed as it is read) so needs the memory of a line,
// not of the trace, which a long session makes large.
func (o ReadOptions) Stream(r io.Reader, header func(Header), fn func(e *Event) error) (warnings []string, err error) {
	if r == nil {
		return nil, nilArgument("ReadOptions.Stream", "the reader")
	}
	var head Header
	err = o.scan(r, func(h Header, _ int64) {
		head = h
		if header != nil {
			header(h)
		}
	}, func(n int, _ int64, _ []byte, ended bool, e *Event, perr error) error {
		switch {
		case perr == nil:
			return fn(e)
		case !ended:
			warnings = append(warnings, fmt.Sprintf("line %d is cut short (the recording ended abruptly); ignored it", n))
		default:
			return lineError(n, perr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newerMinor(head, warnings), nil
}

// StreamFile is Stream of the named file, which must be a regular file
// (see ReadFile); its errors name the file.
func (o ReadOptions) StreamFile(name string, header func(Header), fn func(e *Event) error) ([]string, error) {
	s, err := o.OpenStream(name)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Stream(header, fn)
}

// TraceStream is a trace file opened to be read an event at a time, from
// its start, as often as asked (see ReadOptions.OpenStream). A program
// that goes over a trace twice (trace show: what its head says and which
// requests are never answered, then its lines) so reads the same file
// each time, and the same events, though the trace is being recorded to
// meanwhile (its second read would have more events, a line cut short
// the first time whole) or replaced by another (a trace written again
// is renamed over the old one): what the first read found then holds for
// the second.
type TraceStream struct {
	o    ReadOptions
	f    *os.File
	name string
	// done says a read went to the end of the trace; events and
	// warnings are what it found, which later reads stop at and return.
	done     bool
	events   int
	warnings []string
}

// OpenStream opens the named trace, which must be a regular file (see
// ReadFile), to be read with TraceStream.Stream; Close closes it.
func (o ReadOptions) OpenStream(name string) (*TraceStream, error) {
	f, err := openTraceFile(name)
	if err != nil {
		return nil, err
	}
	return &TraceStream{o: o, f: f, name: name}, nil
}

// errEnough ends a read of a TraceStream at the events its first read
// gave.
var errEnough = errors.New("the events the first read gave")

// Stream reads the trace from its start as ReadOptions.Stream does,
// stopping, after a first read to the end, at as many events as that
// read gave; its errors name the file, but one fn returns is returned as
// it is.
func (s *TraceStream) Stream(header func(Header), fn func(e *Event) error) ([]string, error) {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	n := 0
	var fnErr error
	w, err := s.o.Stream(s.f, header, func(e *Event) error {
		if s.done && n == s.events {
			return errEnough
		}
		n++
		fnErr = fn(e)
		return fnErr
	})
	switch {
	case err == errEnough:
		return s.warnings, nil
	case err != nil && err == fnErr:
		return nil, err // (fn's own, not the file's)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if !s.done {
		s.done, s.events, s.warnings = true, n, w
	}
	return w, nil
}

// Close closes the file; it may be called more than once.
func (s *TraceStream) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// newerMinor puts first in warnings, for a trace of a newer minor version
// than this package reads, that what that version added is ignored: a
// minor version only adds what an older reader may skip, but a replay or
// a verification may then differ from the newer one's (minor 4's
// redactRules, for one).
func newerMinor(h Header, warnings []string) []string {
	if h.Minor <= Minor {
		return warnings
	}
	w := fmt.Sprintf("the trace is of format %d.%d, newer than this reader's %d.%d: what %d.%d added is ignored",
		Version, h.Minor, Version, Minor, Version, h.Minor)
	return append([]string{w}, warnings...)
}

// parseEvent decodes one event line. The frame is a slice of line when
// the line holds it verbatim (msg), a decoded copy otherwise (raw, b64).
// What does not decode is said in JSON's terms, naming the member (its
// "t" is a string, not a whole number of microseconds), never with Go's
// types.
func parseEvent(line []byte) (Event, error) {
	if res := scanJSON(line, nil); !res.valid {
		return Event{}, notJSON(line)
	}
	var w wireEvent
	var raw, b64 []byte
	line = bytes.TrimSpace(line)
	if line[0] != '{' && !rawjson.IsNull(line) {
		return Event{}, &lineProblem{msg: fmt.Sprintf("is %s, not an object (a trace event)", rawjson.Kind(line))}
	}
	var typeErr error
	rawjson.Members(line, func(name, v []byte) bool {
		key := eventMember(name)
		var err error
		switch key {
		case "msg":
			w.Msg = v
		case "raw":
			if !rawjson.IsNull(v) {
				if !rawjson.IsString(v) {
					err = mistyped(key, v, "a string")
				}
				raw = v
			} else {
				raw = nil
			}
		case "b64":
			if !rawjson.IsNull(v) && !rawjson.IsString(v) {
				err = mistyped(key, v, "a string")
			}
			b64 = v
		case "t":
			w.T, err = wholeMember(key, v, "a whole number of microseconds")
		case "kind":
			err = stringMember(key, v, (*string)(&w.Kind))
		case "dir":
			err = stringMember(key, v, (*string)(&w.Dir))
		case "text":
			err = stringMember(key, v, &w.Text)
		case "route":
			err = objectMember(key, v, &w.Route)
		case "meta":
			err = objectMember(key, v, &w.Meta)
		case "s":
			var s int64
			s, err = wholeMember(key, v, "a session number (a whole number from 1)")
			if err == nil && s < 0 {
				err = fmt.Errorf("its %q is %d, not a session number (a whole number from 1)", key, s)
			}
			w.S = int(s)
		case "prelude":
			switch {
			case rawjson.IsNull(v):
			case string(v) == "true", string(v) == "false":
				w.Prelude = string(v) == "true"
			default:
				err = mistyped(key, v, "true or false")
			}
		case "re":
			if !rawjson.IsNull(v) {
				w.Re = v
			}
		case "retry":
			w.Retry, err = wholeMember(key, v, "a whole number of milliseconds")
		case "session":
			err = objectMember(key, v, &w.Session)
		case "view":
			err = objectMember(key, v, &w.View)
		}
		if err != nil && typeErr == nil {
			typeErr = err
		}
		return true
	})
	if typeErr != nil {
		return Event{}, typeErr
	}
	if w.T > math.MaxInt64/int64(time.Microsecond) || w.T < math.MinInt64/int64(time.Microsecond) {
		return Event{}, fmt.Errorf("its \"t\" is %d, out of range (microseconds, at most %d)", w.T, math.MaxInt64/int64(time.Microsecond))
	}
	e := Event{Time: time.Duration(w.T) * time.Microsecond, Kind: w.Kind, Dir: w.Dir, Text: w.Text, Meta: w.Meta,
		Session: w.S, Re: w.Re}
	switch w.Kind {
	case KindFrame, KindView:
		switch {
		case len(b64) > 2 && !rawjson.IsNull(b64):
			s, _ := rawjson.AppendString(nil, b64)
			d := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(d, s)
			if err != nil {
				var at base64.CorruptInputError
				if errors.As(err, &at) {
					return Event{}, fmt.Errorf("its \"b64\" is not base64 (at byte %d of its value)", int64(at))
				}
				return Event{}, fmt.Errorf("its \"b64\": %w", err)
			}
			e.Data = d[:n]
		case raw != nil:
			e.Data, _ = rawjson.AppendString([]byte{}, raw)
		case len(w.Msg) > 0 && bytes.IndexByte(w.Msg, '\n') >= 0:
			// A stable trace's frame laid out on several lines.
			var c bytes.Buffer
			json.Compact(&c, w.Msg)
			e.Data = c.Bytes()
		case len(w.Msg) > 0:
			e.Data = w.Msg
		default:
			e.Data = []byte{}
		}
		if w.Kind == KindView {
			if e.Dir != HostToView && e.Dir != ViewToHost {
				return Event{}, fmt.Errorf("view message with direction %q (want h2v or v2h)", w.Dir)
			}
			e.View = w.View
			if e.View == nil {
				e.View = &ViewInfo{}
			}
			break
		}
		if e.Dir != ClientToServer && e.Dir != ServerToClient {
			return Event{}, fmt.Errorf("frame with direction %q (want c2s or s2c)", w.Dir)
		}
		if w.Route != nil {
			e.Route = w.Route.route()
		}
		e.Prelude = w.Prelude
	case KindStream:
		if w.Retry > 0 && w.Retry <= math.MaxInt64/int64(time.Millisecond) {
			e.Retry = time.Duration(w.Retry) * time.Millisecond
		}
	case KindSession:
		e.SessionInfo = w.Session
		if e.SessionInfo == nil {
			e.SessionInfo = &SessionInfo{}
		}
	case KindStderr, KindNote, KindHTTP:
	case "":
		return Event{}, errors.New("event without a kind")
	default:
		// Unknown kinds from a compatible writer are kept, not rejected:
		// readers skip what they do not understand.
	}
	return e, nil
}

// lineProblem is what is wrong with a trace line that is no JSON object;
// its message follows the line's number ("trace line 7 is not valid
// JSON (...)"), see lineError. unended marks JSON that does not end on
// the line (see explainLine).
type lineProblem struct {
	msg     string
	unended bool
}

func (e *lineProblem) Error() string { return e.msg }

// lineError names the line n of a trace in the error parsing it.
func lineError(n int, err error) error {
	var lp *lineProblem
	if errors.As(err, &lp) {
		return fmt.Errorf("trace line %d %w", n, err)
	}
	return fmt.Errorf("trace line %d: %w", n, err)
}

// notJSON says where a line that is not valid JSON departs from it: the
// byte (from 1) and what follows, or that it is cut short.
func notJSON(line []byte) error {
	var v any
	err := json.Unmarshal(line, &v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && (se.Error() == "unexpected end of JSON input" || errors.Is(err, io.ErrUnexpectedEOF)):
		return &lineProblem{msg: "is not valid JSON (it is cut short: its JSON does not end)", unended: true}
	case se != nil && se.Offset > 0 && se.Offset <= int64(len(line)):
		at := line[se.Offset-1:]
		return &lineProblem{msg: fmt.Sprintf("is not valid JSON (at byte %d: %q)", se.Offset, rawjson.Shorten(string(at[:min(len(at), 40+utf8.UTFMax)]), 40))}
	}
	return &lineProblem{msg: "is not valid JSON"}
}

// conflictMarker returns the git merge conflict marker line is
// ("<<<<<<< HEAD", "=======", ">>>>>>> branch", and diff3's "|||||||
// base"), or "" when it is none. A trace in a repository meets them when
// two branches recorded it again: a non-stable trace's header differs in
// its creation time, so the conflict is there at once.
func conflictMarker(line []byte) string {
	l := strings.TrimRight(string(line), " \t\r")
	if l == "=======" {
		return l
	}
	for _, m := range []string{"<<<<<<<", ">>>>>>>", "|||||||"} {
		if rest, ok := strings.CutPrefix(l, m); ok && (rest == "" || rest[0] == ' ') {
			return rawjson.Shorten(l, 40)
		}
	}
	return ""
}

// conflictProblem is the lineProblem of a git merge conflict marker.
func conflictProblem(marker string) *lineProblem {
	return &lineProblem{msg: fmt.Sprintf("is a git merge conflict marker (%q): resolve the conflict by keeping one side's trace whole (git checkout --ours or --theirs), or record the trace again", marker)}
}

// unendedProblem is the lineProblem of an event line that ends (a newline
// follows it) before its JSON does, where a formatter breaks lines (see
// laidOut): in a trace that is not stable, whose writer puts each event
// on one line, the event was laid out over several lines.
var unendedProblem = &lineProblem{msg: "is not valid JSON (its JSON goes on over the next lines, but a trace holds each event on one line: the file was reformatted; put each event back on one line, as jq -c . does, or record the trace again)"}

// mistyped reports the member name of an event whose value v is of
// another JSON type than want.
func mistyped(name string, v []byte, want string) error {
	return fmt.Errorf("its %q is %s, not %s", name, rawjson.Kind(v), want)
}

// wholeMember reads the member name, a whole number (want says of what);
// null is 0, as absent.
func wholeMember(name string, v []byte, want string) (int64, error) {
	if rawjson.IsNull(v) {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err == nil {
		return n, nil
	}
	if rawjson.Kind(v) == "a number" {
		// 1.5, 1e3, or too large: the number says it better.
		return 0, fmt.Errorf("its %q is %s, not %s", name, v, want)
	}
	return 0, mistyped(name, v, want)
}

// stringMember reads the member name, a string, into dst; null leaves it.
func stringMember(name string, v []byte, dst *string) error {
	if rawjson.IsNull(v) {
		return nil
	}
	s, ok := rawjson.String(v)
	if !ok {
		return mistyped(name, v, "a string")
	}
	*dst = s
	return nil
}

// objectMember decodes the member name, an object, into dst, saying
// which member of it is mistyped when one is ("meta.httpStatus").
func objectMember(name string, v []byte, dst any) error {
	err := json.Unmarshal(v, dst)
	if err == nil {
		return nil
	}
	if m, ok := rawjson.MistypedOf(err); ok {
		if m.Path != "" {
			name += "." + m.Path
		}
		return fmt.Errorf("its %q is %s, not %s", name, m.Got, m.Want)
	}
	return fmt.Errorf("its %q: %s", name, rawjson.DecodeProblem(err))
}

// eventMember returns the wireEvent member a quoted name stands for.
func eventMember(q []byte) string {
	return rawjson.MatchName(q, "t", "kind", "dir", "msg", "raw", "b64", "text", "route", "meta",
		"s", "prelude", "re", "retry", "session", "view")
}

// ReadFile reads the trace in the named file; errors name the file.
func (o ReadOptions) ReadFile(name string) (*Trace, error) {
	f, err := openTraceFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := o.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// openTraceFile opens the named trace for reading. What is no regular
// file is a *NotRegularError, found before it is opened: opening a named
// pipe waits for a writer (and a directory's read fails with a system
// error naming the read).
func openTraceFile(name string) (*os.File, error) {
	fi, err := os.Stat(name)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		if errors.Is(err, fs.ErrNotExist) {
			// A symbolic link to nothing is there: say what it is.
			if to, lerr := os.Readlink(name); lerr == nil {
				return nil, fmt.Errorf("%s: a symbolic link to %s, which does not exist: %w", name, to, pe.Err)
			}
		}
		// "nope.jsonl: no such file or directory", not "stat nope.jsonl: ...".
		return nil, fmt.Errorf("%s: %w", name, pe.Err)
	} else if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Name: name, Mode: fi.Mode()}
	}
	f, err := os.Open(name)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		// "t.jsonl: permission denied", not "open t.jsonl: ...".
		return nil, fmt.Errorf("%s: %w", name, pe.Err)
	}
	return f, err
}

// NotRegularError reports a trace to read that is no regular file: a
// named pipe (opening one waits for a writer, for ever when there is
// none; standard input through a pipe is one too), a directory, a device.
// A trace is read more than once (indexed, then a session at a time), so
// it must be a file. A directory's error matches syscall.EISDIR.
type NotRegularError struct {
	// Name is the file as it was given; Mode its type.
	Name string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a file"
	switch t := e.Mode.Type(); {
	case t&fs.ModeDir != 0:
		what = "a directory"
	case t&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case t&fs.ModeSocket != 0:
		what = "a socket"
	case t&fs.ModeCharDevice != 0:
		what = "a character device"
	case t&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Sprintf("%s is not a regular file (%s): give a trace file", e.Name, what)
}

// Is makes errors.Is(err, syscall.EISDIR) true for a directory.
func (e *NotRegularError) Is(target error) bool { return target == syscall.EISDIR && e.Mode.IsDir() }

// WriteTo writes the whole trace to w (header, then events).
func (t *Trace) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	tw, err := newWriterAs(cw, t.Header)
	if err != nil {
		return cw.n, err
	}
	for _, e := range t.Events {
		if err := tw.Write(e); err != nil {
			return cw.n, err
		}
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
