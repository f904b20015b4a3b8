package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/record"
)

// The HAR 1.2 document (http://www.softwareishard.com/blog/har-12-spec/).
// Members whose names begin with an underscore are custom fields, which
// the specification allows.

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// harTraceInfo says where the archive came from (custom field _trace).
type harTraceInfo struct {
	Mcpx      string `json:"mcpx,omitempty"`
	Created   string `json:"created,omitempty"`
	Transport string `json:"transport,omitempty"`
	Target    string `json:"target,omitempty"`
	Redacted  bool   `json:"redacted"`
}

type harPage struct {
	StartedDateTime string         `json:"startedDateTime"`
	ID              string         `json:"id"`
	Title           string         `json:"title"`
	PageTimings     harPageTimings `json:"pageTimings"`
}

type harPageTimings struct {
	OnContentLoad float64 `json:"onContentLoad"`
	OnLoad        float64 `json:"onLoad"`
}

type harEntry struct {
	Pageref         string      `json:"pageref"`
	StartedDateTime string      `json:"startedDateTime"`
	Time            float64     `json:"time"`
	Request         harRequest  `json:"request"`
	Response        harResponse `json:"response"`
	Cache           struct{}    `json:"cache"`
	Timings         harTimings  `json:"timings"`
	Comment         string      `json:"comment,omitempty"`
	// Session is the trace session the entry belongs to (_session).
	Session int `json:"_session"`
	// Direction, on the synthetic entries of a session without HTTP, is
	// who sent the request or notification: "c2s" or "s2c" (_direction).
	Direction string `json:"_direction,omitempty"`
	// SSE lists the events of a text/event-stream response (_sse).
	SSE []harSSE `json:"_sse,omitempty"`

	start time.Duration // offset of the request in the trace
	end   time.Duration // offset of the last event of the exchange
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harRequest struct {
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	HTTPVersion string       `json:"httpVersion"`
	Cookies     []harNV      `json:"cookies"`
	Headers     []harNV      `json:"headers"`
	QueryString []harNV      `json:"queryString"`
	PostData    *harPostData `json:"postData,omitempty"`
	HeadersSize int          `json:"headersSize"`
	BodySize    int          `json:"bodySize"`
}

type harPostData struct {
	MimeType string  `json:"mimeType"`
	Params   []harNV `json:"params"`
	Text     *text   `json:"text"`
	Comment  string  `json:"comment,omitempty"`
}

type harResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []harNV    `json:"cookies"`
	Headers     []harNV    `json:"headers"`
	Content     harContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int        `json:"bodySize"`
	Comment     string     `json:"comment,omitempty"`
}

type harContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     *text  `json:"text,omitempty"`
	// Encoding is "base64" when Text holds a body that is not valid
	// UTF-8 (a JSON string cannot carry its bytes), empty otherwise.
	Encoding string `json:"encoding,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

type harTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

// harSSE is one event of an SSE stream (custom field _sse): a frame's
// data, or stream metadata (a priming event: an id and perhaps a retry
// delay, no data).
type harSSE struct {
	// Time is when the event arrived (ISO 8601), Offset the same in
	// milliseconds since the request was sent.
	Time   string  `json:"time"`
	Offset float64 `json:"offset"`
	ID     string  `json:"id,omitempty"`
	Data   *text   `json:"data"`
	// Retry is the reconnection delay the event asked for, in ms.
	Retry int64 `json:"retry,omitempty"`
	// Stream is mcpx's name for the stream ("post-3", "get-2", "sse").
	Stream  string `json:"stream,omitempty"`
	Comment string `json:"comment,omitempty"`

	meta bool // stream metadata, no data
}

// HAR writes the trace in src as an HTTP Archive (HAR 1.2) to w.
//
// Every HTTP exchange a session recorded is an entry: its method, URL (as
// redacted in the trace), status, the headers mcpx records (the MCP
// headers, Content-Type and, as "[redacted]", credentials: traces keep no
// other headers), the request body (the client's frame) and the response
// content: a JSON body, or for a text/event-stream response the events it
// carried, rebuilt as SSE text (id, retry and data lines) and listed in the
// entry's custom _sse array with their arrival times. Timings are measured
// from the trace: send 0, wait until the response's headers, receive
// until the last event of its body; the rest is -1 (not recorded).
//
// A session without HTTP exchanges (stdio, or a trace that recorded only
// frames) becomes synthetic entries: one per request (either direction)
// with its response, and one per notification, at
// <transport>://session-N/<method> (stdio://session-1/tools/call), with
// the request as the POST body and the response as JSON content (status
// 200, 202 for a notification, 0 when the response was never recorded);
// the custom _direction says who sent the request. Each session is a HAR
// page, and each entry's custom _session names it.
func HAR(w io.Writer, src record.SessionSource, o Options) error {
	h := src.TraceHeader()
	start := startTime(h)
	info := harTraceInfo{Mcpx: h.Mcpx, Transport: h.Transport, Target: h.Target, Redacted: h.Redacted}
	if !h.Created.IsZero() {
		info.Created = harTime(h.Created)
	}
	comment := ""
	if !h.Redacted {
		comment = "recorded without redaction: the archive may hold secrets"
	}
	// The archive is written an entry at a time, as each session is read
	// (see httpEntries and messageEntries), so that exporting a large
	// trace holds what is in flight (and one entry's JSON), not a
	// session's bodies. The pages, which are small, come after the
	// entries: the order of an object's members means nothing to JSON (or
	// to HAR readers).
	bw := bufio.NewWriter(w)
	sp := newSplicer(false)
	fail := func(err error) error { return fmt.Errorf("writing the HAR: %w", err) }
	bw.WriteString("{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"creator\": ")
	if err := writeHARValue(bw, harCreator{Name: o.name(), Version: o.Version}, "    "); err != nil {
		return fail(err)
	}
	bw.WriteString(",\n    \"entries\": [")
	pages := []harPage{}
	wrote := 0
	for _, n := range src.SessionNumbers() {
		s, events, err := record.SessionEvents(src, n)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		// The session is read twice, an event at a time (see
		// messageEntries): first for what its entries need to know
		// beforehand, then to write them.
		sc, err := scanSession(events)
		if err != nil {
			return err
		}
		page := harPage{ID: fmt.Sprintf("session-%d", s.N), Title: sessionTitle(s),
			PageTimings: harPageTimings{OnContentLoad: -1, OnLoad: -1}}
		page.StartedDateTime = harTime(start.Add(sc.first))
		pages = append(pages, page)
		// An entry's texts are its splicer's (an HTTP exchange's own).
		write := func(e *harEntry, sp *splicer) error {
			e.Pageref = page.ID
			e.Session = s.N
			e.StartedDateTime = harTime(start.Add(e.start))
			if wrote++; wrote > 1 {
				bw.WriteString(",")
			}
			bw.WriteString("\n      ")
			return sp.encode(bw, e, "      ", "  ")
		}
		// Each entry is written as it is made (and its texts let go
		// of): a session of many exchanges holds none of them.
		emit := func(e *harEntry) error {
			defer sp.reset()
			if err := write(e, sp); err != nil {
				return fail(err)
			}
			return nil
		}
		if len(sc.lasts) > 0 {
			if err := httpEntries(sp, events, sc.lasts, start, write); err != nil {
				return err
			}
			continue
		}
		if err := messageEntries(sp, s, events, sc.answered, emit); err != nil {
			return err
		}
	}
	if wrote > 0 {
		bw.WriteString("\n    ")
	}
	bw.WriteString("],\n    \"pages\": ")
	if err := writeHARValue(bw, pages, "    "); err != nil {
		return fail(err)
	}
	if comment != "" {
		bw.WriteString(",\n    \"comment\": ")
		if err := writeHARValue(bw, comment, "    "); err != nil {
			return fail(err)
		}
	}
	bw.WriteString(",\n    \"_trace\": ")
	if err := writeHARValue(bw, info, "    "); err != nil {
		return fail(err)
	}
	bw.WriteString("\n  }\n}\n")
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	return nil
}

// writeHARValue writes v as indented JSON whose lines after the first
// begin with prefix, without a final newline and with <, > and & as they
// are (a HAR is no HTML).
func writeHARValue(w *bufio.Writer, v any, prefix string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return err
}

// sessionTitle describes a session for a page title.
func sessionTitle(s *record.Session) string {
	t := s.Text
	if t == "" {
		t = strings.TrimSpace(s.Info.Transport + ": " + s.Info.Target)
	}
	return fmt.Sprintf("session %d: %s", s.N, t)
}

// exchange is one HTTP request and its response, as built from a
// session's events: what matching the events to it needs (in both
// passes over the session), and its entry (in the second).
type exchange struct {
	// n is the exchange's place among the session's, in the order of
	// their requests (the order of the entries).
	n        int
	method   string
	url      string
	answered bool
	status   int
	// sse marks a text/event-stream response and stream the SSE stream
	// bound to it; json marks a JSON response and body that its body
	// (a frame) was attached.
	sse    bool
	json   bool
	stream string
	body   bool
	respAt time.Duration
	// posted says the request has a body, post, kept in the second pass
	// while a request sent again may carry it.
	posted bool
	post   []byte

	// e is the entry, sp the splicer of its texts: nil in the first pass
	// and once the entry is written.
	e  *harEntry
	sp *splicer
}

// live reports whether a later event may still be matched to x by
// looking through the exchanges: x awaits its response, its JSON body or
// its SSE stream. (An exchange bound to a stream is found by the
// stream's id.)
func (x *exchange) live() bool {
	return !x.answered || x.json && !x.body || x.sse && x.stream == ""
}

// httpMatcher matches the events of a session to its HTTP exchanges, an
// event at a time, as both passes over the session do (scanSession, to
// learn which event changes each exchange last, and httpEntries).
//
// The trace records an exchange as an http event for the request (no
// status), one for the response (a status line, or for a refusal without
// a JSON-RPC body an excerpt of the body), the client's frame and the
// frames and stream events of the response. A response goes to the
// oldest unanswered request with its method and URL; an SSE stream to the
// exchange that opened it (the oldest answered text/event-stream exchange
// with its method and URL and no stream yet); a JSON body to the oldest
// answered exchange still without one. The client's frame is the POST's
// body: mcpx as the client records the frame just before the request,
// mcpx proxy just after it (the first POST of the session tells which).
type httpMatcher struct {
	// sp, when set, makes the exchanges' entries (the second pass): when
	// one is set, only the entry of exchange only (see entryAhead).
	sp   *splicer
	only int
	one  bool
	// made counts the exchanges made; live lists those a later event
	// may still be matched to by looking (see exchange.live), in order.
	made int
	live []*exchange
	// lastPost is the latest POST exchange.
	lastPost *exchange
	// pending counts the frames sent before their POST; frames holds
	// them when entries are made.
	pending int
	frames  [][]byte
	// awaiting lists the POSTs whose frame follows them.
	awaiting             []*exchange
	framesFirst, decided bool
	streams              map[string]*exchange
}

// event matches the event ev to an exchange, which it makes or changes
// and returns; nil when ev changes none.
func (m *httpMatcher) event(ev *record.Event) *exchange {
	if m.streams == nil {
		m.streams = map[string]*exchange{}
	}
	find := func(method, u string, ok func(*exchange) bool) *exchange {
		for _, x := range m.live {
			if x.method == method && x.url == u && ok(x) {
				return x
			}
		}
		return nil
	}
	touch := func(x *exchange, t time.Duration) *exchange {
		if x.e != nil {
			x.e.end = max(x.e.end, t)
		}
		if !x.live() {
			if i := slices.Index(m.live, x); i >= 0 {
				m.live = slices.Delete(m.live, i, i+1)
			}
		}
		return x
	}
	switch ev.Kind {
	case record.KindHTTP:
		if ev.Meta == nil {
			return nil
		}
		switch {
		case ev.Meta.HTTPStatus == 0:
			x := m.newExchange(ev)
			if x.method == http.MethodPost {
				if !m.decided {
					m.framesFirst, m.decided = m.pending > 0, true
				}
				switch {
				case !m.framesFirst:
					m.awaiting = append(m.awaiting, x)
				case m.pending > 0:
					var data []byte
					if len(m.frames) > 0 {
						data = m.frames[0]
						m.frames[0] = nil
						m.frames = m.frames[1:]
					}
					m.pending--
					m.setBody(x, data)
				default:
					// A request sent again (after a 401, or to the
					// legacy HTTP+SSE endpoint after a 404) has no
					// frame of its own: it carries the last one.
					if prev := m.lastPost; prev != nil && prev.posted && (prev.status == 0 || prev.status >= 400) {
						m.setBody(x, prev.post)
					}
				}
			}
			m.add(x)
			return touch(x, ev.Time)
		case strings.Contains(ev.Text, " ← ") || len(ev.Re) > 0 || ev.Meta.StreamID == "":
			x := find(ev.Meta.HTTPMethod, ev.Meta.URL, func(x *exchange) bool { return !x.answered })
			if x == nil {
				x = m.newExchange(ev) // the request was not recorded
				m.add(x)
			}
			answer(x, ev)
			if i := slices.Index(m.awaiting, x); i >= 0 {
				m.awaiting = slices.Delete(m.awaiting, i, i+1)
			}
			return touch(x, ev.Time)
		default:
			if x := m.streamExchange(ev); x != nil {
				addSSE(x, ev, nil)
				return touch(x, ev.Time)
			}
		}
	case record.KindStream:
		if ev.Meta == nil {
			return nil
		}
		if x := m.streamExchange(ev); x != nil {
			addSSE(x, ev, nil)
			return touch(x, ev.Time)
		}
	case record.KindFrame:
		if ev.Dir == record.ClientToServer {
			if len(m.awaiting) > 0 && !m.awaiting[0].answered {
				x := m.awaiting[0]
				m.setBody(x, ev.Data)
				m.awaiting[0] = nil
				m.awaiting = m.awaiting[1:]
				return touch(x, ev.Time)
			}
			if !m.decided || m.framesFirst {
				m.pending++
				if m.sp != nil {
					m.frames = append(m.frames, ev.Data)
				}
			}
			return nil
		}
		if ev.Meta == nil || ev.Meta.HTTPMethod == "" {
			return nil // not attributable to an exchange
		}
		if ev.Meta.StreamID != "" {
			if x := m.streamExchange(ev); x != nil {
				addSSE(x, ev, ev.Data)
				return touch(x, ev.Time)
			}
			return nil
		}
		x := find(ev.Meta.HTTPMethod, ev.Meta.URL, func(x *exchange) bool { return x.answered && x.json && !x.body })
		if x == nil {
			return nil
		}
		x.body = true
		if x.e != nil {
			c := &x.e.Response.Content
			c.Comment = ""
			setContent(x.sp, c, ev.Data)
			x.e.Response.BodySize = len(ev.Data)
		}
		return touch(x, ev.Time)
	}
	return nil
}

// add adds a new exchange x.
func (m *httpMatcher) add(x *exchange) {
	m.live = append(m.live, x)
	if x.method == http.MethodPost {
		if prev := m.lastPost; prev != nil && prev.e == nil {
			prev.post = nil // written, and no longer the last
		}
		m.lastPost = x
	}
}

// setBody sets the body of x's request: the client's frame.
func (m *httpMatcher) setBody(x *exchange, data []byte) {
	x.posted = true
	if x.e != nil {
		x.post = data
		setBody(x.sp, x.e, data)
	}
}

// done lets go of the entry of x, written: no later event changes it,
// but what matching them needs is kept.
func (m *httpMatcher) done(x *exchange) {
	x.e, x.sp = nil, nil
	if x != m.lastPost {
		x.post = nil
	}
}

// newExchange starts an exchange from the http event of its request (or,
// when the request was not recorded, of its response), and its entry when
// m makes them.
func (m *httpMatcher) newExchange(ev *record.Event) *exchange {
	method, u := ev.Meta.HTTPMethod, ev.Meta.URL
	var rest string
	if ev.Meta.HTTPStatus == 0 {
		textMethod, after, _ := strings.Cut(ev.Text, " ")
		textURL, after, _ := strings.Cut(after, " ")
		if method == "" {
			method = textMethod
		}
		if u == "" {
			u = textURL
		}
		rest = after
	}
	x := &exchange{n: m.made, method: method, url: u}
	m.made++
	if m.sp == nil || m.one && x.n != m.only {
		return x
	}
	var headers []harNV
	if ev.Meta.HTTPStatus == 0 {
		for _, g := range groups(rest) {
			headers = append(headers, parseHeaders(g)...)
		}
		if ev.Meta.SessionID != "" && !hasHeader(headers, "Mcp-Session-Id") {
			headers = append(headers, harNV{Name: "Mcp-Session-Id", Value: ev.Meta.SessionID})
		}
	}
	if headers == nil {
		headers = []harNV{}
	}
	version := "HTTP/1.1"
	if strings.HasPrefix(strings.ToLower(u), "https:") {
		// mcpx does not record the version; over TLS Go's client may
		// have spoken HTTP/2.
		version = "unknown"
	}
	e := &harEntry{
		Request: harRequest{Method: method, URL: u, HTTPVersion: version, Cookies: []harNV{},
			Headers: headers, QueryString: queryString(u), HeadersSize: -1},
		Response: harResponse{HTTPVersion: version, Cookies: []harNV{}, Headers: []harNV{},
			HeadersSize: -1, BodySize: -1, Comment: "no response recorded"},
		start: ev.Time, end: ev.Time,
	}
	x.e, x.sp = e, m.sp.child()
	return x
}

// setBody sets a request's body: the client's frame.
func setBody(sp *splicer, e *harEntry, data []byte) {
	e.Request.PostData = &harPostData{MimeType: "application/json", Params: []harNV{}, Text: sp.text(data)}
	if !utf8.Valid(data) {
		// HAR 1.2 has no encoding for a request body: the JSON string
		// shows each invalid byte as U+FFFD, and the comment says so.
		e.Request.PostData.Comment = "the body is not valid UTF-8: each invalid byte is shown as U+FFFD; bodySize counts the bytes sent"
	}
	e.Request.BodySize = len(data)
}

// setContent sets a response's content to the bytes of a body: as text,
// or, when they are not valid UTF-8 (which a JSON string cannot hold:
// the encoder would turn each invalid byte into U+FFFD), base64-encoded
// with encoding "base64", as HAR 1.2 provides for binary content. Size
// is the body's length in bytes either way.
func setContent(sp *splicer, c *harContent, data []byte) {
	c.Size = len(data)
	switch {
	case len(data) == 0:
		c.Text, c.Encoding = nil, "" // (omitted, as an empty string was)
	case utf8.Valid(data):
		c.Text, c.Encoding = sp.text(data), ""
	default:
		c.Text, c.Encoding = sp.base64(data), "base64"
	}
}

// answer records the http event of an exchange's response: a status line
// ("200 OK text/event-stream ← POST URL (Mcp-Session-Id: …)"), or a
// refusal whose text is an excerpt of its body.
func answer(x *exchange, ev *record.Event) {
	x.answered, x.respAt, x.status = true, ev.Time, ev.Meta.HTTPStatus
	ct := ev.Meta.ContentType
	line, rest, isLine := strings.Cut(ev.Text, " ← ")
	refusal := !isLine || len(ev.Re) > 0
	// A refusal's excerpt is its content: no JSON body is attached.
	x.json = strings.Contains(strings.ToLower(ct), "json") && !(refusal && ev.Text != "")
	x.sse = strings.HasPrefix(strings.ToLower(ct), "text/event-stream")
	if x.e == nil {
		return
	}
	r := &x.e.Response
	r.Status = ev.Meta.HTTPStatus
	r.StatusText = http.StatusText(r.Status)
	r.Comment = ""
	r.BodySize = 0
	r.Content = harContent{MimeType: ct}
	if ct != "" {
		r.Headers = append(r.Headers, harNV{Name: "Content-Type", Value: ct})
	}
	switch {
	case !refusal:
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ct))
		if code, text, ok := strings.Cut(line, " "); ok && code == strconv.Itoa(r.Status) {
			r.StatusText = strings.TrimSpace(text)
		}
		// After the method and URL: "(answered by URL)" and the headers.
		_, rest, _ = strings.Cut(rest, " ")
		_, rest, _ = strings.Cut(rest, " ")
		for _, g := range groups(rest) {
			if by, ok := strings.CutPrefix(g, "answered by "); ok {
				r.Comment = "answered by " + by + " after a redirect"
				continue
			}
			r.Headers = append(r.Headers, parseHeaders(g)...)
		}
	default:
		// A refusal: the trace keeps a bounded excerpt of its body.
		if ev.Text != "" {
			r.Content.Text = x.sp.text([]byte(ev.Text))
		}
		r.Content.Size = len(ev.Text)
		r.Content.Comment = "an excerpt of the body (the trace keeps at most 512 bytes)"
		r.BodySize = -1
	}
	if ev.Meta.SessionID != "" && !hasHeader(r.Headers, "Mcp-Session-Id") && isLine &&
		strings.Contains(ev.Text, "Mcp-Session-Id") {
		r.Headers = append(r.Headers, harNV{Name: "Mcp-Session-Id", Value: ev.Meta.SessionID})
	}
	if x.sse {
		r.BodySize = -1
		r.Content.Comment = "the events of the stream, rebuilt from the trace (see _sse)"
	}
}

// streamExchange returns the exchange an SSE stream's event belongs to,
// binding a stream seen for the first time (or resumed with another
// method) to the oldest answered event-stream exchange without a stream.
func (mt *httpMatcher) streamExchange(ev *record.Event) *exchange {
	m := ev.Meta
	if x := mt.streams[m.StreamID]; x != nil && x.method == m.HTTPMethod {
		return x
	}
	for _, x := range mt.live {
		if x.sse && x.stream == "" && x.method == m.HTTPMethod && (m.URL == "" || x.url == m.URL) {
			x.stream = m.StreamID
			mt.streams[m.StreamID] = x
			return x
		}
	}
	if x := mt.streams[m.StreamID]; x != nil {
		return x
	}
	return nil
}

// addSSE appends an SSE event to a stream's exchange: a frame (data) or
// stream metadata (data nil).
func addSSE(x *exchange, ev *record.Event, data []byte) {
	if x.e == nil {
		return
	}
	e := harSSE{Offset: ms(ev.Time - x.e.start), ID: ev.Meta.EventID, Data: x.sp.text(data), Stream: ev.Meta.StreamID}
	if ev.Retry > 0 {
		e.Retry = ev.Retry.Milliseconds()
	}
	if data == nil {
		e.Comment, e.meta = ev.Text, true
	}
	x.e.SSE = append(x.e.SSE, e)
}

// finish fills in what is known once no later event changes x: the
// SSE text, with the events' wall-clock times (start is the trace's),
// the timings and the entry's total time.
func finish(x *exchange, start time.Time) {
	e, sp := x.e, x.sp
	for i := range e.SSE {
		e.SSE[i].Time = harTime(start.Add(e.start).Add(time.Duration(e.SSE[i].Offset * float64(time.Millisecond))))
	}
	if x.sse {
		// The text refers to the events' data, not copied.
		var parts []textPart
		str := func(s string) { parts = append(parts, textPart{b: []byte(s)}) }
		blank := []byte("\n")
		for _, ev := range e.SSE {
			if ev.ID != "" {
				str("id: " + ev.ID + "\n")
			}
			if ev.Retry > 0 {
				str("retry: " + strconv.FormatInt(ev.Retry, 10) + "\n")
			}
			if !ev.meta {
				parts = append(parts, textPart{b: ev.Data.parts[0].b, sse: true})
			}
			parts = append(parts, textPart{b: blank})
		}
		e.Response.Content.Text = sp.textOf(parts...)
		e.Response.Content.Size = e.Response.Content.Text.len()
		if e.Response.Content.Size == 0 {
			e.Response.Content.Text = nil
		}
	}
	e.Timings = harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1}
	// A trace's times only grow within a session, but one edited by hand
	// (or joined from pieces) may not: HAR allows no negative send, wait
	// or receive, so a response recorded before its request waits 0.
	if x.answered {
		e.Timings.Wait = ms(max(x.respAt-e.start, 0))
		e.Timings.Receive = ms(max(e.end, x.respAt) - max(x.respAt, e.start))
	} else {
		e.Timings.Wait = ms(e.end - e.start)
	}
	e.Time = e.Timings.Send + e.Timings.Wait + e.Timings.Receive
}

// groupRE matches the parenthesised groups after an HTTP event's URL.
var groupRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(([^()]*)\)`) })

