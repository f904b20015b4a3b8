package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/internal/userfile"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/tui"
)

// replOptions are the flags of mcpx repl (also taken by mcpx with no
// command).
type replOptions struct {
	e         *env
	named     string // mcpx repl NAME
	file      string
	keepGoing bool
	noHistory bool
	parallel  int
	flags     *pflag.FlagSet // where the flags above are, to tell which were given
}

func (o *replOptions) addFlags(f *pflag.FlagSet) {
	o.flags = f
	f.StringVarP(&o.file, "file", "f", "", "run the commands in script `FILE` instead of reading them from the terminal (- for standard input)")
	f.BoolVar(&o.keepGoing, "keep-going", false, "in a script, go on after a command fails (the exit status is then the first failure's)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not read or write the command history file")
	f.IntVar(&o.parallel, "parallel", 1, "in a script, run up to `N` commands at once (each line's output is printed in the order of the lines)")
}

const replLong = `Open one session with the server and keep it open: type commands (the same
commands as mcpx's, without the server part) and see notifications, log
messages and server requests as they come.

With a terminal, commands are edited with history and Tab completion from the
live server (tool, prompt and resource names, template URIs, key= arguments
and their values). Without one — or with -f FILE — commands are read line by
line, each is echoed with its output, and the first failing command ends the
session with its exit status (--keep-going goes on). In a script, a line ending
in " &" runs without waiting for the ones before it, and --parallel N runs
every line so, up to N at once; outputs are printed in the order of the lines,
and wait waits for the lines running.

REPL commands besides mcpx's own: help, :wire on|off, :json on|off,
:record FILE|off, :reconnect, :roots [add|remove PATH], :ui [on|off],
:log LEVEL, :sleep DURATION, :wait METHOD [TIMEOUT], wait, exit [STATUS].

The history is kept in $XDG_STATE_HOME/mcpx/history (~/.local/state/mcpx/history;
$MCPX_HISTORY_FILE overrides the path), except commands typed with a leading
blank and commands that give a credential (--bearer, -H 'Authorization: …',
password=…).`

