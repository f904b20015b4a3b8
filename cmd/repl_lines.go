package cmd

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/internal/memhint"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/tui"
)

func newResourcesUnsubscribeCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "unsubscribe URI",
		Short:   "End a subscription made with resources subscribe (REPL)",
		Example: "  resources unsubscribe demo://resource/static/document/architecture.md",
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return e.withClient(c.Context(), server, func(cl *client) error {
				return e.repl.unsubscribe(c.Context(), cl, own[0])
			})
		},
	}
}

// exec runs one command line.
func (s *replSession) exec(ctx context.Context, words []string) repl.Result {
	res := s.exec1(ctx, words)
	s.last.Store(int32(res.Code))
	return res
}

// exec1 dispatches a line: to one of the REPL's own commands, or through
// mcpx's command tree.
func (s *replSession) exec1(ctx context.Context, words []string) repl.Result {
	name, args := words[0], words[1:]
	if rc := replCommandNamed(s.commands, name); rc != nil {
		// A REPL command that talks to the server (:log, :reconnect)
		// answers for its departures as mcpx's commands do.
		lctx, departed := withLineDepartures(ctx)
		res := rc.run(s, lctx, args)
		if n := departed.end(); n > 0 && s.cfg.out.strict && res.Code == 0 && !res.Quit {
			res.Code = s.report(ctx, &strictError{n: n})
		}
		return res
	}
	if strings.HasPrefix(name, ":") {
		return repl.Result{Code: s.report(ctx, unknownColon(s.commands, name))}
	}
	if why, ok := notInREPL(name); ok {
		return repl.Result{Code: s.report(ctx, usageErrorf("%s is not available in the REPL: %s", name, why))}
	}
	if name == "mcpx" && len(args) > 0 {
		// A command pasted from a shell or the README: cobra would say
		// unknown command "mcpx" for "mcpx".
		shown := make([]string, len(args))
		for i, a := range args {
			shown[i] = repl.Quote(a)
		}
		return repl.Result{Code: s.report(ctx, usageErrorf("leave out \"mcpx\": the REPL runs mcpx's commands as they follow it (%s)", strings.Join(shown, " ")))}
	}
	return repl.Result{Code: s.runLine(ctx, words)}
}

// runLine executes one mcpx command on the session, through the REPL's
// command tree (the same commands as mcpx's own), with the REPL's --json
// (or :json) and -v unless the line says otherwise.
func (s *replSession) runLine(ctx context.Context, args []string) int {
	return s.runLineOn(ctx, &lineWorker{root: s.root, flags: s.lineFlags, env: s.line}, args)
}

// runLineOn runs a line through w's command tree.
func (s *replSession) runLineOn(ctx context.Context, w *lineWorker, args []string) int {
	w.flags.out.json, w.flags.out.verbose = s.json.Load(), s.cfg.out.verbose
	w.env.started = false
	w.root.SetArgs(args)
	wire := s.wire.Load()
	session := w.flags.sessionOnly
	ran, err := unknownHelpTarget(w.root, args)
	if err != nil {
		return s.reporterTo(w.env.ios, w.flags.out.json, false).report(atLine(ctx, err))
	}
	mark := memhint.Mark()
	lctx, departed := withLineDepartures(ctx)
	ran, err = executeLine(lctx, w.root, args, func(c *cobra.Command) bool { return addSessionFlags(c, session) })
	memhint.Release(mark) // after a large result, its memory goes back (see memhint)
	s.wire.Store(wire)    // --wire lasts for its command
	forgetRun(ran)
	if n := departed.end(); n > 0 && err == nil && s.cfg.out.strict {
		// After the output: --strict fails a line that worked, for the
		// departures of its own requests and results (see lineDepartures).
		err = &strictError{n: n}
	}
	if err == nil {
		return ExitOK
	}
	if code, _ := classify(err); ran != nil && (code == ExitUsage || !w.env.started) {
		// A long flag typed with one dash, or a switch given a value,
		// explains the mistake found.
		if derr := explainStray(ran, args); derr != nil {
			err = derr
		}
	}
	if !w.env.started {
		err = &usageError{err: err}
	}
	out := w.flags.out
	return s.reporterTo(w.env.ios, out.json, out.verbose || out.wire).report(atLine(ctx, err))
}

