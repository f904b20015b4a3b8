package record

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// ErrMismatch is matched by every error that reports live traffic
// departing from a recording: a strict replay's deviation, a failed
// verification.
var ErrMismatch = errors.New("traffic does not match the recording")

// ReplayOptions configure a Replayer.
type ReplayOptions struct {
	// Ignore lists what does not count when a live message is matched
	// with the recording: JSONPath expressions evaluated against each
	// whole message (e.g. $.params.arguments.timestamp), each perhaps
	// scoped to one method as METHOD:JSONPATH (see ParseIgnore). The
	// trace header's ignores apply too. A request's params._meta never
	// counts (progress tokens, the protocol version, client capabilities
	// and identity that every 2026-07-28-era request carries), nor do the
	// params of initialize and server/discover: any conforming client
	// gets the recorded answers. Absent params are the same as {}.
	Ignore []string
	// Normalize lists normalizers applied to the string values of live and
	// recorded messages before they are matched, in addition to the trace
	// header's (see Normalizer).
	Normalize []Normalizer
	// Strict makes a departure from the recording an error: a request
	// sent before one whose answer the recorded client had when it sent
	// it (causal order; requests that were in flight together may come in
	// any order), repeated or unrecorded messages, answers that differ,
	// requests the client never sent. Differences a conforming client may
	// have (identity, capabilities, the protocol version it offers) are
	// reported, not errors.
	Strict bool
	// OnDeviation is told about each departure from the recording (in
	// strict mode too, before Serve returns it). Without Strict, only
	// departures the replay could not paper over are reported.
	OnDeviation func(Deviation)
	// OnStderr receives the stderr lines the recorded server wrote, at the
	// points where it wrote them. Nil drops them.
	OnStderr func(line string)
	// MaxMessageSize bounds the body of a request to Handler, in bytes;
	// zero means transport.DefaultMaxMessageSize. A longer body is
	// answered with 413 Content Too Large. (Over a transport.Conn, the
	// connection has its own limit.)
	MaxMessageSize int64
	// Session pins the session of the trace every connection is served
	// (from 1); zero lets each new connection be served the session that
	// matches it (see Replayer).
	Session int
	// Pace, when positive, replays at the recorded speed: each thing the
	// server did comes as long after the client message that caused it
	// as it did in the recording, times Pace (1: as recorded, 0.5: twice
	// as fast, 2: half as fast; ParsePace reads `mcpx replay --pace`).
	// Zero answers at once, and so does a trace without timing (see
	// OnWarning). Serve and Handler say how each paces.
	Pace float64
	// Faults make the replayed server misbehave at chosen requests (see
	// Fault), for testing how a client copes.
	Faults []Fault
	// OnWarning is told what the replay cannot do as asked (pace a trace
	// recorded without timing). Nil drops it.
	OnWarning func(string)
	// OnServerEnd is told, before Serve closes the connection where the
	// recorded server went away, how it went (its exit status as the trace
	// notes it), so that a replay standing in for a server process can end
	// as the recorded one did (`mcpx replay` exits with its exit code).
	OnServerEnd func(ServerEnd)
}

// Deviation is a departure of the live client from the recording.
type Deviation struct {
	// Message says what happened and what the recording expected.
	Message string
	// Failure says that strict mode fails on it. A difference any
	// conforming client may have (its identity, capabilities, the
	// protocol version it offers) is reported in strict mode, but is no
	// failure: a strict replay serves every client.
	Failure bool
}

// DeviationError is returned by a strict replay on the first deviation.
type DeviationError struct{ Deviation }

func (e *DeviationError) Error() string { return "replay: " + e.Message }

// Is makes errors.Is(err, ErrMismatch) true.
func (e *DeviationError) Is(target error) bool { return target == ErrMismatch }

// Replayer serves the server side of a recording: each new client
// connection is served one session of the trace, the one that matches it
// (ReplayOptions.Session pins one): sessions not served yet first, in
// order, and among them those whose recorded client sent what the live
// client sends (the choice stays open until the client sends something
// only some sessions hold).
//
// Within a session, messages are paired by causality, not by position:
// each request of the live client is answered with the recorded response
// to the request with the same method and params (ids do not matter; the
// response gets the live id), and the notifications and server-to-client
// requests the server sent while handling that request come with it (tied
// to it by their progress token, the request id they name, the SSE stream
// that carried them, or else their place between the request and its
// response). Pipelined and concurrent requests, in any order, each get
// their own answers. What the server sent after the client answered one of
// its requests comes when the live client answers it; what it sent while
// no request was in flight, once the live client has also sent the
// requests and answers the recorded one had sent by then. The initialize
// handshake is replayed like any other exchange, and so is the
// server/discover of the stateless 2026-07-28 era (answered from the
// recording even when its params differ, or made up from the recording
// when it has none). A request the recording has no answer for gets a
// JSON-RPC error that says what the recording expected.
//
// A Replayer reads the trace a session at a time (see NewReplayerSource):
// it holds the sessions being served, not the whole trace.
type Replayer struct {
	opts   ReplayOptions
	src    SessionSource
	header Header
	ignore []Ignore
	norm   *Normalizers
	red    *Redactor
	sigs   []*sessionSig // one per session, in order
	// modern and legacy say some session shows the stateless 2026-07-28
	// era, or the handshake.
	modern, legacy bool
	// xheaders holds the x-mcp-header annotations of the tools the
	// recorded server listed in any session, by tool name.
	xheaders map[string][]mcp.HeaderParam

	mu      sync.Mutex
	scripts map[int]weak.Pointer[script]
	served  map[int]bool

	faults  *faultCounter // the requests received, for ReplayOptions.Faults
	untimed sync.Once     // the warning that pacing is not possible
}

// sessionSig is what a Replayer keeps of a session it is not serving:
// enough to choose the session for a connection.
type sessionSig struct {
	n              int
	keys           map[uint64]bool // hashes of the keys of the client's requests and notifications
	methods        map[string]bool // the methods of the client's requests
	modern, legacy bool
	first          string // the method of the first request
}

// NewReplayer prepares tr for replay.
func NewReplayer(tr *Trace, opts ReplayOptions) (*Replayer, error) {
	return NewReplayerSource(tr, opts)
}

// NewReplayerSource prepares the trace src gives for replay: a Trace in
// memory, or a TraceFile, which it then reads a session at a time (each
// session once now, to learn what it holds, and again when a connection is
// served it) and holds where each recorded message is rather than the
// message, reading it again whenever it is sent, compared or shown: a large
// trace costs what matching needs of a session, not its messages. src must
// stay readable and unchanged while the Replayer is used (a TraceFile's
// io.ReaderAt answering ReadAt calls made at once, as an *os.File does); a
// change found in what is read again ends the replay with an error.
func NewReplayerSource(src SessionSource, opts ReplayOptions) (*Replayer, error) {
	if nilSource(src) {
		return nil, nilArgument("NewReplayer", "the trace")
	}
	h := src.TraceHeader()
	ignore, err := ParseIgnores(append(append([]string{"$.params._meta"}, h.Ignore...), opts.Ignore...))
	if err != nil {
		return nil, err
	}
	norm, err := CompileNormalizers(h.Normalize, nil)
	if err != nil {
		return nil, fmt.Errorf("the trace's normalizers: %w", err)
	}
	if len(opts.Normalize) > 0 {
		if norm, err = CompileNormalizers(append(append([]Normalizer(nil), h.Normalize...), opts.Normalize...), nil); err != nil {
			return nil, err
		}
	}
	red, err := NewRedactor(h.RedactOptions())
	if err != nil {
		return nil, fmt.Errorf("the trace's redaction: %w", err)
	}
	r := &Replayer{opts: opts, src: src, header: h, ignore: ignore, norm: norm, red: red,
		scripts: map[int]weak.Pointer[script]{}, served: map[int]bool{}, xheaders: map[string][]mcp.HeaderParam{},
		faults: &faultCounter{byMethod: map[string]int{}}}
	for _, n := range src.SessionNumbers() {
		if opts.Session != 0 && n != opts.Session {
			continue
		}
		sc, err := r.script(n)
		if err != nil {
			return nil, err
		}
		sig := &sessionSig{n: n, keys: map[uint64]bool{}, methods: map[string]bool{}, modern: sc.modern, legacy: sc.legacy}
		for _, st := range sc.steps {
			if k := st.kind; k == jsonrpc.KindRequest || k == jsonrpc.KindNotification {
				sig.keys[binary.BigEndian.Uint64(st.key[:])] = true
				if k == jsonrpc.KindRequest {
					sig.methods[st.method] = true
					if sig.first == "" {
						sig.first = st.method
					}
				}
			}
		}
		r.modern = r.modern || sc.modern
		r.legacy = r.legacy || sc.legacy
		for name, params := range sc.xheaders {
			r.xheaders[name] = params
		}
		r.sigs = append(r.sigs, sig)
	}
	if len(r.sigs) == 0 {
		return nil, &matchingError{fmt.Sprintf("the trace has no session %d (it has %d, numbered from 1)", opts.Session, len(src.SessionNumbers())), ErrNotRecorded}
	}
	return r, nil
}

// keyHash is what a sessionSig keeps of a matching key: the first bytes
// of its digest.
func keyHash(key string) uint64 {
	d := digestKey(key)
	return binary.BigEndian.Uint64(d[:])
}

// keyDigest stands for a matching key (see script.keyOf): a script holds
// the SHA-256 of each recorded message's key, not the key, which is about
// as long as the message.
type keyDigest [sha256.Size]byte

func digestKey(key string) keyDigest { return sha256.Sum256([]byte(key)) }

// script returns the prepared session n, reading it again when no
// connection holds it any more.
func (r *Replayer) script(n int) (*script, error) {
	r.mu.Lock()
	if wp, ok := r.scripts[n]; ok {
		if sc := wp.Value(); sc != nil {
			r.mu.Unlock()
			return sc, nil
		}
	}
	r.mu.Unlock()
	var sc *script
	if f, ok := r.src.(*TraceFile); ok {
		// Read a line at a time: the script holds where the recorded
		// server's frames are, and reads each again when it is sent.
		i := slices.IndexFunc(f.Index, func(x SessionIndex) bool { return x.N == n })
		if i < 0 {
			return nil, fmt.Errorf("the trace has no session %d", n)
		}
		var err error
		if sc, err = buildScriptFrom(n, f.Index[i].Info, f.placedSession(f.Index[i]), f, r.header.Minor >= minorNotesEnds, r.ignore, r.norm, r.red); err != nil {
			return nil, fmt.Errorf("reading session %d of the trace: %w", n, err)
		}
		if sc.large {
			// The lines read to build it are garbage, but the heap's
			// goal was set while one of them was live: reading it again
			// to send it would take as much more (a 100 MiB frame
			// replayed at 2.2 times its size, not 1.2), as Index hands
			// such memory back (see largeLine).
			debug.FreeOSMemory()
		}
	} else {
		sess, err := r.src.ReadSession(n)
		if err != nil {
			return nil, fmt.Errorf("reading session %d of the trace: %w", n, err)
		}
		if sess == nil {
			return nil, fmt.Errorf("the trace has no session %d", n)
		}
		sc = buildScript(sess, r.header.Minor >= minorNotesEnds, r.ignore, r.norm, r.red)
	}
	r.mu.Lock()
	r.scripts[n] = weak.Make(sc)
	r.mu.Unlock()
	return sc, nil
}

