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
		s, err := src.ReadSession(n)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		if wrote++; wrote > 1 {
			bw.WriteString(",\n")
		}
		if err := writeSession(bw, sp, s); err != nil {
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

// writeSession writes a session's timeline: its description, then its
// rows one at a time, each frame written from the trace's bytes (so that
// a large session is not held twice, nor its JSON).
func writeSession(w *bufio.Writer, sp *splicer, s *record.Session) error {
	defer sp.reset()
	hs := htmlSession{N: s.N, Text: s.Text, Transport: s.Info.Transport, Target: s.Info.Target,
		Client: s.Info.Client, Prelude: s.Info.Prelude}
	if hs.Text == "" {
		hs.Text = strings.TrimSpace(s.Info.Transport + ": " + s.Info.Target)
	}
	if len(s.Events) > 0 {
		hs.Start, hs.End = s.Events[0].Time.Microseconds(), s.Events[0].Time.Microseconds()
	}
	for i := range s.Events {
		t := s.Events[i].Time.Microseconds()
		hs.Start, hs.End = min(hs.Start, t), max(hs.End, t)
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
	msgs := messages(s)
	id := func(i int) string { return fmt.Sprintf("s%d-m%d", s.N, i) }
	next := 0 // the next message, in event order
	for i := range s.Events {
		e := &s.Events[i]
		t := e.Time.Microseconds()
		if e.Kind != record.KindFrame {
			r := htmlRow{ID: fmt.Sprintf("s%d-e%d", s.N, i), T: t, Kind: string(e.Kind), Dir: string(e.Dir), Text: e.Text,
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
			if err := row(r); err != nil {
				return err
			}
			continue
		}
		for ; next < len(msgs) && msgs[next].ev == e; next++ {
			m := msgs[next]
			r := htmlRow{ID: id(next), T: t, Kind: m.kind, Dir: string(e.Dir), Method: m.method, RPCID: m.id,
				Error: m.errText, Text: m.summary, Frame: frameText(sp, m.raw), Batch: m.batch, Prelude: e.Prelude,
				Meta: metaLines(e)}
			if m.pair >= 0 {
				r.Pair = id(m.pair)
				r.Dur = msgs[m.pair].ev.Time.Microseconds() - t
				if r.Dur < 0 {
					r.Dur = -r.Dur
				}
			} else if m.kind == "request" {
				r.Pending = true
			}
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
