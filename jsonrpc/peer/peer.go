// Package peer is the JSON-RPC connection engine: one end of a
// transport.Conn that sends requests and waits for their responses, and
// answers the requests the other end sends. It owns the connection's only
// read loop, allocates request ids, matches responses to pending requests
// (and reports the late, duplicate, unknown and retyped ones), applies
// request timeouts (an idle timeout that progress resets, and a hard
// cap), delivers notifications in arrival order, and runs a handler per
// incoming request with a context that Cancel ends; a batch from the peer
// is answered with one batch.
//
// The engine is method-neutral: it knows JSON-RPC, not MCP. What MCP adds
// comes through hooks its session provides: which notification cancels a
// request (the session calls Cancel, End or Extend), how an abandoned
// request is withdrawn (Request.Abandon), how a request is written when
// sending may first need a new MCP session (Request.Send). The MCP
// session (package inspector) and the trace library's verify and replay
// (package record) are built on it.
package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// Handler answers one request from the peer, in a goroutine of its own (so
// that a handler waiting on a person never blocks the read loop). It
// returns the result (nil is {}) or an error: a *jsonrpc.Error is sent as
// is, ErrNoAnswer sends nothing, any other is an internal error. ctx ends
// when the peer cancels the request (Cancel; context.Cause is then
// ErrCancelled, and no answer is sent) or the Peer closes or stops
// (ErrEnded, no answer either).
type Handler func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error)

// ErrCancelled is the cause of a handler's context when Cancel ended it:
// the peer withdrew its request. Receivers of a cancellation should not
// answer (MCP spec: basic/utilities/cancellation), so none is sent.
var ErrCancelled = errors.New("the peer cancelled its request")

// ErrNoAnswer, returned (or wrapped) by a Handler, sends no answer to the
// request: for protocols in which the peer must not send requests and
// this end must not send responses (MCP 2026-07-28: "Servers MUST NOT
// initiate JSON-RPC requests, and clients do not send JSON-RPC
// responses", basic/patterns).
var ErrNoAnswer = errors.New("the request gets no answer")

// ErrEnded is the cause of a handler's context when Close or Stop ended
// it: the connection ends on this side, and the peer did not withdraw
// anything (a person asked for the request is not told it was withdrawn).
var ErrEnded = errors.New("the connection to the peer ended")

// Options configure a Peer. Every hook is optional.
type Options struct {
	// Handler answers the peer's requests; nil answers each with
	// "method not found".
	Handler Handler
	// OnRefused is told about each request the engine refused without a
	// handler, with the error it answered: one whose id is neither a
	// string nor an integer (JSON-RPC 2.0: an invalid request, answered
	// with a null id), one whose id is that of a request still being
	// answered (answered with the id: ids must not be reused), one whose
	// method is not a string (jsonrpc.Message.InvalidRequest; req.Method
	// is ""), and one the connection dropped for its size (see
	// transport.DropReporter), of which req holds only the id and method.
	OnRefused func(req *jsonrpc.Message, err *jsonrpc.Error)
	// OnNotification receives every notification, on the read loop, in
	// arrival order: it must not block for long.
	OnNotification func(*jsonrpc.Message)
	// OnRequest is told about each request of the peer on the read loop,
	// in arrival order, before it is served (the Handler runs later, in
	// a goroutine of its own): what depends on when a request came (a
	// protocol's ordering rules) is judged here. It must not block.
	OnRequest func(*jsonrpc.Message)
	// OnBatch is told, on the read loop, that a batch arrived, before its
	// messages are handled (a protocol on top may not allow batches).
	OnBatch func()
	// OnWarning receives what the engine reads past that is not the
	// peer's fault (a late response to a request mcpx gave up on or
	// cancelled, an answer it could not send), and, when OnDeparture is
	// nil, the peer's departures too.
	OnWarning func(string)
	// OnDeparture receives the peer's departures from JSON-RPC 2.0 that
	// the engine reads past: a frame that is not JSON-RPC, a message that
	// departs from the format, a second response, a response to an id no
	// request had or with a retyped id. Kept apart from OnWarning so that
	// a program can tell a peer that broke the protocol from its own
	// troubles (mcpx --strict). ctx is the context of the Call the
	// departure is tied to (its response departs from the format, came
	// with a retyped id, came twice: the request may have ended), so that
	// a program running calls at once can tell whose it is;
	// context.Background() when it is tied to none. Nil sends them to
	// OnWarning.
	OnDeparture func(ctx context.Context, msg string)
	// OnEachDeparture, when set, receives in place of OnDeparture the
	// departures a peer can repeat with every message it sends, kind
	// naming their sort in a fixed plural phrase ("responses to unknown
	// request ids"), so that the receiver can bound how many it says: a
	// server that sends 20,000 of them would otherwise print 20,000 lines.
	OnEachDeparture func(ctx context.Context, kind, msg string)
	// OnEachWarning is OnEachDeparture for warnings (see OnWarning): what
	// a peer can repeat with every message that is not its departure (an
	// error response not tied to a request).
	OnEachWarning func(kind, msg string)
	// CodeName names the error codes of the protocol on top of JSON-RPC
	// (MCP's: mcp.CodeName): the responses' errors the engine delivers and
	// reports carry the name (jsonrpc.Error.Name). Nil names none.
	CodeName func(code int) string
	// Intercept, when set, is offered each frame on the read loop before
	// the engine decodes it; a frame it reports true for is its own (the
	// engine does nothing with it). It is for owners whose traffic is not
	// one answer per request, such as a replayed recording, which answers
	// each frame with what the recorded server did next.
	Intercept func(f transport.Frame) bool
}

