package sessiond

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/filelock"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Defaults of Options.
const (
	// DefaultIdleTimeout ends a session no command used for that long.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultKeep and DefaultKeepBytes bound the notifications kept while
	// no command is attached.
	DefaultKeep      = 1000
	DefaultKeepBytes = 4 << 20
	// queueBytes bounds the bytes waiting to be written to one command
	// (see queueLen).
	queueBytes = 32 << 20
	// helloTimeout bounds how long a new connection may take to say what
	// it wants, and to take the reply.
	helloTimeout = 10 * time.Second
	// maxHello bounds the hello line.
	maxHello = 64 << 10
)

// queueLen and queueBytes bound the notifications waiting to be written
// to one command; beyond them, a command that still reads loses the
// newest (and is told how many), and one that stopped reading is
// detached (see attachment.offer). A burst of small ones (progress, a
// server's log) is no reason to either. (A variable for the tests,
// which flood less.)
var queueLen = 1 << 16

// Options configure a Daemon.
type Options struct {
	// Name names the session (see CheckName); Dir is the user's session
	// directory (the function Dir returns it), where its socket goes.
	Name, Dir string
	// Log is the file the session process logs to, for Status.
	Log string
	// IdleTimeout ends the session after that long without a command
	// attached: zero means DefaultIdleTimeout, negative never.
	IdleTimeout time.Duration
	// MaxMessageSize bounds a line from a command (zero:
	// transport.DefaultMaxMessageSize).
	MaxMessageSize int64
	// Keep and KeepBytes bound the notifications kept while no command is
	// attached (zero: DefaultKeep, DefaultKeepBytes).
	Keep, KeepBytes int
	// OnNote receives what the daemon does on its own, for its log.
	OnNote func(string)
}

var (
	// ErrIdle is what Serve ends with when no command used the session
	// for Options.IdleTimeout.
	ErrIdle = errors.New("the session was idle")
	// ErrExists is matched by New's error when a session of that name is
	// open already.
	ErrExists = errors.New("a session of that name is open already")
)

// Daemon serves one held MCP session to the commands that attach to it.
// New claims the socket; the caller then opens the session with the
// daemon's hooks (Handlers, OnNotification) and hands it to Serve.
type Daemon struct {
	opts   Options
	target atomic.Pointer[string]
	// host is ServeOptions.Host, set before sess.
	host json.RawMessage
	// secrets is ServeOptions.Secrets, set before sess.
	secrets func() []string
	// extensions are ServeOptions.Extensions, set before sess.
	extensions []string
	path       string
	ln         net.Listener
	// sock is the socket file as it was made, to tell it from another
	// put at its path (nil where its identity could not be read: only
	// its removal is seen then).
	sock    os.FileInfo
	started time.Time
	sess    atomic.Pointer[inspector.Session]

	ctx    context.Context // ends when Serve ends: every attachment with it
	cancel context.CancelFunc

	mu       sync.Mutex
	attached map[*attachment]struct{}
	lastUsed time.Time
	ring     ring
	stoppers []stopper // stop requests, answered once the session ended
	// forwards maps the held session's id of each request in flight (its
	// loose key) to the command that made it, for the notifications that
	// name the request (a 2026-07-28 subscription's).
	forwards map[string]forward
	// tasks are the tasks commands created through the session whose
	// progress it passes on (tasks.go), by taskId.
	tasks map[string]taskFollow
	// subs are the attached commands subscribed to each resource URI
	// (subscriptions.go).
	subs map[string]map[*attachment]struct{}

	seq      atomic.Int64  // orders requests, to find the latest waiter
	wake     chan struct{} // attachments changed: recompute the idle time
	stop     chan struct{} // closed by a stop request
	stopOnce sync.Once
	serving  chan struct{}  // closed when Serve starts: the opening is over
	ended    sync.Once      // the end (shutdown, or Close before Serve)
	wg       sync.WaitGroup // every goroutine of the daemon's
}

