package servers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// syntax is the set of variable forms an application expands in its
// server definitions, and what it does with an unset variable.
type syntax uint16

const (
	// synBraced is ${NAME}: an environment variable.
	synBraced syntax = 1 << iota
	// synDefault is ${NAME:-default}: the default when NAME is unset.
	synDefault
	// synEnvPrefix is ${env:NAME}.
	synEnvPrefix
	// synDollar is $NAME.
	synDollar
	// synInput is ${input:ID}: a value asked for.
	synInput
	// synEditor is VS Code's predefined variables that have a meaning
	// outside the editor: ${workspaceFolder}, ${workspaceFolderBasename},
	// ${userHome}, ${pathSeparator}, ${/}. The others (${file},
	// ${config:…}, ${command:…}…) are errors.
	synEditor
	// synFile is Windsurf's ${file:PATH}: the content of a file.
	synFile
	// synTilde is a leading ~ in command, args, cwd and envFile: the home
	// directory.
	synTilde
	// unsetError makes an unset variable an error; else it expands to "".
	unsetError
	// unsetKeep leaves an unset variable as written.
	unsetKeep
)

// editorVariables are VS Code's predefined variables that only mean
// something inside the editor (an open file, a selection, a setting, a
// command); a definition that uses one cannot be resolved outside it.
var editorVariables = []string{
	"file", "fileWorkspaceFolder", "relativeFile", "relativeFileDirname", "fileBasename",
	"fileBasenameNoExtension", "fileExtname", "fileDirname", "fileDirnameBasename", "cwd",
	"lineNumber", "columnNumber", "selectedText", "execPath", "defaultBuildTask", "workspaceRoot",
}

// ErrNoInput is what an AskFunc returns (wrapped or not) when it has no
// way to obtain a value: no terminal, and none given beforehand. Resolve
// turns it into a *MissingInputError.
var ErrNoInput = errors.New("no value for the input")

// AskFunc obtains the value of an input (${input:ID}): from the person, or
// from values given beforehand. It returns ErrNoInput when it cannot.
type AskFunc func(ctx context.Context, in Input) (string, error)

// MissingInputError is Resolve's error when a definition needs an input
// and none was given.
type MissingInputError struct {
	Input Input
}

func (e *MissingInputError) Error() string {
	desc := ""
	if e.Input.Description != "" {
		desc = fmt.Sprintf(" (%s)", e.Input.Description)
	}
	return fmt.Sprintf("server %q (%s) needs the input %q%s, and no value was given", e.Input.Server, e.Input.Source, e.Input.ID, desc)
}

// UnsetVariableError is Resolve's error for an environment variable that
// the definition needs and that is not set, where its application treats
// that as an error (Claude Code, Codex's bearer_token_env_var, mcpx).
type UnsetVariableError struct {
	Variable string // as written: ${TOKEN}, bearer_token_env_var TOKEN…
	Server   string
	Source   Source
	Field    string // where: "args[1]", "env.API_KEY", "headers.Authorization"
	// Empty is for a variable set to "", which Codex refuses for its
	// bearer_token_env_var as it refuses an unset one.
	Empty bool
}

func (e *UnsetVariableError) Error() string {
	if e.Empty {
		return fmt.Sprintf("server %q (%s): %s uses %s, which is set but empty", e.Server, e.Source, e.Field, e.Variable)
	}
	return fmt.Sprintf("server %q (%s): %s uses %s, which is not set in the environment", e.Server, e.Source, e.Field, e.Variable)
}

// UnsupportedVariableError is Resolve's error for a variable that only its
// application can resolve: VS Code's ${command:…}, ${config:…}, ${file}…
type UnsupportedVariableError struct {
	Variable string
	Server   string
	Source   Source
	Field    string
}

func (e *UnsupportedVariableError) Error() string {
	return fmt.Sprintf("server %q (%s): %s uses %s, which only the editor can resolve", e.Server, e.Source, e.Field, e.Variable)
}