// executeLine runs a REPL line through root, as root.ExecuteContextC
// does. A line that names a runnable subcommand (nearly all) is run
// directly: cobra's Execute adds and removes its help and __complete
// commands, re-sorts the tree and looks the command up twice on every
// call, a fifth of a REPL tool call's CPU. Anything else (no command, an
// unknown one, help, completion) goes through cobra, which reports it.
//
// prepare, when not nil, readies the commands the line names, and each
// parent up to root, before they parse it (addSessionFlags); it reports
// whether it changed one, and the line is looked up again: a flag a
// command learns can change which words are its values.
func executeLine(ctx context.Context, root *cobra.Command, args []string, prepare func(*cobra.Command) bool) (*cobra.Command, error) {
	c, flags, err := root.Find(args)
	for err == nil && prepare != nil && preparePath(c, prepare) {
		c, flags, err = root.Find(args)
	}
	if err != nil || c == root || !c.Runnable() || c.HasParent() && c.Parent() == root && (c.Name() == "help" || c.Name() == cobra.ShellCompRequestCmd) {
		return root.ExecuteContextC(ctx)
	}
	return c, runFound(ctx, c, flags)
}

// preparePath calls prepare on c and each of its parents, and reports
// whether it changed one.
func preparePath(c *cobra.Command, prepare func(*cobra.Command) bool) bool {
	changed := false
	for ; c != nil; c = c.Parent() {
		if prepare(c) {
			changed = true
		}
	}
	return changed
}

// cobraFlagChecks reports whether a flag of c carries one of cobra's
// annotations (all named cobra_annotation_...) that its required-flag and
// flag-group checks may read, which is any but those known to be only for
// help and completion. mcpx's commands have none, and the checks cost a
// REPL line a twentieth of its CPU (maps built and looked up for every
// flag), so the answer is kept in c's annotations: c's flags, its
// parents' merged in by the first parse, do not change after it, and a
// line tree runs one line at a time.
func cobraFlagChecks(c *cobra.Command) bool {
	if v, ok := c.Annotations[flagChecksAnnotation]; ok {
		return v == "yes"
	}
	found := false
	c.Flags().VisitAll(func(f *pflag.Flag) {
		for k := range f.Annotations {
			switch k {
			case cobra.FlagSetByCobraAnnotation, cobra.BashCompFilenameExt, cobra.BashCompCustom, cobra.BashCompSubdirsInDir:
			default:
				if strings.HasPrefix(k, "cobra_annotation_") {
					found = true
				}
			}
		}
	})
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[flagChecksAnnotation] = "no"
	if found {
		c.Annotations[flagChecksAnnotation] = "yes"
	}
	return found
}

// flagChecksAnnotation is the command annotation where cobraFlagChecks
// keeps its answer.
const flagChecksAnnotation = "mcpx-cobra-flag-checks"

