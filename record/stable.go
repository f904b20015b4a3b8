package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// MinorStable is the minor version of a stable trace (see WriteStable):
// minor 3 added the header's stable member and events laid out on
// several lines, which readers of minor 2 cannot read (it also added view
// events, which every trace may hold); minor 4 the header's redactRules,
// which a stable trace holds as any other does. It is Minor, but a
// constant of its own: a stable trace's bytes change only when the format
// does.
const MinorStable = 4

// laidOutOver is the length in bytes above which a stable trace lays a
// frame out on several lines; shorter frames stay on their event's line.
const laidOutOver = 100

// WriteStable writes the trace src gives in the stable form, in which
// recording an unchanged session again gives the same bytes, so that a
// trace kept in a repository changes only when the session did
// (docs/trace-format.md, "Stable traces"):
//
//   - the header has no created time and no writer version, and says
//     "stable": true (minor 3); events have no times;
//   - sessions follow each other, numbered from 1, even when they
//     overlapped in time; within a session, what the transport reports on
//     its own time is put in a fixed order, and HTTP answers that are no
//     refusals are left out (see stableOrder);
//   - Mcp-Session-Id values, the session ids of HTTP+SSE message URLs and
//     SSE event ids are replaced, wherever they appear in metadata and
//     text, by placeholders numbered in the order they first appear
//     ([session-1], [event-1]), so that equal values stay equal; a proxy
//     client's port is left out (of the session's info and text); SSE
//     streams are numbered anew in each session, each kind (post, get)
//     from 1 in the order they first appear, since a proxy numbers them
//     in the order the server's answers begin, which races (an HTTP+SSE
//     session's one stream, "sse", has no number and keeps its name);
//   - frames are canonical JSON (object members sorted by name, numbers
//     as written), and a frame longer than 100 bytes is laid out
//     indented, one member or array element per line, on lines that
//     begin with a space, after the event's other members: a changed
//     tool description is a one-line diff. Frames that are not JSON keep
//     their exact bytes (raw, b64).
//
// Replay and verify read stable traces like any other: a frame's bytes
// are its canonical JSON, compact.
//
// The sessions are read twice, one at a time: once for the placeholders,
// once to write them; a large trace is not held whole.
func WriteStable(w io.Writer, src SessionSource) error {
	if w == nil {
		return nilArgument("WriteStable", "the writer")
	}
	if nilSource(src) {
		return nilArgument("WriteStable", "the trace")
	}
	st := newStabilizer()
	var ns []int
	for _, n := range src.SessionNumbers() {
		s, err := src.ReadSession(n)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		st.collect(s)
		ns = append(ns, n)
	}
	h := src.TraceHeader()
	h.Stable = true
	tw, err := newWriterAs(w, h)
	if err != nil {
		return err
	}
	for i, sn := range ns {
		s, err := src.ReadSession(sn)
		if err != nil {
			return err
		}
		if s == nil {
			return fmt.Errorf("session %d is gone from the trace", sn)
		}
		n := i + 1
		info := st.info(s.Info)
		text := st.text(s.Text)
		if info.Client != s.Info.Client {
			host := info.Client
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
			text = strings.ReplaceAll(text, s.Info.Client, host)
		}
		if err := tw.Write(Event{Session: n, Kind: KindSession, Text: text, SessionInfo: &info}); err != nil {
			return err
		}
		events := stableOrder(s.Events)
		streams := renumberStreams(events)
		for _, e := range events {
			e.Session = n
			if err := tw.Write(streams.event(st.event(e))); err != nil {
				return err
			}
		}
	}
	return nil
}