// Launch is a server ready to connect to: every variable expanded, the
// envFile loaded, relative paths made absolute.
type Launch struct {
	Transport Transport
	Command   string
	Args      []string
	// Env is added to mcpx's own environment (envFile first, then the
	// entry's env, which wins).
	Env map[string]string
	// Cwd is "" for mcpx's working directory.
	Cwd     string
	URL     string
	Headers map[string]string
	// Warnings are what does not stop the server but is likely a mistake:
	// text written like a variable (${foo:bar}, ${TOKEN} in VS Code's
	// file) that the entry's application does not expand, and which is
	// passed as written, as the application would.
	Warnings []Warning
}

// Resolve expands s's variables as its application defines them, loads
// its envFile, and makes its relative cwd absolute (from its project
// directory, Source.Workspace, or env.Workspace for a user file; a Codex
// server's from env.Dir, where Codex would run: see absCwd).
// Inputs (${input:ID}) are obtained through ask, once each; a nil ask, or
// one that returns ErrNoInput, makes a *MissingInputError. Other errors
// are *UnsetVariableError, *UnsupportedVariableError, or a file that
// cannot be read.
func Resolve(ctx context.Context, env *Env, s *Server, ask AskFunc) (*Launch, error) {
	l := &Launch{Transport: s.Transport}
	x := &expander{ctx: ctx, env: env, s: s, ask: ask, answers: map[string]string{}, launch: l}
	var err error
	if l.Command, err = x.expand("command", s.Command, true); err != nil {
		return nil, err
	}
	for i, a := range s.Args {
		v, err := x.expand(fmt.Sprintf("args[%d]", i), a, true)
		if err != nil {
			return nil, err
		}
		l.Args = append(l.Args, v)
	}
	if s.EnvFile != "" {
		p, err := x.expand("envFile", s.EnvFile, true)
		if err != nil {
			return nil, err
		}
		p = x.abs(p)
		data, err := readValueFile(ctx, env, p)
		if err != nil {
			return nil, fmt.Errorf("server %q (%s): envFile %s: %w", s.Name, s.Source, p, bareErr(err))
		}
		vars, err := ParseEnvFile(data)
		if err != nil {
			return nil, fmt.Errorf("server %q (%s): envFile %s: %w", s.Name, s.Source, p, err)
		}
		l.Env = vars
	}
	for _, k := range sortedKeys(s.Env) {
		v, err := x.expand("env."+k, s.Env[k], false)
		if err != nil {
			return nil, err
		}
		if l.Env == nil {
			l.Env = map[string]string{}
		}
		l.Env[k] = v
	}
	if s.Cwd != "" {
		c, err := x.expand("cwd", s.Cwd, true)
		if err != nil {
			return nil, err
		}
		l.Cwd = x.absCwd(c)
	}
	if l.URL, err = x.expand("url", s.URL, false); err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(s.Headers) {
		v, err := x.expand("headers."+k, s.Headers[k], false)
		if err != nil {
			return nil, err
		}
		if l.Headers == nil {
			l.Headers = map[string]string{}
		}
		l.Headers[k] = v
	}
	// Codex: env_http_headers are sent when their variable is set and
	// not empty; bearer_token_env_var must be set and not empty. They
	// replace a static header of the same name, whatever its case.
	setHeader := func(name, value string) {
		if l.Headers == nil {
			l.Headers = map[string]string{}
		}
		maps.DeleteFunc(l.Headers, func(k, _ string) bool { return strings.EqualFold(k, name) })
		l.Headers[name] = value
	}
	for _, h := range sortedKeys(s.EnvHeaders) {
		if v := env.getenv(s.EnvHeaders[h]); v != "" {
			setHeader(h, v)
		}
	}
	if s.BearerTokenEnv != "" {
		v, set := env.lookupEnv(s.BearerTokenEnv)
		if v == "" {
			return nil, &UnsetVariableError{Variable: s.BearerTokenEnv, Server: s.Name, Source: s.Source, Field: "bearer_token_env_var", Empty: set}
		}
		setHeader("Authorization", "Bearer "+v)
	}
	return l, nil
}

