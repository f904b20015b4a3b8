package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Defaults for request timeouts (spec: basic/lifecycle, "Timeouts").
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMaxTimeout = 10 * time.Minute
)

// RequestHandler answers one server-to-client request. It returns the result
// (any JSON-marshalable value or json.RawMessage) or an error; a *jsonrpc.Error is
// sent as is, any other error as an internal error.
type RequestHandler func(ctx context.Context, req *jsonrpc.Message) (any, error)

// Options configure a Session.
type Options struct {
	// Lifecycle opens the session and decorates requests for the protocol
	// era in use. Nil means a handshake-era Legacy lifecycle with defaults.
	Lifecycle Lifecycle
	// Handlers answer server-to-client requests by method. ping is always
	// answered; unknown methods get "method not found".
	Handlers map[string]RequestHandler
	// OnNotification receives every notification except progress for our
	// own requests (delivered to the call's progress callback) — called on
	// the read loop, in arrival order, so it must not block for long.
	OnNotification func(*jsonrpc.Message)
	// OnNotificationUnsaid receives, in place of OnNotification, a
	// notification that is itself a departure of a sort the server can
	// repeat with every message — progress for a token no request
	// carries, progress that breaks its rules — past the first EachShown
	// of its sort, whose warning was counted, not said
	// (OnDepartureUnsaid). A program that shows notifications beside its
	// output drops it with its warning, so that a server sending 20,000
	// of them is shown in a few lines (UnsaidDepartures counts them); one
	// whose output is every notification (mcpx watch) shows it. Log
	// messages are not among them, whatever their departure: their text
	// is meant for the person. Nil sends them to OnNotification.
	OnNotificationUnsaid func(*jsonrpc.Message)
	// ShowsUnsaid, when set, reports whether the program shows the
	// notifications OnNotificationUnsaid receives all the same (its
	// output is every notification: mcpx watch). It is asked as the last
	// line of a sort is said, which then says that further ones are
	// counted, not warned about; otherwise, that they are counted, not
	// shown (see EachShown). Nil: not shown.
	ShowsUnsaid func() bool
	// OnServerRequest is told about each server-to-client request and the
	// answer we sent, for display.
	OnServerRequest func(req *jsonrpc.Message, result json.RawMessage, err *jsonrpc.Error)
	// OnInputRequest is told about each input request of the 2026-07-28
	// era (embedded in an input_required result, or a task's) and mcpx's
	// answer, which goes out in the retry's inputResponses (or
	// tasks/update). With err set there is no answer: the request is left
	// out and nothing is sent for it, no error either. Nil uses
	// OnServerRequest.
	OnInputRequest func(req *jsonrpc.Message, result json.RawMessage, err *jsonrpc.Error)
	// OnWarning receives warnings about what the session reads past or
	// does anyway that is not the server's departure from the protocol (a
	// request for a capability the server did not declare, sent anyway; a
	// late response to a request mcpx gave up on; a stream that ended),
	// and, when OnDeparture is nil, the departures too.
	OnWarning func(string)
	// OnDeparture receives the server's departures from the protocol
	// that the session reads past, one line each: frames that are not
	// JSON-RPC, responses nobody asked for, results that depart from the
	// method's (ToolResultProblems and the like), progress and log
	// messages that break their rules, a server request it may not send,
	// what the connection reads past (transport.DepartureReporter: a body
	// answering an HTTP POST that carried no request).
	// They are kept apart from OnWarning so that a program can tell a
	// server that broke the protocol from its own troubles (mcpx
	// --strict, mcpx check). A departure that stops a request is an error
	// marked ErrProtocolViolation instead. Nil sends them to OnWarning.
	//
	// ctx is the context of the request the departure is tied to — its
	// result, an answer to it that departs from JSON-RPC, progress for
	// it — as its caller passed it, so that a program running requests at
	// once can tell whose departure it is (mcpx's REPL lines, each of
	// which answers for its own under --strict); it may be the context of
	// a request that has ended (a second answer). A departure tied to no request (a frame that is
	// not JSON-RPC, a log message, a request of the server's) comes with
	// context.Background().
	OnDeparture func(ctx context.Context, msg string)
	// OnDepartureUnsaid receives, in place of OnDeparture, each departure
	// of a sort the server can repeat with every message (progress for a
	// token no request carries, a response to an unknown id, a log
	// message that breaks its rules, …) past the first few of its sort
	// (see EachShown): the line is not said, and a program that counts
	// departures (--strict) counts it all the same. UnsaidDepartures
	// sums them up. Nil drops them.
	OnDepartureUnsaid func(ctx context.Context)
	// OnNote receives what the session did on its own that the person
	// should know about (a new session after the server ended the old one).
	// Nil sends notes to OnWarning.
	OnNote func(string)
	// OnRenew, when set, receives in place of OnNote the note that the
	// session was re-initialized because the server ended the old one:
	// what the server held for the old session (subscriptions, a log
	// level) is gone, which a session serving several commands tells
	// them all (sessiond).
	OnRenew func(string)
	// Timeout is the default per-request timeout, reset by progress and
	// stopped while a person answers the server (peer.HoldTimeouts); zero
	// means DefaultTimeout, negative means none.
	Timeout time.Duration
	// MaxTimeout caps a request's total time even while progress arrives;
	// zero means DefaultMaxTimeout, negative means none.
	MaxTimeout time.Duration
	// ServerStreamOnDemand holds the connection's stream for
	// server-initiated messages (Streamable HTTP's GET stream; see
	// transport.ServerStreamer) until the session may need it: a session
	// that only lists, and so expects nothing the server sends on its own,
	// never opens it. A caller that shows what the server sends on its own
	// (notifications) leaves it off.
	ServerStreamOnDemand bool
	// OnLateProgress is told about a progress notification for a request
	// of ours that was already answered or given up: progress notifications
	// must stop after completion (spec 2025-11-25: basic/utilities/progress,
	// "Behavior Requirements"), so it is neither a progress update nor a
	// notification for OnNotification. Nil drops it.
	OnLateProgress func(request jsonrpc.ID, p Progress)
	// TraceContext, when set, is carried in the _meta of every request but
	// a Raw one, in either era (see TraceContext).
	TraceContext *TraceContext
}

