package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	// Ignore lists JSONPath expressions, evaluated against each whole
	// message, that do not count when a live *jsonrpc.Message is matched with the
	// recording (e.g. $.params._meta). $.params._meta.progressToken is
	// always ignored: it usually repeats the request id. So are the
	// protocol version, client capabilities and client identity that
	// every 2026-07-28-era request carries in _meta (what initialize
	// carries once in the handshake era): a client that differs there
	// gets the recorded answers, and the difference is reported once per
	// session (the identity only with Strict), as a different initialize
	// is.
	Ignore []string
	// Strict makes every departure from the recording an error: requests
	// out of the recorded order, repeated or unrecorded messages, answers
	// that differ, requests the client never sent.
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
}

// Deviation is a departure of the live client from the recording.
type Deviation struct {
	// Message says what happened and what the recording expected.
	Message string
}

// DeviationError is returned by a strict replay on the first deviation.
type DeviationError struct{ Deviation }

func (e *DeviationError) Error() string { return "replay: " + e.Message }

// Is makes errors.Is(err, ErrMismatch) true.
func (e *DeviationError) Is(target error) bool { return target == ErrMismatch }

// Replayer serves the server side of a recorded session: it answers each
// request of a live client with the recorded response to the request with
// the same method and params (ids do not matter), and sends the
// notifications and server-to-client requests the server sent after that
// request, in the recorded order. The initialize handshake is replayed
// like any other exchange, and so is the server/discover of the stateless
// 2026-07-28 era (answered from the recording even when its params
// differ, or made up from the recording when it has none). A request the
// recording has no answer for gets a JSON-RPC error that says what the
// recording expected.
//
// One Replayer can serve any number of sessions, each from the start of
// the recording.
type Replayer struct {
	opts ReplayOptions
	sc   *script
}

// NewReplayer prepares tr for replay.
func NewReplayer(tr *Trace, opts ReplayOptions) (*Replayer, error) {
	ignore, err := ParsePaths(append([]string{"$.params._meta.progressToken",
		metaPath(mcp.MetaProtocolVersion), metaPath(mcp.MetaClientCapabilities), metaPath(mcp.MetaClientInfo)}, opts.Ignore...))
	if err != nil {
		return nil, err
	}
	red, err := NewRedactor(RedactOptions{Disabled: !tr.Header.Redacted, Paths: tr.Header.Redact})
	if err != nil {
		return nil, fmt.Errorf("the trace's redaction paths: %w", err)
	}
	return &Replayer{opts: opts, sc: buildScript(tr, ignore, red)}, nil
}

// metaPath selects a member of a request's params._meta.
func metaPath(key string) string { return "$.params._meta['" + key + "']" }

// output is something the replayed server does: send a frame, or write a
// line on its stderr.
type output struct {
	frame    []byte
	stderr   string
	isStderr bool
	// status is the HTTP status a recorded JSON answer came with, when it
	// was an error status (a 2026-07-28 server answers an unsupported
	// version or header mismatch with 400, an unknown method with 404).
	status int
	// refused, set alone, is an HTTP error status the request got instead
	// of an answer (see step.refused).
	refused int
}

// step is one message the recorded client sent, with what the server did
// between it and the client's next frame.
type step struct {
	msg    *jsonrpc.Message
	key    string
	follow []output
	// modern marks a message of the stateless 2026-07-28 era: recorded
	// with a route, or declaring such a version in its _meta.
	modern bool
	// refused is the HTTP error status the recorded server refused this
	// stateless request with, without a JSON-RPC answer (a handshake-era
	// server refusing an era probe); 0 otherwise.
	refused int
}

// script is a recording prepared for replay. It is read-only once built;
// each session keeps its own progress through it.
type script struct {
	prelude []output // what the server did before the client said anything
	steps   []step
	byKey   map[string][]int
	ignore  []*Path
	red     *Redactor
	// modern says the recorded client spoke the stateless 2026-07-28 era
	// (a request's _meta declares such a version); legacy that it sent
	// initialize. A trace can show both (a probe, then a handshake).
	modern, legacy bool
	// xheaders holds the x-mcp-header annotations of the tools the
	// recorded server listed, by tool name.
	xheaders map[string][]mcp.HeaderParam
	// discover answers server/discover when the recording has none.
	discover []byte
}

