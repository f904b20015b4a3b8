package servers

import (
	"strings"
	"testing"
)

// disabledList is each server's reference, and why it is disabled.
func disabledList(c *Catalog) []string {
	var out []string
	for _, s := range c.Servers {
		line := s.Ref()
		if s.Disabled {
			line += " (disabled: " + s.DisabledReason + ")"
		}
		out = append(out, line)
	}
	return out
}

func TestClaudeCodeManagedMCPTakesExclusiveControl(t *testing.T) {
	env := linuxEnv(mapFS{
		"/etc/claude-code/managed-mcp.json": `{"mcpServers": {
			"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
			"company": {"command": "/usr/local/bin/company-mcp-server", "args": ["--config", "/etc/company/mcp.json"]}}}`,
		"/home/ada/.claude.json":     `{"mcpServers": {"mine": {"command": "mine"}}}`,
		"/home/ada/proj/.mcp.json":   `{"mcpServers": {"repo": {"command": "repo"}}}`,
		"/home/ada/.cursor/mcp.json": `{"mcpServers": {"other": {"command": "other"}}}`,
	}, nil)
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	const why = "Claude Code uses only the servers of its managed /etc/claude-code/managed-mcp.json"
	diff(t, []string{
		"claude-code-managed:company",
		"claude-code-managed:github",
		"claude-code:mine (disabled: " + why + ")",
		"cursor:other",
		"claude-code-project:repo (disabled: " + why + ")",
	}, disabledList(c))
	s, err := c.Lookup("company")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, Source{ID: "claude-code-managed", Kind: KindClaudeCode, Scope: ScopeSystem, Path: "/etc/claude-code/managed-mcp.json"}, s.Source)
	if !s.NeedsTrust() {
		t.Error("a managed command needs trust, as any file mcpx did not write")
	}

	// An empty managed-mcp.json turns every other Claude Code server off.
	env.FS = mapFS{"/etc/claude-code/managed-mcp.json": `{"mcpServers": {}}`, "/home/ada/.claude.json": `{"mcpServers": {"mine": {"command": "mine"}}}`}
	diff(t, []string{"claude-code:mine (disabled: " + why + ")"}, disabledList(load(t, env)))
}

func TestClaudeCodeManagedMCPOnMacOSAndWindows(t *testing.T) {
	mac := &Env{GOOS: "darwin", Home: "/Users/ada", FS: mapFS{
		"/Library/Application Support/ClaudeCode/managed-mcp.json": `{"mcpServers": {"m": {"command": "m"}}}`,
		"/Users/ada/.claude.json":                                  `{"mcpServers": {"u": {"command": "u"}}}`,
	}}
	diff(t, []string{"claude-code-managed:m",
		"claude-code:u (disabled: Claude Code uses only the servers of its managed /Library/Application Support/ClaudeCode/managed-mcp.json)"},
		disabledList(load(t, mac)))
	win := &Env{GOOS: "windows", Home: `C:\Users\ada`, FS: mapFS{
		`C:\Program Files\ClaudeCode\managed-mcp.json`:      `{"mcpServers": {"m": {"command": "m"}}}`,
		`C:\Program Files\ClaudeCode\managed-settings.json`: `{"deniedMcpServers": [{"serverName": "m"}]}`,
	}}
	diff(t, []string{`claude-code-managed:m (disabled: Claude Code's deniedMcpServers in C:\Program Files\ClaudeCode\managed-settings.json blocks it)`},
		disabledList(load(t, win)))
}

// The servers of each test: a stdio and a remote one in the user's
// ~/.claude.json, in a project's .mcp.json and in Cursor's file, which
// the policy does not concern.
const policyServers = `{"mcpServers": {
	"github": {"type": "http", "url": "https://API.githubcopilot.com./mcp/"},
	"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
	"local-tool": {"command": "node", "args": ["server.js"]},
	"staging": {"type": "sse", "url": "https://staging.example.com/api"}}}`

