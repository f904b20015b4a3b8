package servers

// location is one place definitions are read from, and how to read it.
type location struct {
	Source
	dialect *dialect
	// toml: the file is Codex's TOML; else JSON with comments.
	toml bool
	// servers is the path of keys to the object of server entries; a
	// workspaceKey element stands for the entry of Env.Workspace in
	// Claude Code's "projects" map.
	servers []string
	// inputs is the path of keys to VS Code's input definitions.
	inputs []string
	// topLevel lists the keys a file devoted to servers may hold;
	// anything else at its top level is reported. nil for settings files
	// that hold much else.
	topLevel []string
	// excluded and allowed are the paths to Gemini's lists of the server
	// names not to connect to and of the only ones to connect to.
	excluded, allowed []string
	// nearest: the location is one of an application's project files,
	// one a directory from the working directory up to the project root,
	// listed nearest first, and only the first one found is read.
	// layered: every one is read, and a server defined in a nearer one
	// hides the farther ones' of its name (Claude Code's managed
	// settings).
	nearest, layered bool
	// codexLayer is the precedence of one of Codex's files, whose
	// entries Load merges key by key: 0 the system's, 1 the user's, then
	// the project's from its root down to the working directory.
	codexLayer int
	// distrust, when set, says why the application does not read the
	// file (a Codex project that is not trusted): it is not read.
	distrust string
}

const workspaceKey = "\x00workspace"

// locations lists where e's definitions live, in listing order. A
// project file is looked for in each of e.projectDirs, nearest first,
// under one source ID: the applications that read one project file read
// the one of the project they open, which is the nearest to the working
// directory that has one (a sub-project opened on its own, like the
// repository around it, sees its own file), and Codex reads them all, up
// to a root of its own (codexProjectDirs).
// Project locations are left out when e has no workspace, and a location
// whose file is another location's (a workspace that is the home
// directory) is listed once.
func (e *Env) locations() []location {
	l, _ := e.locate()
	return l
}

