package sessiond

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// ErrNoSession is matched by the error for a session that is not open.
// It matches transport.ErrConnect too: a command cannot reach its server.
var ErrNoSession = errors.New("no such session")

// NoSessionError reports that no session of that name is open.
type NoSessionError struct {
	Name string
	// Err is what reaching its socket failed with.
	Err error
	// Stale is set when the socket was there but nobody listened: the
	// session process had been killed, or crashed.
	Stale bool
	// Log is the log a session of that name left, which says how it
	// ended ("" when there is none).
	Log string
	// Ended is how the last session of that name ended, as its log says
	// ("" when it does not say: an older mcpx's log, one cut at its size
	// limit).
	Ended string
}

func (e *NoSessionError) Error() string {
	s := fmt.Sprintf("no session named %q is open", e.Name)
	switch {
	case e.Stale && e.Log != "":
		s += ": its process had ended without closing (killed, or crashed); its log, " + e.Log + ", may say why"
	case e.Stale:
		s += ": its process had ended without closing (killed, or crashed)"
	case e.Ended != "" && e.Log != "":
		s += "; the last one ended: " + e.Ended + " (its log: " + e.Log + ")"
	case e.Log != "":
		s += "; the log of the last one, " + e.Log + ", says how it ended"
	}
	return s
}

// noSession returns the NoSessionError for name in dir.
func noSession(dir, name string, err error, stale bool) *NoSessionError {
	e := &NoSessionError{Name: name, Err: err, Stale: stale}
	if fi, serr := os.Lstat(LogPath(dir, name)); serr == nil && fi.Mode().IsRegular() {
		e.Log = LogPath(dir, name)
		if !stale {
			e.Ended = EndedIn(e.Log, name)
		}
	}
	return e
}

// endNote is the line a session's log ends with (Options.OnNote adds its
// prefix), which says how it ended: a command that names the session
// afterwards quotes it rather than only pointing to the log.
func endNote(name, cause string) string {
	return endMark(name) + cause
}

func endMark(name string) string { return "session " + name + " ended: " }

// endTail bounds how much of the end of a log EndedIn reads.
const endTail = 64 << 10

// EndedIn returns how the session name whose log is at path ended, as the
// log's last end note says, or "" when the log has none (an older mcpx's
// log, one cut at its size limit, one that cannot be read). Only mcpx's
// own lines count ("mcpx: ..."), not the server's ("server| ...").
func EndedIn(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-endTail, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	mark := endMark(name)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if !strings.HasPrefix(l, "mcpx: ") {
			continue
		}
		if _, cause, ok := strings.Cut(l, mark); ok {
			return cause
		}
	}
	return ""
}

