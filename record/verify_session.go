package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// exchange is one recorded request: its recorded outcome, its live one,
// and the messages the server sent in its window on either side.
type exchange struct {
	n     int              // its number in the session, from 1
	pos   int              // the position of its frame in the session's events
	req   *jsonrpc.Message // as recorded
	token string           // its progress token (as canonical JSON), if any

	// The recorded side (the run loop's).
	resp       *jsonrpc.Message // the recorded response; nil while there is none
	respStatus int              // the HTTP status that carried it, when known
	recRefused *refusal         // the HTTP refusal the recording shows instead
	awaited    bool             // in sessionRun.after already
	// winAtResp is how many messages the recorded window held when the
	// response came: those after it (progress a server sent late) are
	// waited for live too (see await).
	winAtResp int
	// winAwaited is how many of the recorded window's messages the live
	// window was last awaited for (awaitWindows).
	winAwaited int

	// win holds the messages the server sent in the request's window:
	// [0] recorded (the run loop's), [1] live (guarded by sessionRun.mu;
	// its first maxHeld, the rest counted).
	win [2]heldList
	// again holds the responses to the request that came after the first
	// (a server that answered it twice), on either side, as win.
	again [2]heldList

	// The live side, guarded by sessionRun.mu.
	sent        bool
	liveID      jsonrpc.ID
	live        *jsonrpc.Message
	liveStatus  int
	liveRefused *refusal
	failed      error // why it got no outcome (not sent, the connection ended)
	timedOut    bool
	finished    bool
	// sentAt and outcomeAt time the live exchange (VerifyResult.Compared).
	sentAt, outcomeAt time.Time
	done              chan struct{} // closed once the live outcome is known
}

// outcome reports whether the live side has its outcome; called with
// sessionRun.mu held.
func (x *exchange) outcome() bool { return x.live != nil || x.liveRefused != nil || x.failed != nil }

// refusal is an HTTP error status that answered a request instead of a
// JSON-RPC response (spec: basic/transports, Streamable HTTP).
type refusal struct {
	status int
	text   string
}

// sendItem is one recorded client frame to send.
type sendItem struct {
	pos     int // its position in the session's events
	frame   []byte
	route   *transport.Route // as recorded; nil when none was
	reqs    []*exchange      // the requests in it, in order
	method  string           // the method of its first message
	cancels bool             // holds notifications/cancelled (request ids to remap)
	// refusalSeen says an HTTP status followed the frame in the recording:
	// a later one is another request's.
	refusalSeen bool
	// For a frame without requests (notifications): the HTTP refusal the
	// recording shows, and the live one.
	recRefused, liveRefused *refusal
	sendErr                 error
}

// serverReq is a request the recorded server sent, with the client's
// recorded answer.
type serverReq struct {
	key    string
	method string
	answer []byte // the recorded response message, nil while there is none
	used   bool
}

// sessionRun verifies one session of a trace on its own connection. Its
// run loop reads the recorded events in order (the recorded side) and
// sends the client's frames; the engine's read loop files the live
// server's messages (the live side).
type sessionRun struct {
	r    *verifyRun
	n    int
	info SessionInfo
	// derive says that a stateless-era message without a recorded route
	// gets one derived from its body: the trace's routes were not recorded
	// (older than Minor 1), or not on the wire (stdio). offWire says the
	// routes were not on the wire, so no Mcp-Param values were mirrored.
	derive, offWire bool
	// tr is the transport the session was recorded over ("http", "sse",
	// "stdio").
	tr string
	// recHTTP says the recording shows the client's HTTP requests, so
	// whether and when it opened the GET stream: the live one follows
	// (see openServerStream). getDue says the recorded client opened it
	// before the next frame; getOpened that the live one was opened.
	recHTTP, getDue, getOpened bool

	conn  transport.Conn
	owned bool // opened by Dial: closed at the end
	peer  *peer.Peer

	// The recorded side: the run loop's alone.
	pos     int                  // position of the event being handled
	exch    []*exchange          // exchanges not finished yet, in order
	byRecID map[string]*exchange // recorded request id -> exchange
	// recAnswered holds the exchanges whose recorded response came, by
	// the recorded request id (nil once finished): a response to the same
	// id again is the server's repetition (exchange.again).
	recAnswered map[string]*exchange
	srvByID     map[string]*serverReq
	recAttr     *attributor
	// looseAwaited is how many messages the recorded server had sent
	// outside any request when the live ones were last awaited for
	// (awaitLoose); -1 once such a wait timed out.
	looseAwaited int
	after        []*exchange // recorded outcomes read since the last frame sent
	items        []*sendItem // frames without requests, to compare once their outcome is known
	lastItem     *sendItem   // the last client frame read
	nReq         int
	liveIDs      map[string]jsonrpc.ID // recorded request id -> live id, for cancellations
	recIDs       map[string]bool       // session ids the recording saw

	mu       sync.Mutex // guards the live side
	cond     *sync.Cond // signalled when srv grows, the events end or the run loop waits
	liveAttr *attributor
	byLiveID map[string]*exchange // live request id (loose key) -> exchange
	// liveAnswered is recAnswered for the live ids (loose keys); it keeps
	// the ids of finished exchanges (nil), so that a response to one that
	// comes too late to be compared with its exchange is compared with
	// what the server sent outside any request.
	liveAnswered  map[string]*exchange
	srv           []*serverReq
	eventsDone    bool
	stalled       bool // the run loop waits for responses
	states        map[string]json.RawMessage
	unanswered    map[string]bool   // live server requests (id keys) not answered yet
	tasks         map[string]string // recorded task id -> live task id
	cursors       map[string]string // recorded pagination cursor -> live one
	notifications int
	serverReqs    int

	// The comparison's session ids and normalizers (diffOptionsFor), made
	// again when the session ids seen change. The run loop's.
	norm     *Normalizers
	ids      map[string]bool
	normRec  int
	normLive string
}

