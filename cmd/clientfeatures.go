package cmd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/tui"
)

// featureFlags are the flags for what mcpx offers the server (roots,
// sampling, elicitation, tasks) and for what happens around the command
// (log level, linger). They only wire flags to inspector.ClientFeatures.
type featureFlags struct {
	roots         []string
	onSampling    string
	onElicit      string
	noSampling    bool
	noElicitation bool
	logLevel      string
	linger        time.Duration
}

func (o *featureFlags) register(f *pflag.FlagSet) {
	stringsVar(f, &o.roots, "root", "", "offer `PATH` (or a file:// URI) to the server as a root (repeatable); declares the roots capability")
	f.StringVar(&o.onSampling, "on-sampling", "", "answer sampling requests with `POLICY`: prompt, decline or file:PATH (default prompt on a terminal, else decline)")
	f.StringVar(&o.onElicit, "on-elicit", "", "answer elicitation requests with `POLICY`: prompt, decline, cancel, accept-defaults or file:PATH (default prompt on a terminal, else decline)")
	f.BoolVar(&o.noSampling, "no-sampling", false, "do not declare the sampling capability")
	f.BoolVar(&o.noElicitation, "no-elicitation", false, "do not declare the elicitation capability")
	f.StringVar(&o.logLevel, "log-level", "", "ask for log messages at `LEVEL` and above: logging/setLevel after initialization, or in every request's _meta in the modern era (debug, info, notice, warning, error, critical, alert, emergency)")
	f.DurationVar(&o.linger, "linger", 0, "keep the connection open for `DURATION` after the result to show later notifications")
}

// validate checks the feature flags and builds the policies, reading any
// reply file now so that a mistake is a usage error before a server
// starts (a named pipe's wait for its writer ends with ctx, told on
// console). person answers on a terminal (nil without one).
func (o featureFlags) validate(ctx context.Context, ios *IOStreams, person inspector.Person, console *tui.Console) (featuresDesc, error) {
	d := featuresDesc{logLevel: o.logLevel, linger: o.linger}
	interactive := ios.InTTY && ios.ErrTTY
	def := inspector.PolicyDecline
	if interactive {
		def = inspector.PolicyPrompt
	}
	for _, r := range o.roots {
		root, err := inspector.RootFromPath(r)
		if err != nil {
			return d, usageErrorf("--root: %v", err)
		}
		d.roots = append(d.roots, root)
	}
	if o.noSampling && o.onSampling != "" {
		return d, usageErrorf("--no-sampling and --on-sampling contradict each other; choose one")
	}
	if o.noElicitation && o.onElicit != "" {
		return d, usageErrorf("--no-elicitation and --on-elicit contradict each other; choose one")
	}
	if !o.noSampling {
		p, err := inspector.ParseSamplingPolicy(orDefault(o.onSampling, def))
		if err != nil {
			return d, usageErrorf("--on-sampling: %v", err)
		}
		if p.Mode == inspector.PolicyPrompt && !interactive {
			return d, usageErrorf("--on-sampling prompt needs a terminal on stdin and stderr; use decline or file:PATH")
		}
		p.OnWait = pipeWaitNote(console, "--on-sampling")
		if d.sampler, err = inspector.NewSampler(ctx, p, person); err != nil {
			return d, fileFlagError(ctx, "--on-sampling", err)
		}
	}
	if !o.noElicitation {
		p, err := inspector.ParseElicitPolicy(orDefault(o.onElicit, def))
		if err != nil {
			return d, usageErrorf("--on-elicit: %v", err)
		}
		if p.Mode == inspector.PolicyPrompt && !interactive {
			return d, usageErrorf("--on-elicit prompt needs a terminal on stdin and stderr; use decline, cancel, accept-defaults or file:PATH")
		}
		p.OnWait = pipeWaitNote(console, "--on-elicit")
		if d.elicitor, err = inspector.NewElicitor(ctx, p, person); err != nil {
			return d, fileFlagError(ctx, "--on-elicit", err)
		}
	}
	if o.logLevel != "" && !inspector.ValidLogLevel(o.logLevel) {
		return d, usageErrorf("--log-level %q: use one of %s", o.logLevel, strings.Join(inspector.LogLevels, ", "))
	}
	if o.linger < 0 {
		return d, usageErrorf("--linger must not be negative")
	}
	return d, nil
}

