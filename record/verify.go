package record

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Ignore lists what is not compared: JSONPath expressions evaluated
	// against each whole message (e.g. $.result.serverInfo.version, or
	// $..timestamp), each perhaps scoped to one method as METHOD:JSONPATH
	// (tools/call:$.result._meta; a response counts as its request's
	// method, see ParseIgnore). METHOD:$ leaves the notifications or
	// server requests of that method out altogether, their number too.
	// The trace header's ignores apply as well.
	Ignore []string
	// Normalize lists normalizers applied to the string values of live
	// and recorded messages before they are compared, in addition to the
	// trace header's (see Normalizer).
	Normalize []Normalizer
	// Timeout bounds the wait for each response; zero means 30s.
	Timeout time.Duration
	// Dial opens a connection to the server for one session of the trace
	// (numbered from 1; info says how it was recorded). Each session is
	// verified on a connection of its own, as it was recorded: over stdio
	// a new server process, over HTTP a new MCP session. Verify closes
	// what Dial opened once the session is verified. Without Dial only the
	// session that gets the connection given to Verify is verified; the
	// others are reported as not verified.
	Dial func(ctx context.Context, session int, info SessionInfo) (transport.Conn, error)
	// Secrets are the secret values the caller knows (the credentials it
	// sends the live server, its command line's): a live server that
	// echoes one (a whoami tool, an error quoting the request) has it
	// redacted, as a recording redacts it, before its message is compared
	// with the recorded one and wherever the result quotes it. Unless the
	// trace was recorded without redaction (--no-redact).
	Secrets *Secrets
}

// Mismatch is one recorded exchange the live server did not reproduce, or
// something else the session did differently.
type Mismatch struct {
	// Session is the session of the trace it is in, from 1.
	Session int
	// Exchange numbers the request in its session (1 is the first request
	// the client sent, usually initialize); 0 when the mismatch is about
	// no request: a notification the client sent, or what the server sent
	// outside any request.
	Exchange int
	// Method is the request's method (or the client's notification's);
	// empty for what the server sent outside any request. Request holds
	// the recorded params.
	Method  string
	Request json.RawMessage
	// Problem says what went wrong in a few words ("the response differs",
	// "no response within 30s").
	Problem string
	// Diffs lists the differences.
	Diffs []Difference
	// MoreDiffs counts differences beyond those listed.
	MoreDiffs int
	// Recorded and Live are the responses (nil when absent), the live one
	// redacted as the recording was.
	Recorded, Live json.RawMessage
}

// VerifyResult is what Verify found.
type VerifyResult struct {
	// Sessions counts the sessions of the trace that were verified.
	Sessions int
	// Exchanges counts the recorded requests whose outcomes were compared.
	Exchanges int
	// Mismatches lists what differs, by session, in recorded order.
	Mismatches []Mismatch
	// Notifications counts the notifications the live server sent.
	Notifications int
	// ServerRequests counts the requests the live server sent, answered
	// from the recording.
	ServerRequests int
	// Unanswered counts the recorded requests the recording holds no
	// outcome for (the recorded server never answered, the client
	// cancelled or gave up, the recording was killed, its last line cut
	// short): sent to the live server, their responses not compared
	// (what the server sent in their windows is, as far as the
	// recording goes, and counts as an exchange). The summary says so,
	// since a trace whose answers are gone (cut short, edited) would
	// otherwise pass with fewer exchanges and no word. A
	// subscriptions/listen still open when the recording ended is not
	// counted: it is not answered before it ends.
	Unanswered int
	// Compared lists the exchanges whose outcomes were compared (as many
	// as Exchanges), by session in recorded order, for reports that list
	// what passed as well as what failed (WriteJUnit).
	Compared []Compared
	// Lost is set when the live server could not be talked to: the
	// first exchange the recording has an outcome for that got none
	// live, because the connection could not be made or ended, or no
	// response came in time (its Mismatch is among Mismatches too). The
	// differences are then no finding about the server, only about its
	// absence: UpdateTrace keeps the old trace, and a caller may report
	// the connection's failure rather than the differences.
	Lost *LostError
	// Kept is set by UpdateTrace when it left the trace as it was, the
	// live server matching it (see UpdateOptions.Always).
	Kept bool
}

// LostError reports an exchange the live server left without an outcome
// (VerifyResult.Lost). It wraps why: the transport's error when the
// connection could not be made (transport.ErrConnect) or ended
// (transport.ErrClosed, a *transport.PeerExitError), or a
// *peer.TimeoutError when no response came in time.
type LostError struct {
	// Session and Exchange say where it is, as in Mismatch; Method is the
	// request's.
	Session, Exchange int
	Method            string
	Err               error
}

