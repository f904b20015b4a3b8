package servers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"
)

// role is what a field of a server entry means to mcpx.
type role int

const (
	rIgnore     role = iota // known; does not change how mcpx connects
	rType                   // the transport
	rCommand                // the command (Zed also takes {path, args, env})
	rArgs                   // its arguments
	rEnv                    // its environment
	rEnvFile                // a file of NAME=VALUE lines
	rCwd                    // its working directory
	rURL                    // the URL
	rHTTPURL                // Gemini's httpUrl: a Streamable HTTP server
	rServerURL              // Windsurf's serverUrl
	rHeaders                // HTTP headers
	rDisabled               // true turns the server off
	rEnabled                // false turns the server off
	rBearerEnv              // Codex: variable holding a bearer token
	rEnvHeaders             // Codex: header → variable holding its value
	rTimeoutMS              // Gemini: how long to wait for an answer, in milliseconds
	rTimeoutSec             // Codex: how long to wait for a tool's answer, in seconds
	rUnhonoured             // known, but mcpx cannot do what it asks: a warning unless false or empty
	rToolsAllow             // the only tools the application offers its model (ToolFilter)
	rToolsDeny              // tools the application hides from its model, after rToolsAllow
	rStartupSec             // Codex: how long to wait for the server to start, in seconds
	rStartupMS              // Codex: the same in milliseconds (startup_timeout_sec wins)
)

// dialect is how one application writes a server entry.
type dialect struct {
	kind   Kind
	fields map[string]role
	// notes explain the rUnhonoured fields; harmless is, for some of
	// them, the value that asks nothing mcpx does not do.
	notes    map[string]string
	harmless map[string]string
	// syntax is the variable syntax of the application (vars.go).
	syntax syntax
}

