package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// MaxRedirects caps how many redirects one request follows.
const MaxRedirects = 10

// ErrRedirect is matched by *RedirectError: a redirect mcpx refused to
// follow. It is a transport failure (errors.Is(err, ErrTransport) holds
// too).
var ErrRedirect = errors.New("redirect refused")

// RedirectError reports a redirect mcpx refused to follow (see
// RedirectPolicy).
type RedirectError struct {
	// Method is the method of the request that was redirected.
	Method string
	// From is the URL that answered with the redirect, To where it
	// pointed (resolved against From).
	From, To string
	// Status is the redirect's HTTP status (301, 302, 303, 307, 308).
	Status int
	// Reason says why mcpx did not follow it.
	Reason string
	// elsewhere marks the refusal of a redirect to another origin of a
	// request that must stay on its own (see SameOriginOnly).
	elsewhere bool
}

// sameOriginKey is the context key of SameOriginOnly.
type sameOriginKey struct{}

// SameOriginOnly returns ctx marking the requests made with it as ones
// whose redirects may not leave the origin of the first request (see
// RedirectPolicy), why being the reason the refusal gives: a stream of
// the server's messages, which another origin must not speak for, or the
// end of a session, which another origin does not have. It is exported
// for the recording proxy, whose upstream GET streams are such requests
// (RedirectError.Elsewhere tells their refusal).
func SameOriginOnly(ctx context.Context, why string) context.Context {
	return context.WithValue(ctx, sameOriginKey{}, why)
}

// onlySameOrigin returns the reason SameOriginOnly marked ctx with, ""
// for none.
func onlySameOrigin(ctx context.Context) string {
	why, _ := ctx.Value(sameOriginKey{}).(string)
	return why
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s %s: refused to follow the HTTP %d redirect to %s: %s",
		e.Method, ShortURL(e.From), e.Status, ShortURL(e.To), e.Reason)
}

// Elsewhere reports whether the redirect was refused for pointing at
// another origin, the request being one that must stay on its own
// (SameOriginOnly), rather than for its body, its scheme or its count:
// the caller may go on without what the request was for.
func (e *RedirectError) Elsewhere() bool { return e.elsewhere }

// Is makes errors.Is(err, ErrRedirect) and errors.Is(err, ErrTransport)
// true.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirect || target == ErrTransport }

// redirectHeaders are the only request headers that follow a redirect to
// another origin: they describe what the client is and accepts, never who
// it is. Everything else stays behind — Authorization, DPoP, Cookie, every
// header given with -H (mcpx cannot know which of those are credentials),
// Mcp-Session-Id and Last-Event-ID (issued by the first origin, and
// meaningless to another), the 2026-07-28 route headers (they mirror a
// body that is not sent), and the Referer Go adds (the previous URL, whose
// query may hold a key). Content-Type is not needed: a request that still
// has a body is never sent to another origin, and a body-less one has no
// type.
var redirectHeaders = []string{"Accept", "Accept-Language", "User-Agent", "Mcp-Protocol-Version"}

// RedirectPolicy returns the CheckRedirect function of every HTTP client
// mcpx makes requests with (MCP traffic, OAuth discovery, registration and
// token requests, the recording proxy's upstream), so that credentials
// never leave the origin they were given for:
//
//   - a redirect within the origin of the first request (scheme, host and
//     port: see SameOrigin) is followed with every header;
//   - a redirect from https to http is refused: the request would travel in
//     clear text;
//   - a redirect that changes the method is refused: Go's client turns a
//     POST answered with 301, 302 or 303 into a GET without the body (the
//     MCP message, the OAuth request), whose answer is no response to it;
//   - a redirect to another origin of a request that must stay on its
//     own (a Streamable HTTP GET stream, whose events are taken for the
//     server's, and the DELETE that ends a session, which is the first
//     origin's: see SameOriginOnly) is refused;
//   - a redirect to another origin is followed without credentials: only
//     the headers in redirectHeaders go on. Once a chain of redirects has
//     left the first origin, no later hop gets credentials back, even one
//     that returns to it. When the redirected request would still carry a
//     body (307 and 308 keep it: an MCP message, or an OAuth request whose
//     body holds a code or a client secret) it is refused instead;
//   - more than MaxRedirects redirects are refused.
//
// Refusals are *RedirectError (errors.Is ErrRedirect). obs, when set, is
// told (EventNote) about every redirect followed and what was dropped.
func RedirectPolicy(obs Observer) func(req *http.Request, via []*http.Request) error {
	return redirectPolicy(obs, nil)
}

// redirectPolicy is RedirectPolicy naming the URLs in its notes and
// refusals with shown (nil: as they are), which names a request for
// http://localhost over a socket with the socket's URL (httpBase.shown).
func redirectPolicy(obs Observer, shown func(*url.URL) string) func(req *http.Request, via []*http.Request) error {
	if shown == nil {
		shown = (*url.URL).String
	}
	return func(req *http.Request, via []*http.Request) error {
		return checkRedirect(req, via, obs, shown)
	}
}

