package transport

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
)

// HTTPMode chooses how an HTTP connection talks to the server.
type HTTPMode string

// HTTP modes.
const (
	// ModeAuto tries Streamable HTTP and falls back to the legacy HTTP+SSE
	// transport when the first POST is refused with the status codes the
	// spec names (basic/transports, "Backwards Compatibility").
	ModeAuto HTTPMode = "auto"
	// ModeStreamable is the Streamable HTTP transport (2025-03-26 and later).
	ModeStreamable HTTPMode = "http"
	// ModeSSE is the HTTP+SSE transport of protocol revision 2024-11-05.
	ModeSSE HTTPMode = "sse"
)

// HTTPOptions describe how to reach an MCP server over HTTP.
type HTTPOptions struct {
	// URL is the MCP endpoint (Streamable HTTP) or the SSE endpoint
	// (HTTP+SSE): an http:// or https:// URL, or a unix:// or pipe:// one
	// naming a socket and, in its fragment, the HTTP path (see
	// ParseEndpoint and socketEndpoint).
	URL string
	// Mode is auto (the default), http or sse.
	Mode HTTPMode
	// ModeReason says why Mode is http or sse, for Describe and errors
	// (for example the command-line flag that chose it); empty means
	// "chosen by the caller".
	ModeReason string
	// Header holds extra request headers sent on every request (-H).
	Header http.Header
	// UserAgent is sent as User-Agent unless Header sets one.
	UserAgent string
	// Authorizer supplies the Authorization header and reacts to 401/403.
	// Nil sends no credentials (beyond any Authorization in Header).
	Authorizer Authorizer
	// CACerts is a PEM bundle of extra certificate authorities to trust,
	// and CACertFile names the file it was read from (for errors). The
	// caller reads the file: one the user names is read bounded by the
	// caller's context (see internal/userfile), since a named pipe nobody
	// writes would make the read wait for ever.
	CACerts    []byte
	CACertFile string
	// Insecure disables TLS certificate verification.
	Insecure bool
	// Proxy chooses a proxy per request; nil means http.ProxyFromEnvironment
	// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
	Proxy func(*http.Request) (*url.URL, error)
	// Client, when set, is used as is (tests); CACerts, Insecure and Proxy
	// are then ignored, and so is the socket of a unix:// URL: the requests
	// go to http://localhost through Client. Without a CheckRedirect of its own it follows
	// RedirectPolicy like the client mcpx builds.
	Client *http.Client
	// ProtocolVersion is the protocol revision mcpx offers in initialize. It
	// decides which refusals of the first POST mean "try HTTP+SSE" in auto
	// mode: 400, 404 and 405 from 2025-11-25 on, any 4xx before.
	ProtocolVersion string
	// Observer receives HTTP exchanges (EventHTTP) and transport decisions
	// (EventNote).
	Observer Observer
	// MaxReconnects caps consecutive failed attempts to resume a broken SSE
	// stream. Zero means 5.
	MaxReconnects int
	// ReconnectDelay is the wait before resuming a stream when the server
	// set no retry field. Zero means 1s.
	ReconnectDelay time.Duration
	// MaxMessageSize bounds a JSON response body and the data of an SSE
	// event (and any one SSE line), in bytes; zero means
	// DefaultMaxMessageSize. A longer one fails the requests it answers
	// with an error matching ErrFrameTooLarge. An event over the limit on
	// a stream that owes no response (the GET stream, the HTTP+SSE
	// stream) is read past without being held and noted: when its first
	// bytes give the id of the response it is, that request is lost (see
	// LossReporter), and the stream goes on.
	MaxMessageSize int64
}

// Authorizer is the hook through which credentials reach HTTP requests. A
// fixed token (--bearer) implements it with BearerToken; the OAuth flow
// (package oauthflow) implements it by obtaining and refreshing tokens.
type Authorizer interface {
	// Authorization returns the Authorization header value for the next
	// request, or "" to send none.
	Authorization(ctx context.Context) (string, error)
	// Unauthorized is told that the server refused a request with 401 or 403.
	// It returns true when the request should be sent once more (with a
	// fresh Authorization), false to fail with the UnauthorizedError. One
	// request is retried at most a few times (a 401 then a 403 step-up);
	// the Authorizer enforces its own limits too. It may be called
	// concurrently, from any request or stream.
	Unauthorized(ctx context.Context, e *UnauthorizedError) (retry bool, err error)
}

// RequestAuthorizer is an optional extension of Authorizer for credentials
// bound to each request rather than sent as they are, such as DPoP proofs
// (RFC 9449), which sign the request's method and URL. When the Authorizer
// implements it, AuthorizeRequest is called instead of Authorization for
// every request, once its method, URL and other headers are final; it sets
// the credential headers itself (Authorization, DPoP). --wire output shows
// both redacted.
type RequestAuthorizer interface {
	AuthorizeRequest(ctx context.Context, req *http.Request) error
}

// AcceptedAuthorizer is an optional extension of Authorizer that is told
// which credentials servers take: Accepted gets the CredentialID of the
// Authorization header of each request answered with a 2xx status by the
// origin it was sent to. It lets the Authorizer tell a token a server took
// and refuses later (expired or revoked there: a refresh may help) from one
// it refused at once (refreshing cannot help, and would loop). It is called
// for every such request, concurrently: it must be cheap.
type AcceptedAuthorizer interface {
	Accepted(credentialID string)
}

// BearerToken is an Authorizer that sends one fixed bearer token and never
// retries.
type BearerToken string

// Authorization returns "Bearer <token>".
func (t BearerToken) Authorization(context.Context) (string, error) {
	if t == "" {
		return "", nil
	}
	return "Bearer " + string(t), nil
}

// Unauthorized gives up: a fixed token cannot be refreshed.
func (t BearerToken) Unauthorized(context.Context, *UnauthorizedError) (bool, error) {
	return false, nil
}

// Errors of the HTTP transports, matched with errors.Is.
var (
	// ErrTransport marks a failure of the transport after connecting: an
	// HTTP error status, a malformed answer, a stream that ended without the
	// response.
	ErrTransport = errors.New("transport failure")
	// ErrSessionExpired is returned by Write when the server answered 404 to
	// a request that carried an Mcp-Session-Id: the server ended the session
	// (spec: basic/transports, "Session Management"). The connection has
	// forgotten the session id; the next initialize starts a new session.
	ErrSessionExpired = errors.New("session expired")
	// ErrUnauthorized is matched by *UnauthorizedError.
	ErrUnauthorized = errors.New("authorization required")
	// ErrStreamLost marks a request whose response stream ended before its
	// response and cannot go on: in 2026-07-28 Streamable HTTP, where
	// streams are not resumed, as soon as it ends; earlier, once resuming
	// it failed (refused, no event id to resume from, an event over the
	// maximum message size, attempts exhausted, the session ended). That
	// request is lost, the connection and the other requests are not (see
	// LossReporter). It wraps ErrTransport.
	ErrStreamLost = fmt.Errorf("%w: response stream lost", ErrTransport)
)

// UnauthorizedError reports an HTTP 401 or 403 answer.
type UnauthorizedError struct {
	Method string
	URL    string
	// AnsweredBy is the URL that refused the request when redirects were
	// followed from URL, "" when none was (see HTTPError.AnsweredBy).
	AnsweredBy string
	// LeftOrigin is set when those redirects left the origin of URL: the
	// request reached AnsweredBy without credentials (RedirectPolicy), so
	// the refusal is no verdict on them.
	LeftOrigin bool
	Status     int
	// Challenge is the WWW-Authenticate header, as sent but for the
	// credentials of the refused request it quotes, which are redacted
	// (see requestSecrets): the error shows it.
	Challenge string
	// Body is a short excerpt of the response body.
	Body string
	// CredentialID identifies the Authorization header the refused request
	// carried (see CredentialID), "" when it carried none. It lets an
	// Authorizer tell a refusal of its current credentials from a late
	// refusal of ones it already replaced, without the error ever holding
	// a secret.
	CredentialID string
	// Header holds the response's headers (without Set-Cookie), for what a
	// challenge may come with besides WWW-Authenticate, such as a DPoP-Nonce
	// (RFC 9449 section 9). Error never shows it.
	Header http.Header
}

