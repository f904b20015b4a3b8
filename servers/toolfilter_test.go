package servers

import (
	"encoding/json"
	"testing"
	"time"
)

// allowed is, of tools, those f lets through, and why each other is not.
func allowed(f *ToolFilter, tools ...string) (in []string, out map[string]string) {
	out = map[string]string{}
	for _, name := range tools {
		if ok, why := f.Allows(name); ok {
			in = append(in, name)
		} else {
			out[name] = why
		}
	}
	return in, out
}

// Each application's filter fields, read from its file, hide what the
// application hides: Codex's disabled_tools after enabled_tools, Gemini
// CLI's excludeTools over includeTools (whose entries may carry
// arguments), Windsurf's disabledTools.
func TestToolFilters(t *testing.T) {
	c := load(t, linuxEnv(mapFS{
		"/home/ada/.codex/config.toml": `[mcp_servers.both]
command = "x"
enabled_tools = ["echo", "add", "typo"]
disabled_tools = ["add"]
[mcp_servers.none]
command = "x"
enabled_tools = []
[mcp_servers.plain]
command = "x"
`,
		"/home/ada/.gemini/settings.json": `{"mcpServers": {
			"g": {"command": "x", "includeTools": ["echo", "run(git)", "add"], "excludeTools": ["add"]},
			"empty": {"command": "x", "includeTools": []},
			"ex": {"command": "x", "excludeTools": ["run(git)", "add"]}}}`,
		"/home/ada/.codeium/windsurf/mcp_config.json": `{"mcpServers": {
			"w": {"command": "x", "disabledTools": ["echo"]},
			"w0": {"command": "x", "disabledTools": []}}}`,
	}, nil))
	checkWarnings(t, c.Warnings)
	tools := []string{"echo", "add", "run", "other"}
	tests := []struct {
		ref    string
		in     []string
		out    map[string]string
		fields string
	}{
		{"codex:both", []string{"echo"}, map[string]string{"add": "disabled_tools", "run": "not in enabled_tools", "other": "not in enabled_tools"}, "enabled_tools and disabled_tools"},
		{"codex:none", nil, map[string]string{"echo": "not in enabled_tools", "add": "not in enabled_tools", "run": "not in enabled_tools", "other": "not in enabled_tools"}, "enabled_tools"},
		{"codex:plain", tools, map[string]string{}, ""},
		// run(git) includes run; add is in both lists, and excluded.
		{"gemini:g", []string{"echo", "run"}, map[string]string{"add": "excludeTools", "other": "not in includeTools"}, "includeTools and excludeTools"},
		{"gemini:empty", nil, map[string]string{"echo": "not in includeTools", "add": "not in includeTools", "run": "not in includeTools", "other": "not in includeTools"}, "includeTools"},
		// An exclude entry is matched whole: run(git) does not exclude run.
		{"gemini:ex", []string{"echo", "run", "other"}, map[string]string{"add": "excludeTools"}, "excludeTools"},
		{"windsurf:w", []string{"add", "run", "other"}, map[string]string{"echo": "disabledTools"}, "disabledTools"},
		{"windsurf:w0", tools, map[string]string{}, ""},
	}
	for _, tt := range tests {
		s, err := c.Lookup(tt.ref)
		if err != nil {
			t.Fatal(err)
		}
		in, out := allowed(s.Tools, tools...)
		diff(t, tt.in, in)
		diff(t, tt.out, out)
		if f := s.Tools.Fields(); f != tt.fields {
			t.Errorf("%s: fields %q, want %q", tt.ref, f, tt.fields)
		}
	}
	s, _ := c.Lookup("codex:both")
	diff(t, []UnknownEntry{{Field: "enabled_tools", Entry: "typo"}}, s.Tools.Unknown(tools))
	s, _ = c.Lookup("gemini:g")
	diff(t, []UnknownEntry(nil), s.Tools.Unknown(tools))
	s, _ = c.Lookup("gemini:ex")
	diff(t, []UnknownEntry{{Field: "excludeTools", Entry: "run(git)"}}, s.Tools.Unknown(tools))
	if s.Tools.App != "Gemini CLI" {
		t.Errorf("app %q", s.Tools.App)
	}
}

// A list that is not a list of strings is a warning, and filters nothing.
func TestToolFilterWrongType(t *testing.T) {
	c := load(t, linuxEnv(mapFS{
		"/home/ada/.gemini/settings.json": `{"mcpServers": {"g": {"command": "x", "includeTools": "echo"}}}`,
	}, nil))
	checkWarnings(t, c.Warnings, `server "g": field "includeTools" has the wrong type (a string), ignored`)
	if c.Servers[0].Tools != nil {
		t.Errorf("filter %+v", c.Servers[0].Tools)
	}
}

