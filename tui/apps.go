package tui

// What MCP Apps views (package apps) hand the terminal: their log lines,
// the messages and model context they ask the host to take, and, with
// --wire, every message between mcpx and a view. Everything a view sent
// is escaped.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/apps"
)

// viewLabel names a view in the terminal: "view TOOL".
func viewLabel(v apps.ViewInfo) string {
	return "view " + EscapeName(v.Tool)
}

// ViewLog prints a view's notifications/message as a server's log
// message is printed, marked as the view's.
func (c *Console) ViewLog(v apps.ViewInfo, params json.RawMessage) {
	c.logMessage(c.st.dim(viewLabel(v)+"|")+" ", params)
}

// ViewMessage prints what a view asked the host to say in the
// conversation (ui/message): mcpx has no conversation, so it shows it.
func (c *Console) ViewMessage(v apps.ViewInfo, params json.RawMessage) {
	var p struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(params, &p)
	c.printText(c.st.key(viewLabel(v)+" asks to say") + " (" + EscapeLine(p.Role) + "): " + contentText(p.Content))
}

// ViewModelContext prints what a view asked the host to remember for the
// model (ui/update-model-context).
func (c *Console) ViewModelContext(v apps.ViewInfo, params json.RawMessage) {
	var p struct {
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	_ = json.Unmarshal(params, &p)
	var parts []string
	if len(p.Content) > 0 && string(p.Content) != "null" {
		parts = append(parts, contentText(p.Content))
	}
	if len(p.StructuredContent) > 0 && string(p.StructuredContent) != "null" {
		parts = append(parts, EscapeLine(compactString(p.StructuredContent)))
	}
	c.printText(c.st.key(viewLabel(v)+" asks the model to remember") + ": " + strings.Join(parts, " "))
}

// ViewProblem prints what went wrong with a view.
func (c *Console) ViewProblem(v apps.ViewInfo, err error) {
	c.Warn(fmt.Sprintf("view %s: %v", v.Tool, err))
}

// ViewPolicy tells the person, as a view is opened, what it may do beyond
// its own sandbox and which of its declarations mcpx refused (spec
// "Security Implications": "Host SHOULD warn users when UI requires
// external domain access"; "Host Behavior": "Host SHOULD log CSP
// configurations for security review"): a warning for each refused
// _meta.ui.csp entry (the view may fail to load what it needed, and
// should not be left to guess why), one naming the origins it may reach,
// and a note of the browser features its frame is allowed. A malformed
// _meta.ui on the resource's resources/list entry (read when the
// resources/read content item has none) is a warning too; with verbose,
// notes say when the declarations came from that entry, or why it could
// not be read.
func (c *Console) ViewPolicy(v apps.ViewInfo, p apps.Policy, verbose bool) {
	switch {
	case p.ListingError != nil && errors.Is(p.ListingError, apps.ErrBadMeta):
		c.Warn(fmt.Sprintf("view %s: ignored %v; the view has the restrictive default policy", v.Tool, p.ListingError))
	case p.ListingError != nil && verbose:
		c.Note(fmt.Sprintf("view %s: its resources/read content declares no _meta.ui, and its resources/list entry could not be read (%v): the view has the restrictive default policy", v.Tool, p.ListingError))
	case p.Declared == apps.DeclaredInListing && verbose:
		c.Note(fmt.Sprintf("view %s: its _meta.ui is its resources/list entry's (its resources/read content declares none)", v.Tool))
	}
	for _, r := range p.Refused {
		c.Warn(fmt.Sprintf("view %s: refused its _meta.ui.%s", v.Tool, r))
	}
	if p.External() {
		var parts []string
		for _, d := range []struct {
			what    string
			domains []string
		}{
			{"connect to", p.CSP.ConnectDomains},
			{"load resources from", p.CSP.ResourceDomains},
			{"frame", p.CSP.FrameDomains},
			{"use as base URI", p.CSP.BaseURIDomains},
		} {
			if len(d.domains) > 0 {
				parts = append(parts, d.what+" "+strings.Join(d.domains, " "))
			}
		}
		c.Warn(fmt.Sprintf("view %s may reach other origins: %s", v.Tool, strings.Join(parts, "; ")))
	}
	if allow := p.Permissions.Allow(); allow != "" {
		c.Note(fmt.Sprintf("view %s may ask the browser for %s", v.Tool, strings.ReplaceAll(allow, "; ", ", ")))
	}
}

// ViewWire prints one message between mcpx and a view (--wire), marked
// "host→view" or "view→host" with the view's tool, beside the frames'
// "→ send" and "← recv".
func (c *Console) ViewWire(m apps.WireMessage) {
	arrow := c.st.name(m.Direction.String())
	if m.Direction == apps.FromView {
		arrow = c.st.key(m.Direction.String())
	}
	line := c.st.dim(m.Time.Format("15:04:05.000")) + " " + arrow + " " + c.st.dim("["+viewLabel(m.View)+"]")
	c.Println(line + " " + EscapeLine(string(m.Raw)))
}

// contentText shows content blocks (one or an array) on one line: their
// text, and the type of the others.
func contentText(raw json.RawMessage) string {
	var blocks []json.RawMessage
	if len(raw) > 0 && raw[0] == '{' {
		blocks = []json.RawMessage{raw}
	} else if json.Unmarshal(raw, &blocks) != nil {
		return EscapeLine(compactString(raw))
	}
	var parts []string
	for _, b := range blocks {
		var blk struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(b, &blk)
		if blk.Type == "text" {
			parts = append(parts, EscapeLine(blk.Text))
		} else {
			parts = append(parts, "["+EscapeLine(blk.Type)+"]")
		}
	}
	return strings.Join(parts, " ")
}
