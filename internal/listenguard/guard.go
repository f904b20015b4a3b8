// Package listenguard is the rule every HTTP listener mcpx opens on the
// user's machine follows (mcpx replay --listen, mcpx proxy --listen, the
// OAuth loopback callback, and any later one): it refuses what a web page
// in the user's browser could send.
//
// A page cannot read a local server's answers across origins, but it can
// still send requests to it, and with DNS rebinding (its own name made to
// resolve to 127.0.0.1) it can even read them: the browser then believes
// the listener is the page's own origin. The MCP specification therefore
// requires servers to validate Origin and to answer an invalid one with
// 403 (spec 2025-03-26 to 2025-11-25: basic/transports, Streamable HTTP
// "Security Warning"; 2026-07-28: basic/transports/streamable-http,
// "Security & Endpoint"). Two checks, in this order:
//
//   - Host. The request must be addressed to the listener: its Host names
//     the port the listener is bound to (the resolved port when it was
//     asked for port 0) and either localhost, 127.0.0.1, [::1], or the
//     address it is bound to. A rebinding page sends its own name as Host,
//     so it is refused here with 421 Misdirected Request (RFC 9110,
//     section 15.5.20) even when it sends no Origin. A listener bound to
//     all interfaces (0.0.0.0 or [::]) is reached from other machines by
//     one of this machine's addresses: it also accepts the IP address the
//     connection came in on, and the machine's host name (os.Hostname),
//     at its port. Other names are refused: a name an attacker controls
//     can be pointed at any address, so only IP literals and names that
//     are this machine's own are trusted.
//   - Origin. A request without Origin is not sent by a page's script
//     (curl, Go clients and MCP hosts send none) and passes. A request
//     with an Origin passes only when that origin is the listener's own
//     (http://localhost:PORT, http://127.0.0.1:PORT, http://[::1]:PORT, or
//     http:// and the Host the request was accepted for) or one of
//     Options.AllowOrigins; every other one, "null" (sandboxed frames,
//     file: pages, origins lost in redirects) included, gets 403.
//
// An admitted Origin gets CORS (Fetch standard, "CORS protocol"): a
// preflight is answered here, allowing the methods and request headers of
// Streamable HTTP, and every response names the origin and exposes the
// headers a client must read. Other requests get no CORS headers at all.
package listenguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Options configure New.
type Options struct {
	// Addr is the address the listener is bound to, as its Addr method
	// reports it (so a port 0 has been resolved).
	Addr net.Addr
	// AllowOrigins are further origins admitted, each as ParseOrigin
	// accepts it: the origins of deliberate browser clients.
	AllowOrigins []string
	// AllowNavigation exempts top-level navigations (Sec-Fetch-Mode:
	// navigate, a header no script can set) from the Origin check, not
	// from the Host check. It is for a listener a browser is sent to, such
	// as an OAuth redirect target: the answer to a navigation goes to the
	// user's window, not to the page that started it, and browsers attach
	// Origin to a navigation that POSTs a form (the authorization server's
	// origin, or "null" after a cross-origin redirect).
	AllowNavigation bool
	// OnRefuse, when set, is told about every refused request.
	OnRefuse func(Refusal)
}

// Guard is an http.Handler that applies the rule (see the package
// comment) before handing a request on.
type Guard struct {
	next     http.Handler
	port     string
	ip       net.IP // the bound address; nil or unspecified: all interfaces
	any      bool   // bound to all interfaces
	hostname string // the machine's name, lower case ("" when unknown)
	allow    []string
	nav      bool
	onRefuse func(Refusal)
}

// New wraps next in the rule for a listener bound to o.Addr.
func New(next http.Handler, o Options) (*Guard, error) {
	if o.Addr == nil {
		return nil, errors.New("listenguard: no listener address")
	}
	host, port, err := net.SplitHostPort(o.Addr.String())
	if err != nil || port == "" || port == "0" {
		return nil, fmt.Errorf("listenguard: listener address %q has no resolved port", o.Addr.String())
	}
	g := &Guard{next: next, port: port, nav: o.AllowNavigation, onRefuse: o.OnRefuse}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i] // an IPv6 zone
	}
	g.ip = net.ParseIP(host)
	g.any = host == "" || g.ip != nil && g.ip.IsUnspecified()
	if g.any {
		if name, err := os.Hostname(); err == nil {
			g.hostname = strings.ToLower(name)
		}
	}
	for _, a := range o.AllowOrigins {
		n, err := ParseOrigin(a)
		if err != nil {
			return nil, err
		}
		g.allow = append(g.allow, n)
	}
	return g, nil
}

