package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

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
