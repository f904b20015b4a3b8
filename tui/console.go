package tui

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Console writes what happens around a request on stderr: warnings, the
// server's stderr, log messages, notifications, progress and wire frames.
// On a terminal, progress is a bar redrawn in place and every other line is
// printed above it; elsewhere each event is one line.
type Console struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	color  bool
	st     styles
	status string
	width  func() int // the terminal's columns, 0 when unknown (nil: unknown)
	levels map[string]func(a ...any) string
}

// NewConsole returns a Console on w. tty enables the in-place progress bar,
// color enables colours.
func NewConsole(w io.Writer, tty, colorOn bool) *Console {
	mk := func(attrs ...color.Attribute) func(a ...any) string { return style(colorOn, attrs...) }
	return &Console{
		w: w, tty: tty, color: colorOn, st: newStyles(colorOn),
		levels: map[string]func(a ...any) string{
			"debug":     mk(color.Faint),
			"info":      mk(color.FgBlue),
			"notice":    mk(color.FgCyan),
			"warning":   mk(color.FgYellow),
			"error":     mk(color.FgRed),
			"critical":  mk(color.FgRed, color.Bold),
			"alert":     mk(color.FgRed, color.Bold),
			"emergency": mk(color.FgRed, color.Bold, color.ReverseVideo),
		},
	}
}

// SetWidth gives the console the width of its terminal (0 when unknown),
// read at each redraw of the progress bar: a bar wider than the terminal
// wraps, and its redraw, which erases one row, left a row behind at each
// update.
func (c *Console) SetWidth(width func() int) {
	c.mu.Lock()
	c.width = width
	c.mu.Unlock()
}

// Writer returns the underlying writer.
func (c *Console) Writer() io.Writer { return c.w }

// Println prints a line, keeping a progress bar below it.
func (c *Console) Println(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	fmt.Fprintln(c.w, s)
	c.drawStatus()
}

// printText prints a line of text for a person to read (a warning, a
// note, a log message), broken at words to the terminal's width (see
// WrapText), so that it does not wrap mid-word at the terminal's edge. A
// wire frame is not: its JSON is copied whole.
func (c *Console) printText(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.width != nil {
		s = WrapText(s, c.width())
	}
	c.clearStatus()
	fmt.Fprintln(c.w, s)
	c.drawStatus()
}

func (c *Console) clearStatus() {
	if c.status != "" {
		fmt.Fprint(c.w, "\r\x1b[K")
	}
}

func (c *Console) drawStatus() {
	if c.status != "" {
		fmt.Fprint(c.w, c.status)
	}
}

// Warn prints a protocol warning.
func (c *Console) Warn(msg string) {
	c.printText(c.st.warn("warning: ") + EscapeLine(msg))
}

// Note prints an informational line (transport decisions, -v output).
func (c *Console) Note(msg string) {
	c.printText(c.st.dim("mcpx: " + EscapeLine(msg)))
}

// Tell prints a line the person must read or act on ("mcpx: " and msg,
// escaped), as mcpx's last line says an error: an error said before that
// one (each trace verify cannot read), OAuth's "open this URL in a
// browser". It is broken at words to the terminal like the console's
// other lines, and not dimmed as a Note is, which a person may pass over.
func (c *Console) Tell(msg string) {
	c.printText("mcpx: " + EscapeLine(msg))
}

// ServerStderr prints one line of the server's stderr, marked as the
// server's so it is never mistaken for mcpx's own output.
func (c *Console) ServerStderr(line string) {
	c.printText(c.st.dim("server| ") + EscapeLine(line))
}

