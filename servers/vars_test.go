package servers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func resolve(t *testing.T, env *Env, s *Server, ask AskFunc) *Launch {
	t.Helper()
	l, err := Resolve(context.Background(), env, s, ask)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// one loads files and looks ref up.
func one(t *testing.T, env *Env, ref string) *Server {
	t.Helper()
	c := load(t, env)
	s, err := c.Lookup(ref)
	if err != nil {
		t.Fatalf("%v (warnings %v)", err, c.Warnings)
	}
	return s
}

var testVars = map[string]string{
	"HOME": "/home/ada", "TOKEN": "t0k", "DB": "postgres://db", "ORG": "acme",
}

// Each application's variables, as its documentation defines them
// (formats.go cites it).
func TestVariables(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		file  string
		ref   string
		extra mapFS
		want  Launch
		// warns are the texts written like variables that the
		// application does not expand (Launch.Warnings).
		warns []string
	}{{
		name: "claude code: ${VAR} and ${VAR:-default}, nothing else",
		path: "/home/ada/proj/.mcp.json",
		file: `{"mcpServers": {"s": {"command": "${HOME}/bin/db", "args": ["${DB}", "${UNSET:-fallback}", "$HOME", "${env:TOKEN}", "${x%y}", "$${TOKEN}"],
		        "env": {"T": "${TOKEN}"}}}}`,
		want: Launch{Transport: TransportStdio, Command: "/home/ada/bin/db",
			Args: []string{"postgres://db", "fallback", "$HOME", "${env:TOKEN}", "${x%y}", "$t0k"}, Env: map[string]string{"T": "t0k"}},
		warns: []string{"args[3] has ${env:TOKEN}", "args[4] has ${x%y}"},
	}, {
		name: "claude code: headers and url",
		path: "/home/ada/.claude.json",
		file: `{"mcpServers": {"s": {"type": "http", "url": "https://${ORG}.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`,
		want: Launch{Transport: TransportHTTP, URL: "https://acme.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"}},
	}, {
		name: "vs code: ${env:}, predefined variables, envFile",
		path: "/home/ada/proj/.vscode/mcp.json",
		file: `{"servers": {"s": {"command": "${userHome}/bin/x", "args": ["${workspaceFolder}", "${workspaceFolderBasename}", "${env:TOKEN}",
		        "${env:UNSET}", "${TOKEN}", "a${/}b${pathSeparator}c"], "envFile": "${workspaceFolder}/.env", "env": {"B": "from env"}}}}`,
		extra: mapFS{"/home/ada/proj/.env": "A=from file\nB=overridden\n"},
		want: Launch{Transport: TransportStdio, Command: "/home/ada/bin/x",
			Args: []string{"/home/ada/proj", "proj", "t0k", "", "${TOKEN}", "a/b/c"},
			Env:  map[string]string{"A": "from file", "B": "from env"}},
		warns: []string{"args[4] has ${TOKEN}"},
	}, {
		name: "cursor: ${env:}, ${userHome}; no inputs",
		path: "/home/ada/.cursor/mcp.json",
		file: `{"mcpServers": {"s": {"url": "https://example.com/${env:ORG}", "headers": {"Authorization": "Bearer ${env:TOKEN}", "X": "${input:x} ${userHome}"}}}}`,
		want: Launch{Transport: TransportAuto, URL: "https://example.com/acme",
			Headers: map[string]string{"Authorization": "Bearer t0k", "X": "${input:x} /home/ada"}},
		warns: []string{"headers.X has ${input:x}"},
	}, {
		name:  "windsurf: ${env:} and ${file:}",
		path:  "/home/ada/.codeium/windsurf/mcp_config.json",
		file:  `{"mcpServers": {"s": {"serverUrl": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${file:~/.token}", "Org": "${env:ORG}"}}}}`,
		extra: mapFS{"/home/ada/.token": "from-file\n"},
		want: Launch{Transport: TransportAuto, URL: "https://example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer from-file", "Org": "acme"}},
	}, {
		name: "gemini: $VAR, ${VAR}, ${VAR:-default}; an unset one stays as written; relative cwd from the workspace",
		path: "/home/ada/.gemini/settings.json",
		file: `{"mcpServers": {"s": {"command": "python", "args": ["$DB", "${TOKEN}", "$UNSET", "${UNSET}", "$", "$1", "${UNSET:-https://d}", "${TOKEN:-d}"], "cwd": "./servers/py"}}}`,
		want: Launch{Transport: TransportStdio, Command: "python", Args: []string{"postgres://db", "t0k", "$UNSET", "${UNSET}", "$", "$1", "https://d", "t0k"},
			Cwd: "/home/ada/proj/servers/py"},
	}, {
		name: "codex: no interpolation; env_http_headers and bearer_token_env_var",
		path: "/home/ada/.codex/config.toml",
		file: `[mcp_servers.s]
url = "https://example.com/${ORG}"
bearer_token_env_var = "TOKEN"
http_headers = { "authorization" = "Basic old", "X-Static" = "${TOKEN}" }
env_http_headers = { "X-Org" = "ORG", "X-Unset" = "UNSET" }
`,
		want: Launch{Transport: TransportAuto, URL: "https://example.com/${ORG}",
			Headers: map[string]string{"Authorization": "Bearer t0k", "X-Static": "${TOKEN}", "X-Org": "acme"}},
	}, {
		name: "claude desktop and zed: no variables",
		path: "/home/ada/.config/zed/settings.json",
		file: `{"context_servers": {"s": {"command": "${HOME}/x", "args": ["$TOKEN", "${env:TOKEN}"]}}}`,
		want: Launch{Transport: TransportStdio, Command: "${HOME}/x", Args: []string{"$TOKEN", "${env:TOKEN}"}},
	}, {
		name: "mcpx: ~, ${VAR}, ${env:VAR}, defaults, relative cwd and envFile",
		path: "/home/ada/.config/mcpx/servers.json",
		file: `{"mcpServers": {"s": {"command": "~/bin/srv", "args": ["~", "a~b", "${TOKEN}", "${env:ORG}", "${UNSET:-d}", "${workspaceFolder}"],
		        "cwd": "sub", "envFile": "~/.srv.env", "env": {"K": "${DB}"}}}}`,
		extra: mapFS{"/home/ada/.srv.env": "# srv\nexport F='raw $x'\n"},
		want: Launch{Transport: TransportStdio, Command: "/home/ada/bin/srv",
			Args: []string{"/home/ada", "a~b", "t0k", "acme", "d", "/home/ada/proj"},
			Cwd:  "/home/ada/proj/sub", Env: map[string]string{"F": "raw $x", "K": "postgres://db"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := mapFS{tt.path: tt.file}
			for k, v := range tt.extra {
				files[k] = v
			}
			env := linuxEnv(files, testVars)
			l := resolve(t, env, one(t, env, "s"), nil)
			var warns []string
			for _, w := range l.Warnings {
				if w.Path != tt.path || w.Server != "s" {
					t.Errorf("warning %q is not of %s, server s", w, tt.path)
				}
				msg, _, _ := strings.Cut(w.Message, ",")
				warns = append(warns, msg)
			}
			if strings.Join(warns, "\n") != strings.Join(tt.warns, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(tt.warns, "\n"))
			}
			l.Warnings = nil
			diff(t, &tt.want, l)
		})
	}
}

