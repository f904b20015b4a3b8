package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// answerTimeout bounds writing the answer to a request of the peer.
const answerTimeout = 5 * time.Second

// readLoop is the connection's only reader.
func (p *Peer) readLoop() {
	defer close(p.done)
	defer p.endHandlers()
	defer p.recoverPanic()
	for {
		f, err := p.conn.Read(p.readCtx)
		if err != nil {
			p.err = err
			return
		}
		if p.opts.Intercept != nil && p.opts.Intercept(f) {
			continue
		}
		p.handleFrame(f)
	}
}

// recoverPanic makes sure a bug never leaves a server process behind: the
// connection is closed before the panic continues.
func (p *Peer) recoverPanic() {
	if r := recover(); r != nil {
		p.conn.Close()
		panic(r)
	}
}

func (p *Peer) handleFrame(f transport.Frame) {
	msgs, batch, err := jsonrpc.DecodeFrame(f.Data)
	if err != nil {
		p.departEach(context.Background(), "frames that are not JSON-RPC", "server sent a frame that is not JSON-RPC (%s; ignored): %s", err, excerpt(f.Data, 200))
		if errors.Is(err, jsonrpc.ErrTooDeep) {
			p.unreadable(f.Data, err)
		}
		if errors.Is(err, jsonrpc.ErrNotJSON) {
			// Messages that share their line with another, or with
			// other text: what they answer fails now, and what they
			// ask is refused, rather than waited for until the timeout.
			for _, v := range jsonrpc.LeadingObjects(f.Data, maxLeading) {
				p.unreadable(v, errNotAlone)
			}
		}
		return
	}
	if batch && p.opts.OnBatch != nil {
		p.opts.OnBatch()
	}
	var batchReqs []*jsonrpc.Message
	for _, m := range msgs {
		ctx := context.Background()
		if len(m.Problems) > 0 && m.Kind() == jsonrpc.KindResponse && !m.ID.IsZero() {
			ctx = p.RequestContext(m.ID) // a bad answer is its request's
		}
		for _, pr := range m.Problems {
			p.departEach(ctx, "messages that depart from JSON-RPC 2.0", "server message departs from JSON-RPC 2.0: %s: %s", pr, excerpt(m.Raw, 200))
		}
		switch m.Kind() {
		case jsonrpc.KindRequest:
			if p.opts.OnRequest != nil {
				p.opts.OnRequest(m)
			}
			if batch {
				batchReqs = append(batchReqs, m)
			} else {
				p.serve(m)
			}
		case jsonrpc.KindNotification:
			if p.opts.OnNotification != nil {
				p.opts.OnNotification(m)
			}
		case jsonrpc.KindResponse:
			if !m.ID.IsZero() {
				p.handleResponse(m)
			}
		case jsonrpc.KindInvalid:
			if m.InvalidRequest() {
				p.invalidRequest(m)
			}
		}
	}
	if len(batchReqs) > 0 {
		p.serveBatch(batchReqs)
	}
}

