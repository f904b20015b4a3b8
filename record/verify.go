package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Ignore lists JSONPath expressions, evaluated against each whole
	// response message, whose values are not compared (e.g.
	// $.result.serverInfo.version, or $..timestamp).
	Ignore []string
	// Timeout bounds the wait for each response; zero means 30s.
	Timeout time.Duration
}

// Mismatch is one recorded exchange the live server did not reproduce.
type Mismatch struct {
	// Method is the request's method; Request its recorded params.
	Method  string
	Request json.RawMessage
	// Problem says what went wrong in a few words ("the response differs",
	// "no response within 30s").
	Problem string
	// Diffs lists the differences when both responses exist.
	Diffs []Difference
	// MoreDiffs counts differences beyond those listed.
	MoreDiffs int
	// Recorded and Live are the responses (nil when absent).
	Recorded, Live json.RawMessage
}

// VerifyResult is what Verify found.
type VerifyResult struct {
	// Exchanges counts the recorded requests whose responses were compared.
	Exchanges int
	// Mismatches lists the exchanges that differ, in recorded order.
	Mismatches []Mismatch
	// Notifications counts the notifications the live server sent.
	Notifications int
	// ServerRequests counts the requests the live server sent, answered
	// from the recording.
	ServerRequests int
}

// OK reports whether every exchange matched.
func (r *VerifyResult) OK() bool { return len(r.Mismatches) == 0 }

// Summary is a one-line account of the result.
func (r *VerifyResult) Summary() string {
	s := fmt.Sprintf("%d exchange(s) verified, %d mismatch(es)", r.Exchanges, len(r.Mismatches))
	if r.ServerRequests > 0 {
		s += fmt.Sprintf("; answered %d server request(s) from the recording", r.ServerRequests)
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
	msg := fmt.Sprintf("%d of %d exchange(s) differ from the recording; first: %s: %s", len(e.Result.Mismatches), e.Result.Exchanges, m.Label(), m.Problem)
	if len(m.Diffs) > 0 {
		d := m.Diffs[0]
		msg += fmt.Sprintf(" at %s (recorded %s, live %s)", d.Path, orAbsent(d.Recorded), orAbsent(d.Live))
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
// or resource it is about (tools/call "echo").
func (m *Mismatch) Label() string {
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

// MarshalJSON gives the result the form `mcpx verify --json` prints:
// {"ok", "exchanges", "mismatches": [{"method", "params", "problem",
// "diffs": [{"path", "recorded", "live"}], "moreDiffs"}], "serverRequests"},
// where an absent value has no recorded or live member.
func (r *VerifyResult) MarshalJSON() ([]byte, error) {
	type diff struct {
		Path     string          `json:"path"`
		Recorded json.RawMessage `json:"recorded,omitempty"`
		Live     json.RawMessage `json:"live,omitempty"`
	}
	type mismatch struct {
		Method    string          `json:"method"`
		Params    json.RawMessage `json:"params,omitempty"`
		Problem   string          `json:"problem"`
		Diffs     []diff          `json:"diffs,omitempty"`
		MoreDiffs int             `json:"moreDiffs,omitempty"`
	}
	out := struct {
		OK             bool       `json:"ok"`
		Exchanges      int        `json:"exchanges"`
		Mismatches     []mismatch `json:"mismatches"`
		Notifications  int        `json:"notifications"`
		ServerRequests int        `json:"serverRequests"`
	}{OK: r.OK(), Exchanges: r.Exchanges, Mismatches: []mismatch{}, Notifications: r.Notifications, ServerRequests: r.ServerRequests}
	raw := func(s string) json.RawMessage {
		if s == "" || !json.Valid([]byte(s)) {
			return nil
		}
		return json.RawMessage(s)
	}
	for _, m := range r.Mismatches {
		mm := mismatch{Method: m.Method, Problem: m.Problem, MoreDiffs: m.MoreDiffs}
		if len(m.Request) > 0 && json.Valid(m.Request) {
			mm.Params = m.Request
		}
		for _, d := range m.Diffs {
			mm.Diffs = append(mm.Diffs, diff{Path: d.Path, Recorded: raw(d.Recorded), Live: raw(d.Live)})
		}
		out.Mismatches = append(out.Mismatches, mm)
	}
	return json.Marshal(out)
}

// exchange is one recorded request, its recorded response and, once it
// arrives, the live one.
type exchange struct {
	req      *jsonrpc.Message
	resp     *jsonrpc.Message // recorded; nil when the recording has none
	live     *jsonrpc.Message
	liveID   jsonrpc.ID
	pending  *peer.Pending // the live request, once sent
	sent     bool
	timedOut bool
	// refused is the HTTP error a stateless-era request got instead of an
	// answer (the recording may show the same: an era probe refused).
	refused error
}

// vItem is one recorded client frame to re-send, with the exchanges whose
// responses the recording shows arriving before it was sent.
type vItem struct {
	frame   []byte
	route   *transport.Route // as recorded; nil when none was
	after   []*exchange
	reqs    []*exchange // requests in this frame, in order
	cancels bool        // holds notifications/cancelled (request ids to remap)
}

// serverReq is a request the recorded server sent, with the client's
// recorded answer.
type serverReq struct {
	key    string
	method string
	answer []byte // the recorded response message, nil when none
	used   bool
}

// verifier is one run of Verify.
type verifier struct {
	conn    transport.Conn
	peer    *peer.Peer // reads conn, files responses, answers the server's requests
	opts    VerifyOptions
	ignore  []*Path
	red     *Redactor
	items   []*vItem
	exch    []*exchange
	srvReqs []*serverReq
	ids     map[string]bool // session ids seen in the recording
	// derive says that a stateless-era message without a recorded route
	// gets one derived from its body: the trace's routes were not recorded
	// (older than Minor 1), or not on the wire (stdio). offWire says the
	// routes were not on the wire, so no Mcp-Param values were mirrored.
	derive, offWire bool
	// xheaders holds the x-mcp-header annotations of the tools the
	// recorded server listed, by tool name, to fill in Mcp-Param values
	// the recording redacted or never had.
	xheaders map[string][]mcp.HeaderParam
	states   map[string]json.RawMessage // recorded requestState (as an idKey) -> live one

	mu    sync.Mutex // guards what the engine's goroutines update
	res   VerifyResult
	extra []Mismatch // unexpected server requests
}

// Verify re-sends the client side of a recorded session to a live server
// over conn and compares each response with the recorded one. Requests get
// fresh ids (and notifications/cancelled the matching ones); everything
// else goes out exactly as recorded. Requests the server sends are
// answered with the recorded answers to the same method and params.
// Responses are compared as JSON after normalizing what legitimately
// changes between runs (ids, session ids, timestamps) and dropping what
// opts.Ignore selects.
//
// Frames are sent in the recorded order, each once the responses the
// recording shows arriving before it have arrived. Verify does not close
// conn. It returns an error only when the connection failed; the result
// then holds what was compared before.
func Verify(ctx context.Context, tr *Trace, conn transport.Conn, opts VerifyOptions) (*VerifyResult, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	ignore, err := ParsePaths(opts.Ignore)
	if err != nil {
		return nil, err
	}
	red, err := NewRedactor(RedactOptions{Disabled: !tr.Header.Redacted, Paths: tr.Header.Redact})
	if err != nil {
		return nil, fmt.Errorf("the trace's redaction paths: %w", err)
	}
	v := &verifier{conn: conn, opts: opts, ignore: ignore, red: red, ids: map[string]bool{},
		derive:   tr.Header.Minor < 1 || tr.Header.Transport != "http",
		offWire:  tr.Header.Transport != "http",
		xheaders: map[string][]mcp.HeaderParam{}, states: map[string]json.RawMessage{}}
	v.prepare(tr)

	// The engine reads the live server: responses go to the exchanges
	// that expect them (by id), requests are answered from the recording
	// (a batch with a batch), notifications are counted. It stops, without
	// closing conn, once every recorded frame went out and was answered.
	v.peer = peer.New(conn, peer.Options{
		Handler: v.answer,
		OnNotification: func(*jsonrpc.Message) {
			v.mu.Lock()
			v.res.Notifications++
			v.mu.Unlock()
		},
	})
	v.peer.Start()
	err = v.run(ctx)
	v.peer.Stop()
	v.compare()
	return &v.res, err
}

func (v *verifier) prepare(tr *Trace) {
	pending := map[string]*exchange{} // recorded request id -> exchange awaiting its response
	srvPending := map[string]*serverReq{}
	var arrived []*exchange
	for _, e := range tr.Events {
		if e.Meta != nil && e.Meta.SessionID != "" {
			v.ids[e.Meta.SessionID] = true
		}
		if e.Kind != KindFrame {
			continue
		}
		msgs, _ := parseFrame(e.Data)
		if e.Dir == ServerToClient {
			for _, m := range msgs {
				switch m.Kind() {
				case jsonrpc.KindResponse:
					if x := pending[m.ID.Key()]; x != nil {
						x.resp = m
						delete(pending, m.ID.Key())
						arrived = append(arrived, x)
						if x.req.Method == mcp.MethodToolsList {
							learnToolHeaders(m.Result, v.xheaders)
						}
					}
				case jsonrpc.KindRequest:
					sr := &serverReq{key: canonical(m, nil), method: m.Method}
					v.srvReqs = append(v.srvReqs, sr)
					srvPending[m.ID.Key()] = sr
				}
			}
			continue
		}
		it := &vItem{frame: e.Data, route: e.Route, after: arrived}
		arrived = nil
		onlyResponses := true
		for _, m := range msgs {
			switch m.Kind() {
			case jsonrpc.KindResponse:
				if sr := srvPending[m.ID.Key()]; sr != nil {
					sr.answer = m.Raw
					delete(srvPending, m.ID.Key())
				}
				continue
			case jsonrpc.KindRequest:
				x := &exchange{req: m}
				pending[m.ID.Key()] = x
				v.exch = append(v.exch, x)
				it.reqs = append(it.reqs, x)
			case jsonrpc.KindNotification:
				if m.Method == mcp.NotificationCancelled {
					it.cancels = true
				}
			}
			onlyResponses = false
		}
		if onlyResponses {
			// Answers to the server's requests are sent when it asks.
			if len(it.after) > 0 {
				arrived = it.after
			}
			continue
		}
		v.items = append(v.items, it)
	}
}

// run sends the recorded client frames in order.
func (v *verifier) run(ctx context.Context) error {
	for _, it := range v.items {
		for _, x := range it.after {
			if !v.await(ctx, x) {
				if err := v.failure(ctx); err != nil {
					return err
				}
				continue
			}
			if x.req.Method == mcp.MethodInitialize {
				if err := v.negotiate(ctx, x); err != nil {
					return err
				}
			}
			v.carryState(x)
		}
		frame := mapMessages(it.frame, func(msg []byte) []byte { return v.rewrite(msg, it) })
		route := v.route(it)
		if err := v.peer.Write(ctx, transport.Frame{Data: frame, Route: route}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var he *transport.HTTPError
			if route != nil && errors.As(err, &he) && he.Status >= 400 && he.Status < 500 {
				// A stateless request stands alone: its refusal ends
				// nothing else (spec 2026-07-28: basic/transports/
				// streamable-http).
				for _, x := range it.reqs {
					x.refused = err
				}
				continue
			}
			return fmt.Errorf("sending the recorded %s: %w", describeFrame(it.frame), v.cause(err))
		}
	}
	for _, x := range v.exch {
		if x.sent && x.resp != nil && !v.await(ctx, x) {
			if err := v.failure(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func describeFrame(frame []byte) string {
	msgs, _ := parseFrame(frame)
	if len(msgs) == 1 {
		return describe(msgs[0])
	}
	return fmt.Sprintf("batch of %d messages", len(msgs))
}

// failure returns the error that ended the connection, if it did.
func (v *verifier) failure(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case <-v.peer.Done():
		return fmt.Errorf("the connection ended: %w", v.peer.Err())
	default:
	}
	return nil
}

func (v *verifier) cause(err error) error {
	if rerr := v.peer.Err(); rerr != nil && !errors.Is(rerr, transport.ErrClosed) {
		return rerr
	}
	return err
}

// await waits for x's live response; false when it did not come in time
// or the connection ended.
func (v *verifier) await(ctx context.Context, x *exchange) bool {
	if !x.sent || x.refused != nil {
		return false
	}
	if x.live != nil {
		return true
	}
	t := time.NewTimer(v.opts.Timeout)
	defer t.Stop()
	select {
	case x.live = <-x.pending.Response():
		return true
	case <-t.C:
		x.timedOut = true
	case <-v.peer.Done():
		// A response may have been filed just before the end.
		select {
		case x.live = <-x.pending.Response():
			return true
		default:
		}
	case <-ctx.Done():
	}
	return false
}

// negotiate tells the transport the protocol version the live server
// chose, as the session would (HTTP: MCP-Protocol-Version, the GET stream).
func (v *verifier) negotiate(ctx context.Context, x *exchange) error {
	n, ok := transport.Find[transport.Negotiator](v.conn)
	if !ok || x.live == nil {
		return nil
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(x.live.Result, &res) != nil || res.ProtocolVersion == "" {
		return nil
	}
	return n.Negotiated(ctx, res.ProtocolVersion)
}

// rewrite gives a recorded request a fresh id, and points a recorded
// notifications/cancelled at the live id of the request it cancels.
func (v *verifier) rewrite(msg []byte, it *vItem) []byte {
	m := parseMessage(msg)
	switch m.Kind() {
	case jsonrpc.KindRequest:
		for _, x := range it.reqs {
			if x.sent || x.req.ID.Key() != m.ID.Key() {
				continue
			}
			id := v.peer.NextID()
			x.liveID, x.sent = id, true
			x.pending = v.peer.Expect(id, x.req.Method, nil)
			return v.liveState(replaceTop(msg, "id", id.Raw()))
		}
	case jsonrpc.KindNotification:
		if !it.cancels || m.Method != mcp.NotificationCancelled {
			return msg
		}
		spans := findSpans(msg, func(p []elem) bool {
			return len(p) == 2 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "requestId"
		})
		if len(spans) != 1 {
			return msg
		}
		old := idKey(msg[spans[0].start:spans[0].end])
		for i := len(v.exch) - 1; i >= 0; i-- {
			if x := v.exch[i]; x.sent && x.req.ID.Key() == old {
				return splice(msg, spans, func([]byte) []byte { return x.liveID.Raw() })
			}
		}
	}
	return msg
}

// answer replies to a request of the live server with the recorded answer
// to the same request (the engine sends it with the live id).
func (v *verifier) answer(_ context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
	key := canonical(m, nil)
	var sr *serverReq
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, c := range v.srvReqs {
		if c.key == key && !c.used && c.answer != nil {
			sr = c
			break
		}
	}
	if sr == nil {
		for _, c := range v.srvReqs {
			if c.key == key && c.answer != nil {
				sr = c
			}
		}
	}
	switch {
	case sr != nil:
		sr.used = true
		v.res.ServerRequests++
		ans := parseMessage(sr.answer)
		if ans.Error != nil {
			return nil, ans.Error
		}
		return ans.Result, nil
	case m.Method == mcp.MethodPing:
		return json.RawMessage("{}"), nil
	}
	v.extra = append(v.extra, Mismatch{
		Method:  m.Method,
		Request: m.Params,
		Problem: "the live server sent this request, but the recorded server never did (answered with an error)",
	})
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx verify: the recording has no answer to this " + m.Method + " request"}
}

// compare fills in the result.
func (v *verifier) compare() {
	live := map[string]bool{}
	if s, ok := transport.Find[interface{ SessionID() string }](v.conn); ok && s.SessionID() != "" {
		live[s.SessionID()] = true
	}
	for id := range v.ids {
		live[id] = true
	}
	for _, x := range v.exch {
		if x.live == nil && x.pending != nil {
			// A response that came after its wait timed out, or that no
			// one waited for, still counts.
			select {
			case x.live = <-x.pending.Response():
			default:
			}
		}
		if x.resp == nil {
			continue // the recording ended before this response
		}
		v.res.Exchanges++
		mm := Mismatch{Method: x.req.Method, Request: x.req.Params, Recorded: x.resp.Raw}
		if x.live == nil {
			switch {
			case x.refused != nil:
				mm.Problem = "refused: " + x.refused.Error()
			case !x.sent:
				mm.Problem = "not sent: the connection ended first"
			case x.timedOut:
				mm.Problem = fmt.Sprintf("no response within %s", v.opts.Timeout)
			default:
				mm.Problem = "no response: the connection ended first"
			}
			v.res.Mismatches = append(v.res.Mismatches, mm)
			continue
		}
		mm.Live = x.live.Raw
		if diffs, more := v.diff(x.resp, x.live, live); len(diffs) > 0 {
			mm.Problem = "the response differs"
			if x.resp.ErrorRaw != nil && x.live.ErrorRaw == nil || x.resp.ErrorRaw == nil && x.live.ErrorRaw != nil {
				mm.Problem = "the response differs (result vs error)"
			}
			mm.Diffs, mm.MoreDiffs = diffs, more
			v.res.Mismatches = append(v.res.Mismatches, mm)
		}
	}
	v.res.Mismatches = append(v.res.Mismatches, v.extra...)
}

// diff compares a recorded response with the live one, the live one
// redacted as the recording was. Responses that are objects (every valid
// one) are compared in place; anything else is decoded (comparable).
func (v *verifier) diff(rec, live *jsonrpc.Message, sessionIDs map[string]bool) ([]Difference, int) {
	liveRaw := live.Raw
	if v.red.Enabled() {
		liveRaw = v.red.Frame(liveRaw)
	}
	if isObject(rec.Raw) && isObject(liveRaw) {
		return diffResponses(rec.Raw, liveRaw, v.ignore, sessionIDs)
	}
	a := normalize(v.comparable(rec, nil), sessionIDs)
	b := normalize(v.comparable(live, v.red), sessionIDs)
	return diffJSON(a, b)
}

// isObject reports whether raw is a JSON object (valid JSON).
func isObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && scanJSON(t, nil).valid
}

// comparable decodes a response for comparison: without its id and
// jsonrpc members, redacted like the recording, minus what is ignored.
func (v *verifier) comparable(m *jsonrpc.Message, red *Redactor) any {
	raw := m.Raw
	if red.Enabled() {
		raw = red.Frame(raw)
	}
	val, ok := decode(raw)
	obj, isObj := val.(map[string]any)
	if !ok || !isObj {
		return strings.TrimSpace(string(raw))
	}
	delete(obj, "id")
	delete(obj, "jsonrpc")
	return removePaths(obj, v.ignore)
}

// route returns the route to send a recorded frame with: the recorded
// one, with values the recording redacted taken from the frame again
// (the frame holds "[redacted]" too when the argument was redacted, and
// header and body must agree); or, where the trace could not record
// routes, one derived from a stateless-era message (its _meta declares a
// 2026-07-28-era version); else none (the handshake era). Mcp-Param
// values that were not on the wire (a stdio recording) are taken from the
// arguments per the x-mcp-header annotations of the recorded tools/list,
// so a trace recorded over stdio can be verified over HTTP.
func (v *verifier) route(it *vItem) *transport.Route {
	msgs, batch := parseFrame(it.frame)
	if batch || len(msgs) != 1 || msgs[0].Kind() != jsonrpc.KindRequest && msgs[0].Kind() != jsonrpc.KindNotification {
		return it.route
	}
	m := msgs[0]
	if it.route == nil {
		if !v.derive {
			return nil
		}
		sr := mcp.StandardRoute(m.Method, m.Params)
		if !mcp.IsModernVersion(sr.ProtocolVersion) {
			return nil
		}
		return &transport.Route{ProtocolVersion: sr.ProtocolVersion, Method: sr.Method, Name: sr.Name, Params: v.mirrored(m, sr.Name)}
	}
	r := *it.route
	if r.Name == Placeholder {
		r.Name = mcp.StandardRoute(m.Method, m.Params).Name
	}
	if v.offWire && len(r.Params) == 0 {
		// Recorded where nothing is mirrored (stdio): the arguments an
		// HTTP server wants in headers are found as a client would.
		r.Params = v.mirrored(m, r.Name)
		return &r
	}
	var fresh []transport.RouteParam
	for i, p := range r.Params {
		if p.Value != Placeholder {
			continue
		}
		if fresh == nil {
			fresh = v.mirrored(m, r.Name)
			r.Params = append([]transport.RouteParam(nil), r.Params...)
		}
		for _, f := range fresh {
			if strings.EqualFold(f.Name, p.Name) {
				r.Params[i].Value = f.Value
			}
		}
	}
	return &r
}

// mirrored returns the Mcp-Param values of a tools/call, from the
// recorded x-mcp-header annotations of the tool.
func (v *verifier) mirrored(m *jsonrpc.Message, tool string) []transport.RouteParam {
	params := v.xheaders[tool]
	if m.Method != mcp.MethodToolsCall || len(params) == 0 {
		return nil
	}
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	values, err := mcp.HeaderValues(params, p.Arguments)
	if err != nil {
		return nil
	}
	var out []transport.RouteParam
	for _, v := range values {
		out = append(out, transport.RouteParam(v))
	}
	return out
}

// carryState notes the requestState the live server put in its answer
// to x where the recorded server put another: a multi-round request
// retried later must carry the live server's state, exactly (spec
// 2026-07-28: basic/patterns/mrtr). The states themselves are compared
// as recorded, like everything else in a result.
func (v *verifier) carryState(x *exchange) {
	if x.resp == nil || x.live == nil {
		return
	}
	rec, live := requestState(x.resp.Raw, isResultRequestState), requestState(x.live.Raw, isResultRequestState)
	if rec == nil || live == nil || idKey(rec) == idKey(live) {
		return
	}
	v.mu.Lock()
	v.states[idKey(rec)] = live
	v.mu.Unlock()
}

// liveState replaces a recorded request's params.requestState with the
// live server's, when it gave another.
func (v *verifier) liveState(msg []byte) []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.states) == 0 {
		return msg
	}
	spans := findSpans(msg, isParamsRequestState)
	if len(spans) != 1 {
		return msg
	}
	live, ok := v.states[idKey(msg[spans[0].start:spans[0].end])]
	if !ok {
		return msg
	}
	return splice(msg, spans, func([]byte) []byte { return live })
}

// requestState returns the value at the path match selects, or nil.
func requestState(msg []byte, match func([]elem) bool) json.RawMessage {
	spans := findSpans(msg, match)
	if len(spans) != 1 {
		return nil
	}
	return msg[spans[0].start:spans[0].end]
}

func isResultRequestState(p []elem) bool {
	return len(p) == 2 && p[0].index < 0 && p[0].key == "result" && p[1].index < 0 && p[1].key == "requestState"
}

func isParamsRequestState(p []elem) bool {
	return len(p) == 2 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "requestState"
}
