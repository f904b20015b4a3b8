package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
	"github.com/spf13/cobra"
)

// replSession is the REPL: its one session, shared by every command
// typed, and what the REPL keeps besides (:wire, :json, :record, the
// notifications :wait takes). Commands run through mcpx's own command
// tree, built once for the REPL (lineTree), whose withClient hands them
// this session's client instead of connecting and closing.
type replSession struct {
	// cfg is the REPL's configuration: the server, the session and its
	// output. :roots and :log change what a new session (:reconnect)
	// offers and asks for.
	cfg   config
	ctx   context.Context
	ios   *IOStreams // the streams commands write to (through the editor)
	conns *connector

	interactive bool
	editor      *repl.Editor
	runner      *repl.Runner
	node        *repl.Node    // the grammar completion follows
	commands    []replCommand // the REPL's own commands

	// The command tree lines run through, and what its commands run with.
	root      *cobra.Command
	lineFlags *rootFlags
	line      *env

	// workers are the idle command trees of lines run in the background.
	workersMu sync.Mutex
	workers   []*lineWorker

	wire atomic.Bool // :wire (and --wire)
	json atomic.Bool // :json (and --json)

	mu      sync.Mutex
	c       *client
	catalog *inspector.Catalog
	closing bool               // the session is being closed on purpose
	ended   bool               // the end of the session was reported
	watch   *inspector.Watcher // list changes and resource subscriptions
	trace   traceWriter        // :record
	// views is the MCP Apps host of the REPL, made for the first call
	// with --ui: its views stay open while the session lasts.
	views *apps.Host
	// hs keeps the session's handshake, which a :record started later
	// begins with.
	hs record.Handshake
	// secrets are the secrets its connections know: the credentials they
	// send, told the access tokens OAuth presents, which a :record started
	// later is told too.
	secrets *record.Secrets
	// ends waits for the goroutine watching each session's end.
	ends sync.WaitGroup

	notes *noteQueue
	last  atomic.Int32 // the status of the last command run
	// strays counts the departures of the sessions :reconnect closed that
	// no line answered for (see lineDepartures, unanswered).
	strays atomic.Int64
}

// newReplSession returns the REPL for the server d describes, run from
// the command tree of e, with its command tree and grammar built.
func newReplSession(ctx context.Context, e *env, d connDesc, interactive bool) *replSession {
	ios := *e.ios
	s := &replSession{cfg: config{out: e.cfg.out, conn: d}, ctx: ctx, ios: &ios, interactive: interactive, notes: newNoteQueue()}
	s.wire.Store(s.cfg.out.wire)
	s.cfg.out.wire = false // frames are shown by the REPL's own tap, which :wire switches
	s.json.Store(s.cfg.out.json)
	s.secrets = d.knownSecrets()
	if s.cfg.conn.feat.roots == nil {
		// Roots are declared so that :roots can change them.
		s.cfg.conn.feat.roots = []inspector.Root{}
	}
	// The REPL's consoles write through the editor; what it learns about
	// servers lasts its sessions.
	s.conns = &connector{ios: s.ios, track: e.conns.track, prompter: e.run.prompter, sharedIn: true}
	s.line = &env{ios: s.ios, run: e.run, conns: s.conns, repl: s}
	s.commands = replCommands()
	s.root, s.lineFlags = s.lineTree()
	s.node = s.grammar()
	return s
}

// open connects (or reconnects) and starts what follows the session: the
// catalog for completion, the watch for a server that dies, and the watch
// of list changes (for completion) and of the resources subscribed to.
func (s *replSession) open(ctx context.Context) error {
	d := s.cfg.conn
	c, err := s.conns.connect(ctx, &d, s.cfg.out, attachments{observe: s.observer(), frames: s.frame, wire: s.wire.Load, secrets: s.secrets})
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
	s.ends.Go(func() { s.watchEnd(c) })
	return nil
}

// observer returns what sees each notification of a session first:
// the catalog and :wait's queue; list changes are shown, but a burst
// (servers announce their lists one by one at start-up) as one line (all
// of them with -v).
func (s *replSession) observer() func(*client, *jsonrpc.Message) {
	shown := map[string]time.Time{}
	return func(c *client, m *jsonrpc.Message) {
		s.observe(m)
		if inspector.IsListChanged(m) && c.sink.get() == nil && !c.showLists.Load() {
			if now := time.Now(); now.Sub(shown[m.Method]) > 2*time.Second {
				shown[m.Method] = now
				c.console.Notification(m)
			}
		}
	}
}