// CredentialID returns a short fingerprint of an Authorization header
// value (a truncated SHA-256), "" for "". It identifies a credential
// without revealing it.
func CredentialID(authorization string) string {
	if authorization == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(authorization))
	return hex.EncodeToString(sum[:8])
}

// Error says what was refused, with the URL's secrets redacted (see
// RedactURL) and the challenge cut to a readable length (see Excerpt);
// Challenge keeps it whole.
func (e *UnauthorizedError) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, answeringURL(e.URL, e.AnsweredBy), e.Status, http.StatusText(e.Status))
	if e.Challenge != "" {
		msg += "; WWW-Authenticate: " + Excerpt(e.Challenge)
	} else if e.Body != "" {
		msg += ": " + Excerpt(e.Body)
	}
	return RedactURLs(msg)
}

// Is makes errors.Is(err, ErrUnauthorized) true.
func (e *UnauthorizedError) Is(target error) bool { return target == ErrUnauthorized }

// HTTPError reports an HTTP status mcpx cannot continue after.
type HTTPError struct {
	Method string
	URL    string
	// AnsweredBy is the URL that answered with Status when redirects
	// were followed from URL (RedirectPolicy), "" when none was: the
	// status, and the body, are that URL's.
	AnsweredBy string
	Status     int
	// Body is a short, single-line excerpt of the response body.
	Body string
	// RetryAfter is the response's Retry-After header as sent (RFC 9110
	// section 10.2.3: seconds or a date), "" when there is none: with a
	// 429 or a 503 it tells a person, or a script, when to try again.
	RetryAfter string
	// SessionID is the Mcp-Session-Id the request carried, "" when it
	// carried none. A 400 to a request in a session the server forgot
	// (restarted) is how servers built on the TypeScript SDK's examples
	// answer, where the spec says 404 (ErrSessionExpired); the session
	// tells the two apart (see SessionForgetter).
	SessionID string
}

// newHTTPError describes resp, a failed answer to method url, with body,
// an excerpt of its body.
func newHTTPError(method, url string, resp *http.Response, body string) *HTTPError {
	return &HTTPError{Method: method, URL: url, AnsweredBy: answeredBy(resp), Status: resp.StatusCode, Body: body, RetryAfter: resp.Header.Get("Retry-After")}
}

// answeringURL names url, and the URL that answered when redirects were
// followed from it (as -v's http lines do), with their secrets redacted;
// the one a server chose cut short (see ShortURL).
func answeringURL(url, answeredBy string) string {
	if answeredBy == "" {
		return RedactURL(url)
	}
	return RedactURL(url) + " (answered by " + ShortURL(answeredBy) + ")"
}

// ShortURL names u, a URL a server chose (a redirect's Location, a
// challenge's resource_metadata, an endpoint a metadata document names:
// from a header or document of up to megabytes), in a message: its
// secrets redacted, then cut to a few hundred bytes (see Excerpt), so
// that it cannot make a line of megabytes.
func ShortURL(u string) string {
	return Excerpt(RedactURL(u))
}

// answeredBy returns the URL that answered resp when the client followed
// redirects to it, "" when it followed none.
func answeredBy(resp *http.Response) string {
	// A request the client made for a redirect records the response
	// that caused it.
	if resp.Request == nil || resp.Request.Response == nil {
		return ""
	}
	return resp.Request.URL.String()
}

// Error says what failed, with the URL's secrets redacted (see
// RedactURL), naming the URL that answered after redirects as -v does.
func (e *HTTPError) Error() string {
	msg := strings.TrimSuffix(fmt.Sprintf("%s %s: HTTP %d %s", e.Method, answeringURL(e.URL, e.AnsweredBy), e.Status, http.StatusText(e.Status)), " ")
	if e.RetryAfter != "" {
		msg += " (Retry-After: " + Excerpt(e.RetryAfter) + ")"
	}
	if e.Body != "" {
		msg += ": " + Excerpt(e.Body)
	}
	return RedactURLs(msg)
}

