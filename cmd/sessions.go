package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
)

// Sessions that stay open (package sessiond): mcpx connect starts a
// session process holding the server connection, one-shot commands given
// @NAME as their first argument run through it, mcpx sessions lists them
// and mcpx disconnect ends one.

// sessionRef is the open session a command runs through (@NAME).
type sessionRef struct {
	name  string
	label string // what the command runs, for the session's log
}

// takeSessionArg removes a leading @NAME from args: the command then runs
// through the open session NAME instead of starting a server.
func (g *globalOptions) takeSessionArg(args []string) []string {
	if len(args) == 0 || len(args[0]) < 2 || args[0][0] != '@' {
		return args
	}
	g.at.name = args[0][1:]
	var words []string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") || len(words) == 3 {
			break
		}
		words = append(words, a)
	}
	g.at.label = strings.Join(words, " ")
	return args[1:]
}

// sessionDir is this user's directory of session sockets.
func (g *globalOptions) sessionDir() (string, error) {
	return sessiond.Dir(g.io.Getenv)
}

// dialSession attaches to the open session @NAME where dial would start a
// server: the command's MCP session runs over the attachment, in the
// session's protocol era. --record records the command's own frames.
func (g *globalOptions) dialSession(ctx context.Context, server []string) (*client, transport.Conn, *record.Recorder, error) {
	name := g.at.name
	if g.url != "" || len(server) > 0 {
		return nil, nil, nil, usageErrorf("@%s runs the command through an open session: give no server command or --url with it", name)
	}
	if err := sessiond.CheckName(name); err != nil {
		return nil, nil, nil, usageErrorf("@%s: %v", name, err)
	}
	dir, err := g.sessionDir()
	if err != nil {
		return nil, nil, nil, err
	}
	c := &client{console: g.newConsole(), out: g.printer()}
	c.showLists.Store(g.verbose)
	g.open = append(g.open, c)
	rec, err := g.recorder(ctx, c, []string{"@" + name})
	if err != nil {
		return nil, nil, nil, err
	}
	sc, err := sessiond.Dial(ctx, dir, name, sessiond.DialOptions{Label: g.at.label, MaxMessageSize: g.maxMessageSize})
	if err != nil {
		c.Close()
		return nil, nil, nil, sessionAdvice(err, name)
	}
	st := sc.Status()
	// The session settled the era when it opened.
	if st.Era == eraModern {
		g.era, g.eraSource, g.protocolVersion = eraModern, "the session", st.ProtocolVersion
	} else {
		g.era, g.eraSource = eraLegacy, "the session"
	}
	if g.verbose {
		c.console.Note(fmt.Sprintf("through session %s: %s, %s (pid %d)", name, st.Server, st.Target, st.PID))
	}
	var conn transport.Conn = sc
	if rec != nil {
		conn = rec.Wrap(conn)
	}
	if g.wire {
		conn = transport.Tap(conn, c.console.Wire)
	}
	c.conn = conn
	return c, conn, rec, nil
}

// sessionAdvice adds what to do about a session that is not open.
func sessionAdvice(err error, name string) error {
	if errors.Is(err, sessiond.ErrNoSession) {
		return fmt.Errorf("%w (mcpx connect %s -- <server command> opens it; mcpx sessions lists the open ones)", err, name)
	}
	return err
}

// showKept prints what the session @NAME kept while no command was
// attached (mcpx @NAME watch): notifications through show, notes on the
// console.
func (g *globalOptions) showKept(ctx context.Context, c *client, show func(*jsonrpc.Message)) {
	if g.at.name == "" {
		return
	}
	dir, err := g.sessionDir()
	var kept []sessiond.Kept
	if err == nil {
		kept, err = sessiond.TakeKept(ctx, dir, g.at.name)
	}
	if err != nil {
		c.console.Warn(err.Error())
		return
	}
	if len(kept) > 0 {
		c.console.Note(fmt.Sprintf("%d kept since the last command (oldest first):", len(kept)))
	}
	for _, k := range kept {
		if k.Note != "" {
			c.console.Note(k.Time.Format(time.TimeOnly) + " " + k.Note)
			continue
		}
		msgs, _, err := jsonrpc.DecodeFrame(k.Message)
		if err != nil {
			continue
		}
		for _, m := range msgs {
			show(m)
		}
	}
}

