package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
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
	// OnServerRequest is told about each server-to-client request and the
	// answer we sent, for display.
	OnServerRequest func(req *jsonrpc.Message, result json.RawMessage, err *jsonrpc.Error)
	// OnWarning receives protocol warnings: frames that are not JSON-RPC,
	// responses nobody waits for, and other departures from the spec.
	OnWarning func(string)
	// OnNote receives what the session did on its own that the person
	// should know about (a new session after the server ended the old one).
	// Nil sends notes to OnWarning.
	OnNote func(string)
	// Timeout is the default per-request timeout, reset by progress; zero
	// means DefaultTimeout, negative means none.
	Timeout time.Duration
	// MaxTimeout caps a request's total time even while progress arrives;
	// zero means DefaultMaxTimeout, negative means none.
	MaxTimeout time.Duration
}

// Session is one MCP session over a transport connection. It owns the
// connection's read loop; Call and Notify may be used concurrently.
type Session struct {
	conn transport.Conn
	opts Options
	life Lifecycle

	nextID atomic.Int64

	mu        sync.Mutex
	pending   map[string]*pendingCall
	progress  map[string]*pendingCall // by progress token key
	retired   map[string]string       // id key -> description, for late or duplicate responses
	serverReq map[string]context.CancelFunc

	done     chan struct{} // closed when the read loop ends
	err      error         // why the read loop ended; valid after done
	closeMu  sync.Once
	closeErr error

	handlerWG sync.WaitGroup

	renewMu sync.Mutex   // serializes re-opening an expired session
	gen     atomic.Int64 // counts re-opened sessions

	hookMu sync.Mutex
	hooks  map[int]func(*jsonrpc.Message) bool // see addNotificationHook
	hookID int
}

type pendingCall struct {
	id       int64
	method   string
	resp     chan *jsonrpc.Message
	onProg   func(Progress)
	progress chan struct{}
	// ended receives why the request ended without a response: the server
	// cancelled it (2026-07-28 allows that for subscriptions/listen) or the
	// transport lost its response stream.
	ended chan error
	// gaveUp reports that the caller's context ended: a response that
	// arrives after that is late, whatever the order in which the caller
	// and the read loop happen to run.
	gaveUp func() bool
}

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
		conn:      conn,
		opts:      opts,
		life:      opts.Lifecycle,
		pending:   map[string]*pendingCall{},
		progress:  map[string]*pendingCall{},
		retired:   map[string]string{},
		serverReq: map[string]context.CancelFunc{},
		done:      make(chan struct{}),
	}
	if lr, ok := transport.Find[transport.LossReporter](conn); ok {
		lr.OnRequestLost(s.requestLost)
	}
	go s.readLoop()
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
func (s *Session) Done() <-chan struct{} { return s.done }

// Err reports why the connection ended, once Done is closed.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the session and its connection. It is idempotent.
func (s *Session) Close() error {
	s.closeMu.Do(func() {
		s.closeErr = s.conn.Close()
		<-s.done
		s.mu.Lock()
		for _, cancel := range s.serverReq {
			cancel()
		}
		s.mu.Unlock()
	})
	return s.closeErr
}