func (e *NoSessionError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNoSession) and errors.Is(err,
// transport.ErrConnect) true.
func (e *NoSessionError) Is(target error) bool {
	return target == ErrNoSession || target == transport.ErrConnect
}

// EndedError reports an attachment the session ended (it was closed, the
// server went away, or it stopped reading the command's traffic).
type EndedError struct {
	Name   string
	Reason string
}

func (e *EndedError) Error() string {
	return fmt.Sprintf("session %s: %s", e.Name, e.Reason)
}

// Is makes errors.Is(err, transport.ErrConnect) true.
func (e *EndedError) Is(target error) bool { return target == transport.ErrConnect }

// RefusedError reports a session that refused the request (another mcpx
// version, another user).
type RefusedError struct {
	Name, Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("session %s refused the request: %s", e.Name, e.Reason)
}

// OpeningError reports a session that cannot take commands yet: the mcpx
// connect that opens it is still starting its server, authorizing or
// initializing.
type OpeningError struct {
	Name string
	// PID is the session process's id.
	PID int
}

func (e *OpeningError) Error() string {
	return fmt.Sprintf("session %s is still opening (its process, pid %d, is starting the server): run the command once mcpx connect %s has returned", e.Name, e.PID, e.Name)
}

// Is makes errors.Is(err, transport.ErrConnect) true.
func (e *OpeningError) Is(target error) bool { return target == transport.ErrConnect }

// MessageTooLargeError reports a message longer than the session takes
// from a command: its maximum message size, set when it opened. The
// message was not sent; the command stays attached.
type MessageTooLargeError struct {
	Name        string
	Size, Limit int64
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("a message of %s is longer than the %s session %s takes (its maximum message size, set when it opened)", transport.FormatSize(e.Size), transport.FormatSize(e.Limit), e.Name)
}

// AnswerTooLargeError fails a command's request whose answer was longer
// than the session's maximum message size, set when it opened: the
// session dropped it unread. It matches transport.ErrFrameTooLarge, as
// the same over a connection of the command's own does.
type AnswerTooLargeError struct {
	Name  string
	Limit int64
}

func (e *AnswerTooLargeError) Error() string {
	return fmt.Sprintf("the server's answer exceeds the maximum message size of session %s (%s)", e.Name, transport.FormatSize(e.Limit))
}

// Is makes errors.Is(err, transport.ErrFrameTooLarge) true.
func (e *AnswerTooLargeError) Is(target error) bool { return target == transport.ErrFrameTooLarge }

// ConnectionFailedError fails a command's request that the session's
// connection to its server failed to carry (envelope.Failed): over HTTP,
// the session could not connect, lost the response stream, or had its
// credentials refused. It matches transport.ErrTransport, or
// transport.ErrUnauthorized when Auth, as the same failure over a
// connection of the command's own does, rather than reading as an error
// the server answered.
type ConnectionFailedError struct {
	Name string
	// Text is the session's account of the failure.
	Text string
	Auth bool
}

func (e *ConnectionFailedError) Error() string {
	return fmt.Sprintf("session %s: %s", e.Name, e.Text)
}

// Is makes errors.Is(err, transport.ErrTransport) true, or, when Auth,
// errors.Is(err, transport.ErrUnauthorized).
func (e *ConnectionFailedError) Is(target error) bool {
	if e.Auth {
		return target == transport.ErrUnauthorized
	}
	return target == transport.ErrTransport
}

// replyTimeout bounds the wait for a session's reply to a hello: a
// session process that hangs (or was stopped, SIGSTOP) must not hang the
// command. (Variables for the tests.)
var replyTimeout = 10 * time.Second

// endTimeout bounds the wait for a session that was asked to stop to end:
// it detaches its commands (a second each at most) and shuts its server
// down (a stdio server gets SIGTERM, then SIGKILL).
var endTimeout = 30 * time.Second

// open connects to session name in dir and exchanges the hello. The
// directory and the socket must be this user's.
func open(ctx context.Context, dir, name string, h hello, maxMessageSize int64, wait time.Duration) (net.Conn, *transport.StreamConn, *reply, error) {
	if wait <= 0 || wait > replyTimeout {
		wait = replyTimeout
	}
	var cancel context.CancelFunc
	silent := &NotAnsweringError{Name: name, After: wait}
	ctx, cancel = context.WithTimeoutCause(ctx, wait, silent)
	defer cancel()
	path, err := socketPath(dir, name)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkDir(dir, false); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, &NoSessionError{Name: name, Err: err}
		}
		return nil, nil, nil, err
	}
	if err := checkSocket(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, noSession(dir, name, err, false)
		}
		return nil, nil, nil, fmt.Errorf("session %s: %w", name, err)
	}
	var dialer net.Dialer
	nc, err := dialer.DialContext(ctx, "unix", path)
	if err != nil {
		if refused(err) || errors.Is(err, fs.ErrNotExist) {
			// A socket left by a session process that was killed (or
			// removed since: one that ended meanwhile).
			return nil, nil, nil, noSession(dir, name, err, refused(err))
		}
		return nil, nil, nil, fmt.Errorf("session %s: %w: %w", name, transport.ErrConnect, err)
	}
	// Said should it not answer: the pid is all a person can act on
	// then (mcpx sessions cannot ask it either).
	silent.PID = peerPID(nc)
	// Unblock the exchange below when ctx ends.
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	lines := transport.NewStreamLimit(nc, nc, maxMessageSize)
	fail := func(err error) (net.Conn, *transport.StreamConn, *reply, error) {
		lines.Close()
		nc.Close()
		if cause := context.Cause(ctx); cause != nil {
			if errors.Is(cause, transport.ErrConnect) {
				return nil, nil, nil, cause
			}
			return nil, nil, nil, ctx.Err()
		}
		return nil, nil, nil, err
	}
	h.Version = protocolVersion
	// A daemon that refuses the connection says so before it reads the
	// hello, which may then fail to go out: its reply is read anyway.
	werr := writeJSON(ctx, lines, h)
	var r reply
	if err := readJSON(ctx, lines, &r); err != nil {
		if werr != nil {
			err = werr
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fail(fmt.Errorf("session %s: %w: %w", name, transport.ErrConnect, err))
	}
	if !r.OK {
		if r.Status != nil && r.Status.Opening {
			return fail(&OpeningError{Name: name, PID: r.Status.PID})
		}
		return fail(&RefusedError{Name: name, Reason: r.Error})
	}
	return nc, lines, &r, nil
}