var dialects = map[Kind]*dialect{
	// See the package comment.
	KindMcpx: {kind: KindMcpx, fields: map[string]role{
		"type": rType, "command": rCommand, "args": rArgs, "env": rEnv, "envFile": rEnvFile, "cwd": rCwd,
		"url": rURL, "headers": rHeaders,
	}, syntax: synBraced | synDefault | synEnvPrefix | synInput | synEditor | synTilde | unsetError},

	// Claude Desktop documents command, args and env for the local
	// (stdio) servers of claude_desktop_config.json, and no variables
	// (https://modelcontextprotocol.io/docs/develop/connect-local-servers).
	KindClaudeDesktop: {kind: KindClaudeDesktop, fields: map[string]role{
		"command": rCommand, "args": rArgs, "env": rEnv, "cwd": rCwd,
	}},

	// Claude Code (https://code.claude.com/docs/en/mcp): type stdio,
	// http or sse; command, args, env; url, headers. "Environment
	// variable expansion in .mcp.json": ${VAR} and ${VAR:-default} in
	// command, args, env, url and headers, and a variable that is not set
	// and has no default makes the configuration fail to parse.
	// headersHelper names a command that prints headers; oauth a
	// registered OAuth client (clientId, callbackPort).
	KindClaudeCode: {kind: KindClaudeCode, fields: map[string]role{
		"type": rType, "command": rCommand, "args": rArgs, "env": rEnv, "cwd": rCwd,
		"url": rURL, "headers": rHeaders, "timeout": rIgnore,
		"headersHelper": rUnhonoured, "oauth": rUnhonoured,
	}, notes: map[string]string{
		"headersHelper": "runs a command to make the request headers; mcpx does not run it, so those headers are not sent",
		"oauth":         noteOAuthClient,
	}, syntax: synBraced | synDefault | unsetError},

	// VS Code (https://code.visualstudio.com/docs/copilot/reference/
	// mcp-configuration): type stdio with command, args, env, envFile;
	// type http or sse with url, headers and oauth (the clientId of a
	// registered OAuth client); dev, sandboxEnabled and sandbox. Strings take the predefined variables, ${env:NAME} and
	// ${input:ID} (https://code.visualstudio.com/docs/reference/
	// variables-reference).
	KindVSCode: {kind: KindVSCode, fields: map[string]role{
		"type": rType, "command": rCommand, "args": rArgs, "env": rEnv, "envFile": rEnvFile, "cwd": rCwd,
		"url": rURL, "headers": rHeaders, "dev": rIgnore, "sandbox": rIgnore, "gallery": rIgnore, "version": rIgnore,
		"sandboxEnabled": rUnhonoured, "oauth": rUnhonoured,
	}, notes: map[string]string{
		"sandboxEnabled": "asks for a sandbox; mcpx does not sandbox servers and starts this one without it",
		"oauth":          noteOAuthClient,
	}, syntax: synEnvPrefix | synInput | synEditor},

	// Cursor (https://cursor.com/docs/mcp): command, args, env, envFile
	// for stdio; url and headers for a remote server (type optional);
	// auth for a static OAuth client. "Config interpolation": ${env:NAME},
	// ${userHome}, ${workspaceFolder}, ${workspaceFolderBasename},
	// ${pathSeparator} and ${/}.
	KindCursor: {kind: KindCursor, fields: map[string]role{
		"type": rType, "command": rCommand, "args": rArgs, "env": rEnv, "envFile": rEnvFile, "cwd": rCwd,
		"url": rURL, "headers": rHeaders, "auth": rUnhonoured,
	}, notes: map[string]string{
		"auth": noteOAuthClient,
	}, syntax: synEnvPrefix | synEditor},

	// Windsurf (https://docs.windsurf.com/windsurf/cascade/mcp): command,
	// args, env; serverUrl or url with headers for a remote server;
	// disabled, disabledTools. "Config interpolation": ${env:VAR_NAME}
	// and ${file:/path} in command, args, env, serverUrl, url, headers.
	KindWindsurf: {kind: KindWindsurf, fields: map[string]role{
		"command": rCommand, "args": rArgs, "env": rEnv, "cwd": rCwd,
		"serverUrl": rServerURL, "url": rURL, "headers": rHeaders,
		"disabled": rDisabled, "disabledTools": rToolsDeny, "alwaysAllow": rIgnore,
	}, syntax: synEnvPrefix | synFile},

	// Codex CLI (https://developers.openai.com/codex/mcp): stdio servers
	// take command, args, env, env_vars, cwd; Streamable HTTP servers url,
	// bearer_token_env_var, http_headers, env_http_headers; both
	// startup_timeout_sec, tool_timeout_sec, enabled, required,
	// enabled_tools, disabled_tools and tool approval settings. Its
	// parser (codex-rs/config/src/mcp_types.rs, RawMcpServerConfig) also
	// takes supports_parallel_tool_calls, a legacy display name, and oauth
	// with the client_id of a registered OAuth client. No variable syntax: env_vars forwards variables (mcpx passes its whole
	// environment anyway), env_http_headers and bearer_token_env_var name
	// variables.
	KindCodex: {kind: KindCodex, fields: map[string]role{
		"command": rCommand, "args": rArgs, "env": rEnv, "cwd": rCwd, "env_vars": rIgnore,
		"url": rURL, "http_headers": rHeaders, "env_http_headers": rEnvHeaders, "bearer_token_env_var": rBearerEnv,
		"enabled": rEnabled, "required": rIgnore, "startup_timeout_sec": rStartupSec, "startup_timeout_ms": rStartupMS,
		"tool_timeout_sec": rTimeoutSec, "enabled_tools": rToolsAllow, "disabled_tools": rToolsDeny,
		"default_tools_approval_mode": rIgnore, "tools": rIgnore, "scopes": rIgnore, "oauth_resource": rIgnore,
		"experimental_environment": rIgnore, "supports_parallel_tool_calls": rIgnore, "name": rIgnore,
		"bearer_token": rUnhonoured, "oauth": rUnhonoured,
	}, notes: map[string]string{
		"bearer_token": "is refused by Codex, which takes the token from the variable named by bearer_token_env_var; not sent",
		"oauth":        noteOAuthClient,
	}},

	// Gemini CLI (docs/tools/mcp-server.md, "Configuration Properties"):
	// one of command (stdio), url or httpUrl (Streamable HTTP), chosen in
	// the order httpUrl, url, command; url's type is "http" or "sse",
	// and without one Streamable HTTP then HTTP+SSE (gemini mcp add
	// writes url with a type since 0.21); args, headers, env, cwd,
	// timeout, trust, includeTools, excludeTools, OAuth settings. String
	// values may use $VAR_NAME, ${VAR_NAME} (docs/cli/configuration.md,
	// "environment variables in settings") and, since 0.38,
	// ${VAR_NAME:-default} (packages/cli/src/utils/envVarResolver.ts);
	// Gemini CLI leaves an unset one without a default as written.
	// authProviderType other than dynamic_discovery (OAuth discovered
	// from the server, as mcpx does) signs in with Google credentials
	// (docs/tools/mcp-server.md, "Authentication provider type").
	KindGemini: {kind: KindGemini, fields: map[string]role{
		"type": rType, "command": rCommand, "args": rArgs, "env": rEnv, "cwd": rCwd,
		"url": rURL, "httpUrl": rHTTPURL, "headers": rHeaders,
		"timeout": rTimeoutMS, "trust": rIgnore, "includeTools": rToolsAllow, "excludeTools": rToolsDeny,
		"description": rIgnore, "oauth": rIgnore, "authProviderType": rUnhonoured, "targetAudience": rIgnore,
		"targetServiceAccount": rIgnore, "extensionName": rIgnore,
	}, notes: map[string]string{
		"authProviderType": "asks for Google credentials (Application Default Credentials or a service account), which mcpx does not use; it signs in with the server's own OAuth, if any",
	}, harmless: map[string]string{
		"authProviderType": "dynamic_discovery",
	}, syntax: synBraced | synDefault | synDollar | unsetKeep},

	// Zed (https://zed.dev/docs/ai/mcp, "As Custom Servers"): command,
	// args, env for a local server, url and headers for a remote one.
	// Older settings wrote "source": "custom", and before that command
	// as {path, args, env} (Zed's docs/src/ai/mcp.md at the time).
	KindZed: {kind: KindZed, fields: map[string]role{
		"command": rCommand, "args": rArgs, "env": rEnv, "cwd": rCwd, "url": rURL, "headers": rHeaders,
		"enabled": rEnabled, "source": rIgnore, "settings": rIgnore, "timeout": rIgnore,
	}},
}