// frame is the REPL's tap on every frame of c's connection: it keeps the
// handshake, shows frames while :wire is on and records them while
// :record is.
func (s *replSession) frame(c *client, t time.Time, dir transport.Direction, f transport.Frame) {
	s.hs.Frame(t, dir, f)
	if s.wire.Load() {
		c.wire(t, dir, f)
	}
	s.mu.Lock()
	tw := s.trace
	s.mu.Unlock()
	if tw != nil {
		tw.Frame(t, dir, f)
	}
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

// unanswered is how many of the server's departures no line answered
// for, in every session the REPL opened: those tied to no request (a bad
// notification, between lines or while a line ran), and those tied to a
// line that had ended. A script run with --strict fails at its end for
// them (see replOptions.run).
func (s *replSession) unanswered() int64 {
	s.mu.Lock()
	c := s.c
	s.mu.Unlock()
	n := s.strays.Load()
	if c != nil {
		n += c.unanswered()
	}
	return n
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
func (s *replSession) with(e *env, server []string, fn func(*client) error) error {
	if len(server) > 0 {
		return usageErrorf("the REPL is connected to its server already: leave out -- and the server command")
	}
	c, err := s.current()
	if err != nil {
		return err
	}
	if e.ios != s.ios {
		// A line run in the background prints to output of its own.
		c = c.withOutput(e.ios, s.cfg.out)
	}
	// After the line, the departures counted and not shown since the
	// last line said them (the REPL's summary of a flood).
	defer c.sayUnsaid()
	prev, every := c.sink.getEvery()
	defer c.sink.setEvery(prev, every)
	defer c.console.ClearProgress()
	// (--strict is the line's: see runLineOn.)
	return fn(c)
}

// close ends the session: subscriptions, then the server, and waits for
// what watched it. It returns the first error finishing the files: the
// --record trace, the :record trace, the --server-stderr file.
func (s *replSession) close() error {
	s.closeViews()
	s.mu.Lock()
	c, cat := s.c, s.catalog
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
	if cat != nil {
		cat.Close()
	}
	s.ends.Wait()
	if tw != nil {
		if err := tw.Close(); err != nil {
			errs = append(errs, fmt.Errorf(":record: closing the trace: %w", err))
		}
	}
	return errors.Join(errs...)
}

// viewHost returns the REPL's MCP Apps host, started at the first view.
func (s *replSession) viewHost(c *client) (*apps.Host, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.views != nil {
		return s.views, nil
	}
	h, err := newViewHost(viewHostOptions{
		ui: s.cfg.conn.feat.ui, console: c.console, current: s.current, wire: s.wire.Load,
		recorders: func() []viewRecorder {
			s.mu.Lock()
			tw := s.trace
			c := s.c
			s.mu.Unlock()
			var rs []viewRecorder
			if c != nil {
				rs = c.viewRecorders()
			}
			if r, ok := tw.(viewRecorder); ok {
				rs = append(rs, r)
			}
			return rs
		},
		openURL: openURL(s.ios), sampler: s.cfg.conn.feat.sampler, callable: true,
	})
	if err != nil {
		return nil, err
	}
	s.views = h
	return h, nil
}

// closeViews tears the REPL's views down (before its session ends: they
// talk to its server).
func (s *replSession) closeViews() {
	s.mu.Lock()
	h := s.views
	s.views = nil
	s.mu.Unlock()
	if h != nil {
		closeViews(s.ctx, h)
	}
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
			if len(ack.Asked.ResourceSubscriptions) > 0 || s.cfg.out.verbose {
				c.console.Note("subscription acknowledged: " + ack.Granted.Describe())
			}
			if len(ack.Missing.ResourceSubscriptions) > 0 {
				c.console.Warn("the server did not agree to: " + ack.Missing.Describe())
			}
		},
		OnWarn: c.console.Warn,
		OnEnd: func(asked inspector.ListenFilter, err error) {
			if len(asked.ResourceSubscriptions) > 0 || s.cfg.out.verbose {
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
