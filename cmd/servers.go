package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/mcpx-dev/mcpx/servers"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// Named servers (package servers): the definitions people already have in
// Claude Desktop, Claude Code, VS Code, Cursor, Windsurf, Codex, Gemini
// and Zed, and in mcpx's own file. -s NAME (or mcpx repl NAME, mcpx
// connect NAME) stands for a server command or URL; mcpx servers lists,
// shows, adds and removes them.

// namedFlags are the flags that name a configured server.
type namedFlags struct {
	server string   // -s, --server NAME or SOURCE:NAME
	inputs []string // --input ID=VALUE
	trust  bool     // --trust
}

func (f *namedFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.server, "server", "s", "", "connect to the server `NAME` (or SOURCE:NAME) from a configuration file (mcpx servers lists them)")
	stringsVar(fs, &f.inputs, "input", "", "give the value of the named server's ${input:ID} as `ID=VALUE` (repeatable)")
	fs.BoolVar(&f.trust, "trust", false, "use a named server from a file mcpx did not write without asking: start its command, or send its URL the variables it expands")
}

// namedDesc is the configured server a command connects to.
type namedDesc struct {
	// ref is NAME or SOURCE:NAME; "" for none, or once resolved.
	ref    string
	inputs map[string]string
	trust  bool
	// host is, once resolved, what the entry's application does with
	// the server that mcpx does not (it lists and calls every tool, and
	// waits as --timeout says), for commands to tell.
	host hostEffects
}

// hostEffects are the tools a named server's application hides from its
// model and how long it waits for the server to start (nil for none),
// and the server's qualified name.
type hostEffects struct {
	server  string
	tools   *servers.ToolFilter
	startup *servers.StartupLimit
}

// heldHost is what a held session keeps of hostEffects for the commands
// that attach to it (sessiond.Status.Host): the start is long past.
type heldHost struct {
	Server string              `json:"server"`
	Tools  *servers.ToolFilter `json:"tools,omitempty"`
}

// held returns what a held session keeps of h; nil when there is nothing
// to keep.
func (h hostEffects) held() json.RawMessage {
	if h.tools == nil {
		return nil
	}
	b, err := json.Marshal(heldHost{Server: h.server, Tools: h.tools})
	if err != nil {
		return nil
	}
	return b
}

// hostOfHeld reads what a held session kept (heldHost); the zero value
// when it kept nothing, or something this build does not read.
func hostOfHeld(raw json.RawMessage) hostEffects {
	var h heldHost
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil {
		return hostEffects{}
	}
	return hostEffects{server: h.Server, tools: h.Tools}
}

func (f namedFlags) validate() (namedDesc, error) {
	d := namedDesc{ref: f.server, trust: f.trust}
	for _, in := range f.inputs {
		id, v, ok := strings.Cut(in, "=")
		if !ok || id == "" {
			return d, usageErrorf("--input %q: expected ID=VALUE", in)
		}
		if d.inputs == nil {
			d.inputs = map[string]string{}
		}
		d.inputs[id] = v
	}
	return d, nil
}

// namedBeforeRun settles -s for the commands that do not connect through
// connFor: the auth commands take the URL of the server it names. (Where
// no server is used, checkFlags refused it.)
func (e *env) namedBeforeRun(c *cobra.Command) error {
	ref := e.cfg.conn.named.ref
	if ref == "" {
		return nil
	}
	path := strings.Fields(c.CommandPath())
	if len(path) < 2 {
		return nil
	}
	switch path[1] {
	case "auth":
		senv, _, s, err := e.lookupServer(c.Context(), ref)
		if err != nil {
			return err
		}
		if !s.Transport.IsHTTP() {
			return usageErrorf("%s applies to servers at a URL; %s runs a command", c.CommandPath(), s.Ref())
		}
		d, err := e.resolveServer(c.Context(), e.cfg.conn, senv, s)
		if err != nil {
			return err
		}
		e.cfg.conn = d
	}
	return nil
}

// serversEnv is what the servers package knows of this machine: the
// home directory as os.UserHomeDir finds it, the working directory and the
// project it is in (the workspace), and mcpx's environment.
func (e *env) serversEnv() (*servers.Env, error) {
	home := e.ios.Getenv("HOME")
	switch runtime.GOOS {
	case "windows":
		home = e.ios.Getenv("USERPROFILE")
	case "plan9":
		home = e.ios.Getenv("home")
	}
	if home == "" {
		return nil, errors.New("no home directory ($HOME) to find server configuration files in")
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the working directory (the workspace of project files): %w", err)
	}
	senv := &servers.Env{GOOS: runtime.GOOS, Home: home, Dir: wd, LookupEnv: e.ios.lookupEnv}
	senv.Workspace = servers.ProjectRoot(senv, wd)
	return senv, nil
}

// loadServers reads every configuration file. Nothing is started.
func (e *env) loadServers(ctx context.Context) (*servers.Env, *servers.Catalog, error) {
	senv, err := e.serversEnv()
	if err != nil {
		return nil, nil, err
	}
	cat, err := servers.Load(ctx, senv)
	if err != nil {
		return nil, nil, err
	}
	return senv, cat, nil
}

// showWarnings shows, with -v, the problems met reading the files (those
// of s's file only when s is given).
func (e *env) showWarnings(cat *servers.Catalog, s *servers.Server) {
	if !e.cfg.out.verbose {
		return
	}
	con := e.console()
	for _, w := range cat.Warnings {
		if s != nil && (!slices.Contains(layerPaths(s), w.Path) || (w.Server != "" && w.Server != s.Name)) {
			continue
		}
		con.Note(tui.EscapeLine(w.String()))
	}
}

