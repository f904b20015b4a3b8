package cmd

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// config is what the global flags say, checked once before a command runs
// (validate) and not changed afterwards. A command that needs a variant —
// auth login's longer timeout, the REPL's roots after :roots — works on a
// copy.
type config struct {
	out  output
	conn connDesc
}

// output says how mcpx shows what happens.
type output struct {
	json    bool   // exactly the JSON-RPC result on stdout
	wire    bool   // every frame on stderr
	verbose bool   // what mcpx does, on stderr
	color   string // auto, always or never
	strict  bool   // the server's departures from the protocol fail the command
}

// connDesc describes the connection a command opens and the session over
// it. Nothing in it is open or running: the connector builds from it.
type connDesc struct {
	// server is the server command after --; empty for --url. It is the
	// one part a command adds (forServer).
	server []string
	// at is the open session (mcpx connect) the command runs through,
	// given as @NAME before it; the session holds the server, so a
	// description with it has neither a server command nor a URL.
	at sessionRef
	// named is the configured server given with -s NAME (servers.go),
	// which resolveNamed turns into a server command or a URL.
	named   namedDesc
	stdio   stdioDesc
	http    httpDesc
	oauth   oauthDesc
	session sessionDesc
	feat    featuresDesc
	rec     recordDesc
}

// stdioDesc is how a server command runs.
type stdioDesc struct {
	env    []string
	dir    string
	stderr string // show, hide, or the file to append to
	// grace is how long the server is given to exit once its stdin is
	// closed (--shutdown-grace; transport.DefaultCloseGrace unless given).
	grace time.Duration
	// stderrSet and graceSet say --server-stderr and --shutdown-grace were
	// given (see validation): a server at a URL refuses them.
	stderrSet, graceSet bool
	// inherited are the values of the variables of mcpx's environment,
	// which a server command inherits, whose names look secret
	// (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY): a server may print its
	// environment (a debugging tool), and a trace must not keep them.
	inherited []string
}

// httpDesc is how the server at a URL is reached.
type httpDesc struct {
	url  string // "" for a server command
	mode transport.HTTPMode
	// modeReason says what chose mode when not --transport (a named
	// server's file).
	modeReason string
	header     http.Header // -H
	// headerLines are the -H flags as given, whose credentials a trace
	// redacts.
	headerLines []string
	// bearer is --bearer, else $MCPX_BEARER_TOKEN; bearerFlag says it
	// was given as a flag.
	bearer     string
	bearerFlag bool
	caCert     string
	insecure   bool
	// stored are the OAuth tokens stored for url, which the connection
	// may present (see storedCredentials); set as the connection opens.
	stored []string
	// authFrom is the configured server's entry that gave header its
	// Authorization ("FILE entry NAME"), "" when -H gave it or none.
	authFrom string
}

// sentBearer is the bearer token the connection sends, "" for none:
// --bearer (which replaces a configured server's Authorization header),
// else $MCPX_BEARER_TOKEN unless an Authorization header is given (-H, or
// the configured server's): a default from the environment does not
// replace credentials given for this server.
func (h httpDesc) sentBearer() string {
	if h.bearerFlag || h.header.Get("Authorization") == "" {
		return h.bearer
	}
	return ""
}

// oauthOff says why mcpx must not run OAuth for the connection, "" when
// it may: credentials given by hand take precedence.
func (h httpDesc) oauthOff() string {
	switch {
	case h.header.Get("Authorization") == "":
		return ""
	case h.authFrom != "":
		return "the Authorization header comes from " + h.authFrom
	}
	return "-H gives an Authorization header"
}

// sessionDesc shapes the MCP session.
type sessionDesc struct {
	maxMessageSize int64
	timeout        time.Duration // 0: none
	maxTimeout     time.Duration // 0: none
	// timeoutSet and maxTimeoutSet say the flags gave them (see
	// validation).
	timeoutSet, maxTimeoutSet bool
	protocolVersion           string
	// era is legacy, auto or modern; eraSource names what chose it ("" for
	// the default).
	era, eraSource string
	// held is set for a command through an open session (@NAME), whose
	// connection to the server carries other commands' requests too.
	held bool
	// traceContext is the OpenTelemetry trace context from TRACEPARENT,
	// TRACESTATE and BAGGAGE (nil for none); traceErr says why those
	// could not be taken, a warning when the command connects (see
	// connector.connect).
	traceContext *inspector.TraceContext
	traceErr     error
}

// featuresDesc is what mcpx offers the server and does around the
// command.
type featuresDesc struct {
	// roots are offered with the roots capability; nil declares none.
	roots []inspector.Root
	// sampler and elicitor answer the server's requests (nil: the
	// capability is not declared); each connection gets a clone.
	sampler  *inspector.Sampler
	elicitor *inspector.Elicitor
	logLevel string
	linger   time.Duration
	// ui is --ui: the MCP Apps extension declared, views shown.
	ui uiDesc
}