// Is makes errors.Is(err, ErrTransport) true.
func (e *HTTPError) Is(target error) bool { return target == ErrTransport }

// NewHTTPClient returns the HTTP client a connection with opts uses
// (opts.Client, or one built from CACerts, Insecure and Proxy), so that
// requests made beside the MCP connection — OAuth discovery and token
// requests — trust the same certificates, go through the same proxy and
// follow redirects by the same RedirectPolicy (added to opts.Client when
// it has no CheckRedirect), told to opts.Observer.
func NewHTTPClient(opts HTTPOptions) (*http.Client, error) {
	c, _, err := newHTTPClient(opts)
	return c, err
}

// defaultDialer is http.DefaultTransport's (its dial function is not
// exported): dialTCP dials with it.
var defaultDialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// newTransport returns a transport set as http.DefaultTransport is (the
// proxies of the environment, its timeouts and pool sizes, HTTP/2 when
// the server offers it), dialing with dialTCP. It is built, not cloned
// from http.DefaultTransport: Clone first sets up HTTP/2 on the transport
// it copies, which mcpx never uses, so every connection paid for that set-
// up twice (a tenth of a one-shot HTTP command's connection set-up, issue
// 13). TestNewTransportIsDefaultTransport holds the two alike.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialTCP,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}

// newHTTPClient builds the client for opts: proxies from the environment,
// extra CAs, optional insecure TLS. ownTransport is set when Close should
// drop its idle connections.
func newHTTPClient(o HTTPOptions) (c *http.Client, own *http.Transport, err error) {
	if o.Client != nil {
		return WithRedirectPolicy(o.Client, o.Observer), nil, nil
	}
	tr := newTransport()
	if o.Proxy != nil {
		tr.Proxy = o.Proxy
	}
	redirects := RedirectPolicy(o.Observer)
	if s := socketOf(o.URL); s != nil {
		// Every request goes over the socket, to no proxy: the host is
		// the placeholder socketHost. Redirects are told of with the
		// socket's URLs.
		tr.DialContext, tr.Proxy = s.dial, nil
		redirects = redirectPolicy(o.Observer, s.shown)
	}
	if o.CACerts != nil || o.CACertFile != "" || o.Insecure {
		conf := &tls.Config{}
		if o.CACerts != nil || o.CACertFile != "" {
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(o.CACerts) {
				return nil, nil, fmt.Errorf("%s holds no PEM certificate", cmp.Or(o.CACertFile, "the CA bundle"))
			}
			conf.RootCAs = pool
		}
		conf.InsecureSkipVerify = o.Insecure
		tr.TLSClientConfig = conf
	}
	return &http.Client{Transport: tr, CheckRedirect: redirects}, tr, nil
}

