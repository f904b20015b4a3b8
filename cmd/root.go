// Package cmd holds mcpx's cobra commands. Commands only wire: the global
// flags (flags.go) are validated once into a config (config.go), whose
// connection description the connector (connect.go) turns into a session;
// commands call inspector/ and record/ and render with tui/. The REPL
// (repl*.go) runs its lines through one command tree of its own.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/ttyin"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// version is the mcpx release; builds from a checkout add the VCS revision.
const version = "0.1.0"

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20261121214007-4ffa33cf095b), which a build from a checkout gets.
var pseudoVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d{14}-[0-9a-f]{12}(\+.*)?$`) })

// Version returns mcpx's version string.
func Version() string { return versionOnce() }

// versionOnce computes Version once: a one-shot asks for it several times
// (the version flag, the client's name in initialize, the HTTP
// User-Agent), and each debug.ReadBuildInfo parses the build information
// anew.
var versionOnce = sync.OnceValue(buildVersion)

func buildVersion() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		// A release tag (go install …@v1.2.3) names the version; a build
		// from a checkout gets a pseudo-version, for which the revision
		// below says more.
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" && !pseudoVersion().MatchString(mv) {
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

// env is what the commands of one command tree run with. The tree is
// built before the flags are parsed, so its commands keep the env and read
// cfg when they run: PersistentPreRunE has set it by then.
type env struct {
	ios *IOStreams
	// cfg is the validated configuration (for a REPL line: the REPL's,
	// with the line's --json, --wire and -v).
	cfg config
	// conns opens the connections and sessions commands ask for.
	conns *connector
	// run is what the whole run shares.
	run *runState
	// repl is the REPL whose lines this tree runs; nil for a command given
	// on mcpx's command line.
	repl *replSession
	// sessionOut is the standard error of a session process (the tree
	// that runs mcpx connect's command line in it, see nested); nil
	// elsewhere.
	sessionOut *sessiond.Output
	// started is set once the flags and arguments were accepted, so that
	// earlier errors are reported as usage errors.
	started bool
}

// runState is what one Run holds from its start to its end, whatever
// commands it runs.
type runState struct {
	// at is the open session the run's command goes through (@NAME
	// before it), taken off the arguments before they are parsed.
	at sessionRef
	// args are mcpx's arguments as given (without @NAME), for
	// checkOneDash.
	args []string
	// prompter asks the person at the terminal (elicitation, sampling);
	// the REPL lends it its line editor.
	prompter *tui.Prompter
	// onInterrupt, when set, handles SIGINT instead of cancelling the run
	// (the REPL cancels only the command in flight); it reports whether
	// it did.
	onInterrupt atomic.Pointer[func() bool]

	// entryAuth is the configured server's entry whose Authorization
	// header the run's connection sends ("FILE entry NAME"), for the
	// advice after a refusal.
	entryAuth string
	// secrets are those of the run's connection (attachments.secrets),
	// for the report of its error; nil before one is made.
	secrets *record.Secrets
	// login is set by mcpx auth login: the advice after a browser
	// authorization that outlasted --timeout is to raise it, not to run
	// mcpx auth login.
	login bool

	// interrupts is the run's handling of SIGINT, SIGTERM and SIGHUP;
	// nil in a runState that Run did not make (tests of the tree).
	interrupts *interrupts

	mu   sync.Mutex
	open map[*client]struct{} // the clients to close if mcpx panics
}

// track keeps c to close if mcpx panics, until the returned func, which
// c's Close calls, lets go of it: a run that opens many clients in turn
// (verify of a directory of traces, the REPL's :reconnect) would
// otherwise hold each one's session and frames until it ends.
func (r *runState) track(c *client) (untrack func()) {
	r.mu.Lock()
	if r.open == nil {
		r.open = map[*client]struct{}{}
	}
	r.open[c] = struct{}{}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.open, c)
		r.mu.Unlock()
	}
}

// closeAll closes every client opened (after a panic).
func (r *runState) closeAll() {
	r.mu.Lock()
	open := make([]*client, 0, len(r.open))
	for c := range r.open {
		open = append(open, c)
	}
	r.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
}

// Main runs mcpx with the process's arguments and streams and returns the
// exit code.
func Main() int {
	ios := SystemIO()
	log.SetFlags(0)
	log.SetOutput(goLog{w: ios.ErrOut})
	return Run(context.Background(), os.Args[1:], ios)
}

// Run executes mcpx with args and returns the exit code. Interrupts
// (SIGINT, SIGTERM, SIGHUP) cancel ctx: the in-flight request is cancelled
// and the server shut down before Run returns.
//
// A write to standard output that fails ends the run (its context is
// cancelled) and makes it exit 1 with a message, except a closed pipe
// (mcpx … | head -1), which ends it quietly.
func Run(ctx context.Context, args []string, ios *IOStreams) int {
	return runTree(ctx, args, ios, newRootCmdFor)
}

// runTree is Run with the command tree tree builds for the arguments
// (tests compare newRootCmdFor's with the whole tree's).
func runTree(ctx context.Context, args []string, ios *IOStreams, tree func(*env, []string) (*cobra.Command, *rootFlags)) (code int) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	cancel := func() { cancelCause(nil) }
	out := &outputWriter{w: ios.Out, onError: func(err error) { cancelCause(&outputError{err: err}) }}
	sio := *ios
	sio.Out, sio.out = out, out
	ios = &sio
	at, args := takeSessionArg(args)
	if len(args) > 1 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd) {
		// The shell completes mcpx @NAME …: the session's names.
		var rest []string
		at, rest = takeSessionArg(args[1:])
		args = append([]string{args[0]}, rest...)
	}
	run := &runState{at: at, args: args, prompter: tui.NewPrompter(ios.In, ios.ErrOut, ios.InTTY && ios.ErrTTY)}
	run.prompter.SetWidth(ios.errWidth) // questions wrap at words on a terminal
	if f, ok := ios.In.(*os.File); ok && ios.InTTY {
		// A question is answered by what is typed once it is shown.
		run.prompter.DiscardTypeAhead(func() error { return ttyin.Discard(f) })
	}
	e := &env{ios: ios, run: run, conns: &connector{ios: ios, track: run.track, prompter: run.prompter}}
	run.interrupts = &interrupts{ios: ios, run: run, cancel: cancel}
	if onlyPrints(args) {
		run.interrupts.quiet()
	} else {
		run.interrupts.subscribe() // while the command tree is built
	}
	root, flags := tree(e, args)
	defer run.interrupts.stop()
	defer func() {
		if r := recover(); r != nil {
			run.closeAll()
			fmt.Fprintf(ios.ErrOut, "mcpx: internal error: %v (please report this bug)\n", r)
			if ios.Getenv("MCPX_DEBUG") != "" {
				fmt.Fprintf(ios.ErrOut, "%s\n", debug.Stack())
			}
			code = ExitError
		}
	}()
	root.SetArgs(args)
	ran, err := unknownHelpTarget(root, args)
	if err == nil {
		ran, err = root.ExecuteContextC(ctx)
	}
	if code, _ := classify(err); err != nil && ran != nil && (code == ExitUsage || !e.started) {
		// A long flag typed with one dash (mcpx -server foo ping), or a
		// switch given a value (--wire true), explains the mistake found.
		if derr := explainStray(ran, args); derr != nil {
			err = derr
		}
	}
	if err != nil {
		err = forgotDash(ran, args, err)
	}
	if err != nil && !e.started {
		err = &usageError{err: err}
	}
	rep := reporter{ios: ios, json: flags.out.json, hints: e.hintFacts(), secrets: e.secrets()}
	if ran != nil && ran.HasParent() {
		rep.command = ran.CommandPath()
	}
	if oerr := out.failure(); oerr != nil && (err == nil || causedBy(ctx, err, oerr)) {
		if brokenPipe(oerr) {
			return ExitOK // the reader went away: nothing more to say
		}
		err = &outputError{err: oerr}
	} else if oerr != nil && !brokenPipe(oerr) {
		// The command failed on its own too: say both.
		rep.report(&outputError{err: oerr})
	}
	if err == nil {
		return ExitOK
	}
	return rep.report(err)
}

// causedBy reports whether err, the error a command ended with, came of
// the failed write to standard output oerr: the write's own error, or
// the cancellation it caused.
func causedBy(ctx context.Context, err, oerr error) bool {
	var oe *outputError
	return errors.Is(err, oerr) || errors.As(err, &oe) ||
		errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &oe)
}

// handleSignals makes the interrupts sigs delivers (subscribeSignals)
// cancel the run, except that a SIGINT goes to
// run.onInterrupt when it is set. It returns the function that stops it
// and waits for the goroutine it started.
func handleSignals(sigs signalSource, run *runState, cancel context.CancelFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case s := <-sigs.c:
				if h := run.onInterrupt.Load(); s == os.Interrupt && h != nil && (*h)() {
					continue
				}
				cancel()
			case <-done:
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		if sigs.own != nil {
			signal.Stop(sigs.own)
		}
	}
}

// interrupts is one run's handling of the process's interrupts. They are
// subscribed to early, while the command tree is built, unless the
// arguments only ask for help or the version (onlyPrints), and handled
// (they cancel the run) from the moment a command runs: watch, called
// before a command starts anything. So --help and --version set up no
// signal at all: that set-up starts two runtime threads and makes a
// round trip to one of them per signal (0.4 ms, 8% of mcpx --help's wall
// time), and a process that only prints has nothing to shut down when
// interrupted.
type interrupts struct {
	ios    *IOStreams
	run    *runState
	cancel context.CancelFunc

	once       sync.Once
	sigs       signalSource
	subscribed <-chan struct{} // nil until subscribe
	unhandle   func()          // stops handleSignals; nil until watch
}

// subscribe starts subscribing to the interrupts (see subscribeSignals),
// once. It runs on Run's goroutine, before the tree is built.
func (in *interrupts) subscribe() {
	if in.subscribed == nil {
		in.sigs, in.subscribed = subscribeSignals(in.ios)
	}
}

// quiet makes a write to a closed pipe fail with EPIPE, as subscribe
// does, for a run that is expected only to print (mcpx --help | head -1
// exits 0, not killed by SIGPIPE), without subscribing to anything:
// ignoring a signal is one system call. It is ignored rather than caught,
// which a child would inherit, only until watch catches it, before any
// child starts.
func (in *interrupts) quiet() {
	if in.ios.process && in.ios.Signals == nil {
		signal.Ignore(syscall.SIGPIPE)
	}
}

// watch makes the interrupts cancel the run from now on (subscribing
// first if that was not done). Commands call it before they start a
// server, a connection or a listener: the root's PersistentPreRunE, and
// live completion, which runs without it. In is nil in a tree built
// without Run (tests), where watch does nothing.
func (in *interrupts) watch() {
	if in == nil {
		return
	}
	in.once.Do(func() {
		in.subscribe()
		<-in.subscribed
		in.unhandle = handleSignals(in.sigs, in.run, in.cancel)
	})
}

// stop ends the handling and the subscription and waits for the
// goroutines they started. Run calls it once, as it returns.
func (in *interrupts) stop() {
	in.once.Do(func() {}) // (orders this after a watch on another goroutine)
	switch {
	case in.unhandle != nil:
		in.unhandle()
	case in.subscribed != nil:
		<-in.subscribed
		if in.sigs.own != nil {
			signal.Stop(in.sigs.own)
		}
	}
}

// onlyPrints reports whether args (mcpx's own, before any --) ask for
// help or the version, which cobra prints without running a command: a
// hint that the interrupts need no early subscription. A wrong guess costs
// only time: watch subscribes whatever was guessed.
func onlyPrints(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "--version":
			return true
		}
	}
	return false
}

// signalSource is where the interrupts come from: ios.Signals, or the
// process's own, delivered to own.
type signalSource struct {
	c   <-chan os.Signal
	own chan os.Signal
}

// subscribeSignals asks for the process's interrupts (SIGINT, SIGTERM,
// SIGHUP) unless ios.Signals delivers them, and for the process's streams
// SIGPIPE: a closed stdout (mcpx … | head -1) must not kill mcpx before it
// shuts the server down, and catching SIGPIPE (rather than ignoring it,
// which children would inherit) makes such writes fail with EPIPE. The
// runtime sets up each signal with a round trip to a thread of its own
// (0.2–0.5 ms in all, a tenth of a one-shot's start), so it is done in a
// goroutine while the command tree is built (interrupts.subscribe);
// subscribed is closed when it is done, which interrupts.watch waits for
// before a command starts anything.
func subscribeSignals(ios *IOStreams) (sigs signalSource, subscribed <-chan struct{}) {
	done := make(chan struct{})
	if ios.Signals != nil {
		close(done)
		return signalSource{c: ios.Signals}, done
	}
	ch := make(chan os.Signal, 1)
	go func() {
		defer close(done)
		if ios.process {
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		}
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	}()
	return signalSource{c: ch, own: ch}, done
}

// newRootCmd builds mcpx's whole command tree, whose commands run with e,
// and returns it with the flags it parses into. The REPL builds one too,
// for its lines (e.repl set): the same commands, with the flags that
// choose or shape a session refused (replSession.lineTree adjusts the
// rest).
func newRootCmd(e *env) (*cobra.Command, *rootFlags) { return buildRootCmd(e, nil) }

// newRootCmdFor builds the command tree for one invocation of mcpx with
// args: the top-level commands args can reach are built whole, the others
// are shells (see topCommand). Building every command, with its flags,
// subcommands, help and completions, cost each start of mcpx a tenth of
// its CPU and of its page faults, for the one command it runs.
func newRootCmdFor(e *env, args []string) (*cobra.Command, *rootFlags) {
	if e.repl != nil {
		return newRootCmd(e) // (its lines may name any command)
	}
	return buildRootCmd(e, &reach{args: args})
}

// reach says which top-level commands one invocation's arguments can
// reach, for newRootCmdFor.
type reach struct{ args []string }

// names reports whether the arguments may reach the top-level command
// name: they hold the word, anywhere (cobra finds a command only by its
// exact name, before --; mcpx's commands have no aliases). A word that is
// only a flag's value or a server's argument builds a command that is not
// run: harmless. mcpx help NAME and mcpx __complete … NAME … name it too.
func (r *reach) names(name string) bool {
	return r == nil || slices.Contains(r.args, name)
}

// completes reports whether the invocation completes a shell's words
// (mcpx __complete …), which reads the completions of the flags.
func (r *reach) completes() bool {
	return r == nil || len(r.args) > 0 && strings.HasPrefix(r.args[0], cobra.ShellCompRequestCmd)
}

// topCommand is one of mcpx's top-level commands. Unless an invocation's
// arguments name it (reach), the tree holds a shell in its place: its
// name, one-line summary and group, which is all that mcpx's help, mcpx
// help, the suggestions for a mistyped command ("did you mean") and the
// completion of command names read of a command they do not run. The
// summary and group are written here only: a built command takes them
// from its entry, so shell and command cannot disagree on them
// (TestShellsMatchCommands checks the rest).
type topCommand struct {
	name, short, group string
	// oneShot commands are left out of the REPL's tree: a line cannot
	// open sessions, edit files or name a server.
	oneShot bool
	build   func(*env) *cobra.Command
}

// topCommands returns mcpx's top-level commands, in the order they are
// added (which is the order of cobra's suggestions); mcpx's help sorts
// them. (A function: the REPL's commands build a tree themselves, which a
// variable would make an initialization cycle.)
func topCommands() []topCommand {
	return []topCommand{
		{name: "info", group: "methods", build: newInfoCmd, short: "Show the server's name, version, protocol, capabilities and instructions"},
		{name: "ping", group: "methods", build: newPingCmd, short: "Check that the server answers (ping)"},
		{name: "check", group: "methods", build: newCheckCmd, short: "Exercise, read-only, what the server declares and report its departures from the protocol"},
		{name: "tools", group: "methods", build: newToolsCmd, short: "List and call tools"},
		{name: "resources", group: "methods", build: newResourcesCmd, short: "List and read resources"},
		{name: "skills", group: "methods", build: newSkillsCmd, short: "List, show, check and fetch the server's skills (Skills extension)"},
		{name: "prompts", group: "methods", build: newPromptsCmd, short: "List and get prompts"},
		{name: "complete", group: "methods", build: newCompleteCmd, short: "Ask the server to complete a prompt argument or a template variable"},
		{name: "call", group: "methods", build: newCallCmd, short: "Send any request and print its result"},
		{name: "notify", group: "methods", build: newNotifyCmd, short: "Send any notification"},
		{name: "tasks", group: "methods", build: newTasksCmd, short: "List, inspect, fetch and cancel tasks (2025-11-25, experimental)"},
		{name: "watch", group: "methods", build: newWatchCmd, short: "Print every notification the server sends until interrupted"},
		{name: "connect", group: "sessions", oneShot: true, build: newConnectCmd, short: "Open a session that stays open; run commands through it with @NAME"},
		{name: "sessions", group: "sessions", oneShot: true, build: newSessionsCmd, short: "List the open sessions (mcpx connect)"},
		{name: "disconnect", group: "sessions", oneShot: true, build: newDisconnectCmd, short: "End an open session and its server"},
		{name: "repl", build: newReplCmd, short: "Open one session and type commands against it (or run a script)"},
		{name: "auth", build: newAuthCmd, short: "Authorize mcpx with an HTTP server's OAuth authorization server, and manage stored tokens"},
		{name: "servers", oneShot: true, build: newServersCmd, short: "List the MCP servers defined in configuration files (use one with -s NAME)"},
		{name: "proxy", group: "record", build: newProxyCmd, short: "Stand in for a server and record a host's session with it"},
		{name: "replay", group: "record", build: newReplayCmd, short: "Serve a recorded server from a trace (a mock server)"},
		{name: "verify", group: "record", build: newVerifyCmd, short: "Check a live server against a trace (exit 7 on any difference)"},
		{name: "trace", group: "record", build: newTraceCmd, short: "Inspect recorded traces"},
	}
}

// shellAnnotations are the annotations of every shell (read only).
var shellAnnotations = map[string]string{shellAnnotation: ""}

// shellAnnotation marks a shell: a top-level command not built.
const shellAnnotation = "mcpx-shell"

// isShell reports whether c is a shell (topCommand).
func isShell(c *cobra.Command) bool {
	_, ok := c.Annotations[shellAnnotation]
	return ok
}

// shell returns the shell of the command t, or of cobra's completion
// command when t.build is nil.
func (t *topCommand) shell() *cobra.Command {
	return &cobra.Command{
		Use: t.name, Short: t.short, GroupID: t.group,
		Annotations: shellAnnotations,
		// Runnable, as the command is: help lists it as a command
		// rather than a help topic. It never runs: an invocation that
		// reaches it builds the command (reach).
		RunE: func(c *cobra.Command, _ []string) error {
			return fmt.Errorf("internal error: mcpx %s was run unbuilt (please report this bug)", c.Name())
		},
	}
}

// buildRootCmd builds mcpx's tree with the top-level commands r reaches
// (all of them when r is nil).
func buildRootCmd(e *env, r *reach) (*cobra.Command, *rootFlags) {
	flags := &rootFlags{}
	ro := &replOptions{e: e}
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
				s := c.SuggestionsFor(args[0])
				if len(s) == 0 && e.repl != nil {
					s = replSuggestions(e.repl.commands, args[0])
				}
				if len(s) == 0 && args[0] == "version" && e.repl == nil {
					s = []string{"mcpx --version"}
				}
				if len(s) > 0 {
					msg += " (did you mean " + strings.Join(s, ", ") + "?)"
				}
				return &usageError{err: &strayArgsError{err: errors.New(msg)}}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			// No command: with a server, the REPL.
			if e.repl != nil {
				return usageErrorf("no command given; type help for the list")
			}
			if len(args) == 0 && e.cfg.conn.http.url == "" && e.cfg.conn.named.ref == "" && e.cfg.conn.at.name == "" {
				given := false
				c.Flags().Visit(func(f *pflag.Flag) { given = given || f.Changed && !alwaysRead[f.Name] })
				if given {
					// mcpx --wire: flags for a REPL without a server,
					// which the help would ignore (--color and --json
					// apply to every command, as from an alias).
					_, err := e.cfg.conn.forServer(nil, "mcpx")
					return err
				}
				return c.Help()
			}
			return ro.run(c.Context(), args)
		},
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			e.run.interrupts.watch()
			e.started = true
			if e.repl != nil {
				if err := e.repl.checkLine(c, flags, e); err != nil {
					return err
				}
				if err := checkFlags(c); err != nil {
					return err
				}
				return checkArgs(c, args)
			}
			if err := checkFlags(c); err != nil {
				return err
			}
			if err := checkArgs(c, args); err != nil {
				return err
			}
			if err := checkOneDash(c, e.run.args); err != nil {
				return err
			}
			if err := checkAt(c, e.run.at); err != nil {
				return err
			}
			var person inspector.Person // nobody to ask without a terminal
			if e.ios.InTTY && e.ios.ErrTTY {
				person = tui.NewPerson(e.run.prompter, openURL(e.ios))
			}
			cfg, err := flags.validate(c.Context(), validation{ios: e.ios, person: person, eraSet: c.Flags().Changed("protocol-era"),
				timeoutSet: c.Flags().Changed("timeout"), maxTimeoutSet: c.Flags().Changed("max-timeout"),
				stderrSet: c.Flags().Changed("server-stderr"), graceSet: c.Flags().Changed("shutdown-grace"), at: e.run.at})
			if err != nil {
				return err
			}
			if err := checkRecording(c, cfg.conn.rec); err != nil {
				return err
			}
			if err := checkViewFlags(c, cfg.conn); err != nil {
				return err
			}
			cfg.conn.rec.command, cfg.conn.rec.args = ownCommand(c, args)
			e.cfg = cfg
			return e.namedBeforeRun(c)
		},
	}
	// mcpx --version prints "mcpx version V", cobra's default (the
	// root's name and Version), which cobra writes with fmt: a version
	// template of the same words it parses and executes with
	// text/template, on every mcpx --version.
	// (cobra sets this default only on the path it bypasses here: Args
	// reports unknown commands itself.)
	root.SuggestionsMinimumDistance = 2
	root.SetOut(e.ios.Out)
	root.SetErr(e.ios.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{err: &strayArgsError{err: flagError(c, err)}}
	})

	if e.repl != nil {
		flags.registerLine(root.PersistentFlags())
	} else {
		flags.register(root.PersistentFlags())
	}
	ro.addFlags(root.Flags())

	root.AddGroup(&cobra.Group{ID: "methods", Title: "Protocol methods:"})
	if e.repl == nil {
		// (Not even the group's heading in the REPL: see notInREPL.)
		root.AddGroup(&cobra.Group{ID: "sessions", Title: "Sessions that stay open:"})
	}
	root.AddGroup(&cobra.Group{ID: "record", Title: "Recording and replay:"})
	for _, t := range topCommands() {
		switch {
		case t.oneShot && e.repl != nil:
		case r.names(t.name):
			c := t.build(e)
			c.Short, c.GroupID = t.short, t.group
			completeArgs(c, e, flags)
			root.AddCommand(c)
		default:
			root.AddCommand(t.shell())
		}
	}
	setHelp(root, r.names(completionCmdName))
	ownsRecording(root) // the REPL (:record)
	if r.completes() {
		registerCompletions(root, e, flags)
	}
	return root, flags
}

// needSubcommand is the RunE of a command that only holds subcommands:
// run, it was given none or an unknown one (a usage error naming them),
// where cobra would print its help to stdout and exit 0.
func needSubcommand(c *cobra.Command, args []string) error {
	var names []string
	for _, s := range c.Commands() {
		names = append(names, s.Name())
	}
	if len(args) > 0 && c.ArgsLenAtDash() != 0 {
		return usageErrorf("unknown command %s for %q (choose one of: %s)", transport.QuoteExcerpt(args[0]), c.CommandPath(), strings.Join(names, ", "))
	}
	return usageErrorf("%s needs a subcommand: %s", c.CommandPath(), strings.Join(names, ", "))
}

// noArgs is the Args of a command that takes no arguments. A word given
// is a usage error that says so, with the usage line (cobra.NoArgs calls
// it an unknown command: mcpx sessions x said 'unknown command "x" for
// "mcpx sessions"'); for a command that also has subcommands (mcpx
// servers), an unknown one, with their names.
func noArgs(c *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return nil
	case c.ArgsLenAtDash() == 0:
		return usageErrorf("%s takes no server command: leave out -- and what follows; usage: %s", c.CommandPath(), c.UseLine())
	case c.HasSubCommands():
		return needSubcommand(c, args)
	}
	return &usageError{err: &strayArgsError{err: fmt.Errorf("%s takes no arguments, but was given %s; usage: %s", c.CommandPath(), transport.QuoteExcerpt(args[0]), c.UseLine())}}
}

// console returns the stderr console for a command.
func (e *env) console() *tui.Console { return newConsole(e.ios, e.cfg.out, e.run.prompter) }

// printer returns the stdout printer for a command.
func (e *env) printer() *tui.Printer { return newPrinter(e.ios, e.cfg.out) }

// splitServer separates a command's own arguments from the server command
// line that follows "--".
func splitServer(c *cobra.Command, args []string) (own, server []string) {
	if i := c.ArgsLenAtDash(); i >= 0 {
		return args[:i], args[i:]
	}
	return args, nil
}

// groupCmd returns a command that only holds subcommands.
func groupCmd(use string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:  use,
		Args: cobra.ArbitraryArgs,
		RunE: needSubcommand,
	}
	c.AddCommand(subs...)
	var ex []string
	for _, s := range subs {
		if first, _, _ := strings.Cut(s.Example, "\n"); first != "" {
			ex = append(ex, first)
		}
	}
	c.Example = strings.Join(ex, "\n")
	return c
}
