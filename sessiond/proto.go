package sessiond

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// protocolVersion is the version of the socket protocol; a client and a
// daemon of different mcpx builds that disagree on it refuse each other,
// but for a status and a stop, whose hello and reply (OK, Status with its
// Name, PID and Target) keep their shape in every version.
const protocolVersion = 1

// Operations a hello names.
const (
	opAttach = "attach" // carry one command's MCP traffic
	opStatus = "status" // describe the session
	opKept   = "kept"   // hand over the notifications kept meanwhile
	opStop   = "stop"   // end the session (answered at once, and again once it has ended)
)

// hello is the first line a client sends.
type hello struct {
	Version int    `json:"mcpxSession"`
	Op      string `json:"op"`
	// Label says what the command runs, for the daemon's log.
	Label string `json:"label,omitempty"`
	// Dropped, in an attach, asks for envelope.Dropped lines: a command
	// of an older build, which does not ask, would take a line without a
	// frame for a protocol error (a daemon of an older build ignores the
	// field and sends none).
	Dropped bool `json:"dropped,omitempty"`
	// Notes, in an attach, asks for envelope.Note lines, for the same
	// reason.
	Notes bool `json:"notes,omitempty"`
	// Secrets, in an attach, asks for envelope.Secret lines, for the
	// same reason.
	Secrets bool `json:"secrets,omitempty"`
}

// reply is the daemon's first line.
type reply struct {
	OK     bool    `json:"ok"`
	Error  string  `json:"error,omitempty"`
	Status *Status `json:"status,omitempty"`
	Kept   []Kept  `json:"kept,omitempty"`
	// Secrets, in an attach's reply, are ServeOptions.Secrets' (a
	// command of an older build ignores them).
	Secrets []string `json:"secrets,omitempty"`
}

// envelope is one line after an attach: a JSON-RPC frame, or (from the
// daemon) the reason the attachment ends.
type envelope struct {
	Frame  json.RawMessage `json:"frame,omitempty"`
	Closed string          `json:"closed,omitempty"`
	// TooLarge, from the daemon, marks Frame as the error answering a
	// command's request whose answer was longer than the session's
	// maximum message size, TooLarge bytes: the command fails the request
	// as a connection of its own would (AnswerTooLargeError). A command
	// of an older build reads the frame, which says so in words.
	TooLarge int64 `json:"tooLarge,omitempty"`
	// Failed, from the daemon, marks Frame as the error answering a
	// command's request that the session's connection to its server
	// failed to carry (over HTTP: it could not connect, the response
	// stream was lost; failedAuth: the server refused its credentials),
	// not an answer of the server's: the command fails the request as a
	// connection of its own would (ConnectionFailedError). A command of
	// an older build reads the frame, which says so in words.
	Failed string `json:"failed,omitempty"`
	// Dropped, from the daemon and without a frame, is the text of a
	// transport.EventDropped its connection to the server reported while
	// the command was attached (a notification over the session's
	// maximum message size, dropped unread): the command tells the person
	// as it would of its own connection's. Sent only to a command whose
	// hello asked for it (hello.Dropped).
	Dropped string `json:"dropped,omitempty"`
	// Note, from the daemon and without a frame, is what the held
	// session did on its own that the commands attached at that moment
	// are told, as a connection of their own would tell them (the server
	// ended the session, and the held session started a new one: see
	// Daemon.Tell). Sent only to a command whose hello asked for it
	// (hello.Notes).
	Note string `json:"note,omitempty"`
	// Secret, from the daemon and without a frame, is a credential the
	// session's connection learned while the command was attached (an
	// access token OAuth refreshed), sent before the connection presents
	// it, so before anything of the server's that may echo it: the
	// command redacts it as it does the reply's Secrets. Sent only to a
	// command whose hello asked for it (hello.Secrets).
	Secret string `json:"secret,omitempty"`
}

// The kinds of envelope.Failed.
const (
	failedConnection = "connection"
	failedAuth       = "auth"
)

