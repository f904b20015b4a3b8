package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/internal/listenguard"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// validate checks --record, --record-mode (and $MCPX_RECORD), --stable,
// --redact, --no-redact, --ignore and --normalize.
func (f recordFlags) validate(getenv func(string) string) (recordDesc, error) {
	d := recordDesc{file: f.file, force: f.force, redact: f.redact, noRedact: f.noRedact, ignore: f.ignore, stable: f.stable}
	switch {
	case f.mode != "":
		m, err := record.ParseMode(f.mode)
		if err != nil {
			return d, usageErrorf("--record-mode: %v", err)
		}
		if f.file == "" {
			return d, usageErrorf("--record-mode applies to a recording: give --record FILE")
		}
		d.mode, d.modeFlag = m, true
	case getenv(record.ModeEnv) != "" && f.file != "" && !f.force:
		m, err := record.ParseMode(getenv(record.ModeEnv))
		if err != nil {
			return d, usageErrorf("%s: %v", record.ModeEnv, err)
		}
		d.mode = m
	}
	if d.modeFlag && f.force {
		return d, usageErrorf("--force and the record mode %s contradict each other (mode update records the session again in place of its old recording)", d.mode)
	}
	if f.noRedact && len(f.redact) > 0 {
		return d, usageErrorf("--redact and --no-redact contradict each other; give one")
	}
	if _, err := record.ParsePaths(f.redact); err != nil {
		return d, usageErrorf("--redact: %v", err)
	}
	if _, err := record.ParseIgnores(f.ignore); err != nil {
		return d, usageErrorf("--ignore: %v", err)
	}
	for _, s := range f.normalize {
		n, err := parseNormalizer(s)
		if err != nil {
			return d, usageErrorf("--normalize %q: %v", s, err)
		}
		d.normalizers = append(d.normalizers, n)
	}
	if f.file != "" {
		if fi, err := os.Stat(f.file); err == nil && fi.IsDir() {
			return d, usageErrorf("--record %s: that is a directory; give a file name", f.file)
		}
	}
	return d, nil
}

// parseNormalizer reads a --normalize value: the name of a built-in
// normalizer, or RE=PLACEHOLDER (the last = separates them, so that the
// expression may hold one).
func parseNormalizer(s string) (record.Normalizer, error) {
	var n record.Normalizer
	switch s {
	case record.BuiltinUUID, record.BuiltinTimestamp, record.BuiltinSessionID:
		n.Builtin = s
	default:
		i := strings.LastIndex(s, "=")
		if i <= 0 {
			return n, fmt.Errorf("expected RE=PLACEHOLDER or a built-in (%s, %s, %s)", record.BuiltinUUID, record.BuiltinTimestamp, record.BuiltinSessionID)
		}
		n.Pattern, n.Replace = s[:i], s[i+1:]
	}
	if _, err := record.CompileNormalizers([]record.Normalizer{n}, nil); err != nil {
		return n, err
	}
	return n, nil
}

// recordOptions describe the trace for --record: its header and what to
// redact (the bearer token, credential headers and OAuth client secrets
// given on the command line are removed wherever they appear, and so are
// the secret values of the server's command line and environment).
func (d connDesc) recordOptions(transportName, target string) record.RecorderOptions {
	return record.RecorderOptions{
		Header: record.Header{Mcpx: Version(), Transport: transportName, Target: target,
			Ignore: d.rec.ignore, Normalize: d.rec.normalizers},
		Redact:  record.RedactOptions{Disabled: d.rec.noRedact, Paths: d.rec.redact, Secrets: d.sentSecrets(), Values: d.commandSecrets()},
		Session: record.SessionInfo{Name: d.rec.sessionName()},
		Stable:  d.rec.stable,
	}
}

// sentSecrets returns the credentials the connection sends that the
// command line or the environment gave: the bearer token, the values of
// credential headers (and the credential after an Authorization
// header's scheme), the OAuth client secrets and stored tokens, and
// those of the server's URL (its password, its secret query parameters: transport.URLSecrets),
// which a server echoing the request it got would show too.
func (d connDesc) sentSecrets() []string {
	secrets := transport.URLSecrets(d.http.url)
	if d.http.bearer != "" {
		secrets = append(secrets, d.http.bearer)
	}
	secrets = append(secrets, d.http.stored...)
	for _, s := range []string{d.oauth.clientSecret, d.oauth.idpClientSecret} {
		if s != "" {
			secrets = append(secrets, s)
		}
	}
	for _, h := range d.http.headerLines {
		name, value, _ := strings.Cut(h, ":")
		if credentialHeader(name) {
			value = strings.TrimSpace(value)
			secrets = append(secrets, value)
			if _, tok, ok := strings.Cut(value, " "); ok {
				secrets = append(secrets, strings.TrimSpace(tok))
			}
		}
	}
	return secrets
}

// knownSecrets returns the secrets of d for verify to redact from the live
// server's messages (and verify --update from the trace it writes), as a
// recording redacts them: those it sends (sentSecrets) and those of the
// server's command line (commandSecrets); the access tokens OAuth presents
// are added as they are (see toldAuth).
func (d connDesc) knownSecrets() *record.Secrets {
	return record.NewSecrets(d.sentSecrets(), d.commandSecrets())
}

// secretFlag matches a command-line option whose value looks secret:
// --token X, --api-key=X, -password X.
var secretFlag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^--?[\w.-]*(token|secret|password|passwd|api[_-]?key|credential)[\w.-]*$`)
})

// secretAssignment matches the NAME of a NAME=VALUE argument whose value
// looks secret: an option (--token=X), an environment variable given to
// env (env GITHUB_TOKEN=X node server.js), a tool argument
// (tools call login password=X, api_key:=X).
var secretAssignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^-{0,2}[\w.-]*(token|secret|password|passwd|api[_-]?key|credential)[\w.-]*:?$`)
})

// commandLine renders a command line for a trace (a server's in its
// header, a command's in its session name), with the values of options
// and assignments that look secret removed.
func commandLine(args []string) string {
	out := make([]string, len(args))
	for i := range args {
		_, out[i], _ = secretArg(args, i)
	}
	return strings.Join(out, " ")
}

// stdioTarget describes a stdio server run with the command line server,
// as mcpx info, -v and mcpx sessions show it: the values of its options
// that look secret (--api-key X) are left out, as a trace leaves them
// out (commandLine), since what is shown is pasted into bug reports.
func stdioTarget(server []string) string {
	return "stdio: " + commandLine(server)
}

// secretArg says whether args[i] holds a secret value (see commandLine):
// the value, and the argument as a trace shows it.
func secretArg(args []string, i int) (value, shown string, ok bool) {
	a := args[i]
	if name, v, ok := strings.Cut(a, "="); ok && (secretAssignment().MatchString(name) || envName(name) && secretEnvName(name)) {
		return v, name + "=" + record.Placeholder, true
	}
	if i > 0 && secretFlag().MatchString(args[i-1]) && !strings.Contains(args[i-1], "=") {
		return a, record.Placeholder, true
	}
	if strings.Contains(a, "://") && transport.URLHoldsSecret(a) {
		// A URL with a password or a secret query parameter
		// (postgres://u:pw@h/db, --dsn=https://h/?token=…), shown as
		// every URL mcpx prints is.
		return a, transport.RedactURL(a), true
	}
	return "", a, false
}

// urlSecrets returns the credentials of the URL in a, an argument or a
// variable's value (postgres://u:pw@h/db, --dsn=postgres://…): a
// server may echo its password alone.
func urlSecrets(a string) []string {
	i := strings.Index(a, "://")
	if i < 0 {
		return nil
	}
	start := strings.LastIndexAny(a[:i], "= \t'\"") + 1
	return transport.URLSecrets(a[start:])
}

// toldAuth tells the credentials OAuth presents with each request, before
// the request goes out, to what must not show them (a recorder's Secret,
// verify's record.Secrets): a server may echo its access token (a whoami
// tool), and neither a trace nor verify's report may keep it.
type toldAuth struct {
	*oauthflow.Authorizer
	tell func(string)
}

// Authorization is the Authorizer's, told.
func (a toldAuth) Authorization(ctx context.Context) (string, error) {
	v, err := a.Authorizer.Authorization(ctx)
	a.told(v)
	return v, err
}

