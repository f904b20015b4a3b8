package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// HTTPProxyOptions configure NewHTTPProxy.
type HTTPProxyOptions struct {
	// Upstream is the server's MCP endpoint (Streamable HTTP) or SSE
	// endpoint (HTTP+SSE): an http:// or https:// URL, or a unix:// one
	// (transport.ParseEndpoint).
	Upstream string
	// Client performs the upstream requests; nil means a client that
	// honours HTTPS_PROXY/HTTP_PROXY/NO_PROXY and never times out (streams
	// last as long as the session). Without a CheckRedirect of its own it
	// follows transport.RedirectPolicy.
	Client *http.Client
	// Header holds headers added to (or replacing those of) every upstream
	// request, such as credentials the host cannot send itself.
	Header http.Header
	// OnFrame and OnEvent, when set, are told about every frame forwarded
	// (transport.Outgoing is the host's) and every HTTP exchange and note:
	// a Recorder's Frame and Observe record them, --wire shows them.
	// Events quote upstream URLs as requested; a Recorder redacts its
	// copy.
	OnFrame transport.FrameFunc
	OnEvent transport.Observer
	// Tell, when set, is told what the person running the proxy must
	// know whatever the verbosity (OnEvent is --wire's): that the
	// upstream's GET stream was redirected to another origin and refused,
	// once.
	Tell func(msg string)
	// OnSecret, when set, is told the credentials the host sends with
	// each request (its Authorization header's value and the credential
	// after its scheme, its cookies' values) before the request is
	// forwarded, so before any answer that may echo them: what shows
	// OnFrame's frames (--wire) redacts them, as the Recorder does its
	// copy.
	OnSecret func(string)
	// Recorder, when set, records the proxied traffic with a session per
	// host connection (Recorder.StartSession): an initialize without an
	// Mcp-Session-Id opens one, which the session id the server gives it
	// keeps; an HTTP+SSE GET stream opens one, which its message endpoint
	// keeps. Stateless requests (the 2026-07-28 era, or a server that
	// gives no session id) are grouped per remote host: a server/discover
	// after other requests from that host opens a new session, as a new
	// client begins with it.
	Recorder *Recorder
	// MaxMessageSize bounds a request body, a JSON answer and an SSE event
	// of the upstream, in bytes; zero means
	// transport.DefaultMaxMessageSize. A longer request body is answered
	// with 413 Content Too Large, a longer answer with 502 Bad Gateway,
	// and an SSE stream with a longer event is cut there.
	MaxMessageSize int64
}

// HTTPProxy is a recording reverse proxy for an MCP server over HTTP. It
// forwards Streamable HTTP (POST, GET and DELETE, with every header
// including Mcp-Session-Id, and SSE streams event by event as they come,
// never buffered whole) and the legacy HTTP+SSE transport, whose endpoint
// event it rewrites to point at the proxy.
//
// A request for "/" or for the upstream URL's path goes to the upstream
// URL; any other path (such as the message endpoint of an HTTP+SSE server)
// goes to that path on the upstream origin.
type HTTPProxy struct {
	o        HTTPProxyOptions
	upstream *url.URL
	// name is the upstream's URL as given, the sessions' target: for a
	// server on a socket, its unix:// URL, not upstream's http://localhost.
	name string
	// shown names an upstream request's URL in events: for a server on a
	// socket, as the unix:// URL (transport.SocketRoute.Shown).
	shown   func(*url.URL) string
	client  *http.Client
	streams atomic.Int64
	// stopped is set by Stop: exchanges cut from then on were cut by the
	// proxy's end, which Stop noted, not by their host.
	stopped atomic.Bool
	// elsewhereSaid: the person was told of a GET stream refused for its
	// redirect to another origin (streamElsewhere), which is said once.
	elsewhereSaid atomic.Bool

	mu sync.Mutex
	// open counts each session's exchanges in flight (requests waiting
	// for their answer, streams being forwarded): those Stop cuts.
	open       map[*proxySession]int
	byID       map[string]*proxySession // Mcp-Session-Id -> session
	byEndpoint map[string]*proxySession // HTTP+SSE message endpoint (path?query) -> session
	byHost     map[string]*proxySession // remote host -> its latest session without an id
}