// noteOAuthClient explains an entry's registered OAuth client (VS Code's
// and Claude Code's oauth.clientId, Codex's oauth.client_id, Cursor's
// auth.CLIENT_ID), which mcpx does not use: it registers a client of its
// own unless --client-id names one.
const noteOAuthClient = "names an OAuth client that mcpx does not take from the file; give its client ID with --client-id"

// entry is one server entry as read from a file, before normalisation:
// JSON decoded with numbers kept as json.Number, TOML as decoded.
type entry struct {
	name   string
	line   int
	keys   []string // in file order
	fields map[string]any
	lines  map[string]int // line of each field, when known
	// paths is the file of each field, when it is not the server's
	// Source (Codex's layers, merged).
	paths map[string]string
}

func (e *entry) lineOf(key string) int {
	if l, ok := e.lines[key]; ok && l > 0 {
		return l
	}
	return e.line
}

// build normalises e into a Server; a nil Server means the entry is
// skipped (the warnings say why).
func (d *dialect) build(src Source, e *entry) (*Server, []Warning) {
	var warns []Warning
	warn := func(key, format string, args ...any) {
		line, path := e.line, src.Path
		if key != "" {
			line = e.lineOf(key)
			if p := e.paths[key]; p != "" {
				path = p
			}
		}
		warns = append(warns, Warning{Path: path, Line: line, Server: e.name, Message: fmt.Sprintf(format, args...)})
	}
	s := &Server{Name: e.name, Source: src, Line: e.line, syntax: d.syntax, Hash: entryHash(d.kind, e)}

	var typ, url, httpURL, serverURL string
	for _, k := range e.keys {
		v := e.fields[k]
		r, known := d.fields[k]
		if !known {
			warn(k, "unknown field %q, ignored", k)
			continue
		}
		var ok bool
		switch r {
		case rIgnore:
			ok = true
		case rType:
			typ, ok = v.(string)
		case rCommand:
			if m, isMap := v.(map[string]any); isMap && d.kind == KindZed {
				ok = s.zedCommand(m, func(f string, a ...any) { warn(k, f, a...) })
				break
			}
			s.Command, ok = v.(string)
		case rArgs:
			s.Args, ok = stringList(v)
		case rEnv:
			s.Env, ok = stringMap(v)
		case rEnvFile:
			s.EnvFile, ok = v.(string)
		case rCwd:
			s.Cwd, ok = v.(string)
		case rURL:
			url, ok = v.(string)
		case rHTTPURL:
			httpURL, ok = v.(string)
		case rServerURL:
			serverURL, ok = v.(string)
		case rHeaders:
			s.Headers, ok = stringMap(v)
		case rDisabled:
			var b bool
			b, ok = v.(bool)
			s.Disabled = s.Disabled || b
		case rEnabled:
			var b bool
			if b, ok = v.(bool); ok { // a wrong type is ignored, not false
				s.Disabled = s.Disabled || !b
			}
		case rBearerEnv:
			s.BearerTokenEnv, ok = v.(string)
		case rEnvHeaders:
			s.EnvHeaders, ok = stringMap(v)
		case rTimeoutMS, rTimeoutSec:
			unit := time.Second
			if r == rTimeoutMS {
				unit = time.Millisecond
			}
			if s.Timeout, ok = duration(v, unit); ok && s.Timeout == 0 {
				warn(k, "%s is not a positive number, ignored", k)
			}
		case rToolsAllow, rToolsDeny:
			var list []string
			if list, ok = stringList(v); ok {
				s.filterList(d.kind, r == rToolsAllow, k, list)
			}
		case rStartupSec, rStartupMS:
			unit := time.Second
			if r == rStartupMS {
				unit = time.Millisecond
			}
			var t time.Duration
			t, ok = duration(v, unit)
			// 0 is a bound of no time, not no bound: Codex reads it as
			// Duration::ZERO (codex-rs/config/src/mcp_types.rs) and its
			// handshake times out before the server can answer
			// (tokio::time::timeout in codex-rs/rmcp-client/src/
			// rmcp_client.rs): the server never starts there.
			zero := ok && t == 0 && isZero(v)
			switch {
			case zero:
				warn(k, "%s is 0: %s gives up on the server at once, so it never starts there (mcpx uses it all the same)", k, appName(d.kind))
			case ok && t == 0:
				warn(k, "%s is not a positive number, ignored", k)
			}
			// Codex takes startup_timeout_sec over startup_timeout_ms
			// (codex-rs/config/src/mcp_types.rs, RawMcpServerConfig).
			if (t > 0 || zero) && (s.Startup == nil || r == rStartupSec) {
				s.Startup = &StartupLimit{App: appName(d.kind), Timeout: t, Field: k}
			}
		case rUnhonoured:
			ok = true
			if v != nil && v != false && v != "" && (d.harmless[k] == "" || v != d.harmless[k]) {
				warn(k, "%s %s", k, d.notes[k])
			}
		}
		if !ok {
			warn(k, "field %q has the wrong type (%s), ignored", k, describe(v))
		}
	}

	if d.kind == KindCodex && s.Startup == nil {
		s.Startup = &StartupLimit{App: appName(d.kind), Timeout: codexStartupDefault}
	}

	// The transport: an explicit type decides; otherwise the fields that
	// are there, each application's way.
	switch typ {
	case "":
	case "stdio":
		s.Transport = TransportStdio
	case "http", "streamable-http", "streamable_http", "streamableHttp":
		s.Transport = TransportHTTP
	case "sse":
		s.Transport = TransportSSE
	default:
		warn("type", "unknown type %q; skipped", typ)
		return nil, warns
	}
	if serverURL != "" {
		if url != "" && url != serverURL {
			warn("url", "has both serverUrl and url; serverUrl is used")
		}
		url = serverURL
	}
	if httpURL != "" && s.Transport != TransportStdio {
		// Gemini CLI: httpUrl wins over url, which wins over command.
		s.URL = httpURL
		if s.Transport == "" {
			s.Transport = TransportHTTP
		}
		if url != "" || s.Command != "" {
			warn("httpUrl", "has httpUrl and also url or command; httpUrl is used, as Gemini CLI does")
			s.Command = ""
		}
	} else if url != "" || httpURL != "" {
		if url == "" {
			url = httpURL
		}
		s.URL = url
	}

	switch {
	case s.Transport == TransportStdio:
		if s.Command == "" {
			warn("", "is a stdio server without a command; skipped")
			return nil, warns
		}
		if s.URL != "" {
			warn("", "is a stdio server; its URL is ignored")
			s.URL = ""
		}
	case s.Transport != "":
		if s.URL == "" {
			warn("", "is a %s server without a URL; skipped", s.Transport)
			return nil, warns
		}
		if s.Command != "" {
			warn("", "is a %s server; its command is ignored", s.Transport)
			s.Command = ""
		}
	case s.URL != "" && s.Command != "":
		if d.kind == KindGemini && httpURL == "" {
			// url wins over command; without a type, Gemini CLI tries
			// Streamable HTTP, then HTTP+SSE.
			s.Command = ""
			s.Transport = TransportAuto
			warn("url", "has url and command; url is used, as Gemini CLI does")
			break
		}
		warn("", "has both a command and a URL and no type to choose; skipped")
		return nil, warns
	case s.Command != "":
		s.Transport = TransportStdio
	case s.URL != "":
		// Gemini CLI too, whose docs still call url an SSE endpoint:
		// since 0.21 (mcp-client.ts, createUrlTransport) a url without a
		// type is Streamable HTTP, then HTTP+SSE when that fails.
		s.Transport = TransportAuto
	default:
		if d.kind == KindZed {
			if src, _ := e.fields["source"].(string); src == "extension" {
				warn("", "comes from a Zed extension, which holds its command; skipped")
				return nil, warns
			}
		}
		warn("", "has neither a command nor a URL; skipped")
		return nil, warns
	}

	if s.Transport == TransportStdio {
		for _, f := range []struct {
			set  bool
			name string
		}{{len(s.Headers) > 0, "headers"}, {len(s.EnvHeaders) > 0, "env_http_headers"}, {s.BearerTokenEnv != "", "bearer_token_env_var"}} {
			if f.set {
				warn("", "is a stdio server; its %s are ignored", f.name)
			}
		}
		s.Headers, s.EnvHeaders, s.BearerTokenEnv = nil, nil, ""
	} else {
		for _, f := range []struct {
			set  bool
			name string
		}{{len(s.Args) > 0, "args"}, {len(s.Env) > 0, "env"}, {s.EnvFile != "", "envFile"}, {s.Cwd != "", "cwd"}} {
			if f.set {
				warn("", "is an HTTP server; its %s is ignored", f.name)
			}
		}
		s.Args, s.Env, s.EnvFile, s.Cwd = nil, nil, "", ""
	}
	return s, warns
}