// session verifies session n, whose events are events, on conn (nil: one
// opts.Dial opens).
func (r *verifyRun) session(ctx context.Context, n int, info SessionInfo, events iter.Seq2[Event, error], conn transport.Conn) error {
	tr := info.Transport
	if tr == "" {
		tr = r.header.Transport
	}
	s := &sessionRun{r: r, n: n, info: info,
		derive:  r.header.Minor < 1 || tr != "http",
		offWire: tr != "http" && tr != "sse",
		tr:      tr,
		conn:    conn,
		byRecID: map[string]*exchange{}, srvByID: map[string]*serverReq{}, recAnswered: map[string]*exchange{}, liveAnswered: map[string]*exchange{},
		recAttr: newAttributor(0), liveAttr: newAttributor(1),
		liveIDs: map[string]jsonrpc.ID{}, recIDs: map[string]bool{},
		byLiveID: map[string]*exchange{}, states: map[string]json.RawMessage{}, unanswered: map[string]bool{},
		tasks: map[string]string{}, cursors: map[string]string{}}
	s.cond = sync.NewCond(&s.mu)
	if conn == nil && r.opts.Dial == nil {
		return s.skip(events)
	}
	err := s.run(ctx, events)
	s.close()
	return err
}

// skip reports a session there is no connection for, when it has
// something to send.
func (s *sessionRun) skip(events iter.Seq2[Event, error]) error {
	for e, err := range events {
		if err != nil {
			return err
		}
		if e.Kind == KindFrame && e.Dir == ClientToServer {
			s.r.add(0, Mismatch{Session: s.n, Problem: errNoDial.Error()})
			return nil
		}
	}
	return nil
}

// run reads the session's events and sends the client's frames.
func (s *sessionRun) run(ctx context.Context, events iter.Seq2[Event, error]) error {
	pos := 0
	for e, err := range events {
		if err != nil {
			return err
		}
		pos++
		s.pos = pos
		if e.Meta != nil && e.Meta.SessionID != "" {
			s.recIDs[e.Meta.SessionID] = true
		}
		switch e.Kind {
		case KindFrame:
			if e.Dir == ServerToClient {
				s.serverFrame(e)
				continue
			}
			it := s.clientFrame(e)
			if it == nil {
				continue
			}
			if err := s.awaitAfter(ctx); err != nil {
				return err
			}
			if err := s.awaitWindows(ctx); err != nil {
				return err
			}
			if err := s.awaitLoose(ctx); err != nil {
				return err
			}
			if err := s.openServerStream(ctx); err != nil {
				return err
			}
			if err := s.send(ctx, it); err != nil {
				return err
			}
		case KindHTTP:
			if e.Meta != nil && e.Meta.HTTPMethod != "" && e.Meta.HTTPStatus == 0 {
				// A request the client sent.
				s.recHTTP = true
				if e.Meta.HTTPMethod == http.MethodGet && s.followsGet() && !s.getOpened {
					s.getDue = true
				}
			}
			s.httpEvent(e)
		}
	}
	s.mu.Lock()
	s.eventsDone = true
	s.cond.Broadcast()
	s.mu.Unlock()
	if err := s.awaitAfter(ctx); err != nil {
		return err
	}
	// What is left: requests whose recorded outcome came last, and those
	// the recording has none for (only their windows compared).
	if err := s.awaitWindows(ctx); err != nil {
		return err
	}
	for len(s.exch) > 0 {
		x := s.exch[0]
		if x.resp != nil || x.recRefused != nil {
			if err := s.await(ctx, x); err != nil {
				return err
			}
		}
		s.finish(x)
	}
	if err := s.awaitLeftover(ctx); err != nil {
		return err
	}
	return s.awaitAnswers(ctx)
}

// awaitAnswers waits, bounded by the timeout, until the live server's
// requests that came are answered (or the server is gone), so that what
// the result counts of them (ServerRequests) does not depend on whether
// an answer was still on its way when the session ended. It returns an
// error only when ctx ends.
func (s *sessionRun) awaitAnswers(ctx context.Context) error {
	return s.awaitUntil(ctx, func() bool { return len(s.unanswered) == 0 })
}

// awaitLeftover waits, bounded by the timeout, until the live server has
// sent outside any request at least as many messages of each method as
// the recorded one did. A server sends some on its own time
// (server-everything asks for the client's roots 350 ms after the
// handshake), and the recorded client was still there to get them: the
// live session lasts until they came too, rather than ending with its
// last exchange. It returns an error only when ctx ends.
func (s *sessionRun) awaitLeftover(ctx context.Context) error {
	return s.awaitCounts(ctx, s.recAttr.leftoverCount(), s.liveAttr.leftoverCount)
}

// awaitLoose waits, bounded by the timeout, when the recorded server
// sent messages outside any request since the last client frame, until
// the live server has sent at least as many of each method outside any
// request. The recorded client got them before it sent its next frame:
// a timer's resource update before the request that stops the timer, so
// the live server gets the same chance. After one such wait timed out
// (the live server does not send them), later frames do not wait again.
// It returns an error only when ctx ends.
func (s *sessionRun) awaitLoose(ctx context.Context) error {
	if s.looseAwaited < 0 || s.recAttr.loose.len() == s.looseAwaited {
		return nil
	}
	s.looseAwaited = s.recAttr.loose.len()
	want := maps.Clone(s.recAttr.loose.n)
	if err := s.awaitCounts(ctx, want, s.liveAttr.looseCount); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.liveAttr.looseCount()
	for method, n := range want {
		if got[method] < n {
			s.looseAwaited = -1
		}
	}
	return nil
}