func (e *LostError) Error() string {
	where := fmt.Sprintf("exchange %d %s", e.Exchange, e.Method)
	if e.Session > 1 {
		where = fmt.Sprintf("session %d, %s", e.Session, where)
	}
	return fmt.Sprintf("the live server gave no answer to %s: %v", where, e.Err)
}

// Unwrap returns why the exchange got no outcome.
func (e *LostError) Unwrap() error { return e.Err }

// Compared is one recorded exchange Verify compared with the live one.
type Compared struct {
	// Session and Exchange say where it is, as in Mismatch.
	Session, Exchange int
	// Method is the request's method; Request holds its recorded params.
	Method  string
	Request json.RawMessage
	// OK says it matched; otherwise a Mismatch of the same Session and
	// Exchange says how it differs.
	OK bool
	// Time is how long the live server took to give its outcome (zero
	// when it gave none).
	Time time.Duration
}

// OK reports whether every exchange matched.
func (r *VerifyResult) OK() bool { return len(r.Mismatches) == 0 }

// Changed counts what differs, as a new recording (UpdateTrace) changes
// it: the recorded exchanges whose outcome differs, each once however many
// of its parts do (at most Exchanges), and the differences outside any
// exchange (what the server sent outside any request, the outcome of a
// notification the client sent), which Mismatches holds as well.
func (r *VerifyResult) Changed() (exchanges, other int) {
	seen := map[[2]int]bool{}
	for _, m := range r.Mismatches {
		k := [2]int{m.Session, m.Exchange}
		switch {
		case m.Exchange == 0:
			other++
		case !seen[k]:
			seen[k] = true
			exchanges++
		}
	}
	return exchanges, other
}

// Summary is a one-line account of the result.
func (r *VerifyResult) Summary() string {
	s := fmt.Sprintf("%d exchange(s) verified", r.Exchanges)
	if r.Sessions > 1 {
		s += fmt.Sprintf(" in %d sessions", r.Sessions)
	}
	s += fmt.Sprintf(", %d mismatch(es)", len(r.Mismatches))
	if r.ServerRequests > 0 {
		s += fmt.Sprintf("; answered %d server request(s) from the recording", r.ServerRequests)
	}
	if r.Unanswered > 0 {
		s += fmt.Sprintf("; %d request(s) the recording has no answer to (their responses not compared)", r.Unanswered)
	}
	return s
}

// Err returns nil when every exchange matched, else a *VerifyError.
func (r *VerifyResult) Err() error {
	if r.OK() {
		return nil
	}
	return &VerifyError{Result: r}
}

// VerifyError reports a failed verification; it matches ErrMismatch.
type VerifyError struct{ Result *VerifyResult }

func (e *VerifyError) Error() string {
	m := e.Result.Mismatches[0]
	// Mismatches outside the exchanges (what the server sent outside any
	// request, a notification that could not be sent) are counted apart.
	differ := 0
	for _, mm := range e.Result.Mismatches {
		if mm.Exchange > 0 {
			differ++
		}
	}
	var msg string
	switch other := len(e.Result.Mismatches) - differ; {
	case differ == 0:
		msg = fmt.Sprintf("%d difference(s) from the recording outside the %d exchange(s), which match", other, e.Result.Exchanges)
	case other == 0:
		msg = fmt.Sprintf("%d of %d exchange(s) differ from the recording", differ, e.Result.Exchanges)
	default:
		msg = fmt.Sprintf("%d of %d exchange(s) differ from the recording, and %d other difference(s)", differ, e.Result.Exchanges, other)
	}
	msg += fmt.Sprintf("; first: %s: %s", m.Where(e.Result.Sessions > 1), m.Problem)
	if len(m.Diffs) > 0 {
		d := m.Diffs[0]
		at := d.Path
		if d.Message != "" {
			at = d.Message + " " + d.Path
		}
		msg += fmt.Sprintf(" at %s (recorded %s, live %s)", at, orAbsent(d.Recorded), orAbsent(d.Live))
	}
	return msg
}

// Is makes errors.Is(err, ErrMismatch) true.
func (e *VerifyError) Is(target error) bool { return target == ErrMismatch }

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return rawjson.Shorten(s, 80)
}

