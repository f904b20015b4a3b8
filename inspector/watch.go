package inspector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// LogLevels are the syslog severities of logging/setLevel, lowest first
// (spec 2025-11-25: server/utilities/logging, "Log Levels").
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// ValidLogLevel reports whether level is one of LogLevels.
func ValidLogLevel(level string) bool { return slices.Contains(LogLevels, level) }

// LogLevelChange says how SetLogLevel asked for log messages.
type LogLevelChange struct {
	Level string
	// PerRequest is true when the level travels in every request's _meta
	// from now on (2026-07-28 has no logging/setLevel), false when
	// logging/setLevel was sent.
	PerRequest bool
}

// String says what was done, for people.
func (c LogLevelChange) String() string {
	if c.PerRequest {
		return "log level " + c.Level + ": sent with every request from now on (the modern era has no logging/setLevel)"
	}
	return "log level set to " + c.Level
}

// SetLogLevel asks the server for log messages at level and above, the way
// the session's era does it: logging/setLevel in the handshake era (spec
// 2025-11-25: server/utilities/logging); in 2026-07-28, which removed it,
// the level rides in every later request's _meta (spec 2026-07-28:
// basic/index, "_meta").
func (s *Session) SetLogLevel(ctx context.Context, level string) (LogLevelChange, error) {
	if m := s.modern(); m != nil {
		m.SetLogLevel(level)
		return LogLevelChange{Level: level, PerRequest: true}, nil
	}
	// Callers warn about an undeclared logging capability (see
	// LogLevelCaveat).
	if _, err := s.Call(ctx, mcp.MethodLoggingSetLevel, map[string]string{"level": level}, capabilityWarned(), withSubject(level)); err != nil {
		return LogLevelChange{}, err
	}
	return LogLevelChange{Level: level}, nil
}

// LogLevelCaveat returns a warning for people when the server does not
// declare the logging capability, saying what mcpx does anyway in this
// era; "" when it declares it.
func (s *Session) LogLevelCaveat(level string) string {
	if s.Server().HasCapability("logging") {
		return ""
	}
	if s.modern() != nil {
		return "the server does not declare the logging capability; asking for log messages at " + level + " anyway"
	}
	return "the server does not declare the logging capability; sending logging/setLevel anyway"
}

// Subscribe sends resources/subscribe (spec 2025-11-25: server/resources,
// "Subscriptions"); the server then sends notifications/resources/updated.
// It is the handshake era's primitive: commands use Watch or StartWatch,
// which work in both eras. It does not warn when the server does not
// declare resources.subscribe: that is its caller's to say.
func (s *Session) Subscribe(ctx context.Context, uri string) error {
	_, err := s.Call(ctx, mcp.MethodResourcesSubscribe, map[string]string{"uri": uri}, capabilityWarned(), withSubject(uri))
	return err
}

// Unsubscribe sends resources/unsubscribe (without a warning, like
// Subscribe).
func (s *Session) Unsubscribe(ctx context.Context, uri string) error {
	_, err := s.Call(ctx, mcp.MethodResourcesUnsubscribe, map[string]string{"uri": uri}, capabilityWarned(), withSubject(uri))
	return err
}

// ErrServerGone is matched by the error Wait returns when the connection
// ended while mcpx was waiting.
var ErrServerGone = fmt.Errorf("the connection ended")

// Wait keeps the session open so that notifications keep arriving, for d
// (until ctx ends when d <= 0). It returns nil when d has passed or ctx
// ended — both are the normal end of watching — and an error wrapping the
// connection's error when the server went away first.
func (s *Session) Wait(ctx context.Context, d time.Duration) error {
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-after:
		return nil
	case <-ctx.Done():
		return nil
	case <-s.Done():
		return fmt.Errorf("%w while watching: %w", ErrServerGone, s.Err())
	}
}

// Watching: the notifications a person wants to see (list changes, updates
// of some resources) reach the client differently in each era. In the
// handshake era list changes come unasked and resource updates after
// resources/subscribe; in 2026-07-28 every change notification comes only
// on a subscriptions/listen stream whose filter names it (spec 2026-07-28:
// basic/patterns/subscriptions). Watch and StartWatch hide the difference;
// the notifications themselves go to the session's OnNotification either
// way.

// WatchSpec says which notifications a watch asks the server for.
type WatchSpec struct {
	// Lists asks for the changes of the tools, prompts and resources lists.
	Lists bool
	// DeclaredListsOnly narrows Lists to the lists whose listChanged
	// capability the server declares.
	DeclaredListsOnly bool
	// Resources asks for updates of these resource URIs.
	Resources []string
	// For bounds Watch (not StartWatch): zero means until ctx ends.
	For time.Duration
}