// output is something the replayed server does: send a frame, or write a
// line on its stderr, or refuse a request over HTTP.
type output struct {
	frame []byte
	// line, when frame is nil, is where the frame is in the trace file
	// (the member-th message of it, when batch is set): script.frameOf
	// reads it again.
	line     lineRef
	stderr   string
	isStderr bool
	// status is the HTTP status a recorded JSON answer came with, when it
	// was an error status (a 2026-07-28 server answers an unsupported
	// version or header mismatch with 400, an unknown method with 404).
	status int
	// refused, set alone, is an HTTP error status the request got instead
	// of an answer, with the body's excerpt and content type.
	refused     int
	refusedText string
	refusedType string
	// dropped, set alone, is why the request's POST failed in the
	// recording (the text of the sendFailedNote: the server closed the
	// connection without answering, say): the replay fails it too.
	dropped string
	// root is the step of the client request this output belongs to
	// (its response, its progress, its server-to-client requests), -1
	// when none.
	root int
	// response marks the response to root's request.
	response bool
	// get marks a frame the server sent on the session's GET stream.
	get bool
	// end, set alone, is where the recorded server closed the connection
	// (a ServerEndedNote, or the end of an older trace that did not note
	// it; see buildScript): the replay closes it too. exit says how.
	end  bool
	exit *ServerEnd
	// after is how long after the client message it follows (or, in the
	// prelude, the session's start) the recorded server did it.
	after time.Duration
	// unsolicited marks what the server did while no request of the
	// client's was in flight (a timer's notification, a request of its
	// own, a stderr line): it comes once the live client has sent what
	// the recorded one had sent by then (see step.from).
	unsolicited bool
	// batch, when not zero, numbers the batch the server sent this
	// message in (from 1), member its place there: a batch answering
	// several requests is replayed as one output per member, each with
	// its request, and joined again where the live client's frame holds
	// them together (see replaySession.handle).
	batch, member int
}

// step is one message the recorded client sent, with what the server did
// because of it (until the client's next message in the same causal
// chain).
type step struct {
	// msg is the message, held when the script has no trace file to
	// read it again from; else line is where its frame is in the file
	// (member its place in a batch), read again by script.msgOf. kind,
	// method and id are what matching uses of it.
	msg    *jsonrpc.Message
	line   lineRef
	member int
	kind   jsonrpc.Kind
	method string
	id     jsonrpc.ID
	key    keyDigest
	follow []output
	// modern marks a message of the stateless 2026-07-28 era: recorded
	// with a route, or declaring such a version in its _meta.
	modern bool
	// root is the request this message belongs to: itself for a request,
	// the request a client's answer to a server-to-client request or a
	// cancellation is about; -1 for other notifications.
	root int
	// deps counts the requests whose answers the recorded client had when
	// it sent this message (the first deps of script.completed).
	deps int
	// t is when the recorded client sent it (the event's offset).
	t time.Duration
	// from is the first step the recorded client could have sent after
	// this one, were it as fast as it liked: the steps after the server
	// message that let it send this one (the server request it answers,
	// the latest answer it had). A live client may send this message
	// before the steps from..i-1, which were concurrent with it; what
	// the server sent unprompted after it waits for those too (see
	// replaySession.emit).
	from int
}

// script is a session prepared for replay. It is read-only once built;
// each connection keeps its own progress through it.
type script struct {
	n int
	// file is the trace the frames of outputs are read from again (see
	// output.line); nil when they are held.
	file *TraceFile
	// large: a line of largeLine or more was read to build it (see
	// Replayer.script).
	large   bool
	prelude []output // what the server did before the client said anything
	steps   []step
	byKey   map[keyDigest][]int
	// requests lists the steps that are requests, in order, and
	// requestsOf those of each method (see replaySession.unmatched).
	requests   []int
	requestsOf map[string][]int
	ignore     []Ignore
	norm       *Normalizers
	// answerNorm compares the live client's answers with the recorded
	// ones: norm, and timestamps (see replaySession.handleMsg).
	answerNorm *Normalizers
	red        *Redactor
	// completed lists the requests in the order their answers were
	// recorded (causal order for strict mode).
	completed []int
	// modern says the recorded client spoke the stateless 2026-07-28 era
	// (a request's _meta declares such a version); legacy that it sent
	// initialize. A session can show both (a probe, then a handshake).
	modern, legacy bool
	// xheaders holds the x-mcp-header annotations of the tools the
	// recorded server listed, by tool name.
	xheaders map[string][]mcp.HeaderParam
	// discover answers server/discover when the recording has none.
	discover []byte
	// afterLeft holds the ids of the requests the server sent after the
	// recorded client had left (a proxy forwards what the server says
	// after the host closed its input), which it could not answer.
	afterLeft map[string]bool
	// timed says the recording has timing (events with offsets), which
	// pacing needs.
	timed bool
	// batches counts the server's batches split into members (output.batch).
	batches int
}

// key returns the matching key of a live or recorded message.
func (sc *script) keyOf(m *jsonrpc.Message) string {
	if m.Kind() == jsonrpc.KindRequest && (m.Method == mcp.MethodInitialize || m.Method == mcp.MethodDiscover) {
		return "request:" + m.Method // any conforming client's
	}
	return canonicalWith(m, pathsFor(sc.ignore, m.Method), sc.norm)
}

// buildScript prepares a session: it splits the recorded client's
// messages into steps and ties each thing the server did to the request
// it belongs to (see Replayer). notesEnds tells a trace whose recorder
// noted how each session ended (see minorNotesEnds).
func buildScript(sess *Session, notesEnds bool, ignore []Ignore, norm *Normalizers, red *Redactor) *script {
	events := func(yield func(placedEvent, error) bool) {
		for _, e := range sess.Events {
			if !yield(placedEvent{Event: e}, nil) {
				return
			}
		}
	}
	sc, _ := buildScriptFrom(sess.N, sess.Info, events, nil, notesEnds, ignore, norm, red)
	return sc
}

