package record

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"sync"
)

// Handler returns an http.Handler that serves the recorded server over
// Streamable HTTP (spec 2025-03-26 and later: basic/transports): each
// initialize POST starts a session (with its own Mcp-Session-Id) that
// replays the recording from the start. A request's answer comes back as
// a JSON body when the recording has nothing else to send with it, as an
// SSE stream otherwise (notifications and server-to-client requests the
// server sent while handling it). Messages the recorded server sent
// outside any request go to the session's GET stream. DELETE ends a
// session.
func (r *Replayer) Handler() http.Handler {
	return &replayHandler{r: r, sessions: map[string]*httpSession{}}
}

type replayHandler struct {
	r        *Replayer
	mu       sync.Mutex
	sessions map[string]*httpSession
}

// httpSession is one replayed session and the streams its frames go to.
type httpSession struct {
	id   string
	mu   sync.Mutex
	s    *replaySession
	gone chan struct{} // closed by DELETE

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
	closed  bool
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

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (h *replayHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
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
		h.mu.Lock()
		delete(h.sessions, sess.id)
		h.mu.Unlock()
		sess.mu.Lock()
		sess.s.finish()
		sess.mu.Unlock()
		close(sess.gone)
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

func (h *replayHandler) post(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	msgs, batch := parseFrame(body)
	var sess *httpSession
	if req.Header.Get("Mcp-Session-Id") == "" && hasInitialize(msgs) {
		sess = &httpSession{id: newSessionID(), s: h.r.newSession(), gone: make(chan struct{}), waiting: map[string]*sseQueue{}}
		h.mu.Lock()
		h.sessions[sess.id] = sess
		h.mu.Unlock()
		sess.mu.Lock()
		for _, o := range sess.s.sc.prelude {
			sess.route(o, nil)
		}
		sess.mu.Unlock()
	} else if sess = h.session(w, req); sess == nil {
		return
	}
	w.Header().Set("Mcp-Session-Id", sess.id)

	var q *sseQueue
	for _, m := range msgs {
		if m.kind == kindRequest {
			if q == nil {
				q = newQueue()
			}
			q.pending[m.idKey()] = true
		}
	}
	sess.mu.Lock()
	if q != nil {
		for id := range q.pending {
			sess.waiting[id] = q
		}
		sess.streams = append(sess.streams, q)
	}
	for _, o := range sess.s.handle(body) {
		sess.route(o, q)
	}
	if sess.s.err != nil && h.r.opts.Strict {
		// The deviation was reported; the owner decides what to do.
		sess.s.err = nil
	}
	// Everything answered at once, with nothing else to say: plain JSON.
	var frames [][]byte
	if q != nil {
		q.mu.Lock()
		answered := len(q.pending) == 0 && allResponses(q.frames)
		q.mu.Unlock()
		if answered {
			frames = q.take()
			sess.removeStream(q)
		}
	}
	sess.mu.Unlock()

	switch {
	case q == nil:
		w.WriteHeader(http.StatusAccepted)
		return
	case frames != nil:
		w.Header().Set("Content-Type", "application/json")
		if len(frames) == 1 && !batch {
			w.Write(frames[0])
			return
		}
		w.Write(append(append([]byte("["), bytes.Join(frames, []byte(","))...), ']'))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	defer sess.dropStream(q)
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
		case <-sess.gone:
			return
		}
	}
}

func allResponses(frames [][]byte) bool {
	for _, f := range frames {
		msgs, _ := parseFrame(f)
		for _, m := range msgs {
			if m.kind != kindResponse {
				return false
			}
		}
	}
	return true
}

func hasInitialize(msgs []message) bool {
	for _, m := range msgs {
		if m.kind == kindRequest && m.method == "initialize" {
			return true
		}
	}
	return false
}

// route sends one output of the replay where it belongs: a response to
// the stream that owes it; anything else to the stream of the request
// being handled (own), else the newest open request stream, else the GET
// stream, else it is parked until a GET stream opens. Called with s.mu held.
func (s *httpSession) route(o output, own *sseQueue) {
	if o.isStderr {
		return
	}
	msgs, _ := parseFrame(o.frame)
	if len(msgs) == 1 && msgs[0].kind == kindResponse {
		if q := s.waiting[msgs[0].idKey()]; q != nil {
			delete(s.waiting, msgs[0].idKey())
			q.mu.Lock()
			delete(q.pending, msgs[0].idKey())
			q.mu.Unlock()
			q.push(o.frame)
			return
		}
	}
	switch {
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
		case <-sess.gone:
			return
		}
	}
}

// writeEvent writes one SSE message event; a frame with line breaks
// becomes several data lines, which the client joins back with "\n".
func writeEvent(w io.Writer, f []byte) error {
	var b bytes.Buffer
	b.WriteString("event: message\n")
	for _, line := range bytes.Split(f, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}