func (s *Session) warn(format string, args ...any) {
	if s.opts.OnWarning != nil {
		s.opts.OnWarning(fmt.Sprintf(format, args...))
	}
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
func (s *Session) send(ctx context.Context, method string, frame []byte, route *transport.Route) error {
	gen := s.gen.Load()
	err := s.conn.Write(ctx, transport.Frame{Data: frame, Route: route})
	if err == nil || !errors.Is(err, transport.ErrSessionExpired) || ctx.Value(renewingKey{}) != nil {
		return err
	}
	if err := s.renew(ctx, gen, method, err); err != nil {
		return err
	}
	return s.conn.Write(ctx, transport.Frame{Data: frame, Route: route})
}

// renew re-runs the lifecycle's Open after the session expired, unless a
// concurrent call already did since generation gen.
func (s *Session) renew(ctx context.Context, gen int64, method string, cause error) error {
	s.renewMu.Lock()
	defer s.renewMu.Unlock()
	if s.gen.Load() != gen {
		return nil
	}
	if err := s.life.Open(context.WithValue(ctx, renewingKey{}, true), s); err != nil {
		return fmt.Errorf("%w; starting a new session failed: %w", cause, err)
	}
	s.gen.Add(1)
	s.note("%v; re-initialized a new session and sent %s again", cause, method)
	return nil
}

// CallOption adjusts one Call.
type CallOption func(*callConfig)

type callConfig struct {
	onProgress func(Progress)
	timeout    time.Duration
	maxTimeout time.Duration
	raw        bool
	label      string
	// probe marks a request whose failure is expected and handled (an era
	// probe): it is never cancelled with notifications/cancelled, and a late
	// answer to it is ignored silently.
	probe bool
	// onID learns the request's id before it is sent.
	onID func(int64)
}

// WithProgress asks the server for progress (a progressToken in the
// request's _meta, spec: basic/utilities/progress) and delivers each update
// to fn on the read loop. Progress also resets the request's timeout.
func WithProgress(fn func(Progress)) CallOption {
	return func(c *callConfig) { c.onProgress = fn }
}

// WithTimeout overrides the session's timeouts for one call.
func WithTimeout(idle, max time.Duration) CallOption {
	return func(c *callConfig) { c.timeout, c.maxTimeout = idle, max }
}

// withLabel names the request in errors ("tools/call \"echo\"") instead
// of the bare method.
func withLabel(label string) CallOption { return func(c *callConfig) { c.label = label } }

// Raw sends params exactly as given: the lifecycle does not decorate them
// and does not post-process the result (no multi-round retries). It is for
// callers that control every byte.
func Raw() CallOption { return func(c *callConfig) { c.raw = true } }

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
	if r.cfg.label != "" {
		return r.cfg.label
	}
	return r.Method
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

// TimeoutError reports a request that got no answer in time.
type TimeoutError struct {
	Method string
	After  time.Duration
	// Max is true when the hard cap, not the idle timeout, expired.
	Max bool
	// Waiting, when set, says what the transport was still waiting for
	// before the request could even be sent (see transport.WaitError).
	Waiting string
}

// ErrTimeout is matched by every *TimeoutError.
var ErrTimeout = errors.New("timed out")

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("no response after %s", e.After)
	if e.Max {
		msg += " (the maximum total time, even with progress)"
	}
	if e.Waiting != "" {
		msg += " (" + e.Waiting + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

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
	res, err := s.callOnce(ctx, method, p, cfg)
	if f, ok := s.life.(Finisher); ok && !cfg.raw {
		return f.Finish(ctx, s, &Request{Method: method, Params: p, cfg: cfg}, res, err)
	}
	return res, err
}

// callOnce sends one request and waits for its response.
func (s *Session) callOnce(ctx context.Context, method string, p json.RawMessage, cfg callConfig) (json.RawMessage, error) {
	label := method
	if cfg.label != "" {
		label = cfg.label
	}
	var err error
	if !cfg.raw {
		if p, err = s.life.Decorate(method, p); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	var route *transport.Route
	if r, ok := s.life.(Router); ok {
		if route, err = r.Route(ctx, s, method, p); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	id := s.nextID.Add(1)
	if cfg.onID != nil {
		cfg.onID(id)
	}
	pc := &pendingCall{id: id, method: method, resp: make(chan *jsonrpc.Message, 1), onProg: cfg.onProgress, ended: make(chan error, 1),
		gaveUp: func() bool { return ctx.Err() != nil }}
	key := "n:" + strconv.FormatInt(id, 10)
	if cfg.onProgress != nil {
		pc.progress = make(chan struct{}, 1)
		if p, err = setMeta(p, "progressToken", json.RawMessage(strconv.FormatInt(id, 10))); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	s.mu.Lock()
	s.pending[key] = pc
	if pc.progress != nil {
		s.progress[key] = pc
	}
	s.mu.Unlock()
	defer s.forget(key)

	// The timeout counts from here: over HTTP, Write can take as long as the
	// server takes to answer (a JSON response comes with its headers).
	start := time.Now()
	wctx, wcancel := ctx, context.CancelFunc(func() {})
	if d, _ := firstDeadline(cfg); d > 0 {
		wctx, wcancel = context.WithTimeout(ctx, d)
	}
	err = s.send(wctx, method, jsonrpc.EncodeRequest(jsonrpc.Int(id), method, p), route)
	wcancel()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			s.abandon(key, method, "cancelled by the user", cfg.probe)
			return nil, fmt.Errorf("%s: %w", label, ctx.Err())
		case wctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
			s.abandon(key, method, "timeout", cfg.probe)
			d, max := firstDeadline(cfg)
			te := &TimeoutError{Method: method, After: d, Max: max}
			var we *transport.WaitError
			if errors.As(err, &we) {
				te.Waiting = we.For
			}
			return nil, fmt.Errorf("%s: %w", label, te)
		}
		return nil, fmt.Errorf("%s: %w", label, s.sendError(err))
	}

	var idle, hard <-chan time.Time
	var idleTimer *time.Timer
	if cfg.timeout > 0 {
		idleTimer = time.NewTimer(cfg.timeout - time.Since(start))
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	if cfg.maxTimeout > 0 {
		t := time.NewTimer(cfg.maxTimeout - time.Since(start))
		defer t.Stop()
		hard = t.C
	}
	finish := func(m *jsonrpc.Message) (json.RawMessage, error) {
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %w", label, m.Error)
		}
		return m.Result, nil
	}
	for {
		var giveUp error
		select {
		case m := <-pc.resp:
			return finish(m)
		case <-pc.progress:
			if idleTimer != nil {
				idleTimer.Reset(cfg.timeout)
			}
			continue
		case <-idle:
			giveUp = &TimeoutError{Method: method, After: cfg.timeout}
		case <-hard:
			giveUp = &TimeoutError{Method: method, After: cfg.maxTimeout, Max: true}
		case <-ctx.Done():
			giveUp = ctx.Err()
		case why := <-pc.ended:
			// The request is over without a response; there is nothing to
			// cancel.
			s.forgetEnded(key, method)
			select {
			case m := <-pc.resp:
				return finish(m)
			default:
			}
			return nil, fmt.Errorf("%s: %w", label, why)
		case <-s.done:
			// A response may have been delivered just before the end.
			select {
			case m := <-pc.resp:
				return finish(m)
			default:
			}
			return nil, fmt.Errorf("%s: %w", label, s.err)
		}
		reason := "timeout"
		if ctx.Err() != nil {
			reason = "cancelled by the user"
		}
		if !s.abandon(key, method, reason, cfg.probe) {
			// The response won the race; it is already on its way.
			return finish(<-pc.resp)
		}
		return nil, fmt.Errorf("%s: %w", label, giveUp)
	}
}

// firstDeadline returns the earlier of a call's idle timeout and its hard
// cap (0 when neither is set), and whether it is the cap.
func firstDeadline(cfg callConfig) (time.Duration, bool) {
	switch {
	case cfg.timeout > 0 && (cfg.maxTimeout <= 0 || cfg.timeout <= cfg.maxTimeout):
		return cfg.timeout, false
	case cfg.maxTimeout > 0:
		return cfg.maxTimeout, true
	}
	return 0, false
}

// sendError explains a failed write, preferring the reason the connection
// ended when it has.
func (s *Session) sendError(err error) error {
	select {
	case <-s.done:
		return s.err
	case <-time.After(50 * time.Millisecond):
		// A write usually fails because the peer just went away; give the
		// read loop a moment to learn why.
		select {
		case <-s.done:
			return s.err
		default:
		}
	}
	return err
}

// retire remembers a finished request id so that a response arriving later
// is reported for what it is. Called with s.mu held.
func (s *Session) retire(key, why string) {
	if len(s.retired) > 1000 {
		clear(s.retired)
	}
	s.retired[key] = why
}

func (s *Session) forget(key string) {
	s.mu.Lock()
	delete(s.pending, key)
	delete(s.progress, key)
	s.mu.Unlock()
}

// abandon stops waiting for a request and tells the server so. initialize
// is never cancelled (spec: basic/utilities/cancellation), and neither is
// a probe. In the 2026-07-28 era a transport with per-request streams
// (Streamable HTTP) cancels by closing the request's stream instead of
// sending notifications/cancelled (spec 2026-07-28: basic/transports,
// "Cancellation").
// It reports false when the response had already arrived (it is then in the
// call's resp channel), in which case nothing is cancelled.
func (s *Session) abandon(key, method, reason string, probe bool) bool {
	s.mu.Lock()
	if _, ok := s.pending[key]; !ok {
		s.mu.Unlock()
		return false
	}
	delete(s.pending, key)
	delete(s.progress, key)
	if probe {
		s.retire(key, "")
	} else {
		s.retire(key, fmt.Sprintf("late response to %s request %s, which mcpx had already given up on", method, key[2:]))
	}
	s.mu.Unlock()
	if method == mcp.MethodInitialize || probe {
		return true
	}
	if s.stateless() {
		if rc, ok := transport.Find[transport.RequestCanceller](s.conn); ok && rc.CancelRequest(key[2:]) {
			return true
		}
	}
	params, _ := json.Marshal(map[string]any{"requestId": json.RawMessage(key[2:]), "reason": reason})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_ = s.conn.Write(ctx, transport.Frame{Data: jsonrpc.EncodeNotification(mcp.NotificationCancelled, params)})
	return true
}

// forgetEnded drops a request that ended without a response.
func (s *Session) forgetEnded(key, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, key)
	delete(s.progress, key)
	s.retire(key, fmt.Sprintf("late response to %s request %s, which had already ended", method, key[2:]))
}

// requestLost is the transport's report that the response to one of our
// requests can no longer arrive (see transport.LossReporter).
func (s *Session) requestLost(id string, err error) {
	s.endPending("n:"+id, err)
}

// endPending ends a pending request of ours without a response.
func (s *Session) endPending(key string, err error) bool {
	s.mu.Lock()
	pc := s.pending[key]
	s.mu.Unlock()
	if pc == nil {
		return false
	}
	select {
	case pc.ended <- err:
	default:
	}
	return true
}

// stateless reports whether the lifecycle sends requests in the
// per-request style of 2026-07-28 (see Stateless).
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
	if err := s.send(ctx, method, jsonrpc.EncodeNotification(method, p), route); err != nil {
		return fmt.Errorf("%s: %w", method, s.sendError(err))
	}
	return nil
}