// runFound is cobra's execution of a found command c with its flags and
// arguments (Command.execute, for the features mcpx's tree uses: no
// deprecation, version or flag-parsing opt-out below the root, no
// initializers, the first persistent hook found from c up).
func runFound(ctx context.Context, c *cobra.Command, flags []string) error {
	c.SetContext(ctx)
	c.InitDefaultHelpFlag()
	if err := c.ParseFlags(flags); err != nil {
		return c.FlagErrorFunc()(c, err)
	}
	if help, _ := c.Flags().GetBool("help"); help {
		c.HelpFunc()(c, flags)
		return nil
	}
	args := c.Flags().Args()
	if err := c.ValidateArgs(args); err != nil {
		return err
	}
	for p := c; p != nil; p = p.Parent() {
		if p.PersistentPreRunE != nil {
			if err := p.PersistentPreRunE(c, args); err != nil {
				return err
			}
			break
		} else if p.PersistentPreRun != nil {
			p.PersistentPreRun(c, args)
			break
		}
	}
	if c.PreRunE != nil {
		if err := c.PreRunE(c, args); err != nil {
			return err
		}
	} else if c.PreRun != nil {
		c.PreRun(c, args)
	}
	if cobraFlagChecks(c) {
		if err := c.ValidateRequiredFlags(); err != nil {
			return err
		}
		if err := c.ValidateFlagGroups(); err != nil {
			return err
		}
	}
	if c.RunE != nil {
		if err := c.RunE(c, args); err != nil {
			return err
		}
	} else {
		c.Run(c, args)
	}
	if c.PostRunE != nil {
		if err := c.PostRunE(c, args); err != nil {
			return err
		}
	} else if c.PostRun != nil {
		c.PostRun(c, args)
	}
	for p := c; p != nil; p = p.Parent() {
		if p.PersistentPostRunE != nil {
			return p.PersistentPostRunE(c, args)
		} else if p.PersistentPostRun != nil {
			p.PersistentPostRun(c, args)
			return nil
		}
	}
	return nil
}

// lineWorker is a command tree lines run through, with the flags and the
// env its commands run with. Lines run in the background (a script's
// lines ending in &, or mcpx repl --parallel) each take a worker of their
// own, whose output is kept until the lines before it are printed.
type lineWorker struct {
	root  *cobra.Command
	flags *rootFlags
	env   *env
	kept  lineOutput
}

// lineOutput is a background line's output kept until its turn: what it
// wrote to stdout and to stderr, in the order it wrote it. Two buffers
// printed one after the other put a line's stderr (its progress, a
// warning before its call) after all its stdout when both streams are
// one (2>&1, a terminal), unlike the same line run on its own. Writes
// come from the line's command and from the session's read loop (its
// progress), hence the lock.
type lineOutput struct {
	mu     sync.Mutex
	chunks []lineChunk
}

type lineChunk struct {
	toErr bool
	b     []byte
}

func (o *lineOutput) write(toErr bool, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.chunks)
	switch {
	case n > 0 && o.chunks[n-1].toErr == toErr:
		o.chunks[n-1].b = append(o.chunks[n-1].b, p...)
	case n < cap(o.chunks): // a chunk of an earlier line: its memory again
		o.chunks = o.chunks[:n+1]
		o.chunks[n].toErr, o.chunks[n].b = toErr, append(o.chunks[n].b[:0], p...)
	default:
		o.chunks = append(o.chunks, lineChunk{toErr, append([]byte(nil), p...)})
	}
}

// flush writes what was kept to out and errOut, in order, and forgets it.
func (o *lineOutput) flush(out, errOut io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.chunks {
		w := out
		if c.toErr {
			w = errOut
		}
		_, _ = w.Write(c.b)
	}
	o.chunks = o.chunks[:0]
}

// lineStream is one of a lineOutput's two streams.
type lineStream struct {
	o     *lineOutput
	toErr bool
}

func (w lineStream) Write(p []byte) (int, error) {
	w.o.write(w.toErr, p)
	return len(p), nil
}

// spawn prepares a script's line to run in the background on a worker of
// its own (repl.Runner.Spawn); the REPL's own commands run in order.
func (s *replSession) spawn(words []string) (func(context.Context) repl.Result, func()) {
	if replCommandNamed(s.commands, words[0]) != nil || strings.HasPrefix(words[0], ":") {
		return nil, nil
	}
	w := s.takeWorker()
	run := func(ctx context.Context) repl.Result {
		code := s.runLineOn(ctx, w, words)
		s.last.Store(int32(code))
		return repl.Result{Code: code}
	}
	flush := func() {
		w.kept.flush(s.ios.Out, s.ios.ErrOut)
		s.workersMu.Lock()
		s.workers = append(s.workers, w)
		s.workersMu.Unlock()
	}
	return run, flush
}