// groups returns the contents of the parenthesised groups in s.
func groups(s string) []string {
	var out []string
	for _, m := range groupRE().FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// headerStart matches the start of a header in a list: "Name: ".
var headerStart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|, )([A-Za-z0-9][A-Za-z0-9!#$%&'*+.^_|~-]*): `) })

// parseHeaders parses "Name: value, Name: value" as the HTTP events of a
// trace write them (a value may hold ", " itself: a new header starts
// only where a name and ": " follow).
func parseHeaders(s string) []harNV {
	locs := headerStart().FindAllStringSubmatchIndex(s, -1)
	var out []harNV
	for i, l := range locs {
		if i == 0 && l[0] != 0 {
			return nil // not a header list
		}
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out = append(out, harNV{Name: s[l[2]:l[3]], Value: s[l[1]:end]})
	}
	return out
}

func hasHeader(hs []harNV, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// queryString lists the query parameters of u, as redacted in the trace.
func queryString(u string) []harNV {
	out := []harNV{}
	pu, err := url.Parse(u)
	if err != nil {
		return out
	}
	for _, kv := range strings.Split(pu.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		out = append(out, harNV{Name: k, Value: v})
	}
	return out
}

// httpEntries writes the entries of a session's HTTP exchanges with
// write, in the order of their requests, as the session's events are
// read; an error of events is returned as it is, one of write wrapped.
//
// An exchange's response, its body and its SSE stream may come any time
// after its request, and a later exchange's before them: an entry is
// written once no later event changes it (lasts, from a first pass over
// the events, says which event changes each exchange last; see
// scanSession), after the entries before it, so that what is held is the
// exchanges from the oldest one in progress on, not the session.
//
// An exchange in progress for long (a Streamable HTTP session's GET
// stream, open from the start to the end) would hold back every entry
// after it: once holdAhead entries wait for it, its own entry is made by
// reading the events again, ahead, up to its last one (see entryAhead),
// and written.
func httpEntries(sp *splicer, events iter.Seq2[record.Event, error], lasts []int, start time.Time, write func(*harEntry, *splicer) error) error {
	m := &httpMatcher{sp: sp}
	var queue []*exchange // made, not written yet
	looked := -1          // the exchange whose entry was looked for ahead in vain
	flush := func(i int) error {
		for len(queue) > 0 {
			x := queue[0]
			if x.n < len(lasts) && lasts[x.n] > i {
				if len(queue) <= holdAhead || x.e == nil || x.n == looked {
					return nil
				}
				y, err := entryAhead(sp, events, x.n, lasts[x.n])
				if err != nil {
					return err
				}
				if y == nil {
					looked = x.n // the trace changed between the passes
					return nil
				}
				// Written now: what comes later for x changes no entry.
				m.done(x)
				x = y
			}
			queue[0] = nil
			queue = queue[1:]
			finish(x, start)
			err := write(x.e, x.sp)
			m.done(x)
			if err != nil {
				return fmt.Errorf("writing the HAR: %w", err)
			}
		}
		return nil
	}
	i := -1
	for ev, err := range events {
		if err != nil {
			return err
		}
		i++
		made := m.made
		if x := m.event(&ev); m.made > made {
			queue = append(queue, x)
		}
		if err := flush(i); err != nil {
			return err
		}
	}
	// An exchange the first pass saw changed later (the trace changed
	// between the passes) is written as it is.
	return flush(math.MaxInt)
}

// holdAhead is how many entries httpEntries holds back for an exchange
// in progress before it makes that one's entry by reading ahead.
const holdAhead = 64

// entryAhead makes the entry of the n-th HTTP exchange of a session alone
// (no other), reading its events again up to the one at index last, after
// which nothing changes it; nil when the events end before (the trace
// changed since the first pass).
func entryAhead(sp *splicer, events iter.Seq2[record.Event, error], n, last int) (*exchange, error) {
	m := &httpMatcher{sp: sp, only: n, one: true}
	var x *exchange
	i := -1
	for ev, err := range events {
		if err != nil {
			return nil, err
		}
		i++
		if y := m.event(&ev); y != nil && y.n == n {
			x = y
		}
		if i == last {
			return x, nil
		}
	}
	return nil, nil
}

// messageEntries makes the synthetic entries of a session without HTTP
// exchanges, one per request with its response, one per notification,
// and gives each to emit as it is made; an error of events or of emit
// ends it, returned as it is.
//
// The session's events are read as they come, not held: a request's
// entry waits for its response, and the entries after it for it (the
// entries are in the order of the requests), so what is held is the
// messages from the oldest request awaiting its response on. answered,
// from a first pass over the events (see scanSession), says which
// requests are answered at all, so that one never answered holds
// nothing back.
func messageEntries(sp *splicer, s *record.Session, events iter.Seq2[record.Event, error], answered []bool, emit func(*harEntry) error) error {
	scheme := s.Info.Transport
	if scheme != "stdio" && scheme != "pipe" {
		scheme = "mcp"
	}
	type held struct {
		m       message
		i       int      // its index among the session's messages
		r       *message // its response
		waiting bool     // for its response
		looked  bool     // for its response ahead, in vain
	}
	var queue []*held
	waiting := map[int]*held{} // index of a request -> its entry
	// A request answered long after (a subscription, a long task) would
	// hold back every entry after it: once holdAhead entries wait for
	// it, its response is found by reading the events again, ahead (see
	// responseAhead), and its entry written; the response, when this
	// pass reaches it, is in it already.
	ahead := map[int]bool{} // index of a request answered ahead
	flush := func() error {
		for len(queue) > 0 {
			h := queue[0]
			if h.waiting {
				if len(queue) <= holdAhead || h.looked {
					return nil
				}
				r, k, err := responseAhead(events, h.i)
				if err != nil {
					return err
				}
				if r == nil {
					h.looked = true // the trace changed between the passes
					return nil
				}
				delete(waiting, h.i)
				ahead[h.i] = true
				r.pair, r.method = h.i, h.m.method
				h.m.pair, h.r, h.waiting = k, r, false
			}
			queue[0] = nil
			queue = queue[1:]
			if err := emit(messageEntry(sp, s.N, scheme, &h.m, h.r)); err != nil {
				return err
			}
		}
		return nil
	}
	var p pairer
	for ev, err := range events {
		if err != nil {
			return err
		}
		if ev.Kind != record.KindFrame {
			continue
		}
		msgs, batch := ev.Messages()
		for _, m := range msgs {
			mm := newMessage(&ev, m, batch)
			i := p.n
			if j := p.add(ev.Dir, mm.kind, mm.key); j >= 0 {
				if ahead[j] {
					delete(ahead, j)
					continue // in its request's entry, written
				}
				if h := waiting[j]; h != nil {
					delete(waiting, j)
					mm.pair, mm.method = j, h.m.method
					h.m.pair, h.r, h.waiting = i, &mm, false
					continue // in its request's entry
				}
				// The first pass did not see request j answered: the
				// trace changed between the passes. The response is
				// one to no recorded request.
			}
			h := &held{m: mm, i: i}
			if mm.kind == "request" && i < len(answered) && answered[i] {
				h.waiting = true
				waiting[i] = h
			}
			queue = append(queue, h)
		}
		if err := flush(); err != nil {
			return err
		}
	}
	for _, h := range queue {
		h.waiting = false // answered in the first pass, not in this one
	}
	return flush()
}

// responseAhead reads a session's events again, ahead, for the response
// to the request that is its j-th message, and the response's index;
// nil when the events end without one (the trace changed since the first
// pass).
func responseAhead(events iter.Seq2[record.Event, error], j int) (*message, int, error) {
	var p pairer
	for ev, err := range events {
		if err != nil {
			return nil, 0, err
		}
		if ev.Kind != record.KindFrame {
			continue
		}
		msgs, batch := ev.Messages()
		for _, m := range msgs {
			i := p.n
			if p.add(ev.Dir, messageKind(m), m.ID.Key()) == j {
				mm := newMessage(&ev, m, batch)
				return &mm, i, nil
			}
		}
	}
	return nil, 0, nil
}

// messageEntry makes the synthetic entry of a message m (a request, a
// notification, a response to no recorded request, or not a message) of
// session n, with r the response to a request (nil when none).
func messageEntry(sp *splicer, n int, scheme string, m, r *message) *harEntry {
	u := url.URL{Scheme: scheme, Host: fmt.Sprintf("session-%d", n), Path: "/" + m.method}
	e := &harEntry{
		Request: harRequest{Method: http.MethodPost, URL: u.String(), HTTPVersion: scheme, Cookies: []harNV{},
			Headers: []harNV{}, QueryString: []harNV{}, HeadersSize: -1},
		Response:  harResponse{HTTPVersion: scheme, Cookies: []harNV{}, Headers: []harNV{}, HeadersSize: -1},
		Direction: string(m.ev.Dir),
		start:     m.ev.Time, end: m.ev.Time,
	}
	e.Timings = harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1}
	switch m.kind {
	case "request":
		setBody(sp, e, m.raw)
		if r == nil {
			e.Response.Comment = "no response recorded"
			break
		}
		e.Response.Status, e.Response.StatusText = http.StatusOK, "OK"
		if r.errText != "" && r.errText != "isError: true" {
			e.Response.StatusText = "JSON-RPC " + r.errText
		}
		e.Response.Headers = []harNV{{Name: "Content-Type", Value: "application/json"}}
		e.Response.Content = harContent{MimeType: "application/json"}
		setContent(sp, &e.Response.Content, r.raw)
		e.Response.BodySize = len(r.raw)
		e.end = max(r.ev.Time, m.ev.Time)
		e.Timings.Wait = ms(e.end - m.ev.Time) // 0 for a response recorded before its request
	case "notification":
		setBody(sp, e, m.raw)
		e.Response.Status, e.Response.StatusText = http.StatusAccepted, "Accepted"
		e.Response.Comment = "a notification: nothing answers it"
	default:
		// A response to no recorded request, or not a message.
		e.Request.BodySize = 0
		e.Response.Status, e.Response.StatusText = http.StatusOK, "OK"
		e.Response.Content = harContent{MimeType: "application/json"}
		setContent(sp, &e.Response.Content, m.raw)
		e.Response.BodySize = len(m.raw)
		e.Comment = "a response to no recorded request"
		if m.kind == "invalid" {
			e.Response.Content.MimeType = "text/plain"
			e.Comment = "not a JSON-RPC message"
		}
	}
	e.Time = e.Timings.Wait
	return e
}

// sessionScan is what a first pass over a session's events finds.
type sessionScan struct {
	// first is the time of the first event.
	first time.Duration
	// answered says, for each message of the session's frames, in order,
	// whether it is a request that a later message answers.
	answered []bool
	// lasts says, for each HTTP exchange of the session, in order, which
	// event (its index) changes it last; empty when there are none.
	lasts []int
}

// scanSession passes over a session's events for what writing its
// entries as they are read needs to know beforehand; an error of events
// is returned as it is.
func scanSession(events iter.Seq2[record.Event, error]) (sessionScan, error) {
	var sc sessionScan
	var p pairer
	var xm httpMatcher // making no entries
	i := -1            // the event's index
	for ev, err := range events {
		if err != nil {
			return sc, err
		}
		if i++; i == 0 {
			sc.first = ev.Time
		}
		made := xm.made
		if x := xm.event(&ev); x != nil {
			if xm.made > made {
				sc.lasts = append(sc.lasts, i)
			}
			sc.lasts[x.n] = i
		}
		if ev.Kind != record.KindFrame {
			continue
		}
		msgs, _ := ev.Messages()
		for _, m := range msgs {
			sc.answered = append(sc.answered, false)
			if j := p.add(ev.Dir, messageKind(m), m.ID.Key()); j >= 0 {
				sc.answered[j] = true
			}
		}
	}
	return sc, nil
}