// Peer is one end of a JSON-RPC connection. Its methods are safe for
// concurrent use.
type Peer struct {
	conn transport.Conn
	opts Options

	nextID atomic.Int64
	// arrived counts the peer's requests in the order the read loop
	// took them (see Arrival).
	arrived atomic.Uint64

	mu      sync.Mutex
	pending map[string]*Pending   // by id key
	retired map[string]retirement // id key -> what a later response to it is, for the warning
	serving map[string]*handling  // the peer's requests being answered, by id key
	// seen remembers the ids of the peer's latest requests, to tell of
	// one that reuses an id (see begin).
	seen seenIDs
	// unserved: the read loop has ended, and so have the handlers (see
	// endHandlers); one that starts after is ended at once.
	unserved bool

	readCtx  context.Context // the read loop's; Stop cancels it
	stopRead context.CancelFunc
	startMu  sync.Mutex
	started  bool
	closed   bool
	done     chan struct{} // closed when the read loop ends
	err      error         // why it ended; valid once done is closed
	closeMu  sync.Once
	closeErr error
	// unstarted ends a Peer closed or stopped before Start.
	unstarted sync.Once

	handlers sync.WaitGroup
	// slots holds a token for each request of the peer being answered:
	// when all maxServing are taken the read loop waits for one, so that a
	// peer that sends requests faster than it reads the answers is slowed
	// down instead of filling memory with handlers (each blocked writing
	// its answer to a peer that does not read).
	slots chan struct{}
	// closing is closed by Close, to free a read loop waiting for a slot.
	closing chan struct{}
	// holds stops the idle timeouts while a person answers (Hold).
	holds holdState
}

// maxServing bounds the requests of the peer answered at once; maxInBatch
// the answers of one batch worked on at once.
const (
	maxServing = 256
	maxInBatch = 16
)

// New returns a Peer on conn, which it owns from then on (Close closes
// it). Nothing is read until Start, so that the owner can finish setting
// up what its hooks use.
func New(conn transport.Conn, opts Options) *Peer {
	readCtx, stopRead := context.WithCancel(context.Background())
	p := &Peer{
		readCtx:  readCtx,
		stopRead: stopRead,
		conn:     conn,
		opts:     opts,
		pending:  map[string]*Pending{},
		retired:  map[string]retirement{},
		serving:  map[string]*handling{},
		seen:     seenIDs{seed: maphash.MakeSeed(), set: map[uint64]struct{}{}},
		done:     make(chan struct{}),
		slots:    make(chan struct{}, maxServing),
		closing:  make(chan struct{}),
	}
	if lr, ok := transport.Find[transport.LossReporter](conn); ok {
		lr.OnRequestLost(p.requestLost)
	}
	if dr, ok := transport.Find[transport.DropReporter](conn); ok {
		dr.OnRequestDropped(p.requestDropped)
	}
	return p
}