// GetStatus describes the open session name in dir.
func GetStatus(ctx context.Context, dir, name string) (*Status, error) {
	nc, lines, r, err := open(ctx, dir, name, hello{Op: opStatus}, 0, 0)
	if err != nil {
		return nil, err
	}
	lines.Close()
	nc.Close()
	if r.Status == nil {
		return nil, fmt.Errorf("session %s: %w: no status in the reply", name, ErrProtocol)
	}
	return r.Status, nil
}

// TakeKept hands over what the session kept while no command was
// attached (notifications, notes), oldest first, and forgets it.
func TakeKept(ctx context.Context, dir, name string) ([]Kept, error) {
	nc, lines, r, err := open(ctx, dir, name, hello{Op: opKept}, 0, 0)
	if err != nil {
		return nil, err
	}
	lines.Close()
	nc.Close()
	return r.Kept, nil
}

// Stop ends the session name in dir and returns once it has: the
// commands attached were detached and the server shut down (a stdio
// server with its process tree).
func Stop(ctx context.Context, dir, name string) error {
	nc, lines, r, err := open(ctx, dir, name, hello{Op: opStop}, 0, 0)
	if err != nil {
		return err
	}
	defer nc.Close()
	defer lines.Close()
	// The daemon acknowledged the request (an older one answered only
	// after the session ended, and then closes the connection); it
	// answers again once the session has ended.
	pid := 0
	if r.Status != nil {
		pid = r.Status.PID
	}
	ctx, cancel := context.WithTimeoutCause(ctx, endTimeout, &NotEndedError{Name: name, PID: pid, After: endTimeout})
	defer cancel()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	var end reply
	if err := readJSON(ctx, lines, &end); err != nil && !errors.Is(err, io.EOF) {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		return fmt.Errorf("session %s: waiting for it to end: %w", name, err)
	}
	return nil
}

// NotAnsweringError reports a session whose process accepted the
// connection (the kernel does, for a process that is stopped or hung)
// and did not answer in time.
type NotAnsweringError struct {
	Name string
	// PID is the session process's id, where the system tells it (Linux),
	// else 0.
	PID   int
	After time.Duration
}

func (e *NotAnsweringError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("session %s did not answer within %s: its process may be stopped (SIGSTOP) or hung", e.Name, e.After)
	}
	return fmt.Sprintf("session %s did not answer within %s: its process (pid %d) may be stopped (SIGSTOP) or hung; once it is killed, mcpx connect %s opens a new one", e.Name, e.After, e.PID, e.Name)
}

// Is makes errors.Is(err, transport.ErrConnect) true.
func (e *NotAnsweringError) Is(target error) bool { return target == transport.ErrConnect }

// NotEndedError reports a session that was asked to stop and did not end
// in time.
type NotEndedError struct {
	Name  string
	PID   int
	After time.Duration
}

func (e *NotEndedError) Error() string {
	return fmt.Sprintf("session %s was asked to end and did not within %s: its process (pid %d) may be hung", e.Name, e.After, e.PID)
}

// listParallel bounds the sessions List asks at once.
const listParallel = 16