// layerPaths are the files s is read from: its own, and the other layers
// of Codex's that its entry merges.
func layerPaths(s *servers.Server) []string {
	out := []string{s.Source.Path}
	for _, l := range s.Layers {
		out = append(out, l.Path)
	}
	return out
}

// lookupServer finds ref among the configured servers.
func (e *env) lookupServer(ctx context.Context, ref string) (*servers.Env, *servers.Catalog, *servers.Server, error) {
	senv, cat, err := e.loadServers(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := cat.Lookup(ref)
	if err != nil {
		e.showWarnings(cat, nil)
		return nil, nil, nil, &usageError{err: err}
	}
	e.showWarnings(cat, s)
	return senv, cat, s, nil
}

// connFor completes the connection description with the server command
// after -- or, for -s NAME, the configured server (see resolveNamed).
func (e *env) connFor(ctx context.Context, d connDesc, server []string, example string) (connDesc, error) {
	d, err := d.forServer(server, example)
	if err != nil || d.named.ref == "" {
		return d, err
	}
	return e.resolveNamed(ctx, d)
}

// resolveNamed turns the configured server d names into the server
// command or URL it describes: after the person confirmed a command from
// a file mcpx did not write (or --trust), with its variables expanded and
// its inputs asked for. The flags given add to the entry: --env and --cwd
// to a command, -H to a URL's headers.
func (e *env) resolveNamed(ctx context.Context, d connDesc) (connDesc, error) {
	senv, _, s, err := e.lookupServer(ctx, d.named.ref)
	if err != nil {
		return d, err
	}
	return e.resolveServer(ctx, d, senv, s)
}

// resolveServer is resolveNamed for the server s, found.
func (e *env) resolveServer(ctx context.Context, d connDesc, senv *servers.Env, s *servers.Server) (connDesc, error) {
	if e.cfg.out.verbose {
		note := fmt.Sprintf("server %s from %s", s.Ref(), s.Source.Path)
		if s.Line > 0 {
			note += fmt.Sprintf(":%d", s.Line)
		}
		switch {
		case s.DisabledReason != "":
			note += " (disabled: " + s.DisabledReason + "; used because it was named)"
		case s.Disabled:
			note += " (disabled there; used because it was named)"
		}
		e.console().Note(tui.EscapeLine(note))
	}
	if err := e.checkTrust(ctx, senv, s, d.named.trust); err != nil {
		return d, err
	}
	senv.OnWait = func(path string) {
		e.console().Note(tui.EscapeLine(fmt.Sprintf("waiting for the named pipe %s to be written (by a secret manager?); Ctrl-C stops", path)))
	}
	asked := map[string]bool{}
	ask := e.askInput(d.named.inputs)
	l, err := servers.Resolve(ctx, senv, s, func(ctx context.Context, in servers.Input) (string, error) {
		asked[in.ID] = true
		return ask(ctx, in)
	})
	if err != nil {
		var mi *servers.MissingInputError
		var uv *servers.UnsetVariableError
		var us *servers.UnsupportedVariableError
		if errors.As(err, &mi) || errors.As(err, &uv) || errors.As(err, &us) {
			return d, &usageError{err: err}
		}
		return d, err
	}
	for _, w := range l.Warnings {
		e.console().Warn(w.String())
	}
	// A flag is never ignored without a word: --input of an ID the entry
	// does not use (a typo, or another server's) is said so.
	for _, id := range slices.Sorted(maps.Keys(d.named.inputs)) {
		if !asked[id] {
			used := "uses no ${input:…}"
			if len(asked) > 0 {
				used = "uses only " + strings.Join(slices.Sorted(maps.Keys(asked)), ", ")
			}
			e.console().Warn(tui.EscapeLine(fmt.Sprintf("--input %s: server %s does not use ${input:%s} (it %s); ignored", id, s.Ref(), id, used)))
		}
	}
	// The entry's timeout (the application gives a slow server that
	// long), unless the flags set one.
	if s.Timeout > 0 && !d.session.timeoutSet {
		d.session.timeout = s.Timeout
		if !d.session.maxTimeoutSet && d.session.maxTimeout > 0 && s.Timeout > d.session.maxTimeout {
			d.session.maxTimeout = s.Timeout
		}
	}
	d.named.ref = ""
	d.named.host = hostEffects{server: s.Ref(), tools: s.Tools, startup: s.Startup}
	if l.Transport == servers.TransportStdio {
		if flag := d.http.givenFlag(); flag != "" {
			return d, usageErrorf("%s applies to a server at a URL; %s is a command", flag, s.Ref())
		}
		d.server = append([]string{l.Command}, l.Args...)
		var env []string
		for _, k := range slices.Sorted(maps.Keys(l.Env)) {
			env = append(env, k+"="+l.Env[k])
		}
		d.stdio.env = append(env, d.stdio.env...) // the flags' win
		if d.stdio.dir == "" {
			d.stdio.dir = l.Cwd
		}
		return d, nil
	}
	if len(d.stdio.env) > 0 || d.stdio.dir != "" {
		return d, usageErrorf("--env and --cwd apply to a server command; %s is at a URL", s.Ref())
	}
	if d.stdio.graceSet {
		return d, usageErrorf("--shutdown-grace applies to a server command; %s is at a URL, not mcpx's to shut down", s.Ref())
	}
	if d.stdio.stderrSet {
		return d, usageErrorf("--server-stderr applies to a server command; %s is at a URL, which has no stderr of mcpx's to send", s.Ref())
	}
	if err := checkURL(fmt.Sprintf("server %s (%s): url", s.Ref(), s.Source.Path), l.URL); err != nil {
		return d, err
	}
	d.http.url = l.URL
	if d.http.mode == transport.ModeAuto { // else --transport chose
		switch l.Transport {
		case servers.TransportHTTP:
			d.http.mode = transport.ModeStreamable
		case servers.TransportSSE:
			d.http.mode = transport.ModeSSE
		}
		d.http.modeReason = fmt.Sprintf("the type of %s in %s", s.Ref(), s.Source.Path)
	}
	if d.http.caCert != "" {
		if _, err := os.Stat(d.http.caCert); err != nil {
			return d, usageErrorf("--ca-cert: %v", err)
		}
	}
	header := d.http.header.Clone()
	lines := d.http.headerLines
	for _, k := range slices.Sorted(maps.Keys(l.Headers)) {
		v := l.Headers[k]
		if !transport.ValidHeaderName(k) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			return d, usageErrorf("server %s (%s): header %q is not a valid HTTP header", s.Ref(), s.Source.Path, k)
		}
		if header.Get(k) == "" { // -H wins
			header.Set(k, strings.TrimSpace(v))
			lines = append(lines, k+": "+v)
			if strings.EqualFold(k, "Authorization") {
				d.http.authFrom = fmt.Sprintf("%s entry %s", s.Source.Path, s.Name)
				e.run.entryAuth = d.http.authFrom
			}
		}
	}
	d.http.header, d.http.headerLines = header, lines
	return d, nil
}

