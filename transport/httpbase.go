package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// httpBase is what the Streamable HTTP and HTTP+SSE transports share: the
// HTTP client, the queue of incoming frames that Read drains, the fatal
// error that ends the connection, and the goroutines that Close waits for.
type httpBase struct {
	opts   HTTPOptions
	client *http.Client
	// sock is the socket or pipe of a unix:// or pipe:// URL, nil for
	// an http:// or https:// one: requests go to its requestURL.
	sock  *socketEndpoint
	ownTr *http.Transport // dropped on Close when we built it

	ctx    context.Context // ends every request and stream on Close
	cancel context.CancelFunc

	inbox chan inboxItem
	ahead *readAhead // bounds the bytes of the frames in inbox
	// onLost learns about lost requests (see LossReporter), called from
	// read in the order of the frames, so that everything that arrived for
	// a request is handled before its loss is.
	lostMu sync.Mutex
	onLost func(id string, err error)
	// onDropped answers the server's requests dropped for their size (see
	// DropReporter), called from read like onLost.
	onDropped func(id jsonrpc.ID, method string, err error)
	// onDepart learns about the server's departures the connection reads
	// past (see DepartureReporter).
	onDepart func(kind, msg string)

	failOnce sync.Once
	failErr  error
	failed   chan struct{}

	goMu   sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func newHTTPBase(opts HTTPOptions) (*httpBase, error) {
	client, own, err := newHTTPClient(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &httpBase{
		opts:   opts,
		client: client,
		sock:   socketOf(opts.URL),
		ownTr:  own,
		ctx:    ctx,
		cancel: cancel,
		inbox:  make(chan inboxItem, 64),
		ahead:  newReadAhead(opts.MaxMessageSize),
		failed: make(chan struct{}),
	}, nil
}

// observe reports an event, with the secrets of the URLs in its text
// redacted (Meta keeps the URL as sent, for a recorder to judge).
func (b *httpBase) observe(kind EventKind, text string, meta *Meta) {
	if b.opts.Observer != nil {
		b.opts.Observer(Event{Time: time.Now(), Kind: kind, Text: RedactURLs(text), Meta: meta})
	}
}

// observeStream reports SSE stream metadata that carries no frame.
func (b *httpBase) observeStream(text string, meta *Meta, retry time.Duration) {
	if b.opts.Observer != nil {
		b.opts.Observer(Event{Time: time.Now(), Kind: EventStream, Text: RedactURLs(text), Meta: meta, Retry: retry})
	}
}

func (b *httpBase) note(format string, args ...any) {
	b.observe(EventNote, fmt.Sprintf(format, args...), nil)
}

// depart reports a departure of the server's from the transport's rules
// that the connection reads past, of the sort kind (see
// DepartureReporter); a note when nobody listens.
func (b *httpBase) depart(kind, format string, args ...any) {
	msg := RedactURLs(fmt.Sprintf(format, args...))
	b.lostMu.Lock()
	fn := b.onDepart
	b.lostMu.Unlock()
	if fn == nil {
		b.note("%s", msg)
		return
	}
	fn(kind, msg)
}

// spawn runs fn in a goroutine that Close waits for. It reports false (and
// does not run fn) once the connection is closing.
func (b *httpBase) spawn(fn func()) bool {
	b.goMu.Lock()
	defer b.goMu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn()
	}()
	return true
}

// shutdown stops new goroutines, ends every request and stream, and waits
// for the goroutines to finish. It reports false when already shut down.
func (b *httpBase) shutdown() bool {
	b.goMu.Lock()
	if b.closed {
		b.goMu.Unlock()
		return false
	}
	b.closed = true
	b.goMu.Unlock()
	b.cancel()
	b.wg.Wait()
	return true
}

func (b *httpBase) isClosed() bool {
	b.goMu.Lock()
	defer b.goMu.Unlock()
	return b.closed
}

// release drops idle keep-alive connections of a client we built.
func (b *httpBase) release() {
	if b.ownTr != nil {
		b.ownTr.CloseIdleConnections()
	}
}

// inboxItem is a queued incoming frame, or (lost set) the point where
// requests were lost (see LossReporter), or (dropped set) where a request
// of the server's was dropped (see DropReporter), which Read reports in
// order and never returns.
type inboxItem struct {
	f       Frame
	lost    *lossEvent
	dropped *dropEvent
}

// dropEvent is a queued DropReporter report.
type dropEvent struct {
	id     jsonrpc.ID
	method string
	err    error
}

// lossEvent is a queued LossReporter report.
type lossEvent struct {
	ids []string
	err error
}

// deliver queues a frame for Read. It reports false when the connection is
// closing.
func (b *httpBase) deliver(f Frame) bool {
	if !b.ahead.wait(b.ctx.Done()) {
		return false
	}
	b.ahead.add(len(f.Data))
	if !b.enqueue(inboxItem{f: f}) {
		b.ahead.take(len(f.Data))
		return false
	}
	return true
}

func (b *httpBase) enqueue(it inboxItem) bool {
	select {
	case b.inbox <- it:
		return true
	case <-b.ctx.Done():
		return false
	}
}

// fail ends the connection with err: Read returns it once the frames that
// arrived before are drained.
func (b *httpBase) fail(err error) {
	b.failOnce.Do(func() {
		b.failErr = err
		close(b.failed)
	})
}

func (b *httpBase) read(ctx context.Context) (Frame, error) {
	for {
		it, err := b.next(ctx)
		if err == nil && it.lost == nil && it.dropped == nil {
			b.ahead.take(len(it.f.Data))
		}
		if err != nil || it.lost == nil && it.dropped == nil {
			return it.f, err
		}
		b.lostMu.Lock()
		fn, dropped := b.onLost, b.onDropped
		b.lostMu.Unlock()
		if d := it.dropped; d != nil {
			if dropped != nil {
				dropped(d.id, d.method, d.err)
			}
			continue
		}
		for _, id := range it.lost.ids {
			if fn != nil {
				fn(id, it.lost.err)
			}
		}
	}
}

// next takes the next queued item.
func (b *httpBase) next(ctx context.Context) (inboxItem, error) {
	select {
	case it := <-b.inbox:
		return it, nil
	default:
	}
	select {
	case it := <-b.inbox:
		return it, nil
	case <-b.failed:
		select {
		case it := <-b.inbox:
			return it, nil
		default:
		}
		return inboxItem{}, b.failErr
	case <-b.ctx.Done():
		return inboxItem{}, ErrClosed
	case <-ctx.Done():
		return inboxItem{}, ctx.Err()
	}
}

// reportLost queues the loss of requests ids behind the frames that
// arrived before it. Without a LossReporter listener the connection fails.
func (b *httpBase) reportLost(ids []string, err error) {
	b.lostMu.Lock()
	fn := b.onLost
	b.lostMu.Unlock()
	if fn == nil {
		b.fail(err)
		return
	}
	b.enqueue(inboxItem{lost: &lossEvent{ids: ids, err: err}})
}

// skipped reports an incoming message dropped for its size (an SSE event
// over the limit, read past; see SkippedMessageError.report): when it is a
// response whose id it gives (wherever it is: see memberScanner), the
// loss of that request (see reportLost; with no listener for losses,
// the connection fails); when it is a request of the server's whose id
// it gives, the point where it
// is to be answered (see DropReporter); any other message (a
// notification) is told of, prefixed with where it came, as over stdio
// (EventDropped: not only with --wire or -v, as notes are); the
// connection goes on. attributed is the stream's own (report).
func (b *httpBase) skipped(sk *SkippedMessageError, where string, attributed *bool) {
	b.lostMu.Lock()
	listening := b.onDropped != nil
	b.lostMu.Unlock()
	var refuse func(id jsonrpc.ID, method string, err error)
	if listening {
		refuse = func(id jsonrpc.ID, method string, err error) {
			b.enqueue(inboxItem{dropped: &dropEvent{id: id, method: method, err: err}})
		}
	}
	sk.report(attributed,
		func(kind EventKind, text string) { b.observe(kind, where+text, nil) },
		func(id string, err error) { b.reportLost([]string{id}, err) },
		refuse)
}

// exchange is one HTTP request whose response headers have arrived.
type exchange struct {
	resp *http.Response
	// secrets are the credentials the request carried (see
	// requestSecrets), for an error answer that quotes them; nil for a
	// successful one.
	secrets []string
	// cancel aborts the request and its body.
	cancel context.CancelFunc
	// stop detaches the request from the caller's context, so that its body
	// can be read after the caller returned; false means the caller's
	// context already ended it.
	stop func() bool
}

// release closes the body and lets go of the request.
func (x *exchange) release() {
	x.resp.Body.Close()
	x.stop()
	x.cancel()
}

// bodyExcerpt is a short excerpt of an error answer's body for its
// error message (see bodyExcerpt), without the credentials the request
// carried should the server quote them.
func (x *exchange) bodyExcerpt() string {
	return bodyExcerpt(x.resp, x.secrets)
}

// excerpt is excerptBody of body, the error answer's body (complete:
// read to its end), without the credentials the request carried.
func (x *exchange) excerpt(body []byte, complete bool) string {
	return excerptBody(redactBody(body, complete, x.secrets), mediaType(x.resp))
}

// close closes the body and releases the request. A short body of known
// length is drained first so the connection can be reused; a stream is
// not (draining it could block).
func (x *exchange) close() {
	if n := x.resp.ContentLength; n >= 0 && n <= 4096 {
		io.CopyN(io.Discard, x.resp.Body, n)
	}
	x.release()
}

// newRequest builds a request with the headers every request carries: the
// user's extra headers, User-Agent and credentials.
func (b *httpBase) newRequest(ctx context.Context, method, u string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	target := u
	if b.sock != nil {
		var err error
		if target, err = b.sock.requestURL(u); err != nil {
			return nil, &redactedError{err: fmt.Errorf("%s %s: %w", method, u, err)}
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, target, r)
	if err != nil {
		return nil, &redactedError{err: fmt.Errorf("%s %s: %w", method, u, err)}
	}
	if b.opts.UserAgent != "" {
		req.Header.Set("User-Agent", b.opts.UserAgent)
	}
	for k, vs := range b.opts.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return req, nil
}

// authorize sets the Authorization header from the Authorizer, or lets a
// RequestAuthorizer set the credential headers of req.
func (b *httpBase) authorize(ctx context.Context, req *http.Request) error {
	if b.opts.Authorizer == nil {
		return nil
	}
	if ra, ok := b.opts.Authorizer.(RequestAuthorizer); ok {
		if err := ra.AuthorizeRequest(ctx, req); err != nil {
			return fmt.Errorf("%w: %s %s: obtaining credentials: %w", ErrUnauthorized, req.Method, RedactURL(req.URL.String()), err)
		}
		return nil
	}
	v, err := b.opts.Authorizer.Authorization(ctx)
	if err != nil {
		return fmt.Errorf("%w: %s %s: obtaining credentials: %w", ErrUnauthorized, req.Method, RedactURL(req.URL.String()), err)
	}
	if v != "" {
		req.Header.Set("Authorization", v)
	}
	return nil
}

// shown is the URL of a request as mcpx shows and records it: as
// given, which for a server on a socket is its unix:// or pipe:// URL,
// not the http://localhost one sent over it (socketEndpoint.socketURL).
func (b *httpBase) shown(u *url.URL) string {
	if b.sock != nil {
		return b.sock.shown(u)
	}
	return u.String()
}

// answeredBy is answeredBy(resp) named as shown names URLs.
func (b *httpBase) answeredBy(resp *http.Response) string {
	if answeredBy(resp) == "" {
		return ""
	}
	return b.shown(resp.Request.URL)
}

// httpError is newHTTPError, with the URL that answered after redirects
// named as shown names URLs.
func (b *httpBase) httpError(method, url string, resp *http.Response, body string) *HTTPError {
	e := newHTTPError(method, url, resp, body)
	e.AnsweredBy = b.answeredBy(resp)
	return e
}

// wireHeaders are the request headers shown in --wire output.
var wireHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Authorization", "DPoP", "Cookie"}

// maxAuthRetries caps how often one request is sent again because the
// Authorizer asked for it: enough for a 401 (authorize) followed by a 403
// (step-up to more scopes), never an endless loop with a server that keeps
// refusing.
const maxAuthRetries = 3

// send performs req (built by newRequest with any context; it is rebound
// here, keeping a mark of SameOriginOnly) until its response headers arrive. The request lives on the
// connection's context, and the caller's ctx aborts it until the returned
// exchange is stopped. 401 and 403 come back as *UnauthorizedError once
// the Authorizer declines to retry (or after maxAuthRetries retries); other
// statuses are for the caller to judge.
func (b *httpBase) send(ctx context.Context, req *http.Request) (*exchange, error) {
	for attempt := 0; ; attempt++ {
		reqCtx, cancel := context.WithCancel(b.ctx)
		if why := onlySameOrigin(req.Context()); why != "" {
			reqCtx = SameOriginOnly(reqCtx, why)
		}
		stop := context.AfterFunc(ctx, cancel)
		r := req.WithContext(reqCtx)
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				stop()
				cancel()
				return nil, err
			}
			r.Body = body
		}
		if err := b.authorize(ctx, r); err != nil {
			stop()
			cancel()
			return nil, err
		}
		extra := append(append(append([]string(nil), wireHeaders...), routeHeaderNames(r.Header)...), extraHeaderNames(b.opts.Header)...)
		shown := b.shown(r.URL)
		text := r.Method + " " + shown
		if h := headerSummary(r.Header, b.opts.Header, dedupe(extra)...); h != "" {
			text += " (" + h + ")"
		}
		b.observe(EventHTTP, text, &Meta{HTTPMethod: r.Method, URL: shown, SessionID: r.Header.Get("Mcp-Session-Id")})
		resp, err := b.client.Do(r)
		if err != nil {
			stop()
			cancel()
			if b.ctx.Err() != nil {
				return nil, ErrClosed
			}
			return nil, classifyDoError(ctx, r.Method, shown, err)
		}
		var secrets []string
		var body string
		if resp.StatusCode >= 300 {
			secrets = requestSecrets(r.Header, b.opts.Header, r.URL)
			if b.opts.Observer != nil {
				body = wireBody(resp, secrets)
			}
		}
		// The reason phrase and the type are the server's, at any length
		// a header may have.
		ct := resp.Header.Get("Content-Type")
		text = Excerpt(resp.Status)
		if ct != "" {
			text += " " + Excerpt(ct)
		}
		text += " ← " + r.Method + " " + shown
		redirected := resp.Request != nil && resp.Request.URL.String() != r.URL.String()
		if redirected {
			text += " (answered by " + ShortURL(b.shown(resp.Request.URL)) + ")"
		}
		if h := headerSummary(redactHeader(resp.Header, secrets), nil, "Mcp-Session-Id", "WWW-Authenticate", "DPoP-Nonce", "Set-Cookie"); h != "" {
			text += " (" + h + ")"
		}
		if body != "" {
			text += " body: " + body
		}
		b.observe(EventHTTP, text, &Meta{HTTPMethod: r.Method, URL: shown, HTTPStatus: resp.StatusCode,
			ContentType: ct, SessionID: resp.Header.Get("Mcp-Session-Id")})
		x := &exchange{resp: resp, secrets: secrets, cancel: cancel, stop: stop}
		if ce := undecoded(resp); ce != "" {
			x.close()
			return nil, fmt.Errorf("%w: %s %s: the server encoded its answer with Content-Encoding %s, which mcpx does not decode (it asks for gzip, or for no encoding)",
				ErrTransport, r.Method, RedactURL(shown), QuoteExcerpt(ce))
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			if aa, ok := b.opts.Authorizer.(AcceptedAuthorizer); ok && resp.StatusCode/100 == 2 && !(redirected && LeftOrigin(resp.Request)) {
				if h := r.Header.Get("Authorization"); h != "" {
					aa.Accepted(CredentialID(h))
				}
			}
			return x, nil
		}
		ue := &UnauthorizedError{
			Method:       r.Method,
			URL:          shown,
			AnsweredBy:   b.answeredBy(resp),
			Status:       resp.StatusCode,
			Challenge:    RedactSecrets(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), secrets),
			Body:         x.bodyExcerpt(),
			CredentialID: CredentialID(r.Header.Get("Authorization")),
			Header:       resp.Header.Clone(),
		}
		ue.Header.Del("Set-Cookie")
		x.close()
		if redirected && LeftOrigin(resp.Request) {
			// Another origin refused a redirected request that carried no
			// credentials (RedirectPolicy): new ones would not go there
			// either, so the Authorizer is not asked.
			ue.LeftOrigin = true
			return nil, ue
		}
		if b.opts.Authorizer == nil || attempt >= maxAuthRetries {
			return nil, ue
		}
		retry, err := b.opts.Authorizer.Unauthorized(ctx, ue)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ue, err)
		}
		if !retry {
			return nil, ue
		}
	}
}