// proxySession is one host connection's session in the recording.
type proxySession struct {
	rec *SessionRecorder
	// asked marks a session that sent a request other than
	// server/discover (a later server/discover is a new client).
	asked bool
	// sse marks an HTTP+SSE session; noID a Streamable HTTP session
	// whose initialize was answered without a session id (its GET
	// stream, sent without one, belongs to it); handshake a session that
	// sent initialize.
	sse, noID, handshake bool
}

// NewHTTPProxy returns a proxy for o.Upstream.
func NewHTTPProxy(o HTTPProxyOptions) (*HTTPProxy, error) {
	u, err := transport.ParseEndpoint(o.Upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	name := u.String()
	// A server on a socket (unix://) is proxied as the http://localhost
	// URL its requests go to, over the socket, and named by its unix://
	// URLs.
	shown := (*url.URL).String
	sock := transport.RouteSocket(u)
	if sock != nil {
		u, shown = sock.URL, sock.Shown
	}
	c := o.Client
	if c == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = http.ProxyFromEnvironment
		if sock != nil {
			tr.DialContext, tr.Proxy = sock.Dial, nil
		}
		// Bodies must reach the recorder as the server meant them, not
		// compressed: ask for identity.
		tr.DisableCompression = true
		c = &http.Client{Transport: tr}
	}
	p := &HTTPProxy{o: o, upstream: u, name: name, shown: shown, open: map[*proxySession]int{}, byID: map[string]*proxySession{}, byEndpoint: map[string]*proxySession{}, byHost: map[string]*proxySession{}}
	// Upstream redirects follow mcpx's one policy: the credentials the
	// proxy adds (and the client's) never leave the upstream's origin.
	p.client = transport.WithRedirectPolicy(c, func(ev transport.Event) {
		if p.o.OnEvent != nil {
			p.o.OnEvent(ev)
		}
	})
	return p, nil
}

// hopHeaders are connection-level headers a proxy must not forward (RFC
// 9110, section 7.6.1), plus Accept-Encoding: the recorder wants bodies
// uncompressed.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Accept-Encoding"}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, c := range src.Values("Connection") {
		for _, f := range strings.Split(c, ",") {
			dst.Del(strings.TrimSpace(f))
		}
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
}

// target maps a request to the proxy onto the upstream server. A request
// for the upstream's own endpoint keeps the query the upstream URL was
// given with (a server may take its key or token there) and adds the
// host's parameters, but not one the upstream URL sets: the user named
// the upstream, the host only the proxy. Another path (the message
// endpoint a legacy HTTP+SSE server announced) is the host's, query and
// all, as a client resolves that endpoint against the server's URL.
func (p *HTTPProxy) target(r *http.Request) *url.URL {
	t := *p.upstream
	if r.URL.Path == "/" || r.URL.Path == "" || r.URL.Path == p.upstream.Path {
		t.RawQuery = mergeQuery(t.RawQuery, r.URL.RawQuery)
		return &t
	}
	t.Path, t.RawPath, t.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	return &t
}

// mergeQuery appends the parameters of extra to base's, leaving out those
// whose name base has, each parameter as written (no re-encoding).
func mergeQuery(base, extra string) string {
	if extra == "" {
		return base
	}
	if base == "" {
		return extra
	}
	have := map[string]bool{}
	for _, kv := range strings.Split(base, "&") {
		have[queryName(kv)] = true
	}
	out := base
	for _, kv := range strings.Split(extra, "&") {
		if kv != "" && !have[queryName(kv)] {
			out += "&" + kv
		}
	}
	return out
}

// queryName is the unescaped name of one name=value query parameter.
func queryName(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	if u, err := url.QueryUnescape(k); err == nil {
		return u
	}
	return k
}

func (p *HTTPProxy) event(ps *proxySession, kind transport.EventKind, text string, meta *transport.Meta) {
	p.observe(ps, transport.Event{Time: time.Now(), Kind: kind, Text: text, Meta: meta})
}

func (p *HTTPProxy) observe(ps *proxySession, ev transport.Event) {
	if p.o.OnEvent != nil {
		p.o.OnEvent(ev)
	}
	if ps != nil {
		ps.rec.Observe(ev)
	}
}

