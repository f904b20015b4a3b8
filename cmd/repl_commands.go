package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

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
	d := s.cfg.conn
	rec, err := d.rec.openTrace(ctx, path, d.recordOptions(d.traceTarget()))
	if errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err != nil {
		return nil, usageErrorf(":record: %v", err)
	}
	// The access token OAuth presented before the recording starts is a
	// secret of it too; so is a held session's credential, which the
	// REPL's secrets took from 4 bytes on (they tell each as they took it).
	s.secrets.Tell(rec.Credential)
	rec.Prelude(s.hs.Frames())
	return rec, nil
}

// replCommand is one of the REPL's own commands: help, exit and the colon
// commands. The table of them (replCommands) is what help lists, what
// completion offers and what a line is dispatched by.
type replCommand struct {
	name    string
	aliases []string
	use     string
	short   string
	run     func(s *replSession, ctx context.Context, args []string) repl.Result
}

// replCommands returns the table of the REPL's own commands, in the order
// help lists them. help and exit also answer to the colon forms other
// REPLs use (:help, :quit, :q), which people type from habit.
func replCommands() []replCommand {
	return []replCommand{
		{name: "help", aliases: []string{":help"}, use: "help [COMMAND]", short: "this list, or a command's help", run: (*replSession).helpCmd},
		{name: ":wire", use: ":wire [on|off]", short: "show every frame in both directions on stderr", run: reportErr((*replSession).wireCmd)},
		{name: ":json", use: ":json [on|off]", short: "print results as JSON (as --json)", run: reportErr((*replSession).jsonCmd)},
		{name: ":record", use: ":record FILE|off", short: "record the session's traffic to a trace file", run: reportErr((*replSession).record)},
		{name: ":reconnect", use: ":reconnect", short: "close the session and start a new one", run: reportErr((*replSession).reconnect)},
		{name: ":roots", use: ":roots [add|remove PATH]", short: "list or change the roots offered (sends roots/list_changed)", run: reportErr((*replSession).roots)},
		{name: ":ui", use: ":ui [on|off] | :ui call VIEW TOOL [JSON]", short: "declare MCP Apps (reconnects); tools call NAME --ui opens the tool's view; call a tool a view offers", run: reportErr((*replSession).uiCmd)},
		{name: ":log", use: ":log LEVEL", short: "ask for log messages at LEVEL and above", run: reportErr((*replSession).logLevel)},
		{name: ":sleep", use: ":sleep DURATION", short: "wait, showing what arrives", run: reportErr((*replSession).sleep)},
		{name: ":wait", use: ":wait METHOD [TIMEOUT]", short: "wait for a notification (e.g. notifications/resources/updated 15s)", run: reportErr((*replSession).wait)},
		{name: "wait", use: "wait", short: "in a script, wait for the commands running in the background (a line ending in &)", run: (*replSession).waitCmd},
		{name: "exit", aliases: []string{"quit", ":quit", ":exit", ":q"}, use: "exit [STATUS]", short: "leave (also quit, :q, Ctrl-D)", run: (*replSession).exitCmd},
	}
}

// reportErr adapts a REPL command that returns an error: the error is
// reported as mcpx reports errors, and is the line's status.
func reportErr(fn func(*replSession, context.Context, []string) error) func(*replSession, context.Context, []string) repl.Result {
	return func(s *replSession, ctx context.Context, args []string) repl.Result {
		if err := fn(s, ctx, args); err != nil {
			return repl.Result{Code: s.report(ctx, err)}
		}
		return repl.Result{}
	}
}

// replCommandNamed returns the REPL command name or one of its aliases
// names, nil for none.
func replCommandNamed(cmds []replCommand, name string) *replCommand {
	for i, c := range cmds {
		if c.name == name || slices.Contains(c.aliases, name) {
			return &cmds[i]
		}
	}
	return nil
}

// unknownColon refuses a colon command the table does not have, with the
// commands meant if it looks like some (:wir, :help), else the list.
func unknownColon(cmds []replCommand, name string) error {
	if s := replSuggestions(cmds, name); len(s) > 0 {
		return usageErrorf("unknown REPL command %s (did you mean %s?)", transport.QuoteExcerpt(name), strings.Join(s, ", "))
	}
	var names []string
	for _, c := range cmds {
		if strings.HasPrefix(c.name, ":") {
			names = append(names, c.name)
		}
	}
	return usageErrorf("unknown REPL command %s (choose one of: %s)", transport.QuoteExcerpt(name), strings.Join(names, ", "))
}