// AuthorizeRequest is the Authorizer's (transport.RequestAuthorizer),
// told.
func (a toldAuth) AuthorizeRequest(ctx context.Context, req *http.Request) error {
	err := a.Authorizer.AuthorizeRequest(ctx, req)
	a.told(req.Header.Get("Authorization"))
	return err
}

// told tells an Authorization header's value and its credential (after
// the scheme).
func (a toldAuth) told(v string) {
	if v == "" {
		return
	}
	a.tell(v)
	if _, cred, ok := strings.Cut(v, " "); ok {
		a.tell(strings.TrimSpace(cred))
	}
}

// commandSecrets returns the secret values of the server's command line
// and of mcpx's own arguments (those commandLine hides: --token X,
// token=X) and of the server's environment (--env, a configured server's
// env, and for a server command what it inherits of mcpx's: named as
// commandLine's assignments): the server may print them, and
// the session's name may hold one again under another name, so a trace
// looks for them everywhere (record.RedactOptions.Values).
func (d connDesc) commandSecrets() []string {
	var out []string
	for _, args := range [][]string{d.server, d.rec.args} {
		for i := range args {
			if v, _, ok := secretArg(args, i); ok {
				out = append(out, v)
				out = append(out, urlSecrets(v)...)
			}
		}
	}
	out = append(out, secretValues(d.stdio.env)...)
	if d.http.url == "" {
		out = append(out, d.stdio.inherited...)
	}
	return out
}

// secretValues are the values of the NAME=VALUE entries of env whose
// names look secret (as commandLine's assignments, or secretEnvName's) and
// of those holding a URL with a credential. Most names of an environment
// are not: they are passed over without the expression.
func secretValues(env []string) []string {
	var out []string
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if ok && strings.Contains(v, "://") && transport.URLHoldsSecret(v) {
			// DATABASE_URL=postgres://u:pw@h/db
			out = append(out, v)
			out = append(out, urlSecrets(v)...)
			continue
		}
		if !ok || v == "" || !mayBeSecretName(name) {
			continue
		}
		if secretAssignment().MatchString(name) || secretEnvName(name) {
			out = append(out, v)
		}
	}
	return out
}

// secretEnvName reports a variable's name with a word KEY or AUTH
// (STRIPE_KEY, PRIVATE_KEY, MY_AUTH), which mcpx servers show hides the
// value of too: in a variable's name, unlike a tool's argument (key=…, a
// lookup's), such a word names a credential. A word, not a part of one:
// KEYBOARD_LAYOUT and XAUTHORITY are not.
func secretEnvName(name string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if w == "key" || w == "auth" {
			return true
		}
	}
	return false
}

// envName reports whether name, of a NAME=VALUE word of a command line,
// is an environment variable's as one is written (STRIPE_KEY, in capitals:
// env STRIPE_KEY=… node s.js), which secretEnvName's words make secret as
// they do in the server's environment; a tool's argument (key=…, a
// lookup's) is not one.
func envName(name string) bool {
	return name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) < 0
}

// mayBeSecretName reports whether name holds a word of secretAssignment's
// or secretEnvName's (token, secret, password, passwd, api key,
// credential, key, auth), in any case.
func mayBeSecretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"token", "secret", "passw", "key", "credential", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// credentialHeader reports header names whose values are secrets: those
// mcpx servers show hides (secretName: X-Auth, X-Credential, Authorization,
// X-Api-Key…) but Mcp-Session-Id, the session the server chose, which the
// transport sends and shows itself.
func credentialHeader(name string) bool {
	n := strings.TrimSpace(name)
	return secretName().MatchString(n) && !strings.EqualFold(n, "Mcp-Session-Id")
}

// recorder opens the trace for --record (nil without it). It is closed
// with the client, after the session, so that it holds everything. In a
// record mode that replays the session instead, it returns the number of
// the recorded session to serve (and no recorder).
func (k *connector) recorder(ctx context.Context, c *client, d connDesc, out output) (*record.Recorder, int, error) {
	if d.rec.file == "" {
		return nil, 0, nil
	}
	o := d.recordOptions(d.traceTarget())
	if d.rec.mode != "" {
		plan, err := d.rec.mode.Plan(d.rec.file, recordedName(o))
		if err != nil {
			return nil, 0, recordModeError(err)
		}
		if !plan.Record {
			if out.verbose {
				c.console.Note(fmt.Sprintf("record mode %s: replaying session %d of %s; the server is not started", d.rec.mode, plan.Session, d.rec.file))
			}
			return nil, plan.Session, nil
		}
		// A session recorded again takes its old recording's place.
		o.Replace = true
	}
	rec, err := d.rec.openTrace(ctx, d.rec.file, o)
	if err != nil {
		return nil, 0, recordCreateError(err)
	}
	c.closers = append(c.closers, func() error { return closeRecorder(c.console, rec, d.rec.file, out.verbose) })
	return rec, 0, nil
}

// traceTarget names the transport and the server for a trace's header.
func (d connDesc) traceTarget() (transportName, target string) {
	if d.at.name != "" {
		return "stdio", "stdio: " + commandLine([]string{"@" + d.at.name})
	}
	if d.http.url != "" {
		return "http", "http: " + transport.RedactURL(d.http.url)
	}
	return "stdio", "stdio: " + commandLine(d.server)
}

// openTrace opens name for recording: a new session at the end of an
// existing trace, or a new trace (replacing the file with --force).
func (d recordDesc) openTrace(ctx context.Context, name string, o record.RecorderOptions) (*record.Recorder, error) {
	if d.force {
		o.Overwrite = true
		return record.Create(ctx, name, o)
	}
	return record.Append(ctx, name, o)
}

// recordCreateError reports a trace that could not be started: a usage
// error (the file given is not one mcpx may add to), unless the file could
// not be created or written (a missing directory, a full disk: an output
// that could not be written, exit 1 as for -o; another process that held
// the trace's lock too long) or the run was interrupted while a FIFO or
// the lock was waited for.
func recordCreateError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var rm *record.RedactionMismatchError
	var pe *fs.PathError
	var errno syscall.Errno
	switch {
	case errors.Is(err, record.ErrNotTrace):
		return usageErrorf("--record: %v (it is not replaced without --force)", err)
	case errors.As(err, &rm):
		return usageErrorf("--record: %v (--force replaces it)", err)
	case errors.As(err, &pe), errors.As(err, &errno), errors.Is(err, record.ErrLocked):
		return fmt.Errorf("--record: %w", err)
	}
	return usageErrorf("--record: %v", err)
}

// closeRecorder finishes the trace of file; a trace that could not be
// written whole is an error.
func closeRecorder(con *tui.Console, rec *record.Recorder, file string, verbose bool) error {
	n := rec.Events()
	if err := rec.Close(); err != nil {
		return fmt.Errorf("--record %s: the trace is incomplete: %w", file, err)
	}
	if n == 0 {
		con.Note(fmt.Sprintf("nothing was recorded; %s was left as it was", file))
	} else if verbose {
		con.Note(fmt.Sprintf("recorded %d events to %s", n, file))
	}
	return nil
}

// finishRecording closes rec (when there is one) at the end of a command
// that returned *err. A trace that could not be written is the command's
// error when it succeeded or was interrupted (the usual end of a proxy);
// beside another error it is a warning.
func finishRecording(con *tui.Console, rec *record.Recorder, file string, verbose bool, err *error) {
	if rec == nil {
		return
	}
	cerr := closeRecorder(con, rec, file, verbose)
	switch {
	case cerr == nil:
	case *err == nil || errors.Is(*err, context.Canceled):
		*err = cerr
	default:
		con.Warn(cerr.Error())
	}
}

// teeObserver sends transport events to show and, when recording, to rec.
func teeObserver(show transport.Observer, rec *record.Recorder) transport.Observer {
	if rec == nil {
		return show
	}
	return func(ev transport.Event) {
		rec.Observe(ev)
		if show != nil {
			show(ev)
		}
	}
}

// teeFrames records frames to rec (when recording), then shows them with
// show (when set); nil when neither.
func teeFrames(rec *record.Recorder, show transport.FrameFunc) transport.FrameFunc {
	switch {
	case rec == nil:
		return show
	case show == nil:
		return rec.Frame
	}
	return func(t time.Time, dir transport.Direction, f transport.Frame) {
		rec.Frame(t, dir, f)
		show(t, dir, f)
	}
}

