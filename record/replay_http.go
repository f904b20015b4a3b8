package record

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Handler returns an http.Handler that serves the recorded server over
// Streamable HTTP, in the protocol era the recording shows, and over the
// legacy HTTP+SSE transport. Each new client connection is served the
// session of the trace that matches it (see Replayer).
//
// Handshake era (spec 2025-03-26 to 2025-11-25: basic/transports): each
// initialize POST starts a connection (with its own Mcp-Session-Id). A
// request's answer comes back as a JSON body when the recording has
// nothing else to send with it, as an SSE stream otherwise (notifications
// and server-to-client requests the server sent while handling it); a
// POST that is not a batch is never answered with a JSON array. What the
// recorded server sent on its GET stream, or outside any request, goes to
// the session's GET stream. A request the recorded server refused without
// a JSON-RPC answer (a 400 text/plain) is refused the same way. DELETE
// ends a session.
//
// HTTP+SSE (spec 2024-11-05: basic/transports): a GET without a session
// opens the event stream, whose endpoint event names where to POST; every
// answer goes on the stream.
//
// Stateless era (spec 2026-07-28: basic/transports/streamable-http): a
// POST without a session (any POST, when the recording has no initialize)
// stands alone. Its request is matched like any other, after its
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-{Name} headers
// are checked against its body as a server must (400 with a HeaderMismatch
// error otherwise; Mcp-Param headers per the x-mcp-header annotations of
// the recorded tools/list). The answer comes as a JSON body (with the
// recorded HTTP status, a JSON-RPC error in a 4xx body included) or as an
// SSE stream scoped to the request; change notifications go to an open
// subscriptions/listen stream. No session id is minted or echoed, and GET
// and DELETE without a session are refused with 405. Requests from one
// remote host share a connection, which starts over when the host asks
// server/discover again after other requests (a new client, as initialize
// is in the handshake era).
//
// With ReplayOptions.Pace, each POST's answer comes whole at the recorded
// time of the last thing the server did for it. ReplayOptions.Faults apply
// to the POST that holds a request they select, before anything else:
// delay it, close the TCP connection without a response, answer with an
// HTTP status, or answer its requests with a JSON-RPC error (over
// HTTP+SSE, on the event stream). Where the recorded server went away (a
// ServerEndedNote, or the end of an older stdio trace; see Serve), the POST
// of the request it was handling gets what the server sent first, then its
// connection closes without an answer. The POST of a request whose POST
// failed in the recording (a note that the frame could not be sent) has
// its connection closed without an answer at once: the client gets the
// error the recorded one got, rather than waiting for an answer.
func (r *Replayer) Handler() http.Handler {
	return &replayHandler{r: r, sessions: map[string]*httpSession{}, stateless: map[string]*httpSession{}}
}

type replayHandler struct {
	r         *Replayer
	mu        sync.Mutex
	sessions  map[string]*httpSession // by the session id minted for it
	stateless map[string]*httpSession // by remote host: stateless requests
	// order lists the ids of sessions begun by initialize, oldest first
	// (ids of sessions since ended are skipped, and dropped now and then).
	order []string
}

// maxHTTPSessions bounds the Streamable HTTP sessions a replay keeps: a
// client may send initialize in a loop and never end a session (DELETE).
// Beyond it the oldest session is ended, as DELETE would end it; a client
// still using it gets 404, which tells it to begin a new session (spec:
// basic/transports, "Session Management"). A variable for tests.
var maxHTTPSessions = 1000

// addSession registers a session begun by initialize, ending the oldest
// ones beyond maxHTTPSessions.
func (h *replayHandler) addSession(sess *httpSession) {
	var ended []*httpSession
	h.mu.Lock()
	h.sessions[sess.id] = sess
	h.order = append(h.order, sess.id)
	for len(h.sessions) > maxHTTPSessions && len(h.order) > 0 {
		id := h.order[0]
		h.order = h.order[1:]
		if old := h.sessions[id]; old != nil && old != sess {
			delete(h.sessions, id)
			ended = append(ended, old)
		}
	}
	if len(h.order) > 2*maxHTTPSessions {
		live := h.order[:0]
		for _, id := range h.order {
			if h.sessions[id] != nil {
				live = append(live, id)
			}
		}
		h.order = live
	}
	h.mu.Unlock()
	for _, old := range ended {
		old.end()
	}
}

