package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

func latestVersion() string { return mcp.LatestHandshakeVersion }

// client is an open session plus what renders around it.
type client struct {
	sess     *inspector.Session
	conn     transport.Conn // the connection, when there is no session (verify)
	console  *tui.Console
	out      *tui.Printer
	describe string
	closers  []func() error
	once     sync.Once
	closeErr error // the first error of closers

	feats *inspector.ClientFeatures
	sink  notifySink // where notifications go (default: console)
	// showLists shows list_changed notifications on the console: with -v
	// and while lingering. Servers often announce their lists at start-up,
	// which is noise in a one-shot command's output.
	showLists  atomic.Bool
	serverName atomic.Value // string, once initialized
	// oauth is the OAuth authorizer of an HTTP connection, nil otherwise.
	oauth *oauthflow.Authorizer
	// observe, when set (the REPL), sees every notification first.
	observe func(*jsonrpc.Message)
}

// Close ends the session (shutting the server down) and releases files;
// a recording is closed last, so that it holds everything. It returns the
// first error closing the files (a trace or --server-stderr file that
// could not be written whole), every time it is called.
func (c *client) Close() error {
	c.once.Do(func() {
		if c.sess != nil {
			c.sess.Close()
		} else if c.conn != nil {
			c.conn.Close()
		}
		if c.feats != nil {
			c.feats.Close()
		}
		for _, f := range c.closers {
			if err := f(); err != nil && c.closeErr == nil {
				c.closeErr = err
			}
		}
	})
	return c.closeErr
}

// console returns the stderr console for this run.
func (g *globalOptions) newConsole() *tui.Console {
	return tui.NewConsole(g.io.ErrOut, g.io.ErrTTY, g.io.colorEnabled(g.color, g.io.ErrTTY))
}

// printer returns the stdout printer for this run.
func (g *globalOptions) printer() *tui.Printer {
	return tui.NewPrinter(g.io.Out, g.io.colorEnabled(g.color, g.io.OutTTY))
}

// connect starts the server given after "--", or reaches the one at --url,
// and opens an MCP session.
func (g *globalOptions) connect(ctx context.Context, server []string) (*client, error) {
	c, conn, rec, err := g.dial(ctx, server)
	if err != nil {
		return nil, err
	}
	c.feats = g.features(c)
	if g.live != nil {
		g.live.prepare(c)
		conn = g.live.wrapConn(c, conn)
	}
	life := g.lifecycle(c, server)
	if g.verbose {
		if note := inspector.OpeningNote(life); note != "" {
			c.console.Note(note)
		}
	}
	handlers := c.feats.HandlersFor(life)
	onNote := c.console.Note
	if rec != nil {
		onNote = func(s string) { rec.Note(s); c.console.Note(s) }
	}
	var onLate func(jsonrpc.ID, inspector.Progress)
	if g.verbose {
		onLate = c.console.LateProgress
	}
	sess, err := inspector.Connect(ctx, conn, inspector.Options{
		Lifecycle:       life,
		Handlers:        handlers,
		OnNotification:  c.onNotification,
		OnServerRequest: c.console.ServerRequest,
		OnWarning:       c.console.Warn,
		OnNote:          onNote,
		OnLateProgress:  onLate,
		Timeout:         orNone(g.timeout),
		MaxTimeout:      orNone(g.maxTimeout),
	})
	if err != nil {
		conn.Close()
		c.Close()
		return nil, err
	}
	c.sess = sess
	c.conn = nil
	if d, ok := conn.(transport.Describer); ok {
		// Described after the handshake: over HTTP the transport is chosen
		// by the first request.
		c.describe = d.Describe()
	}
	if g.verbose && g.url != "" {
		c.console.Note("connected: " + c.describe)
	}
	if g.verbose {
		info := sess.Server()
		c.console.Note(info.OpenedNote())
		c.console.Note(fmt.Sprintf("protocol era %s (%s)", info.Era, orDefault(info.EraReason, "the default")))
	}
	g.afterConnect(ctx, c)
	return c, nil
}