// stableOrder puts a session's events in an order that does not depend on
// timing. Frames the client sent keep their order, and each one opens a
// window that holds, after it, the HTTP and SSE events and notes of the
// window in their recorded order, then the server's frames ordered by the
// SSE stream that carried them (by kind, then those answering the client's
// requests in the order of the requests, then the others by number; a
// stream's own frames keep their order),
// then the server's stderr lines. What happens before the client's first
// frame is a window of its own. HTTP answers that are not refusals
// (status below 400, no re) are left out: they come in any order (the
// answer to one POST and the frames of another stream race), and what
// they say, the status and content type, is on the frames they carried.
// (Over stdio, a stderr line and a frame race too.)
func stableOrder(events []Event) []Event {
	rankOf := func(e Event) (int, string) {
		switch {
		case e.Kind == KindFrame && e.Dir == ClientToServer:
			return 0, ""
		case e.Kind == KindFrame && e.Meta != nil:
			return 2, e.Meta.StreamID
		case e.Kind == KindFrame:
			return 2, ""
		case e.Kind == KindStderr:
			return 3, ""
		}
		return 1, ""
	}
	type unit struct {
		rank   int
		stream string
		e      Event
	}
	answers := streamAnswers(events)
	out := make([]Event, 0, len(events))
	var window []unit
	flush := func() {
		slices.SortStableFunc(window, func(a, b unit) int {
			if a.rank != b.rank {
				return a.rank - b.rank
			}
			if ka, kb := streamKind(a.stream), streamKind(b.stream); ka != kb {
				return strings.Compare(ka, kb)
			}
			// Of a kind, the streams answering the client's requests
			// come first, in the order of the requests (their numbers
			// race: see renumberStreams), then the others by number.
			pa, oka := answers[a.stream]
			pb, okb := answers[b.stream]
			switch {
			case oka != okb && oka:
				return -1
			case oka != okb:
				return 1
			case oka && pa != pb:
				return pa - pb
			}
			return compareStreams(a.stream, b.stream)
		})
		for _, u := range window {
			out = append(out, u.e)
		}
		window = window[:0]
	}
	for _, e := range events {
		if e.Kind == KindHTTP && e.Meta != nil && e.Meta.HTTPStatus > 0 && e.Meta.HTTPStatus < 400 && len(e.Re) == 0 {
			continue
		}
		r, st := rankOf(e)
		if r == 0 {
			flush()
		}
		window = append(window, unit{rank: r, stream: st, e: e})
	}
	flush()
	return out
}

// streamAnswers returns, for each SSE stream of a session's events that
// carries a response to a request of the client's, the place of the
// earliest such request among the client's requests.
func streamAnswers(events []Event) map[string]int {
	pos := map[string]int{} // the client's requests' id keys -> place
	answers := map[string]int{}
	for _, e := range events {
		if e.Kind != KindFrame {
			continue
		}
		if e.Dir == ClientToServer {
			msgs, _ := parseFrame(e.Data)
			for _, m := range msgs {
				if _, seen := pos[m.ID.Key()]; m.Kind() == jsonrpc.KindRequest && !seen {
					pos[m.ID.Key()] = len(pos)
				}
			}
			continue
		}
		if e.Meta == nil || e.Meta.StreamID == "" {
			continue
		}
		msgs, _ := parseFrame(e.Data)
		for _, m := range msgs {
			p, ok := pos[m.ID.Key()]
			if m.Kind() != jsonrpc.KindResponse || !ok {
				continue
			}
			if q, ok := answers[e.Meta.StreamID]; !ok || p < q {
				answers[e.Meta.StreamID] = p
			}
		}
	}
	return answers
}