// Text written like a variable that the application does not expand is
// passed as written, as the application passes it, with a warning that
// names the file, the entry, the field and the text (it was passed
// silently: a mistyped ${env:TOKEN} reached the server as written).
func TestVariablesNotExpanded(t *testing.T) {
	files := mapFS{
		"/home/ada/.config/mcpx/servers.json": `{"mcpServers": {
  "own": {"command": "x", "args": ["${foo:bar}", "${HOME:0:3}", "${env:}", "${unclosed"], "env": {"T": "${TOKEN}"}}}}`,
		"/home/ada/proj/.vscode/mcp.json": `{"servers": {"vs": {"type": "http", "url": "https://example.com", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`,
	}
	env := linuxEnv(files, testVars)
	l := resolve(t, env, one(t, env, "own"), nil)
	if want := []string{"x", "${foo:bar}", "${HOME:0:3}", "${env:}", "${unclosed"}; strings.Join(append([]string{l.Command}, l.Args...), " ") != strings.Join(want, " ") {
		t.Errorf("command %q %q, want %q", l.Command, l.Args, want)
	}
	var got []string
	for _, w := range l.Warnings {
		got = append(got, w.String())
	}
	forms := "${NAME}, ${NAME:-default}, ${env:NAME}, ${input:ID}, ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${pathSeparator}"
	want := []string{
		`/home/ada/.config/mcpx/servers.json:2: server "own": args[0] has ${foo:bar}, which is not a variable mcpx expands (` + forms + `); it is passed as written`,
		`/home/ada/.config/mcpx/servers.json:2: server "own": args[1] has ${HOME:0:3}, which is not a variable mcpx expands (` + forms + `); it is passed as written`,
		`/home/ada/.config/mcpx/servers.json:2: server "own": args[2] has ${env:}, which is not a variable mcpx expands (` + forms + `); it is passed as written`,
		`/home/ada/.config/mcpx/servers.json:2: server "own": args[3] has ${unclosed without its closing }; it is passed as written`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	l = resolve(t, env, one(t, env, "vs"), nil)
	if len(l.Warnings) != 1 || l.Headers["Authorization"] != "Bearer ${TOKEN}" ||
		l.Warnings[0].String() != `/home/ada/proj/.vscode/mcp.json:1: server "vs": headers.Authorization has ${TOKEN}, which is not a variable vscode expands (${env:NAME}, ${input:ID}, ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${pathSeparator}); it is passed as written` {
		t.Errorf("headers %v, warnings %v", l.Headers, l.Warnings)
	}

	// What lists the variables an entry takes from the machine does not
	// warn; an application without variables has nothing to warn of.
	if s := one(t, env, "vs"); len(s.Expansions()) != 0 {
		t.Errorf("expansions %v", s.Expansions())
	}
}

// A variable set to "" is set: it expands to "" where each application
// would refuse an unset one (Claude Code, mcpx), take its default (Claude
// Code's ${VAR:-default}) or leave it as written (Gemini CLI). Codex
// alone refuses an empty bearer_token_env_var, and sends no
// env_http_headers header for an empty variable, as it does.
func TestEmptyVariables(t *testing.T) {
	vars := map[string]string{"EMPTY": "", "TOKEN": "t0k"}
	for _, tt := range []struct {
		name, path, file string
		want             Launch
	}{{
		name: "claude code",
		path: "/home/ada/proj/.mcp.json",
		file: `{"mcpServers": {"s": {"command": "x", "args": ["a${EMPTY}b", "${EMPTY:-default}"], "env": {"E": "${EMPTY}"}}}}`,
		want: Launch{Transport: TransportStdio, Command: "x", Args: []string{"ab", ""}, Env: map[string]string{"E": ""}},
	}, {
		name: "mcpx",
		path: "/home/ada/.config/mcpx/servers.json",
		file: `{"mcpServers": {"s": {"command": "x", "args": ["${env:EMPTY}", "${EMPTY}", "${EMPTY:-default}"]}}}`,
		want: Launch{Transport: TransportStdio, Command: "x", Args: []string{"", "", ""}},
	}, {
		name: "gemini",
		path: "/home/ada/.gemini/settings.json",
		file: `{"mcpServers": {"s": {"command": "x", "args": ["A=$EMPTY", "B=${EMPTY}", "C=$UNSET"], "env": {"FOO": "$EMPTY"}}}}`,
		want: Launch{Transport: TransportStdio, Command: "x", Args: []string{"A=", "B=", "C=$UNSET"}, Env: map[string]string{"FOO": ""}},
	}, {
		name: "vs code",
		path: "/home/ada/proj/.vscode/mcp.json",
		file: `{"servers": {"s": {"command": "x", "args": ["${env:EMPTY}"]}}}`,
		want: Launch{Transport: TransportStdio, Command: "x", Args: []string{""}},
	}, {
		name: "codex: env_http_headers",
		path: "/home/ada/.codex/config.toml",
		file: "[mcp_servers.s]\nurl = \"https://x\"\nenv_http_headers = { \"X-Empty\" = \"EMPTY\", \"X-Token\" = \"TOKEN\" }\n",
		want: Launch{Transport: TransportAuto, URL: "https://x", Headers: map[string]string{"X-Token": "t0k"}},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			env := linuxEnv(mapFS{tt.path: tt.file}, vars)
			diff(t, &tt.want, resolve(t, env, one(t, env, "s"), nil))
		})
	}
	env := linuxEnv(mapFS{"/home/ada/.codex/config.toml": "[mcp_servers.s]\nurl = \"https://x\"\nbearer_token_env_var = \"EMPTY\"\n"}, vars)
	_, err := Resolve(context.Background(), env, one(t, env, "s"), nil)
	var e *UnsetVariableError
	if !errors.As(err, &e) || !e.Empty || !strings.Contains(err.Error(), "bearer_token_env_var uses EMPTY, which is set but empty") {
		t.Errorf("codex: empty bearer_token_env_var: %v", err)
	}
}