func (p *Peer) handleResponse(m *jsonrpc.Message) {
	if m.Error != nil && m.Error.Name == "" && p.opts.CodeName != nil {
		m.Error.Name = p.opts.CodeName(m.Error.Code)
	}
	key := m.ID.Key()
	p.mu.Lock()
	pc, ok := p.pending[key]
	retyped, refloated := false, false
	if !ok {
		// Some servers echo a numeric id back as a string (or the
		// reverse): the same id, loosely.
		if pc = p.lookupLoose(m.ID); pc != nil {
			ok, retyped, key = true, true, pc.key
		}
	}
	if !ok {
		// Others write every number as a float: 3.0 for 3.
		if n, isInt := m.ID.IntegerValue(); isInt {
			if pc = p.pending[n.Key()]; pc != nil {
				ok, refloated, key = true, true, pc.key
			}
		}
	}
	if ok && pc.gaveUp() {
		// The caller gave up (Ctrl-C) before this arrived; it is
		// abandoning the request and will not take it. (It stays
		// pending until then: the peer may send it again and again.)
		p.mu.Unlock()
		p.warnEach(lateAnswers, "late response to %s request %s, which mcpx had already given up on (ignored)", pc.method, pc.id)
		return
	}
	if ok {
		delete(p.pending, key)
		p.retire(key, retirement{format: "second response to %s request %s, which was already answered", method: pc.method, id: pc.id, departure: true, ctx: pc.ctx})
	}
	why, late := p.retired[key]
	if !ok && !late {
		// A late answer whose id changed JSON type is still late.
		for k, w := range p.retired {
			if looseOfKey(k) == looseOfKey(key) {
				why, late = w, true
				break
			}
		}
	}
	p.mu.Unlock()
	switch {
	case ok:
		if retyped {
			p.depart(pc.ctx, "server answered request %s with id %s: the id's JSON type changed (accepted)", pc.id.Excerpt(), m.ID.Excerpt())
		}
		if refloated {
			p.depart(pc.ctx, "server answered request %s with id %s: the same number, but written with a fraction or an exponent (accepted; the response's id must be the request's)", pc.id.Excerpt(), m.ID.Excerpt())
		}
		pc.resp <- m
	case late:
		if text := why.String(); text != "" && why.departure {
			p.departEach(why.ctx, "answers to requests that had ended", "%s (ignored)", text)
		} else if text != "" {
			// (Late, not wrong; but a peer can repeat it with every
			// message, as the request stays retired.)
			p.warnEach(lateAnswers, "%s (ignored)", text)
		}
	case m.ID.IsNull() && m.Error != nil:
		p.warnEach("errors not tied to a request", "server reported an error not tied to a request: %s", m.Error)
	default:
		p.departEach(context.Background(), "responses to unknown request ids", "response to unknown request id %s (ignored): %s", m.ID.Excerpt(), excerpt(m.Raw, 200))
	}
}

// lateAnswers is the sort (Options.OnEachWarning) of the responses that
// come after their request ended or was given up on: a warning each, not
// a departure, but one the peer can repeat with every message.
const lateAnswers = "late answers to requests that had ended"

// looseOfKey is the LooseKey of the id whose Key is key: what follows the
// type's prefix.
func looseOfKey(key string) string {
	if len(key) < 2 {
		return ""
	}
	return key[2:]
}

// serve answers one request of the peer concurrently with the read loop,
// so a handler that waits (on a person, on a file) never blocks the
// response the peer's request is part of.
func (p *Peer) serve(m *jsonrpc.Message) {
	if !p.acquire() {
		return
	}
	arrival := p.arrived.Add(1) // (on the read loop: in the order sent)
	// (Begun on the read loop too: of two requests with one id, the first
	// sent is the one answered.)
	h := p.begin(m, arrival)
	p.handlers.Add(1)
	go func() {
		defer p.handlers.Done()
		defer p.release()
		defer p.recoverPanic()
		frame := p.answerBegun(m, h)
		if frame == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		if err := p.conn.Write(ctx, transport.Frame{Data: frame}); err != nil && !errors.Is(err, transport.ErrClosed) {
			p.warn("could not answer the server's %s request: %v", m.Method, err)
		}
	}()
}

// requestDropped answers a request of the peer's that the connection
// read past, longer than its maximum message size (see
// transport.DropReporter), with an internal error saying so: the peer
// would otherwise wait for an answer that never comes. Internal error
// (-32603: "the receiver encounters an unexpected condition that
// prevents it from fulfilling the request", spec 2025-11-25 schema,
// InternalError), not invalid request (-32600): whether the request was
// valid is not known, as it was not read; what stopped it is the
// receiver's own limit. Called on the read loop; the answer is written
// from a goroutine of its own, as serve's are.
func (p *Peer) requestDropped(id jsonrpc.ID, method string, err error) {
	p.refuse(&jsonrpc.Message{ID: id, Method: method}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
}

// invalidRequest answers a message that is an invalid Request object with
// an id (jsonrpc.Message.InvalidRequest: its method is neither a string
// nor null) with -32600 Invalid Request and that id, as JSON-RPC 2.0
// section 5.1 asks: the peer would otherwise wait for ever. A request of
// a batch is answered on its own, not in the batch's response.
func (p *Peer) invalidRequest(m *jsonrpc.Message) {
	p.refuse(m, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: the method must be a string"})
}

// refuse answers the request m, which no handler sees, with rpcErr.
// Called on the read loop; the answer is written from a goroutine of its
// own, as serve's are.
func (p *Peer) refuse(m *jsonrpc.Message, rpcErr *jsonrpc.Error) {
	id, method := m.ID, m.Method
	if p.opts.OnRefused != nil {
		p.opts.OnRefused(m, rpcErr)
	}
	if !p.acquire() {
		return
	}
	p.handlers.Add(1)
	go func() {
		defer p.handlers.Done()
		defer p.release()
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		if err := p.conn.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(id, nil, rpcErr)}); err != nil && !errors.Is(err, transport.ErrClosed) {
			p.warn("could not answer the server's %s request: %v", method, err)
		}
	}()
}

