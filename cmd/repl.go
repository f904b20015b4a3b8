package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// replOptions are the flags of mcpx repl (also taken by mcpx with no
// command).
type replOptions struct {
	g         *globalOptions
	file      string
	keepGoing bool
	noHistory bool
}

func (o *replOptions) addFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.file, "file", "f", "", "run the commands in script `FILE` instead of reading them from the terminal")
	f.BoolVar(&o.keepGoing, "keep-going", false, "in a script, go on after a command fails (the exit status is then the first failure's)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not read or write the command history file")
}

const replLong = `Open one session with the server and keep it open: type commands (the same
commands as mcpx's, without the server part) and see notifications, log
messages and server requests as they come.

With a terminal, commands are edited with history and Tab completion from the
live server (tool, prompt and resource names, template URIs, key= arguments
and their values). Without one — or with -f FILE — commands are read line by
line, each is echoed with its output, and the first failing command ends the
session with its exit status (--keep-going goes on).

REPL commands besides mcpx's own: help, :wire on|off, :json on|off,
:record FILE|off, :reconnect, :roots [add|remove PATH], :log LEVEL,
:sleep DURATION, :wait METHOD [TIMEOUT], exit.

The history is kept in $XDG_STATE_HOME/mcpx/history (~/.local/state/mcpx/history;
$MCPX_HISTORY_FILE overrides the path), except commands typed with a leading
blank.`

func newReplCmd(g *globalOptions) *cobra.Command {
	o := &replOptions{g: g}
	c := &cobra.Command{
		Use:   "repl [-f FILE] -- <server command>",
		Short: "Open one session and type commands against it (or run a script)",
		Long:  replLong,
		Example: `  mcpx repl -- node server.js
  mcpx --url http://127.0.0.1:3001/mcp
  printf 'tools call echo message=hi\nping\n' | mcpx repl -- node server.js
  mcpx repl -f session.mcpx --keep-going -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if len(own) > 0 {
				return usageErrorf("mcpx repl %s: named servers from a configuration file are not supported yet; give the server command after -- or --url URL", own[0])
			}
			return o.run(c.Context(), server)
		},
	}
	o.addFlags(c.Flags())
	return c
}

// replSession is the REPL's one session, shared by every command typed.
// Commands run through the same cobra tree as one-shot commands (a fresh
// tree per command, marked with repl), and withClient hands them this
// session's client instead of connecting and closing.
type replSession struct {
	g      *globalOptions // the REPL's own options: the server and the session flags
	server []string
	ios    *IOStreams // the streams commands write to (through the editor)
	ctx    context.Context

	interactive bool
	editor      *repl.Editor
	runner      *repl.Runner
	node        *repl.Node

	wire atomic.Bool // :wire (and --wire)
	json atomic.Bool // :json (and --json)

	mu      sync.Mutex
	c       *client
	catalog *inspector.Catalog
	closing bool               // the session is being closed on purpose
	ended   bool               // the end of the session was reported
	watch   *inspector.Watcher // list changes and resource subscriptions
	trace   traceWriter        // :record
	// hs keeps the session's handshake, which a :record started later
	// begins with.
	hs record.Handshake

	notes *noteQueue
	last  atomic.Int32 // the status of the last command run
}

// traceWriter is what :record writes the session's frames to.
type traceWriter interface {
	Frame(t time.Time, dir transport.Direction, f transport.Frame)
	Close() error
}

// openTrace starts a trace of the live session in path for :record, with
// the same header and redaction as --record (a new session at the end of
// an existing trace). It holds the session's handshake, written from
// memory and marked as such, then the frames from now on; `mcpx repl
// --record FILE` records the session from its handshake as it happens.
func (s *replSession) openTrace(ctx context.Context, path string) (traceWriter, error) {
	name, target := "stdio", "stdio: "+commandLine(s.server)
	if s.g.url != "" {
		name, target = "http", "http: "+transport.RedactURL(s.g.url)
	}
	rec, err := s.g.openTrace(ctx, path, s.g.recordOptions(name, target))
	if errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err != nil {
		return nil, usageErrorf(":record: %v", err)
	}
	rec.Prelude(s.hs.Frames())
	return rec, nil
}

func (o *replOptions) run(ctx context.Context, server []string) (err error) {
	g := o.g
	if g.repl != nil {
		return usageErrorf("this is the REPL already; its server stays connected (:reconnect starts a new session)")
	}
	if g.url != "" && len(server) > 0 {
		return usageErrorf("give either --url URL or a server command after --, not both")
	}
	if g.url == "" && len(server) == 0 {
		return usageErrorf("no server given: put the server command after --, e.g. mcpx repl -- node server.js, or give --url URL")
	}
	var script io.Reader
	if o.file != "" {
		f, err := os.Open(o.file)
		if err != nil {
			return usageErrorf("-f: %v", err)
		}
		defer f.Close()
		script = f
	}
	interactive := script == nil && g.io.InTTY && (g.io.OutTTY || g.io.ErrTTY)
	if script == nil && !interactive {
		script = g.io.In
	}
	s := &replSession{g: g, server: server, ctx: ctx, interactive: interactive, notes: newNoteQueue()}
	s.wire.Store(g.wire)
	g.wire = false // frames are shown by the REPL's own tap, which :wire switches
	s.json.Store(g.json)
	ios := *g.io
	s.ios = &ios

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	runner := &repl.Runner{
		Exec:        s.exec,
		Interactive: interactive,
		KeepGoing:   o.keepGoing,
		Report:      s.reportPlain,
	}
	s.runner = runner
	s.node = s.grammar()
	if interactive {
		ed, err := o.newEditor(s)
		if err != nil {
			return err
		}
		defer ed.Close()
		s.editor = ed
		go func() {
			<-runCtx.Done()
			ed.Close()
		}()
		runner.Read = func() (string, error) {
			text, err := ed.ReadCommand()
			if err == nil && !strings.HasPrefix(text, " ") {
				ed.AddHistory(text) // (a command typed with a leading blank is not kept)
			}
			return text, err
		}
		runner.Hint = func() {
			fmt.Fprintln(s.ios.ErrOut, "(to leave, type exit or press Ctrl-D)")
		}
		if g.feat.prompter != nil {
			g.feat.prompter.UseLineSource(ed)
		}
		// Ctrl-C while a command runs cancels it, and only it.
		hook := func() bool {
			runner.Interrupt()
			return true
		}
		g.onInterrupt.Store(&hook)
		defer g.onInterrupt.Store(nil)
	} else {
		sc := repl.NewScript(script)
		runner.Read = func() (string, error) { return readCtx(runCtx, sc.ReadCommand) }
		runner.Echo = s.ios.Out
		if s.json.Load() {
			runner.Echo = s.ios.ErrOut // stdout holds only the results
		}
	}
	g.io = s.ios
	g.live = s
	if err := s.open(ctx); err != nil {
		return err
	}
	defer func() {
		// A trace that could not be written is an error of its own.
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		} else if cerr != nil {
			fmt.Fprintln(s.ios.ErrOut, "mcpx: "+cerr.Error())
		}
	}()
	if interactive || g.verbose {
		s.banner()
	}
	code := runner.Run(runCtx)
	switch {
	case ctx.Err() != nil && s.last.Load() == ExitInterrupted:
		return &exitStatus{code: ExitInterrupted} // the command said so
	case ctx.Err() != nil:
		return ctx.Err()
	case code != 0:
		return &exitStatus{code: code}
	}
	return nil
}

// readCtx runs read (which cannot be interrupted: a pipe) in a goroutine
// of its own so that an interrupt ends the wait.
func readCtx(ctx context.Context, read func() (string, error)) (string, error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := read()
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		return "", io.EOF
	}
}

// newEditor sets up the line editor on the terminal and routes the
// session's output through it, so that what arrives while a command is
// typed is printed above the prompt.
func (o *replOptions) newEditor(s *replSession) (*repl.Editor, error) {
	io0 := o.g.io
	t := repl.Terminal{In: io0.In, Real: isRealTerminal(io0.In)}
	if io0.OutTTY {
		t.Out = io0.Out
		if io0.ErrTTY {
			t.Other = io0.ErrOut
		}
	} else {
		t.Out = io0.ErrOut
	}
	prompt, cont := "mcpx> ", "...> "
	if io0.colorEnabled(o.g.color, true) {
		prompt, cont = "\x1b[1mmcpx>\x1b[0m ", "\x1b[2m...>\x1b[0m "
	}
	history := ""
	if !o.noHistory {
		history = historyPath(io0)
	}
	ed, err := repl.NewEditor(t, repl.EditorOptions{
		Prompt:         prompt,
		ContinuePrompt: cont,
		HistoryFile:    history,
		Complete:       s.completer(),
		OnInterrupt:    func() { s.runner.Interrupt() },
	})
	if err != nil {
		return nil, fmt.Errorf("starting the line editor: %w", err)
	}
	if io0.OutTTY {
		s.ios.Out = ed.Out()
		if io0.ErrTTY {
			s.ios.ErrOut = ed.Other()
		}
	} else {
		s.ios.ErrOut = ed.Out()
	}
	return ed, nil
}

func isRealTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
}

// historyPath is where the command history lives: $MCPX_HISTORY_FILE, else
// $XDG_STATE_HOME/mcpx/history, else ~/.local/state/mcpx/history ("" when
// there is no home).
func historyPath(ios *IOStreams) string {
	if p := ios.Getenv("MCPX_HISTORY_FILE"); p != "" {
		return p
	}
	if d := ios.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpx", "history")
	}
	if h := ios.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "mcpx", "history")
	}
	return ""
}

// open connects (or reconnects) and starts what follows the session: the
// catalog for completion, the watch for a server that dies, and the watch
// of list changes (for completion) and of the resources subscribed to.
func (s *replSession) open(ctx context.Context) error {
	c, err := s.g.connect(ctx, s.server)
	if err != nil {
		return err
	}
	w, err := c.sess.StartWatch(s.ctx, inspector.WatchSpec{Lists: true, DeclaredListsOnly: true}, s.watchHooks(c))
	if err != nil {
		c.Close()
		return err
	}
	cat := inspector.NewCatalog(c.sess)
	s.mu.Lock()
	s.c, s.catalog, s.closing, s.ended, s.watch = c, cat, false, false, w
	s.mu.Unlock()
	if s.interactive {
		cat.AutoRefresh(s.ctx)
		cat.Prefetch(s.ctx)
	}
	go s.watchEnd(c)
	return nil
}

// prepare adjusts a client being connected for the REPL (called by
// connect): every notification is seen first by the REPL (catalog, :wait),
// list changes are shown (one line for a burst; all of them with -v), and
// roots are declared so that :roots can change them.
func (s *replSession) prepare(c *client) {
	shown := map[string]time.Time{}
	c.observe = func(m *jsonrpc.Message) {
		s.observe(m)
		// List changes are shown, but a burst (servers announce their
		// lists one by one at start-up) as one line.
		if inspector.IsListChanged(m) && c.sink.get() == nil && !c.showLists.Load() {
			if now := time.Now(); now.Sub(shown[m.Method]) > 2*time.Second {
				shown[m.Method] = now
				c.console.Notification(m)
			}
		}
	}
	if c.feats.Roots == nil {
		c.feats.Roots = inspector.NewRoots(nil)
	}
}

// wrapConn adds the REPL's tap, which :wire and :record switch.
func (s *replSession) wrapConn(c *client, conn transport.Conn) transport.Conn {
	return transport.Tap(conn, func(t time.Time, dir transport.Direction, f transport.Frame) {
		s.hs.Frame(t, dir, f)
		if s.wire.Load() {
			c.console.Wire(t, dir, f)
		}
		s.mu.Lock()
		tw := s.trace
		s.mu.Unlock()
		if tw != nil {
			tw.Frame(t, dir, f)
		}
	})
}

func (s *replSession) observe(m *jsonrpc.Message) {
	s.mu.Lock()
	cat := s.catalog
	s.mu.Unlock()
	if cat != nil {
		cat.Notify(m)
	}
	s.notes.add(m)
}

// watchEnd reports a server that goes away on its own, with its exit
// status and last stderr lines.
func (s *replSession) watchEnd(c *client) {
	select {
	case <-c.sess.Done():
		s.reportEnd(c)
	case <-s.ctx.Done():
	}
}

// reportEnd says, once, that c's session ended on its own.
func (s *replSession) reportEnd(c *client) {
	s.mu.Lock()
	quiet := s.closing || s.c != c || s.ended
	s.ended = true
	s.mu.Unlock()
	if !quiet {
		c.console.Warn("the session ended: " + errorMessage(c.sess.Err()) + " (:reconnect starts a new session)")
	}
}

// current returns the open client, or why there is none.
func (s *replSession) current() (*client, error) {
	s.mu.Lock()
	c := s.c
	s.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("%w: no session (:reconnect starts one)", transport.ErrClosed)
	}
	if err := c.sess.Err(); err != nil {
		s.reportEnd(c)
		return nil, fmt.Errorf("the session has ended (:reconnect starts a new one): %w", err)
	}
	return c, nil
}