// awaitWindows waits, for each exchange the recording shows no outcome
// for yet whose window holds messages not awaited before, until the
// live server sent in the live window at least as many of each method
// (see windowCounts), bounded by the timeout. The recorded client read
// them before it sent its next frame (a subscription's acknowledgement
// and notifications before it cancelled it, progress before it gave
// up), so the live server gets the same chance before that frame goes
// out. It returns an error only when ctx ends.
func (s *sessionRun) awaitWindows(ctx context.Context) error {
	for _, x := range s.exch {
		if x.resp != nil || x.recRefused != nil || x.win[0].len() == x.winAwaited {
			continue
		}
		x.winAwaited = x.win[0].len()
		s.mu.Lock()
		sent := x.sent
		s.mu.Unlock()
		if !sent {
			continue
		}
		want := s.windowCounts(x.win[0].msgs)
		have := func() map[string]int { return x.win[1].n } // (s.mu held)
		if err := s.awaitCounts(ctx, want, have); err != nil {
			return err
		}
	}
	return nil
}

// windowCounts counts a recorded window's messages by method, as
// compareWindows compares them: not pings, nor a method whose messages
// are ignored whole.
func (s *sessionRun) windowCounts(win []*jsonrpc.Message) map[string]int {
	n := map[string]int{}
	for _, m := range win {
		if m.Method != mcp.MethodPing {
			n[m.Method]++
		}
	}
	for method := range n {
		if anyMatch(s.diffOptionsFor(method, false).ignore, nil) {
			delete(n, method)
		}
	}
	return n
}

// awaitCounts waits, bounded by the timeout, until have (called with s.mu
// held) counts at least as many messages of each method as want, the
// live server is gone, or ctx ends; it returns an error only then.
func (s *sessionRun) awaitCounts(ctx context.Context, want map[string]int, have func() map[string]int) error {
	if len(want) == 0 {
		return nil
	}
	return s.awaitUntil(ctx, func() bool {
		got := have()
		for method, n := range want {
			if got[method] < n {
				return false
			}
		}
		return true
	})
}

