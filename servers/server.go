package servers

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Kind names the application whose configuration file defines a server.
type Kind string

// The applications whose files are read.
const (
	KindMcpx          Kind = "mcpx"
	KindClaudeDesktop Kind = "claude-desktop"
	KindClaudeCode    Kind = "claude-code"
	KindVSCode        Kind = "vscode"
	KindCursor        Kind = "cursor"
	KindWindsurf      Kind = "windsurf"
	KindCodex         Kind = "codex"
	KindGemini        Kind = "gemini"
	KindZed           Kind = "zed"
)

// kindOrder is the order of sources in listings: mcpx's own file first,
// then the applications in a fixed order.
var kindOrder = []Kind{KindMcpx, KindClaudeDesktop, KindClaudeCode, KindVSCode, KindCursor, KindWindsurf, KindCodex, KindGemini, KindZed}

// Scope says whom a file belongs to, which matters for trust: a project
// file usually comes with a repository, written by someone else.
type Scope string

// The scopes.
const (
	// ScopeUser is a file in the person's home or configuration
	// directory, for every project.
	ScopeUser Scope = "user"
	// ScopeLocal is Claude Code's per-project entries, kept in the
	// person's own ~/.claude.json (Claude Code's "local" scope).
	ScopeLocal Scope = "local"
	// ScopeProject is a file inside the workspace, usually checked into
	// its repository.
	ScopeProject Scope = "project"
	// ScopeSystem is a file an administrator keeps for every user of the
	// machine (Claude Code's managed-mcp.json, Codex's
	// /etc/codex/config.toml, Gemini CLI's system settings).
	ScopeSystem Scope = "system"
)

var scopeOrder = []Scope{ScopeUser, ScopeLocal, ScopeProject, ScopeSystem}

// Transport is how mcpx talks to a server.
type Transport string

// The transports.
const (
	// TransportStdio starts Command with Args and talks over its stdin
	// and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP is the Streamable HTTP transport at URL.
	TransportHTTP Transport = "http"
	// TransportSSE is the legacy HTTP+SSE transport at URL.
	TransportSSE Transport = "sse"
	// TransportAuto is a URL whose file does not say which HTTP transport
	// it speaks: Streamable HTTP is tried, then HTTP+SSE (mcpx's
	// --transport auto).
	TransportAuto Transport = "auto"
)

// IsHTTP reports whether t is one of the transports over a URL.
func (t Transport) IsHTTP() bool {
	return t == TransportHTTP || t == TransportSSE || t == TransportAuto
}

// Source is one file (and, for ~/.claude.json, one section of it) that
// server definitions are read from.
type Source struct {
	// ID names the location, unique among locations: "cursor",
	// "cursor-project", "claude-code-local"… It qualifies a name that
	// several files define (ID:NAME).
	ID    string
	Kind  Kind
	Scope Scope
	// Path is the file.
	Path string
	// Workspace is the project directory the definitions belong to: for
	// a project file, the directory that holds it (the one .vscode,
	// .cursor, .codex… are in, or .mcp.json), which may be below
	// Env.Workspace; for Claude Code's local scope, the project whose
	// entry of Path this is (~/.claude.json holds a server of one name
	// for the user and for each project, each its own entry, confirmed
	// apart). Its servers' ${workspaceFolder} and relative cwd and
	// envFile start there (not a Codex server's cwd: see Server.Cwd). "" for user and system files, whose servers
	// take Env.Workspace.
	Workspace string
}

func (s Source) String() string { return s.ID + " (" + s.Path + ")" }

// rank orders sources in listings: user files (mcpx's own first), then
// Claude Code's local scope, then project files, then the machine's;
// by application within a scope.
func (s Source) rank() int {
	return slices.Index(scopeOrder, s.Scope)*len(kindOrder) + slices.Index(kindOrder, s.Kind)
}