// readTrace reads a trace named on the command line; a file that cannot
// be read as a trace is the user's to fix (a usage error).
func readTrace(con *tui.Console, name string, maxMessageSize int64) (*record.Trace, error) {
	tr, err := record.ReadOptions{MaxMessageSize: maxMessageSize}.ReadFile(name)
	if err != nil {
		return nil, &usageError{err: err}
	}
	for _, w := range tr.Warnings {
		con.Warn(name + ": " + w)
	}
	return tr, nil
}

// openTraceToUse opens a trace named on the command line for a command
// that applies its header's settings (verify, replay, trace diff): a file
// that cannot be read as a trace, or whose header holds a setting that
// cannot be used (record.Header.Check), is the user's to fix, a usage
// error naming it, said before anything starts. What the reader tolerated
// is warned about.
func openTraceToUse(con *tui.Console, name string, opts record.ReadOptions) (*record.TraceFile, error) {
	tf, err := opts.Open(name)
	if err != nil {
		return nil, &usageError{err: err}
	}
	if err := tf.Header.Check(); err != nil {
		tf.Close()
		return nil, usageErrorf("%s: %w", name, err)
	}
	for _, w := range tf.Warnings {
		con.Warn(name + ": " + w)
	}
	return tf, nil
}

// traceFiles returns the traces named: each file, for a directory the
// *.jsonl files in it, in order, and for a pattern that names no file
// what it matches, each as if named (a shell may not expand a pattern: on
// Windows none does; a directory it matches stands for its traces, as
// when a shell expanded the pattern). Every entry named so is one: one
// that cannot be read as a trace (a symbolic link to nothing, a
// directory, a named pipe) is an error naming it when it is opened, as it
// is when named, rather than a trace left out without a word.
func traceFiles(names []string) ([]string, error) {
	var out []string
	for _, name := range names {
		_, err := os.Stat(name)
		if errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(name, "*?[") {
			// A pattern no shell expanded: Windows' do not (PowerShell,
			// cmd), and a POSIX shell passes on one that matches nothing.
			matches, gerr := filepath.Glob(name)
			if gerr != nil {
				out = append(out, name) // (no pattern: opening it says it is not there)
				continue
			}
			if len(matches) == 0 {
				return nil, usageErrorf("%s matches no file", name)
			}
			for _, m := range matches {
				if out, err = appendTraces(out, m); err != nil {
					return nil, err
				}
			}
			continue
		}
		if out, err = appendTraces(out, name); err != nil {
			return nil, err
		}
	}
	// A trace named twice (traces/*.jsonl and traces, ./a.jsonl and
	// a.jsonl) is verified once, under its first name: twice, it took
	// twice the time and its suites were in the JUnit report twice
	// under one name, which a CI reporter merges.
	seen := make(map[string]bool, len(out))
	kept := out[:0]
	for _, f := range out {
		key := f
		if abs, err := filepath.Abs(f); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			kept = append(kept, f)
		}
	}
	return kept, nil
}