func (p *HTTPProxy) frame(ps *proxySession, dir Direction, data []byte, meta *transport.Meta) {
	p.frameRoute(ps, dir, transport.Frame{Data: data, Meta: meta})
}

func (p *HTTPProxy) frameRoute(ps *proxySession, dir Direction, f transport.Frame) {
	d := transport.Outgoing
	if dir == ServerToClient {
		d = transport.Incoming
	}
	now := time.Now()
	if p.o.OnFrame != nil {
		p.o.OnFrame(now, d, f)
	}
	if ps != nil {
		ps.rec.Frame(now, d, f)
	}
}

// session finds (or starts) the recorded session a request to the proxy
// belongs to; nil when nothing is recorded. msgs is the POST's body,
// decoded.
func (p *HTTPProxy) session(r *http.Request, msgs []*jsonrpc.Message) *proxySession {
	if p.o.Recorder == nil {
		return nil
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	sid := r.Header.Get("Mcp-Session-Id")
	initialize, discover, other := false, false, false
	for _, m := range msgs {
		switch {
		case m.Kind() != jsonrpc.KindRequest:
		case m.Method == mcp.MethodInitialize:
			initialize = true
		case m.Method == mcp.MethodDiscover:
			discover = true
		default:
			other = true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	start := func(transportName string) *proxySession {
		ps := &proxySession{sse: transportName == "sse"}
		target := p.name
		ps.rec = p.o.Recorder.StartSession(SessionInfo{Transport: transportName, Target: target, Client: r.RemoteAddr},
			fmt.Sprintf("%s: %s %s from %s", transportName, r.Method, target, r.RemoteAddr))
		return ps
	}
	var ps *proxySession
	switch {
	case sid != "" && p.byID[sid] != nil:
		ps = p.byID[sid]
	case sid != "":
		// A session the proxy did not see begin (it was restarted).
		ps = start("http")
		p.byID[sid] = ps
	case r.Method == http.MethodPost && p.byEndpoint[r.URL.RequestURI()] != nil:
		// A message to an HTTP+SSE session's endpoint, its initialize
		// included: the session its stream opened.
		ps = p.byEndpoint[r.URL.RequestURI()]
	case initialize && p.byHost[host] != nil && !p.byHost[host].asked && !p.byHost[host].handshake && !p.byHost[host].sse:
		// A client that probed with server/discover, then falls back to
		// the handshake: the same client.
		ps = p.byHost[host]
	case initialize:
		ps = start("http")
		p.byHost[host] = ps
	case r.Method == http.MethodGet && !(p.byHost[host] != nil && p.byHost[host].noID):
		// An HTTP+SSE client opens its stream first.
		ps = start("sse")
		p.byHost[host] = ps
	default:
		ps = p.byHost[host]
		if ps == nil || discover && ps.asked || ps.sse {
			ps = start("http")
			p.byHost[host] = ps
		}
	}
	if other {
		ps.asked = true
	}
	if initialize {
		ps.handshake = true
	}
	return ps
}

// answered notes what an answer tells about its session: the session id
// the server gave it, or that the session is over: ended by DELETE, or
// unknown to the server (404), whose id is then forgotten, so that the
// ids a client sends do not pile up in the proxy.
func (p *HTTPProxy) answered(ps *proxySession, r *http.Request, resp *http.Response, initialize bool) {
	if ps == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" &&
		(resp.StatusCode == http.StatusNotFound || r.Method == http.MethodDelete && resp.StatusCode < 300) {
		delete(p.byID, sid)
		return
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		p.byID[s] = ps
	} else if initialize && resp.StatusCode < 300 && !ps.sse {
		// (An HTTP+SSE initialize is answered 202 on its message
		// endpoint, the result coming on the stream: its session is kept
		// by that endpoint, and the host's next GET is a new connection.)
		ps.noID = true
	}
}

// endpoint notes the message endpoint of an HTTP+SSE session.
func (p *HTTPProxy) endpoint(ps *proxySession, proxied string) {
	if ps == nil {
		return
	}
	u, err := url.Parse(proxied)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.byEndpoint[u.RequestURI()] = ps
	p.mu.Unlock()
}

// requestRoute reads the route a client of the stateless 2026-07-28 era
// sent in a POST's headers (spec 2026-07-28: basic/transports/
// streamable-http, "Request Metadata"), with encoded values decoded; nil
// for a request without Mcp-Method (every handshake-era request).
func requestRoute(h http.Header) *transport.Route {
	method := h.Get("Mcp-Method")
	if method == "" {
		return nil
	}
	dec := func(v string) string {
		if d, err := transport.DecodeHeaderValue(v); err == nil {
			return d
		}
		return v // recorded as sent
	}
	r := &transport.Route{ProtocolVersion: h.Get("Mcp-Protocol-Version"), Method: method, Name: dec(h.Get("Mcp-Name"))}
	var names []string
	for k := range h {
		if len(k) > len("Mcp-Param-") && strings.EqualFold(k[:len("Mcp-Param-")], "Mcp-Param-") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		r.Params = append(r.Params, transport.RouteParam{Name: k[len("Mcp-Param-"):], Value: dec(h.Get(k))})
	}
	return r
}

// shownHeaders are the request headers named in recorded HTTP events;
// credentials are only said to be there.
var shownHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"}

func headerText(h http.Header) string {
	var parts []string
	for _, n := range shownHeaders {
		if v := h.Get(n); v != "" {
			parts = append(parts, n+": "+v)
		}
	}
	for _, n := range []string{"Authorization", "Cookie"} {
		if h.Get(n) != "" {
			parts = append(parts, n+": "+Placeholder)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// hostSecrets tells the session's recorder the credentials the host
// sends with r (see requestSecrets), which the server may echo: recorded
// before the request is forwarded, so before any answer.
func hostSecrets(rec *SessionRecorder, r *http.Request) { requestSecrets(r, rec.Secret) }

// requestSecrets tells secret the credentials a client sends with r: its
// Authorization header's value and the credential after its scheme, its
// cookies' values.
func requestSecrets(r *http.Request, secret func(string)) {
	for _, v := range r.Header.Values("Authorization") {
		secret(v)
		if _, cred, ok := strings.Cut(v, " "); ok {
			secret(strings.TrimSpace(cred))
		}
	}
	for _, c := range r.Cookies() {
		secret(c.Value)
	}
}

// ServeHTTP forwards one request to the upstream server and streams its
// answer back, recording both; it makes the proxy an http.Handler.
func (p *HTTPProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := p.target(r)
	tu := p.shown(target)
	var body []byte
	if r.Body != nil {
		b, ok := readRequestBody(w, r, p.o.MaxMessageSize)
		if !ok {
			return
		}
		body = b
	}
	sid := r.Header.Get("Mcp-Session-Id")
	var msgs []*jsonrpc.Message
	if r.Method == http.MethodPost && len(bytes.TrimSpace(body)) > 0 {
		msgs, _ = parseFrame(body)
	}
	if p.o.OnSecret != nil {
		requestSecrets(r, p.o.OnSecret)
	}
	ps := p.session(r, msgs)
	if ps != nil {
		hostSecrets(ps.rec, r)
		p.enter(ps)
		defer p.leave(ps)
	}
	p.event(ps, transport.EventHTTP, r.Method+" "+tu+headerText(r.Header), &transport.Meta{HTTPMethod: r.Method, URL: tu, SessionID: sid})
	if r.Method == http.MethodPost && len(bytes.TrimSpace(body)) > 0 {
		p.frameRoute(ps, ClientToServer, transport.Frame{Data: body, Meta: &transport.Meta{HTTPMethod: r.Method, URL: tu, SessionID: sid},
			Route: requestRoute(r.Header)})
	}

	var rb io.Reader
	if body != nil {
		rb = bytes.NewReader(body)
	}
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet:
		// A GET stream's events are taken by the host for the server's
		// own messages: another origin, which got no credentials and
		// knows nothing of the session, must not speak for the server,
		// as mcpx's own client holds. Its redirect there is refused.
		ctx = transport.SameOriginOnly(ctx, "the proxy takes the server's messages only from the origin it proxies")
	case http.MethodDelete:
		// The end of the host's session is the server's to take, not
		// another origin's (as mcpx's own client's DELETE: see
		// transport's streamable.close).
		ctx = transport.SameOriginOnly(ctx, "the end of a session goes only to the server's own origin")
	}
	up, err := http.NewRequestWithContext(ctx, r.Method, target.String(), rb)
	if err != nil {
		p.badGateway(w, ps, r, tu, sid, msgs, err.Error())
		return
	}
	copyHeaders(up.Header, r.Header)
	// A browser client's Origin was admitted by the proxy's listener; to
	// the upstream server the proxy is the client (one that validates
	// Origin would refuse a page it does not know).
	up.Header.Del("Origin")
	for k, vs := range p.o.Header {
		up.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	resp, err := p.client.Do(up)
	if err != nil {
		if r.Context().Err() != nil {
			p.hostLeft(ps, fmt.Sprintf("before the answer to %s %s", r.Method, tu))
		} else {
			var re *transport.RedirectError
			switch {
			case errors.As(err, &re) && re.Elsewhere() && r.Method == http.MethodGet && !(ps != nil && ps.sse):
				p.streamElsewhere(w, ps, r, tu, sid, re)
			case errors.As(err, &re):
				p.badGateway(w, ps, r, tu, sid, msgs, re.Error())
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				// The server took the request and closed the connection
				// without answering (it crashed, or was stopped).
				p.badGateway(w, ps, r, tu, sid, msgs, "the upstream server closed the connection without answering: "+err.Error())
			default:
				p.badGateway(w, ps, r, tu, sid, msgs, "the upstream server cannot be reached: "+err.Error())
			}
		}
		return
	}
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		sid = s
	}
	meta := &transport.Meta{HTTPMethod: r.Method, URL: tu, HTTPStatus: resp.StatusCode, ContentType: ct, SessionID: sid}
	p.answered(ps, r, resp, hasInitialize(msgs))
	mt, _, _ := mime.ParseMediaType(ct)
	statusLine := fmt.Sprintf("%s %s ← %s %s", resp.Status, ct, r.Method, tu)
	if mt == "text/event-stream" || resp.StatusCode < 400 {
		p.event(ps, transport.EventHTTP, statusLine, meta)
	}

	copyHeaders(w.Header(), resp.Header)
	if mt == "text/event-stream" {
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		flush(w)
		kind := "post"
		switch {
		case r.Method == http.MethodGet && ps != nil && ps.sse:
			// An HTTP+SSE session's one stream, which carries everything
			// the server says, answers included (mcpx's own client names
			// it "sse"): not a Streamable HTTP GET stream, whose
			// messages belong to no request (verify tells them apart by
			// the name).
			kind = "sse"
		case r.Method == http.MethodGet:
			kind = "get"
		}
		p.stream(w, r, resp, meta, kind+"-"+strconv.FormatInt(p.streams.Add(1), 10), ps)
		return
	}
	data, err := transport.ReadBody(resp.Body, resp.ContentLength, p.o.MaxMessageSize, "the upstream's answer")
	tooLarge := errors.Is(err, transport.ErrFrameTooLarge)
	if resp.StatusCode >= 400 {
		// An error status: a JSON-RPC answer (2026-07-28 answers some
		// errors with 4xx) is recorded as usual; anything else is a
		// refusal, recorded with an excerpt of its body and the request
		// it answered (unless the host gets the proxy's 502 instead).
		switch {
		case tooLarge:
			// Told in the note below: an http event of an error status
			// with a body of another type is what replay takes for an
			// older trace's refusal of the POST, which would then answer
			// with the upstream's status, not the 502 the host got.
		case mt == "application/json" && jsonrpcBody(data):
			p.event(ps, transport.EventHTTP, statusLine, meta)
		default:
			p.refusal(ps, statusLine, meta, msgs, data)
		}
	}
	if tooLarge {
		note := fmt.Sprintf("the answer to %s %s: %v", r.Method, tu, err)
		if resp.StatusCode >= 400 {
			note += " (the upstream answered " + statusLine + ")"
		}
		p.event(ps, transport.EventNote, note, nil)
		w.Header().Del("Content-Length")
		p.badGateway(w, ps, r, tu, sid, msgs, err.Error())
		return
	}
	switch {
	case err != nil && r.Context().Err() != nil:
		p.hostLeft(ps, fmt.Sprintf("during the answer to %s %s", r.Method, tu))
	case err != nil:
		p.event(ps, transport.EventNote, fmt.Sprintf("reading the answer to %s %s: %v", r.Method, tu, err), nil)
	}
	if mt == "application/json" && len(bytes.TrimSpace(data)) > 0 {
		p.frame(ps, ServerToClient, data, meta)
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// stream forwards an SSE body event by event, flushing after each, and
// records the messages it carries. The endpoint event of an HTTP+SSE
// server is rewritten to name the proxy.
func (p *HTTPProxy) stream(w http.ResponseWriter, r *http.Request, resp *http.Response, meta *transport.Meta, name string, ps *proxySession) {
	limit := p.o.MaxMessageSize
	if limit <= 0 {
		limit = transport.DefaultMaxMessageSize
	}
	// A line is bounded by the maximum message size (plus its ending), and
	// so are the lines of one event together: neither the host nor the
	// recording can take more.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), int(min(limit, math.MaxInt32))+2)
	sc.Split(sseLines)
	cut := func() {
		err := &transport.FrameTooLargeError{What: "an SSE event", Limit: limit}
		p.event(ps, transport.EventNote, fmt.Sprintf("SSE %s cut: %v", name, err), nil)
	}
	// left notes the host's end of the stream: it closed the connection
	// (and with it the proxy's to the upstream) before the stream ended.
	left := func() { p.hostLeft(ps, "SSE "+name) }
	var ev [][]byte // the lines of the event being read, with their endings
	var size int64  // their length
	first := true
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		if first {
			// A leading byte order mark is not part of the first line.
			first = false
			if rest, ok := bytes.CutPrefix(line, []byte("\xef\xbb\xbf")); ok {
				if _, err := w.Write(line[:3]); err != nil {
					left()
					return
				}
				line = rest
			}
		}
		if size += int64(len(line)); size > limit+2 {
			cut()
			return
		}
		ev = append(ev, line)
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			if _, err := w.Write(bytes.Join(p.event1(r, ev, meta, name, ps), nil)); err != nil {
				left()
				return
			}
			flush(w)
			ev, size = ev[:0], 0
		}
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		cut()
		return
	}
	if len(ev) > 0 {
		w.Write(bytes.Join(ev, nil))
		flush(w)
	}
	switch {
	case err != nil && r.Context().Err() != nil:
		left()
	case err != nil:
		p.event(ps, transport.EventNote, fmt.Sprintf("SSE %s broke: %v", name, err), nil)
	}
}

// enter and leave count an exchange of ps in flight (see Stop).
func (p *HTTPProxy) enter(ps *proxySession) {
	p.mu.Lock()
	p.open[ps]++
	p.mu.Unlock()
}

func (p *HTTPProxy) leave(ps *proxySession) {
	p.mu.Lock()
	if p.open[ps]--; p.open[ps] <= 0 {
		delete(p.open, ps)
	}
	p.mu.Unlock()
}

// hostLeft notes, in ps, that the host closed its connection of what
// (an SSE stream, a request waiting for its answer) before the upstream
// was done with it; the upstream's connection was closed with it. Over
// HTTP that is no end of the session (a host reconnects, or gives up on
// one request), so the note begins like none of those that tell replay
// the client left. Once the proxy is stopped, Stop has said why instead.
func (p *HTTPProxy) hostLeft(ps *proxySession, what string) {
	if p.stopped.Load() {
		return
	}
	p.event(ps, transport.EventNote, what+": the host closed its connection before the end; the proxy closed the upstream's too", nil)
}

// Stop notes, in each session with an exchange in flight (a request
// waiting for its answer, an SSE stream), that the proxy was stopped
// (why: "interrupted", say) and cuts them: a trace of a proxy stopped
// mid-call says so, as the stdio proxy's does, rather than leaving a
// request unanswered without a word. Call it before the proxy's server
// closes their connections; the exchanges cut then are not noted again.
func (p *HTTPProxy) Stop(why string) {
	if p.stopped.Swap(true) {
		return
	}
	p.mu.Lock()
	open := make([]*proxySession, 0, len(p.open))
	for ps := range p.open {
		open = append(open, ps)
	}
	p.mu.Unlock()
	for _, ps := range open {
		p.event(ps, transport.EventNote, proxyStoppedNote+" ("+why+"); closed its connections to the upstream", nil)
	}
}

// sseLines is a bufio.SplitFunc for SSE lines that keeps their endings
// (CRLF, LF or a lone CR), so that the proxy forwards the stream byte for
// byte; an unterminated last line comes whole.
func sseLines(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i >= 0 && data[i] == '\n':
		return i + 1, data[:i+1], nil
	case i >= 0 && i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i+2], nil
		}
		return i + 1, data[:i+1], nil
	case i >= 0 && atEOF:
		return i + 1, data[:i+1], nil
	case i < 0 && atEOF && len(data) > 0:
		return len(data), data, nil
	}
	return 0, nil, nil // more data, or (at EOF) the end
}

// event1 handles one complete SSE event: it records it and returns the
// lines to forward (rewritten for an endpoint event).
func (p *HTTPProxy) event1(r *http.Request, lines [][]byte, meta *transport.Meta, name string, ps *proxySession) [][]byte {
	var typ, id string
	var data [][]byte
	var retry time.Duration
	hasID := false
	dataIdx := -1
	for i, l := range lines {
		l = bytes.TrimRight(l, "\r\n")
		if len(l) == 0 || l[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(l, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			data = append(data, value)
			dataIdx = i
		case "id":
			// An id with a NUL is ignored (WHATWG HTML, "Interpreting an
			// event stream"), as the client's parser does.
			if bytes.IndexByte(value, 0) < 0 {
				id, hasID = string(value), true
			}
		case "retry":
			if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms > 0 && ms < math.MaxInt64/int64(time.Millisecond) {
				retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	m := *meta
	m.StreamID = name
	if hasID {
		m.EventID = id
	}
	payload := bytes.Join(data, []byte("\n"))
	switch {
	case len(payload) == 0:
		// No data, or empty data: a priming event (the client delivers
		// nothing for it either), recorded as stream metadata. Data of
		// line breaks or spaces is not empty: the client delivers it, a
		// malformed frame the recording must keep.
		if hasID || retry > 0 {
			text := fmt.Sprintf("SSE %s: event id=%q with no data (priming)", name, id)
			if retry > 0 {
				text += fmt.Sprintf(", retry %s", retry)
			}
			p.observe(ps, transport.Event{Time: time.Now(), Kind: transport.EventStream, Text: text, Meta: &m, Retry: retry})
		}
	case typ == "endpoint":
		proxied := p.rewriteEndpoint(r, string(payload))
		p.endpoint(ps, proxied)
		p.event(ps, transport.EventNote, fmt.Sprintf("SSE %s: endpoint event %q, rewritten to %q", name, string(payload), proxied), &m)
		if proxied != string(payload) && len(data) == 1 {
			out := make([][]byte, len(lines))
			copy(out, lines)
			ending := lines[dataIdx][len(bytes.TrimRight(lines[dataIdx], "\r\n")):]
			out[dataIdx] = append([]byte("data: "+proxied), ending...)
			return out
		}
	case typ == "" || typ == "message":
		p.frame(ps, ServerToClient, payload, &m)
	default:
		p.event(ps, transport.EventNote, fmt.Sprintf("SSE %s: event of type %q passed through", name, typ), &m)
	}
	return lines
}

// jsonrpcBody reports whether an HTTP body holds JSON-RPC messages.
func jsonrpcBody(data []byte) bool {
	msgs, _, err := jsonrpc.DecodeFrame(data)
	if err != nil || len(msgs) == 0 {
		return false
	}
	for _, m := range msgs {
		if m.Kind() == jsonrpc.KindInvalid {
			return false
		}
	}
	return true
}

// refusal records an error answer without a JSON-RPC body: an http event
// with an excerpt of the body, tied to the request of the POST it
// answered (the first, for a batch).
func (p *HTTPProxy) refusal(ps *proxySession, statusLine string, meta *transport.Meta, msgs []*jsonrpc.Message, body []byte) {
	if p.o.OnEvent != nil {
		p.o.OnEvent(transport.Event{Time: time.Now(), Kind: transport.EventHTTP, Text: statusLine, Meta: meta})
	}
	if ps == nil {
		return
	}
	var re json.RawMessage
	for _, m := range msgs {
		if m.Kind() == jsonrpc.KindRequest {
			re = m.ID.Raw()
			break
		}
	}
	ps.rec.Refusal(re, meta, body)
}

// badGateway answers the host 502 Bad Gateway with text (the upstream
// could not be reached, went away without answering, redirected
// elsewhere, or answered beyond the size limit), and records that answer
// as a refusal of the request, for it is what the host saw: a replay
// answers the request the same way, at once, instead of leaving it open
// as a server that never answered. It is no end of the server: over
// HTTP, one failed exchange does not end the session (the host may go
// on, the upstream may answer its next request), as mcpx's own recording
// notes no server end where a POST fails.
func (p *HTTPProxy) badGateway(w http.ResponseWriter, ps *proxySession, r *http.Request, tu, sid string, msgs []*jsonrpc.Message, text string) {
	body := "mcpx proxy: " + text + "\n"
	const ct = "text/plain; charset=utf-8"
	meta := &transport.Meta{HTTPMethod: r.Method, URL: tu, HTTPStatus: http.StatusBadGateway, ContentType: ct, SessionID: sid}
	statusLine := fmt.Sprintf("502 Bad Gateway %s ← %s %s (the proxy's answer) body: %s", ct, r.Method, tu, strings.TrimSpace(body))
	p.refusal(ps, statusLine, meta, msgs, []byte(body))
	// (http.Error writes body, with the same content type.)
	http.Error(w, strings.TrimSuffix(body, "\n"), http.StatusBadGateway)
}

// streamElsewhere answers the host's Streamable HTTP GET, whose redirect
// to another origin re refused, 405 Method Not Allowed: what a server
// that offers no GET stream answers (spec: basic/transports, "Listening
// for Messages from the Server"), with which a host goes on, taking the
// server's messages on the answers to its POSTs, as mcpx's own client
// does when it refuses such a redirect; a 502 could end its session. The
// person is told once (Tell), whatever the verbosity; the recording
// holds the 405, as it would a server's, with the refusal as its body.
// (An HTTP+SSE session's GET is its whole connection: its refusal is a
// 502, as any other refused redirect's.)
func (p *HTTPProxy) streamElsewhere(w http.ResponseWriter, ps *proxySession, r *http.Request, tu, sid string, re *transport.RedirectError) {
	if p.o.Tell != nil && p.elsewhereSaid.CompareAndSwap(false, true) {
		p.o.Tell(transport.RedactURLs(fmt.Sprintf("the upstream server redirected its GET stream for messages of its own (GET %s) to %s, on another origin; the proxy takes the server's messages only from the origin it proxies, so it answers the host 405 Method Not Allowed, as a server without that stream does: the host goes on with what comes with the answers to its requests",
			transport.ShortURL(tu), transport.ShortURL(re.To))))
	}
	body := "mcpx proxy: " + re.Error() + " (answered 405 Method Not Allowed, as by a server without a GET stream)\n"
	const ct = "text/plain; charset=utf-8"
	meta := &transport.Meta{HTTPMethod: r.Method, URL: tu, HTTPStatus: http.StatusMethodNotAllowed, ContentType: ct, SessionID: sid}
	statusLine := fmt.Sprintf("405 Method Not Allowed %s ← %s %s (the proxy's answer) body: %s", ct, r.Method, tu, strings.TrimSpace(body))
	p.refusal(ps, statusLine, meta, nil, []byte(body))
	w.Header().Set("Allow", "POST")
	http.Error(w, strings.TrimSuffix(body, "\n"), http.StatusMethodNotAllowed)
}

// rewriteEndpoint points an HTTP+SSE endpoint event at the proxy: a URL on
// the upstream origin becomes the same path and query on the proxy.
func (p *HTTPProxy) rewriteEndpoint(r *http.Request, ref string) string {
	base := p.target(r)
	u, err := base.Parse(strings.TrimSpace(ref))
	if err != nil || !strings.EqualFold(u.Host, p.upstream.Host) || !strings.EqualFold(u.Scheme, p.upstream.Scheme) {
		return ref
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	proxied := url.URL{Scheme: scheme, Host: r.Host, Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	return proxied.String()
}