// filter is the subscriptions/listen filter for spec with resources.
func (spec WatchSpec) filter(info *ServerInfo, resources []string) ListenFilter {
	f := ListenFilter{ResourceSubscriptions: resources}
	if spec.Lists {
		all := !spec.DeclaredListsOnly
		f.ToolsListChanged = all || info.Declares("tools", "listChanged")
		f.PromptsListChanged = all || info.Declares("prompts", "listChanged")
		f.ResourcesListChanged = all || info.Declares("resources", "listChanged")
	}
	return f
}

// WatchAck is a server's acknowledgement of a subscription (2026-07-28):
// what was asked, what the server agreed to honour, and what it left out.
type WatchAck struct {
	Asked, Granted, Missing ListenFilter
}

// WatchHooks tell the caller what a watch meets along the way. Any may be
// nil.
type WatchHooks struct {
	// OnAck is told each acknowledgement of a subscription stream. The
	// handshake era has none.
	OnAck func(WatchAck)
	// OnWarn receives what the watch does on its own or could not do
	// (listening again after the stream dropped, a failed unsubscribe).
	OnWarn func(string)
	// OnEnd is told, for a StartWatch watch, that its subscription stream
	// ended without being asked to (the server ended it: a
	// *ListenEndedError; the connection ended: an error wrapping
	// ErrServerGone; it dropped too often), with the filter it had. The
	// handshake era has no stream: its subscriptions end with the session.
	OnEnd func(asked ListenFilter, err error)
}

func (h WatchHooks) warn(msg string) {
	if h.OnWarn != nil {
		h.OnWarn(msg)
	}
}

func (h WatchHooks) listenOptions(asked ListenFilter) ListenOptions {
	return ListenOptions{
		OnAck: func(granted ListenFilter, _ *jsonrpc.Message) {
			if h.OnAck != nil {
				h.OnAck(WatchAck{Asked: asked, Granted: granted, Missing: asked.Missing(granted)})
			}
		},
		OnNote: h.OnWarn,
	}
}

// Watch asks for the notifications spec names and keeps the session open
// until ctx ends or spec.For has passed (a normal end: nil). In the
// handshake era it subscribes to each resource first and unsubscribes on
// the way out; in 2026-07-28 it keeps a subscriptions/listen stream open,
// listening again after a drop. The server ending the subscription ends
// Watch with a *ListenEndedError; the connection ending, with an error
// wrapping ErrServerGone.
func (s *Session) Watch(ctx context.Context, spec WatchSpec, h WatchHooks) error {
	if s.modern() != nil {
		if spec.For > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, spec.For)
			defer cancel()
		}
		filter := spec.filter(s.Server(), spec.Resources)
		return s.Listen(ctx, filter, h.listenOptions(filter))
	}
	for i, uri := range spec.Resources {
		if err := s.Subscribe(ctx, uri); err != nil {
			s.unsubscribeAll(ctx, spec.Resources[:i], h)
			return err
		}
	}
	err := s.Wait(ctx, spec.For)
	s.unsubscribeAll(ctx, spec.Resources, h)
	return err
}

// unsubscribeAll ends handshake-era resource subscriptions on the way out
// (last first), each within two seconds of its own, unless the session
// has ended. Failures go to h.OnWarn.
func (s *Session) unsubscribeAll(ctx context.Context, uris []string, h WatchHooks) {
	for _, err := range s.unsubscribeEach(ctx, uris) {
		h.warn(err.Error())
	}
}

