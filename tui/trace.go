package tui

// Traces (trace show) and verification reports (verify) for the terminal,
// escaping everything a trace or a server supplied.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

// Entry is one line of a trace's timeline: a message with what it is
// about, a stderr line, a note, an HTTP exchange, SSE stream metadata, or
// the start of a session.
type Entry struct {
	// TimeMS is the offset from the start of the recording, in ms.
	TimeMS float64 `json:"timeMs"`
	// Session is the session of the trace the entry belongs to, from 1.
	Session int `json:"session"`
	// Dir is c2s or s2c for messages and stderr lines.
	Dir record.Direction `json:"dir,omitempty"`
	// Kind is request, response, notification or invalid for frames;
	// stderr, note, http, stream or session otherwise.
	Kind string `json:"kind"`
	// SessionInfo describes the session a session entry starts.
	SessionInfo *record.SessionInfo `json:"sessionInfo,omitempty"`
	// Prelude marks a message written from the session's memory (the
	// handshake a recording started mid-session begins with).
	Prelude bool            `json:"prelude,omitempty"`
	Method  string          `json:"method,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	// LatencyMS is, for a response, the time since its request.
	LatencyMS *float64 `json:"latencyMs,omitempty"`
	// Error is a response's JSON-RPC error.
	Error *EntryError `json:"error,omitempty"`
	// ToolError is set for a tools/call result with isError: true.
	ToolError bool `json:"toolError,omitempty"`
	// Summary describes the message in a few words (params or result).
	Summary string `json:"summary,omitempty"`
	// Unanswered is set for a request whose response is not in the trace.
	Unanswered bool `json:"unanswered,omitempty"`
	// Text is the content of stderr, note and http entries, and the frame
	// of an invalid message.
	Text string          `json:"text,omitempty"`
	Meta *transport.Meta `json:"meta,omitempty"`
	// Batch is set for messages that travelled in a JSON-RPC batch.
	Batch bool `json:"batch,omitempty"`
	// Route is the route a stateless-era (2026-07-28) message was sent
	// with, as recorded (Streamable HTTP mirrors it into headers).
	Route *RouteEntry `json:"route,omitempty"`
	// View names the MCP Apps view of a message between mcpx and a view
	// (Kind view-request, view-response, view-notification or
	// view-invalid; Dir h2v or v2h).
	View *record.ViewInfo `json:"view,omitempty"`
}

// RouteEntry is a recorded route: the values of the MCP-Protocol-Version,
// Mcp-Method, Mcp-Name and Mcp-Param-{Name} headers, before encoding.
type RouteEntry struct {
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Method          string            `json:"method,omitempty"`
	Name            string            `json:"name,omitempty"`
	Params          []RouteParamEntry `json:"params,omitempty"`
	// Mismatch says how the route disagrees with its message's body (a
	// server rejects such a request with HeaderMismatch).
	Mismatch string `json:"mismatch,omitempty"`
}

// RouteParamEntry is one Mcp-Param-{Name} header.
type RouteParamEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func routeEntry(r *transport.Route, m *jsonrpc.Message) *RouteEntry {
	en := &RouteEntry{ProtocolVersion: r.ProtocolVersion, Method: r.Method, Name: r.Name}
	for _, p := range r.Params {
		en.Params = append(en.Params, RouteParamEntry{Name: p.Name, Value: p.Value})
	}
	body := mcp.StandardRoute(m.Method, m.Params)
	var bad []string
	if r.Method != m.Method {
		bad = append(bad, fmt.Sprintf("Mcp-Method %q, body %q", r.Method, m.Method))
	}
	if r.ProtocolVersion != body.ProtocolVersion && m.Kind() == jsonrpc.KindRequest {
		bad = append(bad, fmt.Sprintf("MCP-Protocol-Version %q, body %q", r.ProtocolVersion, body.ProtocolVersion))
	}
	if r.Name != body.Name && r.Name != record.Placeholder {
		bad = append(bad, fmt.Sprintf("Mcp-Name %q, body %q", r.Name, body.Name))
	}
	en.Mismatch = strings.Join(bad, "; ")
	return en
}

// Era says which protocol era a trace's client spoke: "modern" (the
// stateless 2026-07-28 era: its requests declare such a version in _meta),
// "legacy" (the handshake era: it sent initialize), both joined with "+"
// when it tried both (an era probe, then the other), or "" when the trace
// shows neither.
func Era(tr *record.Trace) string {
	var e eras
	for _, ev := range tr.Events {
		e.add(&ev)
	}
	return e.String()
}

// eras finds a trace's Era an event at a time.
type eras struct{ modern, legacy bool }

func (a *eras) add(e *record.Event) {
	if e.Kind != record.KindFrame || e.Dir != record.ClientToServer {
		return
	}
	msgs, _ := e.Messages()
	for _, m := range msgs {
		switch {
		case m.Kind() != jsonrpc.KindRequest:
		case m.Method == mcp.MethodInitialize:
			a.legacy = true
		case e.Route != nil || mcp.IsModernVersion(mcp.StandardRoute(m.Method, m.Params).ProtocolVersion):
			a.modern = true
		}
	}
}

func (a *eras) String() string {
	switch {
	case a.modern && a.legacy:
		return "modern+legacy"
	case a.modern:
		return "modern"
	case a.legacy:
		return "legacy"
	}
	return ""
}

// EntryError is a JSON-RPC error object.
type EntryError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Timeline turns a trace into entries, pairing each response with its
// request of the same session (method and latency).
func Timeline(tr *record.Trace) []Entry {
	var out []Entry
	tl := timeline{}
	for _, e := range tr.Events {
		tl.add(&e, func(en Entry) { out = append(out, en) }, func(i int) { out[i].Unanswered = false })
	}
	return out
}

// timeline makes a trace's entries an event at a time (see Timeline).
type timeline struct {
	// pending holds the requests awaiting a response, by session,
	// direction and id key.
	pending map[string]pendingRequest
	// n counts the entries made.
	n int
	// unanswered, when not nil, holds the numbers of the request entries
	// never answered (known from an earlier pass over the trace, see
	// open): a request's entry is then final when it is made.
	unanswered map[int]bool
	// replaced holds the numbers of the request entries whose id a later
	// request of the session used before they were answered.
	replaced map[int]bool
}

type pendingRequest struct {
	idx    int
	t      time.Duration
	method string
}

// add makes the entries of e, giving each to emit; with emit nil, it only
// pairs requests with their answers (see open). Without unanswered,
// a request's entry says it is unanswered until its response comes, when
// answered is called with its number.
func (tl *timeline) add(e *record.Event, emit func(Entry), answered func(idx int)) {
	if tl.pending == nil {
		tl.pending = map[string]pendingRequest{}
	}
	out := func(en Entry) {
		tl.n++
		if emit != nil {
			emit(en)
		}
	}
	ms := float64(e.Time.Microseconds()) / 1000
	n := max(e.Session, 1)
	if e.Kind == record.KindView {
		for _, en := range viewEntries(*e, ms, n) {
			out(en)
		}
		return
	}
	if e.Kind != record.KindFrame {
		en := Entry{TimeMS: ms, Session: n, Dir: e.Dir, Kind: string(e.Kind), Text: e.Text, Meta: e.Meta}
		if e.Kind == record.KindSession {
			en.SessionInfo = e.SessionInfo
		}
		out(en)
		return
	}
	msgs, batch := e.Messages()
	for _, m := range msgs {
		en := Entry{TimeMS: ms, Session: n, Dir: e.Dir, Kind: m.Kind().String(), Method: m.Method, Meta: e.Meta, Batch: batch, Prelude: e.Prelude}
		if !m.ID.IsNull() {
			// An error answering an unreadable request shows no id.
			en.ID = m.ID.Raw()
		}
		if e.Route != nil && len(msgs) == 1 {
			en.Route = routeEntry(e.Route, m)
		}
		switch m.Kind() {
		case jsonrpc.KindRequest:
			if emit != nil {
				en.Summary = paramsSummary(m.Method, m.Params)
			}
			en.Unanswered = tl.unanswered == nil || tl.unanswered[tl.n]
			key := fmt.Sprint(n, e.Dir, m.ID.Key())
			if p, ok := tl.pending[key]; ok {
				// An id used again before its answer (a client's bug, a
				// hand edit): the answer goes to the later request.
				if tl.replaced == nil {
					tl.replaced = map[int]bool{}
				}
				tl.replaced[p.idx] = true
			}
			tl.pending[key] = pendingRequest{idx: tl.n, t: e.Time, method: m.Method}
		case jsonrpc.KindNotification:
			if emit != nil {
				en.Summary = notificationSummary(m.Method, m.Params)
			}
		case jsonrpc.KindResponse:
			other := record.ClientToServer
			if e.Dir == record.ClientToServer {
				other = record.ServerToClient
			}
			if p, ok := tl.pending[fmt.Sprint(n, other, m.ID.Key())]; ok {
				delete(tl.pending, fmt.Sprint(n, other, m.ID.Key()))
				en.Method = p.method
				lat := float64((e.Time - p.t).Microseconds()) / 1000
				en.LatencyMS = &lat
				if answered != nil {
					answered(p.idx)
				}
			}
			switch {
			case emit == nil:
			case len(m.ErrorRaw) > 0:
				var ee EntryError
				if json.Unmarshal(m.ErrorRaw, &ee) != nil {
					ee = EntryError{Code: 0, Message: "malformed error: " + rawjson.Excerpt(m.ErrorRaw, 100)}
				}
				en.Error = &ee
			default:
				en.Summary, en.ToolError = resultSummary(en.Method, m.Result)
			}
		default:
			en.Text = string(m.Raw)
		}
		out(en)
	}
}

// open returns the numbers of the request entries still awaiting a
// response: after the last event, those the trace never answers.
func (tl *timeline) open() map[int]bool {
	idx := maps.Clone(tl.replaced)
	if idx == nil {
		idx = make(map[int]bool, len(tl.pending))
	}
	for _, p := range tl.pending {
		idx[p.idx] = true
	}
	return idx
}

// viewEntries are the entries of a view event: its message, with a
// summary of its params, result or error.
func viewEntries(e record.Event, ms float64, n int) []Entry {
	msgs, _ := parseMessages(e.Data)
	var out []Entry
	for _, m := range msgs {
		en := Entry{TimeMS: ms, Session: n, Dir: e.Dir, Kind: "view-" + m.Kind().String(), Method: m.Method, View: e.View}
		if !m.ID.IsNull() {
			en.ID = m.ID.Raw()
		}
		switch m.Kind() {
		case jsonrpc.KindRequest:
			en.Summary = paramsSummary(m.Method, m.Params)
		case jsonrpc.KindNotification:
			en.Summary = notificationSummary(m.Method, m.Params)
		case jsonrpc.KindResponse:
			if len(m.ErrorRaw) > 0 {
				var ee EntryError
				if json.Unmarshal(m.ErrorRaw, &ee) != nil {
					ee = EntryError{Message: "malformed error: " + rawjson.Excerpt(m.ErrorRaw, 100)}
				}
				en.Error = &ee
			} else {
				en.Summary = rawjson.Excerpt(m.Result, 80)
			}
		default:
			en.Text = string(m.Raw)
		}
		out = append(out, en)
	}
	return out
}

// parseMessages decodes the messages of a view event's data as a frame's.
func parseMessages(data []byte) ([]*jsonrpc.Message, bool) {
	return record.Event{Kind: record.KindFrame, Data: data}.Messages()
}

// withoutProtocolMeta returns params without the _meta members the
// protocol reserves (io.modelcontextprotocol/*: version, client info and
// capabilities, which every 2026-07-28-era request repeats) and the
// progress token, for summaries.
func withoutProtocolMeta(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(`"_meta"`)) {
		return params
	}
	obj, err := inspector.ParseObject(params)
	if err != nil || !obj.Has("_meta") {
		return params
	}
	meta, err := inspector.ParseObject(obj.Get("_meta"))
	if err != nil {
		return params
	}
	for _, k := range append([]string(nil), meta.Keys()...) {
		if strings.HasPrefix(k, mcp.MetaReservedPrefix) || k == mcp.MetaProgressToken {
			meta.Delete(k)
		}
	}
	if len(meta.Keys()) == 0 {
		obj.Delete("_meta")
	} else {
		obj.Set("_meta", meta.Marshal())
	}
	return obj.Marshal()
}

// paramsSummary names what a request is about.
func paramsSummary(method string, params json.RawMessage) string {
	if method == mcp.MethodDiscover {
		var p struct {
			Meta struct {
				Version    string `json:"io.modelcontextprotocol/protocolVersion"`
				ClientInfo struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"io.modelcontextprotocol/clientInfo"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(params, &p)
		return strings.TrimSpace(fmt.Sprintf("%s %s, protocol %s", p.Meta.ClientInfo.Name, p.Meta.ClientInfo.Version, p.Meta.Version))
	}
	params = withoutProtocolMeta(params)
	var p struct {
		Name string          `json:"name"`
		URI  string          `json:"uri"`
		Args json.RawMessage `json:"arguments"`
		Ref  struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Cursor          *string `json:"cursor"`
		ProtocolVersion string  `json:"protocolVersion"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	_ = json.Unmarshal(params, &p)
	switch method {
	case mcp.MethodInitialize:
		return strings.TrimSpace(fmt.Sprintf("%s %s, protocol %s", p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion))
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		s := p.Name
		if len(p.Args) > 0 && string(p.Args) != "{}" && string(p.Args) != "null" {
			s += " " + rawjson.Excerpt(p.Args, 120)
		}
		return s + retrySummary(params)
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		return p.URI + retrySummary(params)
	case mcp.MethodCompletionComplete:
		return strings.TrimSpace(p.Ref.Name + p.Ref.URI)
	}
	if p.Cursor != nil {
		return "cursor " + *p.Cursor
	}
	if len(params) > 0 && string(params) != "{}" {
		return rawjson.Excerpt(params, 120)
	}
	return ""
}