// Progress shows one progress update for the request labelled label.
func (c *Console) Progress(label string, p inspector.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	msg := ""
	if p.Message != "" {
		msg = " " + EscapeLine(p.Message)
	}
	if !c.tty {
		fmt.Fprintf(c.w, "progress: %s%s\n", progressNumbers(p), msg)
		return
	}
	label = EscapeLine(label)
	line := func(width int) string {
		bar := strings.Repeat("·", width)
		if r, ok := progressRatio(p); ok {
			n := int(max(0, min(1, r)) * float64(width))
			bar = strings.Repeat("█", n) + strings.Repeat("·", width-n)
		}
		return fmt.Sprintf("%s [%s] %s%s", label, bar, progressNumbers(p), msg)
	}
	const barWidth, minBarWidth, minLabelWidth = 24, 8, 12
	status := line(barWidth)
	if c.width != nil {
		// The line stays on one row (short of the last column, where a
		// terminal waits to wrap): the bar narrows, then the label, then
		// the line is cut.
		if w := c.width() - 1; w > 0 {
			if over := DisplayWidth(status) - w; over > 0 {
				bw := max(minBarWidth, barWidth-over)
				over -= barWidth - bw
				if lw := DisplayWidth(label); over > 0 && lw > minLabelWidth {
					label = TruncateWidth(label, max(minLabelWidth, lw-over))
				}
				status = line(bw)
			}
			status = TruncateWidth(status, w)
		}
	}
	c.clearStatus()
	c.status = status
	c.drawStatus()
}

// LateProgress notes a progress notification that came after the
// response to its request (see inspector.Options.OnLateProgress), which
// is dropped.
func (c *Console) LateProgress(request jsonrpc.ID, p inspector.Progress) {
	msg := "progress for request " + EscapeLine(request.String()) + " came after its response (dropped): " + progressNumbers(p)
	if p.Message != "" {
		msg += " " + EscapeLine(p.Message)
	}
	c.Note(msg)
}

// ClearProgress removes the progress bar.
func (c *Console) ClearProgress() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	c.status = ""
}

func progressNumbers(p inspector.Progress) string {
	if p.Total == nil || !(*p.Total > 0) {
		return num(p.Progress)
	}
	if r, ok := progressRatio(p); ok {
		return fmt.Sprintf("%s/%s (%.0f%%)", num(p.Progress), num(*p.Total), r*100)
	}
	return num(p.Progress) + "/" + num(*p.Total)
}

// progressRatio is the progress over its total, when it has a positive
// total and the ratio is a number (5 over 1e-320 is beyond float64).
func progressRatio(p inspector.Progress) (float64, bool) {
	if p.Total == nil || !(*p.Total > 0) {
		return 0, false
	}
	r := p.Progress / *p.Total
	return r, !math.IsInf(r, 0) && !math.IsNaN(r)
}

// num shows a number of progress with at most three decimals, and one
// that this would show as 0 or with more than 15 digits (a server may
// send any float64) in exponent form.
func num(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 0.001 || a >= 1e15) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}

// LogMessage prints a notifications/message with its level (spec:
// server/utilities/logging); structured data is pretty-printed.
func (c *Console) LogMessage(params json.RawMessage) { c.logMessage("", params) }

// logMessage is LogMessage with a prefix before the level.
func (c *Console) logMessage(prefix string, params json.RawMessage) {
	var m struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(params, &m); err != nil {
		c.Warn("notifications/message with malformed params: " + string(params))
		return
	}
	style := c.levels[m.Level]
	if style == nil {
		style = c.st.warn
	}
	head := prefix + style(fmt.Sprintf("[%s]", EscapeLine(m.Level)))
	if m.Logger != "" {
		head += " " + c.st.dim(EscapeLine(m.Logger)+":")
	}
	var text string
	if err := json.Unmarshal(m.Data, &text); err == nil {
		c.printText(head + " " + EscapeLine(text))
		return
	}
	p := &Printer{color: c.color}
	body := strings.TrimRight(p.prettyJSON(m.Data, "  "), "\n")
	if !strings.Contains(body, "\n") {
		c.Println(head + " " + strings.TrimSpace(body))
		return
	}
	c.Println(head + "\n" + body)
}

// Notification prints a notification by method, with its params.
func (c *Console) Notification(m *jsonrpc.Message) {
	switch m.Method {
	case mcp.NotificationMessage:
		c.LogMessage(m.Params)
		return
	case mcp.NotificationTasksStatus:
		var t inspector.Task
		if json.Unmarshal(m.Params, &t) == nil && t.TaskID != "" {
			c.Println(c.st.key("notification") + " " + DescribeTask(t))
			return
		}
	case mcp.NotificationResourcesUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.URI != "" {
			c.Println(c.st.key("notification") + " resource updated: " + EscapeName(p.URI))
			return
		}
	}
	line := c.st.key("notification") + " " + methodText(m.Method)
	if len(m.Params) > 0 && string(m.Params) != "{}" {
		line += " " + c.st.dim(EscapeLine(compactString(m.Params)))
	}
	c.Println(line)
}