func (s *Session) unsubscribeEach(ctx context.Context, uris []string) []error {
	var errs []error
	for i := len(uris) - 1; i >= 0; i-- {
		if s.Err() != nil {
			break
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		if err := s.Unsubscribe(uctx, uris[i]); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	return errs
}

// NotWatchedError reports a resource a Watcher is not watching.
type NotWatchedError struct{ URI string }

func (e *NotWatchedError) Error() string { return "not subscribed to " + e.URI }

// Watcher is a watch that lasts while its caller wants (the REPL's
// subscriptions, `resources subscribe`): resources may be added and removed
// while it lives. Its notifications go to the session's OnNotification.
// Methods may be called from any goroutine.
type Watcher struct {
	s      *Session
	ctx    context.Context
	spec   WatchSpec
	hooks  WatchHooks
	modern bool

	op        sync.Mutex // serializes Add, Remove, Stop and Close
	mu        sync.Mutex
	resources []string // sorted
	stop      func()   // stops the current subscription stream
	closed    bool
}

// StartWatch starts watching what spec names (spec.For does not apply) and
// returns at once: in the handshake era once each resource is subscribed
// to; in 2026-07-28 with a subscriptions/listen stream opened in the
// background, kept until ctx ends or the watcher is stopped, and opened
// again with a new filter whenever the resources change. A stream that
// ends on its own is reported to hooks.OnEnd.
func (s *Session) StartWatch(ctx context.Context, spec WatchSpec, h WatchHooks) (*Watcher, error) {
	w := &Watcher{s: s, ctx: ctx, spec: spec, hooks: h, modern: s.modern() != nil}
	if !w.modern {
		for i, uri := range spec.Resources {
			if err := s.Subscribe(ctx, uri); err != nil {
				s.unsubscribeAll(ctx, spec.Resources[:i], h)
				return nil, err
			}
		}
	}
	for _, uri := range spec.Resources {
		w.add(uri)
	}
	w.restart()
	return w, nil
}

// add puts uri in the set; it reports whether it was new.
func (w *Watcher) add(uri string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, found := slices.BinarySearch(w.resources, uri)
	if !found {
		w.resources = slices.Insert(w.resources, i, uri)
	}
	return !found
}

// remove takes uri out of the set; it reports whether it was there.
func (w *Watcher) remove(uri string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, found := slices.BinarySearch(w.resources, uri)
	if found {
		w.resources = slices.Delete(w.resources, i, i+1)
	}
	return found
}

// Resources returns the resources watched, sorted.
func (w *Watcher) Resources() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.resources)
}

// errWatcherClosed is returned by Add and Remove after Stop or Close.
var errWatcherClosed = errors.New("the watch has ended")

// Add watches updates of resource uri as well: resources/subscribe in the
// handshake era (sent even when uri is watched already), a new
// subscription stream naming it in 2026-07-28.
func (w *Watcher) Add(ctx context.Context, uri string) error {
	w.op.Lock()
	defer w.op.Unlock()
	if w.isClosed() {
		return errWatcherClosed
	}
	if !w.modern {
		if err := w.s.Subscribe(ctx, uri); err != nil {
			return err
		}
		w.add(uri)
		return nil
	}
	w.add(uri)
	w.restart()
	return nil
}

// Remove stops watching resource uri: resources/unsubscribe in the
// handshake era (sent even for a URI this watcher did not subscribe to:
// the server judges), a new subscription stream without it in 2026-07-28,
// where a URI not watched is a *NotWatchedError.
func (w *Watcher) Remove(ctx context.Context, uri string) error {
	w.op.Lock()
	defer w.op.Unlock()
	if w.isClosed() {
		return errWatcherClosed
	}
	had := w.remove(uri)
	if !w.modern {
		return w.s.Unsubscribe(ctx, uri)
	}
	if !had {
		return &NotWatchedError{URI: uri}
	}
	w.restart()
	return nil
}

func (w *Watcher) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// Stop ends the watcher's own work (the subscription stream) and leaves
// the handshake era's subscriptions to end with the session: for a session
// about to be closed anyway. It is idempotent.
func (w *Watcher) Stop() {
	w.op.Lock()
	defer w.op.Unlock()
	w.end()
}

// Close ends the watch: it unsubscribes from each resource in the
// handshake era (each within two seconds, unless the session has ended)
// and closes the subscription stream in 2026-07-28. The failures to
// unsubscribe are returned joined. It is idempotent.
func (w *Watcher) Close() error {
	w.op.Lock()
	defer w.op.Unlock()
	if !w.end() || w.modern {
		return nil
	}
	return errors.Join(w.s.unsubscribeEach(w.ctx, w.Resources())...)
}

// end marks the watcher closed and stops its stream; it reports whether
// this call closed it.
func (w *Watcher) end() bool {
	w.mu.Lock()
	first := !w.closed
	w.closed = true
	stop := w.stop
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	return first
}

// restart replaces the subscription stream (2026-07-28) with one for the
// current filter, or none when the filter asks for nothing.
func (w *Watcher) restart() {
	w.mu.Lock()
	stop := w.stop
	w.stop = nil
	filter := w.spec.filter(w.s.Server(), slices.Clone(w.resources))
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	if !w.modern || filter.Empty() || w.s.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(w.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := w.s.Listen(ctx, filter, w.hooks.listenOptions(filter))
		if ctx.Err() == nil && w.hooks.OnEnd != nil {
			w.hooks.OnEnd(filter, err)
		}
	}()
	w.mu.Lock()
	w.stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
	}
	w.mu.Unlock()
}