func newReplCmd(e *env) *cobra.Command {
	o := &replOptions{e: e}
	c := &cobra.Command{
		Use:  "repl [-f FILE] [flags] [NAME | -- <server command>]",
		Long: replLong,
		Example: `  mcpx repl -- node server.js
  mcpx repl github    (a server of mcpx servers)
  mcpx --url http://127.0.0.1:3001/mcp
  printf 'tools call echo message=hi\nping\n' | mcpx repl -- node server.js
  mcpx repl -f session.mcpx --keep-going -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 0, 1); err != nil {
				return err
			}
			if len(own) == 1 {
				// mcpx repl NAME is mcpx repl -s NAME.
				if ref := e.cfg.conn.named.ref; ref != "" && ref != own[0] {
					return usageErrorf("mcpx repl %s -s %s: name the server once", own[0], ref)
				}
				o.named = own[0]
			}
			return o.run(c.Context(), server)
		},
	}
	o.addFlags(c.Flags())
	ownsRecording(c) // :record FILE records with them
	return c
}

func (o *replOptions) run(ctx context.Context, server []string) (err error) {
	e := o.e
	if e.repl != nil {
		return usageErrorf("this is the REPL already; its server stays connected (:reconnect starts a new session)")
	}
	interactive := o.file == "" && e.ios.InTTY && (e.ios.OutTTY || e.ios.ErrTTY)
	if interactive {
		if err := o.refuseScriptFlags(); err != nil {
			return err
		}
	}
	d := e.cfg.conn
	if o.named != "" {
		d.named.ref = o.named
	}
	d, err = e.connFor(ctx, d, server, "mcpx repl")
	if err != nil {
		return err
	}
	if o.parallel < 1 {
		return usageErrorf("--parallel %d: give the number of commands a script may run at once, 1 or more", o.parallel)
	}
	var script io.Reader
	switch o.file {
	case "":
	case "-":
		// -f - is stdin, as for --args @-: the way to say "a script"
		// when stdin is a terminal, or in a command written for -f FILE.
		script = e.ios.In
	default:
		// (A named pipe's open waits for its writer, until Ctrl-C.)
		f, err := userfile.Open(ctx, o.file, pipeWaitNote(e.console(), "-f"))
		if err != nil {
			return fileFlagError(ctx, "-f", err)
		}
		defer f.Close()
		// A directory opens; reading it fails only once the server runs.
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return usageErrorf("-f %s: is a directory; give a script file (or - for standard input)", o.file)
		}
		script = f
	}
	if script == nil && !interactive {
		script = e.ios.In
	}
	if e.ios.process && e.ios.Getenv("GOMAXPROCS") == "" && o.parallel == 1 {
		oneProcessor()
	}
	s := newReplSession(ctx, e, d, interactive)

	// The goroutines started here end with runCtx, and are waited for.
	var wg sync.WaitGroup
	defer wg.Wait()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	runner := &repl.Runner{
		Exec:        s.exec,
		Interactive: interactive,
		KeepGoing:   o.keepGoing,
		Report:      s.reportPlain,
		Spawn:       s.spawn,
		Parallel:    o.parallel,
	}
	s.runner = runner
	var interruptHook func() bool
	if interactive {
		ed, err := o.newEditor(s)
		if err != nil {
			return err
		}
		defer ed.Close()
		s.editor = ed
		wg.Go(func() {
			<-runCtx.Done()
			ed.Close()
		})
		runner.Read = func() (string, error) {
			text, err := ed.ReadCommand()
			// (A command typed with a leading blank is not kept, nor one
			// that gives a credential.)
			if err == nil && !strings.HasPrefix(text, " ") && !givesCredential(text) {
				ed.AddHistory(text)
			}
			return text, err
		}
		runner.Hint = func() {
			fmt.Fprintln(s.ios.ErrOut, tui.WrapText("(to leave, type exit or press Ctrl-D)", s.ios.errWidth()))
		}
		e.run.prompter.UseLineSource(ed)
		// Ctrl-C while a command runs cancels it, and only it; once the
		// session is open (until then, Ctrl-C ends the connect and mcpx).
		interruptHook = func() bool {
			runner.Interrupt()
			return true
		}
	} else {
		sc := repl.NewScript(script)
		feed := startScriptFeed(sc)
		defer feed.stop()
		runner.Line = sc.Line
		if !s.ios.OutTTY {
			out := newBatchOut(s.ios.Out)
			// Closed (flushed) after the session's close, the lines and
			// what they wrote done; later writes go straight through.
			defer out.Close()
			s.ios.Out, s.ios.ErrOut = out, flushingWriter{s.ios.ErrOut, out}
			feed.beforeWait = func() { _ = out.Flush() }
		}
		runner.Read = func() (string, error) { return feed.read(runCtx) }
		runner.Echo, runner.EscapeEcho = s.ios.Out, tui.Escape
		if s.json.Load() {
			runner.Echo = s.ios.ErrOut // stdout holds only the results
		}
	}
	// The command tree lines run through writes where the editor says.
	s.root.SetOut(s.ios.Out)
	s.root.SetErr(s.ios.ErrOut)
	if err := s.open(ctx); err != nil {
		return err
	}
	if interruptHook != nil {
		e.run.onInterrupt.Store(&interruptHook)
		defer e.run.onInterrupt.Store(nil)
	}
	defer func() {
		// A trace that could not be written is an error of its own.
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		} else if cerr != nil {
			fmt.Fprintln(s.ios.ErrOut, "mcpx: "+cerr.Error())
		}
	}()
	if interactive || s.cfg.out.verbose {
		s.banner()
	}
	code := runner.Run(runCtx)
	if !interactive && s.cfg.out.strict && ctx.Err() == nil && code != ExitInterrupted {
		// The departures no line answered for (a bad notification
		// between lines) fail the script at its end, after its lines:
		// the server departed from the protocol during it all the same.
		if n := s.unanswered(); n > 0 {
			if c := s.reportPlain(&strictError{n: n, outside: true}, false); code == 0 {
				code = c
			}
		}
	}
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

// scriptFlags are the flags of mcpx repl that shape a script's run only:
// typed at a terminal, commands run one at a time and a failure never
// ends the session (repl.Runner ignores KeepGoing and Parallel there).
var scriptFlags = []string{"keep-going", "parallel"}

// refuseScriptFlags refuses, for a REPL at a terminal, the scriptFlags
// given, which it would ignore without a word. (--no-history is not one:
// a script keeps no history, which is what it asks for.)
func (o *replOptions) refuseScriptFlags() error {
	return refuseGiven(o.flags, scriptFlags,
		"applies to a script (-f FILE, or commands piped to stdin); at a terminal commands run one at a time and a failure does not end the session: leave it out",
		"apply to a script (-f FILE, or commands piped to stdin); at a terminal commands run one at a time and a failure does not end the session: leave them out")
}

// oneProcessor runs the REPL's goroutines on one processor (the user's
// GOMAXPROCS aside). A session is a chain of hand-offs, one at a time (a
// line read, a request written, the response read by the transport and
// handed to the command waiting for it): with a second processor idle,
// each hand-off wakes a thread that finds nothing to do. Measured with
// scripts/bench (issue 13): a REPL tool call's client CPU falls by a
// quarter (stdio 185 → 141 µs, Streamable HTTP 387 → 275 µs) and its
// calls/s rise; decoding and rendering a large result are one goroutine's
// work anyway. --parallel N asks for lines at once, which a second
// processor serves (16 in flight: 10–20% more calls/s), and one-shot
// commands keep the default too: one processor saved a small HTTP one-shot
// 0.15–0.35 ms but cost a 50 MiB result over stdio and a table of 10,000
// tools 6%, and how large a result will be is not known beforehand.
func oneProcessor() { runtime.GOMAXPROCS(1) }

// scriptFeed reads a script's commands in one goroutine of its own, one
// when asked, so that an interrupt can end the wait for the next command:
// a read from a pipe cannot be interrupted. stop ends the goroutine and
// waits for it, unless a read was abandoned (an interrupt): that read
// ends with the input, and the goroutine with it.
type scriptFeed struct {
	sc *repl.Script
	// beforeWait, when set, runs before a read that may wait for input
	// (the REPL's output is flushed for whoever feeds the script).
	beforeWait func()
	want       chan struct{}
	got        chan scriptLine
	done       chan struct{}
	abandoned  bool
}

type scriptLine struct {
	text string
	err  error
}

func startScriptFeed(sc *repl.Script) *scriptFeed {
	f := &scriptFeed{sc: sc, want: make(chan struct{}), got: make(chan scriptLine, 1), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for range f.want {
			text, err := sc.ReadCommand()
			f.got <- scriptLine{text, err}
		}
	}()
	return f
}

// read returns the next command, or io.EOF once ctx ends.
func (f *scriptFeed) read(ctx context.Context) (string, error) {
	if f.abandoned || ctx.Err() != nil {
		return "", io.EOF
	}
	// A command the input read so far holds whole is taken here: no read
	// can block for it, and the goroutine is idle (issue 13: two goroutine
	// switches per line of a script).
	if text, ok := f.sc.Buffered(); ok {
		return text, nil
	}
	if f.beforeWait != nil {
		f.beforeWait()
	}
	select {
	case f.want <- struct{}{}:
	case <-ctx.Done():
		return "", io.EOF
	}
	select {
	case l := <-f.got:
		return l.text, l.err
	case <-ctx.Done():
		f.abandoned = true
		return "", io.EOF
	}
}

// stop ends the reading goroutine.
func (f *scriptFeed) stop() {
	close(f.want)
	if !f.abandoned {
		<-f.done
	}
}

// newEditor sets up the line editor on the terminal and routes the
// session's output through it, so that what arrives while a command is
// typed is printed above the prompt.
func (o *replOptions) newEditor(s *replSession) (*repl.Editor, error) {
	io0 := o.e.ios
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
	if io0.colorEnabled(s.cfg.out.color, true) {
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
		OnHistoryError: func(err error) {
			newConsole(s.ios, s.cfg.out, s.conns.prompter).Warn("this session's commands are not kept in the history: " + err.Error() +
				" (MCPX_HISTORY_FILE names another file; --no-history keeps no history)")
		},
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

// givesCredential says whether a command gives a credential, and is
// therefore kept out of the history file, which outlives the session: an
// option or argument whose value looks secret (as a trace's command line
// hides it: --client-secret X, password=X), or named as a credential
// header (Authorization=X), a member of a JSON object so named
// (--args '{"password": "X"}', call tools/call {… "token": "X"}), --bearer,
// or a credential header (-H 'Authorization: …'). The session's options
// are refused in the REPL, but the line that gave one would have kept the
// token for good. So is a value that has the form of a credential,
// whatever its name (credentialValue: message="Bearer sk-…").
func givesCredential(text string) bool {
	if credentialValue(text) {
		return true
	}
	words, err := repl.Split(text)
	if err != nil {
		return false
	}
	for i, w := range words {
		if credentialValue(w) {
			return true
		}
		if _, _, secret := secretArg(words, i); secret {
			return true
		}
		name, value, hasValue := strings.Cut(w, "=")
		if hasValue && authName(name) || jsonGivesCredential(w) || hasValue && jsonGivesCredential(value) {
			return true
		}
		switch {
		case name == "--bearer":
			return true
		case name == "--header" && hasValue:
		case strings.HasPrefix(w, "-H") && !strings.HasPrefix(w, "--"):
			value, hasValue = strings.TrimPrefix(w, "-H"), len(w) > 2
		case w == "--header":
		default:
			continue
		}
		if !hasValue && i+1 < len(words) {
			value = words[i+1]
		}
		if h, _, _ := strings.Cut(value, ":"); credentialHeader(h) {
			return true
		}
	}
	return false
}

// authName reports an argument's name (a.b.authorization, --cookie) that
// names a credential header: its value is the credential.
func authName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	if i := strings.LastIndexAny(n, ".]"); i >= 0 {
		n = n[i+1:]
	}
	n = strings.TrimSuffix(n, ":")
	return n == "authorization" || n == "proxy-authorization" || n == "cookie"
}

// jsonMember matches the name of a member of a JSON object: "name":.
var jsonMember = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:`)
})