// newFeatures returns the client features for one connection, wired to
// its console. Each connection gets its own task store and pending URL
// elicitations.
func newFeatures(d *connDesc, c *client) *inspector.ClientFeatures {
	o := d.feat
	f := &inspector.ClientFeatures{Version: d.session.protocolVersion, Tasks: inspector.NewTaskStore()}
	who := func() string {
		if s, _ := c.serverName.Load().(string); s != "" {
			return s
		}
		return "the server"
	}
	if o.roots != nil {
		f.Roots = inspector.NewRoots(o.roots)
	}
	if o.ui.on {
		f.Extensions = uiExtensions()
	}
	if o.sampler != nil {
		s := o.sampler.Clone()
		s.Who = who
		f.Sampler = s
	}
	if o.elicitor != nil {
		e := o.elicitor.Clone()
		e.Who = who
		e.Note = c.console.Note
		f.Elicitor = e
	}
	return f
}

// openURL returns what opens a URL in the person's browser, as OAuth
// does: the BROWSER command when it is set, else the desktop's default
// browser.
func openURL(ios *IOStreams) func(string) error {
	return func(u string) error {
		open := oauthflow.SystemBrowser()
		if b := ios.Getenv("BROWSER"); b != "" {
			open = oauthflow.CommandBrowser(b)
		}
		_, err := open(u)
		return err
	}
}

// afterConnect runs what the feature flags ask for once the session is
// open: roots answered, logging at logLevel.
func (c *client) afterConnect(ctx context.Context, logLevel string) {
	info := c.sess.Server()
	name := info.Implementation.Name
	if info.Implementation.Version != "" {
		name += " " + info.Implementation.Version
	}
	c.serverName.Store(name)
	c.sess.AttachRoots(c.feats.Roots)
	if logLevel != "" {
		if caveat := c.sess.LogLevelCaveat(logLevel); caveat != "" {
			c.console.Warn(caveat)
		}
		if _, err := c.sess.SetLogLevel(ctx, logLevel); err != nil {
			c.console.Warn(err.Error())
		}
	}
}

// lingerAfter keeps the connection open after the command's result
// (--linger d), showing notifications that arrive meanwhile (list changes
// too, which the modern era sends only when asked). An interrupt ends it
// normally; a server that goes away is reported but does not undo the
// command's result.
func lingerAfter(ctx context.Context, c *client, d time.Duration, verbose bool) {
	if d <= 0 || ctx.Err() != nil || c.sess.Err() != nil {
		return
	}
	c.showLists.Store(true)
	if verbose {
		c.console.Note(fmt.Sprintf("lingering for %s to show later notifications", d))
	}
	if err := c.watch(ctx, inspector.WatchSpec{Lists: true, For: d}); err != nil {
		c.console.Warn(err.Error())
	}
}

// notifySink routes notifications: commands that print notifications as
// their output (watch, subscribe) replace the default, the stderr console.
type notifySink struct {
	mu sync.Mutex
	fn func(*jsonrpc.Message)
	// every: fn's output is every notification (watch), those the
	// session counted as departures and did not say too (see
	// onNotificationUnsaid).
	every bool
}

// set routes notifications to fn, which shows what it is given beside
// the command's output (nil: the console).
func (n *notifySink) set(fn func(*jsonrpc.Message)) { n.setEvery(fn, false) }

// setEvery routes notifications to fn; every says that fn's output is
// every notification (watch), so that it gets those the session did not
// say the departure of too.
func (n *notifySink) setEvery(fn func(*jsonrpc.Message), every bool) {
	n.mu.Lock()
	n.fn, n.every = fn, every
	n.mu.Unlock()
}

func (n *notifySink) get() func(*jsonrpc.Message) {
	fn, _ := n.getEvery()
	return fn
}

// getEvery returns the sink and whether its output is every
// notification (see setEvery).
func (n *notifySink) getEvery() (fn func(*jsonrpc.Message), every bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.fn, n.every
}

// onNotification is the session's notification callback for c.
func (c *client) onNotification(m *jsonrpc.Message) {
	if c.observe != nil {
		c.observe(c, m)
	}
	if c.feats != nil {
		if note := c.feats.Notice(m); note != "" {
			c.console.Note(note)
			return
		}
	}
	if fn := c.sink.get(); fn != nil {
		fn(m)
		return
	}
	if inspector.IsListChanged(m) && !c.showLists.Load() {
		return
	}
	c.console.Notification(m)
}

// onNotificationUnsaid is the session's callback for a notification that
// is a departure past the first few of its sort, whose warning was
// counted and not said (inspector.Options.OnNotificationUnsaid: progress
// for a token no request carries, say). The REPL's observer still sees
// it (:wait), and a command whose output is every notification (watch)
// shows it; anywhere else it is dropped with its warning, and the line
// that sums up what was not shown (sayUnsaid) counts it.
func (c *client) onNotificationUnsaid(m *jsonrpc.Message) {
	if c.observe != nil {
		c.observe(c, m)
	}
	if fn, every := c.sink.getEvery(); fn != nil && every {
		fn(m)
	}
}