// Start starts the read loop (once; not after Close).
func (p *Peer) Start() {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	if p.started || p.closed {
		return
	}
	p.started = true
	go p.readLoop()
}

// Conn returns the connection the Peer reads.
func (p *Peer) Conn() transport.Conn { return p.conn }

// Done is closed when the connection has ended.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Err reports why the connection ended, once Done is closed.
func (p *Peer) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Close closes the connection, waits for the read loop to end, which
// cancels the handlers still running (it does not wait for them: one may
// be waiting on a person). Every Call waiting for a response returns. It
// is idempotent.
func (p *Peer) Close() error {
	p.closeMu.Do(func() {
		p.startMu.Lock()
		p.closed = true
		started := p.started
		p.startMu.Unlock()
		p.closeErr = p.conn.Close()
		close(p.closing)
		if !started {
			p.endUnstarted(transport.ErrClosed)
		}
		<-p.done
	})
	return p.closeErr
}

// endUnstarted ends a Peer whose read loop never ran, with err.
func (p *Peer) endUnstarted(err error) {
	p.unstarted.Do(func() {
		p.err = err
		close(p.done)
	})
}

// Stop ends the read loop without closing the connection, for an owner
// that goes on using it (or closes it itself): it waits for the read loop
// to end, then cancels the handlers still running and waits for them.
// Err then reports context.Canceled. Calls still waiting return.
func (p *Peer) Stop() {
	p.startMu.Lock()
	p.closed = true
	started := p.started
	p.startMu.Unlock()
	p.stopRead()
	if !started {
		p.endUnstarted(context.Canceled)
	}
	<-p.done
	p.handlers.Wait()
}

// endHandlers ends the handlers still running (ErrEnded), and those that
// start later, when the read loop ends: on Close or Stop, and when the
// connection ends on the peer's side (a server that exited): no answer
// can reach the peer then, and a handler asking a person for one would
// ask on for nothing.
func (p *Peer) endHandlers() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unserved = true
	for _, h := range p.serving {
		if h.cancel != nil { // (one not started yet starts ended)
			h.cancel(ErrEnded)
		}
	}
}

func (p *Peer) warn(format string, args ...any) {
	if p.opts.OnWarning != nil {
		p.opts.OnWarning(fmt.Sprintf(format, args...))
	}
}

