package cmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/transport"
)

// The global flags, grouped by what they configure. Each group is a value
// struct cobra writes into and nothing else reads: validate (config.go)
// checks them once, before a command runs, and builds the config the
// command uses. A group holds what was typed, never what was made of it.

// rootFlags are mcpx's global flags.
type rootFlags struct {
	server  serverFlags
	named   namedFlags
	http    httpFlags
	auth    authFlags
	session sessionFlags
	feat    featureFlags
	rec     recordFlags
	out     outputFlags
	ui      uiFlags
	// sessionOnly, in the REPL's line tree, holds the flags a line may
	// not give (see registerLine).
	sessionOnly *pflag.FlagSet
}

// serverFlags are about a server command given after --.
type serverFlags struct {
	env    []string // --env KEY=VALUE
	cwd    string   // --cwd
	stderr string   // --server-stderr: show, hide or a file
	// grace is --shutdown-grace: how long the server is given to exit
	// once its stdin is closed.
	grace time.Duration
}

// httpFlags are about a server at --url.
type httpFlags struct {
	url       string
	transport string // auto, http or sse
	headers   []string
	bearer    string
	caCert    string
	insecure  bool
}

// sessionFlags shape the MCP session.
type sessionFlags struct {
	maxMessageSize  int64
	timeout         time.Duration
	maxTimeout      time.Duration
	protocolVersion string
	protocolEra     string // as given; validate settles it
}

// recordFlags are --record and what verify and replay leave out of their
// comparisons (stored in the trace when recording).
type recordFlags struct {
	file      string
	force     bool
	mode      string
	stable    bool
	redact    []string
	noRedact  bool
	ignore    []string
	normalize []string
}

// outputFlags say how results and diagnostics look.
type outputFlags struct {
	json    bool
	wire    bool
	verbose bool
	color   string
	strict  bool
}

// The defaults of the session flags, which a REPL line (which cannot give
// them) runs with.
const (
	defaultTimeout    = 60 * time.Second
	defaultMaxTimeout = 10 * time.Minute
)

// maxShutdownGrace bounds --shutdown-grace: mcpx waits it out once it
// is shutting the server down, when a second Ctrl-C no longer stops
// anything, so a mistyped 2h would hold the terminal for hours.
const maxShutdownGrace = time.Minute