// filterList records the tool list of field, an allow list or a deny
// list, in s.Tools.
func (s *Server) filterList(k Kind, allow bool, field string, list []string) {
	if !allow && len(list) == 0 {
		return // hides nothing
	}
	if s.Tools == nil {
		s.Tools = &ToolFilter{App: appName(k), argSuffix: k == KindGemini}
	}
	if allow {
		s.Tools.Allow, s.Tools.AllowField = list, field
		return
	}
	s.Tools.Deny, s.Tools.DenyField = list, field
}

// zedCommand reads Zed's older command object {path, args, env}.
func (s *Server) zedCommand(m map[string]any, warn func(string, ...any)) bool {
	for _, k := range sortedKeys(m) {
		var ok bool
		switch k {
		case "path":
			s.Command, ok = m[k].(string)
		case "args":
			s.Args, ok = stringList(m[k])
		case "env":
			s.Env, ok = stringMap(m[k])
		default:
			warn("unknown field %q in command, ignored", k)
			ok = true
		}
		if !ok {
			warn("field %q of command has the wrong type (%s), ignored", k, describe(m[k]))
		}
	}
	return true
}

func stringList(v any) ([]string, bool) {
	switch l := v.(type) {
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	case []string:
		return slices.Clone(l), true
	}
	return nil, false
}

