package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
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

// takeSessionArg takes a leading @NAME off args: the command then runs
// through the open session NAME instead of starting a server.
func takeSessionArg(args []string) (at sessionRef, rest []string) {
	if len(args) == 0 || len(args[0]) < 2 || args[0][0] != '@' {
		return at, args
	}
	at.name = args[0][1:]
	var words []string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") || len(words) == 3 {
			break
		}
		words = append(words, a)
	}
	at.label = strings.Join(words, " ")
	return at, args[1:]
}

// notThroughSession are the commands that talk to no server of a
// session's: given @NAME, they would run as if it was not there (mcpx
// @dev disconnect dev), or complain about what was not given (mcpx @dev
// connect x: "give no -s with it").
var notThroughSession = []string{"connect", "disconnect", "sessions", "servers", "trace", "replay", "proxy", "verify", "auth", "completion"}

// checkAt refuses @NAME before a command of notThroughSession, and the
// flags that say how to start or reach a server, which the session did
// when it opened (forServer refuses -s, --url and a server command).
func checkAt(c *cobra.Command, at sessionRef) error {
	if at.name == "" {
		return nil
	}
	top := c
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	if slices.Contains(notThroughSession, top.Name()) {
		return usageErrorf("@%s runs a command through session %s, but mcpx %s does not talk to a session's server: run it without @%s", at.name, at.name, top.Name(), at.name)
	}
	var given []string
	c.Root().PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Changed || f.Name == "server" || f.Name == "url" {
			return
		}
		switch flagGroupOf(f.Name) {
		case "server", "http", "auth":
		default:
			if f.Name != "protocol-era" && f.Name != "protocol-version" {
				return
			}
		}
		given = append(given, flagName(f))
	})
	if len(given) > 0 {
		return usageErrorf("%s: @%s runs the command through an open session, whose server and protocol were settled when it opened; give %s to mcpx connect %s, or leave it out",
			strings.Join(given, ", "), at.name, strings.Join(given, ", "), at.name)
	}
	return nil
}

// settledBySession refuses the client features a command cannot change
// through the open session st, and warns about MCP Apps it did not
// declare. In the handshake era the session declared the client's
// capabilities in its initialize and answers roots/list itself; in the
// 2026-07-28 era each request declares the command's own, and the command
// answers its tools' input requests.
func settledBySession(d *connDesc, st sessiond.Status, warn func(string)) error {
	if d.feat.ui.on && !slices.Contains(st.Extensions, apps.ExtensionID) {
		warn(fmt.Sprintf("session %s does not declare MCP Apps (mcpx connect %s --ui declares it), so the server may not offer views", d.at.name, d.at.name))
	}
	if st.Era == eraModern {
		return nil
	}
	var given []string
	instead, roots := "", ""
	if len(d.feat.roots) > 0 { // (the REPL declares none with an empty list)
		given = append(given, "--root")
		roots = ", and answers the server's roots/list itself"
	}
	if d.feat.sampler == nil {
		given = append(given, "--no-sampling")
		instead = " (--on-sampling decline declines this command's sampling requests)"
	}
	if d.feat.elicitor == nil {
		given = append(given, "--no-elicitation")
		instead = " (--on-elicit decline declines this command's elicitation requests)"
	}
	if len(given) == 0 {
		return nil
	}
	if len(given) > 1 {
		instead = ""
	}
	list := strings.Join(given, ", ")
	return usageErrorf("%s: session %s declared the client's capabilities when it opened%s; give %s to mcpx connect %s, or leave it out%s", list, d.at.name, roots, list, d.at.name, instead)
}

// sessionDir is this user's directory of session sockets.
func (e *env) sessionDir() (string, error) {
	return sessiond.Dir(e.ios.Getenv)
}

// sessionDialer attaches to an open session (@NAME) where a dialer of a
// server would start it: the command's MCP session runs over the
// attachment, in the session's protocol era (sessionDesc.inSession).
// --record records the command's own frames.
type sessionDialer struct {
	dir            string
	at             sessionRef
	maxMessageSize int64
	timeout        time.Duration // --timeout (0: none)
	// observer is told of the messages the session's connection dropped
	// for their size while the command is attached (EventDropped).
	observer transport.Observer
	// onNote is told what the session did on its own while the command
	// is attached (a new session with the server).
	onNote func(string)
	// onSecret is told the credentials the session's connection learns
	// while the command is attached (an access token OAuth refreshed),
	// before the server's messages that follow, which may echo them.
	onSecret func(string)
}