// with runs one command's work on the session's client (withClient in
// the REPL). What a command changes for its own run (where notifications
// go, a progress bar) is put back after it.
func (s *replSession) with(server []string, fn func(*client) error) error {
	if len(server) > 0 {
		return usageErrorf("the REPL is connected to its server already: leave out -- and the server command")
	}
	c, err := s.current()
	if err != nil {
		return err
	}
	prev := c.sink.get()
	defer c.sink.set(prev)
	defer c.console.ClearProgress()
	return fn(c)
}

// close ends the session: subscriptions, then the server. It returns
// the first error finishing the files: the --record trace, the :record
// trace, the --server-stderr file.
func (s *replSession) close() error {
	s.mu.Lock()
	c := s.c
	s.closing = true
	w := s.watch
	s.watch = nil
	tw := s.trace
	s.trace = nil
	s.mu.Unlock()
	if w != nil {
		_ = w.Close() // ends the subscriptions before the server
	}
	var errs []error
	if c != nil {
		errs = append(errs, c.Close())
	}
	if tw != nil {
		if err := tw.Close(); err != nil {
			errs = append(errs, fmt.Errorf(":record: closing the trace: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (s *replSession) banner() {
	c, err := s.current()
	if err != nil {
		return
	}
	info := c.sess.Server()
	name := tui.EscapeLine(info.Implementation.Name)
	if info.Implementation.Version != "" {
		name += " " + tui.EscapeLine(info.Implementation.Version)
	}
	where := ""
	if c.describe != "" {
		where = ", " + tui.EscapeLine(c.describe)
	}
	msg := fmt.Sprintf("connected to %s (protocol %s%s)", name, info.ProtocolVersion, where)
	if s.interactive {
		msg += ". Type help for commands; Tab completes; exit or Ctrl-D leaves."
	}
	c.console.Note(msg)
}

// watchHooks show what the REPL's watch meets: an acknowledgement when
// resources are asked for (or with -v), what the server left out of them,
// and a subscription stream that ended on its own.
func (s *replSession) watchHooks(c *client) inspector.WatchHooks {
	return inspector.WatchHooks{
		OnAck: func(ack inspector.WatchAck) {
			if len(ack.Asked.ResourceSubscriptions) > 0 || s.g.verbose {
				c.console.Note("subscription acknowledged: " + ack.Granted.Describe())
			}
			if len(ack.Missing.ResourceSubscriptions) > 0 {
				c.console.Warn("the server did not agree to: " + ack.Missing.Describe())
			}
		},
		OnWarn: c.console.Warn,
		OnEnd: func(asked inspector.ListenFilter, err error) {
			if len(asked.ResourceSubscriptions) > 0 || s.g.verbose {
				c.console.Warn("subscriptions/listen ended: " + errorMessage(err))
			}
		},
	}
}

// watcher returns the session's watch.
func (s *replSession) watcher() *inspector.Watcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watch
}

// subscribe is resources subscribe URI in the REPL: the subscription stays
// while the session does (or until resources unsubscribe URI) and updates
// are shown as they come.
func (s *replSession) subscribe(ctx context.Context, c *client, uri string) error {
	if !c.sess.Server().Declares("resources", "subscribe") {
		c.console.Warn("the server does not declare resources.subscribe; subscribing anyway")
	}
	w := s.watcher()
	if w == nil {
		return fmt.Errorf("%w: no session (:reconnect starts one)", transport.ErrClosed)
	}
	if err := w.Add(ctx, uri); err != nil {
		return err
	}
	c.console.Note("subscribed to " + tui.EscapeLine(uri) + ": updates are shown as they come (resources unsubscribe URI ends it; :wait notifications/resources/updated waits for one)")
	return nil
}

func (s *replSession) unsubscribe(ctx context.Context, c *client, uri string) error {
	w := s.watcher()
	if w == nil {
		return fmt.Errorf("%w: no session (:reconnect starts one)", transport.ErrClosed)
	}
	err := w.Remove(ctx, uri)
	var nw *inspector.NotWatchedError
	if errorsAs(err, &nw) {
		return &usageError{err: err}
	}
	if err != nil {
		return err
	}
	c.console.Note("unsubscribed from " + tui.EscapeLine(uri))
	return nil
}

func newResourcesUnsubscribeCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "unsubscribe URI",
		Short: "End a subscription made with resources subscribe (REPL)",
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return g.withClient(c.Context(), server, func(cl *client) error {
				return g.repl.unsubscribe(c.Context(), cl, own[0])
			})
		},
	}
}