// maxWireBody bounds the start of an error answer's body that --wire
// shows: enough for a server's message, a JSON error or the head of an
// error page, never a whole page of megabytes on one line.
const maxWireBody = 2 << 10

// wireBody returns, for --wire, the start of the body of resp, an error
// answer (3xx and above, which is all mcpx sees of what went wrong when
// the error message summarises it), and puts back what it read, so the
// body reads as it came. It is bounded (maxWireBody), its control
// characters escaped, the request's credentials (secrets) and whatever
// looks like one redacted (RedactCredentials, as in traces); a body cut
// short is never cut inside one of secrets. "" when the body is empty, or
// is a JSON-RPC response, which --wire shows as the frame it is.
func wireBody(resp *http.Response, secrets []string) string {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxWireBody+1))
	if len(raw) == 0 {
		return ""
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(raw), resp.Body), resp.Body}
	complete := len(raw) <= maxWireBody
	if complete && mediaType(resp) == "application/json" && len(responseIDs(raw)) > 0 {
		return ""
	}
	shown := redactBody(raw, complete, secrets)
	t := strings.TrimRight(RedactCredentials(string(shown)), "\r\n")
	c := cutAt(t, maxWireBody) // redaction may have made it longer
	out := escapeControls(c)
	switch {
	case complete && len(c) == len(t):
	case resp.ContentLength > 0:
		out += fmt.Sprintf("… (%d bytes)", resp.ContentLength)
	default:
		out += "…"
	}
	return out
}