// depart reports a departure of the peer's from JSON-RPC 2.0, tied to
// the Call whose context ctx is (context.Background(): to none; see
// Options.OnDeparture).
func (p *Peer) depart(ctx context.Context, format string, args ...any) {
	if p.opts.OnDeparture == nil {
		p.warn(format, args...)
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	p.opts.OnDeparture(ctx, fmt.Sprintf(format, args...))
}

// warnEach is warn for a warning the peer can repeat with every message,
// of the sort kind (see Options.OnEachWarning).
func (p *Peer) warnEach(kind, format string, args ...any) {
	if p.opts.OnEachWarning == nil {
		p.warn(format, args...)
		return
	}
	p.opts.OnEachWarning(kind, fmt.Sprintf(format, args...))
}

// departEach is depart for a departure the peer can repeat with every
// message, of the sort kind (see Options.OnEachDeparture).
func (p *Peer) departEach(ctx context.Context, kind, format string, args ...any) {
	if p.opts.OnEachDeparture == nil {
		p.depart(ctx, format, args...)
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	p.opts.OnEachDeparture(ctx, kind, fmt.Sprintf(format, args...))
}

// RequestContext returns the context of the Call that awaits the response
// to id (matched loosely), context.Background() when none does: what the
// peer sends about a request of ours (MCP's progress, whose token repeats
// the id) is tied to that request's caller.
func (p *Peer) RequestContext(id jsonrpc.ID) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc := p.lookupLoose(id); pc != nil && pc.ctx != nil {
		return pc.ctx
	}
	return context.Background()
}

// NextID allocates a request id (1, 2, ...), for a caller that needs it
// before it builds the request (an MCP progress token repeats it).
func (p *Peer) NextID() jsonrpc.ID { return jsonrpc.Int(p.nextID.Add(1)) }

// Write sends a frame as it is.
func (p *Peer) Write(ctx context.Context, f transport.Frame) error { return p.conn.Write(ctx, f) }

// Pending is a request of ours that awaits its response.
type Pending struct {
	// ctx is the caller's context, for what the peer's departures tied to
	// the request are reported with (see Options.OnDeparture).
	ctx    context.Context
	id     jsonrpc.ID
	key    string
	method string
	resp   chan *jsonrpc.Message
	// extend resets the request's idle timeout (Peer.Extend).
	extend chan struct{}
	// ended receives why the request ended without a response (Peer.End,
	// or the transport lost its response stream).
	ended chan error
	// gaveUp reports that the caller gave up: a response that arrives
	// after that is late, whatever the order in which the caller and the
	// read loop happen to run.
	gaveUp func() bool
}

// ID returns the request's id.
func (pc *Pending) ID() jsonrpc.ID { return pc.id }

// Response delivers the response once it arrived (at most once).
func (pc *Pending) Response() <-chan *jsonrpc.Message { return pc.resp }

// Expect registers a request with id (sent, or about to be sent, by the
// caller with Write) whose response is to be delivered on the returned
// Pending; gaveUp (nil: never) tells the read loop that the caller no
// longer takes it. ctx is the caller's, which the peer's departures tied
// to the request are reported with (see Options.OnDeparture). The caller
// calls Forget once it is done with it.
func (p *Peer) Expect(ctx context.Context, id jsonrpc.ID, method string, gaveUp func() bool) *Pending {
	if gaveUp == nil {
		gaveUp = func() bool { return false }
	}
	pc := &Pending{ctx: ctx, id: id, key: id.Key(), method: method, resp: make(chan *jsonrpc.Message, 1),
		extend: make(chan struct{}, 1), ended: make(chan error, 1), gaveUp: gaveUp}
	p.mu.Lock()
	p.pending[pc.key] = pc
	p.mu.Unlock()
	return pc
}

// Forget stops waiting for pc's response: one that arrives later is
// reported as unknown.
func (p *Peer) Forget(pc *Pending) {
	p.mu.Lock()
	if p.pending[pc.key] == pc {
		delete(p.pending, pc.key)
	}
	p.mu.Unlock()
}

// Extend resets the idle timeout of the pending request id (the MCP
// session calls it for each progress notification). It matches id
// loosely (see jsonrpc.ID.LooseKey), and reports whether such a request
// is pending.
func (p *Peer) Extend(id jsonrpc.ID) bool {
	p.mu.Lock()
	pc := p.lookupLoose(id)
	p.mu.Unlock()
	if pc == nil {
		return false
	}
	select {
	case pc.extend <- struct{}{}:
	default:
	}
	return true
}

// End ends the pending request id without a response: its Call returns
// err (the MCP session does this for a 2026-07-28 server's cancellation
// of a subscriptions/listen request). It matches id loosely and reports
// whether such a request was pending.
func (p *Peer) End(id jsonrpc.ID, err error) bool {
	p.mu.Lock()
	pc := p.lookupLoose(id)
	p.mu.Unlock()
	if pc == nil {
		return false
	}
	select {
	case pc.ended <- err:
	default:
	}
	return true
}

// requestLost is the transport's report that the response to one of our
// requests can no longer arrive (see transport.LossReporter); id is a
// loose key.
func (p *Peer) requestLost(id string, err error) {
	p.End(jsonrpc.RawID([]byte(strconv.Quote(id))), err)
}

// lookupLoose finds the pending request id names, exactly or with its
// JSON type changed. Called with p.mu held.
func (p *Peer) lookupLoose(id jsonrpc.ID) *Pending {
	if pc := p.pending[id.Key()]; pc != nil {
		return pc
	}
	loose := id.LooseKey()
	for _, pc := range p.pending {
		if pc.id.LooseKey() == loose {
			return pc
		}
	}
	return nil
}

// retire remembers a finished request so that a response arriving later
// is reported for what it is. Called with p.mu held.
func (p *Peer) retire(key string, why retirement) {
	if len(p.retired) > 1000 {
		clear(p.retired)
	}
	p.retired[key] = why
}

// retirement says what a response to a finished request would be, for
// the warning: format (with the request's method and id) is written out
// only when such a response comes, not for every request that ends. An
// empty format ignores the response silently.
type retirement struct {
	format string
	method string
	id     jsonrpc.ID
	// departure marks a response to the request as the peer's departure
	// from JSON-RPC (a second response), not a late one.
	departure bool
	// ctx is the request's caller's, for a departure (see
	// Options.OnDeparture); nil when departure is not set.
	ctx context.Context
}

func (r retirement) String() string {
	if r.format == "" {
		return ""
	}
	return fmt.Sprintf(r.format, r.method, r.id)
}

type arrivalKey struct{}

// WithArrival returns ctx for a handler of the peer's n-th request (see
// Arrival): the Peer sets it on the contexts of the handlers it runs; a
// caller that runs handlers itself (requests that came another way) can
// set it too.
func WithArrival(ctx context.Context, n uint64) context.Context {
	return context.WithValue(ctx, arrivalKey{}, n)
}

// Arrival returns the place of the request whose handler ctx is in the
// order the peer sent its requests (1 for the first), 0 for a context
// that is no handler's. Handlers run concurrently and reach what they
// share in any order; this is the order to serve them in (a person asked
// the questions of several requests in turn).
func Arrival(ctx context.Context) uint64 {
	n, _ := ctx.Value(arrivalKey{}).(uint64)
	return n
}

// NewSession forgets the ids of the peer's earlier requests: a requestor
// must not reuse an id within a session (spec 2025-11-25: basic,
// "Requests"), and a new session on the same connection (one after the
// server ended the last) may use them again.
func (p *Peer) NewSession() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen.forget()
}