// List describes every open session in dir, by name. A socket left by a
// session process that was killed is removed, and reported in the error
// (a *StaleError), with the other entries that are no session of this
// user's.
func List(ctx context.Context, dir string) ([]Status, error) {
	if err := checkDir(dir, false); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	socks, err := filepath.Glob(filepath.Join(dir, "*.sock"))
	if err != nil {
		return nil, err
	}
	// The sessions are asked at once (at most listParallel at a time), so
	// that each one that hangs does not add its wait to the others'.
	type answer struct {
		st  *Status
		err error
	}
	answers := make([]answer, len(socks))
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i, s := range socks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			name := strings.TrimSuffix(filepath.Base(s), ".sock")
			st, err := GetStatus(ctx, dir, name)
			var ns *NoSessionError
			switch {
			case errors.As(err, &ns):
				if refused(ns.Err) {
					// Said, since the session did not end as sessions
					// do (disconnect, idle, its server gone).
					if se := ClearStale(dir, name); se != nil {
						answers[i].err = se
					}
				}
			case err != nil:
				answers[i].err = err
			default:
				answers[i].st = st
			}
		}()
	}
	wg.Wait()
	var out []Status
	var errs []error
	for _, a := range answers {
		if a.st != nil {
			out = append(out, *a.st)
		}
		if a.err != nil {
			errs = append(errs, a.err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

// DialOptions configure Dial.
type DialOptions struct {
	// Label says what the command runs, for the session's log.
	Label string
	// MaxMessageSize bounds a line from the session (zero:
	// transport.DefaultMaxMessageSize).
	MaxMessageSize int64
	// Timeout bounds the wait for the session's reply when shorter than
	// the 10 seconds a session process that hangs is given otherwise
	// (the command's own --timeout).
	Timeout time.Duration
	// Observer, when set, receives the transport.EventDropped events the
	// session's connection to the server reports while the command is
	// attached (a notification over the session's maximum message size,
	// dropped unread), as the command's own connection would report them.
	Observer transport.Observer
	// OnNote, when set, is told what the held session did on its own
	// while the command is attached (it started a new session with the
	// server, which ended the old one: see Daemon.Tell).
	OnNote func(string)
	// OnSecret, when set, is told the credentials the held session's
	// connection learns while the command is attached (an access token
	// OAuth refreshed: see Daemon.TellSecret), before anything of the
	// server's read after it: the command redacts them as it does
	// Secrets.
	OnSecret func(string)
}

// Conn is one command's connection through a session: a transport.Conn
// that carries the command's MCP traffic to the held session. The command
// runs its own MCP session over it (initialize included: the session
// answers it with the server's original answer).
type Conn struct {
	name   string
	nc     net.Conn
	lines  *transport.StreamConn
	status Status

	closeOnce sync.Once
	closed    chan struct{}
	mu        sync.Mutex
	ended     string // the reason the session gave for ending the attachment
	// maxMessageSize is the longest message the command reads
	// (DialOptions.MaxMessageSize).
	maxMessageSize int64
	// onLost learns of requests whose answer was over the session's
	// maximum message size (see transport.LossReporter).
	onLost func(id string, err error)
	// observer is DialOptions.Observer.
	observer transport.Observer
	// onNote is DialOptions.OnNote; onSecret DialOptions.OnSecret.
	onNote, onSecret func(string)
	// secrets are the session's (see Secrets).
	secrets []string
}

// Dial attaches to the session name in dir.
func Dial(ctx context.Context, dir, name string, o DialOptions) (*Conn, error) {
	nc, lines, r, err := open(ctx, dir, name, hello{Op: opAttach, Label: o.Label, Dropped: o.Observer != nil, Notes: o.OnNote != nil, Secrets: o.OnSecret != nil}, lineLimit(o.MaxMessageSize), o.Timeout)
	if err != nil {
		return nil, err
	}
	limit := o.MaxMessageSize
	if limit <= 0 {
		limit = transport.DefaultMaxMessageSize
	}
	c := &Conn{name: name, nc: nc, lines: lines, closed: make(chan struct{}), maxMessageSize: limit, observer: o.Observer, onNote: o.OnNote, onSecret: o.OnSecret}
	if r.Status != nil {
		c.status = *r.Status
	}
	c.secrets = r.Secrets
	return c, nil
}

// Status describes the session as it was when the command attached.
func (c *Conn) Status() Status { return c.status }

// Secrets are the secrets the session's connection knew when the command
// attached (ServeOptions.Secrets), for the command to redact from what it
// shows and records of the server's messages.
func (c *Conn) Secrets() []string { return c.secrets }

// Describe says what the command talks to.
func (c *Conn) Describe() string {
	return fmt.Sprintf("session %s (%s)", c.name, c.status.Target)
}

// Read returns the next frame from the session.
func (c *Conn) Read(ctx context.Context) (transport.Frame, error) {
	for {
		f, err := c.lines.Read(ctx)
		if err != nil {
			return transport.Frame{}, c.readError(err)
		}
		env, err := parseEnvelope(f.Data)
		if err != nil {
			return transport.Frame{}, fmt.Errorf("session %s: %w", c.name, err)
		}
		if env.Closed != "" {
			c.mu.Lock()
			c.ended = env.Closed
			c.mu.Unlock()
			continue
		}
		if env.Dropped != "" && len(env.Frame) == 0 {
			if c.observer != nil {
				c.observer(transport.Event{Time: time.Now(), Kind: transport.EventDropped, Text: env.Dropped})
			}
			continue
		}
		if env.Secret != "" && len(env.Frame) == 0 {
			if c.onSecret != nil {
				c.onSecret(env.Secret)
			}
			continue
		}
		if env.Note != "" && len(env.Frame) == 0 {
			if c.onNote != nil {
				c.onNote(env.Note)
			}
			continue
		}
		if len(env.Frame) == 0 {
			return transport.Frame{}, fmt.Errorf("session %s: %w: a line without a frame", c.name, ErrProtocol)
		}
		if (env.TooLarge > 0 || env.Failed != "") && c.lost(env) {
			continue
		}
		return transport.Frame{Data: env.Frame}, nil
	}
}

// OnRequestLost registers fn to learn of the requests whose answer was
// longer than the session's maximum message size (see
// transport.LossReporter).
func (c *Conn) OnRequestLost(fn func(id string, err error)) {
	c.mu.Lock()
	c.onLost = fn
	c.mu.Unlock()
}

// lost fails the request env's frame answers with an AnswerTooLargeError
// (env.TooLarge) or a ConnectionFailedError (env.Failed), and reports
// whether it did (with no listener, the frame is read as it is).
func (c *Conn) lost(env envelope) bool {
	c.mu.Lock()
	fn := c.onLost
	c.mu.Unlock()
	msgs, _, err := jsonrpc.DecodeFrame(env.Frame)
	if fn == nil || err != nil || len(msgs) != 1 || !msgs[0].IsResponse() || msgs[0].ID.IsZero() {
		return false
	}
	var why error = &AnswerTooLargeError{Name: c.name, Limit: env.TooLarge}
	if env.Failed != "" {
		text := "the connection to the server failed"
		if msgs[0].Error != nil {
			text = strings.TrimPrefix(msgs[0].Error.Message, "mcpx session "+c.name+": ")
		}
		why = &ConnectionFailedError{Name: c.name, Text: text, Auth: env.Failed == failedAuth}
	}
	fn(msgs[0].ID.LooseKey(), why)
	return true
}

func (c *Conn) readError(err error) error {
	select {
	case <-c.closed:
		return transport.ErrClosed
	default:
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, transport.ErrFrameTooLarge) {
		// The command's own limit (the session's may be larger).
		return fmt.Errorf("session %s: %w", c.name, &transport.FrameTooLargeError{What: "a message the session passed on from its server", Limit: c.maxMessageSize})
	}
	c.mu.Lock()
	why := c.ended
	c.mu.Unlock()
	if why == "" {
		// It said nothing before it went: killed, or crashed.
		why = "the session process went away without a word (killed, or crashed)"
		if !errors.Is(err, io.EOF) {
			why += ": " + err.Error()
		}
		if c.status.Log != "" {
			why += "; its log, " + c.status.Log + ", may say why"
		}
	}
	return &EndedError{Name: c.name, Reason: why}
}

// Write sends one frame (one JSON value) to the session.
func (c *Conn) Write(ctx context.Context, f transport.Frame) error {
	line, err := frameLine(f.Data)
	if err != nil {
		return err
	}
	select {
	case <-c.closed:
		return transport.ErrClosed
	default:
	}
	if size, limit := int64(len(line)-envelopeOverhead), c.status.MaxMessageSize; limit > 0 && size > limit {
		// Refused here: the session would detach a command that sends it.
		return &MessageTooLargeError{Name: c.name, Size: size, Limit: limit}
	}
	if err := c.lines.Write(ctx, transport.Frame{Data: line}); err != nil {
		c.mu.Lock()
		why := c.ended
		c.mu.Unlock()
		if why != "" {
			return &EndedError{Name: c.name, Reason: why}
		}
		return fmt.Errorf("session %s: %w", c.name, err)
	}
	return nil
}

// Close detaches: the session cancels the requests the command left in
// flight and lives on. It is idempotent.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.lines.Close()
		c.nc.Close()
	})
	return nil
}

// ClearStale removes the socket a session process left when it was
// killed (or crashed), and returns the *StaleError that says so; nil when
// there was none, or a session listens there again.
func ClearStale(dir, name string) *StaleError {
	path, err := socketPath(dir, name)
	if err != nil || !removeStale(path) {
		return nil
	}
	return &StaleError{Name: name, Log: LogPath(dir, name)}
}

// removeStale removes the socket at path if it is still stale once
// claimLock is held (a session may have opened in its place meanwhile),
// and reports whether it did.
func removeStale(path string) bool {
	release, err := claimLock(path)
	if err != nil {
		return false
	}
	defer release()
	if _, err := os.Lstat(path); err != nil {
		return false
	}
	if err := clearStale(path); err != nil {
		return false
	}
	_, err = os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// StaleError reports a session whose process ended without closing it
// (killed, or crashed): List removed the socket it left.
type StaleError struct {
	Name string
	// Log is the session's log, which may say what happened.
	Log string
}

func (e *StaleError) Error() string {
	s := fmt.Sprintf("session %s had ended without closing (its process was killed, or crashed): its socket was removed", e.Name)
	if _, err := os.Stat(e.Log); err == nil {
		s += "; its log is " + e.Log
	}
	return s
}
