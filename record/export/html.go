package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/record"
)

// The page's stylesheet and script, inlined into every page and allowed by
// their hashes in its Content-Security-Policy.
var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// csp is the page's Content-Security-Policy: nothing may be fetched or
// sent (default-src 'none', no forms, no base URL), and only the page's
// own stylesheet and script run, named by their SHA-256 hashes, so that
// even markup that got into the page could run no script of its own.
// It is computed on first use, not at start-up: every mcpx command links
// this package.
var csp = sync.OnceValue(func() string {
	return "default-src 'none'; script-src " + hashSource(pageJS) + "; style-src " + hashSource(pageCSS) +
		"; img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
})

func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// htmlHeader is the data the page shows about the trace as a whole.
type htmlHeader struct {
	Title     string `json:"title"`
	Created   string `json:"created,omitempty"`
	Mcpx      string `json:"mcpx,omitempty"`
	Transport string `json:"transport,omitempty"`
	Target    string `json:"target,omitempty"`
	Redacted  bool   `json:"redacted"`
	Exporter  string `json:"exporter"`
}

// htmlSession is one session of the page's data, but for its rows
// (member "rows", an array of htmlRow, written after the others a row at
// a time).
type htmlSession struct {
	N         int    `json:"n"`
	Text      string `json:"text"`
	Transport string `json:"transport,omitempty"`
	Target    string `json:"target,omitempty"`
	Client    string `json:"client,omitempty"`
	Prelude   bool   `json:"prelude,omitempty"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
}

// htmlRow is one row of a session's timeline: a message, or an event
// around the messages (stderr, note, http, stream).
type htmlRow struct {
	// ID names the row in the page ("s1-7"); Pair the row it is paired
	// with (a request's response, a response's request).
	ID   string `json:"id"`
	Pair string `json:"pair,omitempty"`
	// T is the time since the trace began, Dur a request's (and its
	// response's) latency, both in microseconds.
	T   int64 `json:"t"`
	Dur int64 `json:"dur,omitempty"`
	// Kind is request, response, notification, invalid, stderr, note,
	// http or stream.
	Kind   string `json:"kind"`
	Dir    string `json:"dir,omitempty"`
	Method string `json:"method,omitempty"`
	RPCID  string `json:"rpcId,omitempty"`
	// Error says why the row is an error: a JSON-RPC error, a tool error,
	// an HTTP status of 400 or more, a frame that is no message.
	Error string `json:"error,omitempty"`
	// Pending marks a request no response was recorded for.
	Pending bool   `json:"pending,omitempty"`
	Text    string `json:"text,omitempty"`
	// Frame is the message, exactly as recorded.
	Frame   *text    `json:"frame,omitempty"`
	Batch   bool     `json:"batch,omitempty"`
	Prelude bool     `json:"prelude,omitempty"`
	Meta    []string `json:"meta,omitempty"`
}

// HTML writes the trace in src as one self-contained HTML page to w: each
// session as a timeline of its messages, each request paired with its
// response (by id, within the session) and drawn as a bar as long as its
// latency, notifications, server requests, stderr lines and HTTP events
// in place, errors highlighted, each message expandable as indented JSON,
// with filters by session, direction and method and a search box.
//
// The page fetches nothing and works from a file:// URL: its stylesheet,
// script and data are inline, and its Content-Security-Policy forbids
// every fetch and every script but its own. The trace's data travels as
// JSON in a <script type="application/json"> element with <, >, & and
// the line separators U+2028 and U+2029 escaped, and the script puts it
// into the page as text only (textContent), so that a frame holding
// markup (</script><script>…) is shown, never run.
func HTML(w io.Writer, src record.SessionSource, o Options) error {
	h := src.TraceHeader()
	title := o.Title
	if title == "" {
		title = "mcpx trace"
	}
	hd := htmlHeader{Title: title, Mcpx: h.Mcpx, Transport: h.Transport, Target: h.Target, Redacted: h.Redacted,
		Exporter: strings.TrimSpace(o.name() + " " + o.Version)}
	if !h.Created.IsZero() {
		hd.Created = h.Created.UTC().Format(time.RFC3339)
	}
	bw := bufio.NewWriter(w)
	sp := newSplicer(true)
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>%s</style>
</head>
<body>
<noscript>This page shows an mcpx trace with JavaScript, which is turned off.</noscript>
<div id="app"></div>
<script type="application/json" id="mcpx-trace">{"header":`, html.EscapeString(csp()), html.EscapeString(title), pageCSS)
	if err := writeScriptJSON(bw, sp, hd); err != nil {
		return err
	}
	bw.WriteString(`,"sessions":[`)
	wrote := 0
	for _, n := range src.SessionNumbers() {
		s, events, err := record.SessionEvents(src, n)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		// The session is read twice, an event at a time: first for what
		// its description and its rows need to know beforehand (see
		// scanRows), then to write them.
		sc, err := scanRows(events)
		if err != nil {
			return err
		}
		if wrote++; wrote > 1 {
			bw.WriteString(",\n")
		}
		if err := writeSession(bw, sp, s, events, sc); err != nil {
			return err
		}
	}
	fmt.Fprintf(bw, "]}</script>\n<script>%s</script>\n</body>\n</html>\n", pageJS)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	return nil
}