// Label names the exchange for people: the method, with the tool, prompt
// or resource it is about (tools/call "echo"); for what the server sent
// outside any request, that.
func (m *Mismatch) Label() string {
	if m.Method == "" {
		return "outside any request"
	}
	var name struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(m.Request, &name)
	switch {
	case name.Name != "":
		return fmt.Sprintf("%s %q", m.Method, name.Name)
	case name.URI != "":
		return fmt.Sprintf("%s %s", m.Method, name.URI)
	}
	return m.Method
}

// Where names the mismatch with its place for people: "exchange 3
// tools/call "echo"", preceded by "session 2, " when withSession is set
// (a trace of several sessions).
func (m *Mismatch) Where(withSession bool) string {
	var b strings.Builder
	if withSession {
		fmt.Fprintf(&b, "session %d, ", m.Session)
	}
	if m.Exchange > 0 {
		fmt.Fprintf(&b, "exchange %d ", m.Exchange)
	}
	b.WriteString(m.Label())
	return b.String()
}

// MarshalJSON gives the result the form `mcpx verify --json` prints:
// {"ok", "sessions", "exchanges", "mismatches": [{"session", "exchange",
// "method", "params", "problem", "diffs": [{"message", "path", "recorded",
// "live", "shortened"}], "moreDiffs"}], "notifications", "serverRequests",
// "unanswered"}, where an absent value has no recorded or live member, a
// difference in the response no message, shortened is true for excerpts
// (see Difference), and unanswered is left out when 0.
func (r *VerifyResult) MarshalJSON() ([]byte, error) {
	type diff struct {
		Message   string          `json:"message,omitempty"`
		Path      string          `json:"path"`
		Recorded  json.RawMessage `json:"recorded,omitempty"`
		Live      json.RawMessage `json:"live,omitempty"`
		Shortened bool            `json:"shortened,omitempty"`
	}
	type mismatch struct {
		Session   int             `json:"session"`
		Exchange  int             `json:"exchange,omitempty"`
		Method    string          `json:"method,omitempty"`
		Params    json.RawMessage `json:"params,omitempty"`
		Problem   string          `json:"problem"`
		Diffs     []diff          `json:"diffs,omitempty"`
		MoreDiffs int             `json:"moreDiffs,omitempty"`
	}
	out := struct {
		OK             bool       `json:"ok"`
		Sessions       int        `json:"sessions"`
		Exchanges      int        `json:"exchanges"`
		Mismatches     []mismatch `json:"mismatches"`
		Notifications  int        `json:"notifications"`
		ServerRequests int        `json:"serverRequests"`
		Unanswered     int        `json:"unanswered,omitempty"`
		Kept           bool       `json:"kept,omitempty"`
	}{Kept: r.Kept, OK: r.OK(), Sessions: r.Sessions, Exchanges: r.Exchanges, Mismatches: []mismatch{}, Notifications: r.Notifications, ServerRequests: r.ServerRequests, Unanswered: r.Unanswered}
	raw := func(s string) json.RawMessage {
		if s == "" || !json.Valid([]byte(s)) {
			return nil
		}
		return json.RawMessage(s)
	}
	for _, m := range r.Mismatches {
		mm := mismatch{Session: m.Session, Exchange: m.Exchange, Method: m.Method, Problem: m.Problem, MoreDiffs: m.MoreDiffs}
		if len(m.Request) > 0 && json.Valid(m.Request) {
			mm.Params = m.Request
		}
		for _, d := range m.Diffs {
			mm.Diffs = append(mm.Diffs, diff{Message: d.Message, Path: d.Path, Recorded: raw(d.Recorded), Live: raw(d.Live), Shortened: d.Shortened})
		}
		out.Mismatches = append(out.Mismatches, mm)
	}
	return json.Marshal(out)
}