// Server is one server definition, normalised. Its strings are as the file
// wrote them: variables (${env:TOKEN}, ${input:key}…) are expanded only by
// Resolve, so that listing a server neither asks for inputs nor shows
// secrets that live in the environment.
type Server struct {
	// Name is the entry's name in its file.
	Name   string
	Source Source
	// Transport is stdio for a Command, one of the HTTP transports for a
	// URL.
	Transport Transport

	// Command, Args, Env, EnvFile and Cwd describe a stdio server. Env
	// is added to mcpx's own environment; EnvFile names a file of
	// NAME=VALUE lines loaded before Env (Env wins). Cwd is the directory
	// to start in ("" for mcpx's own); a relative one is taken from the
	// workspace, a Codex server's from the working directory, as Codex
	// takes it from its own whichever layer set it (Resolve).
	Command string
	Args    []string
	Env     map[string]string
	EnvFile string
	Cwd     string

	// URL and Headers describe a server over HTTP.
	URL     string
	Headers map[string]string
	// EnvHeaders are headers whose values are taken from environment
	// variables (Codex's env_http_headers: header name → variable name);
	// a header whose variable is unset is not sent.
	EnvHeaders map[string]string
	// BearerTokenEnv names the environment variable that holds a bearer
	// token for the Authorization header (Codex's bearer_token_env_var);
	// it must be set.
	BearerTokenEnv string

	// Timeout is how long the application waits for the server's answer
	// to a request (Gemini CLI's timeout, Codex's tool_timeout_sec); 0
	// when the entry sets none. A server that takes minutes is given
	// them there, and mcpx gives it as many unless told otherwise.
	Timeout time.Duration

	// Tools is which of the server's tools its application offers its
	// model, when the entry filters them (Codex's enabled_tools and
	// disabled_tools, Gemini CLI's includeTools and excludeTools,
	// Windsurf's disabledTools); nil when it does not. mcpx still lists
	// and calls every tool.
	Tools *ToolFilter

	// Startup is how long the application waits for the server to start
	// before it gives up on it (Codex: startup_timeout_sec, by default 10
	// s); nil when it sets no such bound. mcpx waits as --timeout says,
	// and warns when the server took longer than this.
	Startup *StartupLimit

	// Disabled reports that the file turns the server off (Windsurf's
	// "disabled", Zed's and Codex's "enabled": false, Gemini's
	// mcp.excluded, or a Gemini mcp.allowed without it), or that its
	// application would not use it (Claude Code's managed policy). It is
	// listed, and can still be used by name.
	Disabled bool
	// DisabledReason says why, when it is not the entry itself that
	// turns the server off, nor the application's name lists: Claude
	// Code's managed-mcp.json taking exclusive control, or its
	// allowedMcpServers or deniedMcpServers. "" otherwise.
	DisabledReason string

	// Hash identifies the entry's content: the SHA-256, in hex, of its
	// source kind, its name and its fields as written. Any edit of the
	// entry changes it; the trust store keys on it.
	Hash string

	// Line is the line of the entry in its file (0 when unknown).
	Line int

	// Layers are, when several of Codex's files define the server, each
	// of them, the lowest precedence first: Codex merges their entries
	// key by key into the one it uses, and so does mcpx. Source is the
	// last, the file of highest precedence that sets any of its keys.
	// nil when one file defines it.
	Layers []Source

	// syntax is the variable syntax of the application that wrote the
	// file; inputs are the input definitions of its file (VS Code).
	syntax syntax
	inputs map[string]Input
}

// Ref is the qualified name of s: its source ID, a colon, its name.
func (s *Server) Ref() string { return s.Source.ID + ":" + s.Name }

// NeedsTrust reports whether mcpx must have the person's confirmation
// before using s, which comes from a file mcpx did not write (for a
// project file, whoever wrote the repository chose it): s is a stdio
// server, which runs a command on this machine, or a server at a URL
// that expands variables of this machine (Expansions) and so would send
// their values, credentials perhaps, to that URL, or a server on a Unix
// socket or a named pipe of this machine (VS Code's unix:// and pipe://
// URLs), which could be any local service that answers HTTP there, such
// as Docker's.
func (s *Server) NeedsTrust() bool {
	if s.Source.Kind == KindMcpx {
		return false
	}
	return s.Transport == TransportStdio || len(s.Expansions()) > 0 || socketURL(s.URL)
}

// socketURL reports whether u names a server on a Unix socket or a
// named pipe of this machine (unix:// or pipe://).
func socketURL(u string) bool {
	scheme, _, ok := strings.Cut(strings.TrimSpace(u), "://")
	return ok && (strings.EqualFold(scheme, "unix") || strings.EqualFold(scheme, "pipe"))
}

// sameDefinition reports whether a and b start the same server the same
// way, wherever they were written: the same fields, and either no
// variable in them or the same variable syntax.
func sameDefinition(a, b *Server) bool {
	return a.Transport == b.Transport && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) && a.EnvFile == b.EnvFile && a.Cwd == b.Cwd && a.URL == b.URL &&
		maps.Equal(a.Headers, b.Headers) && maps.Equal(a.EnvHeaders, b.EnvHeaders) &&
		a.BearerTokenEnv == b.BearerTokenEnv && (a.syntax == b.syntax || (!a.hasVariables() && !b.hasVariables()))
}

// hasVariables reports whether any string of s could hold a variable.
func (s *Server) hasVariables() bool {
	strs := append([]string{s.Command, s.EnvFile, s.Cwd, s.URL}, s.Args...)
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for _, v := range m {
			strs = append(strs, v)
		}
	}
	return slices.ContainsFunc(strs, func(v string) bool { return strings.ContainsAny(v, "$~") })
}

// Input is a value a server definition asks the person for when it is
// resolved (VS Code's input variables, ${input:ID}).
type Input struct {
	// ID is the name in ${input:ID}.
	ID string
	// Description is the prompt the file gives ("" when the file defines
	// no input of that ID).
	Description string
	// Password says the value is secret: not echoed, not stored.
	Password bool
	// Default is the value to use when the person enters nothing.
	Default string
	// Options are the choices of a pickString input.
	Options []string
	// Server and Source say which definition asks.
	Server string
	Source Source

	// command marks a VS Code "command" input, which runs an editor
	// command that mcpx does not have.
	command bool
}

// Warning is a problem met while reading definitions: a file that cannot
// be read or parsed, an entry that is skipped, a field mcpx does not know
// or does not honour. Warnings are never fatal: the other entries and
// files still load.
type Warning struct {
	Path string
	// Line is 1-based; 0 when unknown.
	Line int
	// Server is the entry concerned ("" for the file as a whole).
	Server  string
	Message string
	// Unread marks a file no server was read from at all (it could not
	// be read, or parsed, or its servers' member is not an object): a
	// server the user names may be in it (see NotFoundError).
	Unread bool
}

func (w Warning) String() string {
	loc := w.Path
	if w.Line > 0 {
		loc = fmt.Sprintf("%s:%d", w.Path, w.Line)
	}
	if w.Server != "" {
		return fmt.Sprintf("%s: server %q: %s", loc, w.Server, w.Message)
	}
	return loc + ": " + w.Message
}