// replSuggestions returns the REPL's own commands that name may have
// meant: the one it names but for the colon (:help for help, wire for
// :wire), else the closest.
func replSuggestions(cmds []replCommand, name string) []string {
	var names []string
	cmdOf := map[string]int{}
	for i, c := range cmds {
		for _, n := range append([]string{c.name}, c.aliases...) {
			names = append(names, n)
			cmdOf[n] = i
		}
	}
	bare := strings.TrimPrefix(name, ":")
	for _, n := range names {
		if n != name && strings.TrimPrefix(n, ":") == bare {
			return []string{n}
		}
	}
	// The closest name of each command (:help, not :help and help).
	var out []string
	seen := map[int]bool{}
	for _, n := range inspector.Suggest(name, names, len(names)) {
		if !seen[cmdOf[n]] && len(out) < 3 {
			seen[cmdOf[n]] = true
			out = append(out, n)
		}
	}
	return out
}

// waitCmd waits for the lines running in the background: the runner runs
// the REPL's own commands only once the lines before them are done, so
// there is nothing left to do.
func (s *replSession) waitCmd(ctx context.Context, args []string) repl.Result {
	if len(args) > 0 {
		return repl.Result{Code: s.report(ctx, usageErrorf("usage: wait"))}
	}
	return repl.Result{}
}

func (s *replSession) exitCmd(ctx context.Context, args []string) repl.Result {
	code := 0
	if len(args) > 1 {
		return repl.Result{Code: s.report(ctx, usageErrorf("usage: exit [STATUS]"))}
	}
	if len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 || n > 255 {
			return repl.Result{Code: s.report(ctx, usageErrorf("exit %s: the status must be a number from 0 to 255", args[0]))}
		}
		code = n
	}
	return repl.Result{Code: code, Quit: true}
}

func (s *replSession) helpCmd(ctx context.Context, args []string) repl.Result {
	if len(args) == 0 {
		s.help()
		return repl.Result{}
	}
	if why, ok := notInREPL(args[0]); ok {
		return repl.Result{Code: s.report(ctx, usageErrorf("%s is not available in the REPL: %s", args[0], why))}
	}
	return repl.Result{Code: s.runLine(ctx, append(args, "--help"))}
}

// onOff shows or switches one of the REPL's switches (:wire, :json).
func (s *replSession) onOff(v *atomic.Bool, name, what string, args []string) error {
	switch {
	case len(args) == 0:
	case len(args) == 1 && args[0] == "on":
		v.Store(true)
	case len(args) == 1 && args[0] == "off":
		v.Store(false)
	default:
		return usageErrorf("usage: %s [on|off]", name)
	}
	state := "off"
	if v.Load() {
		state = "on"
	}
	fmt.Fprintf(s.ios.ErrOut, "%s is %s\n", what, state)
	return nil
}

func (s *replSession) wireCmd(_ context.Context, args []string) error {
	return s.onOff(&s.wire, ":wire", "wire output", args)
}