// Session is one MCP session over a transport connection, on the
// JSON-RPC engine (package jsonrpc/peer), which owns the connection's
// read loop; Call and Notify may be used concurrently.
type Session struct {
	peer *peer.Peer
	conn transport.Conn
	opts Options
	life Lifecycle

	mu       sync.Mutex
	progress map[string]func(Progress) // by the key of the request id its token repeats
	// taskProgress holds the progress callbacks of task-augmented
	// requests, whose tokens stay valid after the request is answered,
	// for the task's lifetime (spec 2025-11-25: basic/utilities/tasks,
	// "Task Progress Notifications"); same keys. EndTaskProgress removes
	// one.
	taskProgress map[string]func(Progress)
	// lastProgress holds the last progress value each token in progress
	// reported (same keys): it must increase with each notification.
	lastProgress map[string]float64
	// finished holds the loose keys of the latest requests that carried
	// a progress token and ended, oldest first, so that progress that
	// comes after the end is known for what it is.
	finished []string

	// departTap, while a Check that has the session to itself runs,
	// gathers the departures tied to no request that would go to
	// OnDeparture (see CheckOptions.Alone).
	departTap atomic.Pointer[checkTap]

	// renewSem serializes re-opening an expired session: a channel
	// rather than a mutex, so that a renewal waiting for another is
	// bounded by its context (and, under testing/synctest, durably
	// blocked while the other waits for the network).
	renewSem chan struct{}
	gen      atomic.Int64 // counts re-opened sessions
	// holdMu guards holds and held: while holds > 0 a new session is
	// being started (see holdSends), and send waits for held to close.
	holdMu sync.Mutex
	holds  int
	held   chan struct{}
	// subscribed holds the URIs of the resource subscriptions the server
	// took (resources/subscribe answered, not unsubscribed since): a new
	// session after the old one expired subscribes to them again.
	subMu      sync.Mutex
	subscribed map[string]bool

	// warned holds the keys of the warnings warnOnce gave.
	warned map[string]bool
	// each counts the departures departEach had of each kind (a fixed
	// phrase of mcpx's: the map stays small), and unsaid those of them it
	// did not say, under mu.
	each, unsaid map[string]int
	// sayEach is held while a departure or warning of a sort is counted
	// and said (departEachPast, warnedEach), so that they are said in
	// the order they are counted: the transport tells of some from
	// goroutines of their own, and the one saying that more of its sort
	// are counted was said before one counted ahead of it. A channel,
	// not a mutex, so that a test's synctest bubble sees a wait on it.
	sayEach chan struct{}

	hookMu sync.Mutex
	hooks  map[int]func(*jsonrpc.Message) bool // see addNotificationHook
	// endedSubs are the idKeys of the latest subscriptions that ended
	// (see endSubscription), under hookMu.
	endedSubs []string
	// listens are the subscriptions/listen requests in flight, by id
	// LooseKey, and listened the latest that ended, under hookMu (see
	// checkSubscriptionOf).
	listens  map[string]bool
	listened []string
	hookID   int

	tools toolCache // tools/list as last listed in full
	// prompts is prompts/list as last listed in full, which checking a
	// prompt's arguments reads (its derived maps stay empty).
	prompts toolCache
	// resources is resources/list as last listed in full, which an MCP
	// Apps host reads for a view's listing-level _meta.ui (ListedResource;
	// its derived maps stay empty).
	resources toolCache
	// maxPages, when set (tests), bounds the pages List follows instead
	// of the package's maxPages.
	maxPages int

	streamMu   sync.Mutex // serializes opening the stream (see listen)
	streamOpen bool       // the held stream was opened for this negotiation
	// detachedWork runs the requests detached from their caller's context
	// (see detached); Close waits for them.
	detachedWork workGroup
}

// maxFinished bounds the requests a Session remembers as finished, for
// progress that comes late.
const maxFinished = 256

// Progress is one notifications/progress update for a request of ours.
type Progress struct {
	Progress float64
	Total    *float64
	Message  string
}

// NewSession starts a session's read loop on conn without running the
// lifecycle; most callers want Connect.
func NewSession(conn transport.Conn, opts Options) *Session {
	if opts.Lifecycle == nil {
		opts.Lifecycle = &Legacy{}
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxTimeout == 0 {
		opts.MaxTimeout = DefaultMaxTimeout
	}
	s := &Session{
		conn:         conn,
		opts:         opts,
		life:         opts.Lifecycle,
		progress:     map[string]func(Progress){},
		taskProgress: map[string]func(Progress){},
		lastProgress: map[string]float64{},
		renewSem:     make(chan struct{}, 1),
		sayEach:      make(chan struct{}, 1),
	}
	s.peer = peer.New(conn, peer.Options{
		Handler: s.handle,
		OnRefused: func(m *jsonrpc.Message, e *jsonrpc.Error) {
			if s.opts.OnServerRequest != nil {
				s.opts.OnServerRequest(m, nil, e)
			}
		},
		OnRequest:       s.checkRequest,
		OnNotification:  s.handleNotification,
		OnBatch:         s.checkBatch,
		OnWarning:       opts.OnWarning,
		OnDeparture:     s.departed,
		OnEachDeparture: s.departedEach,
		OnEachWarning:   s.warnedEach,
		CodeName:        mcp.CodeName,
	})
	s.holdServerStream()
	if r, ok := transport.Find[transport.DepartureReporter](conn); ok {
		// The transport's departures (a body answering a notification, a
		// session id that changed) are tied to no request: the session's.
		r.OnDeparture(func(kind, msg string) { s.departedEach(context.Background(), kind, msg) })
	}
	if r, ok := transport.Find[transport.ServerStreamEndReporter](conn); ok {
		r.OnServerStreamEnd(func(err error) {
			// The generation and the hold are taken here, on the
			// connection's goroutine, before it reconnects anything: a
			// request that finds the session gone later renews it once
			// with this, not twice, and no request goes out on the new
			// connection before the new session's initialize.
			gen := s.gen.Load()
			release := s.holdSends()
			if !s.detachedWork.Go(func() {
				defer release()
				s.serverStreamEnded(gen, err)
			}) {
				release()
			}
		})
	}
	s.peer.Start()
	return s
}

// Connect starts a session on conn and runs its lifecycle (the initialize
// handshake for the handshake era). On failure the connection is closed.
func Connect(ctx context.Context, conn transport.Conn, opts Options) (*Session, error) {
	s := NewSession(conn, opts)
	if err := s.life.Open(ctx, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Server returns what the lifecycle learned about the server.
func (s *Session) Server() *ServerInfo { return s.life.Server() }

// Lifecycle returns the session's lifecycle.
func (s *Session) Lifecycle() Lifecycle { return s.life }

// Done is closed when the connection has ended.
func (s *Session) Done() <-chan struct{} { return s.peer.Done() }

// Err reports why the connection ended, once Done is closed.
func (s *Session) Err() error { return s.peer.Err() }

// Close ends the session and its connection, and waits for the requests
// it ran detached from their callers (task polls). It is idempotent.
func (s *Session) Close() error {
	err := s.peer.Close() // ends every request under way
	s.detachedWork.Wait()
	return err
}

func (s *Session) warn(format string, args ...any) {
	if s.opts.OnWarning != nil {
		s.opts.OnWarning(fmt.Sprintf(format, args...))
	}
}

// depart reports a departure of the server's from the protocol that the
// session reads past, tied to the request whose context ctx is
// (context.Background(): to none; see Options.OnDeparture).
func (s *Session) depart(ctx context.Context, format string, args ...any) {
	s.departed(ctx, fmt.Sprintf(format, args...))
}

// departed is depart for a line said already (the JSON-RPC layer's). A
// Check gathers those of its requests instead, and those tied to none
// while it has the session to itself (see Session.Check).
func (s *Session) departed(ctx context.Context, msg string) {
	if ok, _ := s.tapped(ctx, "", msg); ok {
		return
	}
	switch {
	case s.opts.OnDeparture != nil:
		s.opts.OnDeparture(ctx, msg)
	case s.opts.OnWarning != nil:
		s.opts.OnWarning(msg)
	}
}

// EachShown is how many departures of one sort that a server can repeat
// with every message are said, the last of them saying that more are
// counted, not said: a server that sends 20,000 progress notifications
// for a token never issued is told about in ten lines, not 20,000. Ten,
// as a list's problems are (ListProblems).
const EachShown = 10

// departEach is depart for a departure of the sort kind that the server
// can repeat with every message (see departedEach).
// It reports whether the departure was past the first EachShown of its
// sort, and so not said on OnDeparture.
func (s *Session) departEach(ctx context.Context, kind, format string, args ...any) (past bool) {
	return s.departEachPast(ctx, kind, fmt.Sprintf(format, args...))
}

// departedEach says the departure msg, of the sort kind, when fewer than
// EachShown of that sort were said before; past that it is counted, not
// said (Options.OnDepartureUnsaid, UnsaidDepartures). A Check gathers
// every one, as departed does: its report counts them.
func (s *Session) departedEach(ctx context.Context, kind, msg string) {
	s.departEachPast(ctx, kind, msg)
}

// departEachPast is departedEach, reporting whether msg was past the
// first EachShown of its sort (see departEach).
func (s *Session) departEachPast(ctx context.Context, kind, msg string) (past bool) {
	if ok, past := s.tapped(ctx, kind, msg); ok {
		// A Check's report counts every one (naming the first
		// EachShown); what the console says is counted apart.
		return past
	}
	s.sayEach <- struct{}{}
	defer func() { <-s.sayEach }()
	switch n := s.countEach(kind); {
	case n < EachShown:
		s.departed(ctx, msg)
		return false
	case n == EachShown:
		s.departed(ctx, msg+" (further "+kind+" are "+s.unsaidWords(kind)+")")
		return false
	}
	s.countUnsaid(kind)
	if s.opts.OnDepartureUnsaid != nil {
		s.opts.OnDepartureUnsaid(ctx)
	}
	return true
}

// tapped gathers msg, of the sort kind ("": none), in the report of the
// Check that runs (see departed), and reports whether one did; past
// reports that it was counted there, not kept (see checkTap.add).
func (s *Session) tapped(ctx context.Context, kind, msg string) (ok, past bool) {
	if tap, is := ctx.Value(checkTapKey{}).(*checkTap); is {
		if ok, past = tap.add(kind, msg); ok {
			return ok, past
		}
	}
	if tap := s.departTap.Load(); tap != nil {
		return tap.add(kind, msg)
	}
	return false, false
}

// countEach counts one more departure or warning of the sort kind
// (departEachPast, warnedEach) and returns how many there were.
func (s *Session) countEach(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.each == nil {
		s.each = map[string]int{}
	}
	s.each[kind]++
	return s.each[kind]
}

// countUnsaid counts a departure or warning of the sort kind that was
// not said (UnsaidDepartures).
func (s *Session) countUnsaid(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unsaid == nil {
		s.unsaid = map[string]int{}
	}
	s.unsaid[kind]++
}

// Unsaid counts the departures of one sort that were counted, not said
// (see EachShown).
type Unsaid struct {
	Kind string `json:"kind"` // the sort, a plural phrase: "responses to unknown request ids"
	N    int    `json:"n"`
}

// unsaidWords says what becomes of the departures (and warnings) of the
// sort kind past the first EachShown: a program whose output is every
// notification shows those that are notifications all the same, and
// only their warnings are not said (Options.ShowsUnsaid); so does every
// program with log messages (ShownAnyway).
func (s *Session) unsaidWords(kind string) string {
	if ShownAnyway(kind) || s.opts.ShowsUnsaid != nil && s.opts.ShowsUnsaid() {
		return "counted, not warned about"
	}
	return "counted, not shown"
}

// logDepartures is the sort of the log messages that break their rules
// (see departEach).
const logDepartures = "log messages that break their rules"

// ShownAnyway reports whether the messages whose departures are of the
// sort kind (Unsaid.Kind) are shown past the first EachShown all the
// same, only their warnings counted, not said: log messages, whose text
// is meant for the person (see Options.OnNotificationUnsaid).
func ShownAnyway(kind string) bool { return kind == logDepartures }

// warnedEach is departedEach for a warning, which is no departure: past
// EachShown of its sort, it is counted for UnsaidDepartures only.
func (s *Session) warnedEach(kind, msg string) {
	s.sayEach <- struct{}{}
	defer func() { <-s.sayEach }()
	switch n := s.countEach(kind); {
	case n < EachShown:
		s.warn("%s", msg)
	case n == EachShown:
		s.warn("%s (further %s are %s)", msg, kind, s.unsaidWords(kind))
	default:
		s.countUnsaid(kind)
	}
}

// UnsaidDepartures returns, for each sort of departure (or of warning:
// warnedEach) the server repeated beyond EachShown, how many were not
// said, by Kind; nil when there were none. A one-shot command says them
// at its end.
func (s *Session) UnsaidDepartures() []Unsaid {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Unsaid
	for kind, n := range s.unsaid {
		out = append(out, Unsaid{Kind: kind, N: n})
	}
	slices.SortFunc(out, func(a, b Unsaid) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

func (s *Session) note(format string, args ...any) {
	if s.opts.OnNote != nil {
		s.opts.OnNote(fmt.Sprintf(format, args...))
		return
	}
	s.warn(format, args...)
}

// renewingKey marks the context of a lifecycle Open that re-opens an
// expired session, so that its own writes never try to renew again.
type renewingKey struct{}

// send writes one frame. When the transport reports that the server ended
// the session (transport.ErrSessionExpired: HTTP 404 to a request that
// carried Mcp-Session-Id), the lifecycle opens a new session and the frame
// is sent once more (spec: basic/transports, "Session Management": the
// client MUST start a new session).
//
// A server built on the TypeScript SDK's examples answers 400, not 404, to
// a session it does not know (it restarted): when a request in a session
// gets a 400 that is no answer of the server's, a ping tells whether the
// session is gone (refused the same way) or the request alone was refused
// (answered); only the first renews the session.
//
// While a new session is being started, send waits for it (see holdSends),
// so that nothing goes out in the new session before its initialize.
func (s *Session) send(ctx context.Context, method string, f transport.Frame) error {
	renewing := ctx.Value(renewingKey{}) != nil
	if !renewing {
		if err := s.awaitRenewal(ctx); err != nil {
			return err
		}
	}
	gen := s.gen.Load()
	err := s.conn.Write(ctx, f)
	if err == nil || renewing {
		return err
	}
	if !errors.Is(err, transport.ErrSessionExpired) {
		unknown := s.unknownSession(ctx, method, err)
		if unknown == nil {
			return err
		}
		err = unknown
	}
	if err := s.renew(ctx, gen, method, err); err != nil {
		return err
	}
	if method == mcp.NotificationInitialized {
		// The renewal's own handshake sent it on the new session: once per
		// session (spec 2025-11-25: basic/lifecycle, "Initialization").
		return nil
	}
	return s.conn.Write(ctx, f)
}

// UnknownSessionError reports a session the server no longer knows, though
// it answered 400 rather than the 404 the spec has it answer (spec
// 2025-11-25: basic/transports, "Session Management"): both the request
// and a ping in the session were refused with HTTP 400. It matches
// transport.ErrSessionExpired, and unwraps to the request's HTTPError.
type UnknownSessionError struct {
	// Err is the refusal of the request that found out.
	Err *transport.HTTPError
	// Elsewhere is set when another request (or the stream for the
	// server's own messages) had found the session gone first.
	Elsewhere bool
}

func (e *UnknownSessionError) Error() string {
	if e.Elsewhere {
		return fmt.Sprintf("session expired: the server answered %s %s with HTTP 400 for session %s, which it no longer knows (another request found out first)",
			e.Err.Method, transport.RedactURL(e.Err.URL), e.Err.SessionID)
	}
	return fmt.Sprintf("session expired: the server answered %s %s with HTTP 400 for session %s, and a ping in it as well, so it no longer knows the session (servers built on the TypeScript SDK's examples answer 400 where the spec says 404)",
		e.Err.Method, transport.RedactURL(e.Err.URL), e.Err.SessionID)
}

func (e *UnknownSessionError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, transport.ErrSessionExpired) true.
func (e *UnknownSessionError) Is(target error) bool { return target == transport.ErrSessionExpired }

// unknownSession returns an UnknownSessionError when err, the failure to
// send method, is an HTTP 400 to a request in a session that the server
// no longer knows: a ping in the session is refused with 400 as well (a
// ping needs no second opinion). The connection has forgotten the session
// then. It returns nil for any other failure, and for a 400 that refused
// the request alone.
func (s *Session) unknownSession(ctx context.Context, method string, err error) error {
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.SessionID == "" || method == mcp.MethodInitialize {
		return nil
	}
	sf, ok := transport.Find[transport.SessionForgetter](s.conn)
	if !ok {
		return nil
	}
	if s.sessionLeft(he.SessionID) {
		// Another request, or the stream for the server's own
		// messages, found the session gone first and forgot it (and
		// may be starting the new one: renew waits for it).
		return &UnknownSessionError{Err: he, Elsewhere: true}
	}
	if method != mcp.MethodPing {
		_, perr := s.Call(context.WithValue(ctx, renewingKey{}, true), mcp.MethodPing, nil, asProbe())
		var pe *transport.HTTPError
		if !errors.As(perr, &pe) || pe.Status != http.StatusBadRequest || pe.SessionID != he.SessionID {
			if s.sessionLeft(he.SessionID) {
				// Found gone and forgotten elsewhere while the ping
				// went (which then went without it, or in the new
				// session).
				return &UnknownSessionError{Err: he, Elsewhere: true}
			}
			return nil
		}
	}
	sf.ForgetSession(he.SessionID)
	return &UnknownSessionError{Err: he}
}

// sessionLeft reports whether the connection no longer has the session
// id: it forgot it (see transport.SessionForgetter) or a renewal replaced
// it. A connection that does not say which session it has reports false.
func (s *Session) sessionLeft(id string) bool {
	c, ok := transport.Find[interface{ SessionID() string }](s.conn)
	return ok && c.SessionID() != id
}

// renew re-runs the lifecycle's Open after the session expired, unless a
// concurrent call already did since generation gen.
func (s *Session) renew(ctx context.Context, gen int64, method string, cause error) error {
	defer s.holdSends()()
	select {
	case s.renewSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w; waiting for the new session under way: %w", cause, ctx.Err())
	}
	defer func() { <-s.renewSem }()
	if s.gen.Load() != gen {
		return nil
	}
	// The server's request ids of the old session may come again.
	s.peer.NewSession()
	if err := s.life.Open(context.WithValue(ctx, renewingKey{}, true), s); err != nil {
		return fmt.Errorf("%w; starting a new session failed: %w", cause, err)
	}
	s.gen.Add(1)
	s.tools.invalidate()
	s.prompts.invalidate()
	s.resources.invalidate()
	subs := s.resubscribe(context.WithValue(ctx, renewingKey{}, true))
	note := fmt.Sprintf("%v; re-initialized a new session%s and sent %s again", cause, subs, method)
	if method == mcp.NotificationInitialized || method == "" {
		note = fmt.Sprintf("%v; re-initialized a new session%s", cause, subs)
	}
	if s.opts.OnRenew != nil {
		s.opts.OnRenew(note)
	} else {
		s.note("%s", note)
	}
	return nil
}

// holdSends makes send wait, until release is called, before it writes
// anything but the requests of a renewal (renewingKey): a new session is
// being started, and a request sent in it before its initialize would
// reach a server that has not been told who the client is (spec
// 2025-11-25: basic/lifecycle, "Initialization": the client should send
// nothing but pings before the server answered initialize). Holds nest;
// release is idempotent.
func (s *Session) holdSends() (release func()) {
	s.holdMu.Lock()
	if s.holds == 0 {
		s.held = make(chan struct{})
	}
	s.holds++
	s.holdMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.holdMu.Lock()
			defer s.holdMu.Unlock()
			if s.holds--; s.holds == 0 {
				close(s.held)
				s.held = nil
			}
		})
	}
}

// awaitRenewal waits, bounded by ctx, while sends are held (holdSends).
func (s *Session) awaitRenewal(ctx context.Context) error {
	s.holdMu.Lock()
	held := s.held
	s.holdMu.Unlock()
	if held == nil {
		return nil
	}
	select {
	case <-held:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.peer.Done():
		return s.peer.Err()
	}
}

// CallOption adjusts one Call.
type CallOption func(*callConfig)

type callConfig struct {
	onProgress func(Progress)
	// taskProgress keeps onProgress past the response, for the task the
	// request creates (WithTaskProgress).
	taskProgress bool
	timeout      time.Duration
	maxTimeout   time.Duration
	raw          bool
	subject      string // what the request is about, named in errors (withSubject)
	label        string // names the request in errors in place of method and subject
	// probe marks a request whose failure is expected and handled (an era
	// probe): it is never cancelled with notifications/cancelled, and a late
	// answer to it is ignored silently.
	probe bool
	// onID learns the request's id before it is sent.
	onID func(jsonrpc.ID)
	// capabilityWarned marks a request whose caller warns about an
	// undeclared server capability itself (see warnUndeclared).
	capabilityWarned bool
}

// capabilityWarned marks a request whose caller has warned about an
// undeclared capability already.
func capabilityWarned() CallOption { return func(c *callConfig) { c.capabilityWarned = true } }

// WithProgress asks the server for progress (a progressToken in the
// request's _meta, spec: basic/utilities/progress) and delivers each update
// to fn on the read loop. Progress also resets the request's timeout.
func WithProgress(fn func(Progress)) CallOption {
	return func(c *callConfig) { c.onProgress = fn }
}

// WithTaskProgress asks for progress as WithProgress does, for a
// task-augmented request: the token stays valid for the task's lifetime,
// past the response (the CreateTaskResult), until the caller calls
// EndTaskProgress with the request's id (OnRequestID tells it; spec
// 2025-11-25: basic/utilities/tasks, "Task Progress Notifications").
// Progress resets the request's timeout while it is pending, as
// WithProgress's does; after the response the task's polling has its own.
// CallAsTask uses it; so does a session that passes another client's
// task-augmented requests on (sessiond), and follows the task for it.
func WithTaskProgress(fn func(Progress)) CallOption {
	return func(c *callConfig) { c.onProgress, c.taskProgress = fn, true }
}

// EndTaskProgress ends the progress of the task created by request id
// (WithTaskProgress): what comes later is late. Ending it again, or that
// of a request without it, does nothing.
func (s *Session) EndTaskProgress(id jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.taskProgress[id.Key()]; !ok {
		return
	}
	delete(s.taskProgress, id.Key())
	delete(s.lastProgress, id.Key())
	s.finishedLocked(id)
}

// finishedLocked remembers that the progress of request id ended.
func (s *Session) finishedLocked(id jsonrpc.ID) {
	if len(s.finished) >= maxFinished {
		s.finished = s.finished[1:]
	}
	s.finished = append(s.finished, id.LooseKey())
}

// WithTimeout overrides the session's timeouts for one call.
func WithTimeout(idle, max time.Duration) CallOption {
	return func(c *callConfig) { c.timeout, c.maxTimeout = idle, max }
}

// withSubject names what the request is about in its errors (the tool
// in `tools/call "echo"`) after the bare method.
func withSubject(subject string) CallOption { return func(c *callConfig) { c.subject = subject } }

// withLabel names the request in its errors instead of its method (a
// list's later page: "tools/list page 3 (cursor "c2")").
func withLabel(label string) CallOption { return func(c *callConfig) { c.label = label } }

// labeler names a request in errors: its label if it has one, else its
// method, and its subject quoted. It is formatted only when an error is
// (%s), not for every request.
type labeler struct{ method, subject, label string }

func (l labeler) String() string {
	if l.label != "" {
		return l.label
	}
	m := l.method
	if m == "" {
		// `mcpx call ""` sends what it was given; its errors still
		// name the method.
		m = `method ""`
	}
	if l.subject == "" {
		return m
	}
	return m + " " + strconv.Quote(l.subject)
}

// Raw sends params exactly as given: the lifecycle does not decorate them
// and does not post-process the result (no multi-round retries). It is for
// callers that control every byte.
func Raw() CallOption { return func(c *callConfig) { c.raw = true } }

// OnRequestID tells fn the request's id before the request is sent. A
// caller that relays requests for others (package sessiond) recognises by
// it what the server sends about the request later, such as the
// notifications of a 2026-07-28 subscription, which carry its id.
func OnRequestID(fn func(jsonrpc.ID)) CallOption { return func(c *callConfig) { c.onID = fn } }

// asProbe marks a probing request (see callConfig.probe).
func asProbe() CallOption { return func(c *callConfig) { c.probe = true } }

// Request is one request as its caller made it, before the lifecycle
// decorated it: what a Finisher needs to send it again.
type Request struct {
	Method string
	// Params are the caller's params (a JSON object, or nil).
	Params json.RawMessage
	cfg    callConfig
}

// Label names the request in errors (`tools/call "echo"`).
func (r *Request) Label() string {
	return labeler{r.Method, r.cfg.subject, r.cfg.label}.String()
}

// Resend sends r once more as a new request (a new id, the same options)
// with params in place of its own, and returns the raw outcome without
// the lifecycle's Finish: the Finisher that resends owns the loop.
func (s *Session) Resend(ctx context.Context, r *Request, params json.RawMessage) (json.RawMessage, error) {
	return s.callOnce(ctx, r.Method, params, r.cfg)
}

// ServerCancelledError reports a request of ours that the server ended with
// notifications/cancelled, which 2026-07-28 servers do to close a
// subscriptions/listen stream (spec 2026-07-28: basic/patterns/cancellation).
type ServerCancelledError struct {
	Reason string
}

func (e *ServerCancelledError) Error() string {
	if e.Reason != "" {
		return "the server cancelled the request: " + e.Reason
	}
	return "the server cancelled the request"
}

// TimeoutError reports a request that got no answer in time (see
// peer.TimeoutError).
type TimeoutError = peer.TimeoutError

// ErrTimeout is matched by every *TimeoutError.
var ErrTimeout = peer.ErrTimeout

// Call sends a request and waits for its response, returning the raw result
// exactly as received. A JSON-RPC error comes back as an error wrapping
// *jsonrpc.Error. When ctx ends or the timeout expires the server is told with
// notifications/cancelled (spec: basic/utilities/cancellation).
//
// A lifecycle that implements Finisher sees every result and error before
// the caller does (2026-07-28: multi-round requests, task results, retries
// with another version).
func (s *Session) Call(ctx context.Context, method string, params any, opts ...CallOption) (json.RawMessage, error) {
	cfg := callConfig{timeout: s.opts.Timeout, maxTimeout: s.opts.MaxTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := compactJSON(params)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding params: %w", method, err)
	}
	if !cfg.probe && !cfg.capabilityWarned {
		s.warnUndeclared(method)
	}
	res, err := s.callOnce(ctx, method, p, cfg)
	if f, ok := s.life.(Finisher); ok && !cfg.raw {
		res, err = f.Finish(ctx, s, &Request{Method: method, Params: p, cfg: cfg}, res, err)
	}
	if err != nil && !cfg.probe {
		s.warnDeclaredButUnknown(ctx, method, err)
	}
	return res, err
}

// callOnce sends one request and waits for its response.
func (s *Session) callOnce(ctx context.Context, method string, p json.RawMessage, cfg callConfig) (json.RawMessage, error) {
	label := labeler{method, cfg.subject, cfg.label}
	if err := s.listenBefore(ctx, method); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	var err error
	if !cfg.raw {
		if p, err = s.life.Decorate(method, p); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		if p, err = s.opts.TraceContext.apply(p); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	var route *transport.Route
	if r, ok := s.life.(Router); ok {
		if route, err = r.Route(ctx, s, method, p); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	id := s.peer.NextID()
	if method == mcp.MethodSubscriptionsListen {
		// Known before it is sent: its acknowledgement may come first.
		s.listening(id)
		defer s.listenEnded(id)
	}
	if cfg.onID != nil {
		cfg.onID(id)
	}
	if cfg.onProgress != nil {
		if p, err = setMeta(p, mcp.MetaProgressToken, id.Raw()); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		s.mu.Lock()
		if cfg.taskProgress {
			s.taskProgress[id.Key()] = cfg.onProgress
		} else {
			s.progress[id.Key()] = cfg.onProgress
		}
		s.mu.Unlock()
		if !cfg.taskProgress {
			defer func() {
				s.mu.Lock()
				delete(s.progress, id.Key())
				delete(s.lastProgress, id.Key())
				s.finishedLocked(id)
				s.mu.Unlock()
			}()
		}
	}
	req := peer.Request{ID: id, Method: method, Params: p, Route: route, Timeout: cfg.timeout, MaxTimeout: cfg.maxTimeout,
		Send:  func(ctx context.Context, f transport.Frame) error { return s.send(ctx, method, f) },
		Quiet: cfg.probe}
	if !cfg.probe && method != mcp.MethodInitialize {
		// initialize is never cancelled (spec: basic/utilities/cancellation),
		// and neither is a probe.
		req.Abandon = s.abandon
	}
	m, err := s.peer.Call(ctx, req)
	if err != nil {
		if errors.Is(err, jsonrpc.ErrTooDeep) || errors.Is(err, jsonrpc.ErrNotJSON) {
			// The answer came, but not as a message mcpx can read (nested
			// too deep, not alone on its line): the server's departure.
			err = violation(err)
		}
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: %w", label, m.Error)
	}
	if m.Result == nil {
		// A response has one or the other (JSON-RPC 2.0, section 5);
		// one with neither was warned about as it came, and answers
		// nothing a caller could show.
		return nil, fmt.Errorf("%s: %w", label, violationf("the server's answer has neither a result nor an error"))
	}
	if method == mcp.MethodResourcesSubscribe || method == mcp.MethodResourcesUnsubscribe {
		s.keepSubscription(method, p)
	}
	return m.Result, nil
}

// keepSubscription records the subscription that a resources/subscribe or
// resources/unsubscribe with params p, answered, made or ended.
func (s *Session) keepSubscription(method string, p json.RawMessage) {
	var params struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(p, &params) != nil || params.URI == "" {
		return
	}
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if method == mcp.MethodResourcesUnsubscribe {
		delete(s.subscribed, params.URI)
		return
	}
	if s.subscribed == nil {
		s.subscribed = map[string]bool{}
	}
	s.subscribed[params.URI] = true
}

// resubscribe subscribes the new session to the resources the old one was
// subscribed to (the server's subscriptions are its session's: spec
// 2025-11-25: server/resources, "Subscriptions"), and says how that went,
// for the renewal's note: "" when there were none.
func (s *Session) resubscribe(ctx context.Context) string {
	s.subMu.Lock()
	uris := slices.Sorted(maps.Keys(s.subscribed))
	s.subMu.Unlock()
	if len(uris) == 0 {
		return ""
	}
	var failed []string
	for _, uri := range uris {
		if err := s.Subscribe(ctx, uri); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", uri, err))
		}
	}
	if len(failed) > 0 {
		return fmt.Sprintf("; subscribing to %d resources again failed for %s", len(uris), strings.Join(failed, ", "))
	}
	if len(uris) == 1 {
		return "; subscribed to " + uris[0] + " again"
	}
	return fmt.Sprintf("; subscribed to its %d resources again", len(uris))
}

// abandon tells the server that mcpx stopped waiting for request id. In
// the 2026-07-28 era a transport with per-request streams (Streamable
// HTTP) cancels by closing the request's stream instead of sending
// notifications/cancelled (spec 2026-07-28: basic/transports,
// "Cancellation"); earlier, the notification goes first, and then the
// transport lets go of the stream (transport.RequestForgetter).
func (s *Session) abandon(id jsonrpc.ID, reason string) {
	if s.stateless() {
		if rc, ok := transport.Find[transport.RequestCanceller](s.conn); ok && rc.CancelRequest(id.LooseKey()) {
			return
		}
	}
	params, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_ = s.conn.Write(ctx, transport.Frame{Data: jsonrpc.EncodeNotification(mcp.NotificationCancelled, params)})
	// Nobody waits for the response any more: the transport need not
	// follow (or resume) the stream that would carry it.
	if f, ok := transport.Find[transport.RequestForgetter](s.conn); ok {
		f.ForgetRequest(id.LooseKey())
	}
}

// speaksModern reports whether the session is known to speak the
// 2026-07-28 era: its lifecycle is stateless and, for Auto, the probe has
// chosen that era (while it probes, the server may be a handshake-era one,
// which may ping before initialize).
func (s *Session) speaksModern() bool {
	if a, ok := s.life.(*Auto); ok {
		l, probing := a.current()
		_, modern := l.(*Modern)
		return modern && !probing
	}
	return s.stateless()
}

// stateless reports whether the lifecycle sends requests in the
// per-request style of 2026-07-28 (see Stateless).
// logAsker is a lifecycle that knows whether log messages were asked for
// per request (the 2026-07-28 era's).
type logAsker interface{ logsUnasked() bool }

// subscriptionOwner is a lifecycle that knows whether the connection's
// subscriptions are all this client's (the 2026-07-28 era's).
type subscriptionOwner interface{ ownsSubscriptions() bool }

func (s *Session) stateless() bool {
	st, ok := s.life.(Stateless)
	return ok && st.Stateless()
}

// Notify sends a notification.
func (s *Session) Notify(ctx context.Context, method string, params any, opts ...CallOption) error {
	cfg := callConfig{}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := compactJSON(params)
	if err != nil {
		return fmt.Errorf("%s: encoding params: %w", method, err)
	}
	if !cfg.raw {
		if p, err = s.life.Decorate(method, p); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
	}
	var route *transport.Route
	if r, ok := s.life.(Router); ok {
		if route, err = r.Route(ctx, s, method, p); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
	}
	send := func(ctx context.Context, f transport.Frame) error { return s.send(ctx, method, f) }
	// A notification's Write returns once the transport has the server's
	// answer (over Streamable HTTP, a 202 or an error status and its body:
	// spec 2025-11-25: basic/transports, "Sending Messages to the Server"),
	// so it is bounded by the request timeout like a request's Write: a
	// server that never finished that answer held the session for good.
	wctx := ctx
	if t := s.opts.Timeout; t > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	if err := s.peer.Notify(wctx, peer.Notification{Method: method, Params: p, Route: route, Send: send}); err != nil {
		if ctx.Err() == nil && wctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s: the server had not taken the notification after %s: %w", method, s.opts.Timeout, ErrTimeout)
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// checkBatch warns about a batch from a server whose protocol version
// does not allow batches (only 2025-03-26 does); it is processed anyway.
func (s *Session) checkBatch() {
	if v := s.protocolVersion(); v != "" && v != mcp.BatchVersion {
		s.departEach(context.Background(), "batches", "server sent a JSON-RPC batch, which protocol version %s does not allow (processing it anyway)", v)
	}
}

func (s *Session) protocolVersion() string {
	if info := s.life.Server(); info != nil {
		return info.ProtocolVersion
	}
	return ""
}

func (s *Session) handleNotification(m *jsonrpc.Message) {
	// past: the notification's departure was past the first EachShown of
	// its sort (see Options.OnNotificationUnsaid).
	past := false
	switch m.Method {
	case mcp.NotificationToolsListChanged:
		s.tools.invalidate()
	case mcp.NotificationPromptsListChanged:
		s.prompts.invalidate()
	case mcp.NotificationResourcesListChanged:
		s.resources.invalidate()
	case mcp.NotificationProgress:
		if problem := progressProblem(m.Params); problem != "" {
			// Not taken as progress: shown as the notification it is,
			// after the warning.
			past = s.departEach(context.Background(), "progress notifications that break their rules", "progress notification %s (spec basic/utilities/progress)", problem)
			break
		}
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    *float64        `json:"total"`
			Message  string          `json:"message"`
		}
		if err := json.Unmarshal(m.Params, &p); err == nil && len(p.Token) > 0 {
			// Our tokens repeat the request's id; a token whose JSON type
			// changed is still ours.
			token := jsonrpc.RawID(p.Token)
			prog := Progress{Progress: p.Progress, Total: p.Total, Message: p.Message}
			s.mu.Lock()
			key := token.Key()
			onProg := s.progress[key]
			if onProg == nil {
				key = retypedKey(token)
				onProg = s.progress[key]
			}
			task := false
			if onProg == nil {
				for _, k := range []string{token.Key(), retypedKey(token)} {
					if fn := s.taskProgress[k]; fn != nil {
						onProg, key, task = fn, k, true
						break
					}
				}
			}
			last, reported := s.lastProgress[key]
			ended := slices.Contains(s.finished, token.LooseKey())
			s.mu.Unlock()
			// The read loop takes a response off the pending requests
			// before it reads on, so a request that is no longer pending
			// was answered before this notification came, even while its
			// caller has not yet returned. A task's token needs no
			// pending request: it lives as long as the task; while its
			// request is pending (a server that does not support tasks
			// answers it as a plain call), progress resets its timeout.
			if onProg != nil && (s.peer.Extend(token) || task) {
				// (Tied to the request while it is pending; a task's
				// progress, which outlives it, to none after.)
				reqCtx := s.peer.RequestContext(token)
				if reported && p.Progress <= last {
					s.departEach(reqCtx, "progress notifications that do not increase", "progress for request %s went from %g to %g: it must increase with each notification (spec basic/utilities/progress)", token, last, p.Progress)
				}
				if p.Total != nil && p.Progress > *p.Total {
					s.departEach(reqCtx, "progress notifications beyond their total", "progress for request %s is %g, beyond its total %g", token, p.Progress, *p.Total)
				}
				s.mu.Lock()
				if s.progress[key] != nil || s.taskProgress[key] != nil {
					s.lastProgress[key] = p.Progress
				}
				s.mu.Unlock()
				onProg(prog)
				return
			}
			if onProg != nil || ended {
				if s.opts.OnLateProgress != nil {
					s.opts.OnLateProgress(token, prog)
				}
				return
			}
			// Shown as the notification it is, after the warning.
			past = s.departEach(context.Background(), "progress notifications for tokens no request carries", "progress for token %s, which no request of mcpx's carries: a progress notification must name the token of a request in progress (spec basic/utilities/progress, \"Behavior Requirements\")", token)
		}
	case mcp.NotificationMessage:
		if p := logMessageProblem(m.Params); p != "" {
			s.departEach(context.Background(), logDepartures, "log message %s (spec server/utilities/logging)", p)
		}
		if la, ok := s.life.(logAsker); ok && la.logsUnasked() {
			s.departOnce(context.Background(), "unasked logging", "the server sent a log message, though no request of mcpx's asked for one: \"The server MUST NOT emit notifications/message for a request that does not include\" io.modelcontextprotocol/logLevel (spec 2026-07-28: server/utilities/logging; --log-level asks for them)")
		}
		if info := s.Server(); info != nil && !info.Declares("logging") {
			s.departOnce(context.Background(), "undeclared logging", "the server sends log messages without declaring the logging capability (\"Servers that emit log message notifications MUST declare the logging capability\", spec server/utilities/logging)")
		}
	case mcp.NotificationCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
			s.peer.Cancel(jsonrpc.RawID(p.RequestID))
			// 2026-07-28 servers send no requests; their cancellations end
			// a request of ours (a subscriptions/listen stream).
			if s.stateless() {
				s.peer.End(jsonrpc.RawID(p.RequestID), &ServerCancelledError{Reason: p.Reason})
			}
		}
	}
	if m.Method == mcp.NotificationSubscriptionsAcknowledged && s.subscriptionEnded(m.Params) {
		// A subscription mcpx ended before the server acknowledged it
		// (the REPL listens again with a new filter): old news.
		return
	}
	s.hookMu.Lock()
	hooks := make([]func(*jsonrpc.Message) bool, 0, len(s.hooks))
	for _, h := range s.hooks {
		hooks = append(hooks, h)
	}
	s.hookMu.Unlock()
	for _, h := range hooks {
		if h(m) {
			return
		}
	}
	s.checkSubscriptionOf(m)
	if past && s.opts.OnNotificationUnsaid != nil {
		s.opts.OnNotificationUnsaid(m)
		return
	}
	if s.opts.OnNotification != nil {
		s.opts.OnNotification(m)
	}
}

// addNotificationHook lets fn see every notification (on the read loop)
// before OnNotification; a notification fn reports true for is consumed.
// It returns the function that removes the hook.
func (s *Session) addNotificationHook(fn func(*jsonrpc.Message) bool) (remove func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	if s.hooks == nil {
		s.hooks = map[int]func(*jsonrpc.Message) bool{}
	}
	s.hookID++
	id := s.hookID
	s.hooks[id] = fn
	return func() {
		s.hookMu.Lock()
		delete(s.hooks, id)
		s.hookMu.Unlock()
	}
}

// handle answers one server-to-client request (on the engine's goroutine
// for it) with the handler for its method; ping is answered here.
// What the handler deferred with AfterAnswer runs once the answer is
// shown, before it is sent. A request the server cancelled gets no answer
// (receivers of a cancellation SHOULD NOT respond, spec:
// basic/utilities/cancellation, "Behavior Requirements"), and is not shown.
//
// In the 2026-07-28 era a server's request gets no answer at all: servers
// there send none and clients send no responses ("Servers MUST NOT
// initiate JSON-RPC requests, and clients do not send JSON-RPC
// responses", spec 2026-07-28: basic/patterns; "The client MUST NOT write
// JSON-RPC responses", basic/transports/stdio; "The client MUST NOT send
// JSON-RPC responses", basic/transports/streamable-http). What such a
// server needs from the client comes inside an InputRequiredResult.
func (s *Session) handle(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
	if s.speaksModern() {
		s.departOnce(context.Background(), "modern server request "+m.Method, "the server sent a %s request, which a 2026-07-28 server must not send (servers initiate no requests; sampling, elicitation and roots come inside an input_required result): not answered, as a client of that revision sends no responses (spec 2026-07-28: basic/patterns)", jsonrpc.Clip(m.Method))
		return nil, peer.ErrNoAnswer
	}
	hctx, after := withAfterAnswer(ctx)
	defer after.run()
	var result json.RawMessage
	var rpcErr *jsonrpc.Error
	h := s.opts.Handlers[m.Method]
	switch {
	case h != nil:
		v, err := h(hctx, m)
		if err != nil {
			if !errors.As(err, &rpcErr) {
				rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
		} else if result, err = compactJSON(v); err != nil {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpx could not encode its answer: " + err.Error()}
		}
	case m.Method == mcp.MethodPing:
		// spec: basic/utilities/ping — answer promptly with an empty result.
		result = json.RawMessage("{}")
	default:
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + jsonrpc.Clip(m.Method)}
	}
	if cause := context.Cause(ctx); errors.Is(cause, peer.ErrCancelled) || errors.Is(cause, peer.ErrEnded) {
		return nil, cause
	}
	if s.opts.OnServerRequest != nil {
		s.opts.OnServerRequest(m, result, rpcErr)
	}
	if rpcErr != nil {
		return nil, rpcErr
	}
	return result, nil
}

// checkRequest judges a server's request when it arrives: its time
// (checkRequestTime) and its capability (checkDeclared).
func (s *Session) checkRequest(m *jsonrpc.Message) {
	s.checkRequestTime(m)
	s.checkDeclared(m)
	s.checkIncludeContext(context.Background(), m.Method, m.Params)
}

// checkIncludeContext warns, once, about a sampling request (a server's
// request, or a 2026-07-28 input request, tied to the request of ours
// whose context ctx is) whose includeContext is "thisServer" or
// "allServers" when mcpx did not declare sampling.context: those values
// are deprecated, and servers "SHOULD NOT use them unless the client
// declares sampling.context capability" (spec 2025-11-25 and 2026-07-28:
// client/sampling; 2026-07-28: deprecated, SEP-2596). mcpx answers as it
// always does, with no context included, which the values only ask for.
// A session of an earlier revision is not warned about: there the values
// were not deprecated, and there was no sampling.context to declare.
func (s *Session) checkIncludeContext(ctx context.Context, method string, params json.RawMessage) {
	if method != mcp.MethodSamplingCreateMessage {
		return
	}
	// (Revision names are ISO dates: they compare as strings.)
	if v := s.protocolVersion(); v != "" && v < includeContextDeprecated {
		return
	}
	v, ok := rawjson.String(rawjson.Member(params, "includeContext"))
	if !ok || (v != "thisServer" && v != "allServers") {
		return
	}
	caps, known := s.declaredCapabilities()
	if !known || rawjson.Member(rawjson.Member(caps, "sampling"), "context") != nil {
		return
	}
	s.departOnce(ctx, "includeContext", "the server's sampling/createMessage asks for includeContext %q, a deprecated value that servers should not use unless the client declares sampling.context, which mcpx does not (spec client/sampling, \"Capabilities\"); answered with no context included", v)
}

// includeContextDeprecated is the revision that deprecated includeContext
// "thisServer" and "allServers" and added sampling.context (spec
// 2025-11-25: client/sampling; schema, ClientCapabilities.sampling).
const includeContextDeprecated = "2025-11-25"

// clientRequestCapabilities names the client capability each request a
// server may send belongs to (spec 2025-11-25: client/roots,
// client/sampling and client/elicitation, "Capabilities": a client that
// supports the feature MUST declare it).
var clientRequestCapabilities = map[string]string{
	mcp.MethodRootsList:             "roots",
	mcp.MethodSamplingCreateMessage: "sampling",
	mcp.MethodElicitationCreate:     "elicitation",
}

// checkDeclared warns, once per method, about a request of the server's
// for a client capability mcpx did not declare in initialize: both
// parties only use capabilities that were successfully negotiated (spec
// 2025-11-25: basic/lifecycle, "Operation"). It is answered as before,
// with an error where mcpx has no handler for it; the warning says the
// server should not have asked.
func (s *Session) checkDeclared(m *jsonrpc.Message) {
	name, ok := clientRequestCapabilities[m.Method]
	if !ok {
		return
	}
	caps := s.offeredCapabilities()
	if caps == nil {
		return
	}
	if v := rawjson.Member(caps, name); v != nil && !rawjson.IsNull(v) {
		return
	}
	s.departOnce(context.Background(), "undeclared "+m.Method, "the server sent %s, though mcpx did not declare the %s capability in initialize (spec basic/lifecycle, \"Operation\": both parties only use capabilities that were successfully negotiated)", m.Method, name)
}

// checkRequestTime warns, once per method, about a server request other
// than ping that comes before the handshake era's initialized
// notification (spec 2025-11-25: basic/lifecycle, "Initialization"). It
// is judged when the request arrives: it is answered later, by which time
// the session may be initialized.
func (s *Session) checkRequestTime(m *jsonrpc.Message) {
	if m.Method != mcp.MethodPing && s.handshakePending() {
		s.departOnce(context.Background(), "early "+m.Method, "the server sent %s before the session was initialized (spec basic/lifecycle: a server SHOULD NOT send requests other than pings and logging before the initialized notification); answering it all the same", jsonrpc.Clip(m.Method))
	}
}

// retypedKey is the key the id our request had when a server echoes it
// back as a string: our ids are numbers ("" for an id that is no string).
func retypedKey(id jsonrpc.ID) string {
	if !id.IsString() {
		return ""
	}
	return "n:" + id.LooseKey()
}

// setMeta returns params (a JSON object, possibly empty) with _meta[key] set.
func setMeta(params json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	if out, ok := appendMeta(params, key, value); ok {
		return out, nil
	}
	return withMeta(params, func(meta *Object) { meta.Set(key, value) })
}

// withMeta returns params (a JSON object, possibly empty) with its _meta
// (an object, made when absent) changed by edit.
func withMeta(params json.RawMessage, edit func(meta *Object)) (json.RawMessage, error) {
	obj, err := ParseObject(params)
	if err != nil {
		return nil, fmt.Errorf("params must be a JSON object: %w", err)
	}
	meta, err := ParseObject(obj.Get("_meta"))
	if err != nil {
		return nil, fmt.Errorf("params._meta must be a JSON object: %w", err)
	}
	edit(meta)
	obj.Set("_meta", meta.Marshal())
	return obj.Marshal(), nil
}

// appendMeta is setMeta for the params a request nearly always has (see
// plainObject), without _meta. It appends the new _meta member, writing
// the bytes setMeta's parse and marshal would, without copying every
// member (the arguments of a tool call among them) twice. ok is false for
// other params.
func appendMeta(params json.RawMessage, key string, value json.RawMessage) (json.RawMessage, bool) {
	if len(value) == 0 || !plainName(key) {
		return nil, false
	}
	n, ok := plainObject(params)
	if !ok || rawjson.Member(params, "_meta") != nil {
		return nil, false
	}
	out := make([]byte, 0, len(params)+len(key)+len(value)+16)
	out = append(out, params[:len(params)-1]...)
	if n > 0 {
		out = append(out, ',')
	}
	out = append(out, `"_meta":{"`...)
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, value...)
	return append(out, "}}"...), true
}

// plainObject reports whether data is a JSON object that ParseObject and
// Marshal would write back byte for byte: no white space between its
// members, and at most a few, whose names differ and need no escaping. n
// is the number of members.
func plainObject(data []byte) (n int, ok bool) {
	const maxMembers = 16
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' || !json.Valid(data) {
		return 0, false
	}
	var names [maxMembers][]byte
	size := 2
	ok = true
	rawjson.Members(data, func(name, v []byte) bool {
		if n == maxMembers || !plainName(name[1:len(name)-1]) || slices.ContainsFunc(names[:n], func(b []byte) bool { return bytes.Equal(b, name) }) {
			ok = false
			return false
		}
		names[n] = name
		n++
		size += len(name) + 1 + len(v)
		return true
	})
	if n > 1 {
		size += n - 1 // the commas
	}
	return n, ok && size == len(data) // else white space between members
}

// plainName reports whether json.Marshal writes the string s as it is
// between quotes: printable ASCII without quotes, backslashes or the
// characters it escapes for HTML.
func plainName[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// excerpt returns data as a quoted, shortened string for warnings.
func excerpt(data []byte, max int) string {
	s := string(data)
	if len(s) > max {
		return strconv.Quote(s[:max]) + fmt.Sprintf("… (%d bytes)", len(data))
	}
	return strconv.Quote(s)
}