// Reason says which check refused a request.
type Reason int

const (
	// BadHost: the Host is not the listener's address (421).
	BadHost Reason = iota + 1
	// BadOrigin: the Origin is neither the listener's own nor admitted
	// (403).
	BadOrigin
)

// Refusal describes a refused request, for the user to see why a client
// fails.
type Refusal struct {
	Reason Reason
	// Value is the refused Host or Origin as received (untrusted text:
	// print it with String, which escapes it).
	Value  string
	Method string
	Path   string
	// Remote is the client's address.
	Remote string
	// Status is the HTTP status the request was answered with.
	Status int
}

// String describes r on one line, with what the client sent quoted and
// shortened so that nothing in it can control the terminal.
func (r Refusal) String() string {
	what := "Host %s does not name this listener"
	if r.Reason == BadOrigin {
		what = "Origin %s is neither this listener's own nor admitted"
	}
	return fmt.Sprintf("refused %s %s from %s (%d): "+what,
		plain(r.Method, 16), plain(r.Path, 80), plain(r.Remote, 64), r.Status, Quote(r.Value, 120))
}

// Quote quotes untrusted text for a terminal or a log line: control
// characters and invalid UTF-8 are escaped, and more than max bytes are
// cut off with "…" after the closing quote.
func Quote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max]) + "…"
}

// plain returns s as it is when it is short printable ASCII without
// spaces, quoted by Quote otherwise.
func plain(s string, max int) string {
	if s == "" || len(s) > max || strings.ContainsFunc(s, func(c rune) bool { return c <= ' ' || c >= 0x7f || c == '"' }) {
		return Quote(s, max)
	}
	return s
}

// ServeHTTP applies the rule and hands admitted requests on.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostOK(r) {
		g.refuse(w, r, BadHost, r.Host, http.StatusMisdirectedRequest,
			"this local mcpx listener answers only requests addressed to it (localhost:"+g.port+
				" or 127.0.0.1:"+g.port+"), not to Host "+Quote(r.Host, 120)+"\n")
		return
	}
	origins := r.Header.Values("Origin")
	if len(origins) == 0 {
		g.next.ServeHTTP(w, r)
		return
	}
	origin := origins[0]
	if len(origins) > 1 || !g.originOK(r, origin) {
		if g.nav && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
			g.next.ServeHTTP(w, r)
			return
		}
		g.refuse(w, r, BadOrigin, strings.Join(origins, ", "), http.StatusForbidden,
			"this local mcpx listener does not accept requests from web pages of origin "+Quote(origin, 120)+"\n")
		return
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		preflight(w, r, origin)
		return
	}
	g.next.ServeHTTP(&corsWriter{ResponseWriter: w, origin: origin}, r)
}

func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, why Reason, value string, status int, body string) {
	if g.onRefuse != nil {
		g.onRefuse(Refusal{Reason: why, Value: value, Method: r.Method, Path: r.URL.Path, Remote: r.RemoteAddr, Status: status})
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// hostOK reports whether the request is addressed to this listener.
func (g *Guard) hostOK(r *http.Request) bool {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		// No port: the default one (mcpx listens without TLS).
		host, port = r.Host, "80"
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		}
	}
	if port != g.port || host == "" {
		return false
	}
	host = strings.ToLower(host)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return g.any && g.hostname != "" && host == g.hostname
	}
	if ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback) {
		return true
	}
	if !g.any {
		return ip.Equal(g.ip)
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return false
	}
	lh, _, err := net.SplitHostPort(local.String())
	if i := strings.IndexByte(lh, '%'); i >= 0 {
		lh = lh[:i]
	}
	return err == nil && ip.Equal(net.ParseIP(lh))
}

// originOK reports whether origin is the listener's own or admitted. The
// request's Host has been checked already.
func (g *Guard) originOK(r *http.Request, origin string) bool {
	o, err := ParseOrigin(origin)
	if err != nil {
		return false
	}
	if slices.Contains(g.allow, o) {
		return true
	}
	for _, own := range []string{"localhost:" + g.port, "127.0.0.1:" + g.port, "[::1]:" + g.port, r.Host} {
		if self, err := ParseOrigin("http://" + own); err == nil && self == o {
			return true
		}
	}
	return false
}

