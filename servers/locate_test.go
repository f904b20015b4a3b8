package servers

import "testing"

func paths(e *Env) map[string]string {
	out := map[string]string{}
	for _, s := range Locations(e) {
		out[s.ID] = s.Path
	}
	return out
}

func TestLocations(t *testing.T) {
	tests := []struct {
		name string
		env  *Env
		vars map[string]string
		want map[string]string
	}{{
		name: "linux",
		env:  &Env{GOOS: "linux", Home: "/home/ada", Workspace: "/home/ada/proj"},
		want: map[string]string{
			"mcpx":                         "/home/ada/.config/mcpx/servers.json",
			"claude-desktop":               "/home/ada/.config/Claude/claude_desktop_config.json",
			"claude-code":                  "/home/ada/.claude.json",
			"claude-code-local":            "/home/ada/.claude.json",
			"claude-code-project":          "/home/ada/proj/.mcp.json",
			"claude-code-managed":          "/etc/claude-code/managed-mcp.json",
			"claude-code-managed-settings": "/etc/claude-code/managed-settings.json",
			"vscode":                       "/home/ada/.config/Code/User/mcp.json",
			"vscode-settings":              "/home/ada/.config/Code/User/settings.json",
			"vscode-project":               "/home/ada/proj/.vscode/mcp.json",
			"cursor":                       "/home/ada/.cursor/mcp.json",
			"cursor-project":               "/home/ada/proj/.cursor/mcp.json",
			"windsurf":                     "/home/ada/.codeium/windsurf/mcp_config.json",
			"codex":                        "/home/ada/.codex/config.toml",
			"codex-project":                "/home/ada/proj/.codex/config.toml",
			"codex-system":                 "/etc/codex/config.toml",
			"codex-managed":                "/etc/codex/managed_config.toml",
			"gemini":                       "/home/ada/.gemini/settings.json",
			"gemini-project":               "/home/ada/proj/.gemini/settings.json",
			"gemini-system":                "/etc/gemini-cli/settings.json",
			"gemini-system-defaults":       "/etc/gemini-cli/system-defaults.json",
			"zed":                          "/home/ada/.config/zed/settings.json",
			"zed-project":                  "/home/ada/proj/.zed/settings.json",
		},
	}, {
		name: "linux, with the variables that move files",
		env:  &Env{GOOS: "linux", Home: "/home/ada", Workspace: "/srv/w"},
		vars: map[string]string{
			"XDG_CONFIG_HOME": "/cfg", "CODEX_HOME": "/opt/codex", "CLAUDE_CONFIG_DIR": "/opt/claude", "MCPX_CONFIG_DIR": "/etc/mcpx",
			"GEMINI_CLI_HOME": "/opt/gemini", "GEMINI_CLI_SYSTEM_SETTINGS_PATH": "/opt/gsys/settings.json",
		},
		want: map[string]string{
			"mcpx":                         "/etc/mcpx/servers.json",
			"claude-desktop":               "/cfg/Claude/claude_desktop_config.json",
			"claude-code":                  "/opt/claude/.claude.json",
			"claude-code-local":            "/opt/claude/.claude.json",
			"claude-code-project":          "/srv/w/.mcp.json",
			"claude-code-managed":          "/etc/claude-code/managed-mcp.json",
			"claude-code-managed-settings": "/etc/claude-code/managed-settings.json",
			"vscode":                       "/cfg/Code/User/mcp.json",
			"vscode-settings":              "/cfg/Code/User/settings.json",
			"vscode-project":               "/srv/w/.vscode/mcp.json",
			"cursor":                       "/home/ada/.cursor/mcp.json",
			"cursor-project":               "/srv/w/.cursor/mcp.json",
			"windsurf":                     "/home/ada/.codeium/windsurf/mcp_config.json",
			"codex":                        "/opt/codex/config.toml",
			"codex-project":                "/srv/w/.codex/config.toml",
			"codex-system":                 "/etc/codex/config.toml",
			"codex-managed":                "/etc/codex/managed_config.toml",
			"gemini":                       "/opt/gemini/.gemini/settings.json",
			"gemini-project":               "/srv/w/.gemini/settings.json",
			"gemini-system":                "/opt/gsys/settings.json",
			"gemini-system-defaults":       "/opt/gsys/system-defaults.json",
			"zed":                          "/cfg/zed/settings.json",
			"zed-project":                  "/srv/w/.zed/settings.json",
		},
	}, {
		name: "linux, a relative XDG_CONFIG_HOME is ignored, and no workspace",
		env:  &Env{GOOS: "linux", Home: "/home/ada"},
		vars: map[string]string{"XDG_CONFIG_HOME": "cfg"},
		want: map[string]string{
			"mcpx":                         "/home/ada/.config/mcpx/servers.json",
			"claude-desktop":               "/home/ada/.config/Claude/claude_desktop_config.json",
			"claude-code":                  "/home/ada/.claude.json",
			"claude-code-managed":          "/etc/claude-code/managed-mcp.json",
			"claude-code-managed-settings": "/etc/claude-code/managed-settings.json",
			"vscode":                       "/home/ada/.config/Code/User/mcp.json",
			"vscode-settings":              "/home/ada/.config/Code/User/settings.json",
			"cursor":                       "/home/ada/.cursor/mcp.json",
			"windsurf":                     "/home/ada/.codeium/windsurf/mcp_config.json",
			"codex":                        "/home/ada/.codex/config.toml",
			"codex-system":                 "/etc/codex/config.toml",
			"codex-managed":                "/etc/codex/managed_config.toml",
			"gemini":                       "/home/ada/.gemini/settings.json",
			"gemini-system":                "/etc/gemini-cli/settings.json",
			"gemini-system-defaults":       "/etc/gemini-cli/system-defaults.json",
			"zed":                          "/home/ada/.config/zed/settings.json",
		},
	}, {
		name: "macOS",
		env:  &Env{GOOS: "darwin", Home: "/Users/ada", Workspace: "/Users/ada/proj"},
		vars: map[string]string{"XDG_CONFIG_HOME": "/Users/ada/.xdg", // not how macOS applications find their files
			"GEMINI_CLI_SYSTEM_DEFAULTS_PATH": "/opt/gemini-defaults.json"},
		want: map[string]string{
			"mcpx":                         "/Users/ada/Library/Application Support/mcpx/servers.json",
			"claude-desktop":               "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json",
			"claude-code":                  "/Users/ada/.claude.json",
			"claude-code-local":            "/Users/ada/.claude.json",
			"claude-code-project":          "/Users/ada/proj/.mcp.json",
			"claude-code-managed":          "/Library/Application Support/ClaudeCode/managed-mcp.json",
			"claude-code-managed-settings": "/Library/Application Support/ClaudeCode/managed-settings.json",
			"vscode":                       "/Users/ada/Library/Application Support/Code/User/mcp.json",
			"vscode-settings":              "/Users/ada/Library/Application Support/Code/User/settings.json",
			"vscode-project":               "/Users/ada/proj/.vscode/mcp.json",
			"cursor":                       "/Users/ada/.cursor/mcp.json",
			"cursor-project":               "/Users/ada/proj/.cursor/mcp.json",
			"windsurf":                     "/Users/ada/.codeium/windsurf/mcp_config.json",
			"codex":                        "/Users/ada/.codex/config.toml",
			"codex-project":                "/Users/ada/proj/.codex/config.toml",
			"codex-system":                 "/etc/codex/config.toml",
			"codex-managed":                "/etc/codex/managed_config.toml",
			"gemini":                       "/Users/ada/.gemini/settings.json",
			"gemini-project":               "/Users/ada/proj/.gemini/settings.json",
			"gemini-system":                "/Library/Application Support/GeminiCli/settings.json",
			"gemini-system-defaults":       "/opt/gemini-defaults.json",
			"zed":                          "/Users/ada/.config/zed/settings.json",
			"zed-project":                  "/Users/ada/proj/.zed/settings.json",
		},
	}, {
		name: "windows",
		env:  &Env{GOOS: "windows", Home: `C:\Users\ada`, Workspace: `D:\src\proj`},
		vars: map[string]string{"APPDATA": `C:\Users\ada\AppData\Roaming`},
		want: map[string]string{
			"mcpx":                         `C:\Users\ada\AppData\Roaming\mcpx\servers.json`,
			"claude-desktop":               `C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`,
			"claude-code":                  `C:\Users\ada\.claude.json`,
			"claude-code-local":            `C:\Users\ada\.claude.json`,
			"claude-code-project":          `D:\src\proj\.mcp.json`,
			"claude-code-managed":          `C:\Program Files\ClaudeCode\managed-mcp.json`,
			"claude-code-managed-settings": `C:\Program Files\ClaudeCode\managed-settings.json`,
			"vscode":                       `C:\Users\ada\AppData\Roaming\Code\User\mcp.json`,
			"vscode-settings":              `C:\Users\ada\AppData\Roaming\Code\User\settings.json`,
			"vscode-project":               `D:\src\proj\.vscode\mcp.json`,
			"cursor":                       `C:\Users\ada\.cursor\mcp.json`,
			"cursor-project":               `D:\src\proj\.cursor\mcp.json`,
			"windsurf":                     `C:\Users\ada\.codeium\windsurf\mcp_config.json`,
			"codex":                        `C:\Users\ada\.codex\config.toml`,
			"codex-project":                `D:\src\proj\.codex\config.toml`,
			"codex-system":                 `C:\ProgramData\OpenAI\Codex\config.toml`,
			"gemini":                       `C:\Users\ada\.gemini\settings.json`,
			"gemini-project":               `D:\src\proj\.gemini\settings.json`,
			"gemini-system":                `C:\ProgramData\gemini-cli\settings.json`,
			"gemini-system-defaults":       `C:\ProgramData\gemini-cli\system-defaults.json`,
			"zed":                          `C:\Users\ada\AppData\Roaming\Zed\settings.json`,
			"zed-project":                  `D:\src\proj\.zed\settings.json`,
		},
	}, {
		name: "windows without APPDATA, and a workspace that is the home directory",
		env:  &Env{GOOS: "windows", Home: `C:\Users\ada`, Workspace: `C:\Users\ada`},
		want: map[string]string{
			"mcpx":                         `C:\Users\ada\AppData\Roaming\mcpx\servers.json`,
			"claude-desktop":               `C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`,
			"claude-code":                  `C:\Users\ada\.claude.json`,
			"claude-code-local":            `C:\Users\ada\.claude.json`,
			"claude-code-project":          `C:\Users\ada\.mcp.json`,
			"claude-code-managed":          `C:\Program Files\ClaudeCode\managed-mcp.json`,
			"claude-code-managed-settings": `C:\Program Files\ClaudeCode\managed-settings.json`,
			"vscode":                       `C:\Users\ada\AppData\Roaming\Code\User\mcp.json`,
			"vscode-settings":              `C:\Users\ada\AppData\Roaming\Code\User\settings.json`,
			"vscode-project":               `C:\Users\ada\.vscode\mcp.json`,
			"cursor":                       `C:\Users\ada\.cursor\mcp.json`, // the project file is the user file: read once
			"windsurf":                     `C:\Users\ada\.codeium\windsurf\mcp_config.json`,
			"codex":                        `C:\Users\ada\.codex\config.toml`,
			"codex-system":                 `C:\ProgramData\OpenAI\Codex\config.toml`,
			"gemini":                       `C:\Users\ada\.gemini\settings.json`,
			"gemini-system":                `C:\ProgramData\gemini-cli\settings.json`,
			"gemini-system-defaults":       `C:\ProgramData\gemini-cli\system-defaults.json`,
			"zed":                          `C:\Users\ada\AppData\Roaming\Zed\settings.json`,
			"zed-project":                  `C:\Users\ada\.zed\settings.json`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env.LookupEnv = func(k string) (string, bool) { v, ok := tt.vars[k]; return v, ok }
			diff(t, tt.want, paths(tt.env))
		})
	}
}