func checkRedirect(req *http.Request, via []*http.Request, obs Observer, shown func(*url.URL) string) error {
	if len(via) == 0 {
		return nil
	}
	prev := via[len(via)-1]
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	refuse := func(reason string) error {
		return &RedirectError{Method: prev.Method, From: shown(prev.URL), To: shown(req.URL), Status: status, Reason: reason}
	}
	if len(via) > MaxRedirects {
		return refuse(fmt.Sprintf("it would be redirect number %d, and mcpx follows at most %d", len(via), MaxRedirects))
	}
	if strings.EqualFold(prev.URL.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
		return refuse("it leaves https, and the request would travel unencrypted")
	}
	if req.Method != prev.Method {
		// Go's client turns a POST (or a DELETE) answered with 301, 302 or
		// 303 into a GET without its body: the message would be lost and
		// the GET's answer taken for its response.
		return refuse(fmt.Sprintf("it would turn the %s into a %s without its body (a server that moves its endpoint answers 307 or 308, which keep both)", prev.Method, req.Method))
	}
	say := func(format string, args ...any) {
		if obs != nil {
			obs(Event{Time: time.Now(), Kind: EventNote, Text: RedactURLs(fmt.Sprintf(format, args...))})
		}
	}
	what := fmt.Sprintf("%s %s: HTTP %d redirect to %s", prev.Method, ShortURL(shown(prev.URL)), status, ShortURL(shown(req.URL)))
	if !LeftOrigin(req) {
		say("%s (same origin): following it", what)
		return nil
	}
	if why := onlySameOrigin(req.Context()); why != "" {
		e := refuse("it points at another origin, and " + why).(*RedirectError)
		e.elsewhere = true
		return e
	}
	if req.ContentLength != 0 || (req.Body != nil && req.Body != http.NoBody) {
		return refuse("it points at another origin, and mcpx does not send a request body (a message, a code or a secret) there")
	}
	dropped := stripForeign(req.Header, via[0].Header)
	if len(dropped) == 0 {
		say("%s, another origin: following it without credentials", what)
		return nil
	}
	say("%s, another origin: following it without credentials (dropped %s)", what, strings.Join(dropped, ", "))
	return nil
}

// stripForeign removes every header but redirectHeaders from h and
// returns the names of those it removed, with those of the first
// request's headers that Go's client already left out (it drops
// Authorization and Cookie for another host name, but not for another
// port), sorted; the headers of a body left behind are not counted.
func stripForeign(h, first http.Header) []string {
	seen := map[string]bool{}
	for k := range first {
		k = http.CanonicalHeaderKey(k)
		if !slices.Contains(redirectHeaders, k) && !strings.HasPrefix(k, "Content-") {
			seen[k] = true
		}
	}
	for k := range h {
		ck := http.CanonicalHeaderKey(k)
		if slices.Contains(redirectHeaders, ck) {
			continue
		}
		delete(h, k)
		// Go 1.25 copies the Content-* headers of the body a 303 leaves
		// behind onto the GET (1.26 does not): removed, and not counted.
		if !strings.HasPrefix(ck, "Content-") {
			seen[ck] = true
		}
	}
	dropped := make([]string, 0, len(seen))
	for k := range seen {
		dropped = append(dropped, k)
	}
	slices.Sort(dropped)
	return dropped
}

// LeftOrigin reports whether req is a hop of a redirect chain (followed by
// an http.Client) that has left the origin of the chain's first request,
// at this hop or an earlier one. Credentials must not go on such a
// request: RedirectPolicy strips the headers the client copies, and a
// RoundTripper that adds credentials of its own (a DPoP proof) must check
// this first.
func LeftOrigin(req *http.Request) bool {
	var chain []*url.URL
	for r := req; r != nil; {
		chain = append(chain, r.URL)
		if r.Response == nil {
			break
		}
		r = r.Response.Request
	}
	first := chain[len(chain)-1]
	for _, u := range chain[:len(chain)-1] {
		if !SameOrigin(first, u) {
			return true
		}
	}
	return false
}

// WithRedirectPolicy returns c ready for mcpx's requests: when c has no
// CheckRedirect of its own, a copy of it with RedirectPolicy(obs) (c is
// not changed; nil means a new default client); c itself when it has one,
// a caller's deliberate choice (a test's).
func WithRedirectPolicy(c *http.Client, obs Observer) *http.Client {
	if c == nil {
		return &http.Client{CheckRedirect: RedirectPolicy(obs)}
	}
	if c.CheckRedirect != nil {
		return c
	}
	cc := *c
	cc.CheckRedirect = RedirectPolicy(obs)
	return &cc
}