// maxLeading bounds the messages the engine looks for at the start of a
// line that is not JSON (jsonrpc.LeadingObjects): a line may hold
// millions of "{}".
const maxLeading = 64

// errNotAlone is why a message found at the start of a line that is not
// JSON is not read.
var errNotAlone error = notAloneError{}

// notAloneError is errNotAlone: it matches jsonrpc.ErrNotJSON, which the
// line it came on is, so that a caller tells the server's departure by
// that.
type notAloneError struct{}

func (notAloneError) Error() string {
	return `not alone on its line: the server wrote more after it before the newline, and a message is one line of JSON (spec basic/transports, "stdio": messages are delimited by newlines)`
}

func (notAloneError) Is(target error) bool { return target == jsonrpc.ErrNotJSON }

// unreadable answers a request the engine could not read (a frame
// nested too deep, or not alone on its line), found by its top-level id and method, with an error
// saying so, as a request too large is (requestDropped): the peer would
// otherwise wait for ever; a response ends the request it answers with
// that error at once, rather than at its timeout.
func (p *Peer) unreadable(data []byte, why error) {
	raw, method := jsonrpc.TopLevel(data)
	if raw == nil {
		return
	}
	id := jsonrpc.RawID(raw)
	if !id.Valid() {
		return
	}
	err := fmt.Errorf("the message is %w", why)
	if method != "" {
		p.requestDropped(id, method, err)
		return
	}
	p.End(id, err)
}

// serveBatch answers the requests of one batch with one batch response.
func (p *Peer) serveBatch(reqs []*jsonrpc.Message) {
	if !p.acquire() {
		return
	}
	first := p.arrived.Add(uint64(len(reqs))) - uint64(len(reqs)) + 1
	// Begun here, on the read loop, in the batch's order, as serve's
	// are: of two requests with one id, in the batch or in a batch and
	// a message after it, the first sent keeps the id and the other is
	// refused, whichever of their handlers happens to run first.
	begun := make([]*handling, len(reqs))
	for i, m := range reqs {
		begun[i] = p.begin(m, first+uint64(i))
	}
	p.handlers.Add(1)
	go func() {
		defer p.handlers.Done()
		defer p.release()
		defer p.recoverPanic()
		out := make([][]byte, len(reqs))
		var wg sync.WaitGroup
		// A batch may hold millions of requests: a few are answered at
		// once.
		batchSlots := make(chan struct{}, maxInBatch)
		for i, m := range reqs {
			batchSlots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-batchSlots }()
				out[i] = p.answerBegun(m, begun[i])
			}()
		}
		wg.Wait()
		var answers [][]byte
		for _, a := range out {
			if a != nil {
				answers = append(answers, a)
			}
		}
		if len(answers) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		if err := p.conn.Write(ctx, transport.Frame{Data: jsonrpc.EncodeBatch(answers)}); err != nil && !errors.Is(err, transport.ErrClosed) {
			p.warn("could not answer the server's batch: %v", err)
		}
	}()
}

// acquire takes a slot for answering a request of the peer, waiting (on
// the read loop) while all are taken; it reports false when the Peer is
// closing or stopping instead.
func (p *Peer) acquire() bool {
	select {
	case p.slots <- struct{}{}:
		return true
	case <-p.closing:
	case <-p.readCtx.Done():
	}
	return false
}

func (p *Peer) release() { <-p.slots }

// handling is a request of the peer's being answered: Cancel ends its
// handler. It holds the request's id from the read loop on (begin), but
// its context is made only when its handler starts (start): a batch may
// hold millions of requests, answered a few at a time, and each waiting
// one costs a few words. Under Peer.mu, cancel is nil until the start,
// and ended holds why the request ended before it (Cancel).
type handling struct {
	arrival uint64
	ctx     context.Context
	cancel  context.CancelCauseFunc
	ended   error
}