// readLoop is the connection's only reader.
func (s *Session) readLoop() {
	defer close(s.done)
	defer s.recoverPanic()
	for {
		f, err := s.conn.Read(context.Background())
		if err != nil {
			s.err = err
			return
		}
		s.handleFrame(f)
	}
}

// recoverPanic makes sure a bug in mcpx never leaves the server process
// behind: the connection is closed before the panic continues.
func (s *Session) recoverPanic() {
	if r := recover(); r != nil {
		s.conn.Close()
		panic(r)
	}
}

func (s *Session) handleFrame(f transport.Frame) {
	msgs, batch, err := jsonrpc.DecodeFrame(f.Data)
	if err != nil {
		s.warn("server sent a frame that is not JSON-RPC (%s; ignored): %s", err, excerpt(f.Data, 200))
		return
	}
	if batch {
		if v := s.protocolVersion(); v != "" && v != "2025-03-26" {
			s.warn("server sent a JSON-RPC batch, which protocol version %s does not allow (processing it anyway)", v)
		}
	}
	var batchReqs []*jsonrpc.Message
	for _, m := range msgs {
		for _, p := range m.Problems {
			s.warn("server message departs from JSON-RPC 2.0: %s: %s", p, excerpt(m.Raw, 200))
		}
		switch {
		case m.IsRequest():
			if batch {
				batchReqs = append(batchReqs, m)
			} else {
				s.serve(m)
			}
		case m.IsNotification():
			s.handleNotification(m)
		case m.IsResponse() && !m.ID.IsZero():
			s.handleResponse(m)
		}
	}
	if len(batchReqs) > 0 {
		s.serveBatch(batchReqs)
	}
}