// ServerRequest prints a server-to-client request and the answer sent, one
// line each (the full messages are on --wire).
func (c *Console) ServerRequest(req *jsonrpc.Message, result json.RawMessage, rpcErr *jsonrpc.Error) {
	c.request(req, "→ answered: ", SummarizeAnswer(req.Method, result, rpcErr))
}

// InputRequest prints an input request of the 2026-07-28 era (embedded in
// an input_required result or a task) and mcpx's answer, as ServerRequest
// does. One mcpx gave no answer to (declined, not declared) is said to be
// left out of inputResponses: no error goes to the server, unlike a
// refused server request's.
func (c *Console) InputRequest(req *jsonrpc.Message, result json.RawMessage, rpcErr *jsonrpc.Error) {
	if rpcErr != nil {
		c.request(req, "→ not answered (left out of inputResponses): ", EscapeLine(rpcErr.Message))
		return
	}
	c.ServerRequest(req, result, nil)
}

// request prints a request's line and its outcome's.
func (c *Console) request(req *jsonrpc.Message, verdict, answer string) {
	line := c.st.key("server request") + " " + methodText(req.Method)
	if req.Method == "" {
		// One with an empty method, or one whose method is not a
		// string (refused as an invalid request): its id tells it.
		line += "(no method name) " + EscapeLine(req.ID.Excerpt())
	}
	if sum := SummarizeRequest(req.Method, req.Params); sum != "" {
		line += ": " + sum
	}
	outcome := "  " + c.st.dim(verdict) + answer
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.width != nil {
		line, outcome = WrapText(line, c.width()), WrapText(outcome, c.width())
	}
	c.clearStatus()
	fmt.Fprintln(c.w, line)
	fmt.Fprintln(c.w, outcome)
	c.drawStatus()
}

// Wire prints one frame as it crossed the wire, with time and direction.
func (c *Console) Wire(t time.Time, dir transport.Direction, f transport.Frame) {
	arrow := c.st.name("→ send")
	if dir == transport.Incoming {
		arrow = c.st.key("← recv")
	}
	line := c.st.dim(t.Format("15:04:05.000")) + " " + arrow
	if f.Meta != nil {
		line += " " + c.st.dim(metaSummary(f.Meta))
	}
	c.Println(line + " " + EscapeLine(string(f.Data)))
}

// Event prints a transport event (a server's stderr line, a note).
func (c *Console) Event(ev transport.Event) {
	switch ev.Kind {
	case transport.EventStderr:
		c.ServerStderr(ev.Text)
	case transport.EventHTTP:
		c.Println(c.st.dim(ev.Time.Format("15:04:05.000")+" http ") + EscapeLine(ev.Text))
	default:
		c.Note(ev.Text)
	}
}

func metaSummary(m *transport.Meta) string {
	var parts []string
	if m.HTTPMethod != "" {
		parts = append(parts, m.HTTPMethod)
	}
	if m.HTTPStatus != 0 {
		parts = append(parts, fmt.Sprint(m.HTTPStatus))
	}
	if m.StreamID != "" {
		parts = append(parts, "stream="+m.StreamID)
	}
	if m.EventID != "" {
		parts = append(parts, "event="+m.EventID)
	}
	if m.SessionID != "" {
		parts = append(parts, "session="+m.SessionID)
	}
	if len(parts) == 0 {
		return ""
	}
	return "[" + EscapeLine(strings.Join(parts, " ")) + "]"
}

// methodText is a peer's method name for a line of its own: escaped, and
// cut short, since a server may send one of any length (the whole is on
// --wire).
func methodText(method string) string {
	return EscapeLine(rawjson.Shorten(method, maxMethodShown))
}

// maxMethodShown is the longest method name methodText shows whole, in
// bytes.
const maxMethodShown = 200

func compactString(raw json.RawMessage) string {
	if len(raw) > 300 {
		return string(raw[:300]) + "…"
	}
	return string(raw)
}