// Verify re-sends the client side of a recorded trace to a live server
// and compares what the server does with what the recorded server did:
// each response (or HTTP refusal) with the recorded one, the
// notifications and requests the server sent while handling each request
// (in order within that request's window, see below), and what it sent
// outside any request. Requests get fresh ids (and notifications/cancelled
// the matching ones); everything else goes out exactly as recorded.
// Requests the server sends are answered with the recorded answers to the
// same request. Messages are compared as JSON after normalizing what
// legitimately changes between runs (ids, session ids, timestamps, and
// what the normalizers of opts and of the trace header replace) and
// dropping what the ignores select; the lists of tools, prompts,
// resources and resource templates are compared by name (uri), so that a
// renamed or reordered entry is one difference.
//
// Each session of the trace is verified on its own connection: the first
// on conn (when it is not nil), the others on connections opts.Dial
// opens. Frames are sent in the recorded order, each once the responses
// the recording shows arriving before it have arrived. A frame the server
// refuses (an HTTP error status) is an outcome compared with the
// recorded one, and the session goes on; a session whose connection ends
// reports what it could not send. Verify does not close conn. It returns
// an error when the trace cannot be read, a connection cannot be opened
// or ctx ends; the result then holds what was compared before.
//
// A notification or server request belongs to the window of the request
// that caused it: the one whose progress token it carries, the one whose
// response came on the same HTTP stream, or else (a list_changed or
// task status notification excepted: a server's timer or a task decides
// which request it falls beside) the one request awaiting its response
// when it came. What
// belongs to no request (several were pending, or none) is compared per
// session; a session lasts, bounded
// by the timeout, until the live server sent as many of those messages of
// each method as the recorded one. Over Streamable HTTP, the GET stream
// for server-initiated messages is opened where the recorded client opened
// its own (never, when it did not), when the trace shows the client's HTTP
// requests; otherwise once the protocol version is negotiated.
func Verify(ctx context.Context, tr *Trace, conn transport.Conn, opts VerifyOptions) (*VerifyResult, error) {
	return VerifySessions(ctx, tr, conn, opts)
}

// VerifySessions is Verify for any source of sessions: a TraceFile (see
// ReadOptions.Open) is read a session at a time, and each session as its
// events are needed, so that a large trace is verified in memory
// proportional to the traffic in flight rather than to the file.
func VerifySessions(ctx context.Context, src SessionSource, conn transport.Conn, opts VerifyOptions) (*VerifyResult, error) {
	r, err := verifySessions(ctx, src, conn, opts)
	if r == nil {
		return nil, err
	}
	return &r.res, err
}

// verifySessions is VerifySessions; it returns the run (nil when it did
// not start).
func verifySessions(ctx context.Context, src SessionSource, conn transport.Conn, opts VerifyOptions) (*verifyRun, error) {
	if nilSource(src) {
		return nil, nilArgument("Verify", "the trace")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	h := src.TraceHeader()
	ignores, err := ParseIgnores(h.Ignore)
	if err != nil {
		return nil, fmt.Errorf("the trace's ignores: %w", err)
	}
	own, err := ParseIgnores(opts.Ignore)
	if err != nil {
		return nil, err
	}
	norms := append(append([]Normalizer(nil), h.Normalize...), opts.Normalize...)
	if _, err := CompileNormalizers(norms, nil); err != nil {
		return nil, err
	}
	red, err := NewRedactor(h.RedactOptions())
	if err != nil {
		return nil, fmt.Errorf("the trace's redaction: %w", err)
	}
	r := &verifyRun{opts: opts, header: h, ignores: append(ignores, own...), norms: norms, red: red,
		xheaders: map[string][]mcp.HeaderParam{}}
	for i, n := range src.SessionNumbers() {
		info, events := sessionEvents(src, n)
		c := conn
		if i > 0 {
			c = nil
		}
		if err := r.session(ctx, n, info, events, c); err != nil {
			r.sort()
			return r, err
		}
	}
	r.sort()
	return r, nil
}

// verifyRun is one run of Verify over the sessions of a trace.
type verifyRun struct {
	opts    VerifyOptions
	header  Header
	ignores []Ignore
	norms   []Normalizer
	red     *Redactor
	// xheaders holds the x-mcp-header annotations of the tools the
	// recorded server listed, by tool name, to fill in Mcp-Param values
	// the recording redacted or never had.
	xheaders map[string][]mcp.HeaderParam

	res   VerifyResult
	order []int // the recorded position of each mismatch, for sort
	// kept counts the live server's messages the sessions kept (see
	// maxHeld), for tests.
	kept int
}

// add files a mismatch found at position pos of session n's events.
func (r *verifyRun) add(pos int, m Mismatch) {
	r.res.Mismatches = append(r.res.Mismatches, m)
	r.order = append(r.order, pos)
}

// sort puts the mismatches in recorded order, by session.
func (r *verifyRun) sort() {
	type item struct {
		m   Mismatch
		pos int
	}
	items := make([]item, len(r.res.Mismatches))
	for i, m := range r.res.Mismatches {
		items[i] = item{m, r.order[i]}
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if a.m.Session != b.m.Session {
			return a.m.Session - b.m.Session
		}
		return a.pos - b.pos
	})
	for i, it := range items {
		r.res.Mismatches[i], r.order[i] = it.m, it.pos
	}
	slices.SortStableFunc(r.res.Compared, func(a, b Compared) int {
		if a.Session != b.Session {
			return a.Session - b.Session
		}
		return a.Exchange - b.Exchange
	})
}