func TestClaudeCodeAllowAndDenyLists(t *testing.T) {
	tests := []struct {
		name  string
		files mapFS
		// want maps each server of ~/.claude.json that is disabled to
		// a part of its reason.
		want map[string]string
	}{{
		name: "no list: every server",
	}, {
		name:  "an empty allowlist allows nothing",
		files: mapFS{"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": []}`},
		want: map[string]string{"github": "allowedMcpServers in /etc/claude-code/managed-settings.json does not list its name",
			"fs": "its name", "local-tool": "its name", "staging": "its name"},
	}, {
		name: "URL-only allowlist: stdio servers have nothing to match",
		files: mapFS{"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [
			{"serverUrl": "https://api.githubcopilot.com/*"}, {"serverUrl": "https://*.internal.example.com/*"}]}`},
		want: map[string]string{"fs": "its name", "local-tool": "its name", "staging": "does not list its URL"},
	}, {
		name: "command-only allowlist",
		files: mapFS{"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [
			{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]}]}`},
		want: map[string]string{"github": "its name", "local-tool": "does not list its command", "staging": "its name"},
	}, {
		name: "a name does not let a stdio server through when commands are listed",
		files: mapFS{"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [
			{"serverName": "github"}, {"serverName": "local-tool"}, {"serverCommand": ["npx", "-y", "approved-package"]}]}`},
		want: map[string]string{"fs": "its command", "local-tool": "its command", "staging": "its name"},
	}, {
		name: "name-only allowlist",
		files: mapFS{"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [
			{"serverName": "github"}, {"serverName": "local-tool"}]}`},
		want: map[string]string{"fs": "its name", "staging": "its name"},
	}, {
		name: "the denylist wins over the allowlist",
		files: mapFS{"/etc/claude-code/managed-settings.json": `{
			"allowedMcpServers": [{"serverUrl": "https://*.example.com/*"}, {"serverUrl": "*://api.githubcopilot.com"}],
			"deniedMcpServers": [{"serverUrl": "https://staging.example.com/*"}, {"serverCommand": ["node", "server.js"]}]}`},
		want: map[string]string{"staging": "deniedMcpServers in /etc/claude-code/managed-settings.json blocks it",
			"local-tool": "blocks it", "fs": "does not list its name"},
	}, {
		name: "a user's allowlist broadens the managed one, and a user's denylist adds to it",
		files: mapFS{
			"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [{"serverName": "github"}]}`,
			"/home/ada/.claude/settings.json":        `{"allowedMcpServers": [{"serverName": "fs"}], "deniedMcpServers": [{"serverName": "github"}]}`,
		},
		want: map[string]string{"github": "deniedMcpServers in /home/ada/.claude/settings.json",
			"local-tool": "allowedMcpServers in /etc/claude-code/managed-settings.json, /home/ada/.claude/settings.json does not list",
			"staging":    "does not list its name"},
	}, {
		name: "allowManagedMcpServersOnly ignores the others' allowlists",
		files: mapFS{
			"/etc/claude-code/managed-settings.json":     `{"allowManagedMcpServersOnly": true, "allowedMcpServers": [{"serverName": "github"}]}`,
			"/home/ada/.claude/settings.json":            `{"allowedMcpServers": [{"serverName": "fs"}]}`,
			"/home/ada/proj/.claude/settings.local.json": `{"allowedMcpServers": [{"serverName": "staging"}], "deniedMcpServers": [{"serverName": "github"}]}`,
		},
		want: map[string]string{"github": "deniedMcpServers in /home/ada/proj/.claude/settings.local.json",
			"fs": "allowedMcpServers in /etc/claude-code/managed-settings.json does not", "local-tool": "its name", "staging": "its name"},
	}, {
		name: "managed-settings.d adds to managed-settings.json, in the order of its names",
		files: mapFS{
			"/etc/claude-code/managed-settings.json":           `{"allowedMcpServers": [{"serverName": "github"}]}`,
			"/etc/claude-code/managed-settings.d/20-b.json":    `{"allowManagedMcpServersOnly": true, "deniedMcpServers": [{"serverName": "fs"}]}`,
			"/etc/claude-code/managed-settings.d/10-a.json":    `{"allowManagedMcpServersOnly": false, "allowedMcpServers": [{"serverName": "fs"}]}`,
			"/etc/claude-code/managed-settings.d/.hidden.json": `{"deniedMcpServers": [{"serverName": "github"}]}`,
			"/etc/claude-code/managed-settings.d/notes.txt":    `{"deniedMcpServers": [{"serverName": "github"}]}`,
			"/home/ada/.claude/settings.json":                  `{"allowedMcpServers": [{"serverName": "local-tool"}]}`,
		},
		want: map[string]string{"fs": "deniedMcpServers in /etc/claude-code/managed-settings.d/20-b.json",
			"local-tool": "allowedMcpServers in /etc/claude-code/managed-settings.json, /etc/claude-code/managed-settings.d/10-a.json does not",
			"staging":    "its name"},
	}, {
		name: "commands and URLs are compared with their variables expanded",
		files: mapFS{"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [
			{"serverCommand": ["${TOOL:-node}", "${SCRIPT}"]}, {"serverCommand": ["npx", "-y", "${PKG}", "."]},
			{"serverUrl": "https://${GH_HOST}/*"}, {"serverUrl": "https://${UNSET}/*"}]}`},
		want: map[string]string{"staging": "its URL"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := mapFS{"/home/ada/.claude.json": policyServers, "/home/ada/.cursor/mcp.json": policyServers}
			for k, v := range tt.files {
				files[k] = v
			}
			vars := map[string]string{"SCRIPT": "server.js", "PKG": "@modelcontextprotocol/server-filesystem", "GH_HOST": "api.githubcopilot.com"}
			c := load(t, linuxEnv(files, vars))
			checkWarnings(t, c.Warnings)
			got := map[string]string{}
			for _, s := range c.Servers {
				if s.Source.Kind == KindCursor && s.Disabled {
					t.Errorf("%s of Cursor's file disabled: %s", s.Ref(), s.DisabledReason)
				}
				if s.Source.Kind == KindClaudeCode && s.Disabled {
					got[s.Name] = s.DisabledReason
				}
			}
			for name, reason := range got {
				if part, ok := tt.want[name]; !ok || !strings.Contains(reason, part) {
					t.Errorf("%s disabled: %q, want %q", name, reason, part)
				}
			}
			for name := range tt.want {
				if _, ok := got[name]; !ok {
					t.Errorf("%s is not disabled", name)
				}
			}
		})
	}
}

func TestClaudeCodeAllowlistAndTheManagedServers(t *testing.T) {
	env := linuxEnv(mapFS{
		"/etc/claude-code/managed-mcp.json": `{"mcpServers": {
			"fixed": {"command": "/usr/local/bin/fixed"},
			"per-user": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
			"blocked": {"command": "/usr/local/bin/blocked"}}}`,
		"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [{"serverName": "other"}]}`,
		"/home/ada/.claude/settings.json":        `{"deniedMcpServers": [{"serverCommand": ["/usr/local/bin/blocked"]}]}`,
	}, nil)
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	diff(t, []string{
		"claude-code-managed:blocked (disabled: Claude Code's deniedMcpServers in /home/ada/.claude/settings.json blocks it)",
		"claude-code-managed:fixed",
		"claude-code-managed:per-user (disabled: Claude Code's allowedMcpServers in /etc/claude-code/managed-settings.json does not list its name)",
	}, disabledList(c))
}