// writeScriptJSON writes v as JSON that is safe inside a <script>
// element: encoding/json escapes <, > and & (so no </script> or <!--
// can end or change the element) and U+2028 and U+2029, in v and in the
// texts spliced in (the splicer escapes as it does); the check below
// keeps it so. A trailing "}" is left out when open is set (for the
// caller to add members).
func writeScriptJSON(w *bufio.Writer, sp *splicer, v any) error {
	return writeScriptJSONOpen(w, sp, v, false)
}

func writeScriptJSONOpen(w *bufio.Writer, sp *splicer, v any, open bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the page's data: %w", err)
	}
	if bytes.ContainsAny(b, "<>&\u2028\u2029") {
		return fmt.Errorf("encoding the page's data: unescaped markup") // not reached: json.Marshal escapes it
	}
	if open {
		b = bytes.TrimSuffix(b, []byte("}"))
	}
	if err := sp.write(w, b); err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	return nil
}

// rowScan is what a first pass over a session's events finds for its
// timeline.
type rowScan struct {
	// seen says the session has events; start and end are the earliest
	// and the latest of their times.
	seen       bool
	start, end time.Duration
	// answers holds, for each request of the session's frames, in order,
	// the message that answers it: its index among the session's
	// messages (-1 when none) and its time.
	answers []reply
}

// reply is the response to a request, as the first pass finds it.
type reply struct {
	i int
	t time.Duration
}

// scanRows passes over a session's events for what writing its timeline
// as the events are read needs to know beforehand: the session's span,
// and each request's response (its row comes first and names it). An
// error of events is returned as it is.
func scanRows(events iter.Seq2[record.Event, error]) (rowScan, error) {
	var sc rowScan
	var p pairer
	req := map[int]int{} // index of an unanswered request -> its place in answers
	for ev, err := range events {
		if err != nil {
			return sc, err
		}
		if !sc.seen {
			sc.start, sc.end, sc.seen = ev.Time, ev.Time, true
		}
		sc.start, sc.end = min(sc.start, ev.Time), max(sc.end, ev.Time)
		if ev.Kind != record.KindFrame {
			continue
		}
		msgs, _ := ev.Messages()
		for _, m := range msgs {
			i, kind, key := p.n, messageKind(m), m.ID.Key()
			if kind == "request" {
				// A request whose id is sent again before it is
				// answered is answered no more: the pairer forgets it.
				if old, ok := p.open[string(ev.Dir)+key]; ok {
					delete(req, old)
				}
			}
			if j := p.add(ev.Dir, kind, key); j >= 0 {
				sc.answers[req[j]] = reply{i: i, t: ev.Time}
				delete(req, j)
			}
			if kind == "request" {
				req[i] = len(sc.answers)
				sc.answers = append(sc.answers, reply{i: -1})
			}
		}
	}
	return sc, nil
}