// exitStatus ends mcpx with a status whose cause was reported already.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exec runs one command line.
func (s *replSession) exec(ctx context.Context, words []string) repl.Result {
	res := s.exec1(ctx, words)
	s.last.Store(int32(res.Code))
	return res
}

func (s *replSession) exec1(ctx context.Context, words []string) repl.Result {
	switch name := words[0]; {
	case name == "exit" || name == "quit":
		code := 0
		if len(words) > 2 {
			return repl.Result{Code: s.report(usageErrorf("usage: exit [STATUS]"))}
		}
		if len(words) == 2 {
			n, err := strconv.Atoi(words[1])
			if err != nil || n < 0 || n > 255 {
				return repl.Result{Code: s.report(usageErrorf("exit %s: the status must be a number from 0 to 255", words[1]))}
			}
			code = n
		}
		return repl.Result{Code: code, Quit: true}
	case name == "help" && len(words) == 1:
		s.help()
		return repl.Result{}
	case name == "help":
		return repl.Result{Code: s.run(ctx, append(words[1:], "--help"))}
	case strings.HasPrefix(name, ":"):
		return repl.Result{Code: s.replCommand(ctx, words)}
	}
	return repl.Result{Code: s.run(ctx, words)}
}

// run executes one mcpx command on the session, through the same command
// tree as a one-shot command.
func (s *replSession) run(ctx context.Context, args []string) int {
	root, lg := s.tree()
	root.SetArgs(args)
	wire := s.wire.Load()
	err := root.ExecuteContext(ctx)
	s.wire.Store(wire) // --wire lasts for its command
	if err == nil {
		return ExitOK
	}
	if !lg.started {
		err = &usageError{err: err}
	}
	return lg.report(err)
}

// allowedLineFlags are the global flags a REPL command may carry: the
// others choose or shape the session, which is open already.
var allowedLineFlags = map[string]bool{"json": true, "wire": true, "verbose": true, "help": true}

// tree builds the command tree for one REPL command: mcpx's own, with
// the server flags hidden and refused, help texts without the server
// part, resources unsubscribe, and tools call NAME --help describing the
// tool.
func (s *replSession) tree() (*cobra.Command, *globalOptions) {
	root, lg := newRootCmd(s.ios)
	lg.repl = s
	lg.json = s.json.Load()
	lg.verbose = s.g.verbose
	lg.color = s.g.color
	lg.feat = s.g.feat
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !allowedLineFlags[f.Name] {
			f.Hidden = true
		}
	})
	for _, c := range root.Commands() {
		switch c.Name() {
		case "auth":
			root.RemoveCommand(c)
		case "resources":
			c.AddCommand(newResourcesUnsubscribeCmd(lg))
		case "tools":
			for _, sub := range c.Commands() {
				if sub.Name() == "call" {
					s.toolHelpOn(sub)
				}
			}
		}
	}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.Use = strings.TrimSuffix(c.Use, " -- <server command>")
		c.Example = replExamples(c.Example)
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	return root, lg
}

var exampleLine = regexp.MustCompile(`(?m)^(\s*)mcpx (.*?)(?:\s+--\s.*|\s+--url\s+\S+)?$`)

// replExamples rewrites one-shot examples for the REPL: no program name,
// no server.
func replExamples(ex string) string { return exampleLine.ReplaceAllString(ex, "$1$2") }