// requestSecrets lists the credentials of a request, its headers h and
// its URL u: the values of the headers that --wire shows as [redacted]
// (see headerSummary: credentials, and the headers the user added, added,
// but MCP's and the standard ones that never carry one, plainHeader),
// and the token after the scheme of each ("Bearer TOKEN"); the URL's
// password and the Basic credentials net/http makes of its user info
// (added to the request after h is set, so not in h); and the values of
// the URL's query parameters that RedactURL hides (api_key=…; see
// URLSecrets). Values under 4 bytes are left out: they would redact
// innocent text.
func requestSecrets(h, added http.Header, u *url.URL) []string {
	var out []string
	keep := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= 4 {
			out = append(out, v)
		}
	}
	for name, vs := range h {
		if !sensitiveHeader(name) && (added.Get(name) == "" || mcpHeader(name) || plainHeader(name)) {
			continue
		}
		for _, v := range vs {
			keep(v)
			if _, token, ok := strings.Cut(v, " "); ok {
				keep(token)
			}
		}
	}
	for _, v := range urlSecrets(u) {
		keep(v)
	}
	return out
}

// URLSecrets returns the credentials a URL carries, those RedactURL
// hides: the password of its user info (the user name when given alone,
// https://TOKEN@host, which is then the credential), the Basic
// credentials net/http makes of the user info, and the values of the
// query parameters named like a credential (api_key=…). Values under 4
// bytes are left out, as they would redact innocent text. A server may
// echo its URL (a tool that reports the request, an error quoting it):
// what shows or records the server's messages redacts these from them
// as it does the headers' credentials. nil for text that does not parse.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	for _, v := range urlSecrets(u) {
		if v = strings.TrimSpace(v); len(v) >= 4 {
			out = append(out, v)
		}
	}
	return out
}