// locate is locations, and the problems met reading the settings that
// move them (Codex's project_root_markers).
func (e *Env) locate() ([]location, []Warning) {
	cfg := e.userConfigDir()
	var out []location
	add := func(l location) {
		if l.Path == "" {
			return
		}
		for _, o := range out {
			if o.Path == l.Path && o.dialect == l.dialect && equalKeys(o.servers, l.servers) {
				return
			}
		}
		out = append(out, l)
	}
	// projectIn adds l for each directory of ds, its file at elem there.
	projectIn := func(ds []string, l location, elem ...string) {
		for _, d := range ds {
			l.Path, l.Workspace = e.join(append([]string{d}, elem...)...), d
			l.nearest = !l.layered
			add(l)
		}
	}
	dirs := e.projectDirs()
	// project adds l for each project directory.
	project := func(l location, elem ...string) { projectIn(dirs, l, elem...) }

	// mcpx's own file: see the package comment.
	if own, err := OwnFile(e); err == nil {
		add(location{Source: Source{ID: "mcpx", Kind: KindMcpx, Scope: ScopeUser, Path: own},
			dialect: dialects[KindMcpx], servers: []string{"mcpServers"}, topLevel: []string{"mcpServers", "$schema"}})
	}

	// Claude Desktop keeps claude_desktop_config.json in its application
	// data directory: ~/Library/Application Support/Claude on macOS,
	// %APPDATA%\Claude on Windows (https://modelcontextprotocol.io/docs/
	// develop/connect-local-servers). There is no official Linux build;
	// the community builds use ~/.config/Claude, which is the same rule.
	add(location{Source: Source{ID: "claude-desktop", Kind: KindClaudeDesktop, Scope: ScopeUser,
		Path: e.join(cfg, "Claude", "claude_desktop_config.json")},
		dialect: dialects[KindClaudeDesktop], servers: []string{"mcpServers"}})

	// Claude Code (https://code.claude.com/docs/en/mcp, "MCP installation
	// scopes"): user scope is mcpServers at the top of ~/.claude.json,
	// local scope the mcpServers of the project's entry under "projects"
	// in the same file, project scope .mcp.json at the project root.
	// CLAUDE_CONFIG_DIR moves ~/.claude.json into that directory.
	claudeJSON := e.join(e.Home, ".claude.json")
	if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		claudeJSON = e.join(d, ".claude.json")
	}
	add(location{Source: Source{ID: "claude-code", Kind: KindClaudeCode, Scope: ScopeUser, Path: claudeJSON},
		dialect: dialects[KindClaudeCode], servers: []string{"mcpServers"}})
	// The local scope's entry is the one of the nearest project directory
	// that has one (claudeLocal); it is the working directory's until the
	// file is read.
	if len(dirs) > 0 {
		add(location{Source: Source{ID: "claude-code-local", Kind: KindClaudeCode, Scope: ScopeLocal, Path: claudeJSON, Workspace: dirs[0]},
			dialect: dialects[KindClaudeCode], servers: []string{"projects", workspaceKey, "mcpServers"}})
	}
	project(location{Source: Source{ID: "claude-code-project", Kind: KindClaudeCode, Scope: ScopeProject},
		dialect: dialects[KindClaudeCode], servers: []string{"mcpServers"}, topLevel: []string{"mcpServers"}}, ".mcp.json")
	// and the managed (enterprise) configuration an administrator
	// deploys, managed-mcp.json in Claude Code's system directory, in the
	// format of .mcp.json (https://code.claude.com/docs/en/managed-mcp,
	// "Exclusive control with managed-mcp.json"). When it is there,
	// Claude Code uses its servers only (see claudeCodePolicy).
	add(location{Source: Source{ID: "claude-code-managed", Kind: KindClaudeCode, Scope: ScopeSystem,
		Path: e.join(e.claudeManagedDir(), "managed-mcp.json")},
		dialect: dialects[KindClaudeCode], servers: []string{"mcpServers"}, topLevel: []string{"mcpServers"}})
	// The managed settings may provide remote servers too, which people
	// keep beside their own: managedMcpServers, an object of the entries
	// of .mcp.json (https://code.claude.com/docs/en/managed-mcp, "Provide
	// servers through managed settings"). Of a name several of the files
	// define, mcpx takes the last one's entry whole (see
	// claudeManagedSettings for the order), where Claude Code merges
	// them key by key: they are listed last first, as layers.
	settings := e.claudeManagedSettings()
	for i := len(settings) - 1; i >= 0; i-- {
		add(location{Source: Source{ID: "claude-code-managed-settings", Kind: KindClaudeCode, Scope: ScopeSystem, Path: settings[i]},
			dialect: dialects[KindClaudeCode], servers: []string{"managedMcpServers"}, layered: true})
	}

	// VS Code (https://code.visualstudio.com/docs/copilot/reference/
	// mcp-configuration): mcp.json in the user profile (the User
	// directory of Code's configuration directory) and .vscode/mcp.json
	// in the workspace, with "servers" and "inputs". Before mcp.json, the
	// user settings.json held the same under "mcp" (VS Code 1.99 docs,
	// "Add an MCP server to your user settings"); it is still read.
	vsUser := e.join(cfg, "Code", "User")
	add(location{Source: Source{ID: "vscode", Kind: KindVSCode, Scope: ScopeUser, Path: e.join(vsUser, "mcp.json")},
		dialect: dialects[KindVSCode], servers: []string{"servers"}, inputs: []string{"inputs"},
		topLevel: []string{"servers", "inputs", "$schema"}})
	add(location{Source: Source{ID: "vscode-settings", Kind: KindVSCode, Scope: ScopeUser, Path: e.join(vsUser, "settings.json")},
		dialect: dialects[KindVSCode], servers: []string{"mcp", "servers"}, inputs: []string{"mcp", "inputs"}})
	project(location{Source: Source{ID: "vscode-project", Kind: KindVSCode, Scope: ScopeProject},
		dialect: dialects[KindVSCode], servers: []string{"servers"}, inputs: []string{"inputs"},
		topLevel: []string{"servers", "inputs", "$schema"}}, ".vscode", "mcp.json")

	// Cursor (https://cursor.com/docs/mcp): ~/.cursor/mcp.json for every
	// project (%USERPROFILE%\.cursor on Windows) and .cursor/mcp.json in
	// a project, with "mcpServers".
	add(location{Source: Source{ID: "cursor", Kind: KindCursor, Scope: ScopeUser, Path: e.join(e.Home, ".cursor", "mcp.json")},
		dialect: dialects[KindCursor], servers: []string{"mcpServers"}, topLevel: []string{"mcpServers"}})
	project(location{Source: Source{ID: "cursor-project", Kind: KindCursor, Scope: ScopeProject},
		dialect: dialects[KindCursor], servers: []string{"mcpServers"}, topLevel: []string{"mcpServers"}}, ".cursor", "mcp.json")

	// Windsurf (https://docs.windsurf.com/windsurf/cascade/mcp,
	// "mcp_config.json"): ~/.codeium/windsurf/mcp_config.json, the same
	// under %USERPROFILE% on Windows; it documents no project file.
	add(location{Source: Source{ID: "windsurf", Kind: KindWindsurf, Scope: ScopeUser,
		Path: e.join(e.Home, ".codeium", "windsurf", "mcp_config.json")},
		dialect: dialects[KindWindsurf], servers: []string{"mcpServers"}, topLevel: []string{"mcpServers"}})

	// Codex CLI (https://developers.openai.com/codex/mcp): [mcp_servers.NAME]
	// tables in config.toml under CODEX_HOME (default ~/.codex), in the
	// system configuration (codexSystemFile), and in
	// .codex/config.toml of a trusted project: in every directory from
	// the project's root down to the working directory
	// (https://developers.openai.com/codex/config-basic, "Configuration
	// precedence"; codexProjectDirs). Codex merges these layers key by
	// key, the system's lowest, then the user's, then the project's from
	// its root down (codexLayer orders them; Load merges them).
	cs, warns := e.codexConfig()
	add(location{Source: Source{ID: "codex", Kind: KindCodex, Scope: ScopeUser, Path: cs.userFile},
		dialect: dialects[KindCodex], toml: true, codexLayer: 1})
	codexDirs := e.codexProjectDirs(cs)
	for i, d := range codexDirs {
		add(location{Source: Source{ID: "codex-project", Kind: KindCodex, Scope: ScopeProject, Path: e.join(d.dir, ".codex", "config.toml"), Workspace: d.dir},
			dialect: dialects[KindCodex], toml: true, codexLayer: 1 + len(codexDirs) - i, distrust: d.distrust})
	}
	if sys := e.codexSystemFile(); sys != "" {
		add(location{Source: Source{ID: "codex-system", Kind: KindCodex, Scope: ScopeSystem, Path: sys},
			dialect: dialects[KindCodex], toml: true, codexLayer: 0})
	}
	// and the legacy managed configuration an administrator deploys,
	// /etc/codex/managed_config.toml on Unix, which Codex still merges
	// on top of every other layer (codex-rs/config/src/loader/mod.rs,
	// load_config_layers_state, LegacyManagedConfigTomlFromFile;
	// managed_config_default_path: on Windows it is ignored).
	if !e.windows() {
		add(location{Source: Source{ID: "codex-managed", Kind: KindCodex, Scope: ScopeSystem, Path: "/etc/codex/managed_config.toml"},
			dialect: dialects[KindCodex], toml: true, codexLayer: 2 + len(codexDirs)})
	}

	// Gemini CLI (https://github.com/google-gemini/gemini-cli/blob/main/
	// docs/tools/mcp-server.md, "Configure the MCP server in
	// settings.json"): mcpServers in ~/.gemini/settings.json and in the
	// project's .gemini/settings.json; mcp.excluded names servers not to
	// connect to, mcp.allowed the only ones to connect to (see
	// applyNameRules). GEMINI_CLI_HOME stands for the home directory that
	// .gemini is in (https://github.com/google-gemini/gemini-cli/blob/main/
	// docs/reference/configuration.md, "Environment variables";
	// packages/core/src/utils/paths.ts, homedir).
	add(location{Source: Source{ID: "gemini", Kind: KindGemini, Scope: ScopeUser, Path: e.join(e.geminiDir(), "settings.json")},
		dialect: dialects[KindGemini], servers: []string{"mcpServers"},
		excluded: []string{"mcp", "excluded"}, allowed: []string{"mcp", "allowed"}})
	project(location{Source: Source{ID: "gemini-project", Kind: KindGemini, Scope: ScopeProject},
		dialect: dialects[KindGemini], servers: []string{"mcpServers"},
		excluded: []string{"mcp", "excluded"}, allowed: []string{"mcp", "allowed"}}, ".gemini", "settings.json")
	// Gemini CLI's system files, for every user of the machine: the
	// system settings, which override the others, and the system
	// defaults beside them, which the others override
	// (docs/reference/configuration.md, "Settings files";
	// packages/cli/src/config/settings.ts, getSystemSettingsPath and
	// getSystemDefaultsPath).
	geminiSystem := "/etc/gemini-cli/settings.json"
	switch e.GOOS {
	case "windows":
		geminiSystem = `C:\ProgramData\gemini-cli\settings.json`
	case "darwin":
		geminiSystem = "/Library/Application Support/GeminiCli/settings.json"
	}
	if p := e.getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
		geminiSystem = p
	}
	geminiDefaults := e.join(geminiSystem, "..", "system-defaults.json")
	if p := e.getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"); p != "" {
		geminiDefaults = p
	}
	add(location{Source: Source{ID: "gemini-system", Kind: KindGemini, Scope: ScopeSystem, Path: e.join(geminiSystem)},
		dialect: dialects[KindGemini], servers: []string{"mcpServers"},
		excluded: []string{"mcp", "excluded"}, allowed: []string{"mcp", "allowed"}})
	add(location{Source: Source{ID: "gemini-system-defaults", Kind: KindGemini, Scope: ScopeSystem, Path: e.join(geminiDefaults)},
		dialect: dialects[KindGemini], servers: []string{"mcpServers"},
		excluded: []string{"mcp", "excluded"}, allowed: []string{"mcp", "allowed"}})

	// Zed (https://zed.dev/docs/ai/mcp, https://zed.dev/docs/configuring-zed):
	// context_servers in the user settings, ~/.config/zed/settings.json
	// ($XDG_CONFIG_HOME/zed on Linux, %APPDATA%\Zed on Windows), and in a
	// project's .zed/settings.json.
	zedDir := e.join(e.Home, ".config", "zed")
	switch e.GOOS {
	case "windows":
		zedDir = e.join(cfg, "Zed")
	case "darwin":
	default:
		if d := e.absEnv("XDG_CONFIG_HOME"); d != "" {
			zedDir = e.join(d, "zed")
		}
	}
	add(location{Source: Source{ID: "zed", Kind: KindZed, Scope: ScopeUser, Path: e.join(zedDir, "settings.json")},
		dialect: dialects[KindZed], servers: []string{"context_servers"}})
	project(location{Source: Source{ID: "zed-project", Kind: KindZed, Scope: ScopeProject},
		dialect: dialects[KindZed], servers: []string{"context_servers"}}, ".zed", "settings.json")
	return out, warns
}