// checkLine refuses what a REPL command cannot change: the server and the
// session's flags.
func (s *replSession) checkLine(c *cobra.Command, lg *globalOptions) error {
	var bad []string
	c.Flags().Visit(func(f *pflag.Flag) {
		if c.Root().PersistentFlags().Lookup(f.Name) != nil && !allowedLineFlags[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usageErrorf("%s chooses or shapes the session, which is open already: give it to mcpx repl (in the REPL: :wire, :json, :log, :roots, :reconnect)", strings.Join(bad, ", "))
	}
	if c.Flags().ArgsLenAtDash() >= 0 {
		return usageErrorf("the REPL is connected to its server already: leave out -- and the server command")
	}
	if lg.wire {
		s.wire.Store(true)
	}
	return nil
}

// toolHelpOn makes tools call NAME --help describe the tool from the live
// server before the usual help.
func (s *replSession) toolHelpOn(call *cobra.Command) {
	def := call.HelpFunc()
	call.SetHelpFunc(func(c *cobra.Command, args []string) {
		if names := c.Flags().Args(); len(names) > 0 {
			s.toolHelp(names[0])
			fmt.Fprintln(s.ios.Out)
		}
		def(c, args)
	})
}

func (s *replSession) toolHelp(name string) {
	s.mu.Lock()
	cat, c := s.catalog, s.c
	s.mu.Unlock()
	if cat == nil || c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	t, err := cat.Tool(ctx, name)
	if err != nil {
		c.console.Warn(err.Error())
		return
	}
	p := tui.NewPrinter(s.ios.Out, s.ios.colorEnabled(s.g.color, s.ios.OutTTY))
	p.ToolHelp(*t)
}

// help lists what can be typed.
func (s *replSession) help() {
	root, _ := s.tree()
	w := tabwriter.NewWriter(s.ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "Protocol commands (as in mcpx, without the server; `help COMMAND` or COMMAND --help for more):")
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() || c.Name() == "repl" {
			continue
		}
		subs := c.Commands()
		if len(subs) == 0 {
			fmt.Fprintf(w, "  %s\t%s\n", c.Name(), c.Short)
			continue
		}
		for _, sub := range subs {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %s %s\t%s\n", c.Name(), sub.Name(), sub.Short)
			}
		}
	}
	w.Flush()
	fmt.Fprintln(s.ios.Out, "\nREPL commands:")
	w = tabwriter.NewWriter(s.ios.Out, 0, 4, 2, ' ', 0)
	for _, h := range replCommands {
		fmt.Fprintf(w, "  %s\t%s\n", h.use, h.short)
	}
	w.Flush()
	fmt.Fprintln(s.ios.Out, "\nPer command: --json, --wire, -v. Quote words with spaces ('a b'); JSON needs no quotes.")
	fmt.Fprintln(s.ios.Out, "Ctrl-C cancels the command running; Ctrl-D or exit leaves.")
}

var replCommands = []struct{ name, use, short string }{
	{"help", "help [COMMAND]", "this list, or a command's help"},
	{":wire", ":wire [on|off]", "show every frame in both directions on stderr"},
	{":json", ":json [on|off]", "print results as JSON (as --json)"},
	{":record", ":record FILE|off", "record the session's traffic to a trace file"},
	{":reconnect", ":reconnect", "close the session and start a new one"},
	{":roots", ":roots [add|remove PATH]", "list or change the roots offered (sends roots/list_changed)"},
	{":log", ":log LEVEL", "ask for log messages at LEVEL and above"},
	{":sleep", ":sleep DURATION", "wait, showing what arrives"},
	{":wait", ":wait METHOD [TIMEOUT]", "wait for a notification (e.g. notifications/resources/updated 15s)"},
	{"exit", "exit [STATUS]", "leave (also quit, Ctrl-D)"},
}

// report prints a REPL command's error the way mcpx reports errors, and
// returns its exit status.
func (s *replSession) report(err error) int {
	lg := &globalOptions{io: s.ios, json: s.json.Load(), repl: s}
	return lg.report(err)
}

// reportPlain reports what the runner meets outside a command.
func (s *replSession) reportPlain(err error, usage bool) int {
	if usage {
		err = &usageError{err: err}
	}
	return s.report(err)
}

// replCommand runs a REPL-only command.
func (s *replSession) replCommand(ctx context.Context, words []string) int {
	name, args := words[0], words[1:]
	onOff := func(v *atomic.Bool, what string) int {
		switch {
		case len(args) == 0:
		case len(args) == 1 && args[0] == "on":
			v.Store(true)
		case len(args) == 1 && args[0] == "off":
			v.Store(false)
		default:
			return s.report(usageErrorf("usage: %s [on|off]", name))
		}
		state := "off"
		if v.Load() {
			state = "on"
		}
		fmt.Fprintf(s.ios.ErrOut, "%s is %s\n", what, state)
		return ExitOK
	}
	var err error
	switch name {
	case ":wire":
		return onOff(&s.wire, "wire output")
	case ":json":
		code := onOff(&s.json, "JSON output")
		if s.runner != nil && s.runner.Echo != nil && !s.interactive {
			s.runner.Echo = s.ios.Out
			if s.json.Load() {
				s.runner.Echo = s.ios.ErrOut
			}
		}
		return code
	case ":record":
		err = s.record(ctx, args)
	case ":reconnect":
		err = s.reconnect(ctx, args)
	case ":roots":
		err = s.roots(ctx, args)
	case ":log":
		err = s.logLevel(ctx, args)
	case ":sleep":
		err = s.sleep(ctx, args)
	case ":wait":
		err = s.wait(ctx, args)
	default:
		var names []string
		for _, h := range replCommands {
			if strings.HasPrefix(h.name, ":") {
				names = append(names, h.name)
			}
		}
		err = usageErrorf("unknown REPL command %q (choose one of: %s)", name, strings.Join(names, ", "))
	}
	if err != nil {
		return s.report(err)
	}
	return ExitOK
}