// buildScriptFrom is buildScript of the events of session n, which it
// reads twice. Of a trace file (file), the script holds where the
// server's frames are rather than the frames (see output.line).
func buildScriptFrom(n int, info SessionInfo, events iter.Seq2[placedEvent, error], file *TraceFile, notesEnds bool, ignore []Ignore, norm *Normalizers, red *Redactor) (*script, error) {
	sc := &script{n: n, file: file, byKey: map[keyDigest][]int{}, requestsOf: map[string][]int{}, ignore: ignore, norm: norm, answerNorm: norm.withTimestamps(), red: red, xheaders: map[string][]mcp.HeaderParam{},
		afterLeft: map[string]bool{}}
	toolLists := map[string]bool{} // ids of recorded tools/list requests awaiting a response
	methods := map[string]string{} // the methods of the steps, each held once
	var versions []string          // the protocol versions the client's requests declare, in order

	// Which request each SSE stream answers: the stream that carried its
	// response (so notifications before the response belong to it too).
	streamOf := map[string]string{} // stream id -> response id key
	for e, err := range events {
		if err != nil {
			return nil, err
		}
		sc.large = sc.large || e.at.n >= int64(largeLine)
		if e.Kind == KindFrame && e.Dir == ServerToClient && e.Meta != nil && e.Meta.StreamID != "" && e.Meta.HTTPMethod != "GET" {
			msgs, _ := parseFrame(e.Data)
			for _, m := range msgs {
				if m.Kind() == jsonrpc.KindResponse {
					if _, ok := streamOf[e.Meta.StreamID]; !ok {
						streamOf[e.Meta.StreamID] = m.ID.Key()
					}
				}
			}
		}
	}
	if sc.large {
		// The long line this pass read is garbage, but the heap's goal
		// was set while it was live: the next pass would read it again
		// beside it (a 100 MiB frame replayed at 2.2 times its size, not
		// 1.2). It is handed back first, as Index does (see largeLine).
		debug.FreeOSMemory()
	}

	open := map[string]int{}    // request id key -> its step, while in flight
	var openOrder []int         // steps of the requests in flight, in the order sent
	tokens := map[string]int{}  // progress token key -> the request's step
	s2c := map[string]int{}     // server request id key -> the root it belongs to
	latest := map[int]int{}     // root -> the latest step of its chain
	last := -1                  // the latest step
	sinceClient := false        // a server frame came since the last client frame
	var answeredAt []int        // per sc.completed, the steps recorded by then
	askedAt := map[string]int{} // server request id key -> the steps recorded by then
	closeReq := func(i int) {
		for k, j := range open {
			if j == i {
				delete(open, k)
			}
		}
		if x := slices.Index(openOrder, i); x >= 0 {
			openOrder = slices.Delete(openOrder, x, x+1)
		}
		sc.completed = append(sc.completed, i)
		answeredAt = append(answeredAt, len(sc.steps))
	}
	var now, start time.Duration // the event's offset, the session's first
	var stderrTail []string      // the server's last stderr lines
	ended, left := false, false  // the trace notes the server's end, the client's
	var lastFrame []int          // the steps of the client's latest frame
	attach := func(root int, o output) {
		o.root = root
		at := last
		if root >= 0 {
			at = latest[root]
		}
		if at >= 0 {
			o.after = max(now-sc.steps[at].t, 0)
			sc.steps[at].follow = append(sc.steps[at].follow, o)
		} else {
			o.after = max(now-start, 0)
			sc.prelude = append(sc.prelude, o)
		}
	}
	// inFlight is the request a message of the server belongs to when
	// nothing in it says which: the latest request still in flight, else
	// the latest message's.
	inFlight := func() int {
		if n := len(openOrder); n > 0 {
			return openOrder[n-1]
		}
		if last >= 0 {
			return sc.steps[last].root
		}
		return -1
	}
	first := true
	for pe, err := range events {
		if err != nil {
			return nil, err
		}
		e := pe.Event
		if first {
			start, first = e.Time, false
		}
		now = e.Time
		sc.timed = sc.timed || e.Time != start
		switch {
		case e.Kind == KindStderr:
			attach(-1, output{stderr: e.Text, isStderr: true, unsolicited: len(openOrder) == 0})
			if stderrTail = append(stderrTail, e.Text); len(stderrTail) > maxStderrTail {
				stderrTail = stderrTail[1:]
			}
		case e.Kind == KindNote && strings.HasPrefix(e.Text, ServerEndedNote):
			// The server went away while handling the latest request.
			ended = true
			attach(inFlight(), output{end: true, exit: &ServerEnd{Status: endStatus(e.Text), LastStderr: slices.Clone(stderrTail)}, unsolicited: len(openOrder) == 0})
		case e.Kind == KindNote && strings.HasPrefix(e.Text, serverTooLargeNote):
			// The stdio proxy ended the session on a line of the server's
			// over the limit: its host saw the server's output close.
			ended = true
			status, _, _ := strings.Cut(e.Text, ";")
			attach(inFlight(), output{end: true, exit: &ServerEnd{Status: status, LastStderr: slices.Clone(stderrTail)}, unsolicited: len(openOrder) == 0})
		case e.Kind == KindNote && (strings.HasPrefix(e.Text, ClientEndedNote) ||
			strings.HasPrefix(e.Text, hostClosedNote) || strings.HasPrefix(e.Text, hostGoneNote) ||
			strings.HasPrefix(e.Text, proxyStoppedNote) || strings.HasPrefix(e.Text, hostTooLargeNote)):
			left = true
		case e.Kind == KindNote && strings.HasPrefix(e.Text, sendFailedNote) && info.Transport != "stdio":
			// The POST of a request failed: its client got an error, not
			// an answer, and stopped waiting. The note names the request
			// (re); one of an older trace does not, and is the latest
			// client frame's.
			why := strings.TrimPrefix(strings.TrimPrefix(e.Text, sendFailedNote), ": ")
			if len(e.Re) > 0 {
				if i, ok := open[idKey(e.Re)]; ok && sc.steps[i].kind == jsonrpc.KindRequest {
					attach(i, output{dropped: why})
					closeReq(i)
				}
				break
			}
			for _, i := range lastFrame {
				if _, ok := open[sc.steps[i].id.Key()]; ok && sc.steps[i].kind == jsonrpc.KindRequest {
					attach(i, output{dropped: why})
					closeReq(i)
				}
			}
		case e.Kind == KindHTTP && len(e.Re) > 0:
			if i, ok := open[idKey(e.Re)]; ok && e.Meta != nil && e.Meta.HTTPStatus >= 400 {
				attach(i, output{refused: e.Meta.HTTPStatus, refusedText: e.Text, refusedType: e.Meta.ContentType})
				closeReq(i)
			}
		case e.Kind == KindHTTP && !sinceClient && last >= 0 && e.Meta != nil && e.Meta.HTTPMethod == "POST" && e.Meta.HTTPStatus >= 400 &&
			!strings.HasPrefix(e.Meta.ContentType, "application/json"):
			// An older trace: the POST of the last client frame was
			// refused without an answer.
			if i := sc.steps[last].root; i >= 0 && sc.steps[i].kind == jsonrpc.KindRequest {
				if _, ok := open[sc.steps[i].id.Key()]; ok {
					attach(i, output{refused: e.Meta.HTTPStatus, refusedText: e.Text, refusedType: e.Meta.ContentType})
					closeReq(i)
				}
			}
			sinceClient = true
		case e.Kind != KindFrame:
		case e.Dir == ServerToClient:
			fresh := !sinceClient
			sinceClient = true
			o := output{frame: e.Data}
			if file != nil {
				o.frame, o.line = nil, pe.at
			}
			if e.Meta != nil && e.Meta.HTTPStatus >= 400 {
				o.status = e.Meta.HTTPStatus
			}
			get := e.Meta != nil && e.Meta.HTTPMethod == "GET"
			msgs, batch := parseFrame(e.Data)
			if i := nullIDRefusal(e, msgs, fresh, last, sc.steps, open); i >= 0 {
				// A JSON-RPC error that names no request, as the whole
				// answer of the POST of the last client frame (a
				// handshake-era server refusing a server/discover
				// probe: 400, "Server not initialized"): that request's
				// refusal, replayed with its status and body.
				attach(i, output{refused: e.Meta.HTTPStatus, refusedText: string(e.Data), refusedType: e.Meta.ContentType})
				closeReq(i)
				continue
			}
			if first := answersOpen(msgs, open); batch && len(msgs) > 1 && first >= 0 {
				// A batch answer (JSON-RPC 2.0 batches, which MCP
				// 2025-03-26 allowed): each response is its request's,
				// and closes it; what else the batch holds is the
				// first answered request's.
				sc.batches++
				for k, m := range msgs {
					mo := output{frame: m.Raw, status: o.status, batch: sc.batches, member: k}
					if file != nil {
						mo.frame, mo.line = nil, pe.at
					}
					r := first
					switch m.Kind() {
					case jsonrpc.KindResponse:
						if toolLists[m.ID.Key()] {
							delete(toolLists, m.ID.Key())
							learnToolHeaders(m.Result, sc.xheaders)
						}
						if i, ok := open[m.ID.Key()]; ok {
							r, mo.response = i, true
							closeReq(i)
						}
					case jsonrpc.KindRequest:
						s2c[m.ID.Key()] = r
						askedAt[m.ID.Key()] = len(sc.steps)
						if left {
							sc.afterLeft[m.ID.Key()] = true
						}
					}
					attach(r, mo)
				}
				continue
			}
			root := -2
			for _, m := range msgs {
				switch m.Kind() {
				case jsonrpc.KindResponse:
					if toolLists[m.ID.Key()] {
						delete(toolLists, m.ID.Key())
						learnToolHeaders(m.Result, sc.xheaders)
					}
					if i, ok := open[m.ID.Key()]; ok && root == -2 {
						root = i
						o.response = len(msgs) == 1
						closeReq(i)
					}
				case jsonrpc.KindNotification:
					if root != -2 {
						continue
					}
					if m.Method == mcp.NotificationProgress {
						if i, ok := tokens[idKey(rawjson.Member(m.Params, "progressToken"))]; ok {
							root = i
						}
					} else if m.Method == mcp.NotificationCancelled {
						if i, ok := open[idKey(rawjson.Member(m.Params, "requestId"))]; ok {
							root = i
						}
					}
				}
			}
			if root == -2 && !get && e.Meta != nil && e.Meta.StreamID != "" {
				if i, ok := open[streamOf[e.Meta.StreamID]]; ok {
					root = i
				}
			}
			if root == -2 {
				root = inFlight()
				if get {
					root = -1
				}
				o.unsolicited = len(openOrder) == 0
			}
			o.get = get
			for _, m := range msgs {
				if m.Kind() == jsonrpc.KindRequest {
					s2c[m.ID.Key()] = root
					askedAt[m.ID.Key()] = len(sc.steps)
					if left {
						sc.afterLeft[m.ID.Key()] = true
					}
				}
			}
			attach(root, o)
		case e.Dir == ClientToServer:
			sinceClient = false
			lastFrame = lastFrame[:0]
			msgs, _ := parseFrame(e.Data)
			for k, m := range msgs {
				i := len(sc.steps)
				version := mcp.StandardRoute(m.Method, m.Params).ProtocolVersion
				modern := e.Route != nil || mcp.IsModernVersion(version)
				st := step{msg: m, kind: m.Kind(), id: m.ID, modern: modern, root: -1, deps: len(sc.completed), t: e.Time}
				if st.method = methods[m.Method]; st.method != m.Method {
					st.method = m.Method
					methods[m.Method] = m.Method
				}
				if file != nil {
					st.msg, st.line, st.member = nil, pe.at, k
				}
				if st.kind == jsonrpc.KindRequest && version != "" && !slices.Contains(versions, version) {
					versions = append(versions, version)
				}
				if st.deps > 0 {
					st.from = answeredAt[st.deps-1]
				}
				switch m.Kind() {
				case jsonrpc.KindRequest:
					switch {
					case m.Method == mcp.MethodInitialize:
						sc.legacy = true
					case modern:
						sc.modern = true
					}
					if m.Method == mcp.MethodToolsList {
						toolLists[m.ID.Key()] = true
					}
					st.root = i
					open[m.ID.Key()] = i
					openOrder = append(openOrder, i)
					if tok := progressToken(m.Raw); tok != nil {
						tokens[idKey(tok)] = i
					}
				case jsonrpc.KindResponse:
					if root, ok := s2c[m.ID.Key()]; ok {
						st.root = root
					}
					st.from = i
					if at, ok := askedAt[m.ID.Key()]; ok {
						st.from = at
					}
				case jsonrpc.KindNotification:
					if m.Method == mcp.NotificationCancelled {
						if root, ok := open[idKey(rawjson.Member(m.Params, "requestId"))]; ok {
							st.root = root
						}
					}
				}
				key := sc.keyOf(m)
				if m.Kind() == jsonrpc.KindResponse {
					key = "response-id:" + m.ID.Key()
				}
				st.key = digestKey(key)
				sc.byKey[st.key] = append(sc.byKey[st.key], i)
				if m.Kind() == jsonrpc.KindRequest {
					sc.requests = append(sc.requests, i)
					sc.requestsOf[m.Method] = append(sc.requestsOf[m.Method], i)
				}
				sc.steps = append(sc.steps, st)
				lastFrame = append(lastFrame, i)
				if st.root >= 0 {
					latest[st.root] = i
				}
				last = i
			}
		}
	}
	if !ended && !left && !notesEnds && last >= 0 && info.Transport == "stdio" {
		// A trace of an mcpx that noted neither end (before
		// ServerEndedNote and ClientEndedNote): a session whose client's
		// last message is a request the server never answered, and never
		// cancelled, ended where the server went away (mcpx cancels what
		// it stops waiting for, but for initialize). In a later trace
		// that notes neither, the recording was cut short (the recorder
		// killed): nothing says the server went away, so it stays silent.
		if st := sc.steps[last]; st.kind == jsonrpc.KindRequest {
			if i, ok := open[st.id.Key()]; ok && i == last {
				attach(last, output{end: true, exit: &ServerEnd{LastStderr: slices.Clone(stderrTail)}})
			}
		}
	}
	if sc.modern && sc.firstRequest(mcp.MethodDiscover) < 0 {
		var err error
		if sc.discover, err = synthesizeDiscover(sc, versions); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// msgOf returns the message of step i: the one it holds, or the one it
// reads again from the trace file (see members for batches).
func (sc *script) msgOf(i int, batches map[lineRef][]*jsonrpc.Message) (*jsonrpc.Message, error) {
	st := &sc.steps[i]
	if st.msg != nil || sc.file == nil {
		return st.msg, nil
	}
	msgs, err := sc.members(st.line, batches)
	if err != nil {
		return nil, err
	}
	if st.member >= len(msgs) {
		return nil, fmt.Errorf("reading the event at %d of the trace: %w", st.line.off, errTraceChanged)
	}
	return msgs[st.member], nil
}

// frameOf returns the frame of output o: the one it holds, or the one it
// reads again from the trace file (see members for batches).
func (sc *script) frameOf(o output, batches map[lineRef][]*jsonrpc.Message) ([]byte, error) {
	if o.frame != nil || o.line.n == 0 || sc.file == nil {
		return o.frame, nil
	}
	if o.batch == 0 {
		e, err := sc.file.readEvent(o.line)
		if err != nil {
			return nil, err
		}
		return e.Data, nil
	}
	msgs, err := sc.members(o.line, batches)
	if err != nil {
		return nil, err
	}
	if o.member >= len(msgs) {
		return nil, fmt.Errorf("reading the event at %d of the trace: %w", o.line.off, errTraceChanged)
	}
	return msgs[o.member].Raw, nil
}

// members returns the messages of the frame of the event at ref, read
// again from the trace file. Those of a batch are kept in batches (when
// not nil) and taken from there: each member of a batch is used on its
// own, and reading the whole batch again for each read it as many times
// as it has members (a batch of 3,000 requests answered by one of 3,000
// responses replayed in 53 s, not 0.3).
func (sc *script) members(ref lineRef, batches map[lineRef][]*jsonrpc.Message) ([]*jsonrpc.Message, error) {
	if msgs, ok := batches[ref]; ok {
		return msgs, nil
	}
	e, err := sc.file.readEvent(ref)
	if err != nil {
		return nil, err
	}
	msgs, batch := parseFrame(e.Data)
	if batch && batches != nil {
		batches[ref] = msgs
	}
	return msgs, nil
}

// answersOpen returns the step of the first request in flight (open) that
// msgs answer, or -1.
func answersOpen(msgs []*jsonrpc.Message, open map[string]int) int {
	for _, m := range msgs {
		if m.Kind() == jsonrpc.KindResponse {
			if i, ok := open[m.ID.Key()]; ok {
				return i
			}
		}
	}
	return -1
}

// minorNotesEnds is the first minor version of the format whose
// recorders all note how a stdio session ended (ServerEndedNote,
// ClientEndedNote, the proxy's notes): those came with minor 3, before
// minor 4 was written.
const minorNotesEnds = 4

// nullIDRefusal returns the request whose refusal e is, or -1: e is a
// JSON-RPC error with a null id that came as the JSON answer (not an SSE
// stream) of a POST, with an error status, before anything else the
// server sent after the client's last frame (last), whose request is
// still unanswered.
func nullIDRefusal(e Event, msgs []*jsonrpc.Message, fresh bool, last int, steps []step, open map[string]int) int {
	if !fresh || last < 0 || e.Meta == nil || e.Meta.HTTPMethod != "POST" || e.Meta.HTTPStatus < 400 || e.Meta.StreamID != "" ||
		len(msgs) != 1 || msgs[0].Kind() != jsonrpc.KindResponse || !msgs[0].ID.IsNull() {
		return -1
	}
	st := steps[last]
	if st.kind != jsonrpc.KindRequest {
		return -1
	}
	if i, ok := open[st.id.Key()]; ok && i == last {
		return i
	}
	return -1
}

// ServerEnd is how the recorded server went away where a replay ends the
// connection (ReplayOptions.OnServerEnd), as far as the trace says.
type ServerEnd struct {
	// Status is how the recorded server process ended ("exit status 3",
	// "signal: killed"; see transport.PeerExitError), or why its output
	// ended ("EOF", or "the server sent a line over the maximum message
	// size (1 KiB)", where the stdio proxy ended the session on such a
	// line); empty when the trace does not say: a trace of an
	// older mcpx, which noted no end, and whose end the replay inferred.
	Status string
	// LastStderr holds the last lines the recorded server wrote on its
	// stderr (at most 10), newest last.
	LastStderr []string
}

// maxStderrTail bounds ServerEnd.LastStderr, as the stdio transport bounds
// a server's.
const maxStderrTail = 10

// endStatus returns the status a ServerEndedNote gives: "exit status 3"
// from "the server closed the connection: server exited (exit status 3)".
func endStatus(note string) string {
	why := strings.TrimPrefix(strings.TrimPrefix(note, ServerEndedNote), ": ")
	if inner, ok := strings.CutPrefix(why, "server exited ("); ok && strings.HasSuffix(inner, ")") {
		return strings.TrimSuffix(inner, ")")
	}
	return why
}

// firstRequest returns the index of the first recorded request with
// method, or -1.
func (sc *script) firstRequest(method string) int {
	for i, st := range sc.steps {
		if st.kind == jsonrpc.KindRequest && st.method == method {
			return i
		}
	}
	return -1
}

// learnToolHeaders adds the x-mcp-header annotations of a tools/list
// result to into (spec 2026-07-28: server/tools, "x-mcp-header").
func learnToolHeaders(result json.RawMessage, into map[string][]mcp.HeaderParam) {
	var page struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	for _, t := range page.Tools {
		if params, err := mcp.ToolHeaderParams(t.InputSchema); err == nil && len(params) > 0 {
			into[t.Name] = params
		}
	}
}

// synthesizeDiscover makes a server/discover result for a stateless-era
// recording without one (a proxy recorded a client that never asked):
// the versions the client declared, the capabilities its requests imply,
// the server's identity from a result's _meta (spec 2026-07-28:
// server/discover), and caching hints.
func synthesizeDiscover(sc *script, versions []string) ([]byte, error) {
	if versions == nil {
		versions = []string{}
	}
	caps := map[string]any{}
	for _, st := range sc.steps {
		if st.kind != jsonrpc.KindRequest {
			continue
		}
		switch prefix, _, _ := strings.Cut(st.method, "/"); prefix {
		case "tools", "resources", "prompts":
			caps[prefix] = map[string]any{}
		case "completion":
			caps["completions"] = map[string]any{}
		}
	}
	// The caching hints a server must include (spec 2026-07-28:
	// server/utilities/caching, "Cacheable Results"): nothing is known,
	// so stale at once, and for this caller only.
	result := map[string]any{"resultType": "complete", "supportedVersions": versions, "capabilities": caps,
		"ttlMs": 0, "cacheScope": "private"}
	for _, st := range sc.steps {
		for _, o := range st.follow {
			if o.isStderr || o.end {
				continue
			}
			frame, err := sc.frameOf(o, nil)
			if err != nil {
				return nil, err
			}
			msgs, _ := parseFrame(frame)
			for _, m := range msgs {
				var r struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				}
				if !m.IsResponse() || json.Unmarshal(m.Result, &r) != nil {
					continue
				}
				if info, ok := r.Meta[mcp.MetaServerInfo]; ok {
					result["_meta"] = map[string]json.RawMessage{mcp.MetaServerInfo: info}
					b, _ := json.Marshal(result)
					return b, nil
				}
			}
		}
	}
	b, _ := json.Marshal(result)
	return b, nil
}

// replaySession is one client's progress through a script.
type replaySession struct {
	sc *script
	// readErr is why a recorded frame could not be read again (the trace
	// changed during the replay): the session ends with it.
	readErr error
	// batches holds the batches read again while one client frame is
	// handled (see script.members); emptied once it is.
	batches map[lineRef][]*jsonrpc.Message
	opts    *ReplayOptions
	used    []bool
	cursor  map[keyDigest]int          // per key: first possibly unused position in byKey[key]
	live    map[int]jsonrpc.ID         // step of a recorded request -> the live request's id
	idMap   map[string]json.RawMessage // recorded request id key -> live id (for batches)
	tokMap  map[string]json.RawMessage // recorded progress token key -> live token
	// taskMap holds the id the live client gave each task it created for
	// a recorded server request (a 2025-11-25 task-augmented sampling or
	// elicitation), by the id the recorded client gave it.
	taskMap map[string]string
	done    int             // script.completed[:done] are all used (causal order)
	err     *DeviationError // the first deviation, in strict mode
	// noted holds the per-request protocol fields (_meta keys) whose
	// difference from the recording was reported (once per session).
	noted map[string]bool
	// quiet drops deviations (a session catching up with what another
	// one answered, see replayConn).
	quiet bool
	// mem holds the secret values the live client sent (rules 3): its
	// frames are redacted as the recorder redacted the recorded ones. Its
	// parent is the connection's told memory (see replayConn).
	mem *memory
	// asked holds the method of each request the replay sent the client,
	// by its id's key: an answer the recording lacks is then told apart
	// from one to a request never sent.
	asked map[string]string
	// viewRead says the client was answered a recorded resources/read of
	// an MCP Apps view whose content declares no _meta.ui: a host may
	// then list the resources for the view's declaration (viewListing).
	viewRead bool
	// held lists the steps whose unsolicited outputs wait for the live
	// client to send the steps concurrent with them (see emit), in the
	// order of the recording.
	held []int
	// skip[k] is a step after k such that none from k up to it is a gate
	// (see firstUnsentGate); made on first use.
	skip []int
	// gateLooks counts the steps firstUnsentGate looked at, for the test
	// that its cost grows with the session, not with its square.
	gateLooks int
	// nextRequest is a position in sc.requests before which every
	// request is used (see unmatched), and unmatchedLooks counts the
	// steps unmatched looked at, for the test that its cost does not
	// grow with the session's.
	nextRequest    int
	unmatchedLooks int
}

// newEraSession starts a session that replays only the messages of one
// era ("modern" or "legacy"; "" for all) of a recording that holds both
// (a client that probed with server/discover, then sent initialize): over
// HTTP each era's requests reach their own session, and what the other
// era's did is not this one's to repeat, in order or at all.
func newEraSession(sc *script, opts *ReplayOptions, era string, told *memory) *replaySession {
	s := &replaySession{
		sc:      sc,
		opts:    opts,
		used:    make([]bool, len(sc.steps)),
		cursor:  map[keyDigest]int{},
		batches: map[lineRef][]*jsonrpc.Message{},
		live:    map[int]jsonrpc.ID{},
		idMap:   map[string]json.RawMessage{},
		tokMap:  map[string]json.RawMessage{},
		taskMap: map[string]string{},
		mem:     sc.red.newMemory(told),
		asked:   map[string]string{},
	}
	if era == "" || !sc.modern || !sc.legacy {
		return s
	}
	for i, st := range sc.steps {
		if st.modern != (era == "modern") {
			s.used[i] = true
		}
	}
	return s
}

// Deviation levels.
const (
	devWarn   = iota // always reported; an error in strict mode
	devStrict        // reported and an error in strict mode only
	devInfo          // reported in strict mode only, never an error
	devNote          // always reported, never an error
)

// deviate reports a departure from the recording. Once a recorded
// message could not be read again (readErr), nothing is: what it would
// say is made of the empty message that stood for it, and the session
// ends with the error instead.
func (s *replaySession) deviate(level int, format string, args ...any) {
	if s.quiet || s.readErr != nil || level != devWarn && level != devNote && !s.opts.Strict {
		return
	}
	failure := level != devInfo && level != devNote
	d := Deviation{Message: fmt.Sprintf(format, args...), Failure: failure}
	if s.opts.OnDeviation != nil {
		s.opts.OnDeviation(d)
	}
	if s.opts.Strict && failure && s.err == nil {
		s.err = &DeviationError{d}
	}
}

// pick returns the first unused step with key, or the last used one (a
// repeated message, answered again), or -1.
func (s *replaySession) pick(k string) (i int, repeat bool) {
	key := digestKey(k)
	list := s.sc.byKey[key]
	if len(list) == 0 {
		return -1, false
	}
	c := s.cursor[key]
	for c < len(list) && s.used[list[c]] {
		c++
	}
	s.cursor[key] = c
	if c < len(list) {
		return list[c], false
	}
	return list[len(list)-1], true
}

// pickLive is pick for the live request or notification m, redacted as
// lm. When the recording has nothing of lm's key and the session's memory
// of the live client's secret values changed lm, it tries m redacted by
// the rules alone, which it then makes lm: a session recorded before
// rules 3 (and redacted by them again when the trace was appended to) may
// hold in clear a value the live client sent under a secret name before.
func (s *replaySession) pickLive(m *jsonrpc.Message, lm **jsonrpc.Message) (int, bool) {
	i, repeat := s.pick(s.sc.keyOf(*lm))
	if i >= 0 || s.mem == nil {
		return i, repeat
	}
	plain := parseMessage(s.sc.red.Frame(m.Raw))
	if bytes.Equal(plain.Raw, (*lm).Raw) {
		return i, repeat
	}
	if j, rep := s.pick(s.sc.keyOf(plain)); j >= 0 {
		*lm = plain
		return j, rep
	}
	return i, repeat
}

// checkOrder reports, in strict mode, a message sent before a request
// whose answer the recorded client had when it sent it: causal order.
// Requests that were in flight together may come in any order.
func (s *replaySession) checkOrder(i int) {
	if !s.opts.Strict {
		return
	}
	for s.done < len(s.sc.completed) && s.used[s.sc.completed[s.done]] {
		s.done++
	}
	if s.done < s.sc.steps[i].deps {
		before := s.msgOf(s.sc.completed[s.done])
		s.deviate(devWarn, "expected %s next, got %s (the recorded client sent it after the answer to %s)",
			describe(before), describe(s.msgOf(i)), describe(before))
	}
}

func describe(m *jsonrpc.Message) string {
	switch m.Kind() {
	case jsonrpc.KindRequest:
		if len(m.Params) > 0 {
			return fmt.Sprintf("request %s %s", m.Method, rawjson.Excerpt(m.Params, 120))
		}
		return "request " + m.Method
	case jsonrpc.KindNotification:
		return "notification " + m.Method
	case jsonrpc.KindResponse:
		return "a response to request " + m.ID.String()
	}
	return fmt.Sprintf("the non-JSON-RPC frame %s", strconv.Quote(rawjson.Excerpt(m.Raw, 80)))
}

// handle answers one frame from the client. The members of a batch the
// recorded server answered with (output.batch) that the frame's requests
// get together are one batch again, in the recorded order, where the last
// of them comes (the batch was sent once all were ready); one the frame
// gets alone comes alone, as the answer to a request sent alone.
func (s *replaySession) handle(frame []byte) []output {
	msgs, _ := parseFrame(frame)
	var outs []output
	for _, m := range msgs {
		outs = append(outs, s.handleMsg(m)...)
	}
	clear(s.batches)
	return joinBatches(outs)
}

// joinBatches joins the members of each recorded batch in outs into one
// batch frame (see replaySession.handle).
func joinBatches(outs []output) []output {
	n := map[int]int{}
	for _, o := range outs {
		if o.batch != 0 && o.frame != nil {
			n[o.batch]++
		}
	}
	if !slices.ContainsFunc(outs, func(o output) bool { return n[o.batch] > 1 }) {
		return outs
	}
	members := map[int][]output{}
	joined := make([]output, 0, len(outs))
	for _, o := range outs {
		if n[o.batch] < 2 || o.frame == nil {
			joined = append(joined, o)
			continue
		}
		ms := append(members[o.batch], o)
		if members[o.batch] = ms; len(ms) < n[o.batch] {
			continue // the batch goes where its last member is
		}
		slices.SortStableFunc(ms, func(a, b output) int { return a.member - b.member })
		frames := make([][]byte, len(ms))
		for k, m := range ms {
			frames[k] = m.frame
		}
		o.frame = append(append([]byte{'['}, bytes.Join(frames, []byte{','})...), ']')
		o.response = false
		joined = append(joined, o)
	}
	return joined
}

func (s *replaySession) handleMsg(m *jsonrpc.Message) []output {
	lm := m
	if s.sc.red.Enabled() && m.Kind() != jsonrpc.KindInvalid {
		lm = parseMessage(s.sc.red.liveFrame(m.Raw, s.mem))
	}
	switch m.Kind() {
	case jsonrpc.KindRequest:
		i, repeat := s.pickLive(m, &lm)
		if i >= 0 && repeat && m.Method == mcp.MethodInitialize {
			i = -1 // a second initialize is not answered again
		}
		if i >= 0 && repeat && m.Method != mcp.MethodDiscover {
			s.deviate(devStrict, "%s was sent again; the recording has it only %d time(s) (answered with the recorded response again)", describe(m), len(s.sc.byKey[s.sc.steps[i].key]))
		}
		if i < 0 {
			switch {
			case m.Method == mcp.MethodPing:
				s.deviate(devStrict, "ping was not in the recording (answered it anyway)")
				return []output{{frame: jsonrpc.EncodeResponse(m.ID, []byte("{}"), nil), root: -1}}
			case m.Method == mcp.MethodDiscover && s.sc.discover != nil:
				s.deviate(devStrict, "the recording has no server/discover; answered with a result made from the recording")
				return []output{{frame: jsonrpc.EncodeResponse(m.ID, s.sc.discover, nil), root: -1}}
			case m.Method == mcp.MethodDiscover && s.sc.legacy:
				// A dual-era client's probe: the recorded handshake-era
				// server would have refused it, and the client falls back
				// to initialize (spec 2026-07-28: basic/versioning,
				// "Backward Compatibility"). A conforming client's way,
				// reported only.
				frame, _ := s.unmatched(m, lm, devInfo)
				return []output{{frame: frame, root: -1}}
			case m.Method == mcp.MethodResourcesList && s.viewRead && !hasCursor(m.Params):
				return []output{{frame: s.viewListing(m), root: -1}}
			}
			frame, code := s.unmatched(m, lm, devWarn)
			o := output{frame: frame, root: -1}
			if code == -32601 && s.sc.modern {
				o.status = 404 // 2026-07-28: an unknown method is 404 over HTTP
			}
			return []output{o}
		}
		rec := s.msgOf(i)
		if m.Method == mcp.MethodInitialize && canonicalJSON(orEmpty(m.Params)) != canonicalJSON(orEmpty(rec.Params)) {
			s.deviate(devInfo, "%s params differ from the recording (got %s, recorded %s); answered with the recorded result",
				m.Method, rawjson.Excerpt(lm.Params, 200), rawjson.Excerpt(rec.Params, 200))
		}
		s.noteClient(m, rec)
		if m.Method == mcp.MethodResourcesRead && s.undeclaredView(rec, s.sc.steps[i]) {
			s.viewRead = true
		}
		s.live[i] = m.ID
		s.idMap[s.sc.steps[i].id.Key()] = m.ID.Raw()
		if repeat && m.Method == mcp.MethodDiscover {
			// Asked again (a client refreshing what it knows): answered
			// again, in any order.
			return s.emit(i)
		}
		s.checkOrder(i)
		if rec, live := progressToken(rec.Raw), progressToken(m.Raw); rec != nil && live != nil {
			s.tokMap[idKey(rec)] = live
		}
		return s.emit(i)
	case jsonrpc.KindNotification:
		i, repeat := s.pickLive(m, &lm)
		if i < 0 {
			s.deviate(devStrict, "%s is not in the recording (ignored)", describe(m))
			return nil
		}
		if repeat {
			s.deviate(devStrict, "%s was sent again; the recording has it only %d time(s)", describe(m), len(s.sc.byKey[s.sc.steps[i].key]))
			return nil
		}
		s.checkOrder(i)
		return s.emit(i)
	case jsonrpc.KindResponse:
		i, repeat := s.pick("response-id:" + m.ID.Key())
		if method, sent := s.asked[m.ID.Key()]; sent && i < 0 {
			if s.sc.afterLeft[m.ID.Key()] {
				// The recorded client could not answer it: no departure.
				s.deviate(devInfo, "%s (%s), which the server sent after the recorded client had left (ignored)", describe(m), method)
				return nil
			}
			s.deviate(devWarn, "%s (%s), which the recorded client never answered (ignored)", describe(m), method)
			return nil
		}
		if i < 0 || repeat {
			s.deviate(devWarn, "%s, which the replayed server never sent (ignored)", describe(m))
			return nil
		}
		rec := s.msgOf(i)
		if rec, live := createdTaskID(rec.Raw), createdTaskID(lm.Raw); rec != "" && live != "" && rec != live {
			s.taskMap[rec] = live
		}
		if s.opts.Strict {
			method := ""
			if root := s.sc.steps[i].root; root >= 0 {
				method = s.sc.steps[root].method
			}
			// Timestamps in the client's answer are its own, of this run
			// (a task it created: createdAt), as verify takes the
			// server's.
			paths, norm := pathsFor(s.sc.ignore, method), s.sc.answerNorm
			if asked := s.asked[m.ID.Key()]; asked == mcp.MethodTasksGet {
				// How far the client's own task has come when the server
				// asks depends on time alone (a server polls at once, or
				// after a while): what the task comes to is compared in
				// the answer to tasks/result.
				paths = append(paths, taskProgressPaths()...)
			}
			got, want := canonicalWith(s.recordedTasks(lm), paths, norm), canonicalWith(rec, paths, norm)
			if got != want {
				s.deviate(devWarn, "the client answered request %s with %s, but the recording has %s",
					m.ID.String(), rawjson.Excerpt(lm.Raw, 200), rawjson.Excerpt(rec.Raw, 200))
			}
		}
		return s.emit(i)
	}
	i, repeat := s.pick(canonical(m, nil))
	if i < 0 || repeat && s.opts.Strict {
		s.deviate(devWarn, "the client sent %s, which is not in the recording", describe(m))
		if i < 0 {
			return []output{{frame: jsonrpc.EncodeResponse(jsonrpc.ID{}, nil,
				&jsonrpc.Error{Code: -32700, Message: "mcpx replay: parse error: the frame is not a JSON-RPC message, and the recording has no such frame"}), root: -1}}
		}
	}
	return s.emit(i)
}

// orEmpty is raw, or {} when it is absent.
func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// noteClient reports in strict mode, once per session and field, the
// per-request protocol fields of a 2026-07-28-era request that differ from
// the recorded request's (they do not count for matching, and are no
// error: any conforming client is served): another protocol version,
// other client capabilities, another client identity.
func (s *replaySession) noteClient(live, recorded *jsonrpc.Message) {
	for _, f := range []struct {
		key, what string
	}{
		{mcp.MetaProtocolVersion, "declares protocol version"},
		{mcp.MetaClientCapabilities, "declares the capabilities"},
		{mcp.MetaClientInfo, "identifies itself as"},
	} {
		if s.noted[f.key] || !s.opts.Strict {
			continue
		}
		l, r := metaValue(live.Raw, f.key), metaValue(recorded.Raw, f.key)
		if l == nil && r == nil || l != nil && r != nil && canonicalJSON(l) == canonicalJSON(r) {
			continue
		}
		if s.noted == nil {
			s.noted = map[string]bool{}
		}
		s.noted[f.key] = true
		s.deviate(devInfo, "the client %s %s, the recorded one %s %s (answered as recorded)",
			f.what, orNone(l), f.what, orNone(r))
	}
}

func orNone(v json.RawMessage) string {
	if v == nil {
		return "nothing"
	}
	return rawjson.Excerpt(v, 120)
}

// metaValue returns a member of a request's params._meta, or nil.
func metaValue(msg []byte, key string) json.RawMessage {
	spans := findSpans(msg, func(p []elem) bool {
		return len(p) == 3 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "_meta" &&
			p[2].index < 0 && p[2].key == key
	})
	if len(spans) != 1 {
		return nil
	}
	return msg[spans[0].start:spans[0].end]
}

// canonicalJSON re-encodes JSON with sorted keys, for comparison.
func canonicalJSON(raw []byte) string {
	v, ok := decode(raw)
	if !ok {
		return string(raw)
	}
	return encodeValue(v)
}

// unmatched builds the error for request m that the recording cannot
// answer, saying what it has instead, and reports the deviation at level;
// it returns the error's code too. What it quotes of the request is
// shown, m redacted as the recording was: the error and the report must
// not give away a secret argument the recording left out.
//
// Its cost is that of the recorded requests of m's method, which the
// error lists, not of the session: a client sending many requests the
// recording lacks looked through the whole recording for each.
func (s *replaySession) unmatched(m, shown *jsonrpc.Message, level int) ([]byte, int) {
	var same []*jsonrpc.Message
	for _, i := range s.sc.requestsOf[m.Method] {
		s.unmatchedLooks++
		same = append(same, s.msgOf(i))
	}
	// The next recorded request, named when none has m's method: the
	// first one unused (a step once used stays so).
	nextReq := ""
	for ; s.nextRequest < len(s.sc.requests); s.nextRequest++ {
		s.unmatchedLooks++
		if i := s.sc.requests[s.nextRequest]; !s.used[i] {
			nextReq = s.sc.steps[i].method
			break
		}
	}
	data := map[string]any{"received": rawOrNull(shown.Params)}
	var msg string
	code := -32601
	if len(same) == 0 {
		msg = fmt.Sprintf("mcpx replay: the recording has no %s request", m.Method)
		if nextReq != "" {
			msg += "; the next recorded request is " + nextReq
		}
	} else {
		code = -32602
		var exp []json.RawMessage
		var desc []string
		for _, x := range same {
			exp = append(exp, rawOrNull(x.Params))
			if len(desc) < 3 {
				desc = append(desc, rawjson.Excerpt(x.Params, 160))
			}
		}
		data["expected"] = exp
		msg = fmt.Sprintf("mcpx replay: no recorded %s request has these params; the recording has %s with %s",
			m.Method, m.Method, strings.Join(desc, " or "))
		if len(same) > len(desc) {
			msg += fmt.Sprintf(" (and %d more)", len(same)-len(desc))
		}
	}
	got := "no params"
	if len(bytes.TrimSpace(shown.Params)) > 0 {
		got = rawjson.Excerpt(shown.Params, 160)
	}
	s.deviate(level, "%s", strings.TrimPrefix(msg, "mcpx replay: ")+" (got "+got+")")
	d, _ := json.Marshal(data)
	return jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: code, Message: msg, Data: d}), code
}

