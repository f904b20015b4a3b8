package record

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fatih/color"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/transport"
)

// Entry is one line of a trace's timeline: a message with what it is
// about, a stderr line, a note or an HTTP exchange.
type Entry struct {
	// TimeMS is the offset from the start of the recording, in ms.
	TimeMS float64 `json:"timeMs"`
	// Dir is c2s or s2c for messages and stderr lines.
	Dir Direction `json:"dir,omitempty"`
	// Kind is request, response, notification or invalid for frames;
	// stderr, note or http otherwise.
	Kind   string          `json:"kind"`
	Method string          `json:"method,omitempty"`
	ID     json.RawMessage `json:"id,omitempty"`
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
}

// EntryError is a JSON-RPC error object.
type EntryError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Timeline turns a trace into entries, pairing each response with its
// request (method and latency).
func Timeline(tr *Trace) []Entry {
	type open struct {
		idx    int
		t      time.Duration
		method string
	}
	pending := map[string]open{} // dir + id key of requests awaiting a response
	var out []Entry
	for _, e := range tr.Events {
		ms := float64(e.Time.Microseconds()) / 1000
		if e.Kind != KindFrame {
			out = append(out, Entry{TimeMS: ms, Dir: e.Dir, Kind: string(e.Kind), Text: e.Text, Meta: e.Meta})
			continue
		}
		msgs, batch := parseFrame(e.Data)
		for _, m := range msgs {
			en := Entry{TimeMS: ms, Dir: e.Dir, Kind: m.kind.String(), Method: m.method, ID: m.id, Meta: e.Meta, Batch: batch}
			switch m.kind {
			case kindRequest:
				en.Summary = paramsSummary(m.method, m.params)
				en.Unanswered = true
				pending[string(e.Dir)+m.idKey()] = open{idx: len(out), t: e.Time, method: m.method}
			case kindNotification:
				en.Summary = notificationSummary(m.method, m.params)
			case kindResponse:
				other := ClientToServer
				if e.Dir == ClientToServer {
					other = ServerToClient
				}
				if p, ok := pending[string(other)+m.idKey()]; ok {
					delete(pending, string(other)+m.idKey())
					en.Method = p.method
					lat := float64((e.Time - p.t).Microseconds()) / 1000
					en.LatencyMS = &lat
					out[p.idx].Unanswered = false
				}
				if len(m.err) > 0 {
					var ee EntryError
					if json.Unmarshal(m.err, &ee) != nil {
						ee = EntryError{Code: 0, Message: "malformed error: " + excerptJSON(m.err, 100)}
					}
					en.Error = &ee
				} else {
					en.Summary, en.ToolError = resultSummary(en.Method, m.result)
				}
			default:
				en.Text = string(m.raw)
			}
			out = append(out, en)
		}
	}
	return out
}

// paramsSummary names what a request is about.
func paramsSummary(method string, params json.RawMessage) string {
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
	case "initialize":
		return strings.TrimSpace(fmt.Sprintf("%s %s, protocol %s", p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion))
	case "tools/call", "prompts/get":
		s := p.Name
		if len(p.Args) > 0 && string(p.Args) != "{}" && string(p.Args) != "null" {
			s += " " + excerptJSON(p.Args, 120)
		}
		return s
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return p.URI
	case "completion/complete":
		return strings.TrimSpace(p.Ref.Name + p.Ref.URI)
	}
	if p.Cursor != nil {
		return "cursor " + *p.Cursor
	}
	if len(params) > 0 && string(params) != "{}" {
		return excerptJSON(params, 120)
	}
	return ""
}