// ParseOrigin checks a web origin, scheme://host[:port] (RFC 6454, section
// 6.1), and returns it in the form a browser sends: scheme and host in
// lower case, without the scheme's default port, and without the "/" an
// address bar adds. It refuses a path, query, fragment or user info, and
// the origins that stand for many pages: "*" and "null".
func ParseOrigin(s string) (string, error) {
	const want = "expected scheme://host[:port] with nothing after it, e.g. http://localhost:6274"
	switch s {
	case "*":
		return "", fmt.Errorf("origin %q: every web page would be admitted; name the origins of the clients to admit (%s)", s, want)
	case "null":
		return "", fmt.Errorf("origin %q: that is the origin of every sandboxed frame and local file, not of one client (%s)", s, want)
	}
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return "", fmt.Errorf("origin %q: %s", s, want)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if host == "" || strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("origin %q: %s", s, want)
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("origin %q: invalid port", s)
		}
		port = strconv.Itoa(n)
		if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
			port = ""
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// The headers of Streamable HTTP a browser client sends (spec 2025-11-25:
// basic/transports; 2026-07-28: basic/transports/streamable-http, "Request
// Metadata") and may read. Accept is CORS-safelisted for the values MCP
// uses; Authorization and Content-Type: application/json are not.
var (
	allowHeaders  = "Authorization, Content-Type, Last-Event-ID, Mcp-Method, Mcp-Name, Mcp-Protocol-Version, Mcp-Session-Id"
	exposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
)

const paramPrefix = "mcp-param-"

// preflight answers a CORS preflight from an admitted origin. The
// Mcp-Param-{Name} headers of the 2026-07-28 era have open names, which
// Access-Control-Allow-Headers cannot list with a pattern: those the
// browser asks for are named back.
func preflight(w http.ResponseWriter, r *http.Request, origin string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	allowed := allowHeaders
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if len(name) > len(paramPrefix) && strings.EqualFold(name[:len(paramPrefix)], paramPrefix) && validToken(name) {
				allowed += ", " + name
			}
		}
	}
	h.Set("Access-Control-Allow-Headers", allowed)
	// Private Network Access: a page on a public site asks before it
	// talks to a loopback address; the origin was admitted deliberately.
	if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
	w.WriteHeader(http.StatusNoContent)
}

// validToken reports whether s is an HTTP token (RFC 9110, section 5.6.2),
// as a header name must be.
func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return s != ""
}

// corsWriter gives an admitted origin's responses their CORS headers. They
// are set when the header is written, replacing any the handler set (a
// proxied server's CORS policy is about its own origin, not the
// listener's).
type corsWriter struct {
	http.ResponseWriter
	origin string
	wrote  bool
}

func (w *corsWriter) cors() {
	if w.wrote {
		return
	}
	h := w.ResponseWriter.Header()
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			delete(h, k)
		}
	}
	h.Set("Access-Control-Allow-Origin", w.origin)
	h.Set("Access-Control-Expose-Headers", exposeHeaders)
	if !slices.ContainsFunc(h.Values("Vary"), func(v string) bool { return strings.Contains(strings.ToLower(v), "origin") }) {
		h.Add("Vary", "Origin")
	}
}

func (w *corsWriter) WriteHeader(code int) {
	w.cors()
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *corsWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// FlushError lets http.ResponseController flush through the wrapper (SSE
// streams are flushed event by event).
func (w *corsWriter) FlushError() error {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *corsWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Throttle returns an Options.OnRefuse that passes each distinct refusal
// (the same check refusing the same value) to report once, and stops after
// limit distinct ones, telling report which is the last (last is true):
// a page can send requests in a loop, and the user's terminal must stay
// readable while the first refusal still explains why a client fails.
func Throttle(limit int, report func(r Refusal, last bool)) func(Refusal) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(r Refusal) {
		mu.Lock()
		key := strconv.Itoa(int(r.Reason)) + " " + r.Value
		if seen[key] || len(seen) >= limit {
			mu.Unlock()
			return
		}
		seen[key] = true
		last := len(seen) == limit
		mu.Unlock()
		report(r, last)
	}
}