func (s *Session) protocolVersion() string {
	if info := s.life.Server(); info != nil {
		return info.ProtocolVersion
	}
	return ""
}

func (s *Session) handleResponse(m *jsonrpc.Message) {
	key := m.ID.Key()
	retyped := false
	s.mu.Lock()
	pc, ok := s.pending[key]
	if !ok {
		// Some servers echo a numeric id back as a string (or the reverse).
		if pc, ok = s.pending[retypedKey(m.ID)]; ok {
			key, retyped = retypedKey(m.ID), true
		}
	}
	if ok && pc.gaveUp() {
		// The caller gave up (Ctrl-C) before this arrived; it is abandoning
		// the request (notifications/cancelled) and will not take it.
		s.mu.Unlock()
		s.warn("late response to %s request %d, which mcpx had already given up on (ignored)", pc.method, pc.id)
		return
	}
	if ok {
		delete(s.pending, key)
		delete(s.progress, key)
		s.retire(key, fmt.Sprintf("second response to %s request %d, which was already answered", pc.method, pc.id))
	}
	why, late := s.retired[key]
	if !late {
		// A late answer whose id changed JSON type is still late.
		why, late = s.retired[retypedKey(m.ID)]
	}
	s.mu.Unlock()
	switch {
	case ok:
		if retyped {
			s.warn("server answered request %d with id %s: the id's JSON type changed (accepted)", pc.id, m.ID)
		}
		pc.resp <- m
	case late:
		if why != "" {
			s.warn("%s (ignored)", why)
		}
	case m.ID.IsNull() && m.Error != nil:
		s.warn("server reported an error not tied to a request: %s", m.Error)
	default:
		s.warn("response to unknown request id %s (ignored): %s", m.ID, excerpt(m.Raw, 200))
	}
}