// takeWorker returns an idle worker, building one (a command tree of its
// own) when none is.
func (s *replSession) takeWorker() *lineWorker {
	s.workersMu.Lock()
	if n := len(s.workers); n > 0 {
		w := s.workers[n-1]
		s.workers = s.workers[:n-1]
		s.workersMu.Unlock()
		return w
	}
	s.workersMu.Unlock()
	w := &lineWorker{}
	ios := *s.ios
	ios.Out, ios.ErrOut = lineStream{&w.kept, false}, lineStream{&w.kept, true}
	w.env = &env{ios: &ios, run: s.line.run, conns: s.conns, repl: s}
	w.root, w.flags = s.lineTreeFor(w.env)
	w.root.SetOut(ios.Out)
	w.root.SetErr(ios.ErrOut)
	return w
}

// notInREPL says why name, one of mcpx's commands, makes no sense inside a
// session, if it does not: the REPL's tree leaves such commands out (not
// offered, not completed) and says so when one is typed. (A switch, not
// a map built when mcpx starts: only the REPL reads it.)
func notInREPL(name string) (why string, ok bool) {
	switch name {
	case "replay":
		why = "it serves a trace as a mock server on this terminal; run mcpx replay from a shell"
	case "proxy":
		why = "it stands in for a server on this terminal; run mcpx proxy from a shell"
	case "verify":
		why = "it runs a session of its own against a trace; run mcpx verify from a shell"
	case "connect":
		why = "this REPL holds its session already; run mcpx connect from a shell"
	case "disconnect":
		why = "it ends sessions of mcpx connect; run it from a shell"
	case "sessions":
		why = "it lists the sessions of mcpx connect; run it from a shell"
	case "servers":
		why = "it reads and edits configuration files, and this REPL's server is chosen already (mcpx repl NAME); run mcpx servers from a shell"
	case "auth":
		why = "authorization is the session's (give its flags to mcpx repl); run mcpx auth from a shell"
	case "completion":
		why = "it writes a shell's completion script; run it from a shell (the server's completions of an argument: complete)"
	case "repl":
		why = "this is the REPL already; its server stays connected (:reconnect starts a new session)"
	case "flags":
		why = "the session's flags go to mcpx repl; per command: --json, --wire, -v"
	default:
		return "", false
	}
	return why, true
}

// allowedLineFlags are the global flags a REPL command may carry: the
// others choose or shape the session, which is open already.
var allowedLineFlags = map[string]bool{"json": true, "wire": true, "verbose": true, "help": true, "ui": true}

// lineTree builds the command tree the REPL's lines run through, once for
// the REPL: mcpx's own, with the server flags hidden and refused, help
// texts without the server part, resources unsubscribe, and tools call
// NAME --help describing the tool.
func (s *replSession) lineTree() (*cobra.Command, *rootFlags) { return s.lineTreeFor(s.line) }

// replSeeAlso is the last line of every command's usage in the REPL.
const replSeeAlso = "Per command: --json, --wire, -v (the session's other flags go to mcpx repl)"