func notificationSummary(method string, params json.RawMessage) string {
	switch method {
	case mcp.NotificationProgress:
		var p struct {
			Progress float64  `json:"progress"`
			Total    *float64 `json:"total"`
			Message  string   `json:"message"`
		}
		_ = json.Unmarshal(params, &p)
		s := fmt.Sprint(p.Progress)
		if p.Total != nil {
			s += "/" + fmt.Sprint(*p.Total)
		}
		if p.Message != "" {
			s += " " + p.Message
		}
		return s
	case mcp.NotificationMessage:
		var p struct {
			Level string          `json:"level"`
			Data  json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(params, &p)
		var text string
		if json.Unmarshal(p.Data, &text) != nil {
			text = rawjson.Excerpt(p.Data, 120)
		}
		return "[" + p.Level + "] " + text
	case mcp.NotificationCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		_ = json.Unmarshal(params, &p)
		return strings.TrimSpace("request " + string(p.RequestID) + " " + p.Reason)
	}
	if len(params) > 0 && string(params) != "{}" {
		return rawjson.Excerpt(params, 120)
	}
	return ""
}

// retrySummary describes the retry of a multi-round request (spec
// 2026-07-28: basic/patterns/mrtr): the input responses it carries.
func retrySummary(params json.RawMessage) string {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
	}
	if json.Unmarshal(params, &p) != nil || p.InputResponses == nil && p.RequestState == nil {
		return ""
	}
	keys := make([]string, 0, len(p.InputResponses))
	for k := range p.InputResponses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := " (retry with input " + strings.Join(keys, ", ")
	if p.RequestState != nil {
		s += " and the request state"
	}
	return s + ")"
}