func notificationSummary(method string, params json.RawMessage) string {
	switch method {
	case "notifications/progress":
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
	case "notifications/message":
		var p struct {
			Level string          `json:"level"`
			Data  json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(params, &p)
		var text string
		if json.Unmarshal(p.Data, &text) != nil {
			text = excerptJSON(p.Data, 120)
		}
		return "[" + p.Level + "] " + text
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		_ = json.Unmarshal(params, &p)
		return strings.TrimSpace("request " + string(p.RequestID) + " " + p.Reason)
	}
	if len(params) > 0 && string(params) != "{}" {
		return excerptJSON(params, 120)
	}
	return ""
}

// resultSummary describes a result: list lengths, a tool's first text,
// the server's name after initialize.
func resultSummary(method string, result json.RawMessage) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil {
		return excerptJSON(result, 120), false
	}
	switch method {
	case "initialize":
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"serverInfo"`
		}
		_ = json.Unmarshal(result, &r)
		return strings.TrimSpace(fmt.Sprintf("%s %s, protocol %s", r.ServerInfo.Name, r.ServerInfo.Version, r.ProtocolVersion)), false
	case "tools/call":
		var r struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(result, &r)
		if len(r.Content) > 0 {
			s := r.Content[0].Text
			if r.Content[0].Type != "text" {
				s = "[" + r.Content[0].Type + "]"
			}
			s = shorten(s, 120)
			if len(r.Content) > 1 {
				s += fmt.Sprintf(" (+%d more)", len(r.Content)-1)
			}
			return s, r.IsError
		}
		return "", r.IsError
	}
	for _, k := range []string{"tools", "resources", "resourceTemplates", "prompts", "roots", "contents", "messages"} {
		if raw, ok := obj[k]; ok {
			var items []json.RawMessage
			if json.Unmarshal(raw, &items) == nil {
				s := fmt.Sprintf("%d %s", len(items), k)
				if c, ok := obj["nextCursor"]; ok {
					s += ", nextCursor " + string(c)
				}
				return s, false
			}
		}
	}
	if len(obj) == 0 {
		return "{}", false
	}
	return excerptJSON(result, 120), false
}

// WriteTimeline prints a trace as a readable timeline: time, direction,
// method, requests paired with their responses (with latency), errors in
// red. Everything from the trace is escaped for the terminal.
func WriteTimeline(w io.Writer, tr *Trace, colorOn bool) {
	mk := func(attrs ...color.Attribute) func(a ...any) string {
		c := color.New(attrs...)
		if colorOn {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c.SprintFunc()
	}
	dim, bold, red, yellow, cyan, green := mk(color.Faint), mk(color.Bold), mk(color.FgRed, color.Bold), mk(color.FgYellow), mk(color.FgCyan), mk(color.FgGreen)
	esc := inspector.EscapeLine

	h := tr.Header
	head := fmt.Sprintf("%s v%d, recorded %s", h.Format, h.Version, h.Created.UTC().Format("2006-01-02 15:04:05 UTC"))
	if h.Mcpx != "" {
		head += " by mcpx " + h.Mcpx
	}
	fmt.Fprintln(w, bold(esc(head)))
	if h.Target != "" {
		fmt.Fprintln(w, dim(esc(h.Target)))
	}
	if !h.Redacted {
		fmt.Fprintln(w, yellow("recorded with --no-redact: this trace may contain secrets"))
	}
	for _, en := range Timeline(tr) {
		t := dim(fmt.Sprintf("%9.3fs", en.TimeMS/1000))
		arrow := "  "
		switch en.Dir {
		case ClientToServer:
			arrow = cyan("→")
		case ServerToClient:
			arrow = green("←")
		}
		var line string
		switch en.Kind {
		case "stderr":
			line = dim("server| ") + esc(en.Text)
		case "note":
			line = yellow("note ") + esc(en.Text)
		case "http":
			line = dim("http " + esc(en.Text))
		case "invalid":
			line = red("not JSON-RPC: ") + esc(excerptJSON([]byte(en.Text), 200))
		default:
			id := ""
			if len(en.ID) > 0 {
				id = " " + dim("#"+esc(string(en.ID)))
			}
			method := en.Method
			if method == "" {
				method = "response"
			}
			line = bold(esc(method)) + id
			switch {
			case en.Kind == "request" && en.Dir == ServerToClient:
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
		}
		fmt.Fprintf(w, "%s %s %s\n", t, arrow, line)
	}
}

// TimelineJSON is the document `mcpx trace show --json` prints.
type TimelineJSON struct {
	Header   Header   `json:"header"`
	Events   []Entry  `json:"events"`
	Warnings []string `json:"warnings,omitempty"`
}