// removeSession ends the session with id when it is still registered; it
// reports whether it was (one of concurrent DELETEs wins).
func (h *replayHandler) removeSession(sess *httpSession) bool {
	h.mu.Lock()
	ok := h.sessions[sess.id] == sess
	if ok {
		delete(h.sessions, sess.id)
	}
	h.mu.Unlock()
	if ok {
		sess.end()
	}
	return ok
}

// end finishes a session removed from the handler: its replay ends and
// its streams close. What waited for a GET stream the client never opened
// is reported: the recorded client got it, the live one never will.
func (sess *httpSession) end() {
	sess.mu.Lock()
	if cur := sess.c.cur; cur != nil {
		if len(sess.parked) > 0 {
			first := "a frame"
			if msgs, _ := parseFrame(sess.parked[0]); len(msgs) > 0 {
				first = describe(msgs[0])
			}
			// A warning in either mode: a client need not open a GET
			// stream (spec basic/transports, "Listening for Messages
			// from the Server": it MAY).
			cur.deviate(devNote, "the client ended the session with %d message(s) of the recorded server still waiting for a GET stream (none was open), first %s", len(sess.parked), first)
		}
		cur.finish()
	}
	sess.mu.Unlock()
	close(sess.gone)
}

// httpSession is one replayed connection and the streams its frames go to.
type httpSession struct {
	id   string
	mu   sync.Mutex
	c    *replayConn
	gone chan struct{} // closed by DELETE; nil (never) for a stateless one
	// stateless marks the replay of 2026-07-28-era requests: no GET
	// stream, and what a request's stream may carry is restricted.
	stateless bool
	// asked marks a stateless connection that answered a request other
	// than server/discover.
	asked bool
	// sse, for an HTTP+SSE connection, is its one event stream.
	sse *sseQueue

	waiting map[string]*sseQueue // live request id key -> the stream owing its response
	streams []*sseQueue          // open request streams, oldest first
	get     *sseQueue            // the GET stream, when open
	parked  [][]byte             // frames with no stream to go to yet
}

// sseQueue collects the frames for one response stream.
type sseQueue struct {
	mu      sync.Mutex
	frames  [][]byte
	wake    chan struct{}
	pending map[string]bool // ids whose responses are still due
	status  int             // the recorded HTTP error status of the answer, if any
	refused *output         // the recorded refusal of the request, if any
	dropped bool            // the request's POST failed in the recording
	listen  bool            // answers subscriptions/listen (stateless era)
}

func newQueue() *sseQueue { return &sseQueue{wake: make(chan struct{}, 1), pending: map[string]bool{}} }

func (q *sseQueue) push(f []byte) {
	q.mu.Lock()
	q.frames = append(q.frames, f)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *sseQueue) take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	f := q.frames
	q.frames = nil
	return f
}

// bodyStallTimeout bounds how long a listener (replay --listen, proxy
// --listen) waits for the next bytes of a request body: a client that
// sends headers and then a body slowly or never must not hold a
// connection, its goroutine and what it sent so far for ever. The
// server's ReadHeaderTimeout covers only the headers, and its
// ReadTimeout cannot be used: it would also end the SSE responses that
// stay open. A variable for tests.
var bodyStallTimeout = 30 * time.Second

// stallReader renews the connection's read deadline before each read of
// a request body, so that a body may take as long as it needs as long as
// its bytes keep coming.
type stallReader struct {
	r  io.Reader
	rc *http.ResponseController
}

func (s stallReader) Read(p []byte) (int, error) {
	_ = s.rc.SetReadDeadline(time.Now().Add(bodyStallTimeout))
	return s.r.Read(p)
}

// readRequestBody reads a request's body of at most limit bytes (zero:
// transport.DefaultMaxMessageSize). It answers 413 Content Too Large to a
// longer one (before reading it, when its Content-Length says so), 408
// Request Timeout when the body stops arriving for bodyStallTimeout and
// 400 when the body cannot be read, and then reports false.
func readRequestBody(w http.ResponseWriter, req *http.Request, limit int64) ([]byte, bool) {
	var src io.Reader = req.Body
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Time{}) == nil {
		src = stallReader{r: req.Body, rc: rc}
		// Once read, the connection has no deadline again: an SSE
		// response may stay open as long as it needs.
		defer rc.SetReadDeadline(time.Time{})
	}
	body, err := transport.ReadBody(src, req.ContentLength, limit, "the request body")
	var ne net.Error
	switch {
	case errors.Is(err, transport.ErrFrameTooLarge):
		// The connection is not reused: the rest of the body is not read.
		w.Header().Set("Connection", "close")
		http.Error(w, "Content Too Large: "+err.Error(), http.StatusRequestEntityTooLarge)
		return nil, false
	case errors.As(err, &ne) && ne.Timeout():
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("Request Timeout: the request body stopped arriving (nothing for %v)", bodyStallTimeout), http.StatusRequestTimeout)
		return nil, false
	case err != nil:
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (h *replayHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost {
		if sess := h.sseSession(req); sess != nil {
			h.postSSE(w, req, sess)
			return
		}
	}
	if req.Method == http.MethodGet && req.Header.Get("Mcp-Session-Id") == "" && (h.r.legacy || !h.r.modern) {
		h.openSSE(w, req)
		return
	}
	if req.Method != http.MethodPost && h.r.modern && (!h.r.legacy || req.Header.Get("Mcp-Session-Id") == "") {
		// 2026-07-28 has neither the GET stream nor sessions to end (spec
		// 2026-07-28: basic/transports/streamable-http, "Backward
		// Compatibility").
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed: this (replayed) server speaks protocol revision 2026-07-28, which has no GET stream and no sessions", http.StatusMethodNotAllowed)
		return
	}
	switch req.Method {
	case http.MethodPost:
		h.post(w, req)
	case http.MethodGet:
		h.get(w, req)
	case http.MethodDelete:
		sess := h.session(w, req)
		if sess == nil {
			return
		}
		if !h.removeSession(sess) {
			http.Error(w, "Not Found: no such session", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// session finds the request's session, answering 400 or 404 when there is
// none.
func (h *replayHandler) session(w http.ResponseWriter, req *http.Request) *httpSession {
	id := req.Header.Get("Mcp-Session-Id")
	if id == "" {
		http.Error(w, "Bad Request: missing Mcp-Session-Id (send initialize first)", http.StatusBadRequest)
		return nil
	}
	h.mu.Lock()
	sess := h.sessions[id]
	h.mu.Unlock()
	if sess == nil {
		http.Error(w, "Not Found: no such session", http.StatusNotFound)
		return nil
	}
	return sess
}

// newHTTPSession starts a connection of era and queues what the server
// did before the client spoke.
func (h *replayHandler) newHTTPSession(era string, stateless bool) (*httpSession, error) {
	sess := &httpSession{c: h.r.newConn(era), waiting: map[string]*sseQueue{}, stateless: stateless}
	if !stateless {
		sess.id, sess.gone = newSessionID(), make(chan struct{})
	}
	prelude, err := sess.c.start()
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	for _, o := range prelude {
		sess.route(o, nil)
	}
	sess.mu.Unlock()
	return sess, nil
}

func (h *replayHandler) post(w http.ResponseWriter, req *http.Request) {
	body, ok := readRequestBody(w, req, h.r.opts.MaxMessageSize)
	if !ok {
		return
	}
	msgs, batch := parseFrame(body)
	if h.httpFault(w, req, msgs, batch, nil) {
		return
	}
	if h.r.modern && (!h.r.legacy || req.Header.Get("Mcp-Session-Id") == "" && !hasInitialize(msgs)) {
		h.postStateless(w, req, body, msgs, batch)
		return
	}
	var sess *httpSession
	if req.Header.Get("Mcp-Session-Id") == "" && hasInitialize(msgs) {
		var err error
		if sess, err = h.newHTTPSession("legacy", false); err != nil {
			http.Error(w, "mcpx replay: "+err.Error(), http.StatusInternalServerError)
			return
		}
		h.addSession(sess)
	} else if sess = h.session(w, req); sess == nil {
		return
	}
	w.Header().Set("Mcp-Session-Id", sess.id)
	h.answer(w, req, sess, body, msgs, batch)
}

// answer handles one POST of a connection and answers it: 202 for
// notifications and responses alone; a JSON body when its requests were
// answered at once with nothing else to say; the recorded refusal; an SSE
// stream otherwise.
func (h *replayHandler) answer(w http.ResponseWriter, req *http.Request, sess *httpSession, body []byte, msgs []*jsonrpc.Message, batch bool) {
	base := time.Now()
	requestSecrets(req, sess.c.tell)
	var q *sseQueue
	for _, m := range msgs {
		if m.Kind() == jsonrpc.KindRequest {
			if q == nil {
				q = newQueue()
				q.listen = m.Method == mcp.MethodSubscriptionsListen
			}
			q.pending[m.ID.Key()] = true
		}
	}
	sess.mu.Lock()
	if q != nil {
		for id := range q.pending {
			sess.waiting[id] = q
		}
		sess.streams = append(sess.streams, q)
	}
	outs, err := sess.c.handle(body)
	if err == nil && h.r.opts.Pace > 0 {
		// Paced: the answer waits for its recorded time, the session's
		// other requests do not.
		sc := sess.c.cur.sc
		sess.mu.Unlock()
		err = h.httpPace(req.Context(), sc, base, outs)
		sess.mu.Lock()
	}
	if err != nil {
		if q != nil {
			sess.removeStream(q)
		}
		sess.mu.Unlock()
		http.Error(w, "mcpx replay: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if sess.stateless {
		for _, m := range msgs {
			if m.Kind() == jsonrpc.KindRequest && m.Method != mcp.MethodDiscover {
				sess.asked = true
			}
		}
	}
	ended := false
	for _, o := range outs {
		ended = ended || o.end
		sess.route(o, q)
	}
	if cur := sess.c.cur; cur.err != nil && h.r.opts.Strict {
		// The deviation was reported; the owner decides what to do.
		cur.err = nil
	}
	if q != nil {
		q.mu.Lock()
		dropped := q.dropped
		q.mu.Unlock()
		if dropped {
			// The POST failed in the recording (its connection closed
			// without an answer, as far as the client could tell): the
			// connection closes now, the client seeing it end as the
			// recorded one did.
			sess.removeStream(q)
			sess.mu.Unlock()
			panic(http.ErrAbortHandler)
		}
	}
	if ended && q != nil {
		// The recorded server went away while handling this request: what
		// it sent first, then the connection closes without an answer.
		frames := q.take()
		sess.removeStream(q)
		sess.mu.Unlock()
		if len(frames) > 0 {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for _, f := range frames {
				if writeEvent(w, f) != nil {
					break
				}
			}
			flush(w)
		}
		panic(http.ErrAbortHandler)
	}
	var frames [][]byte
	var refused *output
	if q != nil {
		q.mu.Lock()
		refused = q.refused
		answered := len(q.pending) == 0 && allResponses(q.frames) && (batch || len(q.frames) == 1)
		q.mu.Unlock()
		if refused != nil || answered {
			frames = q.take()
			sess.removeStream(q)
		}
	}
	sess.mu.Unlock()

	switch {
	case q == nil:
		w.WriteHeader(http.StatusAccepted)
		return
	case refused != nil:
		ct := refused.refusedType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(refused.refused)
		io.WriteString(w, refused.refusedText)
		return
	case frames != nil:
		w.Header().Set("Content-Type", "application/json")
		if q.status >= 400 {
			w.WriteHeader(q.status)
		}
		if len(frames) == 1 && !batch {
			w.Write(frames[0])
			return
		}
		w.Write(append(append([]byte("["), bytes.Join(frames, []byte(","))...), ']'))
		return
	}
	defer sess.dropStream(q)
	// A request whose response the recording lacks (the recorded client
	// cancelled it, or listened until it left) stays open until the client
	// closes it, as the server's did.
	streamQueue(w, req, q, sess.gone)
}

func allResponses(frames [][]byte) bool {
	for _, f := range frames {
		msgs, _ := parseFrame(f)
		for _, m := range msgs {
			if m.Kind() != jsonrpc.KindResponse {
				return false
			}
		}
	}
	return true
}

func hasInitialize(msgs []*jsonrpc.Message) bool {
	for _, m := range msgs {
		if m.Kind() == jsonrpc.KindRequest && m.Method == mcp.MethodInitialize {
			return true
		}
	}
	return false
}

// route sends one output of the replay where it belongs: everything to
// the event stream of an HTTP+SSE connection; a response to the stream
// that owes it; a refusal to the request's POST; what the server sent on
// its GET stream to the GET stream; anything else to the stream of the
// request it belongs to, else that of the request being handled (own),
// else the newest open request stream, else the GET stream, else it is
// parked until a GET stream opens. Called with s.mu held.
func (s *httpSession) route(o output, own *sseQueue) {
	if o.isStderr || o.end {
		// (answer closes the POST's connection at the server's end.)
		return
	}
	var rootQ *sseQueue
	if o.root >= 0 && s.c.cur != nil {
		if id, ok := s.c.cur.liveRequest(o.root); ok {
			rootQ = s.waiting[id.Key()]
		}
	}
	if o.refused != 0 {
		if rootQ != nil {
			rootQ.mu.Lock()
			if rootQ.refused == nil {
				rootQ.refused = &o
			}
			rootQ.pending = map[string]bool{}
			rootQ.mu.Unlock()
		}
		return
	}
	if o.dropped != "" {
		if rootQ != nil {
			rootQ.mu.Lock()
			rootQ.dropped = true
			rootQ.mu.Unlock()
		}
		return
	}
	if s.sse != nil {
		s.sse.push(o.frame)
		return
	}
	msgs, _ := parseFrame(o.frame)
	if len(msgs) == 1 && msgs[0].Kind() == jsonrpc.KindResponse {
		if q := s.waiting[msgs[0].ID.Key()]; q != nil {
			delete(s.waiting, msgs[0].ID.Key())
			q.mu.Lock()
			delete(q.pending, msgs[0].ID.Key())
			if o.status != 0 {
				q.status = o.status
			}
			q.mu.Unlock()
			q.push(o.frame)
			return
		}
	}
	if rootQ != nil {
		own = rootQ
	}
	if s.stateless {
		s.routeStateless(o, msgs, own)
		return
	}
	switch {
	case o.get && s.get != nil:
		s.get.push(o.frame)
	case o.get:
		s.parked = append(s.parked, o.frame)
	case own != nil:
		own.push(o.frame)
	case len(s.streams) > 0:
		s.streams[len(s.streams)-1].push(o.frame)
	case s.get != nil:
		s.get.push(o.frame)
	default:
		s.parked = append(s.parked, o.frame)
	}
}

// routeStateless sends what is not a response to a waiting request where
// 2026-07-28 allows it (spec 2026-07-28: basic/transports/streamable-http,
// "Receiving Messages"): messages about the request being handled to its
// stream; change notifications to the newest subscriptions/listen stream.
// Anything else has nowhere to go (there is no GET stream) and is dropped.
// Called with s.mu held.
func (s *httpSession) routeStateless(o output, msgs []*jsonrpc.Message, own *sseQueue) {
	var target *sseQueue
	switch {
	case len(msgs) != 1 || msgs[0].Kind() != jsonrpc.KindNotification || requestScoped(msgs[0].Method):
		target = own
	case own != nil && own.listen:
		target = own
	default:
		for i := len(s.streams) - 1; i >= 0; i-- {
			if s.streams[i].listen {
				target = s.streams[i]
				break
			}
		}
	}
	if target != nil {
		target.push(o.frame)
	}
}

// requestScoped reports notifications that belong to the request whose
// stream carries them, not to a subscriptions/listen stream.
func requestScoped(method string) bool {
	switch method {
	case mcp.NotificationProgress, mcp.NotificationMessage, mcp.NotificationCancelled:
		return true
	}
	return false
}

// removeStream forgets a request stream. Called with s.mu held.
func (s *httpSession) removeStream(q *sseQueue) {
	for i, x := range s.streams {
		if x == q {
			s.streams = append(s.streams[:i], s.streams[i+1:]...)
			break
		}
	}
	for id, x := range s.waiting {
		if x == q {
			delete(s.waiting, id)
		}
	}
}

// dropStream forgets a request stream whose HTTP response ended; frames
// that reached it too late go to the GET stream, or wait for one.
func (s *httpSession) dropStream(q *sseQueue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeStream(q)
	if s.stateless {
		q.take() // no GET stream to take them later
		return
	}
	for _, f := range q.take() {
		if s.get != nil {
			s.get.push(f)
		} else {
			s.parked = append(s.parked, f)
		}
	}
}

func (h *replayHandler) get(w http.ResponseWriter, req *http.Request) {
	sess := h.session(w, req)
	if sess == nil {
		return
	}
	q := newQueue()
	sess.mu.Lock()
	if sess.get != nil {
		sess.mu.Unlock()
		http.Error(w, "Conflict: the session already has a GET stream", http.StatusConflict)
		return
	}
	sess.get = q
	for _, f := range sess.parked {
		q.push(f)
	}
	sess.parked = nil
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		if sess.get == q {
			sess.get = nil
		}
		sess.parked = append(sess.parked, q.take()...)
		sess.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
	pump(w, req, q, sess.gone)
}

// pump writes q's frames as SSE message events as they come, until the
// client leaves or gone is closed.
func pump(w http.ResponseWriter, req *http.Request, q *sseQueue, gone <-chan struct{}) {
	for {
		for _, f := range q.take() {
			if writeEvent(w, f) != nil {
				return
			}
		}
		flush(w)
		select {
		case <-q.wake:
		case <-req.Context().Done():
			return
		case <-gone:
			return
		}
	}
}

// sseSession returns the HTTP+SSE connection a POST is for (its sessionId
// query parameter names one), or nil.
func (h *replayHandler) sseSession(req *http.Request) *httpSession {
	id := req.URL.Query().Get("sessionId")
	if id == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if sess := h.sessions[id]; sess != nil && sess.sse != nil {
		return sess
	}
	return nil
}

// openSSE serves the event stream of an HTTP+SSE connection (spec
// 2024-11-05: basic/transports, "HTTP with SSE"): the endpoint event names
// where the client POSTs its messages, and every answer comes on the
// stream.
func (h *replayHandler) openSSE(w http.ResponseWriter, req *http.Request) {
	sess, err := h.newHTTPSession("legacy", false)
	if err != nil {
		http.Error(w, "mcpx replay: "+err.Error(), http.StatusInternalServerError)
		return
	}
	sess.mu.Lock()
	sess.sse = newQueue()
	for _, f := range sess.parked {
		sess.sse.push(f)
	}
	sess.parked = nil
	sess.mu.Unlock()
	h.mu.Lock()
	h.sessions[sess.id] = sess
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, sess.id)
		h.mu.Unlock()
		sess.mu.Lock()
		if sess.c.cur != nil {
			sess.c.cur.finish()
		}
		sess.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	endpoint := (&url.URL{Path: req.URL.Path, RawQuery: "sessionId=" + sess.id}).String()
	if _, err := fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint); err != nil {
		return
	}
	flush(w)
	pump(w, req, sess.sse, sess.gone)
}

// postSSE takes a message of an HTTP+SSE connection: accepted at once, its
// answers go on the event stream.
func (h *replayHandler) postSSE(w http.ResponseWriter, req *http.Request, sess *httpSession) {
	body, ok := readRequestBody(w, req, h.r.opts.MaxMessageSize)
	if !ok {
		return
	}
	if msgs, batch := parseFrame(body); h.httpFault(w, req, msgs, batch, sess) {
		return
	}
	base := time.Now()
	requestSecrets(req, sess.c.tell)
	sess.mu.Lock()
	outs, err := sess.c.handle(body)
	dropped := false // the POST failed in the recording
	if err == nil && h.r.opts.Pace > 0 {
		sc := sess.c.cur.sc
		sess.mu.Unlock()
		err = h.httpPace(req.Context(), sc, base, outs)
		sess.mu.Lock()
	}
	if err == nil {
		for _, o := range outs {
			if o.dropped != "" {
				dropped = true
				continue
			}
			if o.refused != 0 {
				if id, ok := sess.c.cur.liveRequest(o.root); ok {
					o.frame = jsonrpc.EncodeResponse(id, nil, noAnswerError(o))
					o.refused = 0
				}
			}
			if o.frame != nil && o.refused == 0 {
				sess.route(o, nil)
			}
		}
		if cur := sess.c.cur; cur.err != nil && h.r.opts.Strict {
			cur.err = nil
		}
	}
	sess.mu.Unlock()
	if err != nil {
		http.Error(w, "mcpx replay: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if dropped {
		// Its connection closes without an answer, as the recorded
		// one did.
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(http.StatusAccepted)
}

// writeEvent writes one SSE message event; a frame with line breaks
// becomes several data lines, which the client joins back with "\n".
// streamQueue answers with an SSE stream of q's frames, sent as they come,
// until every response q waits for went out, the client leaves, or gone is
// closed (a nil gone never is).
func streamQueue(w http.ResponseWriter, req *http.Request, q *sseQueue, gone <-chan struct{}) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush(w)
	for {
		for _, f := range q.take() {
			if writeEvent(w, f) != nil {
				return
			}
		}
		flush(w)
		q.mu.Lock()
		done := len(q.pending) == 0 && len(q.frames) == 0
		q.mu.Unlock()
		if done {
			return
		}
		select {
		case <-q.wake:
		case <-req.Context().Done():
			return
		case <-gone:
			return
		}
	}
}

// writeEvent writes a frame as one SSE message event. SSE lines end at
// CR, LF or CRLF, so each becomes a data line (read back as LF: the same
// JSON, since a JSON frame has line breaks only as white space).
func writeEvent(w io.Writer, f []byte) error {
	var b bytes.Buffer
	b.WriteString("event: message\n")
	for {
		i := bytes.IndexAny(f, "\r\n")
		b.WriteString("data: ")
		if i < 0 {
			b.Write(f)
			b.WriteByte('\n')
			break
		}
		b.Write(f[:i])
		b.WriteByte('\n')
		if f[i] == '\r' && i+1 < len(f) && f[i+1] == '\n' {
			i++
		}
		f = f[i+1:]
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// postStateless serves one POST of the stateless 2026-07-28 era (spec
// 2026-07-28: basic/transports/streamable-http, "Sending Messages").
func (h *replayHandler) postStateless(w http.ResponseWriter, req *http.Request, body []byte, msgs []*jsonrpc.Message, batch bool) {
	if batch || len(msgs) != 1 || msgs[0].Kind() != jsonrpc.KindRequest && msgs[0].Kind() != jsonrpc.KindNotification {
		what := "a JSON-RPC batch"
		if !batch && len(msgs) == 1 {
			what = "a " + msgs[0].Kind().String()
		}
		h.refuse(w, jsonrpc.ID{}, http.StatusBadRequest, -32600, "Invalid Request: a 2026-07-28 POST carries one JSON-RPC request or notification, not "+what)
		return
	}
	m := msgs[0]
	if m.Kind() == jsonrpc.KindRequest {
		if err := h.r.checkRoute(req.Header, m); err != nil {
			h.refuse(w, m.ID, http.StatusBadRequest, mcp.CodeHeaderMismatch, "Header mismatch: "+err.Error())
			return
		}
	}
	sess, err := h.statelessSession(req, m)
	if err != nil {
		http.Error(w, "mcpx replay: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h.answer(w, req, sess, body, msgs, false)
}

// refuse answers a POST with an HTTP error status and a JSON-RPC error,
// and reports the deviation.
func (h *replayHandler) refuse(w http.ResponseWriter, id jsonrpc.ID, status, code int, msg string) {
	if h.r.opts.OnDeviation != nil {
		h.r.opts.OnDeviation(Deviation{Message: msg, Failure: true})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonrpc.EncodeResponse(id, nil, &jsonrpc.Error{Code: code, Message: "mcpx replay: " + msg}))
}

// statelessSession returns the connection the stateless requests of the
// request's remote host share, starting a new one when m opens a new
// client's session: a server/discover after other requests.
func (h *replayHandler) statelessSession(req *http.Request, m *jsonrpc.Message) (*httpSession, error) {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		host = req.RemoteAddr
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.stateless[host]; old != nil {
		old.mu.Lock()
		over := m.Kind() == jsonrpc.KindRequest && m.Method == mcp.MethodDiscover && old.asked
		if over && old.c.cur != nil {
			old.c.cur.finish()
			if h.r.opts.Strict {
				old.c.cur.err = nil
			}
		}
		old.mu.Unlock()
		if !over {
			return old, nil
		}
	}
	sess, err := h.newHTTPSession("modern", true)
	if err != nil {
		return nil, err
	}
	h.stateless[host] = sess
	return sess, nil
}

// checkRoute checks the route headers of a stateless request against its
// body, as a 2026-07-28 server must (spec 2026-07-28: basic/transports/
// streamable-http, "Server Validation"): MCP-Protocol-Version, Mcp-Method
// and, where the method has one, Mcp-Name are required and must match the
// body; an Mcp-Param-{Name} header must be present exactly when a
// recorded x-mcp-header annotation of the tool finds a value in the
// arguments, and match it. Encoded values are decoded first.
func (r *Replayer) checkRoute(h http.Header, m *jsonrpc.Message) error {
	want := mcp.StandardRoute(m.Method, m.Params)
	got := h.Get("Mcp-Protocol-Version")
	switch {
	case got == "":
		return errors.New("the MCP-Protocol-Version header is missing")
	case want.ProtocolVersion == "":
		return fmt.Errorf("MCP-Protocol-Version is %q, but the body's _meta declares no %s", got, mcp.MetaProtocolVersion)
	case got != want.ProtocolVersion:
		return fmt.Errorf("MCP-Protocol-Version is %q, but the body's _meta declares %q", got, want.ProtocolVersion)
	}
	switch got := h.Get("Mcp-Method"); {
	case got == "":
		return errors.New("the Mcp-Method header is missing")
	case got != m.Method:
		return fmt.Errorf("Mcp-Method is %q, but the body's method is %q", got, m.Method)
	}
	if want.Name != "" {
		raw := h.Get("Mcp-Name")
		got, err := transport.DecodeHeaderValue(raw)
		switch {
		case raw == "":
			return fmt.Errorf("the Mcp-Name header is missing (the body names %q)", want.Name)
		case err != nil:
			return fmt.Errorf("Mcp-Name: %w", err)
		case !validHeaderValue(raw):
			return fmt.Errorf("Mcp-Name %q holds characters a header value may not", raw)
		case got != want.Name:
			return fmt.Errorf("Mcp-Name is %q, but the body names %q", got, want.Name)
		}
	}
	params := r.xheaders[want.Name]
	if m.Method != mcp.MethodToolsCall || len(params) == 0 {
		return nil
	}
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	values, err := mcp.HeaderValues(params, p.Arguments)
	if err != nil {
		return fmt.Errorf("tool %q: %w", want.Name, err)
	}
	for _, hp := range params {
		name := "Mcp-Param-" + hp.Header
		raw, present := h[http.CanonicalHeaderKey(name)]
		var expected *mcp.RouteParam
		for i := range values {
			if strings.EqualFold(values[i].Name, hp.Header) {
				expected = &values[i]
			}
		}
		switch {
		case expected == nil && !present:
		case expected == nil:
			return fmt.Errorf("%s is sent, but the arguments have no value for it", name)
		case !present:
			return fmt.Errorf("the %s header is missing (the arguments hold %q)", name, expected.Value)
		default:
			got, err := transport.DecodeHeaderValue(raw[0])
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !validHeaderValue(raw[0]) {
				return fmt.Errorf("%s %q holds characters a header value may not", name, raw[0])
			}
			if got != expected.Value && !(hp.Type == "integer" && sameNumber(json.Number(got), json.Number(expected.Value))) {
				return fmt.Errorf("%s is %q, but the arguments hold %q", name, got, expected.Value)
			}
		}
	}
	return nil
}

// validHeaderValue reports whether v holds only what an HTTP field value
// may: visible ASCII, space and tab (RFC 9110, section 5.5).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}