// begin registers the handler of m, the arrival-th request of the peer,
// under m's id and returns it; nil when m's id is not valid, or when it
// is the id of a request of the peer's still being answered: a requestor
// must not reuse an id in a session (spec 2025-11-25: basic, "Requests"),
// and two handlers under one id could not be told apart (the peer's
// notifications/cancelled would end one of them, or none once the other
// was answered). One that reuses the id of an earlier request, among the
// latest maxSeenIDs of this session, is served, and warned about once.
func (p *Peer) begin(m *jsonrpc.Message, arrival uint64) *handling {
	if !m.ID.Valid() {
		return nil
	}
	key := m.ID.Key()
	p.mu.Lock()
	if p.serving[key] != nil {
		p.mu.Unlock()
		return nil
	}
	reused := p.seen.add(key) && !p.seen.warned
	if reused {
		p.seen.warned = true
	}
	h := &handling{arrival: arrival}
	p.serving[key] = h
	p.mu.Unlock()
	if reused {
		// Served all the same: the peer waits for this one's answer.
		p.depart(context.Background(), "server request %s (%s) reuses the id of an earlier request of the server's: \"The request ID MUST NOT have been previously used by the requestor within the same session\" (spec 2025-11-25: basic, \"Requests\"; answered all the same; told once a session)", m.ID.Excerpt(), jsonrpc.Clip(m.Method))
	}
	return h
}

// start makes the context of h's handler, ended already when the peer
// cancelled the request since begin, or the read loop ended.
func (p *Peer) start(h *handling) {
	ctx, cancel := context.WithCancelCause(context.WithValue(WithArrival(context.Background(), h.arrival), holderKey{}, p))
	p.mu.Lock()
	defer p.mu.Unlock()
	h.ctx, h.cancel = ctx, cancel
	switch {
	case h.ended != nil:
		cancel(h.ended)
	case p.unserved:
		cancel(ErrEnded)
	}
}

// answerBegun runs the handler begun for m (h, nil if begin refused it)
// and returns the encoded response, or nil when the peer cancelled the
// request or the handler chose not to answer (ErrNoAnswer).
func (p *Peer) answerBegun(m *jsonrpc.Message, h *handling) []byte {
	if h == nil {
		// JSON-RPC 2.0: a request whose id is neither a string nor a number
		// is an invalid request, answered with a null id. One whose id is
		// in use is answered with that id: the peer is waiting on it.
		rpcErr := &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: the id must be a string or an integer, not " + m.ID.Excerpt()}
		id := jsonrpc.ID{}
		if m.ID.Valid() {
			rpcErr.Message = "invalid request: id " + m.ID.Excerpt() + " is that of a request mcpx is still answering (a request id must not be reused)"
			id = m.ID
			// The server's mistake, which --strict counts (an id of
			// another type is one of the message's Problems already).
			p.depart(context.Background(), "server request %s (%s) has the id of a request of the server's that mcpx is still answering (spec 2025-11-25: basic, \"Requests\": the id must not have been used before in the session); refused", m.ID.Excerpt(), jsonrpc.Clip(m.Method))
		}
		if p.opts.OnRefused != nil {
			p.opts.OnRefused(m, rpcErr)
		}
		return jsonrpc.EncodeResponse(id, nil, rpcErr)
	}
	p.start(h)
	ctx, cancel := h.ctx, h.cancel
	defer cancel(nil)
	defer func() {
		key := m.ID.Key()
		p.mu.Lock()
		if p.serving[key] == h {
			delete(p.serving, key)
		}
		p.mu.Unlock()
	}()

	var result json.RawMessage
	var rpcErr *jsonrpc.Error
	if p.opts.Handler == nil {
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + jsonrpc.Clip(m.Method)}
	} else if res, err := p.opts.Handler(ctx, m); err != nil {
		if errors.Is(err, ErrNoAnswer) {
			return nil
		}
		if !errors.As(err, &rpcErr) {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
	} else {
		result = res
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrCancelled) || errors.Is(cause, ErrEnded) {
		return nil
	}
	return jsonrpc.EncodeResponse(m.ID, result, jsonrpc.ClipMessage(rpcErr))
}

// excerpt returns data as a quoted, shortened string for warnings.
func excerpt(data []byte, max int) string {
	s := string(data)
	if len(s) > max {
		return strconv.Quote(s[:max]) + fmt.Sprintf("… (%d bytes)", len(data))
	}
	return strconv.Quote(s)
}