// jsonGivesCredential reports whether s, a JSON object or array as typed
// (read as text: it may be unfinished), has a member whose name looks
// secret, as an argument's would (password, api_key, authorization).
func jsonGivesCredential(s string) bool {
	if !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
		return false
	}
	for _, m := range jsonMember().FindAllStringSubmatch(s, -1) {
		if secretAssignment().MatchString(m[1]) || authName(m[1]) {
			return true
		}
	}
	return false
}

// credentialToken matches, anywhere in a command, a word with the form
// of a well-known credential: GitHub, GitLab, OpenAI and Anthropic,
// Slack, AWS and Google keys, and JSON Web Tokens (as tokenFormat, not
// anchored); a key of random characters also has a digit
// (credentialValue), which keeps words such as sk-learn-… out.
var credentialToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^\w-])(gh[pousr]_[A-Za-z0-9]{16,}|github_pat_\w{16,}|glpat-[\w-]{16,}|sk-[\w-]{16,}|xox[abpr]-[\w-]{8,}|xapp-[\w-]{8,}|AIza[\w-]{30,}|AKIA[0-9A-Z]{16}|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*)`)
})

// authCredential matches an Authorization-style value: the scheme Bearer
// or Basic, then a token68 (RFC 9110, section 11.4) of eight characters
// or more.
var authCredential = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|[^\w-])(bearer|basic)\s+([A-Za-z0-9._~+/-]{8,}=*)`)
})

// credentialValue reports whether s holds a value that has the form of a
// credential, whatever it is named: a well-known token (credentialToken),
// or Bearer/Basic followed by something that looks like a token rather
// than a word of prose ("a basic example", "bearer of news"): a digit, a
// capital inside it, base64 padding, or, after Bearer, a - _ . ~ + or /.
// A message that merely mentions a token ("the token expired") is not.
func credentialValue(s string) bool {
	for _, m := range credentialToken().FindAllStringSubmatch(s, -1) {
		if strings.HasPrefix(m[1], "AKIA") || strings.HasPrefix(m[1], "eyJ") || strings.ContainsAny(m[1], "0123456789") {
			return true
		}
	}
	for _, m := range authCredential().FindAllStringSubmatch(s, -1) {
		tok := m[2]
		switch {
		case strings.ContainsAny(tok, "0123456789"), strings.HasSuffix(tok, "="),
			strings.ToLower(tok[1:]) != tok[1:],
			strings.EqualFold(m[1], "bearer") && strings.ContainsAny(tok, "-_.~+/"):
			return true
		}
	}
	return false
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

// exitStatus ends mcpx with a status whose cause was reported already.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }
