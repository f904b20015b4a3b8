// Package export turns an mcpx trace (package record) into formats other
// tools read: an HTTP Archive (HAR 1.2, for browser developer tools and
// HAR viewers) and a self-contained HTML page that shows each session as a
// timeline.
//
// Both read the trace a session at a time from a record.SessionSource (a
// record.Trace in memory, or a record.TraceFile read from disk), each
// session twice, an event at a time (record.SessionEvents), and write as
// they read, so that exporting a large trace from a file holds what is
// in flight (requests awaiting responses, HTTP exchanges in progress),
// not a session nor the output. Both keep the trace's redaction: nothing
// the recorder removed comes back, and nothing is added that the trace
// does not hold.
//
// The package depends on record (and jsonrpc, the type of the messages
// record decodes) and the standard library only.
package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/record"
)

// Options configure an export.
type Options struct {
	// Name is the name of the program exporting ("mcpx" when empty), and
	// Version its version, for the HAR's creator; the trace's header
	// says which program recorded it.
	Name, Version string
	// Title names the trace in the HTML page (typically its file name);
	// "mcpx trace" when empty.
	Title string
}

func (o Options) name() string {
	if o.Name == "" {
		return "mcpx"
	}
	return o.Name
}

// message is one JSON-RPC message of a frame, as the exports need it.
type message struct {
	// ev is the frame event the message came in.
	ev *record.Event
	// kind is "request", "notification", "response" or "invalid".
	kind string
	// method is the message's method; for a response, its request's.
	method string
	// id is the id as written (JSON), key its canonical form for pairing.
	id, key string
	raw     []byte
	batch   bool
	// errText describes a JSON-RPC error response or a tool result with
	// isError: true; empty otherwise.
	errText string
	// summary is a short description: the name or URI a request names,
	// else an excerpt of its params, a response's result or error.
	summary string
	// pair is the index of the message this one is paired with (a
	// request's response, a response's request), -1 when none.
	pair int
}

// newMessage describes one message m of the frame event e, unpaired.
func newMessage(e *record.Event, m *jsonrpc.Message, batch bool) message {
	mm := message{ev: e, method: m.Method, id: m.ID.String(), key: m.ID.Key(), raw: m.Raw, batch: batch, pair: -1}
	if len(mm.raw) == 0 {
		mm.raw = e.Data
	}
	switch {
	case len(m.Params) > 0:
		mm.summary = paramsSummary(m.Params)
	case len(m.ErrorRaw) > 0:
		mm.summary = compactExcerpt(m.ErrorRaw)
	case len(m.Result) > 0:
		mm.summary = compactExcerpt(m.Result)
	}
	mm.kind = messageKind(m)
	switch mm.kind {
	case "response":
		if m.Error != nil {
			mm.errText = fmt.Sprintf("error %d: %s", m.Error.Code, m.Error.Message)
		} else if isToolError(m.Result) {
			mm.errText = "isError: true"
		}
	case "invalid":
		mm.errText = "not a JSON-RPC message"
	}
	return mm
}

// messageKind is a message's kind: "request", "notification",
// "response" or "invalid".
func messageKind(m *jsonrpc.Message) string {
	switch {
	case m.IsRequest():
		return "request"
	case m.IsNotification():
		return "notification"
	case m.IsResponse():
		return "response"
	}
	return "invalid"
}

// pairer pairs the messages of a session, given one at a time, by id,
// within the session (a client's request with the server's response, a
// server's request with the client's response): a response with the
// latest request of its id sent the other way and not answered yet. An
// id used again after its request was answered starts a new pair.
type pairer struct {
	open map[string]int // direction of the request + id key -> index
	n    int
}

// add takes the next message (its direction, kind and id key) and
// returns the index of the request it answers, -1 when none.
func (p *pairer) add(dir record.Direction, kind, key string) int {
	if p.open == nil {
		p.open = map[string]int{}
	}
	i := p.n
	p.n++
	switch kind {
	case "request":
		p.open[string(dir)+key] = i
	case "response":
		// A response travels the other way from its request.
		req := string(record.ClientToServer)
		if dir == record.ClientToServer {
			req = string(record.ServerToClient)
		}
		if j, ok := p.open[req+key]; ok && key != "" {
			delete(p.open, req+key)
			return j
		}
	}
	return -1
}

// isToolError reports whether a result is a tool result that reports an
// error (MCP, server/tools: "isError": true).
func isToolError(result json.RawMessage) bool {
	if len(result) == 0 || !bytes.Contains(result, []byte(`isError`)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// summaryLen bounds a summary.
const summaryLen = 160

// paramsSummary describes a request's params: the tool or prompt name or
// the resource URI it names, then an excerpt of the rest.
func paramsSummary(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	json.Unmarshal(params, &p)
	lead := p.Name
	if lead == "" {
		lead = p.URI
	}
	if lead != "" {
		return excerpt(lead+" "+compactExcerpt(params), summaryLen)
	}
	return compactExcerpt(params)
}

// compactExcerpt is the start of a JSON value, compacted.
func compactExcerpt(v json.RawMessage) string {
	var b bytes.Buffer
	if len(v) > 4*summaryLen {
		v = v[:4*summaryLen] // an excerpt needs no more (compacting may then fail)
	}
	if json.Compact(&b, v) != nil {
		b.Reset()
		b.Write(v)
	}
	return excerpt(b.String(), summaryLen)
}

// startTime is the wall-clock time of the trace's start: its header's
// created time, or, for a trace that has none (a stable trace), the Unix
// epoch, so that offsets stay right.
func startTime(h record.Header) time.Time {
	if h.Created.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return h.Created
}

// harTime formats a time as HAR wants it (ISO 8601 with milliseconds).
func harTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// ms converts a duration to HAR's milliseconds, to the microsecond.
func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// excerpt shortens s to about n bytes, on a character boundary.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