// untrustedError is the refusal to start a command from a file mcpx did
// not write when nobody can confirm it.
type untrustedError struct {
	s *servers.Server
}

func (e *untrustedError) Error() string {
	what := "run " + shownCommand(e.s)
	switch vars := expandedVariables(e.s); {
	case e.s.Transport == servers.TransportStdio:
	case transport.IsSocketURL(e.s.URL) && len(vars) == 0:
		what = "send requests to " + transport.RedactURL(e.s.URL) + ", a socket of this machine"
	case transport.IsSocketURL(e.s.URL):
		what = fmt.Sprintf("send %s to %s, a socket of this machine", strings.Join(vars, ", "), transport.RedactURL(e.s.URL))
	default:
		what = fmt.Sprintf("send %s to %s", strings.Join(vars, ", "), transport.RedactURL(e.s.URL))
	}
	return fmt.Sprintf("server %s comes from %s, which mcpx did not write, and would %s: confirm it on a terminal, or give --trust",
		e.s.Ref(), e.s.Source.Path, tui.EscapeLine(what))
}

// errDeclined is the person's no to starting a server's command;
// errDeclinedURL to sending a server at a URL what its entry takes from
// this machine.
var (
	errDeclined    = errors.New("not started: the server's command was not confirmed")
	errDeclinedURL = errors.New("not connected: the server's entry was not confirmed")
)

// expandedVariables are the variables of this machine that s's entry
// expands, as written, each once.
func expandedVariables(s *servers.Server) []string {
	var vars []string
	for _, x := range s.Expansions() {
		if !slices.Contains(vars, x.Variable) {
			vars = append(vars, x.Variable)
		}
	}
	return vars
}

// headerNames are the names of the headers s's entry sends (never their
// values).
func headerNames(s *servers.Server) []string {
	var names []string
	for _, k := range slices.Concat(slices.Collect(maps.Keys(s.Headers)), slices.Collect(maps.Keys(s.EnvHeaders))) {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, k) }) {
			names = append(names, k)
		}
	}
	if s.BearerTokenEnv != "" && !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, "Authorization") }) {
		names = append(names, "Authorization")
	}
	slices.Sort(names)
	return names
}