// register declares the global flags on fs.
func (f *rootFlags) register(fs *pflag.FlagSet) {
	stringsVar(fs, &f.server.env, "env", "", "set `KEY=VALUE` in the server's environment (repeatable)")
	fs.StringVar(&f.server.cwd, "cwd", "", "run the server in `DIR`")
	fs.StringVar(&f.server.stderr, "server-stderr", "show", "send the server's stderr to `WHERE`: show (this terminal), hide, or append it to a FILE")
	fs.DurationVar(&f.server.grace, "shutdown-grace", transport.DefaultCloseGrace, "at the end, give the server `DURATION` to exit after its stdin is closed, before ending it (e.g. 2s; at most 1m)")
	fs.StringVar(&f.http.url, "url", "", "connect to the MCP server at `URL` over HTTP instead of launching one")
	fs.StringVar(&f.http.transport, "transport", "auto", "HTTP `TRANSPORT`: auto (Streamable HTTP, falling back to HTTP+SSE), http or sse")
	stringsVar(fs, &f.http.headers, "header", "H", "send the HTTP header `'Name: value'` with every request (repeatable)")
	fs.StringVar(&f.http.bearer, "bearer", "", "send `TOKEN` as an HTTP bearer token (default $MCPX_BEARER_TOKEN, unless an Authorization header is given)")
	fs.StringVar(&f.http.caCert, "ca-cert", "", "trust the certificate authorities in PEM `FILE` for HTTPS")
	fs.BoolVar(&f.http.insecure, "insecure", false, "do not verify the server's TLS certificate (unsafe)")
	f.named.register(fs)
	f.auth.register(fs)
	fs.Var(newSizeValue(&f.session.maxMessageSize, transport.DefaultMaxMessageSize), "max-message-size",
		"the largest message mcpx reads from a server, client or trace line (`SIZE`: bytes, or e.g. 100MiB, 256MB, 1G)")
	fs.DurationVar(&f.session.timeout, "timeout", defaultTimeout, "per-request timeout (`DURATION`, e.g. 30s), reset by progress, stopped while you answer the server (0 disables)")
	fs.DurationVar(&f.session.maxTimeout, "max-timeout", defaultMaxTimeout, "hard cap (`DURATION`) on a request's time even while progress arrives (0 disables)")
	fs.StringVar(&f.session.protocolVersion, "protocol-version", "", "protocol `VERSION` to offer in initialize (default "+latestVersion()+"), or the stateless version to declare (2026-07-28)")
	fs.StringVar(&f.session.protocolEra, "protocol-era", "", "protocol `ERA`: legacy (initialize handshake), modern (2026-07-28, stateless) or auto (probe server/discover, then either) (default $MCPX_PROTOCOL_ERA, else legacy)")
	fs.BoolVar(&f.out.json, "json", false, "print exactly the JSON-RPC result on stdout")
	fs.BoolVar(&f.out.wire, "wire", false, "print every frame in both directions on stderr")
	fs.BoolVarP(&f.out.verbose, "verbose", "v", false, "explain what mcpx does (transport, negotiation) on stderr")
	fs.StringVar(&f.out.color, "color", "auto", "colour output `WHEN`: auto, always or never")
	fs.BoolVar(&f.out.strict, "strict", false, "fail (exit 5, protocol_violation) when the server departed from the protocol during the command, after printing its output: its warnings become an error")
	f.feat.register(fs)
	f.ui.register(fs)
	fs.StringVar(&f.rec.file, "record", "", "record the session's whole traffic to the trace `FILE` (JSON Lines; an existing trace gets a new session)")
	fs.BoolVar(&f.rec.force, "force", false, "with --record, replace an existing file instead of adding a session to it")
	fs.StringVar(&f.rec.mode, "record-mode", "", "with --record, record or replay the session: `MODE` replay-only, once, update or new (default $MCPX_RECORD; without either, record and add a session)")
	fs.BoolVar(&f.rec.stable, "stable", false, "with --record or verify --update, write the trace in the stable form (no times, placeholders for volatile values, frames laid out for diffs)")
	stringsVar(fs, &f.rec.redact, "redact", "", "also redact the values `JSONPATH` selects in recorded frames (repeatable)")
	fs.BoolVar(&f.rec.noRedact, "no-redact", false, "record secrets (Authorization, cookies, tokens) instead of redacting them")
	stringsVar(fs, &f.rec.ignore, "ignore", "", "leave out of verify's and replay's comparisons what `[METHOD:]JSONPATH` selects; with --record, stored in the trace (repeatable)")
	stringsVar(fs, &f.rec.normalize, "normalize", "", "replace volatile values before verify and replay compare: `RE=PLACEHOLDER`, or uuid, timestamp, session-id; with --record, stored in the trace (repeatable)")
}

// registerLine registers the flags for the REPL's line tree: the ones a
// line may give (allowedLineFlags) as persistent flags of its root, the
// others kept in f.sessionOnly, for lineTree to give each command as
// hidden flags a line is refused (they choose or shape the session). Few
// persistent flags keep each line cheap: cobra merges a command's
// inherited persistent flags into its own on every Execute, several
// times (issue 13).
func (f *rootFlags) registerLine(fs *pflag.FlagSet) {
	all := pflag.NewFlagSet("mcpx", pflag.ContinueOnError)
	f.register(all)
	f.sessionOnly = pflag.NewFlagSet("session", pflag.ContinueOnError)
	all.VisitAll(func(fl *pflag.Flag) {
		if allowedLineFlags[fl.Name] {
			fs.AddFlag(fl)
		} else {
			f.sessionOnly.AddFlag(fl)
		}
	})
}

// forgetRun puts cmd, a command of the REPL's tree that a line ran, back
// as it was before the line, for the next line to run it: parsing does
// not undo what an earlier parse set — flag values, Changed, the position
// of "--" — and cobra gives a command the root's context only when it has
// none. Only the command that ran was parsed: its flag set holds its
// parents' persistent flags too.
func forgetRun(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Changed {
			return
		}
		if s, ok := f.Value.(pflag.SliceValue); ok {
			_ = s.Replace(nil)
		} else {
			_ = f.Value.Set(f.DefValue) // every default is a value its flag takes
		}
		f.Changed = false
	})
	fs.Init(fs.Name(), pflag.ContinueOnError)
	var none context.Context
	cmd.SetContext(none)
}