// urlSecrets is URLSecrets of a parsed URL, short values included.
func urlSecrets(u *url.URL) []string {
	if u == nil {
		return nil
	}
	var out []string
	if u.User != nil {
		pw, ok := u.User.Password()
		if ok {
			out = append(out, pw)
		} else {
			out = append(out, u.User.Username())
		}
		out = append(out, base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	}
	for name, vs := range u.Query() {
		if sensitiveParam(name) {
			out = append(out, vs...)
		}
	}
	return out
}

// redactHeader returns h, the headers of an answer, with every one of
// secrets (see requestSecrets) redacted from their values (a challenge
// that quotes the refused token), for showing them; h itself when there
// are none.
func redactHeader(h http.Header, secrets []string) http.Header {
	if len(secrets) == 0 {
		return h
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			out[k] = append(out[k], RedactSecrets(v, secrets))
		}
	}
	return out
}

// plainHeader reports the standard request headers whose values describe
// the request, never a credential: a server that quotes the Origin it
// refused (-H 'Origin: …') is quoted as it is.
func plainHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Accept", "Accept-Encoding", "Accept-Language", "Cache-Control", "Content-Type",
		"Origin", "Pragma", "Referer", "User-Agent":
		return true
	}
	return false
}

// undecoded returns the Content-Encoding of a successful answer with a
// body that net/http did not decode (it decodes gzip, which it asks for,
// and removes the header), "" for none: a server that compresses with
// what it was not offered (br, deflate, zstd) sends bytes that would
// otherwise be read as a malformed message. An error's body is left to be
// quoted as it is.
func undecoded(resp *http.Response) string {
	ce := strings.TrimSpace(resp.Header.Get("Content-Encoding"))
	if ce == "" || strings.EqualFold(ce, "identity") || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.ContentLength == 0 {
		return ""
	}
	return ce
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		k := http.CanonicalHeaderKey(n)
		if !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}

// mediaType returns the response's content type without parameters,
// lower-cased.
func mediaType(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// sleepCtx waits d or until ctx ends; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// The ids of a frame's requests and responses, to follow which responses
// a stream still owes. The transport knows ids, not methods; it compares
// them loosely (jsonrpc.ID.LooseKey): servers that retype ids are the
// session's business to report, not the transport's.

// requestIDs returns the ids of the requests in an outgoing frame, as
// loose keys (a batch element that is not a message does not hide its
// neighbours).
func requestIDs(data []byte) []string {
	msgs, _, _ := jsonrpc.DecodeFrame(data)
	var ids []string
	for _, m := range msgs {
		if m.IsRequest() && !m.ID.IsNull() {
			ids = append(ids, m.ID.LooseKey())
		}
	}
	return ids
}

// responseIDs returns the ids that an incoming frame answers, as loose
// keys.
func responseIDs(data []byte) []string {
	msgs, _, _ := jsonrpc.DecodeFrame(data)
	var ids []string
	for _, m := range msgs {
		if m.IsResponse() && !m.ID.IsZero() && !m.ID.IsNull() {
			ids = append(ids, m.ID.LooseKey())
		}
	}
	return ids
}