// maxSeenIDs bounds the ids of the peer's requests a Peer remembers.
const maxSeenIDs = 1024

// seenIDs remembers the ids of the peer's latest maxSeenIDs requests, by
// a 64-bit hash of their key: whatever the length of the ids a peer
// sends, memory stays bounded (8 bytes an id, twice), and two ids of a
// session that share a hash, which would read as a reuse, are as good as
// impossible. Used under Peer.mu.
type seenIDs struct {
	seed   maphash.Seed
	set    map[uint64]struct{}
	ring   [maxSeenIDs]uint64
	next   int  // the ring's slot to fill next
	full   bool // every slot of the ring holds an id
	warned bool // a reuse was told of (once a session)
}

// add remembers key and reports whether it was remembered already.
func (s *seenIDs) add(key string) bool {
	h := maphash.String(s.seed, key)
	if _, ok := s.set[h]; ok {
		return true
	}
	if s.full {
		delete(s.set, s.ring[s.next])
	}
	s.ring[s.next] = h
	s.set[h] = struct{}{}
	s.next++
	if s.next == maxSeenIDs {
		s.next, s.full = 0, true
	}
	return false
}

func (s *seenIDs) forget() {
	clear(s.set)
	s.next, s.full, s.warned = 0, false, false
}

// Cancel ends the handler of the peer's request id, whose answer is then
// not sent (the MCP session calls it for notifications/cancelled).
func (p *Peer) Cancel(id jsonrpc.ID) {
	p.mu.Lock()
	h := p.serving[id.Key()]
	if h != nil && h.cancel == nil {
		// Not started yet (a batch's request waiting its turn): it
		// starts cancelled.
		if h.ended == nil {
			h.ended = ErrCancelled
		}
		h = nil
	}
	p.mu.Unlock()
	if h != nil {
		h.cancel(ErrCancelled)
	}
}