// dial starts the server given after "--", or prepares the connection to
// the one at --url, without opening a session: the connection carries the
// --record and --wire decorators. The client owns the connection until a
// session takes it over. rec is the recorder, nil without --record.
func (g *globalOptions) dial(ctx context.Context, server []string) (c *client, conn transport.Conn, rec *record.Recorder, err error) {
	if g.at.name != "" {
		return g.dialSession(ctx, server)
	}
	if g.url != "" && len(server) > 0 {
		return nil, nil, nil, usageErrorf("give either --url URL or a server command after --, not both")
	}
	if g.url == "" && len(server) == 0 {
		return nil, nil, nil, usageErrorf("no server given: put the server command after --, e.g. mcpx tools list -- node server.js, or give --url URL")
	}
	c = &client{console: g.newConsole(), out: g.printer()}
	c.showLists.Store(g.verbose)
	g.open = append(g.open, c)
	if rec, err = g.recorder(ctx, c, server); err != nil {
		return nil, nil, nil, err
	}

	if g.url != "" {
		hc, err := g.dialHTTP(c, rec)
		if err != nil {
			c.Close()
			return nil, nil, nil, err
		}
		conn = hc
	} else {
		stderrSink, err := g.stderrSink(ctx, c)
		if err != nil {
			c.Close()
			return nil, nil, nil, err
		}
		sc, err := transport.StartStdio(transport.StdioOptions{
			Command:  server[0],
			Args:     server[1:],
			Env:      g.env,
			Dir:      g.cwd,
			Observer: teeObserver(stderrSink, rec),

			MaxMessageSize: g.maxMessageSize,
		})
		if err != nil {
			c.Close()
			return nil, nil, nil, err
		}
		if g.verbose {
			c.console.Note("started " + sc.Describe() + fmt.Sprintf(" (pid %d)", sc.PID()))
		}
		conn = sc
	}
	if rec != nil {
		conn = rec.Wrap(conn)
	}
	if g.wire {
		conn = transport.Tap(conn, c.console.Wire)
	}
	c.conn = conn
	return c, conn, rec, nil
}

// orNone maps a flag's 0 ("disabled") to the session's "none" (-1).
func orNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// stderrSink decides where the server's stderr goes (--server-stderr).
func (g *globalOptions) stderrSink(ctx context.Context, c *client) (transport.Observer, error) {
	switch g.serverStderr {
	case "show":
		return c.console.Event, nil
	case "hide":
		return func(ev transport.Event) {
			if ev.Kind != transport.EventStderr {
				c.console.Event(ev)
			}
		}, nil
	}
	f, err := openServerStderr(ctx, g.serverStderr)
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, f.Close)
	return func(ev transport.Event) {
		if ev.Kind != transport.EventStderr {
			c.console.Event(ev)
			return
		}
		fmt.Fprintln(f, ev.Text)
	}, nil
}

// serverStderrFile is the --server-stderr FILE the server's stderr is
// appended to. Its first failed write is reported when it is closed, and
// drops the lines after it.
type serverStderrFile struct {
	name string
	mu   sync.Mutex
	f    *outfile.File
}

// openServerStderr opens --server-stderr FILE for appending (see
// internal/outfile: links followed, FIFOs and devices written through).
func openServerStderr(ctx context.Context, name string) (*serverStderrFile, error) {
	f, err := outfile.Append(ctx, name, outfile.Options{})
	if errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err != nil {
		return nil, usageErrorf("--server-stderr %s: %v", name, err)
	}
	return &serverStderrFile{name: name, f: f}, nil
}

func (s *serverStderrFile) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Write(p)
}

// Close closes the file and returns its first error.
func (s *serverStderrFile) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("--server-stderr %s: %w", s.name, err)
	}
	return nil
}

// withProgress returns the call option that shows progress for label.
func (c *client) withProgress(label string) inspector.CallOption {
	return inspector.WithProgress(func(p inspector.Progress) { c.console.Progress(label, p) })
}
