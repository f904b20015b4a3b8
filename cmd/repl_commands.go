package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
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