// recordDesc is --record and what comparisons leave out.
type recordDesc struct {
	file  string
	force bool
	// mode is the record mode (--record-mode, else $MCPX_RECORD), ""
	// for none; modeFlag says the flag chose it.
	mode     record.Mode
	modeFlag bool
	// stable writes stable traces (--stable).
	stable bool
	// command and args are the command and its own arguments (without
	// the server command), which name the session in the trace (see
	// sessionName).
	command     string
	args        []string
	redact      []string
	noRedact    bool
	ignore      []string
	normalizers []record.Normalizer
}

// validation is what validate needs besides the flags.
type validation struct {
	ios *IOStreams
	// person answers the server's questions on a terminal; nil without one.
	person inspector.Person
	// eraSet says --protocol-era was given (its value may be "").
	eraSet bool
	// timeoutSet and maxTimeoutSet say --timeout and --max-timeout were
	// given: a configured server's own timeout does not replace them.
	timeoutSet, maxTimeoutSet bool
	// stderrSet and graceSet say --server-stderr and --shutdown-grace were
	// given: with a server at a URL, which has no stderr of mcpx's and is
	// not mcpx's to shut down, they are refused even at their defaults
	// (--server-stderr show), not ignored.
	stderrSet, graceSet bool
	// at is the @NAME given before the command, if any.
	at sessionRef
}

// validate checks the global flags and builds the config, reading the
// files they name now, so that a mistake is a usage error before any
// server starts.
func (f *rootFlags) validate(ctx context.Context, v validation) (config, error) {
	var cfg config
	out, err := f.out.validate()
	if err != nil {
		return cfg, err
	}
	stdio, err := f.server.validate()
	if err != nil {
		return cfg, err
	}
	stdio.stderrSet, stdio.graceSet = v.stderrSet, v.graceSet
	if v.ios.Environ != nil {
		stdio.inherited = secretValues(v.ios.Environ())
	}
	if f.session.timeout < 0 || f.session.maxTimeout < 0 {
		return cfg, usageErrorf("--timeout and --max-timeout must not be negative")
	}
	rec, err := f.rec.validate(v.ios.Getenv)
	if err != nil {
		return cfg, err
	}
	if stdio.stderr != "show" && stdio.stderr != "hide" && sameFile(stdio.stderr, rec.file) {
		return cfg, usageErrorf("--server-stderr and --record both write to %s: the server's stderr lines would break the trace; give each its own file (the trace holds the stderr lines too)", rec.file)
	}
	hd, err := f.http.validate(stdio, v.ios, f.named.server != "")
	if err != nil {
		return cfg, err
	}
	console := newConsole(v.ios, out, nil)
	feat, err := f.feat.validate(ctx, v.ios, v.person, console)
	if err != nil {
		return cfg, err
	}
	auth := f.auth
	if f.http.url == "" {
		auth.noBrowser = false // --no-browser is only --ui's here, not OAuth's
	}
	oauth, err := auth.validate(ctx, f.http, v.ios, console)
	if err != nil {
		return cfg, err
	}
	sess, err := f.session.validate(f.http, v.ios, v.eraSet)
	if err != nil {
		return cfg, err
	}
	sess.timeoutSet, sess.maxTimeoutSet = v.timeoutSet, v.maxTimeoutSet
	named, err := f.named.validate()
	if err != nil {
		return cfg, err
	}
	if feat.ui, err = f.ui.validate(f.auth.noBrowser, v.ios, v.person); err != nil {
		return cfg, err
	}
	return config{out: out, conn: connDesc{at: v.at, named: named, stdio: stdio, http: hd, oauth: oauth, session: sess, feat: feat, rec: rec}}, nil
}

func (f outputFlags) validate() (output, error) {
	switch f.color {
	case "auto", "always", "never":
	default:
		return output{}, usageErrorf("--color must be auto, always or never, not %q", f.color)
	}
	return output(f), nil
}

func (f serverFlags) validate() (stdioDesc, error) {
	for _, e := range f.env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return stdioDesc{}, usageErrorf("--env %s: expected KEY=VALUE", transport.QuoteExcerpt(e))
		}
	}
	if err := checkShutdownGrace(f.grace); err != nil {
		return stdioDesc{}, err
	}
	return stdioDesc{env: f.env, dir: f.cwd, stderr: f.stderr, grace: f.grace}, nil
}

// checkShutdownGrace refuses a --shutdown-grace of 0 or less, which some
// would read as "no wait" and others as "no limit" (neither is offered:
// the server's stdin is closed first, as the spec orders, and every wait
// is bounded), and one over maxShutdownGrace.
func checkShutdownGrace(d time.Duration) error {
	switch {
	case d <= 0:
		return usageErrorf("--shutdown-grace %s: give a positive duration, e.g. 2s (the default is %s)", d, transport.DefaultCloseGrace)
	case d > maxShutdownGrace:
		return usageErrorf("--shutdown-grace %s: give at most 1m (a second Ctrl-C does not cut the wait short)", d)
	}
	return nil
}