type expander struct {
	ctx     context.Context
	env     *Env
	s       *Server
	ask     AskFunc
	answers map[string]string
	// seen, when set, makes a dry run (Expansions): the variables that
	// read the machine are reported to it instead of being read, and
	// nothing is asked, read or refused.
	seen func(field, variable string)
	// launch gets the warnings (none in a dry run).
	launch *Launch
}

// notExpanded warns of text written like a variable, ${…}, that the
// entry's application does not expand (it is passed as written, as the
// application passes it): a mistyped or foreign form, such as ${foo:bar},
// ${HOME:0:3} or VS Code's ${env:NAME} in Claude Code's file, would
// otherwise reach the server unnoticed.
func (x *expander) notExpanded(field, text string) {
	if x.launch == nil || x.s.syntax&synBracedForms == 0 {
		return
	}
	what := fmt.Sprintf("%s has %s, which is not a variable %s expands (%s)", field, text, x.s.Source.Kind, x.s.syntax.forms())
	if !strings.HasSuffix(text, "}") {
		what = fmt.Sprintf("%s has %s without its closing }", field, text)
	}
	x.launch.Warnings = append(x.launch.Warnings, Warning{Path: x.s.Source.Path, Line: x.s.Line, Server: x.s.Name,
		Message: what + "; it is passed as written"})
}

// synBracedForms are the syntaxes of ${…} forms.
const synBracedForms = synBraced | synDefault | synEnvPrefix | synInput | synEditor | synFile

// forms lists the variable forms of syn, for a message.
func (syn syntax) forms() string {
	var f []string
	for _, c := range []struct {
		s    syntax
		form string
	}{
		{synBraced, "${NAME}"}, {synDefault, "${NAME:-default}"}, {synEnvPrefix, "${env:NAME}"}, {synDollar, "$NAME"},
		{synInput, "${input:ID}"}, {synFile, "${file:PATH}"},
		{synEditor, "${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${pathSeparator}"},
	} {
		if syn&c.s != 0 {
			f = append(f, c.form)
		}
	}
	return strings.Join(f, ", ")
}

// Expansion is a value that Resolve takes from this machine rather than
// from the entry's file: an environment variable, a file's content, or a
// path of the machine (${userHome}, ${workspaceFolder}). ${input:ID} is
// not one: the person types it.
type Expansion struct {
	// Field is where it is used: "url", "headers.Authorization",
	// "args[1]", "env_http_headers.X-Api-Key", "bearer_token_env_var"…
	Field string
	// Variable is as written (${env:TOKEN}, $HOME, ${file:~/.token}); for
	// Codex's fields that name a variable, $NAME.
	Variable string
}

// Expansions lists what Resolve would take from this machine into s, in
// the order Resolve expands the fields, without reading or asking for
// anything. A server at a URL that has any sends those values to its URL,
// which is why such an entry needs trust (NeedsTrust). The envFile of a
// stdio entry is not listed: it is a file, given as EnvFile.
func (s *Server) Expansions() []Expansion {
	var out []Expansion
	x := &expander{ctx: context.Background(), env: &Env{}, s: s, answers: map[string]string{},
		seen: func(field, variable string) { out = append(out, Expansion{Field: field, Variable: variable}) }}
	// A dry run returns no error: nothing is looked up.
	_, _ = x.expand("command", s.Command, false)
	for i, a := range s.Args {
		_, _ = x.expand(fmt.Sprintf("args[%d]", i), a, false)
	}
	_, _ = x.expand("envFile", s.EnvFile, false)
	for _, k := range sortedKeys(s.Env) {
		_, _ = x.expand("env."+k, s.Env[k], false)
	}
	_, _ = x.expand("cwd", s.Cwd, false)
	_, _ = x.expand("url", s.URL, false)
	for _, k := range sortedKeys(s.Headers) {
		_, _ = x.expand("headers."+k, s.Headers[k], false)
	}
	for _, h := range sortedKeys(s.EnvHeaders) {
		out = append(out, Expansion{Field: "env_http_headers." + h, Variable: "$" + s.EnvHeaders[h]})
	}
	if s.BearerTokenEnv != "" {
		out = append(out, Expansion{Field: "bearer_token_env_var", Variable: "$" + s.BearerTokenEnv})
	}
	return out
}