func (s *replSession) record(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageErrorf("usage: :record FILE|off")
	}
	s.mu.Lock()
	old := s.trace
	s.trace = nil
	s.mu.Unlock()
	if old != nil {
		if err := old.Close(); err != nil {
			return fmt.Errorf("closing the trace: %w", err)
		}
		fmt.Fprintln(s.ios.ErrOut, "recording stopped")
	}
	if args[0] == "off" {
		if old == nil {
			fmt.Fprintln(s.ios.ErrOut, "not recording")
		}
		return nil
	}
	tw, err := s.openTrace(ctx, args[0])
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.trace = tw
	s.mu.Unlock()
	fmt.Fprintln(s.ios.ErrOut, "recording to "+args[0])
	return nil
}

func (s *replSession) reconnect(ctx context.Context, args []string) error {
	if len(args) != 0 {
		return usageErrorf("usage: :reconnect")
	}
	s.mu.Lock()
	old := s.c
	s.closing = true
	w := s.watch
	s.watch = nil
	s.mu.Unlock()
	subs := 0
	if w != nil {
		subs = len(w.Resources())
		w.Stop() // the subscriptions end with the old session
	}
	if old != nil {
		if err := old.Close(); err != nil {
			fmt.Fprintln(s.ios.ErrOut, "mcpx: "+err.Error())
		}
	}
	s.notes.clear()
	if err := s.open(ctx); err != nil {
		s.mu.Lock()
		s.c, s.catalog = nil, nil
		s.mu.Unlock()
		return err
	}
	if subs > 0 {
		fmt.Fprintln(s.ios.ErrOut, "the old session's resource subscriptions ended with it")
	}
	s.banner()
	return nil
}

func (s *replSession) roots(ctx context.Context, args []string) error {
	c, err := s.current()
	if err != nil {
		return err
	}
	r := c.feats.Roots
	show := func() {
		list := r.List()
		if len(list) == 0 {
			fmt.Fprintln(s.ios.Out, "(no roots)")
		}
		for _, rt := range list {
			fmt.Fprintln(s.ios.Out, tui.EscapeLine(rt.URI))
		}
	}
	if len(args) == 0 {
		show()
		return nil
	}
	if len(args) != 2 || (args[0] != "add" && args[0] != "remove") {
		return usageErrorf("usage: :roots [add|remove PATH]")
	}
	list := r.List()
	switch args[0] {
	case "add":
		root, err := inspector.RootFromPath(args[1])
		if err != nil {
			return &usageError{err: err}
		}
		for _, have := range list {
			if have.URI == root.URI {
				return usageErrorf("%s is a root already", root.URI)
			}
		}
		list = append(list, root)
	case "remove":
		want := args[1]
		if !strings.Contains(want, "://") {
			// The URI RootFromPath made, without asking that the path
			// still exists.
			if abs, err := filepath.Abs(want); err == nil {
				slash := filepath.ToSlash(abs)
				if !strings.HasPrefix(slash, "/") {
					slash = "/" + slash
				}
				want = (&url.URL{Scheme: "file", Path: slash}).String()
			}
		}
		kept := list[:0:0]
		for _, have := range list {
			if have.URI != want && have.URI != args[1] {
				kept = append(kept, have)
			}
		}
		if len(kept) == len(list) {
			return usageErrorf("%s is not a root (:roots lists them)", args[1])
		}
		list = kept
	}
	if err := r.Set(ctx, list); err != nil {
		return err
	}
	s.g.feat.rootList = list // a new session offers them too
	c.console.Note(r.ChangeNote())
	show()
	return nil
}

func (s *replSession) logLevel(ctx context.Context, args []string) error {
	if len(args) != 1 || !inspector.ValidLogLevel(args[0]) {
		return usageErrorf("usage: :log LEVEL (one of %s)", strings.Join(inspector.LogLevels, ", "))
	}
	c, err := s.current()
	if err != nil {
		return err
	}
	level := args[0]
	if !c.sess.Server().HasCapability("logging") {
		c.console.Warn("the server does not declare the logging capability; asking anyway")
	}
	s.g.feat.logLevel = level // a new session asks for it too
	change, err := c.sess.SetLogLevel(ctx, level)
	if err != nil {
		return err
	}
	c.console.Note(change.String())
	return nil
}