// checkTrust makes sure the person wants s used: a stdio server from a
// file mcpx did not write is started, and a server at a URL from such a
// file that expands variables of this machine (whose values it would send
// to a URL someone else chose) or is on a socket of this machine (unix://,
// pipe://) is connected to, only once the person
// confirmed this entry as it is now (remembered in the trust store), or
// with --trust.
func (e *env) checkTrust(ctx context.Context, senv *servers.Env, s *servers.Server, trust bool) error {
	if !s.NeedsTrust() || trust {
		return nil
	}
	path, err := servers.DefaultTrustFile(senv)
	if err != nil {
		return err
	}
	store := servers.NewTrustStore(path)
	ok, err := store.Trusted(s)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	p := e.run.prompter
	if !p.Interactive() {
		return &usageError{err: &untrustedError{s: s}}
	}
	stdio := s.Transport == servers.TransportStdio
	chose, question, declined := "command", "Start it?", errDeclined
	if !stdio {
		chose, question, declined = "URL", "Connect to it?", errDeclinedURL
	}
	scope := "another application's configuration"
	if s.Source.Scope == servers.ScopeProject {
		scope = "a project file: whoever wrote the repository chose this " + chose
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Server %s is defined in %s (%s).\n", s.Ref(), s.Source.Path, scope)
	if len(s.Layers) > 1 {
		// Another file's keys may be what runs: Codex merges them.
		fmt.Fprintf(&b, "Its entry is merged from %s.\n", strings.Join(layerPaths(s)[1:], ", "))
	}
	if stdio {
		fmt.Fprintf(&b, "Starting it runs this command on this machine:\n  %s\n", shellJoin(append([]string{s.Command}, s.Args...)))
		if s.Cwd != "" {
			fmt.Fprintf(&b, "  in %s\n", s.Cwd)
		}
		if len(s.Env) > 0 {
			fmt.Fprintf(&b, "  with %s set\n", strings.Join(slices.Sorted(maps.Keys(s.Env)), ", "))
		}
		if s.EnvFile != "" {
			fmt.Fprintf(&b, "  with the variables of %s\n", s.EnvFile)
		}
	} else {
		to := "to"
		if transport.IsSocketURL(s.URL) {
			// Any local service that answers HTTP on a socket would get
			// them (see servers.Server.NeedsTrust).
			to = "to this machine's socket or pipe"
		}
		fmt.Fprintf(&b, "Using it sends requests %s:\n  %s\n", to, transport.RedactURL(s.URL))
		if names := headerNames(s); len(names) > 0 {
			fmt.Fprintf(&b, "  with the headers %s\n", strings.Join(names, ", "))
		}
		var uses []string
		for _, x := range s.Expansions() {
			uses = append(uses, x.Variable+" (in "+x.Field+")")
		}
		if len(uses) > 0 {
			fmt.Fprintf(&b, "  holding values of this machine: %s\n", strings.Join(uses, ", "))
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		p.Println(tui.EscapeLine(line))
	}
	yes, err := tui.NewPerson(p, nil).Confirm(ctx, question+" (asked again only if the entry changes)", false)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("asking whether to use server %s: %w", s.Ref(), err)
	}
	if !yes {
		return declined
	}
	if err := store.Trust(ctx, s); err != nil {
		e.console().Warn("the answer is not remembered: " + err.Error())
	}
	return nil
}

// askInput returns what obtains ${input:ID} values: --input, else the
// person on a terminal.
func (e *env) askInput(given map[string]string) servers.AskFunc {
	return func(ctx context.Context, in servers.Input) (string, error) {
		if v, ok := given[in.ID]; ok {
			return v, nil
		}
		p := e.run.prompter
		if !p.Interactive() {
			return "", servers.ErrNoInput
		}
		end, err := p.Begin(ctx)
		if err != nil {
			return "", err
		}
		defer end()
		label := in.ID
		if in.Description != "" {
			label = in.Description + " (" + in.ID + ")"
		}
		label = fmt.Sprintf("Server %s asks for %s", in.Server, label)
		if len(in.Options) > 0 {
			label += "; one of " + strings.Join(in.Options, ", ")
		}
		if in.Default != "" && !in.Password {
			label += " [" + in.Default + "]"
		}
		prompt := tui.EscapeLine(label) + ": "
		var v string
		if f, ok := e.ios.In.(*os.File); ok && in.Password && term.IsTerminal(int(f.Fd())) {
			p.Printf("%s", prompt)
			b, rerr := term.ReadPassword(int(f.Fd()))
			p.Println("")
			v, err = string(b), rerr
		} else {
			v, err = p.ReadLine(ctx, prompt)
		}
		if errors.Is(err, io.EOF) {
			return "", servers.ErrNoInput // the person ended the input
		}
		if err != nil {
			return "", err
		}
		if v == "" {
			v = in.Default
		}
		return v, nil
	}
}

// shellJoin quotes words as a POSIX shell would need them.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && !strings.ContainsFunc(w, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '=' || r == '@' || r == ',' || r == '+' || r == '%' ||
				('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'))
		}) {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// secretName matches the names of variables and headers whose values are
// credentials.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)token|secret|passw|key|auth|cookie|credential|session`)
})

// shownValue is a value of an entry's env or headers as listings show it:
// a credential written into the file is not printed, a reference to a
// variable is. A value is a credential when its name says so (TOKEN,
// Authorization…) and it holds more than variable references and an
// authentication scheme ("Bearer ${env:TOKEN}" is shown), or when it
// looks like one whatever its name: a known token format, a "Bearer" or
// "Basic" credential. A URL in it is shown without its password and
// secret query parameters (DATABASE_URL=postgres://u:<pw>@host/db).
func shownValue(name, v string) string {
	if looksSecret(v) || secretName().MatchString(name) && hasLiteral(v) {
		return "<redacted>"
	}
	if strings.Contains(v, "://") {
		return transport.RedactURL(v)
	}
	return v
}

// variableRef matches the variable references of every dialect: ${…},
// $NAME.
var variableRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`) })

// authScheme matches the HTTP authentication schemes that precede a
// credential.
var authScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^\s*(bearer|basic|token|bot)\b`) })

// hasLiteral reports whether v holds text of its own besides variable
// references and an authentication scheme.
func hasLiteral(v string) bool {
	rest := authScheme().ReplaceAllString(variableRef().ReplaceAllString(v, ""), "")
	return strings.TrimSpace(rest) != ""
}

// tokenFormat matches credentials by their form: GitHub, GitLab, OpenAI
// and Anthropic, Slack, AWS and Google API keys, JSON Web Tokens, and
// "Bearer"/"Basic" followed by a literal credential.
var tokenFormat = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(gh[pousr]_[A-Za-z0-9]{16,}|github_pat_\w{16,}|glpat-[\w-]{16,}|sk-[\w-]{16,}|xox[abpr]-[\w-]{8,}|xapp-[\w-]{8,}|AKIA[0-9A-Z]{16}|AIza[\w-]{30,}|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*)$`)
})

// looksSecret reports whether v has the form of a credential written
// into the file.
func looksSecret(v string) bool {
	t := strings.TrimSpace(v)
	if tokenFormat().MatchString(t) {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(authScheme().FindString(t))) {
	case "bearer", "basic":
		return hasLiteral(t)
	}
	return false
}

// shownArgs are a command's arguments as listings and errors show them:
// a credential given as an argument (--api-key=VALUE, --token VALUE, a
// NAME=VALUE or "Name: value" that names it, or a value that looks like
// one) is not printed, nor a URL's password.
func shownArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if flag, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") {
			out[i] = flag + "=" + shownArg(flag, val)
			continue
		}
		flag := ""
		if i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && !strings.HasPrefix(a, "-") {
			flag = args[i-1]
		}
		out[i] = shownArg(flag, a)
	}
	return out
}

// namedArg matches an argument that names its own value: NAME=VALUE
// (docker's -e, env's operands) or an HTTP header line, "Name: value"
// (mcp-remote's --header), through which Claude Desktop's file, which
// only starts commands, passes a token to a container or a remote server.
var namedArg = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*(?:=|:[ \t]*)`) })