func (s *replSession) jsonCmd(_ context.Context, args []string) error {
	err := s.onOff(&s.json, ":json", "JSON output", args)
	if s.runner != nil && s.runner.Echo != nil && !s.interactive {
		// A script's commands are echoed where the results are not.
		s.runner.Echo = s.ios.Out
		if s.json.Load() {
			s.runner.Echo = s.ios.ErrOut
		}
	}
	return err
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
	s.closeViews()
	s.mu.Lock()
	old, oldCat := s.c, s.catalog
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
		s.strays.Add(old.unanswered())
	}
	if oldCat != nil {
		oldCat.Close()
	}
	s.ends.Wait() // the old session's end was seen
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
			fmt.Fprintln(s.ios.Out, tui.EscapeName(rt.URI))
		}
	}
	if len(args) == 0 {
		show()
		return nil
	}
	if len(args) != 2 || (args[0] != "add" && args[0] != "remove") {
		return usageErrorf("usage: :roots [add|remove PATH]")
	}
	if c.held != nil && c.held.Era != eraModern {
		// In the handshake era the open session declared the client's
		// capabilities and answers roots/list itself: a change here would
		// tell the server of roots it never sees, as --root would.
		return usageErrorf(":roots %s: session %s declared the client's capabilities when it opened, and answers the server's roots/list itself; give --root to mcpx connect %s", args[0], c.held.Name, c.held.Name)
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
	s.cfg.conn.feat.roots = list // a new session offers them too
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
	s.cfg.conn.feat.logLevel = level // a new session asks for it too
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
	timeout := s.cfg.conn.session.timeout
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		if err != nil || d <= 0 {
			return usageErrorf(":wait: %s is not a positive duration (e.g. 15s)", transport.QuoteExcerpt(args[1]))
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
	notificationPrinter(s.ios, output{json: s.json.Load(), color: s.cfg.out.color})(m)
	return nil
}

// uiCmd shows or switches the declaration of MCP Apps (extension
// io.modelcontextprotocol/ui). Capabilities are declared when a session
// opens, so switching reconnects; the views open so far are torn down
// with the old session.
func (s *replSession) uiCmd(ctx context.Context, args []string) error {
	on := s.cfg.conn.feat.ui.on
	switch {
	case len(args) == 0:
	case len(args) > 0 && args[0] == "call":
		return s.uiCall(ctx, args[1:])
	case len(args) == 1 && (args[0] == "on" || args[0] == "off"):
		if want := args[0] == "on"; want != on {
			s.cfg.conn.feat.ui.on = want
			fmt.Fprintf(s.ios.ErrOut, "MCP Apps is %s: reconnecting to declare it\n", args[0])
			return s.reconnect(ctx, nil)
		}
	default:
		return usageErrorf("usage: :ui [on|off], or :ui call VIEW TOOL [JSON]")
	}
	state := "off"
	if on {
		state = "on (tools call NAME --ui opens the tool's view)"
	}
	fmt.Fprintf(s.ios.ErrOut, "MCP Apps is %s\n", state)
	s.mu.Lock()
	h := s.views
	s.mu.Unlock()
	if h != nil {
		for _, v := range h.Views() {
			fmt.Fprintf(s.ios.ErrOut, "view of %s: %s\n", tui.EscapeName(v.Info().Tool), v.URL())
			if tools := v.Tools(); len(tools) > 0 {
				fmt.Fprintf(s.ios.ErrOut, "  %s\n", viewToolsLine(v.Info(), tools, true))
			}
		}
	}
	return nil
}

// uiCall calls a tool a view offers of its own (draft spec "App-Provided
// Tools": tools/call from the host to the view), VIEW naming the view by
// its tool (or its id, when two views are of one tool), and prints the
// view's result as a tool's.
func (s *replSession) uiCall(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return usageErrorf("usage: :ui call VIEW TOOL [JSON]: VIEW is the tool whose view it is (see :ui)")
	}
	s.mu.Lock()
	h := s.views
	s.mu.Unlock()
	var matches []*apps.View
	if h != nil {
		for _, v := range h.Views() {
			if v.Info().Tool == args[0] || v.Info().ID == args[0] {
				matches = append(matches, v)
			}
		}
	}
	switch {
	case len(matches) == 0:
		return usageErrorf("no view of %s is open (:ui lists them)", tui.EscapeLine(args[0]))
	case len(matches) > 1:
		return usageErrorf("%d views of %s are open: name one by its id (the part of its URL after #)", len(matches), tui.EscapeLine(args[0]))
	}
	v := matches[0]
	var input json.RawMessage
	if len(args) > 2 {
		input = json.RawMessage(strings.Join(args[2:], " "))
		if _, err := inspector.ParseObject(input); err != nil || !json.Valid(input) {
			return usageErrorf(`:ui call: the arguments must be a JSON object, e.g. {"position":4}`)
		}
	}
	res, err := v.CallTool(ctx, args[1], input)
	if errors.Is(err, apps.ErrNoSuchTool) {
		var names []string
		for _, t := range v.Tools() {
			names = append(names, tui.EscapeName(t.Name))
		}
		offered := "none"
		if len(names) > 0 {
			offered = strings.Join(names, ", ")
		}
		return usageErrorf("the view of %s offers no tool %s (it offers: %s)", tui.EscapeName(v.Info().Tool), tui.EscapeLine(args[1]), offered)
	}
	if err != nil {
		return fmt.Errorf("view %s, tool %s: %w", tui.EscapeName(v.Info().Tool), tui.EscapeLine(args[1]), err)
	}
	c, cerr := s.current()
	if cerr != nil {
		return cerr
	}
	if s.json.Load() {
		fmt.Fprintf(s.ios.Out, "%s\n", res)
		return nil
	}
	c.out.ToolResult(res)
	return nil
}