func buildScript(tr *Trace, ignore []*Path, red *Redactor) *script {
	sc := &script{byKey: map[string][]int{}, ignore: ignore, red: red, xheaders: map[string][]mcp.HeaderParam{}}
	toolLists := map[string]bool{} // ids of recorded tools/list requests awaiting a response
	attach := func(o output) {
		if n := len(sc.steps); n > 0 {
			sc.steps[n-1].follow = append(sc.steps[n-1].follow, o)
		} else {
			sc.prelude = append(sc.prelude, o)
		}
	}
	// lastFrame is the first step of the last client frame while nothing
	// the server sent followed it; -1 otherwise.
	lastFrame := -1
	for _, e := range tr.Events {
		switch {
		case e.Kind == KindStderr:
			attach(output{stderr: e.Text, isStderr: true})
		case e.Kind == KindHTTP && lastFrame >= 0 && e.Meta != nil && e.Meta.HTTPMethod == "POST" && e.Meta.HTTPStatus >= 400:
			// The POST of a lone stateless request was refused without an
			// answer: the replay refuses it the same way.
			if st := &sc.steps[lastFrame]; lastFrame == len(sc.steps)-1 && st.modern && st.msg.Kind() == jsonrpc.KindRequest {
				st.refused = e.Meta.HTTPStatus
			}
			lastFrame = -1
		case e.Kind != KindFrame:
		case e.Dir == ServerToClient:
			lastFrame = -1
			o := output{frame: e.Data}
			if e.Meta != nil && e.Meta.HTTPStatus >= 400 {
				o.status = e.Meta.HTTPStatus
			}
			attach(o)
			if len(toolLists) > 0 {
				msgs, _ := parseFrame(e.Data)
				for _, m := range msgs {
					if m.Kind() == jsonrpc.KindResponse && toolLists[m.ID.Key()] {
						delete(toolLists, m.ID.Key())
						learnToolHeaders(m.Result, sc.xheaders)
					}
				}
			}
		case e.Dir == ClientToServer:
			lastFrame = len(sc.steps)
			msgs, _ := parseFrame(e.Data)
			for _, m := range msgs {
				modern := e.Route != nil || mcp.IsModernVersion(mcp.StandardRoute(m.Method, m.Params).ProtocolVersion)
				switch {
				case m.Kind() == jsonrpc.KindRequest && m.Method == mcp.MethodInitialize:
					sc.legacy = true
				case m.Kind() == jsonrpc.KindRequest && modern:
					sc.modern = true
				}
				if m.Kind() == jsonrpc.KindRequest && m.Method == mcp.MethodToolsList {
					toolLists[m.ID.Key()] = true
				}
				key := canonical(m, ignore)
				if m.Kind() == jsonrpc.KindResponse {
					key = "response-id:" + m.ID.Key()
				}
				sc.byKey[key] = append(sc.byKey[key], len(sc.steps))
				sc.steps = append(sc.steps, step{msg: m, key: key, modern: modern})
			}
		}
	}
	if sc.modern && sc.firstRequest(mcp.MethodDiscover) < 0 {
		sc.discover = synthesizeDiscover(sc)
	}
	return sc
}