func (s *replSession) sleep(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageErrorf("usage: :sleep DURATION (e.g. 500ms, 2s)")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < 0 {
		return usageErrorf(":sleep %s: not a duration (e.g. 500ms, 2s)", args[0])
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait waits for a notification: the first one with METHOD (a glob such as
// notifications/resources/* works) that arrived since the session started
// and no :wait has taken yet.
func (s *replSession) wait(ctx context.Context, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return usageErrorf("usage: :wait METHOD [TIMEOUT] (e.g. :wait notifications/resources/updated 15s)")
	}
	pattern := args[0]
	if _, err := filepath.Match(pattern, ""); err != nil {
		return usageErrorf(":wait %s: bad pattern: %v", pattern, err)
	}
	timeout := s.g.timeout
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		if err != nil || d <= 0 {
			return usageErrorf(":wait: %q is not a positive duration (e.g. 15s)", args[1])
		}
		timeout = d
	}
	c, err := s.current()
	if err != nil {
		return err
	}
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	m, err := s.notes.take(wctx, pattern, c.sess.Done())
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf(":wait %s: %w", pattern, &inspector.TimeoutError{Method: pattern, After: timeout})
	default:
		if serr := c.sess.Err(); serr != nil {
			s.reportEnd(c)
			return fmt.Errorf(":wait %s: %w: %w", pattern, inspector.ErrServerGone, serr)
		}
		return err
	}
	lg := &globalOptions{io: s.ios, json: s.json.Load(), color: s.g.color}
	lg.notificationPrinter(c)(m)
	return nil
}

// noteQueue keeps the notifications no :wait has taken yet (the newest
// thousand).
type noteQueue struct {
	mu    sync.Mutex
	items []*jsonrpc.Message
	more  chan struct{} // closed when a notification arrives
}

func newNoteQueue() *noteQueue { return &noteQueue{more: make(chan struct{})} }

func (q *noteQueue) add(m *jsonrpc.Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) >= 1000 {
		q.items = q.items[1:]
	}
	q.items = append(q.items, m)
	close(q.more)
	q.more = make(chan struct{})
}

func (q *noteQueue) clear() {
	q.mu.Lock()
	q.items = nil
	q.mu.Unlock()
}

// take removes and returns the first notification whose method matches
// pattern, waiting for one until ctx ends or gone closes.
func (q *noteQueue) take(ctx context.Context, pattern string, gone <-chan struct{}) (*jsonrpc.Message, error) {
	for {
		q.mu.Lock()
		for i, m := range q.items {
			if ok, _ := filepath.Match(pattern, m.Method); ok || m.Method == pattern {
				q.items = append(q.items[:i:i], q.items[i+1:]...)
				q.mu.Unlock()
				return m, nil
			}
		}
		more := q.more
		q.mu.Unlock()
		select {
		case <-more:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-gone:
			return nil, inspector.ErrServerGone
		}
	}
}

// completer completes commands from the grammar and the live server.
func (s *replSession) completer() *repl.Completer {
	return &repl.Completer{
		Root: s.node,
		Source: func() repl.Source {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.catalog == nil {
				return nil
			}
			return s.catalog
		},
		Roots: func() []string {
			c, err := s.current()
			if err != nil || c.feats.Roots == nil {
				return nil
			}
			var out []string
			for _, r := range c.feats.Roots.List() {
				out = append(out, r.URI)
			}
			return out
		},
	}
}

// grammar describes the command tree (and the REPL commands) for
// completion.
func (s *replSession) grammar() *repl.Node {
	root, _ := s.tree()
	var build func(c *cobra.Command, path string) *repl.Node
	build = func(c *cobra.Command, path string) *repl.Node {
		n := &repl.Node{Name: c.Name(), Path: path}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				n.Flags = append(n.Flags, repl.Flag{Long: f.Name, Short: f.Shorthand, Value: f.Value.Type() != "bool"})
			}
		})
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && sub.Name() != "repl" {
				p := sub.Name()
				if path != "" {
					p = path + " " + sub.Name()
				}
				n.Children = append(n.Children, build(sub, p))
			}
		}
		return n
	}
	node := build(root, "")
	node.Flags = nil
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if allowedLineFlags[f.Name] && f.Name != "help" {
			node.Flags = append(node.Flags, repl.Flag{Long: f.Name, Short: f.Shorthand})
		}
	})
	for _, h := range replCommands {
		node.Children = append(node.Children, &repl.Node{Name: h.name, Path: h.name})
	}
	return node
}