// On Windows the files are found under Windows paths, and Claude Code's
// per-project entry is found whatever separators its key uses.
func TestLoadWindows(t *testing.T) {
	env := &Env{GOOS: "windows", Home: `C:\Users\ada`, Workspace: `D:\src\Proj`,
		LookupEnv: func(k string) (string, bool) {
			v, ok := map[string]string{"APPDATA": `C:\Users\ada\AppData\Roaming`}[k]
			return v, ok
		},
		FS: mapFS{
			`C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`: `{"mcpServers": {"fs": {"command": "npx.cmd", "args": ["-y", "@modelcontextprotocol/server-filesystem", "C:\\Users\\ada\\Desktop"]}}}`,
			`C:\Users\ada\.claude.json`:                                      `{"projects": {"d:/src/proj/": {"mcpServers": {"local": {"command": "node", "args": ["server.js"]}}}}}`,
			`D:\src\Proj\.vscode\mcp.json`:                                   `{"servers": {"tool": {"command": "${workspaceFolder}${/}bin${pathSeparator}tool.exe"}}}`,
		}}
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var refs []string
	for _, s := range c.Servers {
		refs = append(refs, s.Ref())
	}
	diff(t, []string{"claude-desktop:fs", "claude-code-local:local", "vscode-project:tool"}, refs)
	s, err := c.Lookup("tool")
	if err != nil {
		t.Fatal(err)
	}
	l := resolve(t, env, s, nil)
	if l.Command != `D:\src\Proj\bin\tool.exe` {
		t.Errorf("command %q", l.Command)
	}
}