func (s *Session) handleNotification(m *jsonrpc.Message) {
	switch m.Method {
	case mcp.NotificationProgress:
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    *float64        `json:"total"`
			Message  string          `json:"message"`
		}
		if err := json.Unmarshal(m.Params, &p); err == nil && len(p.Token) > 0 {
			s.mu.Lock()
			pc := s.progress[jsonrpc.RawID(p.Token).Key()]
			if pc == nil {
				pc = s.progress[retypedKey(jsonrpc.RawID(p.Token))]
			}
			s.mu.Unlock()
			if pc != nil {
				select {
				case pc.progress <- struct{}{}:
				default:
				}
				pc.onProg(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
				return
			}
		}
	case mcp.NotificationCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
			s.mu.Lock()
			cancel := s.serverReq[jsonrpc.RawID(p.RequestID).Key()]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
			// 2026-07-28 servers send no requests; their cancellations end
			// a request of ours (a subscriptions/listen stream).
			if s.stateless() {
				s.endPending(jsonrpc.RawID(p.RequestID).Key(), &ServerCancelledError{Reason: p.Reason})
			}
		}
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

// serve answers one server-to-client request concurrently with the read
// loop, so a handler that waits (on a person, on a file) never blocks the
// response the server's request is part of.
func (s *Session) serve(m *jsonrpc.Message) {
	s.handlerWG.Add(1)
	go func() {
		defer s.handlerWG.Done()
		defer s.recoverPanic()
		frame := s.answer(m)
		if frame == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.conn.Write(ctx, transport.Frame{Data: frame}); err != nil && !errors.Is(err, transport.ErrClosed) {
			s.warn("could not answer the server's %s request: %v", m.Method, err)
		}
	}()
}

// serveBatch answers the requests of one batch with one batch response.
func (s *Session) serveBatch(reqs []*jsonrpc.Message) {
	s.handlerWG.Add(1)
	go func() {
		defer s.handlerWG.Done()
		defer s.recoverPanic()
		out := make([]json.RawMessage, len(reqs))
		var wg sync.WaitGroup
		for i, m := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = s.answer(m)
			}()
		}
		wg.Wait()
		out = slices.DeleteFunc(out, func(r json.RawMessage) bool { return r == nil })
		if len(out) == 0 {
			return
		}
		frame, _ := json.Marshal(out)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.conn.Write(ctx, transport.Frame{Data: frame}); err != nil && !errors.Is(err, transport.ErrClosed) {
			s.warn("could not answer the server's batch: %v", err)
		}
	}()
}