// resultSummary describes a result: list lengths, a tool's first text,
// the server's name after initialize or server/discover, the input a
// multi-round request needs.
func resultSummary(method string, result json.RawMessage) (string, bool) {
	// The members are looked at in place: a result may be a large frame,
	// and a summary needs only its first words.
	if !json.Valid(result) {
		return rawjson.Excerpt(result, 120), false
	}
	obj := map[string][]byte{}
	var names []string
	isObj := rawjson.Members(result, func(name, v []byte) bool {
		n := rawjson.Name(name)
		if _, ok := obj[n]; !ok {
			names = append(names, n)
		}
		obj[n] = v
		return true
	})
	if !isObj && !rawjson.IsNull(bytes.TrimSpace(result)) {
		return rawjson.Excerpt(result, 120), false
	}
	var rt struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
		Task *struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	_ = json.Unmarshal(result, &rt)
	switch rt.ResultType {
	case mcp.ResultInputRequired:
		keys := make([]string, 0, len(rt.InputRequests))
		for k, r := range rt.InputRequests {
			keys = append(keys, k+" ("+r.Method+")")
		}
		sort.Strings(keys)
		return "input required: " + strings.Join(keys, ", "), false
	case mcp.ResultTask:
		if rt.Task != nil {
			return strings.TrimSpace("task " + rt.Task.TaskID + " " + rt.Task.Status), false
		}
		return "task", false
	}
	switch method {
	case mcp.MethodDiscover:
		var r struct {
			SupportedVersions []string `json:"supportedVersions"`
			Meta              struct {
				ServerInfo struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(result, &r)
		return strings.TrimSpace(fmt.Sprintf("%s %s, versions %s", r.Meta.ServerInfo.Name, r.Meta.ServerInfo.Version, strings.Join(r.SupportedVersions, ", "))), false
	case mcp.MethodInitialize:
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"serverInfo"`
		}
		_ = json.Unmarshal(result, &r)
		return strings.TrimSpace(fmt.Sprintf("%s %s, protocol %s", r.ServerInfo.Name, r.ServerInfo.Version, r.ProtocolVersion)), false
	case mcp.MethodToolsCall:
		return toolResultSummary(result)
	}
	for _, k := range []string{"tools", "resources", "resourceTemplates", "prompts", "roots", "contents", "messages"} {
		if raw, ok := obj[k]; ok {
			items := 0
			if rawjson.Elements(raw, func([]byte) bool { items++; return true }) || rawjson.IsNull(raw) {
				s := fmt.Sprintf("%d %s", items, k)
				if c, ok := obj["nextCursor"]; ok {
					s += ", nextCursor " + string(c)
				}
				return s, false
			}
		}
	}
	// The protocol's own members of a 2026-07-28-era result say nothing
	// about what it is about.
	for _, k := range []string{"_meta", "resultType", "ttlMs", "cacheScope"} {
		delete(obj, k)
	}
	if len(obj) == 0 {
		return "{}", false
	}
	// What json.Marshal would make of the members (sorted, compacted),
	// as far as the excerpt shows it.
	sort.Strings(names)
	b := []byte{'{'}
	for _, n := range names {
		v, ok := obj[n]
		if !ok {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(n)
		b = append(append(b, k...), ':')
		if b = rawjson.AppendCompactPrefix(b, v, 121, true); len(b) > 121 {
			break
		}
	}
	if len(b) <= 121 {
		b = append(b, '}')
	}
	return rawjson.Excerpt(b, 120), false
}

// toolResultSummary is a CallToolResult's first text (or content type),
// how many more content blocks it has, and isError.
func toolResultSummary(result []byte) (string, bool) {
	var content []byte
	isError := false
	rawjson.Members(result, func(name, v []byte) bool {
		switch rawjson.MatchName(name, "content", "isError") {
		case "content":
			content = v
		case "isError":
			isError = string(v) == "true"
		}
		return true
	})
	var blocks [][]byte
	rawjson.Elements(content, func(e []byte) bool {
		blocks = append(blocks, e)
		return true
	})
	if len(blocks) == 0 {
		return "", isError
	}
	var typ, text []byte
	rawjson.Members(blocks[0], func(name, v []byte) bool {
		switch rawjson.MatchName(name, "type", "text") {
		case "type":
			typ = v
		case "text":
			text = v
		}
		return true
	})
	s := ""
	if t, _ := rawjson.String(typ); t != "text" {
		s = rawjson.Shorten("["+t+"]", 120)
	} else if rawjson.IsString(text) {
		prefix, more := rawjson.StringPrefix(text, 120)
		s = prefix
		if more {
			s += "…"
		}
	}
	if len(blocks) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(blocks)-1)
	}
	return s, isError
}

// TraceReader reads a trace from its start: it gives header the header,
// then event each event in order, stopping at an error event returns
// (which it returns). It may be called more than once, and must then
// give the same events. (record's TraceStream reads a file so.)
type TraceReader func(header func(record.Header), event func(*record.Event) error) error

// ReaderOf is the TraceReader of a trace read whole.
func ReaderOf(tr *record.Trace) TraceReader {
	return func(header func(record.Header), event func(*record.Event) error) error {
		header(tr.Header)
		for i := range tr.Events {
			if err := event(&tr.Events[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// Trace prints a trace as a readable timeline (see TraceStream).
func (p *Printer) Trace(tr *record.Trace) {
	p.TraceStream(ReaderOf(tr))
}

// TraceStream prints a trace as a readable timeline (mcpx trace show):
// time, direction, method, requests paired with their responses (with
// latency), errors in red. Everything from the trace is escaped for the
// terminal. It goes over the events twice: first for what the timeline's
// head says (the era, the sessions) and which requests are never
// answered, then to print each line as it is made, so that it holds the
// requests awaiting an answer, not the trace (a long session's trace may
// be larger than memory).
func (p *Printer) TraceStream(read TraceReader) error {
	var h record.Header
	var era eras
	sessions := map[int]bool{}
	first := timeline{}
	if err := read(func(hd record.Header) { h = hd }, func(e *record.Event) error {
		era.add(e)
		sessions[max(e.Session, 1)] = true
		first.add(e, nil, nil)
		return nil
	}); err != nil {
		return err
	}
	w := p.w
	dim, bold, red, yellow, cyan, green := p.st.dim, p.st.head, p.st.err, p.st.warn, p.st.sent, p.st.key
	esc := EscapeLine

	head := fmt.Sprintf("%s v%d", h.Format, h.Version)
	switch {
	case !h.Created.IsZero():
		head += ", recorded " + h.Created.UTC().Format("2006-01-02 15:04:05 UTC")
	case h.Stable:
		head += ", stable" // (a stable trace has no time of its own)
	}
	if h.Mcpx != "" {
		head += " by mcpx " + h.Mcpx
	}
	fmt.Fprintln(w, bold(esc(head)))
	if h.Target != "" {
		fmt.Fprintln(w, dim(esc(h.Target)))
	}
	switch era.String() {
	case "modern":
		fmt.Fprintln(w, dim("era: modern (2026-07-28: stateless, per-request _meta, no handshake)"))
	case "modern+legacy":
		fmt.Fprintln(w, dim("era: modern and legacy (the client tried both)"))
	case "legacy":
		fmt.Fprintln(w, dim("era: legacy (initialize handshake)"))
	}
	if !h.Redacted {
		fmt.Fprintln(w, yellow("recorded with --no-redact: this trace may contain secrets"))
	}
	if len(sessions) > 1 {
		fmt.Fprintln(w, dim(fmt.Sprintf("%d sessions", len(sessions))))
	}
	if len(h.Ignore) > 0 {
		fmt.Fprintln(w, dim(esc("ignore: "+strings.Join(h.Ignore, " "))))
	}
	if len(h.Normalize) > 0 {
		fmt.Fprintln(w, dim(esc("normalize: "+normalizersText(h.Normalize))))
	}
	printEntry := func(en Entry) {
		t := dim(fmt.Sprintf("%9.3fs", en.TimeMS/1000))
		if len(sessions) > 1 {
			// Sessions may interleave (a proxy serving two hosts at once):
			// every line says whose it is.
			t += " " + dim(fmt.Sprintf("s%d", en.Session))
		}
		arrow := "  "
		switch en.Dir {
		case record.ClientToServer:
			arrow = cyan("→")
		case record.ServerToClient:
			arrow = green("←")
		case record.HostToView:
			arrow = cyan("⇢")
		case record.ViewToHost:
			arrow = green("⇠")
		}
		var line string
		switch en.Kind {
		case "stderr":
			line = dim("server| ") + esc(en.Text)
		case "note":
			line = yellow("note ") + esc(en.Text)
		case "http":
			line = dim("http " + esc(en.Text))
		case "stream":
			line = dim("stream " + esc(en.Text))
		case "session":
			line = bold(esc(fmt.Sprintf("session %d: %s", en.Session, en.Text)))
			if en.SessionInfo != nil && en.SessionInfo.Prelude {
				line += " " + dim("(started mid-session: its handshake is written from memory)")
			}
		case "invalid":
			line = red("not JSON-RPC: ") + esc(rawjson.Excerpt([]byte(en.Text), 200))
		case "view-request", "view-notification", "view-response", "view-invalid":
			line = viewLine(en, p.st)
		case "request", "notification", "response":
			line = p.traceMessage(en, h.Transport)
		default:
			// A kind of a newer mcpx: shown as it is.
			line = dim(esc(en.Kind + " " + en.Text))
		}
		fmt.Fprintf(w, "%s %s %s\n", t, arrow, line)
	}
	tl := timeline{unanswered: first.open()}
	return read(func(record.Header) {}, func(e *record.Event) error {
		tl.add(e, printEntry, nil)
		return nil
	})
}

// traceMessage is the line of a JSON-RPC message of a trace (see Trace).
func (p *Printer) traceMessage(en Entry, transportName string) string {
	dim, bold, red, yellow, green := p.st.dim, p.st.head, p.st.err, p.st.warn, p.st.key
	esc := EscapeLine
	id := ""
	if len(en.ID) > 0 {
		id = " " + dim("#"+esc(string(en.ID)))
	}
	method := en.Method
	if method == "" {
		method = "response"
	}
	line := bold(esc(method)) + id
	switch {
	case en.Kind == "request" && en.Dir == record.ServerToClient:
		line = yellow("server request ") + line
	case en.Kind == "notification":
		line = dim("notification ") + esc(en.Method)
	}
	if en.Kind == "response" {
		lat := ""
		if en.LatencyMS != nil {
			lat = " " + dim(fmt.Sprintf("%.1fms", *en.LatencyMS))
		}
		switch {
		case en.Error != nil:
			line += lat + " " + red(esc(fmt.Sprintf("error %d: %s", en.Error.Code, en.Error.Message)))
		case en.ToolError:
			line += lat + " " + red("isError") + " " + esc(en.Summary)
		default:
			line += lat + " " + green("ok") + " " + esc(en.Summary)
		}
	} else if en.Summary != "" {
		line += "  " + dim(esc(en.Summary))
	}
	if en.Unanswered {
		line += " " + yellow("(no response in the trace)")
	}
	if en.Batch {
		line += " " + dim("[batch]")
	}
	if en.Prelude {
		line += " " + dim("[from memory]")
	}
	if r := en.Route; r != nil && transportName == "http" {
		var hs []string
		for _, p := range r.Params {
			hs = append(hs, "Mcp-Param-"+p.Name+": "+p.Value)
		}
		if len(hs) > 0 {
			line += " " + dim(esc("["+strings.Join(hs, ", ")+"]"))
		}
	}
	if en.Route != nil && en.Route.Mismatch != "" {
		line += " " + red(esc("headers differ from the body: "+en.Route.Mismatch))
	}
	return line
}

// viewLine shows a message between mcpx and an MCP Apps view in trace
// show: marked "view TOOL" (its own arrows ⇢ host to view, ⇠ view to
// host), so that it is never mistaken for a frame of the server's.
func viewLine(en Entry, st styles) string {
	who := "view"
	if en.View != nil && en.View.Tool != "" {
		who += " " + EscapeName(en.View.Tool)
	}
	line := st.dim("["+who+"]") + " "
	id := ""
	if len(en.ID) > 0 {
		id = " " + st.dim("#"+EscapeLine(string(en.ID)))
	}
	switch en.Kind {
	case "view-request":
		line += st.head(EscapeLine(en.Method)) + id
	case "view-notification":
		line += st.dim("notification ") + EscapeLine(en.Method)
	case "view-response":
		line += st.head("response") + id
		if en.Error != nil {
			return line + " " + st.err(EscapeLine(fmt.Sprintf("error %d: %s", en.Error.Code, en.Error.Message)))
		}
	default:
		return line + st.err("not JSON-RPC: ") + EscapeLine(rawjson.Excerpt([]byte(en.Text), 200))
	}
	if en.Summary != "" {
		line += "  " + st.dim(EscapeLine(en.Summary))
	}
	return line
}

// normalizersText lists a trace's normalizers for people: built-ins by
// name, the others as PATTERN=PLACEHOLDER (as --normalize takes them).
func normalizersText(ns []record.Normalizer) string {
	var parts []string
	for _, n := range ns {
		if n.Builtin != "" {
			parts = append(parts, n.Builtin)
		} else {
			parts = append(parts, n.Pattern+"="+n.Replace)
		}
	}
	return strings.Join(parts, " ")
}

// TimelineJSON is the document `mcpx trace show --json` prints.
type TimelineJSON struct {
	Header record.Header `json:"header"`
	// Era is the protocol era the client spoke (see Era).
	Era string `json:"era,omitempty"`
	// Sessions counts the sessions of the trace.
	Sessions int      `json:"sessions"`
	Events   []Entry  `json:"events"`
	Warnings []string `json:"warnings,omitempty"`
}

// TimelineOf makes the JSON timeline of a trace read an event at a time
// (Warnings left to the caller): it holds the entries, not the events.
func TimelineOf(read TraceReader) (TimelineJSON, error) {
	doc := TimelineJSON{Events: []Entry{}}
	var era eras
	sessions := map[int]bool{}
	tl := timeline{}
	err := read(func(h record.Header) { doc.Header = h }, func(e *record.Event) error {
		era.add(e)
		sessions[max(e.Session, 1)] = true
		tl.add(e, func(en Entry) { doc.Events = append(doc.Events, en) }, func(i int) { doc.Events[i].Unanswered = false })
		return nil
	})
	doc.Era, doc.Sessions = era.String(), max(len(sessions), 1)
	return doc, err
}