// shownArg is the argument a, given after the flag named flag ("" for
// none), as listings show it.
func shownArg(flag, a string) string {
	if shown := shownValue(flag, a); shown != a {
		return shown
	}
	if m := namedArg().FindStringIndex(a); m != nil {
		name := strings.TrimRight(a[:m[1]], "=: \t")
		if shown := shownValue(name, a[m[1]:]); shown != a[m[1]:] {
			return a[:m[1]] + shown
		}
	}
	return a
}

// shownCommand is s's command line as listings and errors show it.
func shownCommand(s *servers.Server) string {
	return shellJoin(append([]string{s.Command}, shownArgs(s.Args)...))
}

func shownMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = shownValue(k, v)
	}
	return out
}

// serverJSON is a server as mcpx servers --json shows it.
type serverJSON struct {
	Name      string            `json:"name"`
	Ref       string            `json:"ref"`
	Source    string            `json:"source"`
	Kind      string            `json:"kind"`
	Scope     string            `json:"scope"`
	Path      string            `json:"path"`
	Line      int               `json:"line,omitempty"`
	Transport string            `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	EnvFile   string            `json:"envFile,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// EnvHeaders and BearerTokenEnv are Codex's env_http_headers (header
	// name → variable name) and bearer_token_env_var: names of
	// variables, never their values.
	EnvHeaders     map[string]string `json:"envHeaders,omitempty"`
	BearerTokenEnv string            `json:"bearerTokenEnv,omitempty"`
	// Timeout is the entry's request timeout (Go's duration syntax),
	// which mcpx uses unless --timeout is given.
	Timeout  string `json:"timeout,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
	// DisabledReason says why, when it is not the entry's own file or
	// its application's name lists (Claude Code's managed policy).
	DisabledReason string `json:"disabledReason,omitempty"`
	// Tools is what the entry's application hides of the server's
	// tools (servers.ToolFilter), when it filters them.
	Tools *toolFilterJSON `json:"tools,omitempty"`
	// Startup is how long the application waits for the server to
	// start (servers.StartupLimit), when it bounds that.
	Startup *startupJSON `json:"startup,omitempty"`
	// Layers are, when Codex's files merge their entries of the name,
	// each of those files, the lowest precedence first (Path the last).
	Layers []string `json:"layers,omitempty"`
	// Trust is "own" (mcpx's file), "url" (a URL whose entry takes
	// nothing from this machine: nothing to confirm), "trusted"
	// (confirmed as it is) or "ask".
	Trust string `json:"trust"`
}

// toolFilterJSON is a servers.ToolFilter in mcpx servers --json: the
// application, and each list by the field it came from.
type toolFilterJSON struct {
	App        string    `json:"app"`
	Allow      *[]string `json:"allow,omitempty"` // [] when it allows none
	AllowField string    `json:"allowField,omitempty"`
	Deny       []string  `json:"deny,omitempty"`
	DenyField  string    `json:"denyField,omitempty"`
}

// startupJSON is a servers.StartupLimit in mcpx servers --json; Field is
// "" for the application's default.
type startupJSON struct {
	App     string `json:"app"`
	Timeout string `json:"timeout"`
	Field   string `json:"field,omitempty"`
}

func toJSON(s *servers.Server, store *servers.TrustStore) serverJSON {
	j := serverJSONOf(s, store)
	if f := s.Tools; f != nil {
		j.Tools = &toolFilterJSON{App: f.App, AllowField: f.AllowField, Deny: f.Deny, DenyField: f.DenyField}
		if f.AllowField != "" {
			allow := append([]string{}, f.Allow...)
			j.Tools.Allow = &allow
		}
	}
	if l := s.Startup; l != nil {
		j.Startup = &startupJSON{App: l.App, Timeout: l.Timeout.String(), Field: l.Field}
	}
	return j
}

func serverJSONOf(s *servers.Server, store *servers.TrustStore) serverJSON {
	return serverJSON{
		Name: s.Name, Ref: s.Ref(), Source: s.Source.ID, Kind: string(s.Source.Kind), Scope: string(s.Source.Scope),
		Path: s.Source.Path, Line: s.Line, Transport: string(s.Transport), Command: s.Command, Args: shownArgs(s.Args),
		Env: shownMap(s.Env), EnvFile: s.EnvFile, Cwd: s.Cwd, URL: transport.RedactURL(s.URL), Headers: shownMap(s.Headers),
		EnvHeaders: s.EnvHeaders, BearerTokenEnv: s.BearerTokenEnv, Disabled: s.Disabled, DisabledReason: s.DisabledReason, Trust: trustState(s, store),
		Timeout: timeoutText(s.Timeout), Layers: layersOf(s),
	}
}

// quotedList is names, each quoted, comma-separated.
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// layersOf are the files of s.Layers.
func layersOf(s *servers.Server) []string {
	var out []string
	for _, l := range s.Layers {
		out = append(out, l.Path)
	}
	return out
}

// timeoutText is d in Go's duration syntax, "" for none.
func timeoutText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

func trustState(s *servers.Server, store *servers.TrustStore) string {
	switch {
	case s.Source.Kind == servers.KindMcpx:
		return "own"
	case !s.NeedsTrust():
		return "url"
	case store != nil:
		if ok, _ := store.Trusted(s); ok {
			return "trusted"
		}
	}
	return "ask"
}

// target is what a listing shows of how s is reached: its command line or
// its URL.
func target(s *servers.Server) string {
	if s.Transport == servers.TransportStdio {
		return shownCommand(s)
	}
	return transport.RedactURL(s.URL)
}

func (e *env) trustStore(senv *servers.Env) *servers.TrustStore {
	path, err := servers.DefaultTrustFile(senv)
	if err != nil {
		return nil
	}
	return servers.NewTrustStore(path)
}

func newServersCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use: "servers",
		Long: `List the servers defined in the configuration files of Claude Desktop, Claude
Code, VS Code, Cursor, Windsurf, Codex CLI, Gemini CLI and Zed, and in mcpx's
own file (mcpx servers add writes it): name, source, transport, and the
command or URL. Listing reads files only; nothing is started. Connect to one
with -s NAME (SOURCE:NAME when two files define NAME differently), mcpx repl
NAME or mcpx connect NAME. -v also shows the problems met in the files.`,
		Example: `  mcpx servers
  mcpx servers --json
  mcpx servers show github
  mcpx servers add everything -- npx -y @modelcontextprotocol/server-everything
  mcpx servers add remote --url https://mcp.example.com/mcp -H 'Authorization: Bearer ${env:TOKEN}'
  mcpx servers remove remote
  mcpx tools list -s everything`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return e.listServers(c.Context()) },
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the configured servers (as mcpx servers does)",
		Example: "  mcpx servers list --json",
		Args:    noArgs,
		RunE:    func(c *cobra.Command, _ []string) error { return e.listServers(c.Context()) },
	}
	c.AddCommand(list, newServersShowCmd(e), newServersAddCmd(e), newServersRemoveCmd(e))
	const reads = "reads configuration files only"
	readsGlobals(c, reads, "json", "verbose")
	readsGlobals(list, reads, "json", "verbose")
	return c
}

func (e *env) listServers(ctx context.Context) error {
	senv, cat, err := e.loadServers(ctx)
	if err != nil {
		return err
	}
	if e.cfg.out.verbose {
		for _, f := range cat.Files {
			if f.Found {
				e.console().Note(tui.EscapeLine(fmt.Sprintf("read %s: %d server(s) (%s)", f.Source.Path, f.Servers, f.Source.ID)))
			}
		}
	}
	e.showWarnings(cat, nil)
	store := e.trustStore(senv)
	if e.cfg.out.json {
		list := []serverJSON{}
		for _, s := range cat.Servers {
			list = append(list, toJSON(s, store))
		}
		return printJSON(e.ios.Out, list)
	}
	if len(cat.Servers) == 0 {
		own, _ := servers.OwnFile(senv)
		e.console().Note("no server defined in any configuration file; mcpx servers add NAME -- <command> adds one to " + own)
		return nil
	}
	names := map[string]int{}
	for _, s := range cat.Servers {
		names[s.Name]++
	}
	tw := tui.NewColumns(e.ios.Out)
	fmt.Fprintln(tw, "NAME\tSOURCE\tTRANSPORT\tCOMMAND OR URL\tFILE")
	for _, s := range cat.Servers {
		name := s.Name
		if names[s.Name] > 1 {
			name = s.Ref()
		}
		tr := string(s.Transport)
		if s.Disabled {
			tr += " (disabled)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tui.EscapeLine(name), s.Source.ID, tr, tui.EscapeLine(target(s)), tui.EscapeLine(s.Source.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Why a server is disabled, when a line of the table cannot say it
	// (Claude Code's managed policy).
	for _, s := range cat.Servers {
		if s.DisabledReason != "" {
			e.console().Note(tui.EscapeLine(s.Ref() + " is disabled: " + s.DisabledReason))
		}
	}
	return nil
}

func newServersShowCmd(e *env) *cobra.Command {
	return readsGlobals(&cobra.Command{
		Use:               "show NAME",
		Short:             "Show one configured server: where it is defined and what it runs",
		Example:           "  mcpx servers show github\n  mcpx servers show cursor:github --json",
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: e.completeServers,
		RunE: func(c *cobra.Command, args []string) error {
			if err := wantArgs(c, args, 1, 1); err != nil {
				return err
			}
			senv, _, s, err := e.lookupServer(c.Context(), args[0])
			if err != nil {
				return err
			}
			j := toJSON(s, e.trustStore(senv))
			if e.cfg.out.json {
				return printJSON(e.ios.Out, j)
			}
			tw := tui.NewColumns(e.ios.Out)
			row := func(k, v string) {
				if v != "" {
					fmt.Fprintf(tw, "%s:\t%s\n", k, tui.EscapeLine(v))
				}
			}
			where := s.Source.Path
			if s.Line > 0 {
				where += fmt.Sprintf(":%d", s.Line)
			}
			row("name", s.Name)
			row("source", s.Source.ID+" ("+string(s.Source.Scope)+")")
			row("file", where)
			// Codex's files whose entries are merged into this one.
			for _, p := range j.Layers {
				row("layer", p)
			}
			row("transport", string(s.Transport))
			if s.Transport == servers.TransportStdio {
				row("command", target(s))
			}
			row("cwd", s.Cwd)
			row("envFile", s.EnvFile)
			for _, k := range slices.Sorted(maps.Keys(j.Env)) {
				row("env", k+"="+j.Env[k])
			}
			row("url", j.URL)
			for _, k := range slices.Sorted(maps.Keys(j.Headers)) {
				row("header", k+": "+j.Headers[k])
			}
			// Codex's headers from variables, by the variable's name.
			for _, k := range slices.Sorted(maps.Keys(s.EnvHeaders)) {
				row("header", k+": $"+s.EnvHeaders[k])
			}
			if s.BearerTokenEnv != "" {
				row("header", "Authorization: Bearer $"+s.BearerTokenEnv)
			}
			if j.Timeout != "" {
				row("timeout", j.Timeout+" (the entry's wait for an answer; mcpx waits as long unless --timeout is given)")
			}
			if f := s.Tools; f != nil {
				if f.AllowField != "" {
					only := quotedList(f.Allow)
					if only == "" {
						only = "none of its tools"
					}
					row("tools", fmt.Sprintf("%s offers its model only %s (%s)", f.App, only, f.AllowField))
				}
				if f.DenyField != "" {
					row("tools", fmt.Sprintf("%s hides %s from its model (%s)", f.App, quotedList(f.Deny), f.DenyField))
				}
			}
			if l := s.Startup; l != nil {
				why := "its default"
				if l.Field != "" {
					why = l.Field
				}
				if l.Timeout == 0 {
					row("startup", fmt.Sprintf("%s gives up on the server at once (%s is 0): it never starts there; mcpx warns when it starts", l.App, why))
				} else {
					row("startup", fmt.Sprintf("%s gives up on the server if it has not started after %s (%s); mcpx warns when it takes longer", l.App, l.Timeout, why))
				}
			}
			switch {
			case s.DisabledReason != "":
				row("disabled", "yes ("+s.DisabledReason+"; mcpx still uses it when named)")
			case s.Disabled:
				row("disabled", "yes (in its file; mcpx still uses it when named)")
			}
			trust := map[string]string{
				"own":     "mcpx's own file: used without asking",
				"url":     "a URL whose entry takes nothing from this machine: used without asking",
				"trusted": "confirmed: used without asking until the entry changes",
				"ask":     "asked before it is started (or --trust)",
			}[j.Trust]
			switch vars := expandedVariables(s); {
			case j.Trust != "ask" || s.Transport == servers.TransportStdio:
			case transport.IsSocketURL(s.URL) && len(vars) == 0:
				trust = "asked before requests go to this machine's socket (or --trust)"
			case transport.IsSocketURL(s.URL):
				trust = "asked before requests go to this machine's socket with " + strings.Join(vars, ", ") + " (or --trust)"
			default:
				trust = "asked before its URL is sent " + strings.Join(vars, ", ") + " (or --trust)"
			}
			row("trust", trust)
			return tw.Flush()
		},
	}, "reads configuration files only", "json", "verbose")
}

type serversAddOptions struct {
	e       *env
	replace bool
}

func newServersAddCmd(e *env) *cobra.Command {
	o := &serversAddOptions{e: e}
	c := &cobra.Command{
		Use:   "add NAME [--env KEY=VALUE] [--cwd DIR] [flags] -- <server command> | add NAME --url URL [-H 'Name: value'] [--transport http|sse] [flags]",
		Short: "Add a server to mcpx's own configuration file",
		Long: `Add a server to mcpx's own file (servers.json in mcpx's configuration
directory), which no other application reads: a command after -- (with
--env and --cwd), or a URL (with -H headers and --transport). Values may use
${env:VAR} (or ${VAR}) and ${input:ID}, expanded when the server is used, so
that secrets need not be written into the file. The file is rewritten
atomically, keeping its other content; --replace overwrites an entry.`,
		Example: `  mcpx servers add everything -- npx -y @modelcontextprotocol/server-everything
  mcpx servers add db --env 'DB_URL=${env:DATABASE_URL}' --cwd ~/src/db -- node server.js
  mcpx servers add remote --url https://mcp.example.com/mcp -H 'Authorization: Bearer ${env:TOKEN}'`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return o.run(c, own[0], server)
		},
	}
	c.Flags().BoolVar(&o.replace, "replace", false, "replace an entry of the same name")
	// (--bearer and -s are read to be refused with advice: see run.)
	return readsGlobals(c, "writes a server's command or URL into mcpx's file",
		"url", "header", "transport", "env", "cwd", "verbose", "bearer", "server")
}