// writeSession writes a session's timeline: its description, then its
// rows one at a time, as its events are read (events, from the session
// s, whose first pass found sc), each frame written from the trace's
// bytes (so that a large session is not held, nor its JSON): what is
// held is the requests awaiting their responses, not the session.
func writeSession(w *bufio.Writer, sp *splicer, s *record.Session, events iter.Seq2[record.Event, error], sc rowScan) error {
	defer sp.reset()
	hs := htmlSession{N: s.N, Text: s.Text, Transport: s.Info.Transport, Target: s.Info.Target,
		Client: s.Info.Client, Prelude: s.Info.Prelude}
	if hs.Text == "" {
		hs.Text = strings.TrimSpace(s.Info.Transport + ": " + s.Info.Target)
	}
	if sc.seen {
		hs.Start, hs.End = sc.start.Microseconds(), sc.end.Microseconds()
	}
	if err := writeScriptJSONOpen(w, sp, hs, true); err != nil {
		return err
	}
	w.WriteString(`,"rows":[`)
	rows := 0
	row := func(r htmlRow) error {
		if rows++; rows > 1 {
			w.WriteString(",")
		}
		err := writeScriptJSON(w, sp, r)
		sp.reset()
		return err
	}
	id := func(i int) string { return fmt.Sprintf("s%d-m%d", s.N, i) }
	type request struct {
		method string
		t      int64
	}
	var p pairer
	open := map[int]request{} // the requests awaiting a response, by index
	requests := 0             // the requests so far
	i := -1                   // the event's index
	for e, err := range events {
		if err != nil {
			return err
		}
		i++
		t := e.Time.Microseconds()
		if e.Kind != record.KindFrame {
			if err := row(eventRow(sp, s.N, i, &e)); err != nil {
				return err
			}
			continue
		}
		msgs, batch := e.Messages()
		for _, msg := range msgs {
			m := newMessage(&e, msg, batch)
			n := p.n
			if m.kind == "request" {
				if old, ok := p.open[string(e.Dir)+m.key]; ok {
					delete(open, old) // answered no more (see scanRows)
				}
			}
			r := htmlRow{ID: id(n), T: t, Kind: m.kind, Dir: string(e.Dir), Method: m.method, RPCID: m.id,
				Error: m.errText, Text: m.summary, Frame: frameText(sp, m.raw), Batch: m.batch, Prelude: e.Prelude,
				Meta: metaLines(&e)}
			if j := p.add(e.Dir, m.kind, m.key); j >= 0 {
				q := open[j]
				delete(open, j)
				r.Method, r.Pair, r.Dur = q.method, id(j), t-q.t
			}
			if m.kind == "request" {
				open[n] = request{method: m.method, t: t}
				a := reply{i: -1}
				if requests < len(sc.answers) {
					a = sc.answers[requests]
				}
				requests++
				if a.i >= 0 {
					r.Pair, r.Dur = id(a.i), a.t.Microseconds()-t
				} else {
					r.Pending = true
				}
			}
			r.Dur = max(r.Dur, -r.Dur)
			if m.kind == "invalid" {
				r.Text = excerpt(string(m.raw[:min(len(m.raw), 4*summaryLen)]), summaryLen)
			}
			if err := row(r); err != nil {
				return err
			}
		}
	}
	w.WriteString("]}")
	return nil
}

// eventRow is the row of the event e, the i-th of session n, that is no
// frame: stderr, note, http, stream or view.
func eventRow(sp *splicer, n, i int, e *record.Event) htmlRow {
	r := htmlRow{ID: fmt.Sprintf("s%d-e%d", n, i), T: e.Time.Microseconds(), Kind: string(e.Kind), Dir: string(e.Dir), Text: e.Text,
		Meta: metaLines(e)}
	if r.Kind == string(record.KindHTTP) && e.Meta != nil && e.Meta.HTTPStatus >= 400 {
		r.Error = "HTTP " + strconv.Itoa(e.Meta.HTTPStatus)
	}
	if len(e.Re) > 0 {
		r.Meta = append(r.Meta, "answers request "+string(e.Re))
	}
	if e.Kind == record.KindView {
		// A message between mcpx and an MCP Apps view (minor 3).
		r.Text, r.Frame = excerpt(string(e.Data[:min(len(e.Data), 4*summaryLen)]), summaryLen), frameText(sp, e.Data)
		if e.View != nil {
			r.Meta = append(r.Meta, "view of "+e.View.Tool+" ("+e.View.URI+")")
		}
	}
	return r
}

// frameText is a row's frame: nil (left out) when empty.
func frameText(sp *splicer, b []byte) *text {
	if len(b) == 0 {
		return nil
	}
	return sp.text(b)
}

// metaLines describes an event's transport details, one per line.
func metaLines(e *record.Event) []string {
	var out []string
	if m := e.Meta; m != nil {
		if m.HTTPMethod != "" || m.URL != "" {
			out = append(out, strings.TrimSpace(m.HTTPMethod+" "+m.URL))
		}
		if m.HTTPStatus != 0 {
			out = append(out, strings.TrimSpace("HTTP "+strconv.Itoa(m.HTTPStatus)+" "+m.ContentType))
		}
		if m.SessionID != "" {
			out = append(out, "Mcp-Session-Id: "+m.SessionID)
		}
		if m.StreamID != "" {
			s := "SSE stream " + m.StreamID
			if m.EventID != "" {
				s += ", event id " + m.EventID
			}
			out = append(out, s)
		}
	}
	if r := e.Route; r != nil {
		if r.ProtocolVersion != "" {
			out = append(out, "MCP-Protocol-Version: "+r.ProtocolVersion)
		}
		if r.Method != "" {
			out = append(out, "Mcp-Method: "+r.Method)
		}
		if r.Name != "" {
			out = append(out, "Mcp-Name: "+r.Name)
		}
		for _, p := range r.Params {
			out = append(out, "Mcp-Param-"+p.Name+": "+p.Value)
		}
	}
	if e.Retry > 0 {
		out = append(out, "retry "+e.Retry.String())
	}
	if e.Prelude {
		out = append(out, "written from the session's memory (the recording began mid-session)")
	}
	return out
}