// awaitUntil waits, bounded by the timeout, until done (called with s.mu
// held) is true, the live server is gone, or ctx ends; it returns an
// error only then.
func (s *sessionRun) awaitUntil(ctx context.Context, done func() bool) error {
	if s.peer == nil {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, s.r.opts.Timeout)
	defer cancel()
	go func() {
		select {
		case <-wctx.Done():
		case <-s.peer.Done():
		}
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !done() && wctx.Err() == nil && s.ended() == nil {
		s.cond.Wait()
	}
	return ctx.Err()
}

// close ends the live side and compares what no request was found for.
func (s *sessionRun) close() {
	s.mu.Lock()
	s.eventsDone = true
	s.cond.Broadcast()
	s.mu.Unlock()
	if s.peer != nil {
		s.peer.Stop()
	}
	s.mu.Lock()
	for _, x := range s.exch {
		// Not finished: the run ended early (ctx, an unreadable trace).
		x.finished = true
	}
	live := s.liveAttr.leftover()
	s.r.kept += s.liveAttr.kept
	s.r.res.Notifications += s.notifications
	s.r.res.ServerRequests += s.serverReqs
	s.mu.Unlock()
	for _, it := range s.items {
		s.compareFrame(it)
	}
	s.items = nil
	if s.peer != nil {
		s.r.res.Sessions++
	}
	if s.peer != nil {
		if diffs, more, notes := s.compareWindow(s.recAttr.leftover(), live); len(diffs) > 0 {
			s.r.add(math.MaxInt, Mismatch{Session: s.n, Problem: "the server's messages differ" + notesText(notes),
				Diffs: diffs, MoreDiffs: more})
		}
	}
	if s.owned && s.conn != nil {
		s.conn.Close()
	}
}

func notesText(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return ": " + strings.Join(notes, "; ")
}

// serverFrame files a frame the recorded server sent.
func (s *sessionRun) serverFrame(e Event) {
	msgs, _ := parseFrame(e.Data)
	for _, m := range msgs {
		switch m.Kind() {
		case jsonrpc.KindResponse:
			x := s.byRecID[m.ID.Key()]
			if y, ok := s.recAnswered[m.ID.Key()]; ok && (x == nil || x == y) {
				// The server answered the request again.
				if y != nil {
					y.again[0].add(m, false)
				} else {
					s.recAttr.message(m, e.Meta)
				}
				continue
			}
			if x == nil || x.resp != nil {
				continue
			}
			x.resp, x.recRefused = m, nil
			x.winAtResp = x.win[0].len()
			s.recAnswered[m.ID.Key()] = x
			if e.Meta != nil {
				x.respStatus = e.Meta.HTTPStatus
			}
			delete(s.byRecID, m.ID.Key())
			s.recAttr.answered(x, e.Meta)
			s.awaitLater(x)
			if x.req.Method == mcp.MethodToolsList {
				learnToolHeaders(m.Result, s.r.xheaders)
			}
		case jsonrpc.KindRequest:
			sr := &serverReq{key: canonical(m, pathsFor(s.r.ignores, m.Method)), method: m.Method}
			s.srvByID[m.ID.Key()] = sr
			s.mu.Lock()
			s.srv = append(s.srv, sr)
			s.cond.Broadcast()
			s.mu.Unlock()
			s.recAttr.message(m, e.Meta)
		case jsonrpc.KindNotification:
			s.recAttr.message(m, e.Meta)
		}
	}
}

// awaitLater notes that the recording shows x's outcome before the next
// client frame: that frame is sent once x's live outcome is in.
func (s *sessionRun) awaitLater(x *exchange) {
	if !x.awaited {
		x.awaited = true
		s.after = append(s.after, x)
	}
}

// clientFrame files a frame the recorded client sent; it returns the frame
// to send, or nil for one that only answers the server's requests (those
// answers are given when the live server asks).
func (s *sessionRun) clientFrame(e Event) *sendItem {
	msgs, _ := parseFrame(e.Data)
	it := &sendItem{pos: s.pos, frame: e.Data, route: e.Route}
	onlyResponses := true
	for _, m := range msgs {
		switch m.Kind() {
		case jsonrpc.KindResponse:
			if sr := s.srvByID[m.ID.Key()]; sr != nil {
				delete(s.srvByID, m.ID.Key())
				s.mu.Lock()
				sr.answer = m.Raw
				s.cond.Broadcast()
				s.mu.Unlock()
			}
			continue
		case jsonrpc.KindRequest:
			s.nReq++
			x := &exchange{n: s.nReq, pos: s.pos, req: m, token: progressTokenKey(m.Params), done: make(chan struct{})}
			s.byRecID[m.ID.Key()] = x
			s.exch = append(s.exch, x)
			it.reqs = append(it.reqs, x)
			s.recAttr.sent(x)
		case jsonrpc.KindNotification:
			if m.Method == mcp.NotificationCancelled {
				it.cancels = true
			}
		}
		if it.method == "" {
			it.method = m.Method
		}
		onlyResponses = false
	}
	if onlyResponses {
		return nil
	}
	s.lastItem = it
	if len(it.reqs) == 0 {
		s.items = append(s.items, it)
	}
	return it
}

// httpEvent files an HTTP refusal the recording shows: the event names the
// request it answered (re, minor 2), or, in older traces, an error status
// answering a POST refuses the last frame the client sent.
func (s *sessionRun) httpEvent(e Event) {
	if e.Meta == nil || e.Meta.HTTPStatus < 400 || e.Meta.HTTPMethod != "" && e.Meta.HTTPMethod != "POST" {
		return
	}
	ref := &refusal{status: e.Meta.HTTPStatus, text: e.Text}
	refuse := func(x *exchange) {
		if x.resp != nil {
			return
		}
		x.recRefused = ref
		s.recAttr.answered(x, nil)
		s.awaitLater(x)
	}
	if len(e.Re) > 0 {
		if x := s.byRecID[idKey(e.Re)]; x != nil {
			refuse(x)
		}
		return
	}
	it := s.lastItem
	if it == nil || it.refusalSeen {
		return
	}
	it.refusalSeen = true
	if len(it.reqs) == 0 {
		it.recRefused = ref
	}
	for _, x := range it.reqs {
		refuse(x)
	}
}

// connect opens the session's connection when it has none yet, and starts
// the engine that reads it.
func (s *sessionRun) connect(ctx context.Context) error {
	if s.peer != nil {
		return nil
	}
	if s.conn == nil {
		c, err := s.r.opts.Dial(ctx, s.n, s.info)
		if err != nil {
			return fmt.Errorf("session %d: %w", s.n, err)
		}
		s.conn, s.owned = c, true
	}
	// The engine reads the live server; intercept files its responses and
	// notifications (in the order they came, which attribution needs),
	// and requests are answered from the recording (a batch with a batch).
	s.peer = peer.New(s.conn, peer.Options{Handler: s.answer, Intercept: s.intercept})
	s.peer.Start()
	return nil
}

// errNoDial is why a session beyond the first is not verified when
// VerifyOptions.Dial is nil.
var errNoDial = errors.New("not verified: there is no connection for this session (VerifyOptions.Dial is nil)")

// send sends a recorded client frame, its requests with fresh ids.
func (s *sessionRun) send(ctx context.Context, it *sendItem) error {
	if err := s.connect(ctx); err != nil {
		return err
	}
	if err := s.ended(); err != nil {
		s.fail(it, fmt.Errorf("not sent: the connection ended first (%w)", err), false)
		return nil
	}
	frame := mapMessages(it.frame, func(msg []byte) []byte { return s.rewrite(msg, it) })
	route := s.route(it)
	// The write is bounded by the timeout as the wait for the answer is:
	// over Streamable HTTP a POST is written until its response comes
	// (its headers, or its whole JSON body), and a server that never
	// answers would hold it, and the run, for ever.
	wctx, cancel := context.WithTimeout(ctx, s.r.opts.Timeout)
	defer cancel()
	err := s.peer.Write(wctx, transport.Frame{Data: frame, Route: route})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if wctx.Err() != nil {
		method := "a message"
		if len(it.reqs) > 0 {
			method = it.reqs[0].req.Method
		}
		te := &peer.TimeoutError{Method: method, After: s.r.opts.Timeout}
		if we := (*transport.WaitError)(nil); errors.As(err, &we) {
			// What it was still waiting for (a browser authorization).
			te.Waiting, te.Wait = we.For, we
		}
		s.fail(it, te, true)
		return nil
	}
	if ref := refusalOf(err); ref != nil {
		// The server refused the frame: an outcome, compared with the
		// recorded one; the session goes on (a stateless request stands
		// alone, spec 2026-07-28: basic/transports/streamable-http).
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(it.reqs) == 0 {
			it.liveRefused = ref
		}
		for _, x := range it.reqs {
			if !x.outcome() {
				x.liveRefused, x.outcomeAt = ref, time.Now()
				s.liveAttr.answered(x, nil)
				close(x.done)
			}
		}
		return nil
	}
	if ended := s.ended(); ended != nil || errors.Is(err, transport.ErrClosed) {
		if ended == nil {
			ended = err
		}
		s.fail(it, fmt.Errorf("not sent: the connection ended first (%w)", ended), false)
		return nil
	}
	s.fail(it, fmt.Errorf("not sent: %w", err), true)
	return nil
}

// fail gives the requests of a frame that could not be sent that reason;
// report says a frame without requests is reported too (not when the
// connection had ended: every later frame fails alike).
func (s *sessionRun) fail(it *sendItem, err error, report bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if report {
		it.sendErr = err
	}
	for _, x := range it.reqs {
		if !x.outcome() {
			x.failed, x.outcomeAt = err, time.Now()
			s.liveAttr.answered(x, nil)
			close(x.done)
		}
	}
}

// ended returns why the connection ended, nil while it has not.
func (s *sessionRun) ended() error {
	select {
	case <-s.peer.Done():
		if err := s.peer.Err(); err != nil {
			return err
		}
		return transport.ErrClosed
	default:
	}
	return nil
}

// refusalOf returns the HTTP status with which the server refused a frame,
// or nil when err is no refusal.
func refusalOf(err error) *refusal {
	var he *transport.HTTPError
	if errors.As(err, &he) {
		return &refusal{status: he.Status, text: he.Body}
	}
	var ue *transport.UnauthorizedError
	if errors.As(err, &ue) {
		return &refusal{status: ue.Status, text: ue.Body}
	}
	if errors.Is(err, transport.ErrSessionExpired) {
		return &refusal{status: 404, text: err.Error()}
	}
	return nil
}

// awaitAfter waits for the live outcomes of the exchanges whose recorded
// outcomes came before the frame about to be sent, and finishes them.
func (s *sessionRun) awaitAfter(ctx context.Context) error {
	for _, x := range s.after {
		if err := s.await(ctx, x); err != nil {
			return err
		}
		if x.req.Method == mcp.MethodInitialize {
			if err := s.negotiate(ctx, x); err != nil {
				return err
			}
		}
		s.carryState(x)
		s.carryTask(x)
		s.carryCursor(x)
		s.finish(x)
	}
	s.after = s.after[:0]
	return nil
}

// await waits, bounded by the timeout, for x's live outcome, and for as
// many repetitions of its response as the recording has (exchange.again).
// It returns an error only when ctx ends.
func (s *sessionRun) await(ctx context.Context, x *exchange) error {
	if err := s.awaitOutcome(ctx, x); err != nil {
		return err
	}
	if x.again[0].len() > 0 {
		if err := s.awaitUntil(ctx, func() bool { return x.live == nil || x.again[1].len() >= x.again[0].len() }); err != nil {
			return err
		}
	}
	if x.resp == nil || x.win[0].len() <= x.winAtResp {
		return nil
	}
	// The recorded server sent some of the request's messages after its
	// response (a progress notification racing the answer): the live
	// server gets the same chance to send as many of those methods
	// before the exchange is compared, as awaitWindows gives an
	// unanswered request.
	later := s.windowCounts(x.win[0].msgs[x.winAtResp:])
	want := s.windowCounts(x.win[0].msgs)
	for method := range want {
		if later[method] == 0 {
			delete(want, method)
		}
	}
	return s.awaitCounts(ctx, want, func() map[string]int {
		if x.live == nil {
			return want // no answer: nothing more to wait for
		}
		return x.win[1].n
	})
}

// awaitOutcome waits, bounded by the timeout, for x's live outcome. It
// returns an error only when ctx ends.
func (s *sessionRun) awaitOutcome(ctx context.Context, x *exchange) error {
	s.mu.Lock()
	if !x.sent || x.outcome() {
		s.mu.Unlock()
		return nil
	}
	s.stalled = true
	s.cond.Broadcast()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.stalled = false
		s.mu.Unlock()
	}()
	t := time.NewTimer(s.r.opts.Timeout)
	defer t.Stop()
	select {
	case <-x.done:
	case <-t.C:
		s.mu.Lock()
		x.timedOut = true
		s.mu.Unlock()
	case <-s.peer.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// followsGet reports whether the live GET stream follows the recorded
// client's: the session was recorded over Streamable HTTP with the
// client's HTTP requests from its start (not a recording begun
// mid-session, whose handshake is written from memory), so the recording
// shows whether and when the client opened the stream for
// server-initiated messages. What a server
// sends there depends on it: a message sent while no stream is open is
// lost (spec: basic/transports, "Listening for Messages from the
// Server"), so a live stream the recorded client did not have would
// receive what the recording cannot show.
func (s *sessionRun) followsGet() bool { return s.tr == "http" && s.recHTTP && !s.info.Prelude }

// openServerStream opens the live GET stream where the recorded client
// opened its own: before the client frame that followed it, once the
// outcomes the recording shows before that frame are in (the protocol
// version is negotiated by then). Only the first GET of the session opens
// it: later ones are the stream's reconnections, which the transport
// makes by itself.
func (s *sessionRun) openServerStream(ctx context.Context) error {
	if !s.getDue || s.getOpened || s.peer == nil {
		return nil
	}
	s.getDue, s.getOpened = false, true
	ss, ok := transport.Find[transport.ServerStreamer](s.conn)
	if !ok {
		return nil
	}
	return s.openStream(ctx, ss.OpenServerStream)
}

// openStream runs open, which opens the live GET stream (and returns once
// the server answered it), bounded as a response is: a server that takes
// the GET and never answers it would hold the run for as long as ctx
// lives. That is a mismatch, and the run goes on without the stream; a
// server that refuses the GET is the transport's to note.
func (s *sessionRun) openStream(ctx context.Context, open func(context.Context) error) error {
	octx, cancel := context.WithTimeout(ctx, s.r.opts.Timeout)
	defer cancel()
	err := open(octx)
	switch {
	case err != nil && ctx.Err() != nil:
		return err
	case errors.Is(err, context.DeadlineExceeded):
		s.r.add(s.pos, Mismatch{Session: s.n,
			Problem: fmt.Sprintf("the GET for server-initiated messages got no answer within %s", s.r.opts.Timeout)})
	}
	return nil
}

// negotiate tells the transport the protocol version the live server
// chose, as the session would (HTTP: MCP-Protocol-Version, the GET stream
// unless the recording shows when the client opened it: followsGet).
func (s *sessionRun) negotiate(ctx context.Context, x *exchange) error {
	if ss, ok := transport.Find[transport.ServerStreamer](s.conn); ok && s.followsGet() {
		ss.HoldServerStream()
	}
	n, ok := transport.Find[transport.Negotiator](s.conn)
	s.mu.Lock()
	live := x.live
	s.mu.Unlock()
	if !ok || live == nil {
		return nil
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(live.Result, &res) != nil || res.ProtocolVersion == "" {
		return nil
	}
	return s.openStream(ctx, func(ctx context.Context) error { return n.Negotiated(ctx, res.ProtocolVersion) })
}

// finish compares x (once it has its outcomes) and lets it go.
func (s *sessionRun) finish(x *exchange) {
	s.mu.Lock()
	if x.finished {
		s.mu.Unlock()
		return
	}
	x.finished = true
	s.liveAttr.finished(x)
	if x.sent {
		delete(s.byLiveID, x.liveID.LooseKey())
		if _, ok := s.liveAnswered[x.liveID.LooseKey()]; ok {
			s.liveAnswered[x.liveID.LooseKey()] = nil
		}
	}
	s.mu.Unlock()
	s.recAttr.finished(x)
	if s.recAnswered[x.req.ID.Key()] == x {
		s.recAnswered[x.req.ID.Key()] = nil
	}
	delete(s.byRecID, x.req.ID.Key())
	delete(s.liveIDs, x.req.ID.Key())
	for i, y := range s.exch {
		if y == x {
			s.exch = append(s.exch[:i], s.exch[i+1:]...)
			break
		}
	}
	if x.resp == nil && x.recRefused == nil {
		s.finishOpen(x)
		return
	}
	s.r.res.Exchanges++
	c := Compared{Session: s.n, Exchange: x.n, Method: x.req.Method, Request: x.req.Params}
	s.mu.Lock()
	if !x.sentAt.IsZero() && !x.outcomeAt.IsZero() {
		c.Time = x.outcomeAt.Sub(x.sentAt)
	}
	s.mu.Unlock()
	mm, bad := s.compareExchange(x)
	if bad {
		s.r.add(x.pos, mm)
	}
	if why := s.noOutcome(x); why != nil && s.r.res.Lost == nil {
		s.r.res.Lost = &LostError{Session: s.n, Exchange: x.n, Method: x.req.Method, Err: why}
	}
	c.OK = !bad
	s.r.res.Compared = append(s.r.res.Compared, c)
}

// finishOpen compares x, whose outcome the recording does not have: the
// recording ended first (a subscriptions/listen open until the session's
// end, a request the client cancelled or gave up on, a recording killed
// or cut short). Its response is not compared; what the server sent in
// its window is, as far as the recording goes: the first live messages
// of each method against the recorded ones (the live server may send
// more before the recorded cancellation reaches it). A request other
// than a subscription, which is not answered until it ends, is counted
// as unanswered (VerifyResult.Unanswered).
func (s *sessionRun) finishOpen(x *exchange) {
	if x.req.Method != mcp.MethodSubscriptionsListen || x.win[0].len() == 0 {
		s.r.res.Unanswered++
	}
	if x.win[0].len() == 0 {
		return
	}
	s.r.res.Exchanges++
	s.mu.Lock()
	live := prefixByMethod(&x.win[0], &x.win[1])
	s.mu.Unlock()
	mm := Mismatch{Session: s.n, Exchange: x.n, Method: x.req.Method, Request: x.req.Params}
	diffs, more, notes := s.compareWindow(&x.win[0], live)
	bad := len(diffs) > 0
	if bad {
		mm.Problem = "the " + windowNoun(&x.win[0], live) + " differ" + notesText(notes) + " (the recording ends before the response)"
		mm.Diffs, mm.MoreDiffs = diffs, more
		s.r.add(x.pos, mm)
	}
	s.r.res.Compared = append(s.r.res.Compared, Compared{Session: s.n, Exchange: x.n, Method: x.req.Method, Request: x.req.Params, OK: !bad})
}

// noOutcome says why x got no live outcome (see VerifyResult.Lost): the
// error that kept it from being sent, a timeout, or why the connection
// ended; nil when it got one.
func (s *sessionRun) noOutcome(x *exchange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case x.failed != nil:
		return x.failed
	case x.live != nil || x.liveRefused != nil:
		return nil
	case x.timedOut:
		return &peer.TimeoutError{Method: x.req.Method, After: s.r.opts.Timeout}
	case s.peer != nil:
		if err := s.ended(); err != nil {
			return err
		}
	}
	return transport.ErrClosed
}

// rewrite gives a recorded request a fresh id, and points a recorded
// notifications/cancelled at the live id of the request it cancels.
func (s *sessionRun) rewrite(msg []byte, it *sendItem) []byte {
	m := parseMessage(msg)
	switch m.Kind() {
	case jsonrpc.KindRequest:
		for _, x := range it.reqs {
			if x.sent || x.req.ID.Key() != m.ID.Key() {
				continue
			}
			id := s.peer.NextID()
			s.mu.Lock()
			x.liveID, x.sent, x.sentAt = id, true, time.Now()
			s.byLiveID[id.LooseKey()] = x
			s.liveAttr.sent(x)
			s.mu.Unlock()
			s.liveIDs[x.req.ID.Key()] = id
			return s.liveCursor(s.liveTask(s.liveState(replaceTop(msg, "id", id.Raw()))))
		}
	case jsonrpc.KindNotification:
		if !it.cancels || m.Method != mcp.NotificationCancelled {
			return msg
		}
		spans := findSpans(msg, func(p []elem) bool {
			return len(p) == 2 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "requestId"
		})
		if len(spans) != 1 {
			return msg
		}
		if id, ok := s.liveIDs[idKey(msg[spans[0].start:spans[0].end])]; ok {
			return splice(msg, spans, func([]byte) []byte { return id.Raw() })
		}
	}
	return msg
}

// intercept files what the live server sent, on the engine's read loop:
// responses go to their exchanges, notifications and requests to the
// window they belong to. A frame that holds requests is left to the
// engine, which answers them (through answer).
func (s *sessionRun) intercept(f transport.Frame) bool {
	msgs, _, err := jsonrpc.DecodeFrame(f.Data)
	if err != nil {
		return false
	}
	requests := false
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		switch m.Kind() {
		case jsonrpc.KindResponse:
			x := s.byLiveID[m.ID.LooseKey()]
			if y, ok := s.liveAnswered[m.ID.LooseKey()]; ok && (x == nil || x == y) {
				// The server answered the request again.
				if y != nil && !y.finished {
					if y.again[1].add(m, true) {
						s.liveAttr.kept++
					}
				} else {
					s.liveAttr.message(m, f.Meta)
				}
				continue
			}
			if x == nil || x.finished || x.outcome() {
				continue // late, or unknown: nothing waits for it
			}
			x.live, x.outcomeAt = m, time.Now()
			s.liveAnswered[m.ID.LooseKey()] = x
			if f.Meta != nil {
				x.liveStatus = f.Meta.HTTPStatus
			}
			s.liveAttr.answered(x, f.Meta)
			close(x.done)
		case jsonrpc.KindNotification:
			s.notifications++
			s.liveAttr.message(m, f.Meta)
		case jsonrpc.KindRequest:
			requests = true
			s.liveAttr.message(m, f.Meta)
			if m.ID.Valid() {
				s.unanswered[m.ID.Key()] = true
			}
		}
	}
	s.cond.Broadcast() // for awaitLeftover
	return !requests
}

// answer replies to a request of the live server with the recorded answer
// to the same request (the engine sends it with the live id): the one to
// the same method and params, else the next of the same method. The
// recorded request may not have been read yet when the live one comes; it
// waits for it while the run loop reads on.
func (s *sessionRun) answer(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, s.r.opts.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	key := canonical(m, pathsFor(s.r.ignores, m.Method))
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { // (before the unlock)
		delete(s.unanswered, m.ID.Key())
		s.cond.Broadcast()
	}()
	var sr *serverReq
	for {
		sr = s.pickServerReq(key, m.Method, false)
		if sr != nil || s.eventsDone || s.stalled || ctx.Err() != nil {
			break
		}
		s.cond.Wait()
	}
	if sr == nil {
		sr = s.pickServerReq(key, m.Method, true)
	}
	switch {
	case sr != nil:
		sr.used = true
		s.serverReqs++
		ans := parseMessage(sr.answer)
		if ans.Error != nil {
			return nil, ans.Error
		}
		return ans.Result, nil
	case m.Method == mcp.MethodPing:
		return json.RawMessage("{}"), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx verify: the recording has no answer to this " + m.Method + " request"}
}

// pickServerReq finds the recorded server request whose answer answers a
// live one: an unused one with the same key, else (when settle is set, or
// one of the same method is waiting) an unused one of the same method;
// when settle is set and none is unused, a used one (the server asked
// again). Called with s.mu held.
func (s *sessionRun) pickServerReq(key, method string, settle bool) *serverReq {
	var sameMethod, usedKey, usedMethod *serverReq
	for _, c := range s.srv {
		if c.answer == nil || c.method != method {
			continue
		}
		switch {
		case !c.used && c.key == key:
			return c
		case !c.used:
			if sameMethod == nil {
				sameMethod = c
			}
		case c.key == key:
			usedKey = c
		default:
			usedMethod = c
		}
	}
	switch {
	case sameMethod != nil:
		return sameMethod
	case !settle:
		return nil
	case usedKey != nil:
		return usedKey
	}
	return usedMethod
}

// route returns the route to send a recorded frame with: the recorded
// one, with values the recording redacted taken from the frame again
// (the frame holds "[redacted]" too when the argument was redacted, and
// header and body must agree); or, where the trace could not record
// routes, one derived from a stateless-era message (its _meta declares a
// 2026-07-28-era version); else none (the handshake era). Mcp-Param
// values that were not on the wire (a stdio recording) are taken from the
// arguments per the x-mcp-header annotations of the recorded tools/list,
// so a trace recorded over stdio can be verified over HTTP.
func (s *sessionRun) route(it *sendItem) *transport.Route {
	msgs, batch := parseFrame(it.frame)
	if batch || len(msgs) != 1 || msgs[0].Kind() != jsonrpc.KindRequest && msgs[0].Kind() != jsonrpc.KindNotification {
		return it.route
	}
	m := msgs[0]
	if it.route == nil {
		if !s.derive {
			return nil
		}
		sr := mcp.StandardRoute(m.Method, m.Params)
		if !mcp.IsModernVersion(sr.ProtocolVersion) {
			return nil
		}
		return &transport.Route{ProtocolVersion: sr.ProtocolVersion, Method: sr.Method, Name: sr.Name, Params: s.mirrored(m, sr.Name)}
	}
	r := *it.route
	if r.Name == Placeholder {
		r.Name = mcp.StandardRoute(m.Method, m.Params).Name
	}
	if s.offWire && len(r.Params) == 0 {
		// Recorded where nothing is mirrored (stdio): the arguments an
		// HTTP server wants in headers are found as a client would.
		r.Params = s.mirrored(m, r.Name)
		return &r
	}
	var fresh []transport.RouteParam
	for i, p := range r.Params {
		if p.Value != Placeholder {
			continue
		}
		if fresh == nil {
			fresh = s.mirrored(m, r.Name)
			r.Params = append([]transport.RouteParam(nil), r.Params...)
		}
		for _, f := range fresh {
			if strings.EqualFold(f.Name, p.Name) {
				r.Params[i].Value = f.Value
			}
		}
	}
	return &r
}

// mirrored returns the Mcp-Param values of a tools/call, from the
// recorded x-mcp-header annotations of the tool.
func (s *sessionRun) mirrored(m *jsonrpc.Message, tool string) []transport.RouteParam {
	params := s.r.xheaders[tool]
	if m.Method != mcp.MethodToolsCall || len(params) == 0 {
		return nil
	}
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	values, err := mcp.HeaderValues(params, p.Arguments)
	if err != nil {
		return nil
	}
	var out []transport.RouteParam
	for _, v := range values {
		out = append(out, transport.RouteParam(v))
	}
	return out
}

// carryState notes the requestState the live server put in its answer
// to x where the recorded server put another: a multi-round request
// retried later must carry the live server's state, exactly (spec
// 2026-07-28: basic/patterns/mrtr). The states themselves are compared
// as recorded, like everything else in a result.
func (s *sessionRun) carryState(x *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x.resp == nil || x.live == nil {
		return
	}
	rec, live := requestState(x.resp.Raw, isResultRequestState), requestState(x.live.Raw, isResultRequestState)
	if rec == nil || live == nil || idKey(rec) == idKey(live) {
		return
	}
	s.states[idKey(rec)] = live
}

// liveState replaces a recorded request's params.requestState with the
// live server's, when it gave another.
func (s *sessionRun) liveState(msg []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.states) == 0 {
		return msg
	}
	spans := findSpans(msg, isParamsRequestState)
	if len(spans) != 1 {
		return msg
	}
	live, ok := s.states[idKey(msg[spans[0].start:spans[0].end])]
	if !ok {
		return msg
	}
	return splice(msg, spans, func([]byte) []byte { return live })
}

// carryTask notes the task id the live server gave the task x created
// where the recorded server gave another: receivers generate task ids
// (spec 2025-11-25: basic/utilities/tasks, "Task Creation"; the
// io.modelcontextprotocol/tasks extension alike), so a live server
// rightly names its task otherwise, and the recorded tasks/get,
// tasks/result, tasks/update and tasks/cancel about it must name the
// live one. A 2025-11-25 task is at result.task, an extension's task
// result (resultType "task") is the task itself.
func (s *sessionRun) carryTask(x *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x.resp == nil || x.live == nil {
		return
	}
	rec, live := createdTaskID(x.resp.Raw), createdTaskID(x.live.Raw)
	if rec == "" || live == "" || rec == live {
		return
	}
	if _, ok := s.tasks[rec]; !ok {
		s.tasks[rec] = live
	}
}

// liveTask replaces a recorded request's params.taskId with the id the
// live server gave that task, when it gave another.
func (s *sessionRun) liveTask(msg []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mapTaskID(msg, s.tasks)
}

// taskPairs returns the task ids carried so far (see carryTask), each
// recorded and live one named alike, for the comparison: a live task id
// reads as the recorded one it stands for, and as nothing else.
func (s *sessionRun) taskPairs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return readAsRecorded(s.tasks)
}