func (o *serversAddOptions) run(c *cobra.Command, name string, server []string) error {
	e := o.e
	d := e.cfg.conn
	if !servers.ValidName(name) {
		return usageErrorf("server name %q: %v", name, servers.ErrBadName)
	}
	if d.http.bearerFlag {
		return usageErrorf("--bearer is not written to the file: give -H 'Authorization: Bearer ${env:VAR}' instead, which keeps the token out of it")
	}
	if d.named.ref != "" {
		return usageErrorf("-s names a server to connect to; mcpx servers add takes the new server's command after --, or --url")
	}
	s := &servers.Server{Name: name}
	switch {
	case d.http.url != "" && len(server) > 0:
		return usageErrorf("give either --url URL or a server command after --, not both")
	case d.http.url != "":
		s.URL = d.http.url
		switch d.http.mode {
		case transport.ModeStreamable:
			s.Transport = servers.TransportHTTP
		case transport.ModeSSE:
			s.Transport = servers.TransportSSE
		default:
			s.Transport = servers.TransportAuto
		}
		for _, h := range d.http.headerLines {
			k, v, _ := strings.Cut(h, ":")
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	case len(server) > 0:
		if err := checkServerCommand(server, "mcpx servers add "+name); err != nil {
			return err
		}
		s.Transport, s.Command, s.Args, s.Cwd = servers.TransportStdio, server[0], server[1:], d.stdio.dir
		if s.Cwd != "" && !filepath.IsAbs(s.Cwd) && !strings.HasPrefix(s.Cwd, "~") && !strings.HasPrefix(s.Cwd, "$") {
			// A directory given relative to here, where the person is.
			abs, err := filepath.Abs(s.Cwd)
			if err != nil {
				return fmt.Errorf("--cwd %s: %w", s.Cwd, err)
			}
			s.Cwd = abs
		}
		for _, kv := range d.stdio.env {
			k, v, _ := strings.Cut(kv, "=")
			if s.Env == nil {
				s.Env = map[string]string{}
			}
			s.Env[k] = v
		}
	default:
		return usageErrorf("no server given: put its command after --, e.g. mcpx servers add %s -- node server.js, or give --url URL", name)
	}
	senv, err := e.serversEnv()
	if err != nil {
		return err
	}
	path, err := servers.OwnFile(senv)
	if err != nil {
		return err
	}
	if err := servers.Add(c.Context(), path, name, s, o.replace); err != nil {
		if errors.Is(err, servers.ErrExists) {
			return usageErrorf("%v (--replace overwrites it)", err)
		}
		var ce *servers.CommentsError
		if errors.As(err, &ce) {
			return &usageError{err: err}
		}
		return err
	}
	if e.cfg.out.verbose {
		e.console().Note(fmt.Sprintf("added %s to %s", name, path))
	}
	return nil
}

func newServersRemoveCmd(e *env) *cobra.Command {
	return readsGlobals(&cobra.Command{
		Use:               "remove NAME",
		Short:             "Remove a server from mcpx's own configuration file",
		Long:              "Remove a server from mcpx's own file; other applications' files are never edited.",
		Example:           "  mcpx servers remove remote",
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: e.completeOwnServers,
		RunE: func(c *cobra.Command, args []string) error {
			if err := wantArgs(c, args, 1, 1); err != nil {
				return err
			}
			senv, err := e.serversEnv()
			if err != nil {
				return err
			}
			path, err := servers.OwnFile(senv)
			if err != nil {
				return err
			}
			if err := servers.Remove(c.Context(), path, args[0]); err != nil {
				var ce *servers.CommentsError
				if errors.Is(err, servers.ErrNotFound) || errors.As(err, &ce) {
					return &usageError{err: err}
				}
				return err
			}
			if e.cfg.out.verbose {
				e.console().Note(fmt.Sprintf("removed %s from %s", args[0], path))
			}
			return nil
		},
	}, "edits mcpx's configuration file only", "verbose")
}

// completeServers completes the first argument with the names of the
// configured servers.
func (e *env) completeServers(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return e.serverNames(c.Context(), false), cobra.ShellCompDirectiveNoFileComp
}

// completeOwnServers completes with the servers of mcpx's own file.
func (e *env) completeOwnServers(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return e.serverNames(c.Context(), true), cobra.ShellCompDirectiveNoFileComp
}

func (e *env) serverNames(ctx context.Context, ownOnly bool) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	_, cat, err := e.loadServers(ctx)
	if err != nil {
		return nil
	}
	var names []string
	if !ownOnly {
		names = cat.Names()
	} else {
		for _, s := range cat.Servers {
			if s.Source.Kind == servers.KindMcpx {
				names = append(names, s.Name)
			}
		}
	}
	// The shell prints candidates as they are: a name from a project
	// file with an escape sequence in it would reach the terminal, and
	// one with a line break would be two candidates. Such a name is
	// still usable, quoted, with -s.
	return slices.DeleteFunc(names, func(n string) bool { return tui.EscapeName(n) != n })
}