// classifyDoError turns an error from http.Client.Do into one that says
// what went wrong: failures to reach the server wrap ErrConnect (refused,
// DNS, TLS); everything else wraps ErrTransport. Cancellation is returned
// as the context's error.
func classifyDoError(ctx context.Context, method, u string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var re *RedirectError
	if errors.As(err, &re) {
		return re // it names the method and both URLs
	}
	// The error may quote a URL (a Location header that does not parse).
	err = &redactedError{err: err}
	u = RedactURL(u)
	var opErr *net.OpError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	switch {
	case errors.As(err, &dnsErr), errors.As(err, &certErr), errors.As(err, &unknownCA),
		errors.As(err, &hostErr), errors.As(err, &invalidErr), errors.As(err, &recErr):
		return fmt.Errorf("%w: %s %s: %w", ErrConnect, method, u, err)
	case errors.As(err, &opErr) && opErr.Op == "dial", errors.As(err, &opErr) && opErr.Op == "proxyconnect":
		return fmt.Errorf("%w: %s %s: %w", ErrConnect, method, u, err)
	case errors.Is(err, http.ErrSchemeMismatch):
		// The TLS handshake met a plain HTTP server: net/http says so in
		// an error of its own, in place of the tls.RecordHeaderError.
		return fmt.Errorf("%w: %s %s: %w", ErrConnect, method, u, err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		// net/http's bare "EOF": the connection ended before any response
		// headers. A reset is the same end, more abrupt: a server killed
		// with the request not all read closes it so.
		return fmt.Errorf("%w: %s %s: the server closed the connection without answering (%w)", ErrTransport, method, u, err)
	}
	return fmt.Errorf("%w: %s %s: %w", ErrTransport, method, u, err)
}

// bodyExcerpt reads at most a little of resp's body and returns it on
// one line (see excerptBody), without secrets, the credentials of the
// request, should the server quote them (see redactBody).
func bodyExcerpt(resp *http.Response, secrets []string) string {
	if resp == nil || resp.Body == nil {
		return ""
	}
	limit := 512
	b, _ := io.ReadAll(io.LimitReader(resp.Body, int64(limit)))
	mt := mediaType(resp)
	if len(b) == limit && isHTML(mt, b) {
		// A page's title may follow a long head.
		more, _ := io.ReadAll(io.LimitReader(resp.Body, maxHTMLExcerpt-512))
		b, limit = append(b, more...), maxHTMLExcerpt
	}
	return excerptBody(redactBody(b, len(b) < limit, secrets), mt)
}

// redactBody returns b, a body or (complete false) the start of one,
// with every one of secrets replaced (see RedactSecrets). The start of a
// body is cut first where no secret is cut short: one cut short would
// not be recognised, and its start would be shown.
func redactBody(b []byte, complete bool, secrets []string) []byte {
	if len(secrets) == 0 {
		return b
	}
	if !complete {
		b = safePrefix(b, secrets)
	}
	return []byte(RedactSecrets(string(b), secrets))
}

// safePrefix returns the longest start of b, the start of a longer text,
// in which no one of secrets may be cut short: one that b ends in the
// middle of starts in its last len(secret)-1 bytes, and one that ends
// past the cut starts before it.
func safePrefix(b []byte, secrets []string) []byte {
	cut := len(b)
	for _, s := range secrets {
		cut = min(cut, len(b)-len(s)+1)
	}
	for again := true; again && cut > 0; {
		again = false
		for _, s := range secrets {
			for i := 0; i < cut; {
				j := bytes.Index(b[i:], []byte(s))
				if j < 0 {
					break
				}
				if at := i + j; at < cut && at+len(s) > cut {
					cut, again = at, true
				}
				i += j + 1
			}
		}
	}
	return b[:max(cut, 0)]
}

// maxHTMLExcerpt bounds what is read of an HTML error page to summarise
// it.
const maxHTMLExcerpt = 16 << 10

// excerptBody returns the start of a body of media type mt on one line,
// cut to 200 bytes. An HTML page — the error page of a proxy, a gateway
// or a web framework, where an MCP server should be — is summarised by
// its title, or else by its text without the markup: its tags, scripts
// and styles would fill the message and say nothing.
func excerptBody(b []byte, mt string) string {
	if isHTML(mt, b) {
		return htmlSummary(b)
	}
	return cutLine(string(b), 200)
}

// cutLine collapses white space in s and cuts it to at most n bytes,
// never within a character, marking the cut with "…".
func cutLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if t := cutAt(s, n); len(t) < len(s) {
		return t + "…"
	}
	return s
}

// isHTML reports whether a body of media type mt starting with b is an
// HTML page: one that starts with markup and says it is HTML (a JSON body
// labelled text/html is not one), or one of no type or a generic one that
// starts like a page. A body labelled JSON is quoted as it is.
func isHTML(mt string, b []byte) bool {
	head := asciiLower(bytes.TrimLeft(b[:min(len(b), 64)], " \t\r\n\ufeff"))
	switch mt {
	case "text/html", "application/xhtml+xml":
		return bytes.HasPrefix(head, []byte("<"))
	case "", "text/plain", "application/octet-stream":
		return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
	}
	return false
}