func TestJoin(t *testing.T) {
	for _, tt := range []struct {
		goos string
		elem []string
		want string
	}{
		{"linux", []string{"/home/ada/", "x", "../y"}, "/home/ada/y"},
		{"windows", []string{`C:\Users\ada`, "x/y"}, `C:\Users\ada\x\y`},
		{"windows", []string{`\\server\share`, "dir"}, `\\server\share\dir`},
		{"windows", []string{`C:/a/`, `..\b`}, `C:\b`},
	} {
		e := &Env{GOOS: tt.goos}
		if got := e.join(tt.elem...); got != tt.want {
			t.Errorf("%s join %q = %q, want %q", tt.goos, tt.elem, got, tt.want)
		}
	}
	for _, tt := range []struct {
		goos string
		p    string
		want bool
	}{
		{"linux", "/x", true}, {"linux", "x", false}, {"windows", `C:\x`, true}, {"windows", `c:/x`, true},
		{"windows", `\\srv\x`, true}, {"windows", `x\y`, false}, {"windows", `C:x`, false}, {"darwin", "~/x", false},
	} {
		if got := (&Env{GOOS: tt.goos}).isAbs(tt.p); got != tt.want {
			t.Errorf("%s isAbs(%q) = %v", tt.goos, tt.p, got)
		}
	}
}