func TestInputs(t *testing.T) {
	file := `{
  "inputs": [
    {"type": "promptString", "id": "key", "description": "API key", "password": true},
    {"type": "promptString", "id": "region", "description": "Region", "default": "eu"},
    {"type": "pickString", "id": "tier", "description": "Tier", "options": ["free", {"label": "Paid", "value": "paid"}]},
    {"type": "command", "id": "picked", "command": "extension.pick"}
  ],
  "servers": {
    "s": {"command": "srv", "args": ["${input:key}", "${input:region}", "${input:tier}"], "env": {"KEY": "${input:key}"}},
    "cmd": {"command": "srv", "args": ["${input:picked}"]},
    "undeclared": {"command": "srv", "args": ["${input:other}"]}
  }
}`
	env := linuxEnv(mapFS{"/home/ada/proj/.vscode/mcp.json": file}, nil)
	c := load(t, env)
	s, _ := c.Lookup("s")

	var asked []Input
	ask := func(_ context.Context, in Input) (string, error) {
		asked = append(asked, in)
		switch in.ID {
		case "key":
			return "s3cret", nil
		case "tier":
			return "paid", nil
		}
		return "", nil // the default
	}
	l := resolve(t, env, s, ask)
	diff(t, []string{"s3cret", "eu", "paid"}, l.Args)
	diff(t, map[string]string{"KEY": "s3cret"}, l.Env)
	src := s.Source
	diff(t, []Input{
		{ID: "key", Description: "API key", Password: true, Server: "s", Source: src},
		{ID: "region", Description: "Region", Default: "eu", Server: "s", Source: src},
		{ID: "tier", Description: "Tier", Options: []string{"free", "paid"}, Server: "s", Source: src},
	}, asked) // key asked once for two uses

	// No way to ask: an error that names the input and its description,
	// and nothing about flags.
	for _, ask := range []AskFunc{nil, func(context.Context, Input) (string, error) { return "", fmt.Errorf("no terminal: %w", ErrNoInput) }} {
		_, err := Resolve(context.Background(), env, s, ask)
		var mi *MissingInputError
		if !errors.As(err, &mi) || mi.Input.ID != "key" {
			t.Fatalf("error %v", err)
		}
		if msg := err.Error(); !strings.Contains(msg, `needs the input "key" (API key)`) || strings.Contains(msg, "--") {
			t.Errorf("message %q", msg)
		}
	}
	// Another error of the asker (an interrupt) is passed on.
	stop := errors.New("interrupted")
	if _, err := Resolve(context.Background(), env, s, func(context.Context, Input) (string, error) { return "", stop }); !errors.Is(err, stop) {
		t.Errorf("error %v", err)
	}

	cmd, _ := c.Lookup("cmd")
	var ue *UnsupportedVariableError
	if _, err := Resolve(context.Background(), env, cmd, ask); !errors.As(err, &ue) {
		t.Errorf("command input: error %v", err)
	}
	und, _ := c.Lookup("undeclared")
	asked = nil
	resolve(t, env, und, ask)
	diff(t, []Input{{ID: "other", Server: "undeclared", Source: src}}, asked)
}