// Status describes an open session.
type Status struct {
	Name string `json:"name"`
	// PID is the session process's id.
	PID int `json:"pid"`
	// Server is the server's name and version as it introduced itself.
	Server string `json:"server"`
	// Target says what the session is connected to ("stdio: node
	// server.js", "streamable-http: https://…").
	Target string `json:"target"`
	// Era is "legacy" (initialize handshake) or "modern" (2026-07-28).
	Era             string    `json:"era"`
	ProtocolVersion string    `json:"protocolVersion"`
	Started         time.Time `json:"started"`
	// LastUsed is when a command last attached or detached.
	LastUsed time.Time `json:"lastUsed"`
	// IdleTimeoutMs is how long the session stays open with no command
	// attached; 0 means forever.
	IdleTimeoutMs int64 `json:"idleTimeoutMs"`
	// Commands is how many commands are attached now.
	Commands int `json:"commands"`
	// Kept is how many notifications are kept for mcpx @NAME watch, and
	// Dropped how many the bounded ring let go.
	Kept    int `json:"kept"`
	Dropped int `json:"dropped"`
	// MaxMessageSize is the longest message the session takes from a
	// command (set when it opened); 0 from a session of an older build.
	MaxMessageSize int64 `json:"maxMessageSize,omitempty"`
	// Extensions are the client extensions the session declared when it
	// opened (io.modelcontextprotocol/ui: MCP Apps).
	Extensions []string `json:"extensions,omitempty"`
	// Opening is true while mcpx connect is still opening the session
	// (starting its server, authorizing, initializing): commands cannot
	// attach yet.
	Opening bool `json:"opening,omitempty"`
	// Host is what the command that opened the session said of the
	// application whose entry configured its server (ServeOptions.Host),
	// for the commands that attach; absent otherwise.
	Host   json.RawMessage `json:"host,omitempty"`
	Socket string          `json:"socket"`
	Log    string          `json:"log,omitempty"`
}

// Kept is one thing that happened while no command was attached: a
// notification from the server, or a note about what the session did on
// its own (a server request it declined).
type Kept struct {
	Time time.Time `json:"time"`
	// Message is the notification as the server sent it (compacted).
	Message json.RawMessage `json:"message,omitempty"`
	Note    string          `json:"note,omitempty"`
}

// writeJSON sends v as one line.
func writeJSON(ctx context.Context, c transport.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Write(ctx, transport.Frame{Data: b})
}

// readJSON reads one line into v.
func readJSON(ctx context.Context, c transport.Conn, v any) error {
	f, err := c.Read(ctx)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(f.Data, v); err != nil {
		return fmt.Errorf("%w: a line that is not what the session protocol sends: %w", ErrProtocol, err)
	}
	return nil
}

// ErrProtocol is matched by errors about lines that break the session
// protocol.
var ErrProtocol = errors.New("session protocol error")

// envelopeOverhead is what an envelope adds to the frame it carries
// ({"frame":…}): the lines on the socket are bounded by the maximum
// message size plus it, so that a message of that size goes through.
const envelopeOverhead = len(`{"frame":}`)

// lineLimit is the longest line on the socket that carries a message of
// at most maxMessageSize bytes (zero: transport.DefaultMaxMessageSize).
func lineLimit(maxMessageSize int64) int64 {
	if maxMessageSize <= 0 {
		maxMessageSize = transport.DefaultMaxMessageSize
	}
	return maxMessageSize + int64(envelopeOverhead)
}

// frameLine encodes frame (one JSON value) as an envelope line. A frame
// must be valid JSON; one with line breaks (a pretty-printed HTTP body) is
// compacted, since lines delimit envelopes.
func frameLine(frame []byte) ([]byte, error) {
	if bytes.ContainsAny(frame, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, frame); err != nil {
			return nil, err
		}
		frame = b.Bytes()
	} else if !json.Valid(frame) {
		return nil, fmt.Errorf("%w: a frame that is not JSON", ErrProtocol)
	}
	out := make([]byte, 0, len(frame)+10)
	out = append(out, `{"frame":`...)
	out = append(out, frame...)
	return append(out, '}'), nil
}