// firstRequest returns the index of the first recorded request with
// method, or -1.
func (sc *script) firstRequest(method string) int {
	for i, st := range sc.steps {
		if st.msg.Kind() == jsonrpc.KindRequest && st.msg.Method == method {
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
// and the server's identity from a result's _meta (spec 2026-07-28:
// server/discover).
func synthesizeDiscover(sc *script) []byte {
	versions := []string{}
	caps := map[string]any{}
	for _, st := range sc.steps {
		if st.msg.Kind() != jsonrpc.KindRequest {
			continue
		}
		if v := mcp.StandardRoute(st.msg.Method, st.msg.Params).ProtocolVersion; v != "" && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
		switch prefix, _, _ := strings.Cut(st.msg.Method, "/"); prefix {
		case "tools", "resources", "prompts":
			caps[prefix] = map[string]any{}
		case "completion":
			caps["completions"] = map[string]any{}
		}
	}
	result := map[string]any{"resultType": "complete", "supportedVersions": versions, "capabilities": caps}
	for _, st := range sc.steps {
		for _, o := range st.follow {
			if o.isStderr {
				continue
			}
			msgs, _ := parseFrame(o.frame)
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
					return b
				}
			}
		}
	}
	b, _ := json.Marshal(result)
	return b
}

// replaySession is one client's progress through a script.
type replaySession struct {
	sc     *script
	opts   *ReplayOptions
	used   []bool
	cursor map[string]int             // per key: first possibly unused position in byKey[key]
	idMap  map[string]json.RawMessage // recorded request id key -> live id
	tokMap map[string]json.RawMessage // recorded progress token key -> live token
	next   int                        // first possibly unused request or notification, for strict order
	err    *DeviationError            // the first deviation, in strict mode
	// noted holds the per-request protocol fields (_meta keys) whose
	// difference from the recording was reported (once per session).
	noted map[string]bool
}

func (r *Replayer) newSession() *replaySession {
	return r.newEraSession("")
}

// newEraSession starts a session that replays only the messages of one
// era ("modern" or "legacy"; "" for all) of a recording that holds both
// (a client that probed with server/discover, then sent initialize): over
// HTTP each era's requests reach their own session, and what the other
// era's did is not this one's to repeat, in order or at all.
func (r *Replayer) newEraSession(era string) *replaySession {
	s := r.newAllSession()
	if era == "" || !r.sc.modern || !r.sc.legacy {
		return s
	}
	for i, st := range r.sc.steps {
		if st.modern != (era == "modern") {
			s.used[i] = true
		}
	}
	return s
}

func (r *Replayer) newAllSession() *replaySession {
	return &replaySession{
		sc:     r.sc,
		opts:   &r.opts,
		used:   make([]bool, len(r.sc.steps)),
		cursor: map[string]int{},
		idMap:  map[string]json.RawMessage{},
		tokMap: map[string]json.RawMessage{},
	}
}

// deviate reports a departure from the recording. Lenient ones are only
// reported in strict mode.
func (s *replaySession) deviate(lenient bool, format string, args ...any) {
	if lenient && !s.opts.Strict {
		return
	}
	d := Deviation{Message: fmt.Sprintf(format, args...)}
	if s.opts.OnDeviation != nil {
		s.opts.OnDeviation(d)
	}
	if s.opts.Strict && s.err == nil {
		s.err = &DeviationError{d}
	}
}

// pick returns the first unused step with key, or the last used one (a
// repeated message, answered again), or -1.
func (s *replaySession) pick(key string) (i int, repeat bool) {
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

// firstUnused returns the first unused request with method, or -1.
func (s *replaySession) firstUnused(method string) int {
	for i, st := range s.sc.steps {
		if !s.used[i] && st.msg.Kind() == jsonrpc.KindRequest && st.msg.Method == method {
			return i
		}
	}
	return -1
}

// checkOrder reports, in strict mode, a request or notification that
// skips one recorded before it.
func (s *replaySession) checkOrder(i int) {
	if !s.opts.Strict {
		return
	}
	for s.next < len(s.sc.steps) && (s.used[s.next] || s.sc.steps[s.next].msg.Kind() == jsonrpc.KindResponse) {
		s.next++
	}
	if s.next < i {
		s.deviate(false, "expected %s next, got %s", describe(s.sc.steps[s.next].msg), describe(s.sc.steps[i].msg))
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

// handle answers one frame from the client.
func (s *replaySession) handle(frame []byte) []output {
	msgs, _ := parseFrame(frame)
	var outs []output
	for _, m := range msgs {
		outs = append(outs, s.handleMsg(m)...)
	}
	return outs
}

func (s *replaySession) handleMsg(m *jsonrpc.Message) []output {
	lm := m
	if s.sc.red.Enabled() && m.Kind() != jsonrpc.KindInvalid {
		lm = parseMessage(s.sc.red.Frame(m.Raw))
	}
	switch m.Kind() {
	case jsonrpc.KindRequest:
		i, repeat := s.pick(canonical(lm, s.sc.ignore))
		if i >= 0 && repeat && m.Method != mcp.MethodDiscover {
			s.deviate(true, "%s was sent again; the recording has it only %d time(s) (answered with the recorded response again)", describe(m), len(s.sc.byKey[s.sc.steps[i].key]))
		}
		if i < 0 && (m.Method == mcp.MethodInitialize || m.Method == mcp.MethodDiscover) {
			// Opening a session (or asking what the server is) with other
			// params still gets the recorded answer.
			if i = s.firstUnused(m.Method); i < 0 && m.Method == mcp.MethodDiscover {
				if i = s.sc.firstRequest(m.Method); i >= 0 {
					repeat = true
				}
			}
			if i >= 0 {
				s.deviate(false, "%s params differ from the recording (got %s, recorded %s); answered with the recorded result",
					m.Method, rawjson.Excerpt(m.Params, 200), rawjson.Excerpt(s.sc.steps[i].msg.Params, 200))
			}
		}
		if i < 0 {
			switch {
			case m.Method == mcp.MethodPing:
				s.deviate(true, "ping was not in the recording (answered it anyway)")
				return []output{{frame: jsonrpc.EncodeResponse(m.ID, []byte("{}"), nil)}}
			case m.Method == mcp.MethodDiscover && s.sc.discover != nil:
				s.deviate(true, "the recording has no server/discover; answered with a result made from the recording")
				return []output{{frame: jsonrpc.EncodeResponse(m.ID, s.sc.discover, nil)}}
			}
			frame, code := s.unmatched(m)
			o := output{frame: frame}
			if code == -32601 && s.sc.modern {
				o.status = 404 // 2026-07-28: an unknown method is 404 over HTTP
			}
			return []output{o}
		}
		s.noteClient(m, s.sc.steps[i].msg)
		if repeat && m.Method == mcp.MethodDiscover {
			// Asked again (a client refreshing what it knows): answered
			// again, in any order.
			s.idMap[s.sc.steps[i].msg.ID.Key()] = m.ID.Raw()
			return s.emit(i)
		}
		s.checkOrder(i)
		s.idMap[s.sc.steps[i].msg.ID.Key()] = m.ID.Raw()
		if rec, live := progressToken(s.sc.steps[i].msg.Raw), progressToken(m.Raw); rec != nil && live != nil {
			s.tokMap[idKey(rec)] = live
		}
		return s.emit(i)
	case jsonrpc.KindNotification:
		i, repeat := s.pick(canonical(lm, s.sc.ignore))
		if i < 0 {
			s.deviate(true, "%s is not in the recording (ignored)", describe(m))
			return nil
		}
		if repeat {
			s.deviate(true, "%s was sent again; the recording has it only %d time(s)", describe(m), len(s.sc.byKey[s.sc.steps[i].key]))
		}
		s.checkOrder(i)
		return s.emit(i)
	case jsonrpc.KindResponse:
		i, repeat := s.pick("response-id:" + m.ID.Key())
		if i < 0 || repeat {
			s.deviate(false, "%s, which the replayed server never sent (ignored)", describe(m))
			return nil
		}
		if s.opts.Strict {
			got, want := canonical(lm, s.sc.ignore), canonical(s.sc.steps[i].msg, s.sc.ignore)
			if got != want {
				s.deviate(false, "the client answered request %s with %s, but the recording has %s",
					m.ID.String(), rawjson.Excerpt(m.Raw, 200), rawjson.Excerpt(s.sc.steps[i].msg.Raw, 200))
			}
		}
		return s.emit(i)
	}
	i, repeat := s.pick(canonical(m, nil))
	if i < 0 || repeat && s.opts.Strict {
		s.deviate(false, "the client sent %s, which is not in the recording", describe(m))
		if i < 0 {
			return []output{{frame: jsonrpc.EncodeResponse(jsonrpc.ID{}, nil,
				&jsonrpc.Error{Code: -32700, Message: "mcpx replay: parse error: the frame is not a JSON-RPC message, and the recording has no such frame"})}}
		}
	}
	return s.emit(i)
}

// noteClient reports, once per session and field, per-request protocol
// fields of a 2026-07-28-era request that differ from the recorded
// request's (they do not count for matching): another protocol version or
// other client capabilities, as a different initialize would be; another
// client identity only in strict mode.
func (s *replaySession) noteClient(live, recorded *jsonrpc.Message) {
	for _, f := range []struct {
		key, what string
		lenient   bool
	}{
		{mcp.MetaProtocolVersion, "declares protocol version", false},
		{mcp.MetaClientCapabilities, "declares the capabilities", false},
		{mcp.MetaClientInfo, "identifies itself as", true},
	} {
		if s.noted[f.key] || f.lenient && !s.opts.Strict {
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
		s.deviate(f.lenient, "the client %s %s, the recorded one %s %s (answered as recorded)",
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

// unmatched builds the error for a request the recording cannot answer,
// saying what it has instead, and reports the deviation; it returns the
// error's code too.
func (s *replaySession) unmatched(m *jsonrpc.Message) ([]byte, int) {
	var same []*jsonrpc.Message
	nextReq := ""
	for i, st := range s.sc.steps {
		if st.msg.Kind() != jsonrpc.KindRequest {
			continue
		}
		if st.msg.Method == m.Method {
			same = append(same, st.msg)
		} else if nextReq == "" && !s.used[i] {
			nextReq = st.msg.Method
		}
	}
	data := map[string]any{"received": rawOrNull(m.Params)}
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
	s.deviate(false, "%s", strings.TrimPrefix(msg, "mcpx replay: ")+" (got "+rawjson.Excerpt(m.Params, 160)+")")
	d, _ := json.Marshal(data)
	return jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: code, Message: msg, Data: d}), code
}

func rawOrNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// emit marks step i used and returns what the server did after it, with
// the ids of responses changed to the live client's.
func (s *replaySession) emit(i int) []output {
	s.used[i] = true
	st := s.sc.steps[i]
	outs := make([]output, 0, len(st.follow)+1)
	if st.refused != 0 {
		outs = append(outs, output{refused: st.refused})
	}
	for _, o := range st.follow {
		if !o.isStderr {
			o.frame = mapMessages(o.frame, s.liveID)
		}
		outs = append(outs, o)
	}
	return outs
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

// liveID rewrites the id of a recorded response to the id the live client
// used for the matching request, and the token of a recorded progress
// notification to the token the live client asked for.
func (s *replaySession) liveID(msg []byte) []byte {
	if _, isReq := topMember(msg, "method"); isReq {
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

// finish reports, in strict mode, recorded client messages never sent.
func (s *replaySession) finish() {
	if !s.opts.Strict {
		return
	}
	var missing []string
	for i, st := range s.sc.steps {
		if !s.used[i] && st.msg.Kind() != jsonrpc.KindResponse {
			missing = append(missing, describe(st.msg))
		}
	}
	if len(missing) > 0 {
		s.deviate(false, "the client ended the session without sending %d recorded *jsonrpc.Message(s), first %s", len(missing), missing[0])
	}
}

// Serve replays the recorded server on conn, the server's end of a
// connection (the other end of a transport.Pipe in tests, stdin and stdout
// for `mcpx replay`), until the client closes it or ctx ends. It returns
// nil when the client ended the session, and in strict mode a
// *DeviationError on the first departure from the recording (after
// answering the message that caused it). Serve does not close conn.
//
// The connection engine (jsonrpc/peer) reads conn; each frame is answered
// on its read loop, in order, with what the recorded server did next.
func (r *Replayer) Serve(ctx context.Context, conn transport.Conn) error {
	s := r.newSession()
	if err := r.send(ctx, conn, s.sc.prelude); err != nil {
		return err
	}
	stop := make(chan error, 1)
	stopped := false
	p := peer.New(conn, peer.Options{Intercept: func(f transport.Frame) bool {
		if stopped {
			return true
		}
		err := r.send(ctx, conn, s.handle(f.Data))
		if err == nil && s.err != nil {
			err = s.err
		}
		if err != nil {
			stopped = true
			stop <- err
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
	if err := p.Err(); !errors.Is(err, io.EOF) && !errors.Is(err, transport.ErrClosed) {
		return err
	}
	select {
	case err := <-stop:
		// The last frame's answer failed, or deviated.
		return err
	default:
	}
	s.finish()
	if s.err != nil {
		return s.err
	}
	return nil
}

func (r *Replayer) send(ctx context.Context, conn transport.Conn, outs []output) error {
	for _, o := range outs {
		if o.isStderr {
			if r.opts.OnStderr != nil {
				r.opts.OnStderr(o.stderr)
			}
			continue
		}
		if o.refused != 0 {
			continue // HTTP only
		}
		data := o.frame
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
			return err
		}
	}
	return nil
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