func TestClaudeCodePolicyExplainsAServerTurnedOffAnyway(t *testing.T) {
	env := linuxEnv(mapFS{
		"/home/ada/.claude.json":                 `{"projects": {"/home/ada/proj": {"disabledMcpServers": ["off"]}}, "mcpServers": {"off": {"command": "off"}}}`,
		"/etc/claude-code/managed-settings.json": `{"deniedMcpServers": [{"serverName": "off"}]}`,
	}, nil)
	diff(t, []string{"claude-code:off (disabled: Claude Code's deniedMcpServers in /etc/claude-code/managed-settings.json blocks it)"},
		disabledList(load(t, env)))
}

func TestClaudeCodePolicyWarnings(t *testing.T) {
	env := linuxEnv(mapFS{
		"/etc/claude-code/managed-settings.json": `{"allowedMcpServers": [{"serverName": "a", "serverUrl": "https://x"}, {"serverCommand": "npx"}, "b", {"serverName": "c"}],
			"deniedMcpServers": {"serverName": "d"}}`,
		"/etc/claude-code/managed-settings.d/x.json": `[1]`,
		"/home/ada/.claude.json":                     `{"mcpServers": {"c": {"command": "c"}, "d": {"command": "d"}}}`,
	}, nil)
	c := load(t, env)
	checkWarnings(t, c.Warnings,
		"managed-settings.json:1: allowedMcpServers[0] is not an object with one of serverName",
		"allowedMcpServers[1] is not",
		"allowedMcpServers[2] is not",
		"managed-settings.json:2: deniedMcpServers is not a list; ignored",
		"x.json:1: is not a JSON object; no server read from it")
	diff(t, []string{"claude-code:c", "claude-code:d (disabled: Claude Code's allowedMcpServers in /etc/claude-code/managed-settings.json does not list its name)"},
		disabledList(c))
}