// compareStreams orders SSE stream names by kind, then by number
// (post-9 before post-10).
func compareStreams(a, b string) int {
	ka, na := splitStream(a)
	kb, nb := splitStream(b)
	if c := strings.Compare(ka, kb); c != 0 {
		return c
	}
	if c := na - nb; c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// streamKind is the kind of a stream name ("post-3": "post").
func streamKind(name string) string {
	kind, _ := splitStream(name)
	return kind
}

// splitStream splits a stream name into its kind and number ("post-3":
// "post", 3); a name without a number is its own kind, numbered 0.
func splitStream(name string) (string, int) {
	kind, num, ok := strings.Cut(name, "-")
	if n, err := strconv.Atoi(num); ok && err == nil && n > 0 {
		return kind, n
	}
	return name, 0
}

// streamMentionRE finds the stream names notes and stream events quote
// ("SSE post-3: event id=…", "SSE get-2 (GET stream) ended").
var streamMentionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bSSE ([a-z]+-[0-9]+)\b`)
})

// streamNames renames a session's SSE streams in the stable form: the
// new name of each old one.
type streamNames map[string]string

// renumberStreams numbers the SSE streams of a session's events, in their
// stable order, anew: each kind from 1 in the order its streams first
// appear (in metadata, or quoted in text). A recording proxy numbers
// streams across all its sessions in the order the server's answers
// begin: a GET stream and a POST's answer race for a number, and a
// session's numbers depend on the sessions proxied before it.
func renumberStreams(events []Event) streamNames {
	sn := streamNames{}
	next := map[string]int{}
	add := func(name string) {
		kind, n := splitStream(name)
		if n == 0 || sn[name] != "" {
			return
		}
		next[kind]++
		sn[name] = kind + "-" + strconv.Itoa(next[kind])
	}
	for _, e := range events {
		if e.Meta != nil && e.Meta.StreamID != "" {
			add(e.Meta.StreamID)
		}
		for _, m := range streamMentionRE().FindAllStringSubmatch(e.Text, -1) {
			add(m[1])
		}
	}
	return sn
}

// event returns e with its streams renamed.
func (sn streamNames) event(e Event) Event {
	if strings.Contains(e.Text, "SSE ") {
		e.Text = streamMentionRE().ReplaceAllStringFunc(e.Text, func(m string) string {
			if name := sn[strings.TrimPrefix(m, "SSE ")]; name != "" {
				return "SSE " + name
			}
			return m
		})
	}
	if e.Meta != nil && sn[e.Meta.StreamID] != "" {
		m := *e.Meta
		m.StreamID = sn[m.StreamID]
		e.Meta = &m
	}
	return e
}

// stabilizer replaces a trace's volatile values with placeholders.
type stabilizer struct {
	sessionIDs map[string]string
	eventIDs   map[string]string
	// order lists the session ids in the order they were numbered, for
	// replacing them in text.
	order []string
	// texts replaces them in text (made when first needed).
	texts *strings.Replacer
}

func newStabilizer() *stabilizer {
	return &stabilizer{sessionIDs: map[string]string{}, eventIDs: map[string]string{}}
}

// collect numbers the volatile values of a session's events, in order.
func (st *stabilizer) collect(s *Session) {
	for _, e := range s.Events {
		if e.Meta == nil {
			continue
		}
		st.sessionID(e.Meta.SessionID)
		st.sessionID(urlSessionID(e.Meta.URL))
		if id := e.Meta.EventID; id != "" && st.eventIDs[id] == "" {
			st.eventIDs[id] = fmt.Sprintf("[event-%d]", len(st.eventIDs)+1)
			st.texts = nil
		}
	}
}

// sessionID numbers a session id seen for the first time. (A stable
// trace written again numbers its placeholders anew, in the same order:
// they stay as they were, unless sessions were dropped.)
func (st *stabilizer) sessionID(id string) {
	if id == "" || st.sessionIDs[id] != "" {
		return
	}
	st.sessionIDs[id] = fmt.Sprintf("[session-%d]", len(st.sessionIDs)+1)
	st.order = append(st.order, id)
	st.texts = nil
}

// urlSessionID returns the session id an HTTP+SSE message URL carries in
// its query (sessionId, session_id), if any.
func urlSessionID(u string) string {
	if !strings.Contains(u, "ession") {
		return ""
	}
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	q := p.Query()
	for _, k := range []string{"sessionId", "session_id"} {
		if v := q.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// text replaces the session ids and event ids in s, all at once (a
// placeholder is never replaced again).
func (st *stabilizer) text(s string) string {
	if st.texts == nil {
		var pairs []string
		for _, id := range st.order {
			if len(id) >= 4 {
				pairs = append(pairs, id, st.sessionIDs[id])
			}
		}
		for _, id := range slices.Sorted(maps.Keys(st.eventIDs)) {
			pairs = append(pairs, "id="+strconv.Quote(id), "id="+strconv.Quote(st.eventIDs[id]))
		}
		st.texts = strings.NewReplacer(pairs...)
	}
	return st.texts.Replace(s)
}

// info leaves a proxy client's port out.
func (st *stabilizer) info(i SessionInfo) SessionInfo {
	if host, _, err := net.SplitHostPort(i.Client); err == nil {
		i.Client = host
	}
	i.Target = st.text(i.Target)
	return i
}

// event returns e in the stable form (its frame canonical).
func (st *stabilizer) event(e Event) Event {
	e.Time = 0
	e.Text = st.text(e.Text)
	if e.Meta != nil {
		m := *e.Meta
		if m.SessionID != "" {
			m.SessionID = st.sessionIDs[m.SessionID]
		}
		if m.EventID != "" {
			m.EventID = st.eventIDs[m.EventID]
		}
		m.URL = st.text(m.URL)
		e.Meta = &m
	}
	if e.Kind == KindFrame {
		if c, ok := canonicalFrame(e.Data); ok {
			e.Data = c
		}
	}
	return e
}

// canonicalFrame returns data as compact JSON with object members sorted
// by name, numbers as written and strings escaped as encoding/json
// escapes them (HTML characters left alone); false when data is not
// JSON.
func canonicalFrame(data []byte) ([]byte, bool) {
	if !scanJSON(data, nil).valid {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	out, err := marshalLine(v)
	if err != nil {
		return nil, false
	}
	return bytes.TrimSuffix(out, []byte("\n")), true
}

// appendLaidOut appends the compact JSON data as a stable trace stores
// it: as it is when it is short, else indented on lines that all begin
// with a space (the first line, "{" or "[", stays on the event's line).
func appendLaidOut(b, data []byte) []byte {
	if len(data) <= laidOutOver {
		return append(b, data...)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "  ", "  "); err != nil {
		return append(b, data...)
	}
	return append(b, buf.Bytes()...)
}

// eventLines reads a trace's events from its lines: one line each, or,
// in a stable trace, a line with the lines after it that begin with a
// space or a tab (its frame laid out), joined with newlines. The joined
// event spans exactly the bytes of its lines, so offsets stay those of
// the file.
type eventLines struct {
	read   func() ([]byte, bool, error)
	stable bool
	limit  int64

	ahead      []byte
	aheadEnded bool
	aheadErr   error
	haveAhead  bool
	// lines counts the physical lines the last event took.
	lines int
	// at, when set, tells where the line read last begins (see
	// TraceFile.linesAt); off is then where the last event begins.
	at       func() int64
	aheadOff int64
	off      int64
}

func (r *eventLines) readLine() ([]byte, bool, error) {
	if r.haveAhead {
		r.haveAhead = false
		r.off = r.aheadOff
		return r.ahead, r.aheadEnded, r.aheadErr
	}
	data, ended, err := r.read()
	if r.at != nil {
		r.off = r.at()
	}
	return data, ended, err
}

// next returns the next event's bytes: see transport.LineReader.ReadLine.
// The lines of an event are joined as they are in the file, so that its
// bytes are the file's from off, when at tells where lines begin.
func (r *eventLines) next() ([]byte, bool, error) {
	data, ended, err := r.readLine()
	start := r.off
	defer func() { r.off = start }()
	r.lines = 1
	if err != nil || !r.stable || !ended {
		return data, ended, err
	}
	for {
		l, le, lerr := r.readLine()
		if lerr != nil || len(l) == 0 || l[0] != ' ' && l[0] != '\t' {
			r.ahead, r.aheadEnded, r.aheadErr, r.haveAhead, r.aheadOff = l, le, lerr, true, r.off
			return data, ended, nil
		}
		if int64(len(data)+1+len(l)) > r.limit {
			return nil, false, &transport.FrameTooLargeError{What: "a trace event", Limit: r.limit}
		}
		data = append(append(data, '\n'), l...)
		ended = le
		r.lines++
		if !le {
			return data, ended, nil
		}
	}
}