// workspace is the project directory of the server: the one its file
// belongs to, for a project file or Claude Code's local scope, else the
// project mcpx runs in.
func (x *expander) workspace() string {
	if x.s.Source.Workspace != "" {
		return x.s.Source.Workspace
	}
	return x.env.Workspace
}

// abs makes a relative path absolute from the workspace.
func (x *expander) abs(p string) string {
	if p == "" || x.env.isAbs(p) || x.workspace() == "" {
		return p
	}
	return x.env.join(x.workspace(), p)
}

// absCwd makes a relative cwd absolute: from the workspace (abs), but a
// Codex server's from the directory Codex would run in, the working
// directory (Env.Dir), whichever of its layers set it. Codex hands cwd
// to the process it starts as written (a PathBuf, which its config
// loader leaves relative: only AbsolutePathBuf fields are resolved
// against a layer's directory, codex-rs/config/src/loader/mod.rs,
// resolve_relative_paths_in_config_toml), and Command::current_dir takes
// a relative one from Codex's own working directory
// (codex-rs/rmcp-client/src/stdio_server_launcher.rs).
func (x *expander) absCwd(p string) string {
	if x.s.Source.Kind != KindCodex {
		return x.abs(p)
	}
	dir := x.env.Dir
	if dir == "" {
		dir = x.env.Workspace
	}
	if p == "" || x.env.isAbs(p) || dir == "" {
		return p
	}
	return x.env.join(dir, p)
}