// Codex gives up on a server that has not started after
// startup_timeout_sec, else startup_timeout_ms, else 30 s; the others set
// no such bound. 0 is a bound of no time (Codex's Duration::ZERO, whose
// handshake times out at once), with a warning; a negative number is
// ignored.
func TestStartupLimit(t *testing.T) {
	c := load(t, linuxEnv(mapFS{
		"/home/ada/.codex/config.toml": `[mcp_servers.sec]
command = "x"
startup_timeout_sec = 2.5
startup_timeout_ms = 100
[mcp_servers.ms]
command = "x"
startup_timeout_ms = 100
[mcp_servers.default]
command = "x"
[mcp_servers.zero]
command = "x"
startup_timeout_sec = 0
startup_timeout_ms = 100
[mcp_servers.zerofloat]
command = "x"
startup_timeout_sec = 0.0
[mcp_servers.zeroms]
command = "x"
startup_timeout_ms = 0
[mcp_servers.negative]
command = "x"
startup_timeout_sec = -1
`,
		"/home/ada/.gemini/settings.json": `{"mcpServers": {"g": {"command": "x", "timeout": 5000}}}`,
	}, nil))
	checkWarnings(t, c.Warnings,
		`server "zero": startup_timeout_sec is 0: Codex gives up on the server at once, so it never starts there (mcpx uses it all the same)`,
		`server "zerofloat": startup_timeout_sec is 0: Codex gives up on the server at once, so it never starts there (mcpx uses it all the same)`,
		`server "zeroms": startup_timeout_ms is 0: Codex gives up on the server at once, so it never starts there (mcpx uses it all the same)`,
		`server "negative": startup_timeout_sec is not a positive number, ignored`)
	want := map[string]StartupLimit{
		"codex:sec":       {App: "Codex", Timeout: 2500 * time.Millisecond, Field: "startup_timeout_sec"},
		"codex:ms":        {App: "Codex", Timeout: 100 * time.Millisecond, Field: "startup_timeout_ms"},
		"codex:default":   {App: "Codex", Timeout: 30 * time.Second},
		"codex:zero":      {App: "Codex", Timeout: 0, Field: "startup_timeout_sec"},
		"codex:zerofloat": {App: "Codex", Timeout: 0, Field: "startup_timeout_sec"},
		"codex:zeroms":    {App: "Codex", Timeout: 0, Field: "startup_timeout_ms"},
		"codex:negative":  {App: "Codex", Timeout: 30 * time.Second},
	}
	for _, s := range c.Servers {
		w, ok := want[s.Ref()]
		switch {
		case !ok && s.Startup != nil:
			t.Errorf("%s: startup limit %+v, want none", s.Ref(), *s.Startup)
		case ok && (s.Startup == nil || *s.Startup != w):
			t.Errorf("%s: startup limit %+v, want %+v", s.Ref(), s.Startup, w)
		}
	}
}

func TestStartupExceeded(t *testing.T) {
	l := &StartupLimit{App: "Codex", Timeout: 10 * time.Second, Field: "startup_timeout_sec"}
	if msg, over := l.Exceeded(10 * time.Second); over {
		t.Errorf("at the bound: %q", msg)
	}
	msg, over := l.Exceeded(12345 * time.Millisecond)
	if want := "the server took 12.3 s to start; Codex gives up after 10 s (startup_timeout_sec)"; !over || msg != want {
		t.Errorf("got %q, %v; want %q", msg, over, want)
	}
	l = &StartupLimit{App: "Codex", Timeout: 50 * time.Millisecond}
	msg, _ = l.Exceeded(time.Second)
	if want := "the server took 1 s to start; Codex gives up after 50 ms (its default)"; msg != want {
		t.Errorf("got %q; want %q", msg, want)
	}
	l = &StartupLimit{App: "Codex", Field: "startup_timeout_sec"}
	msg, over = l.Exceeded(300 * time.Millisecond)
	if want := "the server took 300 ms to start; Codex gives up at once (startup_timeout_sec is 0)"; !over || msg != want {
		t.Errorf("a bound of 0: got %q, %v; want %q", msg, over, want)
	}
	var none *StartupLimit
	if _, over := none.Exceeded(time.Hour); over {
		t.Error("no limit exceeded")
	}
}

// A filter handed on as JSON (a held session's) matches as the original
// did, Gemini CLI's argument suffix included.
func TestToolFilterJSONRoundTrip(t *testing.T) {
	f := &ToolFilter{App: "Gemini CLI", Allow: []string{"run(git)"}, AllowField: "includeTools", Deny: []string{"x"}, DenyField: "excludeTools", argSuffix: true}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var g ToolFilter
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run", "x", "other"} {
		ok1, why1 := f.Allows(name)
		ok2, why2 := g.Allows(name)
		if ok1 != ok2 || why1 != why2 {
			t.Errorf("%s: after JSON %v %q, before %v %q (%s)", name, ok2, why2, ok1, why1, b)
		}
	}
}
