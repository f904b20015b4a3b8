package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/tui"
)

// Watching commands (watch, resources subscribe) run until interrupted or
// until --for has passed; both are a normal end (exit 0). Their output on
// stdout is the notifications themselves: one line each, or with --json one
// JSON message per line (JSON Lines).

type watchOptions struct {
	e         *env
	dur       time.Duration
	resources []string
}

func newWatchCmd(e *env) *cobra.Command {
	o := &watchOptions{e: e}
	c := &cobra.Command{
		Use: "watch [flags] -- <server command>",
		Long: `Connect and print every notification the server sends, one per line on
stdout (with --json, each notification message as one JSON line), until
Ctrl-C or until --for has passed. Either is a normal end: exit status 0.
Server requests (roots, sampling, elicitation) are answered as usual.

In the modern era (2026-07-28) notifications come only on a subscription:
watch opens subscriptions/listen for tools, prompts and resources list
changes (and updates of each --resource URI), shows what the server
acknowledged, and listens again if the stream drops.`,
		Example: `  mcpx watch --log-level debug -- node server.js
  mcpx watch --for 30s --json -- node server.js > notifications.jsonl`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 0, 0); err != nil {
				return err
			}
			return o.run(c.Context(), server)
		},
	}
	c.Flags().DurationVar(&o.dur, "for", 0, "stop after `DURATION` (default: until interrupted)")
	stringsVar(c.Flags(), &o.resources, "resource", "", "also subscribe to updates of resource `URI` (repeatable)")
	return c
}

// notificationPrinter prints notifications on stdout for watching
// commands: one line each, or the message as one JSON line with --json.
func notificationPrinter(ios *IOStreams, o output) func(*jsonrpc.Message) {
	out := tui.NewConsole(ios.Out, false, ios.colorEnabled(o.color, ios.OutTTY))
	return func(m *jsonrpc.Message) {
		if o.json {
			out.Println(tui.JSONLine(m.Raw))
			return
		}
		out.Notification(m)
	}
}

func (o *watchOptions) run(ctx context.Context, server []string) error {
	if o.dur < 0 {
		return usageErrorf("--for must not be negative")
	}
	show := notificationPrinter(o.e.ios, o.e.cfg.out)
	return o.e.withWatchingClient(ctx, server, show, func(c *client) error {
		c.sink.setEvery(show, true)
		until := "Ctrl-C"
		if o.dur > 0 {
			until = o.dur.String() + " or Ctrl-C"
		}
		c.console.Note(fmt.Sprintf("watching notifications from %s (until %s)", c.serverName.Load(), until))
		o.e.showKept(ctx, c, c.sink.get())
		return c.watch(ctx, inspector.WatchSpec{Lists: true, Resources: o.resources, For: o.dur})
	})
}

// warnNoServerStream warns that the server refused the stream on which
// it would send what (notifications, updates) of its own accord: a watch
// would otherwise wait in silence, the refusal noted only with -v.
func (c *client) warnNoServerStream(what string) {
	if err := c.sess.ServerStreamErr(); err != nil {
		c.console.Warn(fmt.Sprintf("the server opened no stream for messages of its own (%v): only %s that come with answers to mcpx's requests can be shown", err, what))
	}
}

// watch watches what spec names until ctx ends or spec.For has passed,
// showing what the watch meets. The server ending the subscription ends
// the command normally, with a note.
func (c *client) watch(ctx context.Context, spec inspector.WatchSpec) error {
	c.warnNoServerStream("notifications")
	err := c.sess.Watch(ctx, spec, c.watchHooks())
	return c.endedNormally(err)
}

// endedNormally notes a subscription the server ended, which is a normal
// end, and returns any other error.
func (c *client) endedNormally(err error) error {
	var ended *inspector.ListenEndedError
	if errorsAs(err, &ended) {
		c.console.Note(ended.Error())
		return nil
	}
	return err
}

// watchHooks show a subscription's acknowledgement and what it left out
// of what was asked for, and what the watch does on its own.
func (c *client) watchHooks() inspector.WatchHooks {
	return inspector.WatchHooks{
		OnAck: func(ack inspector.WatchAck) {
			c.console.Note("subscription acknowledged: " + ack.Granted.Describe())
			if !ack.Missing.Empty() {
				c.console.Warn("the server did not agree to: " + ack.Missing.Describe())
			}
		},
		OnWarn: c.console.Warn,
	}
}

