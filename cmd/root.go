// Package cmd holds mcpx's cobra commands. Commands only wire: they parse
// flags into options structs, call transport/ and inspector/, and render.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

// version is the mcpx release; builds from a checkout add the VCS revision.
const version = "0.1.0"

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20261121214007-4ffa33cf095b), which a build from a checkout gets.
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}(\+.*)?$`)

// Version returns mcpx's version string.
func Version() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		// A release tag (go install …@v1.2.3) names the version; a build
		// from a checkout gets a pseudo-version, for which the revision
		// below says more.
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" && !pseudoVersion.MatchString(mv) {
			return strings.TrimPrefix(mv, "v")
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v += "+" + rev + dirty
		}
	}
	return v
}

// globalOptions are the flags every command shares: how to reach the
// server, how the session behaves, and how output looks.
type globalOptions struct {
	io *IOStreams

	// Server selection: a command after -- (stdio) or --url (HTTP).
	env          []string
	cwd          string
	serverStderr string

	// HTTP servers (--url).
	url       string
	transport string
	headers   []string
	bearer    string
	caCert    string
	insecure  bool
	auth      authFlags

	// maxMessageSize bounds every message read from a peer or a trace
	// (--max-message-size).
	maxMessageSize int64

	// Session.
	timeout         time.Duration
	maxTimeout      time.Duration
	protocolVersion string
	protocolEra     string // --protocol-era as given

	// The protocol era settled by validate: legacy, auto or modern, and
	// what chose it; eraCache remembers auto-detected eras for the run.
	era       string
	eraSource string
	eraCache  inspector.EraCache

	// What mcpx offers the server, and what happens around the command.
	feat featureOptions

	// Recording (--record) and what it leaves out; what verify and replay
	// leave out of their comparisons (stored in the trace when recording).
	record      string
	force       bool
	redact      []string
	noRedact    bool
	ignore      []string
	normalize   []string
	normalizers []record.Normalizer // parsed from normalize

	// Output.
	json    bool
	wire    bool
	verbose bool
	color   string

	// at is the open session the command runs through (@NAME).
	at sessionRef

	// started is set once flag parsing and argument checks passed, so that
	// earlier errors are reported as usage errors.
	started bool
	// open holds the clients to close if mcpx panics.
	open []*client

	// The REPL. live is set on the REPL's own options: connect prepares
	// its clients for a long session. repl is set on the options of each
	// command typed in the REPL: withClient then uses the REPL's client.
	live *replSession
	repl *replSession
	// onInterrupt, when set, handles SIGINT instead of cancelling the run
	// (the REPL cancels only the command in flight); it reports whether
	// it did.
	onInterrupt atomic.Pointer[func() bool]
}

// Main runs mcpx with the process's arguments and streams and returns the
// exit code.
func Main() int {
	// A closed stdout (mcpx ... | head -1) must not kill mcpx before it shuts
	// the server down. Catching SIGPIPE (rather than ignoring it, which
	// children would inherit) makes such writes fail with EPIPE instead.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return Run(context.Background(), os.Args[1:], SystemIO())
}

// Run executes mcpx with args and returns the exit code. Interrupts
// (SIGINT, SIGTERM, SIGHUP) cancel ctx: the in-flight request is cancelled
// and the server shut down before Run returns.
//
// A write to standard output that fails ends the run (its context is
// cancelled) and makes it exit 1 with a message, except a closed pipe
// (mcpx … | head -1), which ends it quietly.
func Run(ctx context.Context, args []string, ios *IOStreams) (code int) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	cancel := func() { cancelCause(nil) }
	out := &outputWriter{w: ios.Out, onError: func(err error) { cancelCause(&outputError{err: err}) }}
	sio := *ios
	sio.Out, sio.out = out, out
	ios = &sio
	root, g := newRootCmd(ios)
	defer g.handleSignals(cancel)()
	defer func() {
		if r := recover(); r != nil {
			for _, c := range g.open {
				c.Close()
			}
			fmt.Fprintf(ios.ErrOut, "mcpx: internal error: %v (please report this bug)\n", r)
			if ios.Getenv("MCPX_DEBUG") != "" {
				fmt.Fprintf(ios.ErrOut, "%s\n", debug.Stack())
			}
			code = ExitError
		}
	}()
	root.SetArgs(g.takeSessionArg(args))
	err := root.ExecuteContext(ctx)
	if err != nil && !g.started {
		err = &usageError{err: err}
	}
	if oerr := out.failure(); oerr != nil && (err == nil || causedBy(ctx, err, oerr)) {
		if brokenPipe(oerr) {
			return ExitOK // the reader went away: nothing more to say
		}
		err = &outputError{err: oerr}
	} else if oerr != nil && !brokenPipe(oerr) {
		// The command failed on its own too: say both.
		g.report(&outputError{err: oerr})
	}
	if err == nil {
		return ExitOK
	}
	return g.report(err)
}

// causedBy reports whether err, the error a command ended with, came of
// the failed write to standard output oerr: the write's own error, or
// the cancellation it caused.
func causedBy(ctx context.Context, err, oerr error) bool {
	var oe *outputError
	return errors.Is(err, oerr) || errors.As(err, &oe) ||
		errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &oe)
}

// handleSignals makes SIGINT, SIGTERM and SIGHUP (or, in tests, what
// ios.Signals delivers) cancel the run, except that a SIGINT goes to
// onInterrupt when it is set. It returns the function that stops it.
func (g *globalOptions) handleSignals(cancel context.CancelFunc) (stop func()) {
	sigs := g.io.Signals
	var ch chan os.Signal
	if sigs == nil {
		ch = make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		sigs = ch
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if h := g.onInterrupt.Load(); s == os.Interrupt && h != nil && (*h)() {
					continue
				}
				cancel()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		if ch != nil {
			signal.Stop(ch)
		}
	}
}

func newRootCmd(ios *IOStreams) (*cobra.Command, *globalOptions) {
	g := &globalOptions{io: ios}
	ro := &replOptions{g: g}
	root := &cobra.Command{
		Use:   "mcpx <command> [flags] -- <server command> [args...]",
		Short: "Talk to, debug and test MCP servers",
		Long: `mcpx is a command-line client for the Model Context Protocol.