var _ transport.Dialer = sessionDialer{}

// Dial attaches to the session, with ctx.
func (s sessionDialer) Dial(ctx context.Context) (transport.Conn, error) {
	sc, err := sessiond.Dial(ctx, s.dir, s.at.name, sessiond.DialOptions{Label: s.at.label, MaxMessageSize: s.maxMessageSize, Timeout: s.timeout, Observer: s.observer, OnNote: s.onNote, OnSecret: s.onSecret})
	if err != nil {
		return nil, sessionAdvice(err, s.at.name)
	}
	return sc, nil
}

// inSession returns the session description for a command run through
// the open session st: the session settled the era when it opened.
func (d sessionDesc) inSession(st sessiond.Status) sessionDesc {
	d.held = true
	if st.Era == eraModern {
		d.era, d.eraSource, d.protocolVersion = eraModern, "the session", st.ProtocolVersion
	} else {
		d.era, d.eraSource = eraLegacy, "the session"
	}
	return d
}

// inSession returns a copy of d for a command run through the open
// session st (see sessionDesc.inSession). The copy is made on the heap,
// in a frame of its own, not in the frame the session runs under (see
// env.descFor).
//
//go:noinline
func (d *connDesc) inSession(st sessiond.Status) *connDesc {
	held := *d
	held.session = held.session.inSession(st)
	return &held
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
func (e *env) showKept(ctx context.Context, c *client, show func(*jsonrpc.Message)) {
	name := e.cfg.conn.at.name
	if name == "" {
		return
	}
	dir, err := e.sessionDir()
	var kept []sessiond.Kept
	if err == nil {
		kept, err = sessiond.TakeKept(ctx, dir, name)
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
	e          *env
	idle       time.Duration
	foreground bool
	// argsStdin and child are the hidden flags of the session process
	// (see start); modeReason and authFrom tell it what its configured
	// server's entry chose (httpDesc), which the flags it gets for the
	// entry (--transport, --header) would otherwise claim.
	argsStdin  bool
	child      bool
	modeReason string
	authFrom   string
	// host is what the configured server's entry's application does with
	// it (hostEffects.held), for the commands that attach.
	host string
}

func newConnectCmd(e *env) *cobra.Command {
	o := &connectOptions{e: e}
	c := &cobra.Command{
		Use: "connect NAME [flags] [-- <server command> | --url URL | -s SERVER]",
		Long: `Start the server (or connect to the one at --url, authorizing once) and keep
the session open in a background process, so that one-shot commands given
@NAME as their first argument run through it without starting the server
again. Without a server command, --url or -s, NAME is also the configured
server to connect to (mcpx servers lists them). The session ends with mcpx
disconnect NAME, when the server goes away, or after --idle-timeout without
a command.

Server requests (sampling, elicitation) go to the command that waits on the
session; when none does, the session answers with its own policy (the
--on-sampling and --on-elicit given to connect; decline by default).
Notifications that arrive while no command is attached are kept (a
bounded number) and shown by mcpx @NAME watch. --record on connect records
the whole session; on a command, that command's own frames.`,
		Example: `  mcpx connect dev -- node server.js
  mcpx connect github    (a server of mcpx servers)
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
			d := e.cfg.conn
			if !o.child && !o.argsStdin && d.http.url == "" && len(server) == 0 && d.named.ref == "" {
				// mcpx connect NAME: the configured server NAME; for
				// SOURCE:NAME, the session is NAME.
				d.named.ref = name
				if i := strings.LastIndexByte(name, ':'); i >= 0 {
					name = name[i+1:]
				}
				if err := sessiond.CheckName(name); err != nil {
					return usageErrorf("%v; name the session yourself: mcpx connect SESSION -s %s", err, shellJoin([]string{d.named.ref}))
				}
			}
			if err := sessiond.CheckName(name); err != nil {
				return usageErrorf("%v", err)
			}
			if o.idle < 0 {
				return usageErrorf("--idle-timeout %s: give a positive duration, or 0 to keep the session open until mcpx disconnect %s", o.idle, name)
			}
			if e.cfg.out.strict && !o.child {
				// The session outlives this command: there is no
				// command's end for --strict to fail at.
				return usageErrorf("--strict applies to each command run through the session (mcpx @%s tools list --strict), not to mcpx connect", name)
			}
			if o.child {
				if o.modeReason != "" {
					d.http.modeReason = o.modeReason
				}
				if o.authFrom != "" {
					d.http.authFrom, e.run.entryAuth = o.authFrom, o.authFrom
				}
			}
			switch {
			case o.argsStdin:
				return o.nested(c.Context())
			case o.child || o.foreground:
				return o.serve(c.Context(), name, d, server)
			}
			return o.start(c, name, d, server)
		},
	}
	f := c.Flags()
	f.DurationVar(&o.idle, "idle-timeout", sessiond.DefaultIdleTimeout, "end the session after `DURATION` without a command (0: never)")
	f.BoolVar(&o.foreground, "foreground", false, "keep the session in this process (until Ctrl-C) instead of in the background")
	f.BoolVar(&o.argsStdin, "session-args-stdin", false, "")
	f.BoolVar(&o.child, "session-child", false, "")
	f.StringVar(&o.modeReason, "session-mode-reason", "", "")
	f.StringVar(&o.authFrom, "session-auth-from", "", "")
	f.StringVar(&o.host, "session-host", "", "")
	for _, h := range []string{"session-args-stdin", "session-child", "session-mode-reason", "session-auth-from", "session-host"} {
		_ = f.MarkHidden(h)
	}
	return c
}

// start starts the session process and waits until the session is open.
// The process is mcpx itself: its command line (which ps shows to every
// user) is only "connect NAME"; the flags, which may hold secrets
// (--bearer, headers), reach it on its standard input.
func (o *connectOptions) start(c *cobra.Command, name string, d connDesc, server []string) error {
	e := o.e
	ctx := c.Context()
	dir, err := e.sessionDir()
	if err != nil {
		return err
	}
	if err := openAlready(ctx, dir, name); err != nil {
		return err
	}
	var resolved *connDesc
	if d.named.ref != "" {
		// Asked here, where the person is: the session process gets the
		// server command or URL the configured server resolved to.
		rd, err := e.connFor(ctx, d, server, "mcpx connect "+name)
		if err != nil {
			return err
		}
		resolved = &rd
	} else if _, err := d.forServer(server, "mcpx connect "+name); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding mcpx itself to start the session process: %w", err)
	}
	input, err := json.Marshal(childArgs(c, name, server, resolved))
	if err != nil {
		return err
	}
	st, err := sessiond.StartBackground(ctx, sessiond.BackgroundOptions{
		Path:   exe,
		Args:   []string{"connect", name, "--session-args-stdin"},
		Input:  input,
		Stderr: e.ios.ErrOut,
	})
	var se *sessiond.StartError
	if errors.As(err, &se) && se.Code == exitStoppedOpening {
		// mcpx disconnect ended the opening; the process left the saying
		// to us, so that it is said as an interruption (exit 130).
		return fmt.Errorf("session %s: %w", name, sessiond.ErrStoppedOpening)
	}
	if errors.As(err, &se) && se.Code == ExitInterrupted {
		// Signalled by someone else (this process's interrupts end ctx,
		// and StartBackground returns that), it left the saying to us.
		return fmt.Errorf("the session process was interrupted: %w", context.Canceled)
	}
	if errors.As(err, &se) && se.Killed == "" {
		return &exitStatus{code: se.Code} // it said why
	}
	if err != nil {
		return err
	}
	o.opened(st)
	return nil
}

// openAlready returns the error for mcpx connect NAME where session name
// is open, or being opened, already; nil where it is not.
func openAlready(ctx context.Context, dir, name string) error {
	st, err := sessiond.GetStatus(ctx, dir, name)
	var silent *sessiond.NotAnsweringError
	switch {
	case errors.As(err, &silent):
		// Its process listens still (stopped, hung): a new one would find
		// the name taken, after as long a wait, and mcpx disconnect
		// cannot end it either.
		return err
	case err != nil:
		return nil
	case st.Opening:
		return usageErrorf("session %s is being opened by another mcpx connect (its process is pid %d); mcpx disconnect %s ends it", name, st.PID, name)
	}
	return usageErrorf("session %s is open already (%s, pid %d); mcpx disconnect %s ends it", name, st.Target, st.PID, name)
}

// childArgs is the session process's real command line: connect with
// every flag given, as given, and the server command; for a configured
// server, resolved is what it resolved to, given instead of the flags
// that name it.
func childArgs(c *cobra.Command, name string, server []string, resolved *connDesc) []string {
	args := []string{"connect", name, "--session-child"}
	var skip []string
	if resolved != nil {
		args = append(args, resolvedArgs(*resolved)...)
		if r := resolved.http.modeReason; r != "" {
			args = append(args, "--session-mode-reason="+r)
		}
		if a := resolved.http.authFrom; a != "" {
			args = append(args, "--session-auth-from="+a)
		}
		if h := resolved.named.host.held(); h != nil {
			args = append(args, "--session-host="+string(h))
		}
		server = resolved.server
		skip = []string{"server", "input", "trust", "env", "cwd", "url", "header", "transport"}
	}
	c.Flags().Visit(func(f *pflag.Flag) {
		if slices.Contains(skip, f.Name) {
			return
		}
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

// heldHost is what the session keeps of its configured server's entry
// for the commands that attach: as the mcpx connect that resolved the
// entry said (--session-host), or as this process resolved it.
func (o *connectOptions) heldHost(conn connDesc) json.RawMessage {
	if o.child && o.host != "" && json.Valid([]byte(o.host)) {
		return json.RawMessage(o.host)
	}
	return conn.named.host.held()
}

// exitStoppedOpening is the session process's exit status, seen only by
// the mcpx connect that started it, when mcpx disconnect ended the opening
// (sessiond.ErrStoppedOpening). It is not ExitInterrupted, which tells
// mcpx connect that the process was signalled, nor any status that
// means the process said why itself.
const exitStoppedOpening = 120

// nested runs the command line the session process read on its standard
// input (see start).
func (o *connectOptions) nested(ctx context.Context) error {
	// The session process's standard error is the parent's pipe until the
	// session is open, then its log (sessiond.Ready).
	out := sessiond.NewOutput(o.e.ios.ErrOut)
	// ctx ends, too, if mcpx connect goes away before the session is open.
	b, ctx, err := sessiond.ReadInput(ctx, o.e.ios.In, out, 1<<20)
	if err != nil {
		return fmt.Errorf("reading the session's command line: %w", err)
	}
	var args []string
	if err := json.Unmarshal(b, &args); err != nil || len(args) < 3 || args[0] != "connect" || args[2] != "--session-child" {
		return usageErrorf("--session-args-stdin: standard input holds no session command line")
	}
	ios := *o.e.ios
	ios.In = strings.NewReader("")
	ios.ErrOut = out
	e := &env{ios: &ios, run: o.e.run, conns: &connector{ios: &ios, track: o.e.run.track}, sessionOut: out}
	root, flags := newRootCmd(e)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	if err == nil {
		return nil
	}
	if !e.started {
		err = &usageError{err: err}
	}
	if errors.Is(err, sessiond.ErrStoppedOpening) {
		// Ended by mcpx disconnect before it was open: mcpx connect says
		// so (see start), as it does an interruption.
		return &exitStatus{code: exitStoppedOpening}
	}
	if errors.Is(err, context.Canceled) {
		// Interrupted before the session was open (after, serve ends
		// quietly): mcpx connect, which waits for it, reports that, once
		// (see start).
		return &exitStatus{code: ExitInterrupted}
	}
	rep := reporter{ios: &ios, json: flags.out.json, hints: e.hintFacts(), secrets: e.secrets()}
	return &exitStatus{code: rep.report(err)}
}

// opened tells the person about the session that opened.
func (o *connectOptions) opened(st *sessiond.Status) {
	e := o.e
	if e.cfg.out.json {
		b, _ := json.Marshal(st)
		fmt.Fprintln(e.ios.Out, tui.EscapeJSON(string(b)))
		return
	}
	con := e.console()
	con.Note(fmt.Sprintf("session %s open: %s, %s (pid %d)", st.Name, orDefault(st.Server, "the server"), st.Target, st.PID))
	con.Note(fmt.Sprintf("run commands with mcpx @%s <command>; mcpx disconnect %s ends it", st.Name, st.Name))
}

// serve opens the session and serves it until it ends: in the session
// process (--session-child), which tells mcpx connect once it is open
// and logs to a file from then on, or in the foreground.
func (o *connectOptions) serve(ctx context.Context, name string, desc connDesc, server []string) error {
	e := o.e
	conn, err := e.connFor(ctx, desc, server, "mcpx connect "+name)
	if err != nil {
		return err
	}
	dir, err := e.sessionDir()
	if err != nil {
		return err
	}
	logPath := ""
	out := e.sessionOut
	if o.child {
		if out == nil {
			return usageErrorf("--session-child runs only in the session process mcpx connect starts")
		}
		logPath = sessiond.LogPath(dir, name)
	}
	console := e.console()
	idle := o.idle
	if idle == 0 {
		idle = -1
	}
	d, err := sessiond.New(sessiond.Options{
		Name: name, Dir: dir, Log: logPath, IdleTimeout: idle,
		MaxMessageSize: conn.session.maxMessageSize,
		OnNote:         func(s string) { console.Note(time.Now().Format(time.TimeOnly) + " " + s) },
	})
	if errors.Is(err, sessiond.ErrExists) {
		// Another mcpx connect of the name won the race.
		if err := openAlready(ctx, dir, name); err != nil {
			return err
		}
		return usageErrorf("%v; mcpx disconnect %s ends it", err, name)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	// Only the opening ends with this context's stop (mcpx disconnect):
	// once served, a stop ends Serve.
	openCtx := d.Opening(ctx)
	stopped := func(err error) error {
		if errors.Is(context.Cause(openCtx), sessiond.ErrStoppedOpening) {
			return fmt.Errorf("session %s: %w", name, sessiond.ErrStoppedOpening)
		}
		return err
	}
	k := e.conns
	// The attached commands hear of a message the connection drops for
	// its size (d.Observe), as they would over a connection of their own;
	// the log has it too.
	c, tc, rec, err := k.open(openCtx, &conn, e.cfg.out, attachments{events: d.Observe})
	if err != nil {
		return stopped(err)
	}
	defer c.Close()
	if conn.session.traceErr != nil {
		c.console.Warn(conn.session.traceErr.Error())
	}
	if c.held != nil {
		conn.session = conn.session.inSession(*c.held)
	}
	c.feats = newFeatures(&conn, c)
	// Task-augmented requests would need the session to run the tasks
	// itself; it passes requests on instead.
	c.feats.Tasks = nil
	life := lifecycle(&conn, c.feats, c.console.Note, k.eras())
	onNote := c.console.Note
	if rec != nil {
		onNote = func(s string) { rec.Note(s); c.console.Note(s) }
	}
	sess, err := inspector.Connect(openCtx, tc, inspector.Options{
		Lifecycle:       life,
		Handlers:        d.Handlers(c.feats.HandlersFor(life)),
		OnNotification:  d.OnNotification,
		OnServerRequest: c.console.ServerRequest,
		OnInputRequest:  c.console.InputRequest,
		OnWarning:       c.console.Warn,
		OnNote:          onNote,
		// A new session with the server is news to every attached
		// command: what the old one held is gone.
		OnRenew: func(s string) {
			if rec != nil {
				rec.Note(s)
			}
			if dsc, ok := tc.(transport.Describer); ok {
				// (mcpx sessions shows the new session id.)
				d.SetTarget(dsc.Describe())
			}
			d.Tell(s)
		},
		Timeout:    orNone(conn.session.timeout),
		MaxTimeout: orNone(conn.session.maxTimeout),
		// The session's own requests (its opening, the refreshes it
		// makes) carry the trace context of mcpx connect's environment;
		// each attached command's carry its own.
		TraceContext: conn.session.traceContext,
	})
	if err != nil {
		tc.Close()
		// (The era advice says to leave out a --protocol-version of the
		// other era, as the one-shot connector's does.)
		return stopped(markVersionEra(err, conn.session.protocolVersion))
	}
	c.sess, c.conn = sess, nil
	if dsc, ok := tc.(transport.Describer); ok {
		c.describe = dsc.Describe()
	}
	if conn.http.url == "" && len(conn.server) > 0 {
		// mcpx sessions (--json) shows it, and every command through the
		// session (-v).
		c.describe = stdioTarget(conn.server)
	}
	c.afterConnect(ctx, conn.feat.logLevel)
	// The credentials the connection learns from now on (an access
	// token OAuth refreshed) go to the commands attached then, before
	// the connection presents them; a command that attaches later gets
	// them in its reply (Secrets).
	c.secrets.Tell(d.TellSecret)
	err = d.Serve(ctx, sess, sessiond.ServeOptions{
		Target:     c.describe,
		Extensions: slices.Sorted(maps.Keys(c.feats.Extensions)),
		Host:       o.heldHost(conn),
		// The commands that attach redact from what they show and
		// record of the server's messages what the connection sends.
		Secrets: c.secrets.All,
		Ready: func(st sessiond.Status) error {
			if o.child {
				return sessiond.Ready(st, out, logPath)
			}
			o.opened(&st)
			console.Note("Ctrl-C ends the session")
			return nil
		},
	})
	// The log says how many of the server's departures it counted, not
	// shown, as a one-shot command does at its end.
	c.sayUnsaid()
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

func newSessionsCmd(e *env) *cobra.Command {
	return readsGlobals(&cobra.Command{
		Use: "sessions",
		Long: `List the sessions mcpx connect opened for this user: name, server, what it
is connected to, the commands attached now, and how long it has been idle.
With --json, one JSON array.`,
		Example: `  mcpx sessions
  mcpx sessions --json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := e.sessionDir()
			if err != nil {
				return err
			}
			list, err := sessiond.List(c.Context(), dir)
			if err != nil {
				e.console().Warn(err.Error())
			}
			if e.cfg.out.json {
				if list == nil {
					list = []sessiond.Status{}
				}
				b, _ := json.Marshal(list)
				fmt.Fprintln(e.ios.Out, tui.EscapeJSON(string(b)))
				return nil
			}
			if len(list) == 0 {
				if na := (*sessiond.NotAnsweringError)(nil); errors.As(err, &na) {
					// A session that did not answer (warned about above)
					// is there still: "no open sessions" would say it is
					// not.
					e.console().Note("no session in " + dir + " answered")
					return nil
				}
				// The directory is named: a shell whose $XDG_RUNTIME_DIR
				// or $TMPDIR is another (su, cron, a terminal started
				// elsewhere) looks for the sessions in another.
				e.console().Note("no open sessions in " + dir + "; mcpx connect NAME -- <server command> opens one")
				return nil
			}
			tw := tui.NewColumns(e.ios.Out)
			fmt.Fprintln(tw, "NAME\tSERVER\tTARGET\tCOMMANDS\tIDLE\tPID")
			for _, st := range list {
				idle := "-"
				if st.Commands == 0 && !st.Opening {
					idle = time.Since(st.LastUsed).Truncate(time.Second).String()
				}
				if st.Opening {
					st.Server, st.Target = "(opening)", "-"
				}
				// The server's name and version, and a target's session id, are
				// the server's text.
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\n", tui.EscapeLine(st.Name), tui.EscapeLine(st.Server), tui.EscapeLine(st.Target), st.Commands, idle, st.PID)
			}
			return tw.Flush()
		},
	}, "lists the open sessions and connects to no server", "json")
}