// warnEach shows each of (possibly joined) errors as a warning.
func (c *client) warnEach(err error) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			c.warnEach(e)
		}
		return
	}
	c.console.Warn(err.Error())
}

type subscribeOptions struct {
	e    *env
	dur  time.Duration
	read bool
}

func newResourcesSubscribeCmd(e *env) *cobra.Command {
	o := &subscribeOptions{e: e}
	c := &cobra.Command{
		Use:   "subscribe URI [flags] -- <server command>",
		Short: "Subscribe to a resource and print its updates until interrupted",
		Long: `Subscribe to a resource (resources/subscribe) and print each
notifications/resources/updated for it on stdout — re-reading the resource
with --read — until Ctrl-C or until --for has passed (a normal end, exit 0).
mcpx unsubscribes before it exits. Other notifications go to stderr.`,
		Example: `  mcpx resources subscribe demo://resource/static/document/architecture.md --read -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return o.run(c.Context(), own[0], server)
		},
	}
	c.Flags().DurationVar(&o.dur, "for", 0, "stop after `DURATION` (default: until interrupted)")
	c.Flags().BoolVar(&o.read, "read", false, "read the resource again after each update and print it")
	return c
}

func (o *subscribeOptions) run(ctx context.Context, uri string, server []string) error {
	if o.dur < 0 {
		return usageErrorf("--for must not be negative")
	}
	if o.e.repl != nil && o.dur == 0 {
		// In the REPL a subscription lasts while the session does: its
		// updates are shown as they come, and :wait waits for one.
		if o.read {
			return usageErrorf("--read needs --for DURATION in the REPL (a subscription without --for stays open and shows updates as notifications)")
		}
		return o.e.withClient(ctx, server, func(c *client) error { return o.e.repl.subscribe(ctx, c, uri) })
	}
	return o.e.withListeningClient(ctx, server, func(c *client) error {
		// The read loop delivers notifications; reading the resource again
		// is a request, so it happens here, never on the read loop.
		updates := make(chan *jsonrpc.Message, 64)
		c.sink.set(func(m *jsonrpc.Message) {
			if u, ok := inspector.UpdatedResource(m); ok && u == uri {
				select {
				case updates <- m:
				default:
					c.console.Warn("updates arrive faster than mcpx can show them; one was dropped")
				}
				return
			}
			if inspector.IsListChanged(m) && !c.showLists.Load() {
				return // start-up noise, as in any one-shot command (-v shows it)
			}
			c.console.Notification(m)
		})
		if !c.sess.Server().Declares("resources", "subscribe") {
			c.console.Warn("the server does not declare resources.subscribe; subscribing anyway")
		}
		c.warnNoServerStream("updates")
		ended := make(chan error, 1)
		hooks := c.watchHooks()
		hooks.OnEnd = func(_ inspector.ListenFilter, err error) { ended <- err }
		w, err := c.sess.StartWatch(ctx, inspector.WatchSpec{Resources: []string{uri}}, hooks)
		if err != nil {
			return err
		}
		defer func() { c.warnEach(w.Close()) }()
		c.console.Note(fmt.Sprintf("subscribed to %s (until %s)", tui.EscapeLine(uri), untilText(o.dur)))
		print := notificationPrinter(o.e.ios, o.e.cfg.out)
		var deadline <-chan time.Time
		if o.dur > 0 {
			t := time.NewTimer(o.dur)
			defer t.Stop()
			deadline = t.C
		}
		for {
			select {
			case m := <-updates:
				print(m)
				if !o.read {
					continue
				}
				res, err := c.sess.ReadResource(ctx, uri)
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					c.console.Warn(fmt.Sprintf("re-reading %s: %v", uri, err))
					continue
				}
				if o.e.cfg.out.json {
					fmt.Fprintln(o.e.ios.Out, tui.JSONLine(res))
				} else {
					c.out.ReadResult(res)
				}
			case <-deadline:
				return nil
			case <-ctx.Done():
				return nil
			case err := <-ended:
				return c.endedNormally(err)
			case <-c.sess.Done():
				return fmt.Errorf("%w while subscribed: %w", inspector.ErrServerGone, c.sess.Err())
			}
		}
	})
}

func untilText(d time.Duration) string {
	if d > 0 {
		return d.String() + " or Ctrl-C"
	}
	return "Ctrl-C"
}