// errCancelledByServer is the cause of a handler's context ending because
// the server sent notifications/cancelled for its request.
var errCancelledByServer = errors.New("cancelled by the server")

// answer runs the handler for m and returns the encoded response, or nil
// when the server cancelled the request: receivers of a cancellation SHOULD
// NOT respond (spec: basic/utilities/cancellation, "Behavior Requirements").
// What the handler deferred with AfterAnswer runs once the answer is shown,
// before it is sent.
func (s *Session) answer(m *jsonrpc.Message) []byte {
	if !m.ID.Valid() {
		// JSON-RPC 2.0: a request whose id is neither a string nor a number
		// is an invalid request, answered with a null id.
		rpcErr := &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: the id must be a string or an integer, not " + m.ID.String()}
		if s.opts.OnServerRequest != nil {
			s.opts.OnServerRequest(m, nil, rpcErr)
		}
		return jsonrpc.EncodeResponse(jsonrpc.ID{}, nil, rpcErr)
	}
	key := m.ID.Key()
	hctx, after := withAfterAnswer(context.Background())
	defer after.run()
	ctx, cancel := context.WithCancelCause(hctx)
	defer cancel(nil)
	s.mu.Lock()
	s.serverReq[key] = func() { cancel(errCancelledByServer) }
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.serverReq, key)
		s.mu.Unlock()
	}()

	var result json.RawMessage
	var rpcErr *jsonrpc.Error
	h := s.opts.Handlers[m.Method]
	switch {
	case h != nil:
		v, err := h(ctx, m)
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
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + m.Method}
	}
	if errors.Is(context.Cause(ctx), errCancelledByServer) {
		return nil
	}
	if s.opts.OnServerRequest != nil {
		s.opts.OnServerRequest(m, result, rpcErr)
	}
	return jsonrpc.EncodeResponse(m.ID, result, rpcErr)
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
	obj, err := ParseObject(params)
	if err != nil {
		return nil, fmt.Errorf("params must be a JSON object: %w", err)
	}
	meta, err := ParseObject(obj.Get("_meta"))
	if err != nil {
		return nil, fmt.Errorf("params._meta must be a JSON object: %w", err)
	}
	meta.Set(key, value)
	obj.Set("_meta", meta.Marshal())
	return obj.Marshal(), nil
}

// excerpt returns data as a quoted, shortened string for warnings.
func excerpt(data []byte, max int) string {
	s := string(data)
	if len(s) > max {
		return strconv.Quote(s[:max]) + fmt.Sprintf("… (%d bytes)", len(data))
	}
	return strconv.Quote(s)
}