func TestVariableErrors(t *testing.T) {
	tests := []struct {
		name, path, file string
		check            func(error) bool
		msg              string
	}{{
		name: "claude code: unset without default",
		path: "/home/ada/proj/.mcp.json",
		file: `{"mcpServers": {"s": {"command": "x", "args": ["a", "${API_KEY}"]}}}`,
		check: func(err error) bool {
			var e *UnsetVariableError
			return errors.As(err, &e) && e.Variable == "${API_KEY}"
		},
		msg: `server "s" (claude-code-project (/home/ada/proj/.mcp.json)): args[1] uses ${API_KEY}, which is not set in the environment`,
	}, {
		name:  "mcpx: unset ${env:}",
		path:  "/home/ada/.config/mcpx/servers.json",
		file:  `{"mcpServers": {"s": {"url": "https://x", "headers": {"A": "${env:API_KEY}"}}}}`,
		check: func(err error) bool { var e *UnsetVariableError; return errors.As(err, &e) && e.Field == "headers.A" },
	}, {
		name: "codex: unset bearer_token_env_var",
		path: "/home/ada/.codex/config.toml",
		file: "[mcp_servers.s]\nurl = \"https://x\"\nbearer_token_env_var = \"API_KEY\"\n",
		check: func(err error) bool {
			var e *UnsetVariableError
			return errors.As(err, &e) && e.Field == "bearer_token_env_var"
		},
	}, {
		name: "vs code: an editor variable",
		path: "/home/ada/proj/.vscode/mcp.json",
		file: `{"servers": {"s": {"command": "x", "args": ["${file}"]}}}`,
		check: func(err error) bool {
			var e *UnsupportedVariableError
			return errors.As(err, &e) && e.Variable == "${file}"
		},
		msg: "args[0] uses ${file}, which only the editor can resolve",
	}, {
		name:  "vs code: ${config:}",
		path:  "/home/ada/proj/.vscode/mcp.json",
		file:  `{"servers": {"s": {"command": "x", "env": {"A": "${config:editor.fontSize}"}}}}`,
		check: func(err error) bool { var e *UnsupportedVariableError; return errors.As(err, &e) },
	}, {
		name:  "vs code: envFile missing",
		path:  "/home/ada/proj/.vscode/mcp.json",
		file:  `{"servers": {"s": {"command": "x", "envFile": ".env"}}}`,
		check: func(err error) bool { return err != nil },
		msg:   "envFile /home/ada/proj/.env: file does not exist",
	}, {
		name:  "windsurf: ${file:} missing",
		path:  "/home/ada/.codeium/windsurf/mcp_config.json",
		file:  `{"mcpServers": {"s": {"command": "x", "args": ["${file:/nope}"]}}}`,
		check: func(err error) bool { return err != nil },
		msg:   "args[0] reads /nope",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := linuxEnv(mapFS{tt.path: tt.file}, nil)
			_, err := Resolve(context.Background(), env, one(t, env, "s"), nil)
			if !tt.check(err) {
				t.Fatalf("error %v", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("message %q, want %q in it", err, tt.msg)
			}
		})
	}
}