It launches a server (everything after --) or connects to one over HTTP
(--url), calls one protocol method, and prints the result for people, or
exactly the JSON-RPC result with --json. Without a command it opens the
REPL (see mcpx repl --help): one session, commands typed one after another.`,
		Example: `  mcpx tools list -- node server.js
  mcpx tools call echo message=hi -- node server.js
  mcpx info --json -- python -m my_server
  mcpx tools list --url http://127.0.0.1:3001/mcp
  mcpx info --url https://mcp.example.com/mcp --bearer "$TOKEN"
  mcpx -- node server.js    (the REPL)`,
		Version:       Version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 && c.ArgsLenAtDash() != 0 {
				msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
				if s := c.SuggestionsFor(args[0]); len(s) > 0 {
					msg += " (did you mean " + strings.Join(s, ", ") + "?)"
				}
				return &usageError{err: errors.New(msg)}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			// No command: with a server, the REPL.
			if g.repl != nil {
				return usageErrorf("no command given; type help for the list")
			}
			if len(args) == 0 && g.url == "" {
				return c.Help()
			}
			return ro.run(c.Context(), args)
		},
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			g.started = true
			if g.repl != nil {
				return g.repl.checkLine(c, g)
			}
			if err := g.validate(); err != nil {
				return err
			}
			return g.resolveEra(c.Flags().Changed("protocol-era"))
		},
	}
	root.SetVersionTemplate("mcpx version {{.Version}}\n")
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })

	f := root.PersistentFlags()
	f.StringArrayVar(&g.env, "env", nil, "set `KEY=VALUE` in the server's environment (repeatable)")
	f.StringVar(&g.cwd, "cwd", "", "run the server in `DIR`")
	f.StringVar(&g.serverStderr, "server-stderr", "show", "the server's stderr: show, hide, or append it to `FILE`")
	f.StringVar(&g.url, "url", "", "connect to the MCP server at `URL` over HTTP instead of launching one")
	f.StringVar(&g.transport, "transport", "auto", "HTTP transport: auto (Streamable HTTP, falling back to HTTP+SSE), http or sse")
	f.StringArrayVarP(&g.headers, "header", "H", nil, "send the HTTP header `'Name: value'` with every request (repeatable)")
	f.StringVar(&g.bearer, "bearer", "", "send `TOKEN` as an HTTP bearer token (default $MCPX_BEARER_TOKEN)")
	f.StringVar(&g.caCert, "ca-cert", "", "trust the certificate authorities in PEM `FILE` for HTTPS")
	f.BoolVar(&g.insecure, "insecure", false, "do not verify the server's TLS certificate (unsafe)")
	g.auth.register(f)
	f.Var(newSizeValue(&g.maxMessageSize, transport.DefaultMaxMessageSize), "max-message-size",
		"the largest message mcpx reads from a server, client or trace line (`SIZE`: bytes, or e.g. 100MiB, 256MB, 1G)")
	f.DurationVar(&g.timeout, "timeout", 60*time.Second, "per-request timeout, reset by progress (0 disables)")
	f.DurationVar(&g.maxTimeout, "max-timeout", 10*time.Minute, "hard cap on a request's time even while progress arrives")
	f.StringVar(&g.protocolVersion, "protocol-version", "", "protocol `VERSION` to offer in initialize (default "+latestVersion()+"), or the stateless version to declare (2026-07-28)")
	f.StringVar(&g.protocolEra, "protocol-era", "", "protocol era: legacy (initialize handshake), modern (2026-07-28, stateless) or auto (probe server/discover, then either) (default $MCPX_PROTOCOL_ERA, else legacy)")
	f.BoolVar(&g.json, "json", false, "print exactly the JSON-RPC result on stdout")
	f.BoolVar(&g.wire, "wire", false, "print every frame in both directions on stderr")
	f.BoolVarP(&g.verbose, "verbose", "v", false, "explain what mcpx does (transport, negotiation) on stderr")
	f.StringVar(&g.color, "color", "auto", "colour output: auto, always or never")
	g.feat.addFlags(f)
	f.StringVar(&g.record, "record", "", "record the session's whole traffic to the trace `FILE` (JSON Lines; an existing trace gets a new session)")
	f.BoolVar(&g.force, "force", false, "with --record, replace an existing file instead of adding a session to it")
	f.StringArrayVar(&g.redact, "redact", nil, "also redact the values `JSONPATH` selects in recorded frames (repeatable)")
	f.BoolVar(&g.noRedact, "no-redact", false, "record secrets (Authorization, cookies, tokens) instead of redacting them")
	f.StringArrayVar(&g.ignore, "ignore", nil, "leave out of verify's and replay's comparisons what `[METHOD:]JSONPATH` selects; with --record, stored in the trace (repeatable)")
	f.StringArrayVar(&g.normalize, "normalize", nil, "replace volatile values before verify and replay compare: `RE=PLACEHOLDER`, or uuid, timestamp, session-id; with --record, stored in the trace (repeatable)")
	ro.addFlags(root.Flags())

	root.AddGroup(&cobra.Group{ID: "methods", Title: "Protocol methods:"})
	for _, c := range []*cobra.Command{
		newInfoCmd(g), newPingCmd(g), newToolsCmd(g), newResourcesCmd(g),
		newPromptsCmd(g), newCompleteCmd(g), newCallCmd(g), newNotifyCmd(g),
		newTasksCmd(g), newWatchCmd(g),
	} {
		c.GroupID = "methods"
		root.AddCommand(c)
	}
	addSessionCommands(root, g)
	root.AddCommand(newReplCmd(g))
	root.AddCommand(newAuthCmd(g))
	root.AddGroup(&cobra.Group{ID: "record", Title: "Recording and replay:"})
	for _, c := range []*cobra.Command{newProxyCmd(g), newReplayCmd(g), newVerifyCmd(g), newTraceCmd(g)} {
		c.GroupID = "record"
		root.AddCommand(c)
	}
	return root, g
}

func (g *globalOptions) validate() error {
	switch g.color {
	case "auto", "always", "never":
	default:
		return usageErrorf("--color must be auto, always or never, not %q", g.color)
	}
	for _, e := range g.env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return usageErrorf("--env %q: expected KEY=VALUE", e)
		}
	}
	if g.timeout < 0 || g.maxTimeout < 0 {
		return usageErrorf("--timeout and --max-timeout must not be negative")
	}
	if err := g.validateRecord(); err != nil {
		return err
	}
	if err := g.validateHTTP(); err != nil {
		return err
	}
	if err := g.validateFeatures(); err != nil {
		return err
	}
	return g.validateAuth()
}

// splitServer separates a command's own arguments from the server command
// line that follows "--".
func splitServer(c *cobra.Command, args []string) (own, server []string) {
	if i := c.ArgsLenAtDash(); i >= 0 {
		return args[:i], args[i:]
	}
	return args, nil
}

// groupCmd returns a command that only holds subcommands.
func groupCmd(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			var names []string
			for _, s := range c.Commands() {
				names = append(names, s.Name())
			}
			if len(args) > 0 && c.ArgsLenAtDash() != 0 {
				return usageErrorf("unknown command %q for %q (choose one of: %s)", args[0], c.CommandPath(), strings.Join(names, ", "))
			}
			return usageErrorf("%s needs a subcommand: %s", c.CommandPath(), strings.Join(names, ", "))
		},
	}
	c.AddCommand(subs...)
	return c
}