// New claims the socket of session opts.Name in opts.Dir. A socket left
// by a session that ended without removing it is replaced; a live one
// makes New fail with ErrExists.
//
// The daemon answers on the socket from then on, while the caller opens
// the session (a server that takes a while to start, an authorization):
// a status says the session is opening, an attach is refused as such, and
// a stop request ends the context Opening returns.
func New(opts Options) (*Daemon, error) {
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	if opts.KeepBytes <= 0 {
		opts.KeepBytes = DefaultKeepBytes
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = transport.DefaultMaxMessageSize
	}
	if err := checkDir(opts.Dir, false); err != nil {
		return nil, err
	}
	path, err := socketPath(opts.Dir, opts.Name)
	if err != nil {
		return nil, err
	}
	// Replacing a stale socket and listening in its place is one step
	// for every process that claims the name.
	release, err := claimLock(path)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", opts.Name, err)
	}
	defer release()
	if err := clearStale(path); err != nil {
		return nil, fmt.Errorf("session %s: %w", opts.Name, err)
	}
	ln, err := net.Listen("unix", path)
	if addrInUse(err) {
		return nil, fmt.Errorf("session %s: %w", opts.Name, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", opts.Name, err)
	}
	// The directory is private already; the socket is too.
	if err := os.Chmod(path, 0o600); err != nil && privateModes {
		ln.Close()
		return nil, fmt.Errorf("session %s: %w", opts.Name, err)
	}
	// Removed by unlisten, and only if it is still this one: a socket
	// removed by someone else may have been replaced by another
	// session's.
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	sock, err := os.Lstat(path)
	// (os.SameFile reads the file's identity now where the system needs
	// it opened, Windows: later, it would read another's at the path.)
	if err != nil || !os.SameFile(sock, sock) {
		sock = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now()
	d := &Daemon{
		opts: opts, path: path, ln: ln, sock: sock, started: now, lastUsed: now,
		ctx: ctx, cancel: cancel,
		attached: map[*attachment]struct{}{},
		forwards: map[string]forward{},
		tasks:    map[string]taskFollow{},
		subs:     map[string]map[*attachment]struct{}{},
		ring:     ring{maxItems: opts.Keep, maxBytes: opts.KeepBytes},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		serving:  make(chan struct{}),
	}
	// Answered from now on: a socket that accepts no connection (the
	// kernel's backlog takes them) would hold every mcpx sessions,
	// connect and @NAME of this name for the whole opening, and mcpx
	// disconnect until it ended.
	d.wg.Add(1)
	go d.accept()
	return d, nil
}

// ErrStoppedOpening is the cause of the context Opening returns when a
// command asked the session to stop (mcpx disconnect) before it was open.
var ErrStoppedOpening = errors.New("the session was ended (mcpx disconnect) before it was open")

// Opening returns the context to open the session with (start the server,
// authorize, initialize): ctx, ended with the cause ErrStoppedOpening by
// a stop request that comes before Serve. Once Serve runs, stop requests
// end Serve instead, and the context only ends with ctx.
func (d *Daemon) Opening(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-d.stop:
			select {
			case <-d.serving:
				// Serve ends on it.
			default:
				cancel(ErrStoppedOpening)
			}
		case <-d.serving:
		case <-ctx.Done():
		case <-d.ctx.Done(): // closed without serving
		}
	}()
	return ctx
}

// claimWait bounds the wait for another process claiming or releasing
// the same session name (a few socket operations).
const claimWait = 5 * time.Second

// claimLock takes the lock of the session socket at path, held while a
// process replaces a stale socket, listens in its place, or removes its
// own: without it, two processes that both found the socket stale could
// each remove it and listen, the first one's socket removed by the second
// (a session no command could reach any more), and a session ending could
// remove the socket of the one just opened in its place.
func claimLock(path string) (release func(), err error) {
	return filelock.Acquire(context.Background(), path, claimWait)
}