// sameFile reports whether the names a and b lead to one file: the same
// path, or two names (a symbolic link, another spelling) of one existing
// file. Two outputs of one command, or an output and a trace it reads,
// that are one file would destroy what the user keeps: the second write
// replaces the first (a JUnit report in place of the trace verified, -o's
// contents in place of the trace), or lines of another kind go into the
// trace (--server-stderr appends), so such a command is refused before it
// starts. An empty name and "-" (stdout) are no file.
func sameFile(a, b string) bool {
	if a == "" || b == "" || a == "-" || b == "-" {
		return false
	}
	if fa, err := os.Stat(a); err == nil {
		fb, err := os.Stat(b)
		return err == nil && os.SameFile(fa, fb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// ---- mcpx proxy ----

type proxyOptions struct {
	e           *env
	listen      string
	allowOrigin []string
}

func newProxyCmd(e *env) *cobra.Command {
	o := &proxyOptions{e: e}
	c := &cobra.Command{
		Use: "proxy [--record FILE] [flags] -- <server command> | proxy --listen ADDR --url UPSTREAM [--record FILE] [flags]",
		Long: `proxy sits between an MCP host (an IDE, a desktop assistant) and a server and
records their session with --record FILE.

stdio: configure the host to launch "mcpx proxy --record FILE -- <server command>"
instead of the server. Every line is forwarded unchanged in both directions and
the server's stderr is passed through; the proxy ends when either side does,
and never leaves the server running.

HTTP: "mcpx proxy --listen 127.0.0.1:PORT --url UPSTREAM" is a reverse proxy for
Streamable HTTP (POST, GET, DELETE; SSE streamed through as it comes) and for
the older HTTP+SSE transport (its endpoint event is rewritten to point at the
proxy). Point the host at http://127.0.0.1:PORT/ (or the upstream's path). The
host's headers are passed on; -H and --bearer add to them. The proxy listens on
loopback unless ADDR names another interface. Stop it with Ctrl-C.

The listener answers only requests addressed to it (Host localhost, 127.0.0.1
or [::1] at its port) and refuses requests from web pages (an Origin header)
other than its own; --allow-origin ORIGIN admits a browser-based client.`,
		Example: `  mcpx proxy --record session.jsonl -- node server.js
  mcpx proxy --listen 127.0.0.1:7000 --url https://mcp.example.com/mcp --record session.jsonl`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 0, 0); err != nil {
				return err
			}
			return o.run(c.Context(), server)
		},
	}
	c.Flags().StringVar(&o.listen, "listen", "", "serve an HTTP reverse proxy for --url on `ADDR` (host:port; the host defaults to 127.0.0.1)")
	addAllowOrigin(c, &o.allowOrigin)
	// It forwards frames as they come: no session of its own (timeouts,
	// protocol, client features), no OAuth (the host's headers pass
	// through), and its HTTP upstream is reached as it is (no
	// --transport, --ca-cert or --insecure). It records every session
	// it forwards (no --record-mode).
	return readsGlobals(c, "forwards frames between a host and a server as they come, recording every session",
		"@server", "url", "header", "bearer", "record", "force", "stable", "redact", "no-redact", "ignore", "normalize",
		"wire", "verbose", "max-message-size")
}

func (o *proxyOptions) run(ctx context.Context, server []string) (err error) {
	e := o.e
	d, out := e.cfg.conn, e.cfg.out
	con := e.console()
	origins, err := allowedOrigins(o.allowOrigin, o.listen)
	if err != nil {
		return err
	}
	if d.named.ref != "" {
		// A configured server: its command, started by the proxy.
		if o.listen != "" {
			return usageErrorf("-s with --listen: give the upstream with --url URL")
		}
		rd, err := e.connFor(ctx, d, server, "mcpx proxy")
		if err != nil {
			return err
		}
		if rd.http.url != "" {
			return usageErrorf("-s %s names a server at a URL: mcpx proxy --listen ADDR --url %s proxies it", d.named.ref, rd.http.url)
		}
		d, server = rd, rd.server
	}
	if o.listen != "" || d.http.url != "" {
		if o.listen == "" || d.http.url == "" {
			return usageErrorf("the HTTP proxy needs both --listen ADDR and --url UPSTREAM")
		}
		if len(server) > 0 {
			return usageErrorf("give either --listen with --url, or a server command after --, not both")
		}
		return o.runHTTP(ctx, con, origins)
	}
	if len(server) == 0 {
		return usageErrorf("no server given: put the server command after --, e.g. mcpx proxy --record t.jsonl -- node server.js")
	}
	if err := checkServerCommand(server, "mcpx proxy --record t.jsonl"); err != nil {
		return err
	}
	d.server = server
	var rec *record.Recorder
	if d.rec.file != "" {
		r, cerr := d.rec.openTrace(ctx, d.rec.file, d.recordOptions(d.traceTarget()))
		if cerr != nil {
			return recordCreateError(cerr)
		}
		rec = r
		defer finishRecording(con, rec, d.rec.file, out.verbose, &err)
	}
	var stderr io.Writer = e.ios.ErrOut
	switch d.stdio.stderr {
	case "show":
	case "hide":
		stderr = nil
	default:
		f, oerr := openServerStderr(ctx, d.stdio.stderr)
		if oerr != nil {
			return oerr
		}
		defer func() {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		stderr = f
	}
	po := record.StdioProxyOptions{
		Server: transport.StdioOptions{Command: server[0], Args: server[1:], Env: d.stdio.env, Dir: d.stdio.dir,
			CloseGrace: d.stdio.grace, MaxMessageSize: d.session.maxMessageSize},
		In:     e.ios.In,
		Out:    e.ios.Out,
		Stderr: stderr,
	}
	var wire transport.FrameFunc
	if out.wire {
		wire = redactedWire(con, d.knownSecrets())
	}
	if rec != nil {
		po.OnEvent = rec.Observe
	}
	po.OnFrame = teeFrames(rec, wire)
	return record.ProxyStdio(ctx, po)
}

// redactedWire shows the frames a proxy forwards (--wire) without the
// secrets known holds (d.knownSecrets: the upstream credentials, the
// server's command line's; for an HTTP proxy also the host's, told as
// they come) where a server echoes them, as a connection's --wire does.
func redactedWire(con *tui.Console, known *record.Secrets) transport.FrameFunc {
	return func(t time.Time, dir transport.Direction, f transport.Frame) {
		f.Data = known.Frame(f.Data)
		con.Wire(t, dir, f)
	}
}

// loopbackAddr completes a --listen address: a bare port or ":port"
// listens on 127.0.0.1.
func loopbackAddr(addr string) (string, error) {
	given := addr
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageErrorf("--listen %q: expected host:port, e.g. 127.0.0.1:7000", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil && port != "" {
		// net.Listen would look a name up as a service ("unknown port").
		return "", usageErrorf("--listen %q: the port must be a number from 0 to 65535, e.g. 127.0.0.1:7000 (0: any free port)", given)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// addAllowOrigin declares --allow-origin on a command that can --listen.
func addAllowOrigin(c *cobra.Command, to *[]string) {
	stringsVar(c.Flags(), to, "allow-origin", "", "with --listen, admit requests from web pages of `ORIGIN` (scheme://host[:port], e.g. http://localhost:6274; repeatable)")
}

// allowedOrigins checks --allow-origin values (they need --listen).
func allowedOrigins(flags []string, listen string) ([]string, error) {
	if len(flags) > 0 && listen == "" {
		return nil, usageErrorf("--allow-origin applies to the HTTP listener: give --listen ADDR")
	}
	var out []string
	for _, f := range flags {
		o, err := listenguard.ParseOrigin(f)
		if err != nil {
			return nil, usageErrorf("--allow-origin: %v", err)
		}
		out = append(out, o)
	}
	return out, nil
}

// refusalLimit bounds how many refused requests a listener reports: a web
// page can send them in a loop.
const refusalLimit = 10

// reportRefusal tells the user why a listener refused a request, and what
// to do when the client is theirs.
func reportRefusal(con *tui.Console, r listenguard.Refusal, last bool) {
	msg := r.String()
	switch r.Reason {
	case listenguard.BadHost:
		msg += " (address it as localhost or 127.0.0.1 at its port; another name can be a web page's, pointed here by DNS rebinding)"
	case listenguard.BadOrigin:
		msg += " (to let a browser-based client of that origin in, start mcpx with --allow-origin ORIGIN)"
	}
	if last {
		msg += "; further refused requests are not reported"
	}
	con.Warn(msg)
}

func isLoopback(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves h on addr until ctx ends, saying where on stderr. The
// listener follows the rule of every local listener (package listenguard),
// admitting the web origins allow besides its own. stop, when set, is
// told why ctx ended before the connections still open are closed.
func serveHTTP(ctx context.Context, con *tui.Console, addr string, allow []string, h http.Handler, what string, stop func(why string)) error {
	addr, err := loopbackAddr(addr)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return &listenError{addr: addr, err: err}
	}
	guard, err := listenguard.New(h, listenguard.Options{Addr: l.Addr(), AllowOrigins: allow,
		OnRefuse: listenguard.Throttle(refusalLimit, func(r listenguard.Refusal, last bool) { reportRefusal(con, r, last) })})
	if err != nil {
		l.Close()
		return err
	}
	if !isLoopback(addr) {
		con.Warn("listening on " + addr + ", which is not a loopback address: other machines can reach it")
	}
	// Headers must arrive within 10s (a request body's bytes within 30s
	// of each other: the handlers see to that); a kept-alive connection
	// with no request is closed after 2 minutes, so that idle clients do
	// not pile up.
	srv := &http.Server{Handler: guard, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	con.Note(fmt.Sprintf("%s on http://%s/ (Ctrl-C to stop)", what, l.Addr()))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if stop != nil {
		why := "interrupted"
		if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
			why = err.Error()
		}
		stop(why)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	<-errc // Serve has returned
	return context.Cause(ctx)
}

// listenError is a listener that could not be opened. It exits as a
// connection failure (4) and says what to do about the usual causes.
type listenError struct {
	addr string
	err  error
}

func (e *listenError) Error() string { return e.message(runtime.GOOS) }

// Winsock's codes (winerror.h) for the errors listenError explains: on
// Windows, syscall.EADDRINUSE and EADDRNOTAVAIL are numbers Go invents,
// which errors.Is does not match with these.
const (
	wsaEADDRINUSE    syscall.Errno = 10048
	wsaEADDRNOTAVAIL syscall.Errno = 10049
)

// message is Error on the system goos. (Windows' WSAEACCES is no
// privileged port, which Windows does not have, but a port it reserves:
// its own message says so better.)
func (e *listenError) message(goos string) string {
	win := goos == "windows"
	switch {
	case errors.Is(e.err, syscall.EADDRINUSE), win && errors.Is(e.err, wsaEADDRINUSE):
		return "--listen " + e.addr + ": the address is in use (another process listens on it): give another port, or port 0 for any free one"
	case errors.Is(e.err, syscall.EADDRNOTAVAIL), win && errors.Is(e.err, wsaEADDRNOTAVAIL):
		return "--listen " + e.addr + ": no network interface of this machine has that address: give 127.0.0.1:PORT, or another address of this machine"
	case errors.Is(e.err, syscall.EACCES):
		return "--listen " + e.addr + ": not allowed to listen there (ports below 1024 need privileges): give a port from 1024, or 0 for any free one"
	}
	return "--listen " + e.addr + ": " + e.err.Error()
}

func (e *listenError) Unwrap() []error { return []error{transport.ErrConnect, e.err} }

func (o *proxyOptions) runHTTP(ctx context.Context, con *tui.Console, origins []string) (err error) {
	e := o.e
	d, out := e.cfg.conn, e.cfg.out
	var rec *record.Recorder
	if d.rec.file != "" {
		r, cerr := d.rec.openTrace(ctx, d.rec.file, d.recordOptions(d.traceTarget()))
		if cerr != nil {
			return recordCreateError(cerr)
		}
		rec = r
		defer finishRecording(con, rec, d.rec.file, out.verbose, &err)
	}
	header := d.http.header.Clone()
	if b := d.http.sentBearer(); b != "" {
		header.Set("Authorization", "Bearer "+b)
	}
	po := record.HTTPProxyOptions{Upstream: d.http.url, Header: header, MaxMessageSize: d.session.maxMessageSize}
	var wire transport.FrameFunc
	var show transport.Observer
	if out.wire {
		// The host's credentials (its Authorization header, its
		// cookies) are told as its requests come, before they are
		// forwarded: the server may echo them.
		known := d.knownSecrets()
		po.OnSecret = known.Add
		wire = redactedWire(con, known)
		show = func(ev transport.Event) {
			// The proxy's events quote upstream URLs as requested; the
			// recorder redacts its copy, and so does the screen.
			ev.Text = transport.RedactURLs(ev.Text)
			con.Event(ev)
		}
	}
	// The proxy records a session per host connection.
	po.OnFrame, po.OnEvent, po.Recorder = wire, show, rec
	po.Tell = con.Tell
	p, err := record.NewHTTPProxy(po)
	if err != nil {
		return usageErrorf("--url: %v", err)
	}
	what := "proxying " + transport.RedactURL(d.http.url)
	if rec != nil {
		what += ", recording to " + d.rec.file + ","
	}
	return serveHTTP(ctx, con, o.listen, origins, p, what, p.Stop)
}

// ---- mcpx replay ----

type replayOptions struct {
	e           *env
	listen      string
	allowOrigin []string
	ignore      []string
	strict      bool
	session     int
	pace        string
	faults      []string
}

func newReplayCmd(e *env) *cobra.Command {
	o := &replayOptions{e: e}
	c := &cobra.Command{
		Use: "replay FILE [--listen ADDR] [--session N] [--ignore [METHOD:]JSONPATH]... [--normalize RE=PLACEHOLDER]... [--strict] [--pace recorded[*F]] [--fault SELECTOR:ACTION]...",
		Long: `replay plays the server side of a trace back to a live client, over stdio
(launch it as the server: mcpx tools list -- mcpx replay t.jsonl) or, with
--listen ADDR, over Streamable HTTP.

Each new client connection is served one session of the trace: the next one
not served yet that holds what the client sends (--session N pins one). Each
request is answered with the recorded response to the request with the same
method and params (ids, _meta and the client's identity do not matter; absent
params are {}; --ignore [METHOD:]JSONPATH, evaluated against the whole message,
and --normalize RE=PLACEHOLDER (or uuid, timestamp, session-id) relax the
match, as do the ignores and normalizers stored in the trace), and the
notifications and requests the server sent while handling it come with it:
pipelined and concurrent requests each get their own answers, in any order. A
request the trace has no answer for gets a JSON-RPC error that says what the
trace expected. With --strict, a departure from the recording (an unrecorded
or repeated message, a request sent before one whose answer the recorded
client had) ends the replay with exit code 7; what any conforming client may
do differently (its identity and capabilities, a server/discover probe of a
handshake-era recording) is reported as a warning only. Where the recorded
server went away (it crashed or exited mid-request), the replay goes away too:
over stdio it exits with the recorded server's exit code, and the client sees
its server's output end at once; over HTTP the POST of that request closes
without an answer.

A recording of the stateless 2026-07-28 era (--protocol-era modern) is served
over HTTP as such a server would: without sessions, each request's
MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers checked
against its body, server/discover answered from the recording.

--pace recorded replays at the recorded speed: each thing the server did comes
as long after the client message that caused it as in the recording
(recorded*0.5: twice as fast, recorded*2: half as fast; a trace without timing
is replayed at once, with a warning). Over stdio the answers keep the order of
the requests; over HTTP each answer comes whole at its recorded time.

--fault SELECTOR:ACTION makes the server misbehave at chosen requests, for
testing how a client copes (repeatable). SELECTOR is METHOD#N (the N-th request
of that method the replay receives, from 1), METHOD (each of them), #N (the
N-th request of any method) or * (every request); ACTION is delay=DURATION
(hold the answer back), close (close the connection: over stdio the replay
exits), error=CODE[,MESSAGE] (answer with that JSON-RPC error instead; a retry
gets the recorded answer) or http=STATUS (answer the POST with that HTTP
status; --listen only).

The HTTP listener answers only requests addressed to it (Host localhost,
127.0.0.1 or [::1] at its port) and refuses requests from web pages (an Origin
header) other than its own; --allow-origin ORIGIN admits a browser-based client.`,
		Example: `  mcpx tools list -- mcpx replay session.jsonl
  mcpx replay session.jsonl --listen 127.0.0.1:7001
  mcpx replay session.jsonl --session 2
  mcpx replay session.jsonl --ignore '$.params.arguments.timestamp'
  mcpx replay session.jsonl --pace recorded
  mcpx replay session.jsonl --fault 'tools/call#2:delay=5s' --fault 'tools/call#3:error=-32603,overloaded'
  mcpx replay session.jsonl --listen 127.0.0.1:7001 --fault 'tools/list:http=503'`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			if len(server) > 0 {
				return usageErrorf("replay serves the server recorded in %s; it takes no server command", own[0])
			}
			// 0 is the flag's default (no session chosen), never a
			// session given.
			if c.Flags().Changed("session") && o.session < 1 {
				return usageErrorf("--session %d: sessions are numbered from 1", o.session)
			}
			return o.run(c.Context(), own[0])
		},
	}
	c.Flags().StringVar(&o.listen, "listen", "", "serve Streamable HTTP on `ADDR` (host:port; the host defaults to 127.0.0.1) instead of stdio")
	addAllowOrigin(c, &o.allowOrigin)
	stringsVar(c.Flags(), &o.ignore, "ignore", "", "do not match the parts of messages `[METHOD:]JSONPATH` selects (repeatable)")
	c.Flags().BoolVar(&o.strict, "strict", false, "fail (exit 7) on any departure from the recording")
	c.Flags().IntVar(&o.session, "session", 0, "serve every client session `N` of the trace (default: each new client the session that matches it)")
	c.Flags().StringVar(&o.pace, "pace", "", "replay at the recorded speed: `recorded`, or recorded*F to scale its delays by F")
	stringsVar(c.Flags(), &o.faults, "fault", "", "misbehave at chosen requests: `SELECTOR:ACTION`, e.g. tools/call#2:delay=2s, tools/call:close, '#3:error=-32603,boom', tools/list:http=503 (repeatable)")
	ownsRecording(c)
	return readsGlobals(c, "serves the server recorded in a trace", "max-message-size", "normalize")
}

func (o *replayOptions) run(ctx context.Context, file string) error {
	e := o.e
	d := e.cfg.conn
	con := e.console()
	if _, err := record.ParseIgnores(o.ignore); err != nil {
		return usageErrorf("--ignore: %v", err)
	}
	origins, err := allowedOrigins(o.allowOrigin, o.listen)
	if err != nil {
		return err
	}
	// The trace is read a session at a time: replay holds the sessions
	// it serves, not the file.
	tf, err := openTraceToUse(con, file, record.ReadOptions{MaxMessageSize: d.session.maxMessageSize})
	if err != nil {
		return err
	}
	defer tf.Close()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var end *record.ServerEnd // where the recorded server went away (over stdio)
	opts := record.ReplayOptions{
		Ignore:    o.ignore,
		Normalize: d.rec.normalizers,
		Strict:    o.strict,
		OnDeviation: func(d record.Deviation) {
			switch {
			case !o.strict || !d.Failure:
				con.Warn("replay: " + d.Message)
			case o.listen != "":
				// Over HTTP the server stops; over stdio Serve returns it.
				cancel(&record.DeviationError{Deviation: d})
			}
		},
		OnStderr: func(line string) {
			// The recorded server's stderr, as it wrote it.
			fmt.Fprintln(e.ios.ErrOut, tui.EscapeLine(line))
		},
		MaxMessageSize: d.session.maxMessageSize,
		Session:        o.session,
		OnServerEnd:    func(se record.ServerEnd) { end = &se },
	}
	if err := o.misbehaviour(&opts, con.Warn); err != nil {
		return err
	}
	rp, err := record.NewReplayerSource(tf, opts)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if o.listen != "" {
		return serveHTTP(ctx, con, o.listen, origins, rp.Handler(), "replaying "+file, nil)
	}
	conn := transport.NewStreamLimit(e.ios.In, e.ios.Out, d.session.maxMessageSize)
	defer conn.Close()
	err = rp.Serve(ctx, conn)
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, record.ErrMismatch) {
		return cause
	}
	if err == nil && end != nil {
		// The replay stands in for the server process: it ends as the
		// recorded one did, silently (its stderr is the server's).
		if code := recordedExitCode(*end); code != 0 {
			return &exitStatus{code: code}
		}
	}
	return err
}

// recordedExitCode is the exit code of the recorded server process that
// went away (what `mcpx replay` exits with there): N for "exit status N";
// for a process killed by a signal, 128 plus its number, as a shell
// reports it; 1 when the trace does not say (an older trace, whose end
// the replay inferred); 0 for a server that only closed its output.
func recordedExitCode(end record.ServerEnd) int {
	if n, ok := strings.CutPrefix(end.Status, "exit status "); ok {
		if code, err := strconv.Atoi(n); err == nil && code >= 0 {
			return code
		}
		return ExitError
	}
	if name, ok := strings.CutPrefix(end.Status, "signal: "); ok {
		for sig := syscall.Signal(1); sig < 65; sig++ {
			if sig.String() == name {
				return 128 + int(sig)
			}
		}
		return ExitError
	}
	if end.Status == "" {
		return ExitError
	}
	return ExitOK
}

// ---- mcpx verify ----

type verifyOptions struct {
	e      *env
	junit  string
	update bool
	// parallel is how many traces of several are verified at once.
	parallel int
}

func newVerifyCmd(e *env) *cobra.Command {
	o := &verifyOptions{e: e}
	c := &cobra.Command{
		Use: "verify FILE... [--ignore [METHOD:]JSONPATH]... [--normalize RE=PLACEHOLDER]... [flags] -- <server command> | --url URL",
		Long: `verify re-sends the client side of a trace to a live server, answers the
server's own requests with the recorded answers, and compares what the server
does with what the recorded server did: every response (or HTTP refusal), the
notifications and requests the server sent while handling each request (in
order, method by method), and what it sent outside any request. Each session of
the trace is verified on a connection of its own: a new server process over
stdio, a new MCP session over HTTP.

Ids, session ids and timestamps are normalized; lists of tools, prompts,
resources and resource templates are compared by name (uri), so a renamed tool
is one difference. --ignore JSONPATH (evaluated against each whole message,
e.g. '$.result.serverInfo.version' or '$..timestamp'; METHOD:JSONPATH limits it
to one method's messages, METHOD:$ leaves its notifications out) and
--normalize RE=PLACEHOLDER (or uuid, timestamp, session-id) leave more out, in
addition to the ignores and normalizers stored in the trace when it was
recorded (mcpx ... --record FILE --ignore ... --normalize ...). Each difference
is printed with its session, exchange and path (--json: the result as one JSON
document); the exit code is 7 when anything differs, and 4 when the live server
could not be talked to (it could not be started or reached, its connection
ended before an answer; 6 when an answer did not come in time).

--junit FILE also writes a JUnit XML report for CI: one test suite per session,
one test case per exchange compared, a difference as the test case's failure
(its JSONPath, the recorded and the live value); a verification that could not
run (the server could not be started, a trace could not be read) is a test case
in error.

Several traces (mcpx verify traces/*.jsonl -- ..., or a directory: mcpx verify
traces -- ..., its *.jsonl files) are verified in turn, each report under its
file's name, then a line for all, naming those that differ; the exit code is 7
when any differs. Every file is read before any server starts; the run stops at a trace
that cannot be verified at all. --junit writes one report with the suites of
every trace; --json prints {"traces": [{"file", "result" or "error"}]}.
--parallel N verifies up to N traces at once, each on connections of its own;
what is printed is what verifying them one at a time prints, in the order of
the files (a trace's report waits for those before it).

Requests of the stateless 2026-07-28 era go out with the headers they were
recorded with (the route in the trace), and a multi-round request is retried
with the requestState the live server gave.

--update (or MCPX_RECORD=update) records the trace again from the live server
while verifying it: the differences are shown, and the new recording takes the
trace's place once every session has run, keeping the header's ignores,
normalizers, redactions and stable form (--stable makes it stable). A trace
the live server matches is left as it was, so that one under version control
changes only when the server did (--force records it again anyway). The exit
code is then 0 whatever changed; several traces end with a line saying how
many were recorded again and how many left as they were. When the live server could not be talked to
(it could not be started or reached, its connection ended, a request got no
answer in time) the file is left as it was, with that failure's exit code.`,
		Example: `  mcpx verify session.jsonl -- node server.js
  mcpx verify session.jsonl --ignore '$.result.serverInfo.version' --url http://127.0.0.1:3001/mcp
  mcpx verify session.jsonl --ignore 'tools/call:$.result._meta' --normalize uuid -- node server.js
  mcpx verify session.jsonl --junit report.xml -- node server.js
  mcpx verify traces/*.jsonl --junit report.xml -- node server.js
  mcpx verify traces/*.jsonl --parallel 8 -- node server.js
  mcpx verify session.jsonl --update -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, -1); err != nil {
				return err
			}
			return o.run(c.Context(), own, server)
		},
	}
	c.Flags().StringVar(&o.junit, "junit", "", "also write the result as a JUnit XML report to `FILE` (one test case per exchange, for CI)")
	c.Flags().IntVar(&o.parallel, "parallel", 1, "verify up to `N` traces at once, each on connections of its own (the reports are printed in the order of the files)")
	c.Flags().BoolVar(&o.update, "update", false, "record the trace again from the live server, in its place, keeping its header's ignores, normalizers and redactions (also MCPX_RECORD=update)")
	ownsRecording(c)
	// The server's requests get the recorded answers: mcpx offers the
	// server nothing of its own (no client features).
	return readsGlobals(c, "answers the server's requests from the trace",
		"@server", "@http", "@auth", "@session", "json", "wire", "verbose", "color", "@record")
}

func (o *verifyOptions) run(ctx context.Context, files []string, server []string) (err error) {
	e := o.e
	d, out := e.cfg.conn, e.cfg.out
	con := e.console()
	if o.parallel < 1 {
		return usageErrorf("--parallel %d: give the number of traces to verify at once, 1 or more", o.parallel)
	}
	if len(server) == 0 && d.http.url == "" && d.named.ref == "" && d.at.name == "" {
		// Said before the files are read: mcpx verify t.jsonl node s.js
		// is a server command without -- before it (forgotDash), not a
		// trace named node that does not exist.
		_, err := d.forServer(nil, "mcpx verify "+shellJoin(files))
		return &usageError{err: &strayArgsError{err: err}}
	}
	// A trace that cannot be read is a usage error, said before any
	// server starts; with --junit, the report says it too (an error test
	// case naming the file), so that CI does not show an older report.
	// The report is named after the trace when there is one, and after
	// the run when there are several, as a report of theirs is.
	unreadable := func(name string, several bool, err error) error {
		if o.junit != "" {
			report := filepath.Base(name)
			if several {
				report = ""
			}
			if jerr := writeJUnit(ctx, o.junit, report, 0, record.JUnitRun{Options: record.JUnitOptions{Name: filepath.Base(name), Err: err}}); jerr != nil {
				con.Warn(jerr.Error())
			}
		}
		return err
	}
	given := files
	if err := o.checkOutputs(given, d.rec.file); err != nil {
		return err
	}
	files, err = traceFiles(files)
	if err != nil {
		return unreadable(strings.Join(given, " "), len(given) > 1, err)
	}
	if err := o.checkOutputs(files, d.rec.file); err != nil {
		return err
	}
	if len(files) > 1 && d.rec.file != "" {
		return usageErrorf("--record records one session; give one trace to verify with it")
	}
	// Every trace is read before any is verified: a mistyped fifth name
	// is said at once, not after four servers ran. One trace stays open
	// for its verification; several are opened again, one at a time, so
	// that a directory of them does not hold a file each, and each is
	// verified only if it is still what was read (sums): a trace changed
	// meanwhile was verified as it had become, its header unchecked.
	var only *record.TraceFile
	sums := make(map[string][sha256.Size]byte, len(files))
	defer func() {
		if only != nil {
			only.Close()
		}
	}()
	// Every trace that cannot be read is said, not only the first: after
	// a merge that broke several, each run would otherwise name one more.
	var broken []string
	var brokenErrs []error
	for _, file := range files {
		tf, err := openTraceToUse(con, file, record.ReadOptions{MaxMessageSize: d.session.maxMessageSize, Sum: len(files) > 1})
		if err != nil && len(files) == 1 {
			return unreadable(file, false, err)
		}
		if err != nil {
			broken, brokenErrs = append(broken, file), append(brokenErrs, err)
			continue
		}
		if d.rec.file != "" && len(tf.Index) > 1 {
			tf.Close()
			return usageErrorf("--record: %s holds %d sessions; verify records one only", file, len(tf.Index))
		}
		if len(files) == 1 {
			only = tf
		} else {
			sums[file] = tf.Sum
			tf.Close()
		}
	}
	if len(broken) > 0 {
		return o.unreadableMany(ctx, con, files, broken, brokenErrs)
	}
	d, err = e.connFor(ctx, d, server, "mcpx verify "+strings.Join(files, " "))
	if err != nil {
		return err
	}
	update, err := o.updating(d)
	if err != nil {
		return err
	}
	if update {
		// The trace is replaced: it is not held open meanwhile.
		if only != nil {
			only.Close()
			only = nil
		}
		if len(files) > 1 && out.json {
			return usageErrorf("--update --json prints one trace's result; give one trace at a time")
		}
		if len(files) == 1 {
			_, err := o.runUpdate(ctx, e, files[0], nil, d, out)
			return err
		}
		return o.updateMany(ctx, files, sums, d, out)
	}
	// verify's own recording (--record) is a plain one.
	d.rec.mode = ""
	if only != nil {
		return o.verifyOne(ctx, files[0], only, d, out)
	}
	return o.verifyMany(ctx, files, sums, d, out)
}

// unreadableMany reports the traces among files that cannot be read
// (errs, one for each of names), before anything was verified: one of
// them as that error alone, as for one trace; several each on a line of
// its own, then the line for all (the error returned). The JUnit report
// holds a suite in error for each.
func (o *verifyOptions) unreadableMany(ctx context.Context, con *tui.Console, files, names []string, errs []error) error {
	if o.junit != "" {
		suite := junitNames(files)
		runs := make([]record.JUnitRun, len(names))
		for i, name := range names {
			runs[i] = record.JUnitRun{Options: record.JUnitOptions{Name: suite[name], Err: errs[i]}}
		}
		if jerr := writeJUnit(ctx, o.junit, "", 0, runs...); jerr != nil {
			con.Warn(jerr.Error())
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	for _, err := range errs {
		// (Redacted as the error mcpx ends with is.)
		con.Tell(o.e.secrets().Text(err.Error()))
	}
	return usageErrorf("%d of %d traces cannot be read (%s); none was verified", len(names), len(files), tui.NameSome(names))
}

// appendTraces appends to out the trace name names (see traceFiles): the
// name, or for a directory the *.jsonl files in it.
func appendTraces(out []string, name string) ([]string, error) {
	if fi, err := os.Stat(name); err != nil || !fi.IsDir() {
		return append(out, name), nil // (opening it says what is wrong)
	}
	entries, err := os.ReadDir(name)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, usageErrorf("%s: %v", name, pe.Err)
	} else if err != nil {
		return nil, usageErrorf("%s: %v", name, err)
	}
	n := len(out)
	for _, en := range entries {
		if !strings.HasSuffix(en.Name(), ".jsonl") {
			continue
		}
		out = append(out, filepath.Join(name, en.Name()))
	}
	if len(out) == n {
		return nil, usageErrorf("%s is a directory without traces (*.jsonl files)", name)
	}
	return out, nil
}

// checkOutputs refuses a --junit report or a --record trace that is one
// of the traces to verify, or both one file (see sameFile): the report
// would replace the trace (mcpx verify --junit traces/*.jsonl, the flag's
// value forgotten, makes the first trace the report's file), and a
// recording would add verify's own session to it (--update records a
// trace again). It runs on the names given, before a report of a trace
// that cannot be read is written, and on the traces a directory holds.
func (o *verifyOptions) checkOutputs(traces []string, rec string) error {
	for _, t := range traces {
		if sameFile(o.junit, t) {
			return usageErrorf("--junit %s is a trace to verify: the report would replace it; give the report a file of its own", o.junit)
		}
		if sameFile(rec, t) {
			return usageErrorf("--record %s is a trace to verify: verify's session would be added to it; record to another file (--update records the trace again)", rec)
		}
	}
	if sameFile(o.junit, rec) {
		return usageErrorf("--junit and --record both write to %s; give each its own file", rec)
	}
	if o.junit != "" && o.junit != "-" && record.IsTrace(o.junit) {
		return usageErrorf("--junit %s is an mcpx trace: the report would replace it; give the report's file name after --junit (--junit report.xml traces/*.jsonl)", o.junit)
	}
	return nil
}

// verifyFile verifies the sessions of the trace tf against the live
// server. closeErr is the first error closing what a session opened (a
// trace of --record).
func (o *verifyOptions) verifyFile(ctx context.Context, e *env, tf *record.TraceFile, d connDesc, out output) (res *record.VerifyResult, closeErr, err error) {
	timeout := d.session.timeout
	if timeout == 0 {
		timeout = d.session.maxTimeout
	}
	known := d.knownSecrets()
	dial := func(ctx context.Context, _ int, _ record.SessionInfo) (transport.Conn, error) {
		return e.sessionConn(ctx, d, out, attachments{secrets: known}, &closeErr)
	}
	res, err = record.VerifySessions(ctx, tf, nil, record.VerifyOptions{
		Ignore: d.rec.ignore, Normalize: d.rec.normalizers, Timeout: timeout, Dial: dial, Secrets: known})
	return res, closeErr, err
}

// verifyOne verifies one trace: its report, or its result as one JSON
// document.
func (o *verifyOptions) verifyOne(ctx context.Context, file string, tf *record.TraceFile, d connDesc, out output) error {
	e := o.e
	start := time.Now()
	res, closeErr, err := o.verifyFile(ctx, e, tf, d, out)
	if err == nil && res.Exchanges == 0 {
		return usageErrorf("%s holds no request with a recorded response: nothing to verify", file)
	}
	// A server that could not be talked to is the run's failure (exit 4,
	// 6 for a timeout), not a difference; its report is printed still.
	var lost error
	if res != nil && res.Lost != nil {
		lost = res.Lost
	}
	if o.junit != "" && res != nil {
		stopped := err
		if stopped == nil {
			stopped = lost
		}
		if jerr := writeJUnit(ctx, o.junit, filepath.Base(file), time.Since(start), record.JUnitRun{Result: res,
			Options: record.JUnitOptions{Name: filepath.Base(file), Time: time.Since(start), Err: stopped}}); jerr != nil {
			return jerr
		}
	}
	if res != nil && (err == nil || res.Exchanges > 0 || len(res.Mismatches) > 0) {
		// (A run that could not start has nothing to report: not
		// "✓ 0 exchange(s) verified".)
		if perr := e.printVerify(res, out.json); perr != nil {
			return perr
		}
	}
	if err != nil {
		return err
	}
	if closeErr != nil {
		return closeErr
	}
	if lost != nil {
		return lost
	}
	return res.Err()
}

// verifyMany verifies several traces in turn (a directory of them, in CI):
// each one's report under its name, then a line for all; with --json one
// document, {"traces": [{"file", "result" or "error"}]}; with --junit one
// report holding the suites of every trace. It stops at the first trace
// that cannot be verified (the server cannot be started, say), after
// reporting what was; the exit code is 7 when any trace differs. With
// --parallel N, N traces are verified at once, each on connections of its
// own, and what is printed is what verifying them one at a time prints
// (see inOrder).
func (o *verifyOptions) verifyMany(ctx context.Context, files []string, sums map[string][sha256.Size]byte, d connDesc, out output) error {
	e := o.e
	p := e.printer()
	start := time.Now()
	var (
		results  []verifiedTrace
		runs     []record.JUnitRun
		stop     error
		differ   int
		verified int
		// differNames names the traces that differ (in the total and the
		// error: the one among many is found without scrolling back).
		differNames []string
		empty       int
	)
	names := junitNames(files)
	job := func(ctx context.Context, i int, je *env) (verifiedTrace, bool) {
		v := o.verifyTrace(ctx, je, files[i], sums[files[i]], names[files[i]], d, out)
		return v, v.err != nil
	}
	inOrder(ctx, e, len(files), o.parallel, job, func(_ int, v verifiedTrace) {
		runs = append(runs, v.run)
		results = append(results, v)
		switch {
		case v.err != nil:
			stop = v.err
		case v.run.Result.Exchanges == 0:
			empty++
		case !v.run.Result.OK():
			differ++
			differNames = append(differNames, v.File)
		default:
			verified++
		}
	})
	if o.junit != "" {
		if jerr := writeJUnit(ctx, o.junit, "", time.Since(start), runs...); jerr != nil {
			return jerr
		}
	}
	if out.json {
		b, err := json.Marshal(struct {
			Traces []verifiedTrace `json:"traces"`
		}{results})
		if err != nil {
			return err
		}
		p.JSON(b)
	} else {
		p.VerifyTotal(tui.VerifyTotals{Traces: len(files), Verified: verified, Differ: differ, Empty: empty,
			Failed: len(results) - verified - differ - empty, DifferNames: differNames})
	}
	if stop != nil {
		return stop
	}
	if differ > 0 {
		return fmt.Errorf("%w: %d of %d traces differ from their recordings (%s)", record.ErrMismatch, differ, len(files), tui.NameSome(differNames))
	}
	return nil
}

// changedSinceRead is the error for a trace of several that changed
// after verify checked it, before its turn came.
func changedSinceRead(file string) error {
	return usageErrorf("%s changed after mcpx verify read it (every trace is read before any is verified): run verify again to use it as it is now", file)
}

// verifiedTrace is what became of one trace of several: its entry in
// --json's document (file, result or error), its part of the JUnit
// report, and err when it could not be verified (the run stops there).
type verifiedTrace struct {
	File   string               `json:"file"`
	Result *record.VerifyResult `json:"result,omitempty"`
	Error  string               `json:"error,omitempty"`
	run    record.JUnitRun
	err    error
}

// verifyTrace verifies the trace file, one of several, printing with e
// (an env of its own with --parallel): its name, then its report, and
// the warning of a trace with nothing to verify. sum is the SHA-256 of
// the trace when it was checked: one that has changed since is not
// verified.
func (o *verifyOptions) verifyTrace(ctx context.Context, e *env, file string, sum [sha256.Size]byte, name string, d connDesc, out output) verifiedTrace {
	p := e.printer()
	if !out.json {
		p.VerifyFile(file)
	}
	began := time.Now()
	var res *record.VerifyResult
	var closeErr error
	tf, err := record.ReadOptions{MaxMessageSize: d.session.maxMessageSize, Sum: true}.Open(file)
	if err == nil && tf.Sum != sum {
		tf.Close()
		err = changedSinceRead(file)
	} else if err == nil {
		res, closeErr, err = o.verifyFile(ctx, e, tf, d, out)
		tf.Close()
	}
	if err == nil && closeErr != nil {
		err = closeErr
	}
	if err == nil && res.Lost != nil {
		// A server that could not be talked to stops the run as one
		// that could not be started does.
		err = res.Lost
	}
	v := verifiedTrace{File: file, err: err, run: record.JUnitRun{Result: res,
		Options: record.JUnitOptions{Name: name, Time: time.Since(began), Err: err}}}
	// A run that could not start has nothing to report: not a result
	// saying ok with nothing verified (--json printed "ok": true beside
	// the error), nor "✓ 0 exchange(s) verified".
	reported := res != nil && (err == nil || res.Exchanges > 0 || len(res.Mismatches) > 0)
	if reported {
		v.Result = res
	}
	if err != nil {
		v.Error = err.Error()
	}
	if reported && !out.json {
		p.VerifyReport(res)
	}
	if res != nil {
		// What is kept for the end (--junit, --json, the total) needs no
		// response whole: each mismatch's differences hold what differs,
		// shortened. Kept whole, every trace's differing answers,
		// recorded and live, stayed in memory to the last.
		for i := range res.Mismatches {
			res.Mismatches[i].Recorded, res.Mismatches[i].Live = nil, nil
		}
	}
	if err == nil && res.Exchanges == 0 {
		e.console().Warn(file + " holds no request with a recorded response: nothing to verify")
	}
	return v
}

// updateMany records several traces again (verify --update), each under
// its name, then a line for all: how many were recorded again and how
// many left as they were. Like verifyMany it stops at a trace that cannot
// be recorded again, and verifies --parallel N at once, printing what one
// at a time prints; each file is replaced (or left) as it is alone.
func (o *verifyOptions) updateMany(ctx context.Context, files []string, sums map[string][sha256.Size]byte, d connDesc, out output) error {
	type updated struct {
		kept bool
		err  error
	}
	var (
		stop           error
		recorded, kept int
		failed         int
	)
	job := func(ctx context.Context, i int, je *env) (updated, bool) {
		je.printer().VerifyFile(files[i])
		sum := sums[files[i]]
		k, err := o.runUpdate(ctx, je, files[i], &sum, d, out)
		return updated{kept: k, err: err}, err != nil
	}
	inOrder(ctx, o.e, len(files), o.parallel, job, func(_ int, u updated) {
		switch {
		case u.err != nil:
			stop = u.err
			failed++
		case u.kept:
			kept++
		default:
			recorded++
		}
	})
	o.e.printer().UpdateTotal(tui.UpdateTotals{Traces: len(files), Recorded: recorded, Kept: kept, Failed: failed})
	return stop
}

// junitNames names each trace's suites in a JUnit report of several: its
// file name, or, when another trace has the same one (traces/v1/echo.jsonl
// and traces/v2/echo.jsonl), its path as given, so that no two suites,
// test classes and test cases have one name (a CI reporter would merge
// them, or show one trace's failure under the other).
func junitNames(files []string) map[string]string {
	count := map[string]int{}
	for _, f := range files {
		count[filepath.Base(f)]++
	}
	names := make(map[string]string, len(files))
	for _, f := range files {
		names[f] = filepath.Base(f)
		if count[names[f]] > 1 {
			names[f] = filepath.ToSlash(f)
		}
	}
	return names
}

// sessionConn opens the connection of one session verify runs. Closing
// it ends the server and closes what the client opened with it (a trace
// of --record); the first error closing those is kept in *closeErr.
func (e *env) sessionConn(ctx context.Context, d connDesc, out output, a attachments, closeErr *error) (transport.Conn, error) {
	c, conn, _, err := e.conns.open(ctx, &d, out, a)
	if err != nil {
		return nil, err
	}
	return &clientConn{Conn: conn, close: func() error {
		if err := c.Close(); err != nil && *closeErr == nil {
			*closeErr = err
		}
		return nil
	}}, nil
}

// clientConn is a connection that closes its client (the server process,
// a recording) with it.
type clientConn struct {
	transport.Conn
	close func() error
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return err
}

// Unwrap returns the connection, for transport.Find.
func (c *clientConn) Unwrap() transport.Conn { return c.Conn }

// ---- mcpx trace show ----

type traceShowOptions struct{ e *env }

func newTraceCmd(e *env) *cobra.Command {
	o := &traceShowOptions{e: e}
	show := &cobra.Command{
		Use: "show FILE",
		Example: `  mcpx trace show session.jsonl
  mcpx trace show session.jsonl --json | jq .`,
		Short: "Print a trace as a timeline (--json for tools)",
		Long: `show prints a trace as a readable timeline: time since the start, direction
(→ client to server, ← server to client), method, each response with its
request's method and latency, errors in red, notifications, the server's stderr
lines, HTTP exchanges, SSE stream metadata and notes. A trace of several
sessions (one per client connection) shows where each starts, and tags every
line with its session (s1, s2, ...). --json prints the same as one JSON
document.`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			if len(server) > 0 {
				return usageErrorf("trace show reads a file; it takes no server")
			}
			return o.run(own[0])
		},
	}
	readsGlobals(show, "reads a trace file", "json", "max-message-size")
	return groupCmd("trace", show, newTraceExportCmd(e), newTraceDiffCmd(e))
}

func (o *traceShowOptions) run(file string) error {
	e := o.e
	d, out := e.cfg.conn, e.cfg.out
	con := e.console()
	// The trace is read an event at a time (twice for the timeline: what
	// its head says, then its lines), not whole: a long session's trace
	// is shown in the memory of its longest line and its open requests.
	// Both reads are of the file opened once, and the second stops where
	// the first did (record.TraceStream): a trace still being recorded
	// grows between them. What the reader tolerated is warned about
	// once, before the rest.
	tf, err := record.ReadOptions{MaxMessageSize: d.session.maxMessageSize}.OpenStream(file)
	if err != nil {
		return &usageError{err: err}
	}
	defer tf.Close()
	var warnings []string
	reads := 0
	read := func(header func(record.Header), event func(*record.Event) error) error {
		// (What the timeline does with an event does not fail: an
		// error is the file's, the user's to fix.)
		w, err := tf.Stream(header, event)
		if err != nil {
			return &usageError{err: err}
		}
		if reads++; reads == 1 {
			warnings = w
			for _, w := range w {
				con.Warn(file + ": " + w)
			}
		}
		return nil
	}
	if out.json {
		doc, err := tui.TimelineOf(read)
		if err != nil {
			return err
		}
		doc.Warnings = warnings
		b, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		e.printer().JSON(b)
		return nil
	}
	return e.printer().TraceStream(read)
}

// printVerify prints verify's result: the report, or with --json the
// result as one JSON document.
func (e *env) printVerify(res *record.VerifyResult, asJSON bool) error {
	if !asJSON {
		e.printer().VerifyReport(res)
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	e.printer().JSON(b)
	return nil
}