// resolvedArgs are the flags that give the session process the server a
// configured server resolved to (the command itself goes after --).
func resolvedArgs(d connDesc) []string {
	var args []string
	// The entry's timeouts (flags given are passed as given).
	if !d.session.timeoutSet {
		args = append(args, "--timeout="+d.session.timeout.String())
	}
	if !d.session.maxTimeoutSet {
		args = append(args, "--max-timeout="+d.session.maxTimeout.String())
	}
	if d.http.url == "" {
		for _, kv := range d.stdio.env {
			args = append(args, "--env="+kv)
		}
		if d.stdio.dir != "" {
			args = append(args, "--cwd="+d.stdio.dir)
		}
		return args
	}
	args = append(args, "--url="+d.http.url, "--transport="+string(d.http.mode))
	for _, h := range d.http.headerLines {
		args = append(args, "--header="+h)
	}
	return args
}

// printJSON writes v as one line of JSON, leaving <, > and & as they are.
func printJSON(w io.Writer, v any) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Names and commands come from files anyone may have written (a
	// repository's .mcp.json): the same JSON, safe on a terminal.
	_, err := io.WriteString(w, tui.EscapeJSON(b.String()))
	return err
}

// givenFlag names an HTTP flag given on the command line ("" for none),
// which a server command cannot take.
func (h httpDesc) givenFlag() string {
	switch {
	case len(h.headerLines) > 0:
		return "-H"
	case h.bearerFlag:
		return "--bearer"
	case h.caCert != "":
		return "--ca-cert"
	case h.insecure:
		return "--insecure"
	case h.mode != transport.ModeAuto:
		return "--transport"
	}
	return ""
}