func newDisconnectCmd(e *env) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use: "disconnect NAME | --all",
		Long: `End the session NAME: the commands attached to it are detached, and its
server is shut down (a stdio server with every process it started). It
returns once the server has ended.`,
		Example: `  mcpx disconnect dev
  mcpx disconnect --all`,
		RunE: func(c *cobra.Command, args []string) error {
			if all != (len(args) == 0) || len(args) > 1 {
				return usageErrorf("%s: give one session NAME, or --all; usage: %s", c.CommandPath(), c.UseLine())
			}
			dir, err := e.sessionDir()
			if err != nil {
				return err
			}
			names := args
			for _, name := range names {
				if err := sessiond.CheckName(name); err != nil {
					return usageErrorf("%v; mcpx sessions lists the open ones", err)
				}
			}
			if all {
				// An entry that is no session of this user's (a stray file,
				// one that does not answer) is warned about, as mcpx sessions
				// does, and left as it is: only a session listed and not
				// ended fails the command.
				list, err := sessiond.List(c.Context(), dir)
				if err != nil {
					e.console().Warn(err.Error())
				}
				for _, st := range list {
					names = append(names, st.Name)
				}
			}
			var errs []error
			for _, name := range names {
				err := sessiond.Stop(c.Context(), dir, name)
				var ns *sessiond.NoSessionError
				if errors.As(err, &ns) && ns.Stale {
					// Its process was killed: the session has ended, as
					// asked, and the socket it left goes, as mcpx
					// sessions removes it.
					if se := sessiond.ClearStale(dir, name); se != nil {
						e.console().Warn(se.Error())
						continue
					}
				}
				switch {
				case errors.Is(err, sessiond.ErrNoSession):
					// (Not how to open it: it was to end.)
					errs = append(errs, fmt.Errorf("%w (mcpx sessions lists the open ones)", err))
				case err != nil:
					errs = append(errs, err)
				case e.cfg.out.verbose:
					e.console().Note("session " + name + " ended")
				}
			}
			return errors.Join(errs...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "end every open session")
	return readsGlobals(c, "ends open sessions and connects to no server", "verbose")
}