// viewListing answers a resources/list the recording does not have, sent
// after the client read an MCP Apps view whose content item declares no
// _meta.ui. A conforming host does that: the ext-apps SDK makes the view's
// resources/list entry the fallback for its declaration
// (McpUiAppResourceConfig; McpUiToolMeta.csp: "Hosts read it from the
// resources/read content item (with resources/list entry as fallback)"),
// and a host that did not have the listing at hand, as the recorded one
// may not have (mcpx before it followed that rule; a host that never
// asked), asks for it. Like another client's server/discover probe, it is
// a conforming client's way, reported only (strict mode too), not a
// departure. The answer is an error saying the recording has no listing,
// not -32601 (the server has the method, and its client would take it for
// one that says it lists resources but does not): the host then gives the
// view the restrictive default, which is what the recorded view got.
func (s *replaySession) viewListing(m *jsonrpc.Message) []byte {
	s.deviate(devInfo, "%s is not in the recording: an MCP Apps host looking for a view's _meta.ui in the listing, which the recorded client did not (answered with an error)", describe(m))
	return jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: -32603,
		Message: "mcpx replay: the recording has no resources/list request (the recorded client did not list the resources)"})
}

// undeclaredView says whether st, a recorded resources/read, read an MCP
// Apps view (a ui:// resource) whose content item declares no _meta.ui
// (the item with its URI, or the only one, as an MCP Apps host picks it).
func (s *replaySession) undeclaredView(rec *jsonrpc.Message, st step) bool {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(rec.Params, &p) != nil || !strings.HasPrefix(p.URI, "ui://") {
		return false
	}
	for _, o := range st.follow {
		if !o.response {
			continue
		}
		type content struct {
			URI  string                     `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		var r struct {
			Result *struct {
				Contents []content `json:"contents"`
			} `json:"result"`
		}
		if json.Unmarshal(s.frameOf(o), &r) != nil || r.Result == nil {
			return false
		}
		c := r.Result.Contents
		i := slices.IndexFunc(c, func(x content) bool { return x.URI == p.URI })
		if i < 0 && len(c) == 1 {
			i = 0
		}
		if i < 0 {
			return false
		}
		ui, ok := c[i].Meta["ui"]
		return !ok || string(ui) == "null"
	}
	return false
}

// msgOf returns the message of step i (see script.msgOf); when it cannot
// be read, s.readErr is set and an empty message stands for it.
func (s *replaySession) msgOf(i int) *jsonrpc.Message {
	m, err := s.sc.msgOf(i, s.batches)
	if err != nil {
		if s.readErr == nil {
			s.readErr = err
		}
		return &jsonrpc.Message{}
	}
	return m
}

// frameOf returns the frame of output o (see script.frameOf); nil, and
// s.readErr set, when it cannot be read.
func (s *replaySession) frameOf(o output) []byte {
	frame, err := s.sc.frameOf(o, s.batches)
	if err != nil && s.readErr == nil {
		s.readErr = err
	}
	return frame
}

// hasCursor says whether params ask for a page after the first.
func hasCursor(params json.RawMessage) bool {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	return json.Unmarshal(params, &p) == nil && p.Cursor != nil
}

func rawOrNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// emit marks step i used and returns what the server did because of it,
// with the ids of responses changed to the live client's.
//
// What the recorded server did unprompted after the message (while no
// request was in flight: a timer's notification, a request of its own)
// may depend on every message it had received by then, so it waits until
// the live client has sent those the recorded one could have sent after
// this one (step.from): a live client that answers a server request
// sooner, or sends concurrent requests in another order, does not get
// it earlier than the recorded one did (a resource update before the
// subscription). What was held so comes in the recorded order, once the
// message that completes it is handled, timed from that message.
func (s *replaySession) emit(i int) []output {
	s.used[i] = true
	st := s.sc.steps[i]
	outs := make([]output, 0, len(st.follow))
	for _, o := range st.follow {
		if o.unsolicited {
			if j, _ := slices.BinarySearch(s.held, i); j == len(s.held) || s.held[j] != i {
				s.held = slices.Insert(s.held, j, i)
			}
			break
		}
		outs = append(outs, s.liveOutput(o))
	}
	for len(s.held) > 0 && s.complete(s.held[0]) {
		h := s.held[0]
		s.held = s.held[1:]
		follow := s.sc.steps[h].follow
		for k := slices.IndexFunc(follow, func(o output) bool { return o.unsolicited }); k < len(follow); k++ {
			o := follow[k]
			o.after = max(o.after+s.sc.steps[h].t-st.t, 0)
			outs = append(outs, s.liveOutput(o))
		}
	}
	return outs
}

// complete reports whether the live client has sent the steps the
// unsolicited outputs of step i wait for: i, and the requests and answers
// from step.from on, which the recorded client sent before i (a ping or a
// notification, sent when a timer or the user decides, does not count).
func (s *replaySession) complete(i int) bool {
	if !s.used[i] {
		return false
	}
	return s.blocking(i) == i
}

// blocking returns the step the unsolicited outputs of step i still wait
// for (see complete): i itself, else the first concurrent step unsent.
func (s *replaySession) blocking(i int) int {
	if !s.used[i] {
		return i
	}
	if k := s.firstUnsentGate(s.sc.steps[i].from); k < i {
		return k
	}
	return i
}

// gate says whether step k, unsent, holds back what the recorded server
// sent on its own after later steps (see complete): a request other than
// a ping, or an answer to a server request.
func (s *replaySession) gate(k int) bool {
	st := &s.sc.steps[k]
	return !s.used[k] && (st.kind == jsonrpc.KindRequest && st.method != mcp.MethodPing || st.kind == jsonrpc.KindResponse)
}

// firstUnsentGate returns the first step from k on that is a gate, or
// the number of steps. Steps only ever become used, so a step found no
// gate stays none: skip remembers how far each scan went, which keeps a
// long session's checks (one per message the client sends) from scanning
// the same steps again and again.
func (s *replaySession) firstUnsentGate(k int) int {
	n := len(s.sc.steps)
	if s.skip == nil {
		s.skip = make([]int, n)
		for j := range s.skip {
			s.skip[j] = j + 1
		}
	}
	start := k
	for k < n && !s.gate(k) {
		s.gateLooks++
		k = s.skip[k]
	}
	for start < n && start != k {
		// Every step in [start, k) is no gate: point them past it.
		next := s.skip[start]
		s.skip[start] = k
		start = next
	}
	return k
}

// liveOutput makes output o of the recording the live one: a response
// under the live request's id, the ids and subscription ids a message
// names the live client's.
func (s *replaySession) liveOutput(o output) output {
	o.frame = s.frameOf(o)
	switch {
	case o.isStderr || o.refused != 0 || o.dropped != "" || o.end:
	case o.response:
		if id, ok := s.live[o.root]; ok {
			o.frame = replaceTop(o.frame, "id", id.Raw())
		}
		o.frame = s.liveSubscription(o.frame)
	default:
		o.frame = mapMessages(o.frame, s.liveID)
		s.noteAsked(o.frame)
	}
	return o
}

// noteAsked remembers the request frame (not a batch) the replay sends
// the client, by its id (server requests keep their recorded ids).
func (s *replaySession) noteAsked(frame []byte) {
	id, ok := topMember(frame, "id")
	if !ok {
		return
	}
	m, ok := topMember(frame, "method")
	if !ok {
		return
	}
	var method string
	if json.Unmarshal(frame[m.start:m.end], &method) == nil {
		s.asked[idKey(frame[id.start:id.end])] = method
	}
}

// liveRequest returns the live id of the request of step root.
func (s *replaySession) liveRequest(root int) (jsonrpc.ID, bool) {
	id, ok := s.live[root]
	return id, ok
}

// progressToken returns a request's params._meta.progressToken, or nil.
func progressToken(msg []byte) json.RawMessage {
	spans := findSpans(msg, isProgressTokenParam)
	if len(spans) != 1 {
		return nil
	}
	return msg[spans[0].start:spans[0].end]
}

func isProgressTokenParam(p []elem) bool {
	return len(p) == 3 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "_meta" &&
		p[2].index < 0 && p[2].key == "progressToken"
}

func isProgressNotificationToken(p []elem) bool {
	return len(p) == 2 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "progressToken"
}

// isSubscriptionIDMember matches the subscription id of a notification or
// a subscriptions/listen result: params._meta or result._meta
// io.modelcontextprotocol/subscriptionId.
func isSubscriptionIDMember(p []elem) bool {
	return len(p) == 3 && p[0].index < 0 && (p[0].key == "params" || p[0].key == "result") &&
		p[1].index < 0 && p[1].key == "_meta" && p[2].index < 0 && p[2].key == mcp.MetaSubscriptionID
}

// liveSubscription rewrites the subscription id of a recorded message
// (a notification on a subscriptions/listen stream, the listen's result)
// to the id of the live client's subscriptions/listen request: the spec
// makes it "the JSON-RPC ID of the subscriptions/listen request", and a
// client correlates the stream's notifications by it (2026-07-28:
// basic/patterns/subscriptions; on stdio it MUST), so one tagged with
// the recorded client's id is for a subscription the live client never
// opened.
func (s *replaySession) liveSubscription(msg []byte) []byte {
	if len(s.idMap) == 0 || !bytes.Contains(msg, []byte(mcp.MetaSubscriptionID)) {
		return msg
	}
	spans := findSpans(msg, isSubscriptionIDMember)
	if len(spans) != 1 {
		return msg
	}
	live, ok := s.idMap[idKey(msg[spans[0].start:spans[0].end])]
	if !ok || bytes.Equal(live, msg[spans[0].start:spans[0].end]) {
		return msg
	}
	return splice(msg, spans, func([]byte) []byte { return live })
}

// liveID rewrites the id of a recorded response to the id the live client
// used for the matching request, the token of a recorded progress
// notification to the token the live client asked for, and the
// subscription id of a notification to the live subscriptions/listen
// request's (liveSubscription).
func (s *replaySession) liveID(msg []byte) []byte {
	if _, isReq := topMember(msg, "method"); isReq {
		msg = s.liveSubscription(s.liveTask(msg))
		if len(s.tokMap) == 0 || !bytes.Contains(msg, []byte(`"notifications/progress"`)) {
			return msg
		}
		spans := findSpans(msg, isProgressNotificationToken)
		if len(spans) != 1 {
			return msg
		}
		live, ok := s.tokMap[idKey(msg[spans[0].start:spans[0].end])]
		if !ok {
			return msg
		}
		return splice(msg, spans, func([]byte) []byte { return live })
	}
	sp, ok := topMember(msg, "id")
	if !ok {
		return msg
	}
	live, ok := s.idMap[idKey(msg[sp.start:sp.end])]
	if !ok || bytes.Equal(live, msg[sp.start:sp.end]) {
		return msg
	}
	return splice(msg, []span{sp}, func([]byte) []byte { return live })
}

// liveTask rewrites the params.taskId of a recorded server request
// (tasks/get, tasks/result, tasks/cancel) about a task the client created
// to the id the live client gave that task: a receiver makes up its task
// ids (spec 2025-11-25: basic/utilities/tasks), so the live client knows
// its task by its own.
func (s *replaySession) liveTask(msg []byte) []byte {
	return mapTaskID(msg, s.taskMap)
}

// mapTaskID returns msg with its params.taskId replaced by the id tasks
// maps it to (a recorded task's id to the live one's), msg as it is when
// it has none or the map does not have it.
func mapTaskID(msg []byte, tasks map[string]string) []byte {
	if len(tasks) == 0 {
		return msg
	}
	spans := findSpans(msg, isParamsTaskID)
	if len(spans) != 1 {
		return msg
	}
	rec, _ := rawjson.String(msg[spans[0].start:spans[0].end])
	live, ok := tasks[rec]
	if !ok {
		return msg
	}
	q, _ := json.Marshal(live)
	return splice(msg, spans, func([]byte) []byte { return q })
}

// recordedTasks returns the live client's message m with the ids it gave
// its tasks (see liveTask) read as the recorded client's, for comparing
// it with the recording.
func (s *replaySession) recordedTasks(m *jsonrpc.Message) *jsonrpc.Message {
	raw := m.Raw
	for rec, live := range s.taskMap {
		l, _ := json.Marshal(live)
		r, _ := json.Marshal(rec)
		raw = bytes.ReplaceAll(raw, l, r)
	}
	if bytes.Equal(raw, m.Raw) {
		return m
	}
	return parseMessage(raw)
}

// finish reports, in strict mode, recorded client messages never sent;
// in any mode, what the recorded server sent on its own that the replay
// held for them (see emit) and so never sent: the client's test would
// otherwise just miss a notification without being told why.
func (s *replaySession) finish() {
	defer clear(s.batches)
	n, first, wait := 0, "", -1
	for i, st := range s.sc.steps {
		if _, held := slices.BinarySearch(s.held, i); s.used[i] && !held {
			continue
		}
		for k := slices.IndexFunc(st.follow, func(o output) bool { return o.unsolicited }); k >= 0 && k < len(st.follow); k++ {
			if o := st.follow[k]; !o.isStderr && (o.frame != nil || o.line.n > 0) {
				if n > 0 {
					n++
					continue
				}
				if msgs, _ := parseFrame(s.frameOf(o)); len(msgs) > 0 {
					first, wait = describe(msgs[0]), s.blocking(i)
				}
				n++
			}
		}
	}
	s.held = nil
	if n > 0 {
		// A warning in either mode: what the client did not send is
		// strict mode's failure already (below), where it is one.
		s.deviate(devNote, "the client ended the session before the replay sent %d message(s) the recorded server sent on its own, first %s: it waits for %s, which the client never sent", n, first, describe(s.msgOf(wait)))
	}
	if !s.opts.Strict {
		return
	}
	var missing []string
	for i, st := range s.sc.steps {
		if !s.used[i] && st.kind != jsonrpc.KindResponse {
			missing = append(missing, describe(s.msgOf(i)))
		}
	}
	if len(missing) > 0 {
		s.deviate(devWarn, "the client ended the session without sending %d recorded message(s), first %s", len(missing), missing[0])
	}
}

// replayConn is one client connection: the session it is served, chosen
// among the candidates as the client's messages narrow them.
type replayConn struct {
	r     *Replayer
	era   string
	cands []*sessionSig // still possible, in the order of preference
	cur   *replaySession
	n     int      // the session cur replays
	log   [][]byte // the client's frames so far, while the choice is open
	mem   *memory  // the secret values the client sent, while the choice is open
	// told holds the credentials the client sent with its HTTP requests
	// (Authorization, cookies: see requestSecrets), the parent of mem and
	// of the sessions' memories: a recorder was told the recorded
	// client's (mcpx --bearer, OAuth, a proxied host's), and redacted them
	// wherever they stood, under any name.
	told *memory
}

// newConn starts a connection of era ("legacy", "modern" or "" for any):
// sessions not served yet come first, then those of the era, each in
// order.
func (r *Replayer) newConn(era string) *replayConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	told := r.red.newMemory(nil)
	c := &replayConn{r: r, era: era, told: told, mem: r.red.newMemory(told)}
	rank := func(s *sessionSig) int {
		k := 0
		if r.served[s.n] {
			k += 2
		}
		if era == "legacy" && !s.legacy || era == "modern" && !s.modern {
			k++
		}
		return k
	}
	c.cands = slices.Clone(r.sigs)
	slices.SortStableFunc(c.cands, func(a, b *sessionSig) int { return rank(a) - rank(b) })
	if len(c.cands) > 0 {
		// Taken now, in the same turn as the ranking: a connection made
		// at the same time (two clients starting together) ranks it as
		// served and is served another session, as it would be after
		// this one.
		r.served[c.cands[0].n] = true
	}
	return c
}

// tell learns a credential the client sent with an HTTP request.
func (c *replayConn) tell(v string) { c.told.learn(v) }

// choose makes session sig the one the connection is served, catching it
// up with what the client sent so far.
func (c *replayConn) choose(sig *sessionSig) error {
	sc, err := c.r.script(sig.n)
	if err != nil {
		return err
	}
	s := newEraSession(sc, &c.r.opts, c.era, c.told)
	s.quiet = true
	for _, f := range c.log {
		s.handle(f)
	}
	s.quiet = false
	s.err = nil
	c.cur, c.n = s, sig.n
	c.r.mu.Lock()
	c.r.served[sig.n] = true
	c.r.mu.Unlock()
	return nil
}

// start chooses the first candidate and returns what its server did before
// the client said anything.
func (c *replayConn) start() ([]output, error) {
	if err := c.choose(c.cands[0]); err != nil {
		return nil, err
	}
	prelude := slices.Clone(c.cur.sc.prelude)
	for i := range prelude {
		prelude[i].frame = c.cur.frameOf(prelude[i])
	}
	clear(c.cur.batches)
	if c.cur.readErr != nil {
		return nil, c.cur.readErr
	}
	return prelude, nil
}

// handle answers one frame of the client, first narrowing the sessions it
// may be served to those that hold what it sent.
func (c *replayConn) handle(frame []byte) ([]output, error) {
	if len(c.cands) > 1 {
		msgs, _ := parseFrame(frame)
		lms := make([]*jsonrpc.Message, len(msgs))
		for i, m := range msgs {
			lms[i] = m
			if c.r.red.Enabled() && m.Kind() != jsonrpc.KindInvalid {
				lms[i] = parseMessage(c.r.red.liveFrame(m.Raw, c.mem))
			}
		}
		var keep []*sessionSig
		for _, sig := range c.cands {
			if c.r.holds(sig, msgs, lms) {
				keep = append(keep, sig)
			}
		}
		if len(keep) > 0 {
			c.cands = keep
		} else if sig := c.withMethod(msgs); sig != nil {
			// No session holds what the client sent, and the one it is
			// served lacks the method too: the error is answered from one
			// that has it, so that it says what the trace holds of the
			// method (its params), not that it holds none.
			if err := c.choose(sig); err != nil {
				return nil, err
			}
		}
		if c.cur == nil || !slices.ContainsFunc(c.cands, func(s *sessionSig) bool { return s.n == c.n }) {
			if err := c.choose(c.cands[0]); err != nil {
				return nil, err
			}
		}
		if len(c.cands) > 1 {
			c.log = append(c.log, frame)
		} else {
			c.log = nil
		}
	} else if c.cur == nil {
		if err := c.choose(c.cands[0]); err != nil {
			return nil, err
		}
	}
	outs := c.cur.handle(frame)
	if c.cur.readErr != nil {
		return nil, c.cur.readErr
	}
	return outs, nil
}

// withMethod returns the first candidate that has a request of the
// method of a request in msgs that the session served now has none of;
// nil when there is no such request or no such candidate.
func (c *replayConn) withMethod(msgs []*jsonrpc.Message) *sessionSig {
	i := slices.IndexFunc(c.cands, func(s *sessionSig) bool { return s.n == c.n })
	if c.cur == nil || i < 0 {
		return nil
	}
	for _, m := range msgs {
		if m.Kind() != jsonrpc.KindRequest || c.cands[i].methods[m.Method] {
			continue
		}
		for _, sig := range c.cands {
			if sig.methods[m.Method] {
				return sig
			}
		}
	}
	return nil
}

// holds reports whether session sig can answer msgs, redacted as lms: it
// holds each request and notification (initialize, server/discover and
// ping any session answers). As in pickLive, a message redacted by the
// live client's memory is looked for redacted by the rules alone too.
func (r *Replayer) holds(sig *sessionSig, msgs, lms []*jsonrpc.Message) bool {
	for i, m := range msgs {
		k := m.Kind()
		if k != jsonrpc.KindRequest && k != jsonrpc.KindNotification {
			continue
		}
		if k == jsonrpc.KindRequest && m.Method == mcp.MethodInitialize {
			if !sig.legacy {
				return false
			}
			continue
		}
		if k == jsonrpc.KindRequest && (m.Method == mcp.MethodDiscover || m.Method == mcp.MethodPing) {
			continue
		}
		paths := pathsFor(r.ignore, m.Method)
		if sig.keys[keyHash(canonicalWith(lms[i], paths, r.norm))] {
			continue
		}
		if lms[i] == m {
			return false
		}
		if plain := parseMessage(r.red.Frame(m.Raw)); bytes.Equal(plain.Raw, lms[i].Raw) || !sig.keys[keyHash(canonicalWith(plain, paths, r.norm))] {
			return false
		}
	}
	return true
}

// Serve replays the recorded server on conn, the server's end of a
// connection (the other end of a transport.Pipe in tests, stdin and stdout
// for `mcpx replay`), until the client closes it or ctx ends: one session
// of the trace, the one that matches the client (see Replayer). It
// returns nil when the client ended the session, and in strict mode a
// *DeviationError on the first departure from the recording (after
// answering the message that caused it). Serve does not close conn, but
// for a fault that closes it (see Fault) and where the recorded server
// closed the connection (a ServerEndedNote in the trace: a server that
// crashed or exited mid-request; in a stdio trace that notes neither the
// server's end nor the client's, as older mcpx wrote them, the end of a
// session whose client's last message is a request never answered), so
// that the client sees its server go away as the recorded client did
// (ReplayOptions.OnServerEnd is told how); it then returns nil. A fault
// with an HTTP status is ErrHTTPFault.
//
// The connection engine (jsonrpc/peer) reads conn; each frame is answered
// in order with what the recorded server did because of it: at once, on
// the engine's read loop, or, with ReplayOptions.Pace or a delay fault,
// each thing after its recorded delay, on a goroutine of Serve's (so a
// request sent while an earlier one's answer is still due waits for it;
// once the client leaves, nothing waits any longer).
func (r *Replayer) Serve(ctx context.Context, conn transport.Conn) error {
	if conn == nil {
		return nilArgument("Replayer.Serve", "the connection")
	}
	for _, f := range r.opts.Faults {
		if f.HTTPStatus != 0 {
			return fmt.Errorf("fault %s: %w", f, ErrHTTPFault)
		}
	}
	c := r.newConn("")
	start := time.Now()
	prelude, err := c.start()
	if err != nil {
		return err
	}
	if closed, err := r.send(ctx, ctx, conn, c.cur, prelude, start); err != nil || closed {
		return err
	}
	stop := make(chan error, 1)
	var stopped atomic.Bool
	gone := make(chan struct{}) // closed once the client's side ended
	answer := func(f transport.Frame) {
		if stopped.Load() {
			return
		}
		closed, err := r.answerFrame(ctx, gone, conn, c, f)
		if err == nil && c.cur.err != nil {
			err = c.cur.err
		}
		if err != nil || closed {
			stopped.Store(true)
			stop <- err
		}
	}
	// Frames are answered in order on the engine's read loop; when
	// answers wait (pacing, delays), on a goroutine of their own, so that
	// the read loop still sees the client leave.
	var queue *frameQueue
	worked := make(chan struct{})
	if r.waits() {
		queue = newFrameQueue()
		go func() {
			defer close(worked)
			for f, ok := queue.pop(); ok; f, ok = queue.pop() {
				answer(f)
			}
		}()
	} else {
		close(worked)
	}
	var goneOnce sync.Once
	leave := func() {
		goneOnce.Do(func() {
			close(gone)
			if queue != nil {
				queue.close()
			}
		})
	}
	defer leave()
	p := peer.New(conn, peer.Options{Intercept: func(f transport.Frame) bool {
		if queue != nil {
			queue.push(f)
		} else {
			answer(f)
		}
		return true
	}})
	p.Start()
	defer p.Stop()
	select {
	case err := <-stop:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Done():
	}
	// The frames read are answered (without waiting any longer).
	leave()
	<-worked
	if err := p.Err(); !errors.Is(err, io.EOF) && !errors.Is(err, transport.ErrClosed) {
		return err
	}
	select {
	case err := <-stop:
		// The last frame's answer failed, or deviated.
		return err
	default:
	}
	c.cur.finish()
	if c.cur.readErr != nil {
		return c.cur.readErr
	}
	if c.cur.err != nil {
		return c.cur.err
	}
	return nil
}

// send does outs, what the recorded server did because of a client message
// that came at base (or, for the prelude, when the session began): paced,
// when ReplayOptions.Pace says so, for as long as wait lasts. Where the
// recorded server closed the connection, send closes conn and reports
// closed.
func (r *Replayer) send(ctx, wait context.Context, conn transport.Conn, s *replaySession, outs []output, base time.Time) (closed bool, err error) {
	paced := len(outs) > 0 && r.paced(s.sc)
	for _, o := range outs {
		if paced && wait.Err() == nil {
			if err := r.pace(wait, base, o.after); err != nil && ctx.Err() != nil {
				return false, ctx.Err()
			}
		}
		if o.end {
			if r.opts.OnServerEnd != nil && o.exit != nil {
				r.opts.OnServerEnd(*o.exit)
			}
			conn.Close()
			return true, nil
		}
		if o.isStderr {
			if r.opts.OnStderr != nil {
				r.opts.OnStderr(o.stderr)
			}
			continue
		}
		data := o.frame
		if o.refused != 0 || o.dropped != "" {
			// Refused over HTTP without an answer, or its POST failed;
			// over a connection the client would wait forever: an error
			// says what happened.
			id, ok := s.liveRequest(o.root)
			if !ok {
				continue
			}
			data = jsonrpc.EncodeResponse(id, nil, noAnswerError(o))
		}
		if bytes.IndexByte(data, '\n') >= 0 {
			// Recorded over HTTP with line breaks; stdio framing has none.
			var b bytes.Buffer
			if json.Compact(&b, data) == nil {
				data = b.Bytes()
			} else {
				data = bytes.ReplaceAll(data, []byte("\n"), []byte(" "))
			}
		}
		if err := conn.Write(ctx, transport.Frame{Data: data}); err != nil {
			return false, err
		}
	}
	return false, nil
}

// ServePipe starts serving one session in the background and returns the
// client's end of an in-memory connection to it: the replayed server for
// a test. Closing the returned Conn ends the session. The replay's result
// (nil, or the first deviation in strict mode) is sent on the channel when
// the session ends.
func (r *Replayer) ServePipe(ctx context.Context) (transport.Conn, <-chan error) {
	client, server := transport.Pipe()
	done := make(chan error, 1)
	var once sync.Once
	go func() {
		err := r.Serve(ctx, server)
		once.Do(func() { server.Close() })
		done <- err
	}()
	return client, done
}

// noAnswerError is the JSON-RPC error that stands for an HTTP answer
// without a JSON-RPC message where the replay has no HTTP answer to give
// (over stdio, or on an HTTP+SSE connection's event stream): o is a
// refusal or a failed POST.
func noAnswerError(o output) *jsonrpc.Error {
	if o.dropped != "" {
		return &jsonrpc.Error{Code: -32603, Message: "mcpx replay: the recorded client's POST of this request failed: " + o.dropped}
	}
	return &jsonrpc.Error{Code: -32603, Message: fmt.Sprintf("mcpx replay: the recorded server refused this request with HTTP %d: %s", o.refused, o.refusedText)}
}

// taskProgressPaths are the members of a tasks/get result that say how
// far the task has come (spec 2025-11-25: basic/utilities/tasks, "Task
// Status Lifecycle"), built when first used.
var taskProgressPaths = sync.OnceValue(func() []*Path {
	return []*Path{MustParsePath("$.result.status"), MustParsePath("$.result.statusMessage")}
})