type connectOptions struct {
	g          *globalOptions
	idle       time.Duration
	foreground bool
	// argsStdin and child are the hidden flags of the session process
	// (see start).
	argsStdin bool
	child     bool
}

func newConnectCmd(g *globalOptions) *cobra.Command {
	o := &connectOptions{g: g}
	c := &cobra.Command{
		Use:   "connect NAME [-- <server command> | --url URL]",
		Short: "Open a session that stays open; run commands through it with @NAME",
		Long: `Start the server (or connect to the one at --url, authorizing once) and keep
the session open in a background process, so that one-shot commands given
@NAME as their first argument run through it without starting the server
again. The session ends with mcpx disconnect NAME, when the server goes
away, or after --idle-timeout without a command.

Server requests (sampling, elicitation) go to the command that waits on the
session; when none does, the session answers with its own policy (the
--on-sampling and --on-elicit given to connect; decline by default).
Notifications that arrive while no command is attached are kept (a
bounded number) and shown by mcpx @NAME watch. --record on connect records
the whole session; on a command, that command's own frames.`,
		Example: `  mcpx connect dev -- node server.js
  mcpx @dev tools call echo message=hi
  mcpx @dev watch
  mcpx sessions
  mcpx disconnect dev`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			name := own[0]
			if err := sessiond.CheckName(name); err != nil {
				return usageErrorf("%v", err)
			}
			switch {
			case o.argsStdin:
				return o.nested(c.Context())
			case o.child || o.foreground:
				if g.url != "" && len(server) > 0 {
					return usageErrorf("give either --url URL or a server command after --, not both")
				}
				return o.serve(c.Context(), name, server)
			}
			if g.url == "" && len(server) == 0 {
				return usageErrorf("no server given: put the server command after --, e.g. mcpx connect %s -- node server.js, or give --url URL", name)
			}
			return o.start(c, name, server)
		},
	}
	f := c.Flags()
	f.DurationVar(&o.idle, "idle-timeout", sessiond.DefaultIdleTimeout, "end the session after `DURATION` without a command (0: never)")
	f.BoolVar(&o.foreground, "foreground", false, "keep the session in this process (until Ctrl-C) instead of in the background")
	f.BoolVar(&o.argsStdin, "session-args-stdin", false, "")
	f.BoolVar(&o.child, "session-child", false, "")
	_ = f.MarkHidden("session-args-stdin")
	_ = f.MarkHidden("session-child")
	return c
}

// start starts the session process and waits until the session is open.
// The process is mcpx itself: its command line (which ps shows to every
// user) is only "connect NAME"; the flags, which may hold secrets
// (--bearer, headers), reach it on its standard input.
func (o *connectOptions) start(c *cobra.Command, name string, server []string) error {
	g := o.g
	ctx := c.Context()
	dir, err := g.sessionDir()
	if err != nil {
		return err
	}
	if st, err := sessiond.GetStatus(ctx, dir, name); err == nil {
		return usageErrorf("session %s is open already (%s, pid %d); mcpx disconnect %s ends it", name, st.Target, st.PID, name)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding mcpx itself to start the session process: %w", err)
	}
	input, err := json.Marshal(childArgs(c, name, server))
	if err != nil {
		return err
	}
	st, err := sessiond.StartBackground(ctx, sessiond.BackgroundOptions{
		Path:   exe,
		Args:   []string{"connect", name, "--session-args-stdin"},
		Input:  input,
		Stderr: g.io.ErrOut,
	})
	var se *sessiond.StartError
	if errors.As(err, &se) {
		return &exitStatus{code: se.Code} // it said why
	}
	if err != nil {
		return err
	}
	o.opened(st)
	return nil
}

