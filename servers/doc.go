// Package servers finds the MCP server definitions people already have —
// in the configuration files of Claude Desktop, Claude Code, VS Code,
// Cursor, Windsurf, Codex CLI, Gemini CLI and Zed, and in mcpx's own file —
// and turns each into one normalised Server, so that a command can name a
// server instead of spelling out its command line or URL.
//
// The package reads files and nothing else: listing, looking up and
// resolving a server never starts a process nor opens a connection. It
// takes its environment (GOOS, home, workspace, variables, file reading) as
// an Env value, so that tests use temporary directories and fake homes.
//
// # Using it
//
//	env, _ := servers.OSEnv()
//	cat, _ := servers.Load(ctx, env)         // every file; problems are cat.Warnings
//	s, err := cat.Lookup("github")           // or "cursor-project:github"
//	if s.NeedsTrust() { ... ask once, then store.Trust(ctx, s) ... }
//	l, err := servers.Resolve(ctx, env, s, ask) // variables, envFile, ${input:ID}
//
// # Where definitions are read from
//
// Each location has a source ID, unique among locations, which qualifies a
// name defined in more than one file (SOURCE:NAME). CONFIG is the user
// configuration directory: $XDG_CONFIG_HOME or ~/.config on Linux,
// ~/Library/Application Support on macOS, %APPDATA% on Windows. WORKSPACE
// is each directory from Env.Dir up to Env.Workspace, the project's root
// (ProjectRoot: the nearest with .git): of a project file, the nearest
// one is read; Claude Code's local scope is the entry of the nearest that
// has one. Codex's are all read, in a project the person trusts in Codex,
// up to the root its project_root_markers name (codexProjectDirs), and
// Codex's entries of one name in its system, user and project files are
// merged key by key into one server, as Codex merges them (mergeCodex).
//
//	ID                   file                                         servers in
//	mcpx                 $MCPX_CONFIG_DIR or CONFIG/mcpx, servers.json mcpServers
//	claude-desktop       CONFIG/Claude/claude_desktop_config.json      mcpServers
//	claude-code          ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json) mcpServers
//	claude-code-local    the same file                                projects[WORKSPACE].mcpServers
//	claude-code-project  WORKSPACE/.mcp.json                          mcpServers
//	claude-code-managed  managed-mcp.json in /etc/claude-code (macOS: mcpServers
//	                     /Library/Application Support/ClaudeCode;
//	                     Windows: C:\Program Files\ClaudeCode)
//	claude-code-managed-settings managed-settings.json   managedMcpServers
//	                     and managed-settings.d/*.json there
//	vscode               CONFIG/Code/User/mcp.json                     servers, inputs
//	vscode-settings      CONFIG/Code/User/settings.json                mcp.servers, mcp.inputs
//	vscode-project       WORKSPACE/.vscode/mcp.json                   servers, inputs
//	cursor               ~/.cursor/mcp.json                           mcpServers
//	cursor-project       WORKSPACE/.cursor/mcp.json                   mcpServers
//	windsurf             ~/.codeium/windsurf/mcp_config.json          mcpServers
//	codex                $CODEX_HOME or ~/.codex, config.toml          [mcp_servers.NAME]
//	codex-project        WORKSPACE/.codex/config.toml                 [mcp_servers.NAME]
//	codex-system         /etc/codex/config.toml (Windows:             [mcp_servers.NAME]
//	                     C:\ProgramData\OpenAI\Codex\config.toml)
//	codex-managed        /etc/codex/managed_config.toml (not on        [mcp_servers.NAME]
//	                     Windows), over all of Codex's other files
//	gemini               ~/.gemini/settings.json (in $GEMINI_CLI_HOME) mcpServers
//	gemini-project       WORKSPACE/.gemini/settings.json              mcpServers
//	gemini-system        $GEMINI_CLI_SYSTEM_SETTINGS_PATH or           mcpServers
//	                     /etc/gemini-cli/settings.json (macOS:
//	                     /Library/Application Support/GeminiCli;
//	                     Windows: C:\ProgramData\gemini-cli)
//	gemini-system-defaults $GEMINI_CLI_SYSTEM_DEFAULTS_PATH or          mcpServers
//	                     system-defaults.json beside it
//	zed                  ~/.config/zed/settings.json (Linux: $XDG_CONFIG_HOME/zed;
//	                     Windows: %APPDATA%\Zed\settings.json)         context_servers
//	zed-project          WORKSPACE/.zed/settings.json                 context_servers
//
// Claude Code's managed-mcp.json, when there is one, is the only file of
// Claude Code's servers it uses, and its allowedMcpServers and
// deniedMcpServers settings leave servers out: Load marks those disabled,
// with a DisabledReason (claudepolicy.go).
//
// The formats and variables each tool documents are cited next to the code
// that reads them (locate.go, formats.go); docs/server-definitions.md is
// the reference for people. JSON files are read as JSON with comments and
// trailing commas (the editors' settings files are JSONC).
//
// # mcpx's own file
//
// mcpx's file is servers.json in mcpx's configuration directory. Its format
// is the one Claude Code uses for .mcp.json, so that an entry can be pasted
// between the two, read as JSON with comments and trailing commas:
//
//	{
//	  "mcpServers": {
//	    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
//	                   "env": {"DEBUG": "1"}, "envFile": "~/.config/everything.env", "cwd": "~"},
//	    "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
//	  }
//	}
//
// type is stdio, http (Streamable HTTP) or sse (HTTP+SSE); without it an
// entry with a command is stdio and one with a url is tried as Streamable
// HTTP, then HTTP+SSE. Strings may use ${VAR} and ${env:VAR} (an unset
// variable is an error), ${VAR:-default}, ${input:ID} (asked for),
// ${workspaceFolder}, ${userHome}, and a leading ~ in command, args, cwd
// and envFile. Add and Remove edit this file only. They rewrite it, keeping
// its other fields and the order of its entries but not its layout; as
// comments cannot be kept, a file with comments is refused with a
// *CommentsError (edit it by hand) rather than have them dropped.
//
// # Safety
//
// A stdio server from a file mcpx did not write (Server.NeedsTrust) runs a
// command someone else chose — for a project file, whoever wrote the
// repository. A server at a URL from such a file that expands variables of
// this machine (Server.Expansions: ${env:TOKEN} in a header…) sends their
// values to a URL someone else chose, so it needs trust too. TrustStore
// remembers that the person confirmed one entry of one file; an edit to
// the entry changes its Hash and so asks again.
package servers
