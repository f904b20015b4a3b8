package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/repl"
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

// exitStatus ends mcpx with a status whose cause was reported already.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }
