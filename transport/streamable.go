package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// streamable is the Streamable HTTP transport (spec 2025-03-26 and later:
// basic/transports, "Streamable HTTP"). Every outgoing frame is one POST;
// answers come back as a JSON body or an SSE stream on that POST, or on the
// GET stream opened after initialization.
type streamable struct {
	b     *httpBase
	url   string
	shown string // url for messages, redacted (see RedactURL)

	mu        sync.Mutex
	sessionID string
	version   string             // MCP-Protocol-Version to send, "" for none
	getCancel context.CancelFunc // ends the current GET stream
	holdGet   bool               // Negotiated leaves the GET stream to OpenServerStream
	getErr    error              // why the last GET stream was not opened (ServerStreamErr)
	onGetEnd  func(error)        // learns that the GET stream ended for good (ServerStreamEndReporter)
	// changeSaid is set once the server's change of the session id was
	// reported (see sessionChanged).
	changeSaid bool
	// emptySaid is set once an empty answer other than 202 Accepted to a
	// POST that carried no request was reported (see acceptedEmpty).
	emptySaid bool
	// elsewhereSaid is set once the refusal of the GET stream's redirect
	// to another origin was told (see refusedElsewhere).
	elsewhereSaid bool
	seq           int // numbers streams for display

	// Requests sent with a Route (the stateless 2026-07-28 style): their
	// open response streams, to close on cancellation, and every id seen,
	// so that cancelling one whose stream already ended is still known.
	routed     map[string]context.CancelFunc
	routedSeen map[string]bool
	// following holds the POST streams of the handshake era by the ids of
	// the requests they still owe a response, for ForgetRequest.
	following map[string]*streamState
}

func newStreamable(b *httpBase, u string) *streamable {
	return &streamable{b: b, url: u, shown: RedactURL(u)}
}

// fallbackError reports that the first POST was refused in a way that, in
// auto mode, means "this may be an HTTP+SSE server".
type fallbackError struct {
	status int
	body   string
}

func (e *fallbackError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
}

// sessionExpiredError reports HTTP 404 to a request carrying a session id.
type sessionExpiredError struct {
	method, url, id string
}

func (e *sessionExpiredError) Error() string {
	return fmt.Sprintf("session expired: the server answered %s %s with HTTP 404 for session %s", e.method, RedactURL(e.url), e.id)
}

func (e *sessionExpiredError) Is(target error) bool {
	return target == ErrSessionExpired || target == ErrTransport
}

// fallbackStatus reports whether status, answering the first POST, means
// the server may speak the older HTTP+SSE transport. From 2025-11-25 on the
// spec names 400, 404 and 405; earlier revisions said any 4xx. 401 and 403
// never do: they ask for credentials; nor does 429, which asks to try
// again later (RFC 6585 section 4): falling back turned it into "not an
// HTTP+SSE server either", and lost its Retry-After.
func fallbackStatus(offered string, status int) bool {
	if status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests {
		return false
	}
	if offered == "" || offered >= "2025-11-25" {
		return status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusMethodNotAllowed
	}
	return status >= 400 && status < 500
}

// versionHeader reports whether protocol revision v defines the
// MCP-Protocol-Version header (added in 2025-06-18).
func versionHeader(v string) bool { return v >= "2025-06-18" }

func (s *streamable) nextStream(kind string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return kind + "-" + strconv.Itoa(s.seq)
}

func (s *streamable) session() (id, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionID, s.version
}

// SessionID returns the current Mcp-Session-Id, "" when there is none.
func (s *streamable) SessionID() string {
	id, _ := s.session()
	return id
}

// adoptSession keeps the session id the server assigned (at initialize),
// once it is one mcpx can send back (see checkSessionID). sent is the
// session id the request carried, "" for none: an answer to a request
// that carried one is checked against it (see sessionChanged).
func (s *streamable) adoptSession(method, sent string, resp *http.Response) error {
	v := resp.Header.Get("Mcp-Session-Id")
	if v == "" {
		return nil
	}
	if sent != "" {
		s.sessionChanged(method, sent, v)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessionID != "" {
		return nil
	}
	if err := checkSessionID(v); err != nil {
		err.Method, err.URL = method, s.url
		return err
	}
	s.sessionID = v
	return nil
}

// sessionChanged checks got, the Mcp-Session-Id of an answer to a
// request that carried session id sent. The server assigns the id once,
// at initialization, and the client sends it with every later request
// (spec 2025-11-25: basic/transports, "Session Management"): another id
// is the server's departure, reported once a connection (see
// DepartureReporter), and not taken; mcpx goes on sending the one it
// was assigned. A server that ended the session says so with 404, and
// the new session's id comes with the next initialize's answer. It was
// ignored without a word, which hid a server that hands out a new id
// with each answer and expects it back (it then refuses the next
// request, with nothing to say why).
func (s *streamable) sessionChanged(method, sent, got string) {
	if got == sent {
		return
	}
	if !s.firstTime(&s.changeSaid) {
		return
	}
	s.b.depart("changes of the session id", "%s %s: the answer carries Mcp-Session-Id %s, but the server assigned session %s at initialization; mcpx goes on sending %s (spec: basic/transports, \"Session Management\": the id is assigned at initialization, and the client sends it with every later request; further changes are not said)",
		method, s.shown, QuoteExcerpt(got), QuoteExcerpt(sent), QuoteExcerpt(sent))
}

// maxSessionID is the longest Mcp-Session-Id mcpx takes. The id goes
// back to the server in a header of every request, where proxies and
// servers refuse much longer lines (nginx's buffer for a header line is
// 8 KiB), and one of megabytes would go with each; a UUID, a JWT or a
// hash fits many times over.
const maxSessionID = 4 << 10

// SessionIDError reports an Mcp-Session-Id that mcpx refuses to adopt,
// and so to send back with every request: one holding a byte outside
// visible ASCII (0x21 to 0x7E), which the spec forbids (spec 2025-11-25:
// basic/transports, "Session Management"), and which would otherwise go
// out in headers as the server wrote it; or one longer than mcpx takes
// (maxSessionID). The session cannot be used, so the request that got it
// (initialize) fails. It matches ErrTransport.
type SessionIDError struct {
	// Method and URL are the request whose answer carried the id.
	Method, URL string
	// ID is the session id as the server sent it.
	ID string
	// Offset is the index in ID of the first byte outside 0x21 to 0x7E,
	// -1 when the id is refused for its length.
	Offset int
	// Limit is the longest session id mcpx takes, in bytes.
	Limit int
}

func (e *SessionIDError) Error() string {
	what := fmt.Sprintf("%s %s: the server's Mcp-Session-Id", e.Method, RedactURL(e.URL))
	if e.Offset < 0 {
		return fmt.Sprintf("%s is %d bytes long, more than the %s mcpx takes (it would go back to the server with every request)",
			what, len(e.ID), FormatSize(int64(e.Limit)))
	}
	return fmt.Sprintf("%s \"%s\" holds the byte 0x%02x at offset %d, but a session id may hold only visible ASCII (0x21 to 0x7E); mcpx does not send it back",
		what, Excerpt(e.ID), e.ID[e.Offset], e.Offset)
}

// Is makes errors.Is(err, ErrTransport) true.
func (e *SessionIDError) Is(target error) bool { return target == ErrTransport }

// checkSessionID returns why a client must not adopt session id id, nil
// when it may.
func checkSessionID(id string) *SessionIDError {
	if len(id) > maxSessionID {
		return &SessionIDError{ID: id, Offset: -1, Limit: maxSessionID}
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return &SessionIDError{ID: id, Offset: i, Limit: maxSessionID}
		}
	}
	return nil
}

// ForgetSession drops session id, which the server no longer knows
// though it did not say so with a 404 (see SessionForgetter).
func (s *streamable) ForgetSession(id string) {
	s.forgetSession(id)
	s.b.note("the server no longer knows session %s; it must be initialized again", id)
}

// forgetSession drops session id (if it is still the current one) and
// everything tied to it, so the next initialize starts afresh.
func (s *streamable) forgetSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessionID != id {
		return
	}
	s.sessionID = ""
	s.version = ""
	if s.getCancel != nil {
		s.getCancel()
		s.getCancel = nil
	}
}

// setHeaders adds the session headers to req.
func (s *streamable) setHeaders(req *http.Request) (sessionID string) {
	id, v := s.session()
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	if v != "" {
		req.Header.Set("Mcp-Protocol-Version", v)
	}
	return id
}

// post sends one frame. It returns once the response headers arrived (and,
// for a JSON answer, its body): HTTP failures are returned here, while an
// SSE answer is read by a goroutine that delivers its frames. With detect,
// refusals that suggest an HTTP+SSE server come back as *fallbackError.
func (s *streamable) post(ctx context.Context, f Frame, detect bool) error {
	ids := requestIDs(f.Data)
	req, err := s.b.newRequest(ctx, http.MethodPost, s.url, f.Data)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	routed := f.Route != nil
	sid := ""
	if routed {
		// The stateless style of 2026-07-28: no session, the route mirrored
		// into headers.
		if err := setRouteHeaders(req.Header, f.Route); err != nil {
			return fmt.Errorf("%w: POST %s: %w", ErrTransport, s.shown, err)
		}
		s.markRouted(ids)
	} else {
		sid = s.setHeaders(req)
	}
	x, err := s.b.send(ctx, req)
	if err != nil {
		return err
	}
	resp := x.resp
	status := resp.StatusCode
	switch {
	case status == http.StatusNotFound && sid != "":
		x.close()
		s.forgetSession(sid)
		s.b.note("the server ended session %s (HTTP 404); it must be initialized again", sid)
		return &sessionExpiredError{method: "POST", url: s.url, id: sid}
	case status >= 400 && status < 500 && len(ids) > 0:
		// A JSON-RPC error answering the request may come with a 4xx status
		// (2026-07-28: 400 for an unsupported version, a missing capability
		// or mismatched headers, 404 for an unknown method). Such an answer
		// is the server's, not a transport failure, and it is not a reason
		// to try the HTTP+SSE transport either (spec 2026-07-28:
		// basic/transports/streamable-http, "Backward Compatibility").
		// It is delivered only within the maximum message size, as any
		// answer is; a longer one fails the request with the status.
		limit := maxSize(s.b.opts.MaxMessageSize)
		most := min(1<<20, limit+1)
		body, _ := io.ReadAll(io.LimitReader(resp.Body, most))
		x.close()
		if int64(len(body)) <= limit && answersAny(body, ids) && mediaTypeOf(resp.Header.Get("Content-Type")) == "application/json" {
			meta := &Meta{HTTPMethod: "POST", URL: s.url, HTTPStatus: status, ContentType: resp.Header.Get("Content-Type")}
			if !s.b.deliver(Frame{Data: body, Meta: meta}) {
				return ErrClosed
			}
			return nil
		}
		excerpt := x.excerpt(body, int64(len(body)) < most)
		if detect && fallbackStatus(s.b.opts.ProtocolVersion, status) {
			return &fallbackError{status: status, body: excerpt}
		}
		e := s.b.httpError("POST", s.url, resp, excerpt)
		e.SessionID = sid
		return e
	case detect && fallbackStatus(s.b.opts.ProtocolVersion, status):
		fb := &fallbackError{status: status, body: x.bodyExcerpt()}
		x.close()
		return fb
	case status < 200 || status > 299:
		e := s.b.httpError("POST", s.url, resp, x.bodyExcerpt())
		e.SessionID = sid
		x.close()
		return e
	}
	if !routed {
		if err := s.adoptSession("POST", sid, resp); err != nil {
			x.close()
			return err
		}
	}
	mt := mediaType(resp)
	if len(ids) == 0 {
		// A notification or responses: accepted (202 with no body; any
		// other success with none is told of: see acceptedEmpty), or
		// answered with what the server must not send (see
		// answeredNoRequest). A Content-Type without a body says nothing.
		if resp.ContentLength == 0 {
			x.close()
			s.acceptedEmpty(f.Data, status)
			return nil
		}
		return s.answeredNoRequest(ctx, x, f.Data, mt)
	}
	switch {
	case mt == "text/event-stream":
		if !x.stop() {
			x.close()
			return ctx.Err()
		}
		// The stream, and the GETs that resume it, live until it is
		// answered, forgotten (ForgetRequest) or the connection closes.
		streamCtx, cancel := context.WithCancel(s.b.ctx)
		x.stop = context.AfterFunc(streamCtx, x.cancel)
		st := &streamState{name: s.nextStream("post"), method: "POST", routed: routed, cancel: cancel, pending: map[string]bool{}}
		for _, id := range ids {
			st.pending[id] = true
		}
		if routed {
			s.trackRouted(ids, x.cancel)
		} else {
			s.follow(ids, st)
		}
		if !s.b.spawn(func() {
			defer cancel()
			if routed {
				defer s.untrackRouted(ids)
			} else {
				defer s.unfollow(ids, st)
			}
			s.runPostStream(streamCtx, x, st)
		}) {
			cancel()
			s.unfollow(ids, st)
			x.close()
			return ErrClosed
		}
		return nil
	case status == http.StatusAccepted:
		// 202 is how a server takes notifications and responses; a
		// request is answered in the POST's body, as JSON or an SSE
		// stream, and never on the GET stream but to resume (spec
		// 2025-11-25: basic/transports, "Sending Messages to the
		// Server" and "Listening for Messages from the Server").
		// Waiting would only run out the timeout.
		x.close()
		return fmt.Errorf("%w: POST %s: HTTP 202 Accepted with no response, but a request must be answered in the POST's body (application/json or text/event-stream)", ErrTransport, s.shown)
	}
	// A JSON body: read it whole, still under the caller's context so that a
	// slow body counts against the request's timeout.
	body, err := ReadBody(resp.Body, resp.ContentLength, s.b.opts.MaxMessageSize, "the HTTP response body")
	x.close()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s.b.ctx.Err() != nil {
			return ErrClosed
		}
		if errors.Is(err, ErrFrameTooLarge) {
			return fmt.Errorf("%w: POST %s: %w", ErrTransport, s.shown, err)
		}
		return fmt.Errorf("%w: POST %s: reading the response body: %w", ErrTransport, s.shown, err)
	}
	if len(body) == 0 {
		return fmt.Errorf("%w: POST %s: HTTP %d with an empty body, but the request needs a response", ErrTransport, s.shown, status)
	}
	if mt != "application/json" {
		return fmt.Errorf("%w: POST %s: the server answered with Content-Type %s, not application/json or text/event-stream: %s",
			ErrTransport, s.shown, QuoteExcerpt(resp.Header.Get("Content-Type")), excerptBody(body, mt))
	}
	meta := &Meta{HTTPMethod: "POST", URL: s.url, HTTPStatus: status, ContentType: resp.Header.Get("Content-Type")}
	if !routed {
		meta.SessionID = s.SessionID()
	}
	if !s.b.deliver(Frame{Data: body, Meta: meta}) {
		return ErrClosed
	}
	// A JSON answer to a POST carrying a request is that request's
	// response, one JSON object (spec 2025-11-25: basic/transports,
	// "Sending Messages to the Server"): once it has been read without the
	// response, the response will never come, and waiting would only run
	// out the request's timeout.
	if missing := unanswered(body, ids); len(missing) > 0 {
		if looksLikeSSE(body) {
			return fmt.Errorf("%w: POST %s: the body is an SSE stream, but its Content-Type is %s; the server must send a stream as text/event-stream (spec: basic/transports, \"Sending Messages to the Server\"): %s",
				ErrTransport, s.shown, QuoteExcerpt(resp.Header.Get("Content-Type")), excerptBody(body, mt))
		}
		why := ""
		if _, _, err := jsonrpc.DecodeFrame(body); err != nil {
			why = " (" + notJSON(body) + ")"
		}
		return fmt.Errorf("%w: POST %s: the JSON body did not answer request id %s%s; it held: %s",
			ErrTransport, s.shown, strings.Join(missing, ", "), why, excerptBody(body, mt))
	}
	return nil
}

// emptyKind is the sort of departure acceptedEmpty reports, once a
// connection (see DepartureReporter).
const emptyKind = "empty answers other than 202 Accepted to POSTs that carried no request"

// acceptedEmpty takes status, the successful answer with no body to a
// POST that carried no request (data). The server accepts such a POST
// with 202 Accepted (spec 2025-11-25: basic/transports, "Sending Messages
// to the Server", as in 2025-03-26 and 2025-06-18; 2026-07-28 for a
// notification): another status (an empty 200 OK, 204 No Content) is the
// server's departure, reported once a connection (see DepartureReporter),
// and the message still counts as delivered. It was taken without a word,
// which hid from an inspector a server that other clients may refuse.
func (s *streamable) acceptedEmpty(data []byte, status int) {
	if status == http.StatusAccepted {
		return
	}
	if !s.firstTime(&s.emptySaid) {
		return
	}
	s.b.depart(emptyKind, "POST %s carried %s, no request, and the server answered it with HTTP %d and no body, but such a POST is answered 202 Accepted (spec: basic/transports, \"Sending Messages to the Server\"); mcpx took it as accepted (further such answers are not said)",
		s.shown, carried(data), status)
}

// noRequestKind is the sort of departure answeredNoRequest reports,
// which a server can repeat with every notification and response mcpx
// sends (see DepartureReporter).
const noRequestKind = "answers with a body to POSTs that carried no request"

// maxNoRequestBody bounds what is read of a body answering a POST that
// carried no request: enough to quote its start, never the body whole.
const maxNoRequestBody = 4 << 10

// emptyStreamWait bounds how long mcpx waits to learn whether an SSE
// stream of unknown length answering a POST that carried no request is
// empty: a server that accepts the POST ends it at once, with nothing
// in it.
const emptyStreamWait = 5 * time.Second

// answeredNoRequest takes the successful answer x to a POST that carried
// no request (only a notification or responses: data), of media type mt,
// whose body may not be empty. The server accepts such a POST with 202
// Accepted and no body (spec 2025-11-25: basic/transports, "Sending
// Messages to the Server", as in 2025-03-26; 2026-07-28, where a client
// sends no responses, for a notification): a body is the server's
// departure, reported (see DepartureReporter), and not read as messages.
// Delivered, it made a loop of a server that answers every answer mcpx
// sends with a new request, for as long as the session lasted; and an
// SSE stream the server never ended was held open. A JSON body's start
// is read, to quote it; a stream is closed unread (see noRequestStream
// for one of unknown length). A body that is empty after all (of unknown
// length) is an accepted POST, whatever its Content-Type says: the type
// of a body that is not there is no departure.
func (s *streamable) answeredNoRequest(ctx context.Context, x *exchange, data []byte, mt string) error {
	status := x.resp.StatusCode
	var what, done string
	if mt == "text/event-stream" {
		if x.resp.ContentLength < 0 {
			return s.noRequestStream(ctx, x, data)
		}
		x.close()
		what, done = "an SSE stream (text/event-stream)", "mcpx closed it unread"
	} else {
		body, err := io.ReadAll(io.LimitReader(x.resp.Body, maxNoRequestBody+1))
		x.close()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case s.b.ctx.Err() != nil:
			return ErrClosed
		case len(bytes.TrimSpace(body)) == 0 && err == nil:
			s.acceptedEmpty(data, status)
			return nil
		}
		what = "a body with no Content-Type"
		if mt != "" {
			what = "a " + QuoteExcerpt(mt) + " body"
			if mt == "application/json" {
				what = "an application/json body"
			}
		}
		done = "mcpx did not read it: " + Excerpt(x.excerpt(body, len(body) <= maxNoRequestBody && err == nil))
	}
	s.noRequestBody(data, status, what, done)
	return nil
}

// noRequestBody reports a body answering a POST that carried no request
// (see answeredNoRequest).
func (s *streamable) noRequestBody(data []byte, status int, what, done string) {
	s.b.depart(noRequestKind, "POST %s carried %s, no request, and the server answered it with HTTP %d and %s, but such a POST is answered 202 Accepted with no body (spec: basic/transports, \"Sending Messages to the Server\"); %s",
		s.shown, carried(data), status, what, done)
}

// noRequestStream takes x, an SSE stream of unknown length (chunked)
// answering a POST that carried no request (data): a server that wrote
// its headers before it knew it had nothing to send ends such a stream
// at once, empty, which is no body and no departure. Whether it does is
// learnt apart from the caller, who goes on: from the stream's first
// byte, or its end, within emptyStreamWait. A byte is a body (see
// answeredNoRequest), the stream closed once it came; a stream that
// stays open and quiet as long is closed too, and is one.
func (s *streamable) noRequestStream(ctx context.Context, x *exchange, data []byte) error {
	if !x.stop() {
		x.close()
		return ctx.Err()
	}
	sctx, cancel := context.WithCancel(s.b.ctx)
	x.stop = context.AfterFunc(sctx, x.cancel)
	status := x.resp.StatusCode
	if !s.b.spawn(func() {
		defer cancel()
		t := time.AfterFunc(emptyStreamWait, cancel)
		var one [1]byte
		n, _ := io.ReadAtLeast(x.resp.Body, one[:], 1)
		quiet := !t.Stop()
		x.close()
		switch {
		case s.b.ctx.Err() != nil:
		case n == 0 && !quiet:
			// Ended (or broken) before anything came: no body.
			s.acceptedEmpty(data, status)
		case n == 0:
			s.noRequestBody(data, status, "an SSE stream (text/event-stream)",
				fmt.Sprintf("it sent nothing for %s without ending, and mcpx closed it", emptyStreamWait))
		default:
			s.noRequestBody(data, status, "an SSE stream (text/event-stream)", "mcpx closed it unread")
		}
	}) {
		cancel()
		x.close()
		return ErrClosed
	}
	return nil
}

// carried says what an outgoing frame that holds no request carries, for
// people: "a notification", "a response", or (a batch of 2025-03-26)
// "notifications", "responses", or "notifications and responses".
func carried(data []byte) string {
	msgs, _, _ := jsonrpc.DecodeFrame(data)
	var notes, answers int
	for _, m := range msgs {
		if m.IsResponse() {
			answers++
		} else {
			notes++
		}
	}
	switch {
	case answers == 0 && notes <= 1:
		return "a notification"
	case notes == 0 && answers == 1:
		return "a response"
	case notes == 0:
		return "responses"
	case answers == 0:
		return "notifications"
	}
	return "notifications and responses"
}

// notJSON says what is wrong with body, a JSON answer that holds no
// message: that it is no JSON at all, or more than one JSON value (a
// server writing newline-delimited messages, as over stdio, whose first
// may be the very response that was missed), or invalid JSON.
func notJSON(body []byte) string {
	t := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(body), []byte("\ufeff")))
	if len(t) == 0 || t[0] != '{' && t[0] != '[' {
		return "it is not JSON"
	}
	end := rawjson.SkipValue(t, 0)
	if rest := bytes.TrimSpace(t[min(end, len(t)):]); len(rest) > 0 && (rest[0] == '{' || rest[0] == '[') && json.Valid(t[:end]) {
		return "it holds more than one JSON value, but a response body is one JSON-RPC message"
	}
	return "it is not valid JSON"
}

// looksLikeSSE reports whether a body starts as an SSE stream does: with
// a comment or an event, data, id or retry field (and is therefore not
// JSON).
func looksLikeSSE(b []byte) bool {
	b = bytes.TrimLeft(b, "\ufeff")
	if len(b) > 0 && b[0] == ':' {
		return true
	}
	for _, f := range []string{"event:", "data:", "id:", "retry:"} {
		if bytes.HasPrefix(b, []byte(f)) {
			return true
		}
	}
	return false
}

// unanswered returns the ids (loose keys) that no response in data answers.
func unanswered(data []byte, ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	got := responseIDs(data)
	var missing []string
	for _, id := range ids {
		if !slices.Contains(got, id) {
			missing = append(missing, id)
		}
	}
	return missing
}

// streamState follows one logical SSE stream across reconnections.
type streamState struct {
	name   string
	method string // how the stream was first opened: POST or GET
	// pending holds the ids of the requests whose responses are still due
	// on this stream; nil for the GET stream. (A POST that carried no
	// request gets no stream that is read: see answeredNoRequest.)
	pending map[string]bool
	lastID  string
	// retry is the reconnection time the server set with a retry field
	// (retrySet), which may be 0: reconnect at once.
	retry    time.Duration
	retrySet bool
	// routed marks the response stream of a request sent with a Route
	// (2026-07-28): it carries no session and is never resumed.
	routed bool
	// cancel ends the stream, and any GET resuming it; mu guards pending,
	// which ForgetRequest changes too.
	cancel context.CancelFunc
	mu     sync.Mutex
}

// answered removes the requests data answers from those st owes, and
// reports whether it owes none any more.
func (st *streamState) answered(data []byte) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, id := range responseIDs(data) {
		delete(st.pending, id)
	}
	return len(st.pending) == 0
}

// settled removes request id (a loose key), whose response was dropped
// for its size and the request failed, from those st owes, and reports
// whether it owes none any more.
func (st *streamState) settled(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.pending, id)
	return len(st.pending) == 0
}

// owed returns the ids of the requests st still owes a response.
func (st *streamState) owed() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	ids := make([]string, 0, len(st.pending))
	for id := range st.pending {
		ids = append(ids, id)
	}
	return ids
}

// errAnswered ends reading a POST stream once every response arrived.
var errAnswered = errors.New("all responses arrived")

// consume reads SSE events from resp and delivers their frames. It returns
// how many events arrived and why reading stopped.
func (s *streamable) consume(resp *http.Response, st *streamState, method string) (int, error) {
	p := newSSEReaderLimit(resp.Body, st.lastID, s.b.opts.MaxMessageSize)
	// An event over the limit is that message's loss, not the stream's:
	// a notification or a request of the server's, on the stream of a
	// POST too, is dropped as over stdio, and the response it owes still
	// comes (see skippedOnPost).
	p.skipEvents()
	n := 0
	keep := func() {
		st.lastID = p.LastEventID()
		if r, ok := p.Retry(); ok {
			st.retry, st.retrySet = r, true
		}
	}
	defer keep()
	var attributed bool // (see SkippedMessageError.report)
	for {
		ev, err := p.Next()
		var sk *SkippedMessageError
		if errors.As(err, &sk) {
			if sk.End {
				n++
				keep()
			}
			answered := false
			if st.pending != nil && !sk.End {
				var stop error
				if answered, stop = skippedOnPost(sk, st); stop != nil {
					return n, stop
				}
			}
			s.b.skipped(sk, fmt.Sprintf("SSE %s (%s %s): ", st.name, method, s.shown), &attributed)
			if answered {
				return n, errAnswered
			}
			continue
		}
		if err != nil {
			return n, err
		}
		n++
		keep()
		meta := &Meta{HTTPMethod: method, URL: s.url, HTTPStatus: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
			SessionID: s.SessionID(), StreamID: st.name}
		if ev.HasID {
			meta.EventID = ev.ID
		}
		if len(ev.Data) == 0 {
			// A priming event: an id (and perhaps retry) to resume from.
			text := fmt.Sprintf("SSE %s: event id=%q with no data (priming)", st.name, ev.ID)
			if st.retrySet {
				text += fmt.Sprintf(", retry %s", st.retry)
			}
			r, _ := p.Retry()
			s.b.observeStream(text, meta, r)
			continue
		}
		if ev.Type != "message" {
			s.b.note("SSE %s: ignored an event of type %q", st.name, ev.Type)
			continue
		}
		if !s.b.deliver(Frame{Data: ev.Data, Meta: meta}) {
			return n, ErrClosed
		}
		if st.pending != nil && st.answered(ev.Data) {
			return n, errAnswered
		}
	}
}

// skippedOnPost judges a message dropped for its size on a stream that
// owes responses (a POST's): one that may be a response whose id was not
// read ends the stream with stop, failing the requests it owes (which
// would otherwise wait for a response already gone: resuming would not
// send it again); a response whose id was read settles that request,
// answered reporting whether the stream owes none any more.
func skippedOnPost(sk *SkippedMessageError, st *streamState) (answered bool, stop error) {
	info := sk.info()
	switch {
	case info.unattributed(sk) && sk.Field != nil:
		return false, sk.Field
	case info.unattributed(sk):
		return false, &FrameTooLargeError{What: sk.What, Limit: sk.Limit}
	case info.ID != "":
		return st.settled(info.ID), nil
	}
	return false, nil
}

func (s *streamable) maxReconnects() int { return s.b.maxReconnects() }

// maxReconnects caps consecutive failed attempts to open a broken SSE
// stream again (HTTPOptions.MaxReconnects).
func (b *httpBase) maxReconnects() int {
	if b.opts.MaxReconnects > 0 {
		return b.opts.MaxReconnects
	}
	return 5
}

// minRetry is the shortest wait before reconnecting that a server's retry
// field gets: a server that meant seconds (retry: 3), set 1 ms or 0 had
// mcpx reopen its stream hundreds of times a second for as long as the
// session lasted. Waiting longer than retry is the client's to choose
// (WHATWG HTML, "Server-sent events": the user agent may wait some more);
// it still waits at least what the server asked (spec 2025-11-25:
// basic/transports, "Sending Messages to the Server").
const minRetry = 100 * time.Millisecond

// maxRetryWait is the longest reconnection time (a retry field) mcpx
// waits out before resuming a stream that still owes responses, or
// reopening the GET stream. The client must wait at least what the server
// asked (spec 2025-11-25: basic/transports, "Sending Messages to the
// Server"), and a server that asks for more than an hour (retry:
// 2000000000 is 23 days) had the request sit until its timeout with no
// word of why, and watch wait on a stream that was not there: the
// requests are given up at once instead, and the GET stream ended for
// good, saying what the server asked.
const maxRetryWait = time.Hour

func (s *streamable) delay(st *streamState) time.Duration {
	if st.retrySet {
		return max(st.retry, minRetry)
	}
	if s.b.opts.ReconnectDelay > 0 {
		return s.b.opts.ReconnectDelay
	}
	return time.Second
}

// errNotSSE marks a GET answered 200 with something other than an SSE
// stream: asking again would get the same.
var errNotSSE = errors.New("not an SSE stream")

// retryable reports whether a GET that failed to open (or resume) an SSE
// stream may succeed if tried again: a network failure, a server error
// (5xx), 408 or 429. A refusal (another 4xx, 401 and 403 once the
// Authorizer gave up, a refused redirect), an ended session or an answer
// that is no SSE stream would only be repeated.
func retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status >= 500 || he.Status == http.StatusRequestTimeout || he.Status == http.StatusTooManyRequests
	}
	return !errors.Is(err, ErrUnauthorized) && !errors.Is(err, ErrSessionExpired) &&
		!errors.Is(err, ErrRedirect) && !errors.Is(err, errNotSSE)
}

// causeText is err's message without the "transport failure: " it starts
// with when it wraps ErrTransport, for quoting it inside the message of
// another transport failure.
func causeText(err error) string {
	return strings.TrimPrefix(err.Error(), ErrTransport.Error()+": ")
}

// streamLost is the error of requests whose response stream ended before
// their responses and cannot go on: it matches ErrStreamLost (so
// ErrTransport) and cause, which it quotes after what happened.
func streamLost(cause error, format string, args ...any) error {
	msg := ErrStreamLost.Error() + ": " + fmt.Sprintf(format, args...)
	errs := []error{ErrStreamLost}
	if cause != nil {
		msg += ": " + causeText(cause)
		errs = append(errs, cause)
	}
	return &messageError{msg: RedactURLs(msg), errs: errs}
}

// runPostStream reads a POST's SSE stream until every response it owes has
// arrived. When the stream breaks first, it resumes it with GET and
// Last-Event-ID after the server's retry delay (spec 2025-11-25:
// basic/transports, "Resumability and Redelivery"), never re-sending the
// request. When it cannot, the requests still owed a response on this
// stream are lost (see LossReporter), each with an error matching
// ErrStreamLost that says why; the session and every other request carry
// on: a stream that cannot be resumed is that stream's loss, and the
// spec's redelivery is per stream ("on the stream that was disconnected").
//
// ctx ends the stream: the connection closed, or the requests it owed
// were forgotten (ForgetRequest); it then ends quietly.
func (s *streamable) runPostStream(ctx context.Context, x *exchange, st *streamState) {
	failures := 0
	method := "POST"
	var last error // why the last attempt to resume failed
	for {
		n, err := s.consume(x.resp, st, method)
		x.release()
		if errors.Is(err, errAnswered) || ctx.Err() != nil {
			return
		}
		if n > 0 {
			failures, last = 0, nil
		}
		if st.pending == nil {
			// Nothing was owed.
			return
		}
		what := "the SSE stream answering POST " + s.shown
		if st.routed {
			what = "the response stream of POST " + s.shown
		}
		why := "ended"
		switch {
		case err != nil && !errors.Is(err, io.EOF):
			why = "broke (" + causeText(err) + ")"
		case method == "GET" && n == 0:
			why = "ended again as soon as it was resumed, with no event"
		}
		if errors.Is(err, ErrFrameTooLarge) {
			// Resuming would only send the same event again.
			s.lost(st, streamLost(err, "%s", what))
			return
		}
		if st.routed {
			// 2026-07-28 streams are not resumable: the requests still owed
			// a response are lost, the connection lives on (spec 2026-07-28:
			// basic/transports/streamable-http, "Receiving Messages").
			s.lost(st, streamLost(nil, "%s %s before the response arrived", what, why))
			return
		}
		if st.lastID == "" {
			s.lost(st, streamLost(nil, "%s %s before the response arrived, and the server gave no event id to resume it from", what, why))
			return
		}
		if c, bad := unsendable(st.lastID); bad {
			// Every attempt would fail in net/http before it left.
			s.lost(st, streamLost(nil, "%s %s before the response arrived, and the server's event id %s cannot be sent back to resume it: a Last-Event-ID header cannot hold its byte 0x%02x",
				what, why, QuoteExcerpt(st.lastID), c))
			return
		}
		for {
			failures++
			if failures > s.maxReconnects() {
				msg := fmt.Sprintf("%s %s before the response arrived; gave up resuming it after %d attempts", what, why, s.maxReconnects())
				if last != nil {
					s.lost(st, streamLost(last, "%s; the last attempt", msg))
				} else {
					s.lost(st, streamLost(nil, "%s", msg))
				}
				return
			}
			if st.retrySet && st.retry > maxRetryWait {
				s.lost(st, streamLost(nil, "%s %s before the response arrived, and the server asked to wait %s before resuming it (retry: %d); mcpx waits at most %s",
					what, why, st.retry, st.retry.Milliseconds(), maxRetryWait))
				return
			}
			d := s.delay(st)
			s.b.note("SSE %s %s before the response; resuming in %s with GET Last-Event-ID: %s (attempt %d of %d)",
				st.name, why, d, Excerpt(st.lastID), failures, s.maxReconnects())
			if !sleepCtx(ctx, d) {
				return
			}
			nx, err := s.get(ctx, st.lastID)
			if err == nil {
				x, method, last = nx, "GET", nil
				break
			}
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, ErrSessionExpired) {
				// The server ended the session: the response is lost, the
				// connection is not. The next request still carries the
				// session id, is answered 404, and starts a new session,
				// as the client must (spec 2025-11-25: basic/transports,
				// "Session Management"); failing the connection left a
				// long-lived session (the REPL, mcpx connect) dead.
				s.lost(st, streamLost(err, "%s %s before the response arrived, and resuming it found the session ended", what, why))
				return
			}
			if !retryable(err) {
				s.lost(st, streamLost(err, "%s %s before the response arrived, and resuming it failed", what, why))
				return
			}
			last = err
			why = "could not be resumed"
		}
	}
}

// unsendable returns the first byte of v that an HTTP header field value
// cannot hold, a control character other than tab (RFC 9110 section 5.5;
// net/http refuses to send it), and whether there is one. An SSE event id
// may hold any of them but NUL (HTML, "Server-sent events"), and the
// Last-Event-ID header that resumes the stream after it cannot carry one.
func unsendable(v string) (byte, bool) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return c, true
		}
	}
	return 0, false
}

// get opens an SSE stream with GET, resuming after lastID when it is set.
// The stream stays bound to ctx. Statuses other than 200 with text/event-stream are errors: *HTTPError
// (405 means the server offers no such stream), a session expiry for 404
// with a session id.
func (s *streamable) get(ctx context.Context, lastID string) (*exchange, error) {
	// What the stream carries is taken for the server's own messages, or
	// for the responses to mcpx's requests: another origin, which got no
	// credentials and knows nothing of the session, must not speak for
	// the server (as over HTTP+SSE: see legacySSE.resolve). Its redirect
	// there is refused, not followed. The mark is the request's alone:
	// what the Authorizer fetches with ctx when the stream is refused
	// 401 (metadata, a token) follows the usual rules.
	req, err := s.b.newRequest(SameOriginOnly(ctx, "mcpx takes the server's messages only from the origin it connected to"), http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	sid := s.setHeaders(req)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	x, err := s.b.send(ctx, req)
	if err != nil {
		return nil, err
	}
	status := x.resp.StatusCode
	switch {
	case status == http.StatusNotFound && sid != "" && lastID != "":
		x.close()
		return nil, &sessionExpiredError{method: "GET", url: s.url, id: sid}
	case status != http.StatusOK:
		e := s.b.httpError("GET", s.url, x.resp, x.bodyExcerpt())
		e.SessionID = sid
		x.close()
		return nil, e
	case mediaType(x.resp) != "text/event-stream":
		e := &messageError{
			msg: fmt.Sprintf("%v: GET %s: the server answered with Content-Type %s, not text/event-stream",
				ErrTransport, s.shown, QuoteExcerpt(x.resp.Header.Get("Content-Type"))),
			errs: []error{ErrTransport, errNotSSE},
		}
		x.close()
		return nil, e
	}
	if sid != "" {
		if v := x.resp.Header.Get("Mcp-Session-Id"); v != "" {
			s.sessionChanged("GET", sid, v)
		}
	}
	return x, nil
}

// Negotiated is told the protocol version the session agreed on: later
// requests carry it as MCP-Protocol-Version (from 2025-06-18), and the GET
// stream for server-initiated messages is opened before this returns, so
// that nothing the server sends early is lost (spec: basic/transports,
// "Listening for Messages from the Server").
func (s *streamable) Negotiated(ctx context.Context, version string) error {
	s.mu.Lock()
	if versionHeader(version) {
		s.version = version
	} else {
		s.version = ""
	}
	hold := s.holdGet
	s.mu.Unlock()
	if hold {
		return nil
	}
	return s.openGet(ctx)
}

// openGet opens the GET stream for server-initiated messages, replacing
// the one open, and returns once the server answered its headers. A
// server that offers none (405) or refuses it is noted, not an error.
func (s *streamable) openGet(ctx context.Context) error {
	s.mu.Lock()
	if s.getCancel != nil {
		s.getCancel()
		s.getCancel = nil
	}
	s.mu.Unlock()

	x, err := s.get(ctx, "")
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrClosed) {
			return err
		}
		var he *HTTPError
		if errors.As(err, &he) && he.Status == http.StatusMethodNotAllowed {
			s.b.note("the server offers no GET stream for server-initiated messages (HTTP 405)")
		} else if !s.refusedElsewhere(err) {
			s.b.note("no GET stream for server-initiated messages: %v", err)
		}
		s.mu.Lock()
		s.getErr = err
		s.mu.Unlock()
		return nil
	}
	s.mu.Lock()
	s.getErr = nil
	s.mu.Unlock()
	// Rebind the stream from the caller's context to one that lives until
	// the session ends (or is replaced).
	if !x.stop() {
		x.close()
		return ctx.Err()
	}
	st := &streamState{name: s.nextStream("get"), method: "GET"}
	streamCtx, cancel := context.WithCancel(s.b.ctx)
	x.stop = context.AfterFunc(streamCtx, x.cancel)
	s.mu.Lock()
	s.getCancel = cancel
	s.mu.Unlock()
	if !s.b.spawn(func() {
		defer cancel()
		s.runGetStream(streamCtx, x, st)
	}) {
		cancel()
		x.close()
		return ErrClosed
	}
	return nil
}

// runGetStream reads the GET stream for as long as the connection lives,
// reconnecting (with Last-Event-ID when the server gave event ids) when
// the server closes it; it stops quietly when the server refuses.
func (s *streamable) runGetStream(ctx context.Context, x *exchange, st *streamState) {
	// ctx is a child of the connection's context, as is the stream's
	// request: on Close the request may hear first, and the stream broke
	// then because the connection is closing, which is no news.
	ended := func() bool { return ctx.Err() != nil || s.b.ctx.Err() != nil }
	failures := 0
	for {
		n, err := s.consume(x.resp, st, "GET")
		x.release()
		if ended() {
			return
		}
		if n > 0 {
			failures = 0
		}
		if errors.Is(err, ErrFrameTooLarge) {
			// An SSE line (an id, event or retry field) too long to
			// parse: resuming would only send it again, and the stream
			// cannot be read past it. (An event whose data is over the
			// limit is skipped: see consume.)
			s.b.fail(fmt.Errorf("%w: the SSE stream GET %s: %w", ErrTransport, s.shown, err))
			return
		}
		why := "ended"
		if err != nil && !errors.Is(err, io.EOF) {
			why = "broke (" + causeText(err) + ")"
		}
		for {
			failures++
			if failures > s.maxReconnects() {
				s.b.note("SSE %s (GET stream) %s; gave up reconnecting after %d attempts", st.name, why, s.maxReconnects())
				s.getEnded(fmt.Errorf("%w: the GET stream for server-initiated messages %s; gave up reconnecting after %d attempts", ErrTransport, why, s.maxReconnects()))
				return
			}
			if st.retrySet && st.retry > maxRetryWait {
				// Waiting that long would look like a stream that stays
				// open and quiet: the watch ends, saying why.
				s.b.note("SSE %s (GET stream) %s, and the server asked to wait %s before reconnecting (retry: %d); mcpx waits at most %s",
					st.name, why, st.retry, st.retry.Milliseconds(), maxRetryWait)
				s.getEnded(fmt.Errorf("%w: the GET stream for server-initiated messages %s, and the server asked to wait %s before reconnecting (retry: %d); mcpx waits at most %s",
					ErrTransport, why, st.retry, st.retry.Milliseconds(), maxRetryWait))
				return
			}
			d := s.delay(st)
			s.b.note("SSE %s (GET stream) %s; reconnecting in %s", st.name, why, d)
			if !sleepCtx(ctx, d) {
				return
			}
			if c, bad := unsendable(st.lastID); bad {
				s.b.note("SSE %s (GET stream): the server's event id %s cannot be sent back (a Last-Event-ID header cannot hold its byte 0x%02x); reconnecting without it, so what the server sent meanwhile is not redelivered",
					st.name, QuoteExcerpt(st.lastID), c)
				st.lastID = ""
			}
			nx, err := s.get(ctx, st.lastID)
			if err == nil {
				x = nx
				break
			}
			if ended() {
				return
			}
			if !retryable(err) {
				if !s.refusedElsewhere(err) {
					s.b.note("SSE %s (GET stream) %s and could not be reopened: %s", st.name, why, causeText(err))
				}
				var he *HTTPError
				if errors.As(err, &he) && he.Status == http.StatusNotFound && he.SessionID != "" {
					// The stream was open in this session a moment ago:
					// the URL takes GETs, so the server ended the session.
					s.forgetSession(he.SessionID)
					err = &sessionExpiredError{method: "GET", url: s.url, id: he.SessionID}
				}
				s.getEnded(err)
				return
			}
			why = "could not be reopened (" + causeText(err) + ")"
		}
	}
}

// refusedElsewhere reports whether err is the refusal of the GET
// stream's redirect to another origin (see get), and tells the person,
// once a connection, whatever the verbosity (EventDropped: the server's
// own messages will not arrive, which a note shown only with -v hid):
// the session goes on without the stream, its requests answered on
// their POSTs.
func (s *streamable) refusedElsewhere(err error) bool {
	var re *RedirectError
	if !errors.As(err, &re) || !re.elsewhere {
		return false
	}
	if s.firstTime(&s.elsewhereSaid) {
		s.b.observe(EventDropped, fmt.Sprintf("the server redirected its GET stream for messages of its own (GET %s) to %s, on another origin; mcpx takes the server's messages only from the origin it connected to, so this session goes on without that stream: only what comes with the answers to mcpx's requests arrives",
			s.shown, ShortURL(re.To)), nil)
	}
	return true
}

// firstTime sets *said (one of the flags of what is told once a
// connection: changeSaid, emptySaid, elsewhereSaid) and reports whether
// it was not set before.
func (s *streamable) firstTime(said *bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := *said
	*said = true
	return !was
}

// getEnded tells the session that the GET stream ended for good (see
// ServerStreamEndReporter).
func (s *streamable) getEnded(err error) {
	s.mu.Lock()
	fn := s.onGetEnd
	s.mu.Unlock()
	if fn != nil {
		fn(err)
	}
}

// OnServerStreamEnd registers fn to learn that the GET stream ended for
// good (see ServerStreamEndReporter).
func (s *streamable) OnServerStreamEnd(fn func(error)) {
	s.mu.Lock()
	s.onGetEnd = fn
	s.mu.Unlock()
}

// deleteSession ends the session on the server (spec: basic/transports,
// "Session Management"); 405 means the server does not allow it, which is
// fine. It runs on its own short deadline, after the streams are closed.
// Its redirect to another origin is refused (SameOriginOnly): the session
// is the first origin's, and another one, which would get neither the
// session id nor the credentials, has none of it to end.
func (s *streamable) deleteSession() {
	id, _ := s.session()
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// (The mark is the request's alone: see get.)
	req, err := s.b.newRequest(SameOriginOnly(ctx, "mcpx ends a session only at the origin that began it"), http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	s.setHeaders(req)
	if err := s.b.authorize(ctx, req); err != nil {
		return
	}
	s.b.observe(EventHTTP, "DELETE "+s.url+" ("+headerSummary(req.Header, nil, dedupe(wireHeaders)...)+")",
		&Meta{HTTPMethod: "DELETE", URL: s.url, SessionID: id})
	resp, err := s.b.client.Do(req)
	if err != nil {
		s.b.note("DELETE %s (ending session %s) failed: %v", s.url, id, err)
		return
	}
	s.b.observe(EventHTTP, fmt.Sprintf("%s ← DELETE %s", resp.Status, s.url),
		&Meta{HTTPMethod: "DELETE", URL: s.url, HTTPStatus: resp.StatusCode, SessionID: id})
	io.CopyN(io.Discard, resp.Body, 4096)
	resp.Body.Close()
}

// markRouted remembers ids as requests of the stateless style.
func (s *streamable) markRouted(ids []string) {
	if len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.routedSeen == nil || len(s.routedSeen) > 10000 {
		s.routedSeen = map[string]bool{}
	}
	for _, id := range ids {
		s.routedSeen[id] = true
	}
}

// trackRouted registers the open response stream of routed requests.
func (s *streamable) trackRouted(ids []string, cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.routed == nil {
		s.routed = map[string]context.CancelFunc{}
	}
	for _, id := range ids {
		s.routed[id] = cancel
	}
}

func (s *streamable) untrackRouted(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.routed, id)
	}
}

// cancelRouted closes the response stream of routed request id, which is
// how 2026-07-28 Streamable HTTP cancels it (spec 2026-07-28:
// basic/transports/streamable-http, "Cancellation").
func (s *streamable) cancelRouted(id string) bool {
	s.mu.Lock()
	cancel, open := s.routed[id]
	seen := s.routedSeen[id]
	if open {
		delete(s.routed, id)
	}
	s.mu.Unlock()
	if open {
		cancel()
	}
	return open || seen
}

// lost reports the requests a stream still owed as lost.
func (s *streamable) lost(st *streamState, err error) {
	s.b.reportLost(st.owed(), err)
}

// follow registers st as the stream that owes requests ids a response.
func (s *streamable) follow(ids []string, st *streamState) {
	if len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.following == nil {
		s.following = map[string]*streamState{}
	}
	for _, id := range ids {
		s.following[id] = st
	}
}

// unfollow drops the registrations of st, once it ended.
func (s *streamable) unfollow(ids []string, st *streamState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.following[id] == st {
			delete(s.following, id)
		}
	}
}

// forgetRequest stops waiting for the response to request id: the stream
// that owes it is closed, and no longer resumed, once it owes no other
// request a response (see RequestForgetter).
func (s *streamable) forgetRequest(id string) {
	s.mu.Lock()
	st := s.following[id]
	delete(s.following, id)
	s.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	delete(st.pending, id)
	done := len(st.pending) == 0
	st.mu.Unlock()
	if done {
		st.cancel()
	}
}

// awaiting says which stream owes the response to request id, "" when
// none does (see AnswerAwaiter).
func (s *streamable) awaiting(id string) string {
	s.mu.Lock()
	st := s.following[id]
	s.mu.Unlock()
	if st == nil || st.method != http.MethodPost {
		return ""
	}
	return fmt.Sprintf("the server answered POST %s with an SSE stream, but has sent no response on it", s.shown)
}

// answersAny reports whether a frame holds a response to one of ids.
func answersAny(data []byte, ids []string) bool {
	for _, got := range responseIDs(data) {
		for _, id := range ids {
			if got == id {
				return true
			}
		}
	}
	return false
}

func mediaTypeOf(ct string) string {
	return mediaType(&http.Response{Header: http.Header{"Content-Type": []string{ct}}})
}