// HTMLSummary describes body in a line when it is an HTML page (see
// isHTML; contentType is the answer's Content-Type header as sent):
// `HTML page "TITLE"`, or `HTML page: TEXT` with the start of its text
// when it has no title; ok is false for any other body, which the caller
// quotes as it does. Every error page mcpx quotes is summarised so, an
// MCP server's as an OAuth endpoint's (oauthflow): a page's markup cut to
// a few hundred bytes is mostly its <head>, while its title is what tells
// a proxy's "502 Bad Gateway" from a login form. The summary is not
// escaped, and it holds what the page does (its entities decoded): the
// caller redacts and escapes it as it would the body.
func HTMLSummary(body []byte, contentType string) (summary string, ok bool) {
	if !isHTML(mediaTypeOf(contentType), body) {
		return "", false
	}
	return htmlSummary(body), true
}

// htmlSummary describes an HTML page in a line: `HTML page "TITLE"`, or
// `HTML page: TEXT` with the start of its text when it has no title.
func htmlSummary(b []byte) string {
	lower := asciiLower(b)
	if i := bytes.Index(lower, []byte("<title")); i >= 0 {
		if j := bytes.IndexByte(lower[i:], '>'); j >= 0 {
			start := i + j + 1
			end := len(b)
			if k := bytes.Index(lower[start:], []byte("</title")); k >= 0 {
				end = start + k
			}
			if t := cutLine(html.UnescapeString(string(b[start:end])), 200); t != "" {
				return `HTML page "` + t + `"`
			}
		}
	}
	var text []byte
	for i := 0; i < len(b); {
		switch {
		case b[i] != '<':
			text = append(text, b[i])
			i++
			continue
		case bytes.HasPrefix(lower[i:], []byte("<!--")):
			i = skipPast(lower, i, "-->")
		case bytes.HasPrefix(lower[i:], []byte("<script")):
			i = skipPast(lower, i, "</script>")
		case bytes.HasPrefix(lower[i:], []byte("<style")):
			i = skipPast(lower, i, "</style>")
		default:
			i = skipPast(lower, i, ">")
		}
		text = append(text, ' ')
	}
	if t := cutLine(html.UnescapeString(string(text)), 200); t != "" {
		return "HTML page: " + t
	}
	return "HTML page"
}

// skipPast returns the index just past the first end in b after i, or
// len(b).
func skipPast(b []byte, i int, end string) int {
	if k := bytes.Index(b[i:], []byte(end)); k >= 0 {
		return i + k + len(end)
	}
	return len(b)
}

// asciiLower returns a copy of b with its ASCII letters in lower case (the
// same length, so that indices into it are indices into b).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// sensitiveHeader reports headers whose values must never be shown.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "dpop" {
		// A DPoP proof (RFC 9449) is a credential for one request.
		return true
	}
	for _, s := range []string{"authorization", "cookie", "token", "secret", "password", "api-key", "apikey", "x-api-key"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// headerSummary renders the headers worth showing in --wire output and
// traces, in the order of names. A credential's value (sensitiveHeader)
// shows as [redacted], and so does the value of a header in added (the
// headers the user gave, -H) unless it is an MCP header: any of those can
// be a credential under a name of the user's choosing (X-Auth,
// X-Credential), and traces keep no header values but the MCP headers'
// (docs/trace-format.md, "Redaction").
func headerSummary(h, added http.Header, names ...string) string {
	var parts []string
	for _, n := range names {
		if v := h.Get(n); v != "" {
			if sensitiveHeader(n) || added.Get(n) != "" && !mcpHeader(n) {
				v = "[redacted]"
			}
			parts = append(parts, n+": "+Excerpt(v))
		}
	}
	return strings.Join(parts, ", ")
}

// mcpHeader reports the headers the MCP transports define (Mcp-Session-Id,
// Mcp-Protocol-Version, the stateless era's Mcp-Method, Mcp-Name and
// Mcp-Param-*) and SSE's Last-Event-ID: protocol, not credentials.
func mcpHeader(name string) bool {
	n := http.CanonicalHeaderKey(name)
	return strings.HasPrefix(n, "Mcp-") || n == "Last-Event-Id"
}

// extraHeaderNames lists the user-supplied header names, canonicalized and
// sorted (the order of a trace's HTTP lines does not change between runs).
func extraHeaderNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// SameOrigin reports whether a and b share scheme, host and port (the
// default port counting for an absent one). Credentials and endpoints are
// only trusted within one origin.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