// The expander never panics and leaves text without '$' alone.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-b}", "$A", "${env:A}", "${input:x}", "${file:/x}", "${", "$", "${}", "${:-}", "a$", "${workspaceFolder}", "${command:x}", "~/x", "${A:-${B}}"} {
		f.Add(s)
	}
	all := synBraced | synDefault | synEnvPrefix | synDollar | synInput | synEditor | synFile | synTilde
	f.Fuzz(func(t *testing.T, v string) {
		env := linuxEnv(mapFS{"/x": "file"}, map[string]string{"A": "a", "B": "b"})
		for _, syn := range []syntax{all, all | unsetError, all | unsetKeep, synBraced | synDefault | unsetError} {
			s := &Server{Name: "s", syntax: syn}
			x := &expander{ctx: context.Background(), env: env, s: s, answers: map[string]string{},
				ask: func(context.Context, Input) (string, error) { return "in", nil }}
			out, err := x.expand("f", v, true)
			if !strings.ContainsAny(v, "$~") && (err != nil || out != v) {
				t.Fatalf("%q became %q, %v", v, out, err)
			}
		}
	})
}

// Expansions lists, without reading anything, what each application's
// syntax would take from the machine into a server at a URL; ${input:}
// (typed by the person), text that is no variable of the syntax, and a
// file without variables list nothing. NeedsTrust follows: such a server
// from a file mcpx did not write needs the person's confirmation.
func TestExpansions(t *testing.T) {
	tests := []struct {
		name, path, file string
		want             []Expansion
	}{{
		name: "claude code project",
		path: "/home/ada/proj/.mcp.json",
		file: `{"mcpServers": {"s": {"type": "http", "url": "https://${ORG:-x}.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "X": "${env:NO}"}}}}`,
		want: []Expansion{{"url", "${ORG:-x}"}, {"headers.Authorization", "${TOKEN}"}},
	}, {
		name: "vs code project: ${env:}, predefined variables; ${input:} is typed",
		path: "/home/ada/proj/.vscode/mcp.json",
		file: `{"servers": {"s": {"type": "http", "url": "https://example.com/${workspaceFolderBasename}${/}", "headers": {"A": "${input:k}", "B": "${env:TOKEN}", "C": "${config:x}"}}}}`,
		want: []Expansion{{"url", "${workspaceFolderBasename}"}, {"headers.B", "${env:TOKEN}"}},
	}, {
		name: "windsurf: ${file:}",
		path: "/home/ada/.codeium/windsurf/mcp_config.json",
		file: `{"mcpServers": {"s": {"serverUrl": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${file:~/.token}"}}}}`,
		want: []Expansion{{"headers.Authorization", "${file:~/.token}"}},
	}, {
		name: "gemini project: $VAR",
		path: "/home/ada/proj/.gemini/settings.json",
		file: `{"mcpServers": {"s": {"httpUrl": "https://example.com/mcp?u=$USER"}}}`,
		want: []Expansion{{"url", "$USER"}},
	}, {
		name: "codex project: variables named by fields",
		path: "/home/ada/proj/.codex/config.toml",
		file: "[mcp_servers.s]\nurl = \"https://example.com/${ORG}\"\nbearer_token_env_var = \"TOKEN\"\nenv_http_headers = { \"X-Org\" = \"ORG\" }\n",
		want: []Expansion{{"env_http_headers.X-Org", "$ORG"}, {"bearer_token_env_var", "$TOKEN"}},
	}, {
		name: "zed project: no variables",
		path: "/home/ada/proj/.zed/settings.json",
		file: `{"context_servers": {"s": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`,
	}, {
		name: "cursor project: nothing to expand",
		path: "/home/ada/proj/.cursor/mcp.json",
		file: `{"mcpServers": {"s": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer written-here"}}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := 0
			// Codex reads a project's layer in a trusted project only.
			env := linuxEnv(mapFS{tt.path: tt.file, "/home/ada/.codex/config.toml": "[projects.\"/home/ada/proj\"]\ntrust_level = \"trusted\"\n"}, nil)
			env.LookupEnv = func(string) (string, bool) { read++; return "", false }
			c := load(t, env)
			read = 0
			s, err := c.Lookup("s")
			if err != nil {
				t.Fatal(err)
			}
			diff(t, tt.want, s.Expansions())
			if read != 0 {
				t.Errorf("Expansions read %d variables", read)
			}
			if s.NeedsTrust() != (len(tt.want) > 0) {
				t.Errorf("NeedsTrust %v with expansions %v", s.NeedsTrust(), tt.want)
			}
		})
	}
	// mcpx's own file needs no trust, expansions or not.
	own := "/home/ada/.config/mcpx/servers.json"
	env := linuxEnv(mapFS{own: `{"mcpServers": {"s": {"url": "https://example.com/mcp", "headers": {"A": "${env:TOKEN}"}}}}`}, nil)
	if s := one(t, env, "s"); len(s.Expansions()) != 1 || s.NeedsTrust() {
		t.Errorf("mcpx's own entry: expansions %v, NeedsTrust %v", s.Expansions(), s.NeedsTrust())
	}
}