// claudeManagedDir is Claude Code's system directory, where an
// administrator deploys managed-mcp.json and managed-settings.json:
// /etc/claude-code on Linux and WSL, /Library/Application
// Support/ClaudeCode on macOS, C:\Program Files\ClaudeCode on Windows
// (https://code.claude.com/docs/en/managed-settings, "Where each mechanism
// stores the policy"; Claude Code no longer reads the older
// C:\ProgramData\ClaudeCode). Claude Code documents no variable that
// moves it.
func (e *Env) claudeManagedDir() string {
	switch e.GOOS {
	case "windows":
		return `C:\Program Files\ClaudeCode`
	case "darwin":
		return "/Library/Application Support/ClaudeCode"
	}
	return "/etc/claude-code"
}

// geminiDir is Gemini CLI's user directory: .gemini in $GEMINI_CLI_HOME,
// else in the home directory.
func (e *Env) geminiDir() string {
	if d := e.getenv("GEMINI_CLI_HOME"); d != "" {
		return e.join(d, ".gemini")
	}
	return e.join(e.Home, ".gemini")
}

func equalKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Locations lists the files Load looks for for e, in listing order,
// whether they exist or not (for a verbose listing of where mcpx looked):
// each project file once for each directory from the working directory
// up to the project root.
func Locations(e *Env) []Source {
	var out []Source
	for _, l := range e.locations() {
		out = append(out, l.Source)
	}
	return out
}
