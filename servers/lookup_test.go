package servers

import (
	"errors"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	env := linuxEnv(mapFS{
		"/home/ada/.config/Claude/claude_desktop_config.json": `{"mcpServers": {
			"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada"]},
			"github": {"command": "docker", "args": ["run", "ghcr.io/github/github-mcp-server"]}}}`,
		"/home/ada/.cursor/mcp.json": `{"mcpServers": {
			"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada"]},
			"github": {"url": "https://api.githubcopilot.com/mcp/"},
			"x": {"command": "user-x"}}}`,
		"/home/ada/proj/.cursor/mcp.json":     `{"mcpServers": {"x": {"command": "project-x"}}}`,
		"/home/ada/proj/.vscode/mcp.json":     `{"servers": {"github": {"type": "stdio", "command": "./evil.sh"}}}`,
		"/home/ada/.config/mcpx/servers.json": `{"mcpServers": {"mine": {"command": "a"}}}`,
		"/home/ada/.codex/config.toml":        "[mcp_servers.mine]\ncommand = \"b\"\n[mcp_servers.\"odd:name\"]\ncommand = \"c\"\n",
	}, nil)
	c := load(t, env)
	checkWarnings(t, c.Warnings)

	for _, tt := range []struct{ ref, want string }{
		{"cursor:github", "cursor:github"},
		{"vscode-project:github", "vscode-project:github"},
		{"vscode:github", "vscode-project:github"}, // the application, when that leaves one
		{"/home/ada/proj/.vscode/mcp.json:github", "vscode-project:github"},
		{"claude-desktop:github", "claude-desktop:github"},
		{"fs", "claude-desktop:fs"}, // defined the same way twice: the first in listing order
		{"mine", "mcpx:mine"},       // mcpx's own file wins
		{"codex:mine", "codex:mine"},
		{"cursor-project:x", "cursor-project:x"},
		{"odd:name", "codex:odd:name"},
		{"codex:odd:name", "codex:odd:name"},
	} {
		s, err := c.Lookup(tt.ref)
		if err != nil {
			t.Errorf("%s: %v", tt.ref, err)
			continue
		}
		if s.Ref() != tt.want {
			t.Errorf("%s: found %s, want %s", tt.ref, s.Ref(), tt.want)
		}
	}

	_, err := c.Lookup("github")
	var ae *AmbiguousError
	if !errors.As(err, &ae) {
		t.Fatalf("github: error %v", err)
	}
	var refs []string
	for _, s := range ae.Candidates {
		refs = append(refs, s.Ref())
	}
	diff(t, []string{"claude-desktop:github", "cursor:github", "vscode-project:github"}, refs)
	for _, want := range []string{
		`server "github" is defined differently in 3 files; name one as SOURCE:NAME:`,
		"\n  cursor:github  (/home/ada/.cursor/mcp.json)",
		"\n  vscode-project:github  (/home/ada/proj/.vscode/mcp.json)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	// Each SOURCE:NAME the error suggests names that one entry, even
	// where the source ID is also an application's name ("cursor:x"
	// used to be as ambiguous as "x").
	if _, err := c.Lookup("x"); !errors.As(err, &ae) || len(ae.Candidates) != 2 {
		t.Errorf("x: error %v", err)
	}
	for _, err := range []error{err, func() error { _, err := c.Lookup("x"); return err }()} {
		if !errors.As(err, &ae) {
			continue
		}
		for _, cand := range ae.Candidates {
			if s, err := c.Lookup(cand.Ref()); err != nil || s != cand {
				t.Errorf("%s, suggested by %q: found %v, %v", cand.Ref(), ae.Ref, s, err)
			}
		}
	}

	for _, ref := range []string{"nope", "zed:fs", "cursor:"} {
		if _, err := c.Lookup(ref); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: error %v", ref, err)
		}
	}

	diff(t, []string{"fs", "github", "mine", "odd:name", "x",
		"claude-desktop:fs", "cursor:fs",
		"claude-desktop:github", "cursor:github", "vscode-project:github",
		"mcpx:mine", "codex:mine", "cursor:x", "cursor-project:x"}, c.Names())
}

// TestLookupNotFoundNamesProblems: a name in a file that could not be
// parsed, or in an entry that was skipped, was "not found" like a name
// written nowhere; the problems met that may be why are now in the error.
func TestLookupNotFoundNamesProblems(t *testing.T) {
	env := linuxEnv(mapFS{
		"/home/ada/.cursor/mcp.json":          `{"mcpServers": {"broken": {"command": "x"},}`,
		"/home/ada/.config/mcpx/servers.json": `{"mcpServers": {"odd": 7, "fine": {"command": "a"}}}`,
	}, nil)
	c := load(t, env)
	for _, tt := range []struct {
		ref      string
		problems int
		want     string
	}{
		{"broken", 1, `no server named "broken" in any configuration file (a problem met may be why: /home/ada/.cursor/mcp.json:1: not valid JSON`},
		{"odd", 2, `no server named "odd" in any configuration file (2 problems met may be why; the first: `},
		{"mcpx:odd", 2, `(2 problems met may be why`},
	} {
		_, err := c.Lookup(tt.ref)
		var nf *NotFoundError
		if !errors.As(err, &nf) || len(nf.Problems) != tt.problems || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %d problems and %q", tt.ref, err, tt.problems, tt.want)
		}
	}
	// With every file read, a name defined nowhere has nothing to add.
	c = load(t, linuxEnv(mapFS{"/home/ada/.config/mcpx/servers.json": `{"mcpServers": {"fine": {"command": "a"}}}`}, nil))
	if _, err := c.Lookup("nope"); err == nil || err.Error() != `no server named "nope" in any configuration file` {
		t.Errorf("nope: %v", err)
	}
}