// lineTreeFor builds a line tree whose commands run with e.
func (s *replSession) lineTreeFor(e *env) (*cobra.Command, *rootFlags) {
	root, flags := newRootCmd(e)
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !allowedLineFlags[f.Name] {
			f.Hidden = true
		}
	})
	root.SetUsageFunc(usageFunc(func(*cobra.Command) string { return replSeeAlso }))
	for _, c := range root.Commands() {
		if _, ok := notInREPL(c.Name()); ok {
			root.RemoveCommand(c)
			continue
		}
		switch c.Name() {
		case "resources":
			c.AddCommand(newResourcesUnsubscribeCmd(e))
		case "tools":
			for _, sub := range c.Commands() {
				if sub.Name() == "call" {
					s.toolHelpOn(sub, e.ios)
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
	return root, flags
}

// sessionFlagAnnotation marks the hidden copies of the session's flags
// that addSessionFlags gives each command of the line tree.
const sessionFlagAnnotation = "mcpx-session-flag"

// addSessionFlags gives c, as hidden flags of its own, the session's flags
// that c does not define itself, so that checkLine can refuse them by name
// (mcpx's own tree has them as persistent flags of its root). It is done
// when a line first names c (executeLine's prepare), not for every
// command of a line tree: a tree per line running at once (repl
// --parallel), each giving some sixty commands sixty flags, cost a script
// of 400 calls at 16 in flight a fifth of its CPU. It reports whether c
// was new to it.
func addSessionFlags(c *cobra.Command, session *pflag.FlagSet) bool {
	if _, done := c.Annotations[sessionFlagsGiven]; done {
		return false
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[sessionFlagsGiven] = ""
	fs := c.Flags()
	session.VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) != nil || f.Shorthand != "" && fs.ShorthandLookup(f.Shorthand) != nil {
			return
		}
		cp := *f
		cp.Hidden = true
		cp.Annotations = sessionFlagAnnotations // (only read)
		fs.AddFlag(&cp)
	})
	return true
}

var sessionFlagAnnotations = map[string][]string{sessionFlagAnnotation: nil}

// sessionFlagsGiven is the command annotation that says addSessionFlags
// gave the command its flags.
const sessionFlagsGiven = "mcpx-session-flags-given"

var exampleLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(\s*)mcpx (.*?)(?:\s+--\s.*|\s+--url\s+\S+)?$`) })

// replExamples rewrites one-shot examples for the REPL: no program name,
// no server.
func replExamples(ex string) string {
	replExampleCache.Lock()
	defer replExampleCache.Unlock()
	if r, ok := replExampleCache.m[ex]; ok {
		return r
	}
	r := exampleLine().ReplaceAllString(ex, "$1$2")
	if replExampleCache.m == nil {
		replExampleCache.m = map[string]string{}
	}
	replExampleCache.m[ex] = r
	return r
}

// replExampleCache keeps the examples rewritten for the REPL: each line
// tree (one per line running at once) rewrites the same ones.
var replExampleCache struct {
	sync.Mutex
	m map[string]string
}

// checkLine refuses what a REPL command cannot change — the server and
// the session's flags — and gives the line's commands their
// configuration: the REPL's, with the line's output flags.
func (s *replSession) checkLine(c *cobra.Command, lf *rootFlags, e *env) error {
	var bad []string
	c.Flags().Visit(func(f *pflag.Flag) {
		// (Visit also visits what earlier lines set: Changed is this line's.)
		if _, session := f.Annotations[sessionFlagAnnotation]; f.Changed && session {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usageErrorf("%s chooses or shapes the session, which is open already: give it to mcpx repl (in the REPL: :wire, :json, :log, :roots, :reconnect)", strings.Join(bad, ", "))
	}
	if c.Flags().ArgsLenAtDash() >= 0 {
		return usageErrorf("the REPL is connected to its server already: leave out -- and the server command")
	}
	if lf.out.wire {
		s.wire.Store(true)
	}
	e.cfg = config{
		out:  output{json: lf.out.json, wire: lf.out.wire, verbose: lf.out.verbose, color: s.cfg.out.color},
		conn: lineConn(s.cfg.conn.feat),
	}
	// --ui on a line opens the view of the call it makes; the session
	// declares MCP Apps or not (:ui).
	e.cfg.conn.feat.ui.on = lf.ui.on
	if lf.ui.on && !s.cfg.conn.feat.ui.on {
		newConsole(s.ios, s.cfg.out, s.conns.prompter).Warn("this session does not declare MCP Apps (:ui on declares it), so the server may not offer views")
	}
	return nil
}

// toolHelpOn makes tools call NAME --help describe the tool from the live
// server, then point at the command's flags (toolHelpTail); the usual
// help when the tool cannot be described.
func (s *replSession) toolHelpOn(call *cobra.Command, ios *IOStreams) {
	def := call.HelpFunc()
	call.SetHelpFunc(func(c *cobra.Command, args []string) {
		if names := c.Flags().Args(); len(names) > 0 && s.toolHelp(names[0], ios) {
			fmt.Fprintln(ios.Out)
			toolHelpTail(c, true, ios.outWidth())
			return
		}
		def(c, args)
	})
}

// toolHelp describes the tool name from the live server and reports
// whether it could.
func (s *replSession) toolHelp(name string, ios *IOStreams) bool {
	s.mu.Lock()
	cat, c := s.catalog, s.c
	s.mu.Unlock()
	if cat == nil || c == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	t, err := cat.Tool(ctx, name)
	if err != nil {
		c.console.Warn(err.Error())
		return false
	}
	// On a terminal, its description is wrapped at words, as mcpx tools
	// call NAME --help's is.
	newPrinter(ios, s.cfg.out).WithWidth(ios.outWidth()).ToolHelp(*t)
	return true
}

// help lists what can be typed.
func (s *replSession) help() {
	// Its sentences are broken at words on a terminal, as the console's
	// lines are.
	width := s.ios.outWidth()
	fmt.Fprintln(s.ios.Out, tui.WrapText("Protocol commands (as in mcpx, without the server; `help COMMAND` or COMMAND --help for more):", width))
	w := tui.NewColumns(s.ios.Out)
	for _, c := range s.root.Commands() {
		// (cobra adds its help command to a tree it ran: help is the REPL's.)
		if !c.IsAvailableCommand() || c.Name() == "repl" || c.Name() == "help" {
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
	w = tui.NewColumns(s.ios.Out)
	for _, h := range s.commands {
		fmt.Fprintf(w, "  %s\t%s\n", h.use, h.short)
	}
	w.Flush()
	fmt.Fprintln(s.ios.Out, "\n"+tui.WrapText("Per command: --json, --wire, -v. Quote words with spaces ('a b'); JSON needs no quotes.", width))
	fmt.Fprintln(s.ios.Out, tui.WrapText("Ctrl-C cancels the command running; Ctrl-D or exit leaves.", width))
}

// report prints a REPL command's error the way mcpx reports errors, and
// returns its exit status.
func (s *replSession) report(ctx context.Context, err error) int {
	return s.reporter(s.json.Load(), false).report(atLine(ctx, err))
}

// atLine names the line of the script a command's error comes from, when
// ctx is a script's command's, so that the failure can be found in the
// script (lines run with --parallel report in the order of the lines).
func atLine(ctx context.Context, err error) error {
	if n := repl.LineOf(ctx); n > 0 {
		return &repl.LineError{Line: n, Err: err}
	}
	return err
}

// reporter reports errors in the REPL: as JSON with json, with the advice
// for a line that shows the authorization steps when narrated. (A line
// sends no credentials of its own; $MCPX_BEARER_TOKEN is the one it
// knows of, and the Authorization header of a configured server's entry,
// mcpx repl NAME.)
func (s *replSession) reporter(json, narrated bool) reporter {
	return s.reporterTo(s.ios, json, narrated)
}

// reporterTo is reporter writing to ios.
func (s *replSession) reporterTo(ios *IOStreams, json, narrated bool) reporter {
	return reporter{ios: ios, json: json, inREPL: true, secrets: s.secrets,
		hints: hintFacts{bearer: ios.Getenv("MCPX_BEARER_TOKEN") != "", entryAuth: s.cfg.conn.http.authFrom, narrated: narrated}}
}

// reportPlain reports what the runner meets outside a command.
func (s *replSession) reportPlain(err error, usage bool) int {
	if usage {
		err = &usageError{err: err}
	}
	return s.reporter(s.json.Load(), false).report(err)
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
	root := s.root
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
	for _, h := range s.commands {
		node.Children = append(node.Children, &repl.Node{Name: h.name, Path: h.name})
	}
	return node
}