// parseEnvelope reads an envelope line. Its frame is a slice of line,
// not a copy: json.Unmarshal copied a large frame, checking it on the way,
// and the frame is checked where it is decoded anyway (jsonrpc.DecodeFrame).
// A line that is not a JSON object, or whose members have the wrong
// types, is an error.
func parseEnvelope(line []byte) (envelope, error) {
	var env envelope
	var f rawjson.Fields
	bad := false
	ok := f.Object(line, []string{"frame", "closed", "tooLarge", "dropped", "failed", "note", "secret"}, func(name string, v []byte) {
		switch name {
		case "frame":
			switch {
			case len(v) > 0 && (v[0] == '{' || v[0] == '['):
				env.Frame = v
			case !rawjson.IsNull(v):
				bad = true // neither a message nor a batch
			}
		case "closed":
			env.Closed = f.Str(v)
		case "dropped":
			env.Dropped = f.Str(v)
		case "failed":
			env.Failed = f.Str(v)
		case "note":
			env.Note = f.Str(v)
		case "secret":
			env.Secret = f.Str(v)
		case "tooLarge":
			if rawjson.IsNull(v) {
				return
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			bad = bad || err != nil
			env.TooLarge = n
		}
	})
	if !ok || bad || !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
		return envelope{}, fmt.Errorf("%w: a line that is not an envelope", ErrProtocol)
	}
	return env, nil
}

// responseLine is frameLine(jsonrpc.EncodeResponse(id, result, nil))
// built in one buffer of about the result's size: a large result held by
// the session cost it once more for the response and again for its line.
func responseLine(id jsonrpc.ID, result json.RawMessage) ([]byte, error) {
	if bytes.ContainsAny(result, "\r\n") || !json.Valid(result) {
		return frameLine(jsonrpc.EncodeResponse(id, result, nil))
	}
	out := make([]byte, 0, len(result)+len(id.String())+64)
	out = append(out, `{"frame":`...)
	out = jsonrpc.AppendResponse(out, id, result, nil)
	return append(out, '}'), nil
}

// ring keeps the newest notifications within a count and a byte budget.
type ring struct {
	items    []Kept
	methods  map[string]bool // kept since the last take, for firstOf
	bytes    int
	maxItems int
	maxBytes int
	dropped  int       // ever
	lost     int       // since the last take
	lostAt   time.Time // the first of those went
}

// add keeps k, dropping the oldest items beyond the bounds (or k itself,
// when it is over the byte budget on its own), and reports whether these
// are the first dropped since the last take.
func (r *ring) add(k Kept) (firstLoss bool) {
	before := r.lost
	defer func() {
		if firstLoss = before == 0 && r.lost > 0; firstLoss {
			r.lostAt = k.Time
		}
	}()
	size := len(k.Message) + len(k.Note)
	if size > r.maxBytes {
		r.dropped++
		r.lost++
		return
	}
	r.items = append(r.items, k)
	r.bytes += size
	for len(r.items) > r.maxItems || r.bytes > r.maxBytes {
		r.bytes -= len(r.items[0].Message) + len(r.items[0].Note)
		r.items[0] = Kept{}
		r.items = r.items[1:]
		r.dropped++
		r.lost++
	}
	return
}

// take returns the kept items and empties the ring; lost is how many were
// dropped since the last take, the first at lostAt.
func (r *ring) take() (items []Kept, lost int, lostAt time.Time) {
	items, lost, lostAt = r.items, r.lost, r.lostAt
	r.items, r.bytes, r.methods, r.lost = nil, 0, nil, 0
	return items, lost, lostAt
}

// firstOf reports whether method was not kept since the last take (for a
// note in the log; a bounded number of methods is remembered).
func (r *ring) firstOf(method string) bool {
	if r.methods[method] || len(r.methods) >= 32 {
		return false
	}
	if r.methods == nil {
		r.methods = map[string]bool{}
	}
	r.methods[method] = true
	return true
}