// cursorPairs is taskPairs for the cursors carried so far (see
// carryCursor). The comparison applies them only to the members that
// hold cursors: a cursor is often short ("2"), and another string of the
// same text elsewhere is no cursor.
func (s *sessionRun) cursorPairs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return readAsRecorded(s.cursors)
}

// readAsRecorded maps each recorded and each live value of pairs
// (recorded -> live) to the recorded one; nil when there are none.
func readAsRecorded(pairs map[string]string) map[string]string {
	if len(pairs) == 0 {
		return nil
	}
	out := make(map[string]string, 2*len(pairs))
	for rec, live := range pairs {
		out[rec] = rec
		out[live] = rec
	}
	return out
}

// carryCursor notes the cursor of the next page the live server gave in
// x's response where the recorded server gave another: cursors are opaque
// tokens of the server's making (spec 2025-11-25:
// server/utilities/pagination, "Clients MUST treat cursors as opaque
// tokens"), often new for each session, so the recorded request for that
// page is sent with the live cursor (liveCursor), and the two compare
// equal (cursorPairs). What the pages hold is compared.
func (s *sessionRun) carryCursor(x *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x.resp == nil || x.live == nil {
		return
	}
	rec, _ := rawjson.String(rawjson.Member(x.resp.Result, "nextCursor"))
	live, _ := rawjson.String(rawjson.Member(x.live.Result, "nextCursor"))
	if rec == "" || live == "" || rec == live {
		return
	}
	if _, ok := s.cursors[rec]; !ok && len(s.cursors) < maxCursors {
		s.cursors[rec] = live
	}
}