// stringMap reads an object of strings. Numbers and booleans are taken as
// their text, as the applications that pass env values to a process do.
func stringMap(v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		switch x := x.(type) {
		case string:
			out[k] = x
		case json.Number:
			out[k] = x.String()
		case bool, int64, float64:
			out[k] = fmt.Sprint(x)
		default:
			return nil, false
		}
	}
	return out, true
}

// duration reads v, a number of units, as a duration: 0 when it is not
// positive, at least a millisecond, at most a year (a larger one waits as
// long as none would); false when v is not a number.
func duration(v any, unit time.Duration) (time.Duration, bool) {
	var n float64
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, false
		}
		n = f
	case int64:
		n = float64(x)
	case float64:
		n = x
	default:
		return 0, false
	}
	const year = 365 * 24 * time.Hour
	switch {
	case !(n > 0): // (NaN too)
		return 0, true
	case n*float64(unit) >= float64(year):
		return year, true
	}
	return max(time.Duration(n*float64(unit)), time.Millisecond), true
}

// isZero reports whether v, a number as duration reads one, is zero.
func isZero(v any) bool {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	}
	return false
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// entryHash is the SHA-256 of the entry's kind, name and fields as
// canonical JSON (keys sorted, numbers as written), so that reformatting
// a file does not change it but any edit of the entry does.
func entryHash(k Kind, e *entry) string {
	b, err := json.Marshal(e.fields)
	if err != nil {
		// TOML values all marshal; fall back to the printed form.
		b = []byte(fmt.Sprintf("%#v", e.fields))
	}
	h := sha256.New()
	h.Write([]byte(k))
	h.Write([]byte{0})
	h.Write([]byte(e.name))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
