package servers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ToolFilter is which of a server's tools its application offers its
// model, as the server entry says: an allow list, a deny list applied
// after it, or both. The server still offers every tool (tools/list
// lists them all; mcpx shows them all); the application leaves the
// others out of what its model sees. nil on a Server whose entry filters
// nothing.
//
// Each application's rules, from its own source:
//   - Codex (codex-rs/core/src/mcp_connection_manager.rs, ToolFilter):
//     enabled_tools, when set, is the only tools registered; disabled_tools
//     are removed after it. Names are matched exactly; an empty
//     enabled_tools leaves no tool.
//   - Gemini CLI (packages/core/src/tools/mcp-client.ts, isEnabled;
//     docs/tools/mcp-server.md): excludeTools wins over includeTools; an
//     exclude entry matches a name exactly, an include entry matches the
//     name or begins with the name and "(" (run_shell_command(git) includes
//     run_shell_command); an empty includeTools leaves no tool.
//   - Windsurf (https://docs.windsurf.com/windsurf/cascade/mcp,
//     "Configuring MCP tools"): disabledTools, the names the person
//     turned off in the server's Tools tab, matched exactly.
//
// Claude Desktop, Claude Code, VS Code, Cursor and Zed have no such field
// in a server entry: what they hide is chosen elsewhere (permissions,
// tool pickers, agent profiles), and is not read.
type ToolFilter struct {
	// App is the application that applies the filter ("Codex").
	App string
	// Allow is the allow list, when AllowField is set: only these tools.
	Allow      []string
	AllowField string
	// Deny is the deny list, applied after Allow, named DenyField.
	Deny      []string
	DenyField string

	// argSuffix: an Allow entry NAME(…) allows NAME (Gemini CLI).
	argSuffix bool
}

// Allows reports whether the application offers the tool name to its
// model and, when it does not, which field hides it ("disabled_tools",
// "not in enabled_tools"). A nil filter allows every tool.
func (f *ToolFilter) Allows(name string) (ok bool, why string) {
	if f == nil {
		return true, ""
	}
	if f.DenyField != "" && slices.Contains(f.Deny, name) {
		return false, f.DenyField
	}
	if f.AllowField != "" && !slices.ContainsFunc(f.Allow, func(a string) bool { return f.allowEntryNames(a, name) }) {
		return false, "not in " + f.AllowField
	}
	return true, ""
}

// toolFilterJSON is a ToolFilter as MarshalJSON writes it.
type toolFilterJSON struct {
	App        string   `json:"app"`
	Allow      []string `json:"allow,omitempty"`
	AllowField string   `json:"allowField,omitempty"`
	Deny       []string `json:"deny,omitempty"`
	DenyField  string   `json:"denyField,omitempty"`
	ArgSuffix  bool     `json:"argSuffix,omitempty"`
}

// MarshalJSON writes the filter whole, its matching rule included, so
// that it can be handed on (a held session keeps its entry's filter for
// the commands that attach to it).
func (f *ToolFilter) MarshalJSON() ([]byte, error) {
	return json.Marshal(toolFilterJSON{App: f.App, Allow: f.Allow, AllowField: f.AllowField, Deny: f.Deny, DenyField: f.DenyField, ArgSuffix: f.argSuffix})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (f *ToolFilter) UnmarshalJSON(b []byte) error {
	var j toolFilterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = ToolFilter{App: j.App, Allow: j.Allow, AllowField: j.AllowField, Deny: j.Deny, DenyField: j.DenyField, argSuffix: j.ArgSuffix}
	return nil
}

// allowEntryNames reports whether the allow-list entry a names the tool.
func (f *ToolFilter) allowEntryNames(a, name string) bool {
	return a == name || (f.argSuffix && strings.HasPrefix(a, name+"("))
}

// Fields are the fields the filter was read from, as written ("enabled_tools
// and disabled_tools").
func (f *ToolFilter) Fields() string {
	if f == nil {
		return ""
	}
	var out []string
	for _, n := range []string{f.AllowField, f.DenyField} {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, " and ")
}

// UnknownEntry is an entry of a filter list that names no tool the
// server offers: a typo, or a tool the server no longer has.
type UnknownEntry struct {
	Field string
	Entry string
}

// Unknown are the entries of the filter's lists that name none of tools
// (the names the server lists), in list order.
func (f *ToolFilter) Unknown(tools []string) []UnknownEntry {
	if f == nil {
		return nil
	}
	var out []UnknownEntry
	for _, a := range f.Allow {
		if !slices.ContainsFunc(tools, func(t string) bool { return f.allowEntryNames(a, t) }) {
			out = append(out, UnknownEntry{Field: f.AllowField, Entry: a})
		}
	}
	for _, d := range f.Deny {
		if !slices.Contains(tools, d) {
			out = append(out, UnknownEntry{Field: f.DenyField, Entry: d})
		}
	}
	return out
}

// StartupLimit is how long a server's application waits for it to start
// before it gives up on it, and what set that.
type StartupLimit struct {
	// App is the application ("Codex").
	App string
	// Timeout is the bound; 0 (an entry's startup_timeout_sec = 0) is a
	// bound of no time: the application gives up on the server at once.
	Timeout time.Duration
	// Field is the entry's field that set it; "" when it is the
	// application's default.
	Field string
}

// Exceeded reports whether a server that took took to start would have
// been given up on, and says so in one line: "the server took 12.3 s to
// start; Codex gives up after 10 s (startup_timeout_sec)".
// A bound of 0 is exceeded by any start: "the server took 0.3 s to start;
// Codex gives up at once (startup_timeout_sec is 0)".
func (l *StartupLimit) Exceeded(took time.Duration) (string, bool) {
	if l == nil || l.Timeout < 0 || took <= l.Timeout {
		return "", false
	}
	return fmt.Sprintf("the server took %s to start; %s", seconds(took), l.givesUp()), true
}

// givesUp says when the application gives up and what set that: "Codex
// gives up after 10 s (startup_timeout_sec)", "Codex gives up at once
// (startup_timeout_sec is 0)".
func (l *StartupLimit) givesUp() string {
	why := "its default"
	if l.Field != "" {
		why = l.Field
	}
	if l.Timeout == 0 {
		return fmt.Sprintf("%s gives up at once (%s is 0)", l.App, why)
	}
	return fmt.Sprintf("%s gives up after %s (%s)", l.App, seconds(l.Timeout), why)
}

// seconds writes d in seconds to a tenth, "10 s", "12.3 s", or under a
// second in milliseconds, "50 ms".
func seconds(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0") + " s"
}

// codexStartupDefault is how long Codex waits for a server to start
// (initialize and its first tools/list) when the entry sets no
// startup_timeout_sec: 30 s since Codex moved its MCP client to
// codex-rs/codex-mcp (src/rmcp_client.rs, DEFAULT_STARTUP_TIMEOUT; it
// was 10 s in codex-rs/core/src/mcp_connection_manager.rs before).
const codexStartupDefault = 30 * time.Second

// appName is the name people know kind's application by.
func appName(k Kind) string {
	switch k {
	case KindCodex:
		return "Codex"
	case KindGemini:
		return "Gemini CLI"
	case KindWindsurf:
		return "Windsurf"
	}
	return string(k)
}