// maxCursors bounds the cursors a session carries (carryCursor): one per
// page the recorded client asked for.
const maxCursors = 10000

// liveCursor replaces a recorded request's params.cursor with the live
// server's cursor for that page, when it gave another.
func (s *sessionRun) liveCursor(msg []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cursors) == 0 {
		return msg
	}
	spans := findSpans(msg, isParamsCursor)
	if len(spans) != 1 {
		return msg
	}
	rec, _ := rawjson.String(msg[spans[0].start:spans[0].end])
	live, ok := s.cursors[rec]
	if !ok {
		return msg
	}
	q, _ := json.Marshal(live)
	return splice(msg, spans, func([]byte) []byte { return q })
}

func isParamsCursor(p []elem) bool {
	return len(p) == 2 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "cursor"
}

// createdTaskID returns the id of the task a response created (at
// result.task.taskId, or result.taskId beside resultType "task"), or "".
func createdTaskID(msg []byte) string {
	spans := findSpans(msg, func(p []elem) bool {
		return len(p) == 3 && p[0].key == "result" && p[1].key == "task" && p[2].key == "taskId" &&
			p[0].index < 0 && p[1].index < 0 && p[2].index < 0
	})
	if len(spans) != 1 {
		var r struct {
			Result struct {
				ResultType string `json:"resultType"`
				TaskID     string `json:"taskId"`
			} `json:"result"`
		}
		if json.Unmarshal(msg, &r) != nil || r.Result.ResultType != "task" {
			return ""
		}
		return r.Result.TaskID
	}
	id, _ := rawjson.String(msg[spans[0].start:spans[0].end])
	return id
}

func isParamsTaskID(p []elem) bool {
	return len(p) == 2 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "taskId"
}

// requestState returns the value at the path match selects, or nil.
func requestState(msg []byte, match func([]elem) bool) json.RawMessage {
	spans := findSpans(msg, match)
	if len(spans) != 1 {
		return nil
	}
	return msg[spans[0].start:spans[0].end]
}

func isResultRequestState(p []elem) bool {
	return len(p) == 2 && p[0].index < 0 && p[0].key == "result" && p[1].index < 0 && p[1].key == "requestState"
}

func isParamsRequestState(p []elem) bool {
	return len(p) == 2 && p[0].index < 0 && p[0].key == "params" && p[1].index < 0 && p[1].key == "requestState"
}