// childArgs is the session process's real command line: connect with
// every flag given, as given, and the server command.
func childArgs(c *cobra.Command, name string, server []string) []string {
	args := []string{"connect", name, "--session-child"}
	c.Flags().Visit(func(f *pflag.Flag) {
		switch v := f.Value.(type) {
		case pflag.SliceValue:
			for _, s := range v.GetSlice() {
				args = append(args, "--"+f.Name+"="+s)
			}
		case *sizeValue:
			args = append(args, "--"+f.Name+"="+strconv.FormatInt(*v.n, 10))
		default:
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	if len(server) > 0 {
		args = append(append(args, "--"), server...)
	}
	return args
}

// nested runs the command line the session process read on its standard
// input (see start).
func (o *connectOptions) nested(ctx context.Context) error {
	b, err := io.ReadAll(io.LimitReader(o.g.io.In, 1<<20))
	if err != nil {
		return fmt.Errorf("reading the session's command line: %w", err)
	}
	var args []string
	if err := json.Unmarshal(b, &args); err != nil || len(args) < 3 || args[0] != "connect" || args[2] != "--session-child" {
		return usageErrorf("--session-args-stdin: standard input holds no session command line")
	}
	ios := *o.g.io
	ios.In = strings.NewReader("")
	root, g := newRootCmd(&ios)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	if err == nil {
		return nil
	}
	if !g.started {
		err = &usageError{err: err}
	}
	return &exitStatus{code: g.report(err)}
}

// opened tells the person about the session that opened.
func (o *connectOptions) opened(st *sessiond.Status) {
	g := o.g
	if g.json {
		b, _ := json.Marshal(st)
		fmt.Fprintln(g.io.Out, string(b))
		return
	}
	con := g.newConsole()
	con.Note(fmt.Sprintf("session %s open: %s, %s (pid %d)", st.Name, orDefault(st.Server, "the server"), st.Target, st.PID))
	con.Note(fmt.Sprintf("run commands with mcpx @%s <command>; mcpx disconnect %s ends it", st.Name, st.Name))
}

// serve opens the session and serves it until it ends: in the session
// process (--session-child), which tells mcpx connect once it is open
// and logs to a file from then on, or in the foreground.
func (o *connectOptions) serve(ctx context.Context, name string, server []string) error {
	g := o.g
	dir, err := g.sessionDir()
	if err != nil {
		return err
	}
	logPath := ""
	var out *sessiond.Output
	if o.child {
		logPath = sessiond.LogPath(dir, name)
		out = sessiond.NewOutput(g.io.ErrOut)
		g.io.ErrOut = out
	}
	console := g.newConsole()
	idle := o.idle
	if idle == 0 {
		idle = -1
	}
	d, err := sessiond.New(sessiond.Options{
		Name: name, Dir: dir, Log: logPath, IdleTimeout: idle,
		MaxMessageSize: g.maxMessageSize,
		OnNote:         func(s string) { console.Note(time.Now().Format(time.TimeOnly) + " " + s) },
	})
	if errors.Is(err, sessiond.ErrExists) {
		return usageErrorf("%v; mcpx disconnect %s ends it", err, name)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	c, conn, rec, err := g.dial(ctx, server)
	if err != nil {
		return err
	}
	defer c.Close()
	c.feats = g.features(c)
	// Task-augmented requests would need the session to run the tasks
	// itself; it passes requests on instead.
	c.feats.Tasks = nil
	life := g.lifecycle(c, server)
	onNote := c.console.Note
	if rec != nil {
		onNote = func(s string) { rec.Note(s); c.console.Note(s) }
	}
	sess, err := inspector.Connect(ctx, conn, inspector.Options{
		Lifecycle:       life,
		Handlers:        d.Handlers(c.feats.HandlersFor(life)),
		OnNotification:  d.OnNotification,
		OnServerRequest: c.console.ServerRequest,
		OnWarning:       c.console.Warn,
		OnNote:          onNote,
		Timeout:         orNone(g.timeout),
		MaxTimeout:      orNone(g.maxTimeout),
	})
	if err != nil {
		conn.Close()
		return err
	}
	c.sess, c.conn = sess, nil
	if dsc, ok := conn.(transport.Describer); ok {
		c.describe = dsc.Describe()
	}
	g.afterConnect(ctx, c)
	err = d.Serve(ctx, sess, sessiond.ServeOptions{
		Target: c.describe,
		Ready: func(st sessiond.Status) error {
			if o.child {
				return sessiond.Ready(st, out, logPath)
			}
			o.opened(&st)
			console.Note("Ctrl-C ends the session")
			return nil
		},
	})
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		// Ctrl-C is how a session in the foreground ends.
		console.Note("session " + name + " closed")
		return nil
	case errors.Is(err, sessiond.ErrIdle):
		console.Note(err.Error())
		return nil
	}
	return err
}

func newSessionsCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "sessions",
		Short: "List the open sessions (mcpx connect)",
		Long: `List the sessions mcpx connect opened for this user: name, server, what it
is connected to, the commands attached now, and how long it has been idle.
With --json, one JSON array.`,
		Example: `  mcpx sessions
  mcpx sessions --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := g.sessionDir()
			if err != nil {
				return err
			}
			list, err := sessiond.List(c.Context(), dir)
			if err != nil {
				g.newConsole().Warn(err.Error())
			}
			if g.json {
				if list == nil {
					list = []sessiond.Status{}
				}
				b, _ := json.Marshal(list)
				fmt.Fprintln(g.io.Out, string(b))
				return nil
			}
			if len(list) == 0 {
				g.newConsole().Note("no open sessions; mcpx connect NAME -- <server command> opens one")
				return nil
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSERVER\tTARGET\tCOMMANDS\tIDLE\tPID")
			for _, st := range list {
				idle := "-"
				if st.Commands == 0 {
					idle = time.Since(st.LastUsed).Truncate(time.Second).String()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\n", st.Name, st.Server, st.Target, st.Commands, idle, st.PID)
			}
			return tw.Flush()
		},
	}
}

func newDisconnectCmd(g *globalOptions) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "disconnect NAME | --all",
		Short: "End an open session and its server",
		Long: `End the session NAME: the commands attached to it are detached, and its
server is shut down (a stdio server with every process it started). It
returns once the server has ended.`,
		Example: `  mcpx disconnect dev
  mcpx disconnect --all`,
		RunE: func(c *cobra.Command, args []string) error {
			if all != (len(args) == 0) || len(args) > 1 {
				return usageErrorf("%s: give one session NAME, or --all; usage: %s", c.CommandPath(), c.UseLine())
			}
			dir, err := g.sessionDir()
			if err != nil {
				return err
			}
			names := args
			if all {
				list, err := sessiond.List(c.Context(), dir)
				if err != nil {
					return err
				}
				for _, st := range list {
					names = append(names, st.Name)
				}
			}
			var errs []error
			for _, name := range names {
				if err := sessiond.Stop(c.Context(), dir, name); err != nil {
					errs = append(errs, sessionAdvice(err, name))
				} else if g.verbose {
					g.newConsole().Note("session " + name + " ended")
				}
			}
			return errors.Join(errs...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "end every open session")
	return c
}

// addSessionCommands adds connect, sessions and disconnect to root.
func addSessionCommands(root *cobra.Command, g *globalOptions) {
	root.AddGroup(&cobra.Group{ID: "sessions", Title: "Sessions that stay open:"})
	for _, c := range []*cobra.Command{newConnectCmd(g), newSessionsCmd(g), newDisconnectCmd(g)} {
		c.GroupID = "sessions"
		root.AddCommand(c)
	}
}