func TestURLMatches(t *testing.T) {
	for _, tt := range []struct {
		pattern, url string
		want         bool
	}{
		{"https://mcp.example.com/*", "https://mcp.example.com/api", true},
		{"https://mcp.example.com/*", "https://mcp.example.com", true},
		{"https://mcp.example.com", "https://mcp.example.com/any/path", true},
		{"https://*.example.com/*", "https://api.internal.example.com/mcp", true},
		{"https://*.example.com/*", "https://example.com/mcp", false},
		{"http://localhost:*/*", "http://localhost:8080/mcp", true},
		{"http://localhost:*/*", "https://localhost:8080/mcp", false},
		{"*://mcp.example.com/*", "http://mcp.example.com/x", true},
		{"https://Mcp.Example.com/*", "https://mcp.example.com./api", true},
		{"https://mcp.example.com/API", "https://mcp.example.com/api", false},
		{"https://mcp.example.com/a*c", "https://mcp.example.com/abbc", true},
		{"https://mcp.example.com/a*c", "https://mcp.example.com/abcd", false},
		{"https://mcp.example.com/mcp", "https://other.com/mcp", false},
		{"https://[::1]:*/*", "https://[::1]:3000/mcp", true},
	} {
		if got := urlMatches(tt.pattern, tt.url); got != tt.want {
			t.Errorf("urlMatches(%q, %q) = %v, want %v", tt.pattern, tt.url, got, tt.want)
		}
	}
}

func TestClaudeCodeManagedMcpServers(t *testing.T) {
	files := mapFS{
		"/etc/claude-code/managed-settings.json": `{"managedMcpServers": {
			"search": {"type": "http", "url": "https://search.example.com/mcp"},
			"records": {"type": "sse", "url": "https://records.example.com/mcp", "headers": {"X-Records-Key": "k"}},
			"local": {"type": "stdio", "command": "x"},
			"untyped": {"url": "https://u.example.com/mcp"},
			"plain": {"type": "http", "url": "http://localhost:3000/mcp"},
			"varied": {"type": "http", "url": "https://${HOST}/mcp"},
			"bad.name": {"type": "http", "url": "https://b.example.com/mcp"}},
			"allowedMcpServers": [{"serverUrl": "https://nothing.example.com/*"}],
			"deniedMcpServers": [{"serverName": "records"}]}`,
		"/etc/claude-code/managed-settings.d/10-more.json": `{"managedMcpServers": {"search": {"type": "http", "url": "https://search2.example.com/mcp"}}}`,
		"/home/ada/.claude.json":                           `{"mcpServers": {"search": {"type": "http", "url": "https://mine.example.com/mcp"}}}`,
	}
	c := load(t, linuxEnv(files, nil))
	checkWarnings(t, c.Warnings,
		`server "local": is a command; Claude Code loads only remote servers`,
		`server "untyped": has no type "http" or "sse"`,
		`server "plain": is not at an https:// URL`,
		`server "varied": uses ${VAR}`,
		`server "bad.name": has a name of other characters`)
	diff(t, []string{
		"claude-code-managed-settings:records (disabled: Claude Code's deniedMcpServers in /etc/claude-code/managed-settings.json blocks it)",
		"claude-code:search (disabled: Claude Code uses the server of this name of managedMcpServers in /etc/claude-code/managed-settings.d/10-more.json)",
		"claude-code-managed-settings:search",
	}, disabledList(c))
	s, err := c.Lookup("claude-code-managed-settings:search")
	if err != nil {
		t.Fatal(err)
	}
	if s.URL != "https://search2.example.com/mcp" || s.Source.Scope != ScopeSystem {
		t.Errorf("search: %s of %v, want the later file's", s.URL, s.Source)
	}

	// managed-mcp.json leaves them on, and wins over one of its names;
	// its own servers need no allowlist entry.
	files["/etc/claude-code/managed-mcp.json"] = `{"mcpServers": {"search": {"type": "http", "url": "https://fixed.example.com/mcp"}}}`
	c = load(t, linuxEnv(files, nil))
	diff(t, []string{
		"claude-code-managed-settings:records (disabled: Claude Code's deniedMcpServers in /etc/claude-code/managed-settings.json blocks it)",
		"claude-code:search (disabled: Claude Code uses only the servers of its managed /etc/claude-code/managed-mcp.json)",
		"claude-code-managed:search",
		"claude-code-managed-settings:search (disabled: Claude Code uses the server of this name of its managed /etc/claude-code/managed-mcp.json)",
	}, disabledList(c))
}