// forServer returns the description completed with the server command
// given after -- (none for --url). Exactly one of them must be given, or
// neither with @NAME; example shows the command that was meant.
func (d connDesc) forServer(server []string, example string) (connDesc, error) {
	if name := d.at.name; name != "" {
		if d.named.ref != "" {
			return d, usageErrorf("@%s runs the command through an open session, which holds its server: give no -s with it", name)
		}
		if d.http.url != "" || len(server) > 0 {
			return d, usageErrorf("@%s runs the command through an open session: give no server command or --url with it", name)
		}
		if err := sessiond.CheckName(name); err != nil {
			return d, usageErrorf("@%s: %v", name, err)
		}
		return d, nil
	}
	if ref := d.named.ref; ref != "" {
		if d.http.url != "" || len(server) > 0 {
			return d, usageErrorf("-s %s names a configured server: give no server command or --url with it", ref)
		}
		return d, nil
	}
	if d.http.url != "" && len(server) > 0 {
		return d, usageErrorf("give either --url URL or a server command after --, not both")
	}
	if d.named.trust || len(d.named.inputs) > 0 {
		return d, usageErrorf("--trust and --input apply to a configured server (-s NAME); the server here is given on the command line")
	}
	if d.http.url != "" && d.stdio.stderrSet {
		return d, usageErrorf("--server-stderr applies to a server command after --; a server at --url has no stderr of mcpx's to send")
	}
	if d.http.url == "" && len(server) == 0 {
		return d, usageErrorf("no server given: put the server command after --, e.g. %s -- node server.js, name a configured server with -s NAME (mcpx servers lists them), or give --url URL", example)
	}
	if err := checkServerCommand(server, example); err != nil {
		return d, err
	}
	d.server = server
	return d, nil
}

// checkServerCommand refuses a server command after -- that cannot be
// meant as one (example is the command that was meant, "mcpx tools
// list"): an empty program (mcpx tools list -- "$SERVER" with SERVER
// unset), a URL (a server at a URL is given with --url), and one of
// mcpx's flags put after the -- (mcpx tools list -- --json node
// server.js), which would otherwise fail to start as the program
// "--json". A program found under such a name is started all the same.
func checkServerCommand(server []string, example string) error {
	if len(server) == 0 {
		return nil
	}
	w := server[0]
	switch {
	case strings.TrimSpace(w) == "":
		return usageErrorf("the server command after -- is empty: give the program to start, e.g. %s -- node server.js", example)
	case isURLWord(w) && !programFound(w):
		return usageErrorf("the server command after -- is a URL, %s: a server at a URL is given with --url URL instead", transport.QuoteExcerpt(transport.RedactURL(w)))
	case len(w) > 1 && w[0] == '-' && !programFound(w):
		return usageErrorf("the server command after -- starts with %s, a flag: mcpx's flags go before the -- (everything after it is the server's command line, as you would run it yourself)", transport.QuoteExcerpt(w))
	}
	return nil
}

// isURLWord reports whether w begins as a server URL does (a scheme is
// case-insensitive: HTTP://host is one).
func isURLWord(w string) bool {
	l := strings.ToLower(w)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "unix://")
}

// programFound reports whether name is a program that can be started:
// a file at a path, or a program on $PATH.
func programFound(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// lineConn is the connection description of a REPL line: a line cannot
// choose a server or shape a session (the REPL's session is open), so it
// is the description no flag chose, with the REPL's client features.
func lineConn(feat featuresDesc) connDesc {
	return connDesc{
		stdio:   stdioDesc{stderr: "show", grace: transport.DefaultCloseGrace},
		http:    httpDesc{mode: transport.ModeAuto, header: http.Header{}},
		session: sessionDesc{maxMessageSize: transport.DefaultMaxMessageSize, timeout: defaultTimeout, maxTimeout: defaultMaxTimeout},
		feat:    feat,
	}
}

// pipeWaitNote is what tells the person that reading the file flag names
// waits for the writer of a named pipe (userfile.Read's onWait): mcpx
// would otherwise seem to hang.
func pipeWaitNote(console *tui.Console, flag string) func(path string) {
	if console == nil {
		return nil
	}
	return func(path string) {
		console.Note(fmt.Sprintf("waiting for the named pipe %s (%s) to be written; Ctrl-C stops", path, flag))
	}
}

// fileFlagError is the error for a file that flag names and that could
// not be read: a usage error, unless ctx ended the read (an interruption:
// Ctrl-C during the wait for a named pipe's writer).
func fileFlagError(ctx context.Context, flag string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return usageErrorf("%s: %v", flag, err)
}