// expand expands the variables of the value of field; path says the value
// is a command or path, where a leading ~ may mean the home directory.
func (x *expander) expand(field, v string, path bool) (string, error) {
	syn := x.s.syntax
	if path && syn&synTilde != 0 && x.env.Home != "" {
		if v == "~" {
			v = x.env.Home
		} else if rest, ok := strings.CutPrefix(v, "~/"); ok {
			v = x.env.join(x.env.Home, rest)
		} else if rest, ok := strings.CutPrefix(v, `~\`); ok && x.env.windows() {
			v = x.env.join(x.env.Home, rest)
		}
	}
	if !strings.Contains(v, "$") {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); {
		c := v[i]
		if c != '$' || i+1 >= len(v) {
			b.WriteByte(c)
			i++
			continue
		}
		if v[i+1] == '{' {
			end := strings.IndexByte(v[i+2:], '}')
			if end < 0 {
				x.notExpanded(field, v[i:])
				b.WriteString(v[i:])
				break
			}
			whole := v[i : i+2+end+1]
			val, handled, err := x.braced(field, v[i+2:i+2+end], whole)
			if err != nil {
				return "", err
			}
			if handled {
				b.WriteString(val)
			} else {
				x.notExpanded(field, whole)
				b.WriteString(whole)
			}
			i += len(whole)
			continue
		}
		if syn&synDollar != 0 {
			if n := identLen(v[i+1:]); n > 0 {
				name := v[i+1 : i+1+n]
				val, err := x.lookup(field, name, "$"+name, nil)
				if err != nil {
					return "", err
				}
				b.WriteString(val)
				i += 1 + n
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

// braced expands ${inner}; handled is false for text that is not a
// variable of this syntax, which stays as written.
func (x *expander) braced(field, inner, whole string) (val string, handled bool, err error) {
	syn := x.s.syntax
	unsupported := func() (string, bool, error) {
		if x.seen != nil {
			return "", true, nil
		}
		return "", false, &UnsupportedVariableError{Variable: whole, Server: x.s.Name, Source: x.s.Source, Field: field}
	}
	machine := func(v string) (string, bool, error) { // a path of this machine
		if x.seen != nil {
			x.seen(field, whole)
		}
		return v, true, nil
	}
	switch {
	case syn&synEnvPrefix != 0 && strings.HasPrefix(inner, "env:"):
		name := inner[len("env:"):]
		if identLen(name) != len(name) || name == "" {
			return "", false, nil
		}
		v, err := x.lookup(field, name, whole, nil)
		return v, true, err
	case syn&synInput != 0 && strings.HasPrefix(inner, "input:"):
		v, err := x.input(inner[len("input:"):])
		return v, true, err
	case syn&synFile != 0 && strings.HasPrefix(inner, "file:"):
		v, err := x.file(field, inner[len("file:"):])
		return v, true, err
	}
	if syn&synEditor != 0 {
		switch inner {
		case "workspaceFolder":
			if x.workspace() == "" && x.seen == nil {
				return unsupported()
			}
			return machine(x.workspace())
		case "workspaceFolderBasename":
			if x.workspace() == "" && x.seen == nil {
				return unsupported()
			}
			return machine(x.env.base(x.workspace()))
		case "userHome":
			return machine(x.env.Home)
		case "pathSeparator", "/":
			return x.env.separator(), true, nil
		}
		if slices.Contains(editorVariables, inner) || strings.HasPrefix(inner, "config:") ||
			strings.HasPrefix(inner, "command:") || strings.HasPrefix(inner, "workspaceFolder:") {
			return unsupported()
		}
	}
	if syn&synBraced != 0 {
		name, def, hasDef := inner, "", false
		if syn&synDefault != 0 {
			if n, d, ok := strings.Cut(inner, ":-"); ok {
				name, def, hasDef = n, d, true
			}
		}
		if identLen(name) != len(name) || name == "" {
			return "", false, nil
		}
		var dp *string
		if hasDef {
			dp = &def
		}
		v, err := x.lookup(field, name, whole, dp)
		return v, true, err
	}
	return "", false, nil
}

// lookup reads an environment variable, with the application's rule for
// an unset one.
func (x *expander) lookup(field, name, whole string, def *string) (string, error) {
	if x.seen != nil {
		x.seen(field, whole)
		return "", nil
	}
	if v, set := x.env.lookupEnv(name); set {
		return v, nil // set to "" is set, for every application
	}
	switch {
	case def != nil:
		return *def, nil
	case x.s.syntax&unsetError != 0:
		return "", &UnsetVariableError{Variable: whole, Server: x.s.Name, Source: x.s.Source, Field: field}
	case x.s.syntax&unsetKeep != 0:
		return whole, nil
	}
	return "", nil
}

func (x *expander) input(id string) (string, error) {
	if x.seen != nil {
		return "", nil // typed by the person, not read from the machine
	}
	if v, ok := x.answers[id]; ok {
		return v, nil
	}
	in, ok := x.s.inputs[id]
	if !ok {
		in = Input{ID: id}
	}
	in.Server, in.Source = x.s.Name, x.s.Source
	if in.command {
		return "", &UnsupportedVariableError{Variable: "${input:" + id + "}", Server: x.s.Name, Source: x.s.Source, Field: "input " + id + " (a VS Code command)"}
	}
	if x.ask == nil {
		return "", &MissingInputError{Input: in}
	}
	v, err := x.ask(x.ctx, in)
	if errors.Is(err, ErrNoInput) {
		return "", &MissingInputError{Input: in}
	}
	if err != nil {
		return "", fmt.Errorf("server %q: input %q: %w", x.s.Name, id, err)
	}
	if v == "" {
		v = in.Default
	}
	x.answers[id] = v
	return v, nil
}

// file is Windsurf's ${file:PATH}: the file's content without its final
// line break; a leading ~ is the home directory.
func (x *expander) file(field, p string) (string, error) {
	if x.seen != nil {
		x.seen(field, "${file:"+p+"}")
		return "", nil
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		p = x.env.join(x.env.Home, rest)
	}
	p = x.abs(p)
	data, err := readValueFile(x.ctx, x.env, p)
	if err != nil {
		return "", fmt.Errorf("server %q (%s): %s reads %s: %w", x.s.Name, x.s.Source, field, p, bareErr(err))
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}

// identLen is the length of the environment variable name at the start of
// s: a letter or underscore, then letters, digits and underscores.
func identLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9') {
			continue
		}
		return i
	}
	return len(s)
}