// clearStale removes a socket nobody listens on any more (its session
// process was killed); a live one is ErrExists. The caller holds
// claimLock.
func clearStale(path string) error {
	if err := checkSocket(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	nc, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		nc.Close()
		return ErrExists
	}
	if !refused(err) && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Socket returns the path of the session's socket.
func (d *Daemon) Socket() string { return d.path }

func (d *Daemon) note(format string, args ...any) {
	if d.opts.OnNote != nil {
		d.opts.OnNote(fmt.Sprintf(format, args...))
	}
}

// Close releases the socket when Serve never ran (the session could not
// be opened), and answers the stop requests that came meanwhile. It is
// idempotent, and a no-op after Serve.
func (d *Daemon) Close() error {
	var err error
	d.ended.Do(func() {
		err = d.unlisten()
		d.cancel()
		d.wg.Wait()
		d.answerStoppers()
	})
	return err
}

// unlisten closes the listener and removes the socket (with claimLock,
// so as not to remove the socket of a session opened in its place). It
// is idempotent.
func (d *Daemon) unlisten() error {
	if release, err := claimLock(d.path); err == nil {
		defer release()
	}
	err := d.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	if d.socketGone() {
		return err
	}
	if rerr := os.Remove(d.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// ErrSocketGone is what Serve ends with when the session's socket was
// removed from under it (a cleaner of the temp directory, the runtime
// directory removed at logout): no command could reach the session, or
// end it, any more, and its server would run on unseen.
var ErrSocketGone = errors.New("its socket was removed (a cleaner of the temp directory, or the runtime directory removed at logout), so no command could reach it")

// socketCheck is how often a session that is served checks that its
// socket is still there. (A variable for the tests.)
var socketCheck = 10 * time.Second

// socketGone reports whether the session's socket is no longer at its
// path: removed, or replaced by another.
func (d *Daemon) socketGone() bool {
	fi, err := os.Lstat(d.path)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return d.sock != nil && !os.SameFile(fi, d.sock)
}

// Handlers wraps the session's handlers for server-to-client requests:
// sampling and elicitation requests go to the command waiting on the
// session; when none is, fallback's handler answers (the session's own
// policy), or, without one, the request is declined. Either way the
// session keeps a note of it for mcpx @NAME watch.
func (d *Daemon) Handlers(fallback map[string]inspector.RequestHandler) map[string]inspector.RequestHandler {
	hs := make(map[string]inspector.RequestHandler, len(fallback)+2)
	for m, h := range fallback {
		hs[m] = h
	}
	for _, m := range []string{mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate} {
		hs[m] = d.relay(m, fallback[m])
	}
	return hs
}

func (d *Daemon) relay(method string, fallback inspector.RequestHandler) inspector.RequestHandler {
	return func(ctx context.Context, req *jsonrpc.Message) (any, error) {
		if a := d.waiter(); a != nil {
			return a.ask(ctx, req)
		}
		if fallback != nil {
			res, err := fallback(ctx, req)
			d.keepNote(fmt.Sprintf("the server sent %s while no command was waiting: answered by the session's policy%s", method, outcome(err)))
			return res, err
		}
		d.keepNote(fmt.Sprintf("the server sent %s while no command was waiting: declined", method))
		if method == mcp.MethodElicitationCreate {
			return map[string]string{"action": "decline"}, nil
		}
		return nil, &jsonrpc.Error{Code: -1, Message: fmt.Sprintf("declined: no mcpx command is waiting on session %s to answer %s", d.opts.Name, method)}
	}
}

func outcome(err error) string {
	if err != nil {
		return " (" + err.Error() + ")"
	}
	return ""
}

// waiter returns the attached command that most recently started a
// request still in flight: the one a server request most likely serves.
func (d *Daemon) waiter() *attachment {
	d.mu.Lock()
	defer d.mu.Unlock()
	var best *attachment
	var bestSeq int64
	for a := range d.attached {
		if a.inflight.Load() > 0 {
			if s := a.lastSeq.Load(); best == nil || s > bestSeq {
				best, bestSeq = a, s
			}
		}
	}
	return best
}

// keepNote notes something the session did on its own: attached commands
// do not see it, mcpx @NAME watch does.
func (d *Daemon) keepNote(s string) {
	d.note("%s", s)
	d.mu.Lock()
	loss := d.ring.add(Kept{Time: time.Now(), Note: s})
	d.mu.Unlock()
	if loss {
		d.noteLoss()
	}
}

// noteLoss notes that the kept notifications reached their bounds.
func (d *Daemon) noteLoss() {
	d.note("the notifications kept for mcpx @%s watch reached their bound (%s): older ones are dropped until it takes them", d.opts.Name, d.keepBounds())
}

// olderDropped says how many older ones were dropped.
func olderDropped(n int) string {
	if n == 1 {
		return "1 older one was"
	}
	return fmt.Sprintf("%d older ones were", n)
}

// keepBounds says how much the session keeps while no command is attached.
func (d *Daemon) keepBounds() string {
	return fmt.Sprintf("the newest %d, at most %s", d.opts.Keep, transport.FormatSize(int64(d.opts.KeepBytes)))
}

// OnNotification is the held session's notification callback: each
// notification goes to every attached command, or, while none is, into
// the ring of kept ones. notifications/cancelled about the server's own
// requests was handled by the session and concerns no command.
func (d *Daemon) OnNotification(m *jsonrpc.Message) {
	if m.Method == mcp.NotificationCancelled {
		return
	}
	if d.toSubscriber(m) {
		return
	}
	line, err := frameLine(m.Raw)
	if err != nil {
		d.note("a notification that cannot be passed on: %v", err)
		return
	}
	d.mu.Lock()
	if len(d.attached) == 0 {
		loss := d.ring.add(Kept{Time: time.Now(), Message: line[len(`{"frame":`) : len(line)-1]})
		first := d.ring.firstOf(m.Method)
		d.mu.Unlock()
		if first {
			d.note("keeping %s for mcpx @%s watch", m.Method, d.opts.Name)
		}
		if loss {
			d.noteLoss()
		}
		return
	}
	as := make([]*attachment, 0, len(d.attached))
	for a := range d.attached {
		as = append(as, a)
	}
	d.mu.Unlock()
	for _, a := range as {
		a.offer(line)
	}
}

// Observe is an observer of the held session's connection to the server
// (besides the one that logs its events): each message it dropped unread
// that no error tells of (transport.EventDropped) is told to the commands
// attached at that moment that asked for it (envelope.Dropped), as their
// own connection would tell them, or, while none is attached, kept for
// mcpx @NAME watch among the notifications, where the one it was would
// have been; the text is the transport's, already escaped. Other events
// are the session log's alone. It does not wait: a command that does not
// keep up is treated as for a notification (see attachment.offer).
func (d *Daemon) Observe(ev transport.Event) {
	if ev.Kind != transport.EventDropped || ev.Text == "" {
		return
	}
	line, err := json.Marshal(envelope{Dropped: ev.Text})
	if err != nil {
		d.note("%v", err)
		return
	}
	d.offerOrKeep(line, ev.Text, func(a *attachment) bool { return a.dropped })
}

// Tell tells note, something the held session did on its own (it
// started a new session with the server, which ended the old one), to
// the commands attached at that moment that asked for notes
// (envelope.Note), as their own connection would tell them, or, while
// none is attached, keeps it for mcpx @NAME watch among the
// notifications. The log has it too. It does not wait.
func (d *Daemon) Tell(note string) {
	d.note("%s", note)
	line, err := json.Marshal(envelope{Note: note})
	if err != nil {
		d.note("%v", err)
		return
	}
	d.offerOrKeep(line, note, func(a *attachment) bool { return a.notes })
}

// TellSecret hands value, a credential the session's connection learned
// (an access token OAuth refreshed, which it presents from now on), to
// the commands attached now that asked for them (envelope.Secret), before
// the request that presents it goes out when told then (tell it as
// ServeOptions.Secrets learns it): they redact it from what they show
// and record of the server's messages, as they do the credentials of the
// attach reply. It is neither logged nor kept; a command that attaches
// later gets it in its reply.
func (d *Daemon) TellSecret(value string) {
	if value == "" {
		return
	}
	line := secretLine(value)
	d.mu.Lock()
	as := make([]*attachment, 0, len(d.attached))
	for a := range d.attached {
		if a.secrets {
			as = append(as, a)
		}
	}
	d.mu.Unlock()
	for _, a := range as {
		a.tellSecret(line)
	}
}

// offerOrKeep offers line to the attached commands that want it, or,
// while none is attached, keeps note for mcpx @NAME watch. It does not
// wait.
func (d *Daemon) offerOrKeep(line []byte, note string, wants func(*attachment) bool) {
	d.mu.Lock()
	if len(d.attached) == 0 {
		loss := d.ring.add(Kept{Time: time.Now(), Note: note})
		d.mu.Unlock()
		if loss {
			d.noteLoss()
		}
		return
	}
	as := make([]*attachment, 0, len(d.attached))
	for a := range d.attached {
		if wants(a) {
			as = append(as, a)
		}
	}
	d.mu.Unlock()
	for _, a := range as {
		a.offer(line)
	}
}

// SetTarget replaces the description of the connection that Status gives
// (ServeOptions.Target), once what it says changed: a new session with
// the server has another session id.
func (d *Daemon) SetTarget(target string) { d.target.Store(&target) }

// forward is a command's request in flight through the held session.
type forward struct {
	a  *attachment
	id jsonrpc.ID // the command's id for it
}

// toSubscriber passes a notification that names one of the commands'
// requests in flight as its subscription (2026-07-28: the listen stream's
// acknowledgement and notifications carry the request's id, spec
// 2026-07-28: basic/patterns/subscriptions) to that command alone, under
// the command's id. It reports whether it did.
func (d *Daemon) toSubscriber(m *jsonrpc.Message) bool {
	obj, err := inspector.ParseObject(m.Params)
	if err != nil {
		return false
	}
	meta, err := inspector.ParseObject(obj.Get("_meta"))
	if err != nil {
		return false
	}
	sid := meta.Get(mcp.MetaSubscriptionID)
	if len(sid) == 0 {
		return false
	}
	d.mu.Lock()
	f, ok := d.forwards[jsonrpc.RawID(sid).LooseKey()]
	d.mu.Unlock()
	if !ok {
		return false
	}
	meta.Set(mcp.MetaSubscriptionID, f.id.Raw())
	obj.Set("_meta", meta.Marshal())
	line, err := frameLine(jsonrpc.EncodeNotification(m.Method, obj.Marshal()))
	if err != nil {
		return false
	}
	f.a.offer(line)
	return true
}

// Status describes the session now.
func (d *Daemon) Status() Status {
	st := Status{
		Name:           d.opts.Name,
		PID:            os.Getpid(),
		Started:        d.started,
		IdleTimeoutMs:  max(d.opts.IdleTimeout, 0).Milliseconds(),
		MaxMessageSize: d.opts.MaxMessageSize,
		Socket:         d.path,
		Log:            d.opts.Log,
	}
	if t := d.target.Load(); t != nil {
		st.Target = *t
	}
	if s := d.sess.Load(); s == nil {
		st.Opening = true
	} else {
		st.Extensions = d.extensions
		st.Host = d.host
		if info := s.Server(); info != nil {
			st.Server = info.Implementation.Name
			if v := info.Implementation.Version; v != "" {
				st.Server += " " + v
			}
			st.Era = info.Era
			st.ProtocolVersion = info.ProtocolVersion
		}
	}
	d.mu.Lock()
	st.LastUsed = d.lastUsed
	st.Commands = len(d.attached)
	st.Kept = len(d.ring.items)
	st.Dropped = d.ring.dropped
	d.mu.Unlock()
	return st
}

// ServeOptions say what Serve needs besides the session.
type ServeOptions struct {
	// Target describes the connection, for Status ("stdio: node
	// server.js").
	Target string
	// Extensions are the client extensions the session declared (their
	// identifiers), for Status.
	Extensions []string
	// Host is handed to the commands that attach, in Status.Host: what
	// the command that opened the session knows of the application whose
	// entry configured the server (the tools it hides), which the
	// attached commands would otherwise not know. Opaque to the daemon.
	Host json.RawMessage
	// Secrets, when set, returns the secrets the session's connection
	// knows (the credentials it sends, the secret values of its server's
	// command line, the access token OAuth presents), handed to each
	// command that attaches: the command shows and records the server's
	// messages, which may echo them (a whoami tool, an error quoting the
	// request), and redacts them there (--wire, --record, its error
	// messages) as a connection of its own would. Only the attach reply
	// carries them, never Status (mcpx sessions --json prints it); the
	// socket is the user's alone, and whoever attaches sends requests
	// with those credentials anyway.
	Secrets func() []string
	// Ready, when set, is told once the session is served, with its
	// Status; an error from it ends Serve at once.
	Ready func(Status) error
}

// Serve serves sess, open with the daemon's hooks, to the commands that
// attach, until ctx ends, the server goes away, the session is idle for
// Options.IdleTimeout (ErrIdle), its socket is removed (ErrSocketGone),
// or a command asks it to stop (nil). It then detaches every command
// (their requests are cancelled), closes sess (which ends a stdio server
// and its process tree), removes the socket, and returns; stop requests
// are answered then.
func (d *Daemon) Serve(ctx context.Context, sess *inspector.Session, o ServeOptions) error {
	d.target.Store(&o.Target)
	d.extensions = slices.Clone(o.Extensions)
	d.host = o.Host
	d.secrets = o.Secrets
	d.sess.Store(sess)
	close(d.serving)
	// The idle clock starts now that the session is open: the server's
	// start-up and initialize are no idle time.
	d.mu.Lock()
	d.lastUsed = time.Now()
	d.mu.Unlock()
	var why error
	if o.Ready != nil {
		why = o.Ready(d.Status())
	}
	if why == nil {
		why = d.wait(ctx, sess)
	}
	d.ended.Do(func() { d.shutdown(sess, why) })
	return why
}

// wait returns why the session ends.
func (d *Daemon) wait(ctx context.Context, sess *inspector.Session) error {
	idle := d.opts.IdleTimeout
	check := time.NewTicker(socketCheck)
	defer check.Stop()
	for {
		var timeout <-chan time.Time
		var timer *time.Timer
		if idle > 0 {
			d.mu.Lock()
			n, last := len(d.attached), d.lastUsed
			d.mu.Unlock()
			if n == 0 {
				left := time.Until(last.Add(idle))
				if left <= 0 {
					return fmt.Errorf("%w for %s", ErrIdle, idle)
				}
				timer = time.NewTimer(left)
				timeout = timer.C
			}
		}
		var why error
		select {
		case <-ctx.Done():
			why = ctx.Err()
		case <-sess.Done():
			why = &ServerEndedError{Err: sess.Err()}
		case <-d.stop:
		case <-d.wake:
			if timer != nil {
				timer.Stop()
			}
			continue
		case <-timeout:
			continue
		case <-check.C:
			if timer != nil {
				timer.Stop()
			}
			if d.socketGone() {
				return ErrSocketGone
			}
			continue
		}
		if timer != nil {
			timer.Stop()
		}
		return why
	}
}

// ServerEndedError reports a session that ended because its connection
// did (a stdio server exited).
type ServerEndedError struct{ Err error }

func (e *ServerEndedError) Error() string {
	if e.Err == nil {
		return "the connection to the server ended"
	}
	return "the connection to the server ended: " + e.Err.Error()
}

func (e *ServerEndedError) Unwrap() error { return e.Err }

func (d *Daemon) shutdown(sess *inspector.Session, why error) {
	reason := "the session was closed (mcpx disconnect)"
	cause := "it was closed (mcpx disconnect)"
	switch {
	case errors.Is(why, context.Canceled):
		// Serve's context ended: the session process was told to stop
		// (a signal, or Ctrl-C on connect --foreground).
		reason = "the session process was interrupted"
		cause = "its process was interrupted"
	case why != nil:
		cause = why.Error()
		// What a server that crashed said last, as a command of its own
		// would have been told.
		var pe *transport.PeerExitError
		if errors.As(why, &pe) {
			if last := pe.LastLines(3); len(last) > 0 {
				cause += "; its last stderr lines: " + strings.Join(last, " | ")
			}
		}
		reason = "the session ended: " + cause
	}
	if d.opts.Log != "" {
		// A command that names the session once it is gone is told this
		// from the log (see EndedIn), so it goes there before the socket
		// does.
		d.note("%s", endNote(d.opts.Name, cause))
	}
	if err := d.unlisten(); err != nil {
		d.note("removing the socket: %v", err)
	}
	d.mu.Lock()
	as := make([]*attachment, 0, len(d.attached))
	for a := range d.attached {
		as = append(as, a)
	}
	d.mu.Unlock()
	for _, a := range as {
		a.end(reason)
	}
	// The attachments' requests are withdrawn (notifications/cancelled)
	// while the server is still there to hear it.
	d.cancel()
	d.wg.Wait()
	if err := sess.Close(); err != nil {
		d.note("closing the session: %v", err)
	}
	d.answerStoppers()
}

// answerStoppers tells the connections that asked the session to stop
// that it has ended.
func (d *Daemon) answerStoppers() {
	d.mu.Lock()
	stoppers := d.stoppers
	d.stoppers = nil
	d.mu.Unlock()
	for _, s := range stoppers {
		_ = s.nc.SetWriteDeadline(time.Now().Add(time.Second))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = writeJSON(ctx, s.lines, reply{OK: true})
		cancel()
		s.lines.Close()
		s.nc.Close()
	}
}

// stopper is a connection that asked the session to stop.
type stopper struct {
	nc    net.Conn
	lines *transport.StreamConn
}

// touch records that a command attached or detached.
func (d *Daemon) touch() {
	d.lastUsed = time.Now()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *Daemon) accept() {
	defer d.wg.Done()
	for {
		nc, err := d.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || d.ctx.Err() != nil {
				return
			}
			d.note("accepting a connection: %v", err)
			continue
		}
		d.wg.Add(1)
		go d.serveConn(nc)
	}
}

// serveConn answers one connection's hello.
func (d *Daemon) serveConn(nc net.Conn) {
	defer d.wg.Done()
	// The hello is a short line: one as long as the frames after an
	// attach may be is no hello, and is not read whole.
	hr := &helloLimit{r: nc, left: maxHello}
	lines := transport.NewStreamLimit(hr, nc, lineLimit(d.opts.MaxMessageSize))
	// A connection that does not read the reply must not hold the
	// session up (it waits for every connection when it ends).
	_ = nc.SetWriteDeadline(time.Now().Add(helloTimeout))
	keep := false
	defer func() {
		if !keep {
			lines.Close()
			nc.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(d.ctx, helloTimeout)
	defer cancel()
	if err := checkPeer(nc); err != nil {
		d.note("refused a connection: %v", err)
		_ = writeJSON(ctx, lines, reply{Error: err.Error()})
		return
	}
	var h hello
	if err := readJSON(ctx, lines, &h); err != nil {
		if errors.Is(err, io.EOF) || d.ctx.Err() != nil {
			// Closed without a word: another process checking that the
			// session is alive (New, before it replaces a stale socket);
			// or the session is ending, and stopped reading it.
			return
		}
		if hr.over.Load() {
			err = errLongHello // what was read of it is no JSON
		}
		d.note("a connection that said nothing useful: %v", err)
		return
	}
	// A status and a stop are answered whatever the version: after an
	// upgrade that changed the protocol, the new mcpx must still be able
	// to list and end the sessions the old one opened (the refusal says
	// to disconnect and connect again). Their hello and reply keep their
	// shape from version to version.
	if h.Version != protocolVersion && h.Op != opStatus && h.Op != opStop {
		_ = writeJSON(ctx, lines, reply{Error: fmt.Sprintf("session protocol %d, but this session speaks %d: it was started by another mcpx version (disconnect and connect again)", h.Version, protocolVersion)})
		return
	}
	switch h.Op {
	case opStatus:
		st := d.Status()
		_ = writeJSON(ctx, lines, reply{OK: true, Status: &st})
	case opKept:
		d.mu.Lock()
		kept, lost, lostAt := d.ring.take()
		d.mu.Unlock()
		if lost > 0 {
			// Said first: what was dropped is older than what is kept.
			kept = append([]Kept{{Time: lostAt, Note: fmt.Sprintf("%s dropped: while no command is attached, the session keeps only %s", olderDropped(lost), d.keepBounds())}}, kept...)
		}
		_ = writeJSON(ctx, lines, reply{OK: true, Kept: kept})
	case opStop:
		if d.sess.Load() != nil {
			// (While opening, the opening's error says it.)
			d.note("asked to stop")
		}
		// Acknowledged at once, so that the client can tell a session
		// process that does not answer (stopped, hung) from one that
		// is ending; a second reply says that it has ended.
		st := d.Status()
		if err := writeJSON(ctx, lines, reply{OK: true, Status: &st}); err != nil {
			return
		}
		d.mu.Lock()
		d.stoppers = append(d.stoppers, stopper{nc, lines})
		d.mu.Unlock()
		keep = true
		d.stopOnce.Do(func() { close(d.stop) })
	case opAttach:
		st := d.Status()
		if st.Opening {
			// Refused rather than held: the opening may take as long as
			// the server's start and an authorization do.
			_ = writeJSON(ctx, lines, reply{Error: "the session is still opening", Status: &st})
			return
		}
		var secrets []string
		if d.secrets != nil {
			secrets = d.secrets()
		}
		if err := writeJSON(ctx, lines, reply{OK: true, Status: &st, Secrets: secrets}); err != nil {
			return
		}
		_ = nc.SetWriteDeadline(time.Time{})
		d.attach(nc, lines, h, secrets)
	default:
		_ = writeJSON(ctx, lines, reply{Error: fmt.Sprintf("unknown operation %q", h.Op)})
	}
}

// helloLimit reads a connection, failing once maxHello bytes came without
// the end of the first line (the hello); after it, it reads on unbounded
// (the lines are then bounded by Options.MaxMessageSize).
type helloLimit struct {
	r    io.Reader
	left int
	done bool
	over atomic.Bool // the limit was reached
}

// errLongHello is what a connection whose first line is too long for a
// hello reads.
var errLongHello = fmt.Errorf("%w: a first line longer than %d bytes, which is no hello", ErrProtocol, maxHello)

func (h *helloLimit) Read(p []byte) (int, error) {
	if h.done {
		return h.r.Read(p)
	}
	if h.left <= 0 {
		h.over.Store(true)
		return 0, errLongHello
	}
	n, err := h.r.Read(p)
	if bytes.IndexByte(p[:n], '\n') >= 0 {
		h.done = true
	} else {
		h.left -= n
	}
	return n, err
}
