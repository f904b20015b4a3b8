package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// A server may listen for HTTP on a Unix domain socket or a Windows named
// pipe rather than on a TCP port. VS Code names such a server with a URL
// whose path is the socket's and whose fragment is the HTTP path of the
// MCP endpoint (its MCP configuration reference, "HTTP and Server-Sent
// Events (SSE) servers"; extHostMcpNode.ts sends the requests to
// http://localhost/FRAGMENT over the socket, with the URL's query):
//
//	unix:///tmp/server.sock#/mcp   POST http://localhost/mcp over /tmp/server.sock
//	unix:///tmp/server.sock        POST http://localhost/ over /tmp/server.sock
//	pipe:///pipe/NAME#/mcp         the same over the named pipe \\.\pipe\NAME
//
// mcpx reads them the same way. Everything about the connection but the
// dialing is HTTP's: the URL as given is the one shown, traced and
// compared (redirects and the HTTP+SSE endpoint are mapped back onto the
// socket: see socketEndpoint.resolve), and the requests are plain HTTP,
// which a socket needs no TLS for.

// socketHost is the host of every request sent over a socket or a pipe:
// HTTP requires one, the server behind a socket is on this machine, and
// it is VS Code's choice. A -H Host header replaces it, as it does for
// any server.
const socketHost = "localhost"

// IsSocketURL reports whether raw names a server reached over a Unix
// domain socket (unix://) or a Windows named pipe (pipe://) rather than
// over TCP. It says nothing of whether the rest of raw is right: see
// ParseEndpoint.
func IsSocketURL(raw string) bool {
	scheme, _, ok := strings.Cut(raw, "://")
	return ok && (strings.EqualFold(scheme, "unix") || strings.EqualFold(scheme, "pipe"))
}

// socketEndpoint is where the HTTP requests of a connection to a unix://
// or pipe:// URL go.
type socketEndpoint struct {
	// url is the URL as ParseEndpoint parsed it (its scheme in lower
	// case): the one every request's URL is mapped from.
	url *url.URL
	// network is "unix" or "pipe"; address the socket's path (in the
	// system's form: see socketPath) or the pipe's name (\\.\pipe\NAME).
	network, address string
}

// newSocketEndpoint returns the socketEndpoint of u, a URL ParseEndpoint
// accepted, or nil when u is an http:// or https:// URL.
func newSocketEndpoint(u *url.URL) *socketEndpoint {
	switch u.Scheme {
	case "unix":
		return &socketEndpoint{url: u, network: "unix", address: socketPath(u.Path)}
	case "pipe":
		return &socketEndpoint{url: u, network: "pipe", address: `\\.\pipe\` + strings.TrimPrefix(u.Path, "/pipe/")}
	}
	return nil
}

// socketOf returns the socketEndpoint of raw, nil when raw is not a
// unix:// or pipe:// URL that ParseEndpoint accepts.
func socketOf(raw string) *socketEndpoint {
	if !IsSocketURL(raw) {
		return nil
	}
	u, err := ParseEndpoint(raw)
	if err != nil {
		return nil
	}
	return newSocketEndpoint(u)
}

// requestURL maps u, a URL of the socket (the server's URL, or one
// resolve returned), onto the http://localhost URL its requests are
// sent to: the fragment is the path ("/" when there is none), the query
// stays.
func (s *socketEndpoint) requestURL(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	path := p.EscapedFragment()
	if path == "" {
		path = "/"
	}
	h := &url.URL{Scheme: "http", Host: socketHost, RawQuery: p.RawQuery}
	if h.Path, err = url.PathUnescape(path); err != nil {
		return "", err
	}
	h.RawPath = path
	return h.String(), nil
}

// socketURL maps h, a URL of the http://localhost form requests go to,
// back onto the socket's URL: its path becomes the fragment, its query
// the query.
func (s *socketEndpoint) socketURL(h *url.URL) string {
	u := *s.url
	u.RawQuery = h.RawQuery
	u.Fragment, u.RawFragment = h.Path, h.EscapedPath()
	if u.Fragment == "/" {
		u.Fragment, u.RawFragment = "", ""
	}
	return u.String()
}

// shown names u, the URL of a request, as mcpx shows it: a request for
// the placeholder host as the socket's URL (socketURL), any other as it
// is.
func (s *socketEndpoint) shown(u *url.URL) string {
	if u.Host == socketHost && u.Scheme == "http" {
		return s.socketURL(u)
	}
	return u.String()
}

// resolve resolves ref, a reference the server sent (the HTTP+SSE
// endpoint event), against base, a URL of the socket, as a client of the
// http://localhost URL the socket's requests go to would: a reference to
// another origin is returned as it is (the caller refuses it), one on
// the socket as the socket's URL.
func (s *socketEndpoint) resolve(base, ref string) (u string, sameOrigin bool, err error) {
	hb, err := s.requestURL(base)
	if err != nil {
		return "", false, err
	}
	b, err := url.Parse(hb)
	if err != nil {
		return "", false, err
	}
	r, err := b.Parse(ref)
	if err != nil {
		return "", false, err
	}
	if !SameOrigin(b, r) {
		return r.String(), false, nil
	}
	return s.socketURL(r), true, nil
}

// dial connects to the socket or the pipe. addr is the host and port of
// the request net/http dials for: only the placeholder's (socketHost) is
// the socket's. A redirect elsewhere is not followed off the socket: a
// server that is reached over a socket has no other address mcpx could
// trust it at. The connection is net's own (*net.UnixConn), read and
// written by net: the raw system calls of dialTCP (tcp_linux.go) are for
// TCP connections, which it alone dials.
func (s *socketEndpoint) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr != socketHost+":80" {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("the server is reached over %s only, not at %s (mcpx does not leave the socket for another address)", s.describe(), addr)}
	}
	if s.network == "pipe" {
		return dialPipe(ctx, s.address)
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", s.address)
}

// describe names the socket or the pipe, for messages.
func (s *socketEndpoint) describe() string {
	if s.network == "pipe" {
		return "the named pipe " + s.address
	}
	return "the Unix socket " + s.address
}

// parseSocketURL is ParseEndpoint for a unix:// or pipe:// URL: raw with
// its scheme (in lower case) and what follows "://" (rest). The socket's
// path must be absolute and the URL have no host, user info or port (a
// socket has none); the fragment, the HTTP path, must start with "/" and
// hold no query (the query goes before the "#", as VS Code reads it).
func parseSocketURL(raw, scheme, rest string, bad func(problem, fix string) error, suggest func(string) string) (*url.URL, error) {
	example := "unix:///PATH/TO/SOCKET#/mcp"
	if scheme == "pipe" {
		example = "pipe:///pipe/NAME#/mcp"
	}
	if scheme == "pipe" && pipeProblem != "" {
		return nil, bad(pipeProblem, "give the server's unix:// socket or its http:// URL")
	}
	hostEnd := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		hostEnd = i
	}
	if host := rest[:hostEnd]; strings.Contains(host, "@") {
		// User info is not quoted: it may hold a password.
		return nil, bad(fmt.Sprintf(`%q names the socket's path, which must be absolute, with no user info or host before it`, scheme+"://"),
			suggest(scheme+":///"+rest))
	} else if host != "" {
		return nil, bad(fmt.Sprintf(`%q names the socket's path, which must be absolute, with no host (%q) before it`, scheme+"://", host),
			suggest(scheme+":///"+rest))
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, bad("it does not parse: "+RedactURLs(err.Error()), "write it as "+example)
	}
	u.Scheme = scheme
	switch {
	case u.Path == "" || u.Path == "/":
		return nil, bad("it names no socket", "write it as "+example)
	case scheme == "pipe" && (!strings.HasPrefix(u.Path, "/pipe/") || len(u.Path) == len("/pipe/") || strings.ContainsAny(u.Path[len("/pipe/"):], `/\`)):
		return nil, bad(fmt.Sprintf("%q is not a named pipe's path (/pipe/NAME, for \\\\.\\pipe\\NAME)", u.Path), "write it as "+example)
	case strings.ContainsFunc(u.Path, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0 }):
		return nil, bad("the socket's path holds control characters", "remove them")
	}
	if u.Fragment != "" && !strings.HasPrefix(u.Fragment, "/") {
		return nil, bad(fmt.Sprintf("the HTTP path after '#' (%q) must start with '/'", u.Fragment),
			suggest(raw[:strings.IndexByte(raw, '#')]+"#/"+u.EscapedFragment()))
	}
	if strings.Contains(u.Fragment, "?") {
		path, query, _ := strings.Cut(u.EscapedFragment(), "?")
		base := raw[:strings.IndexByte(raw, '#')]
		if i := strings.IndexByte(base, '?'); i >= 0 {
			query = base[i+1:] + "&" + query
			base = base[:i]
		}
		// The URL is shown with the query after '#' redacted too.
		q, _ := redactQuery(u.EscapedFragment()[len(path)+1:])
		return nil, &URLError{URL: redactLoose(raw[:strings.IndexByte(raw, '#')]) + "#" + path + "?" + q,
			Problem: "the query after '#' would be sent as part of the path", Fix: "put it before the '#': " + suggest(base+"?"+query+"#"+path)}
	}
	return u, nil
}

// SocketRoute is how a client of its own (the recording proxy's) reaches
// a server on a Unix socket: see RouteSocket.
type SocketRoute struct {
	// URL is the http://localhost URL the server's URL maps onto: the
	// socket's requests go to it.
	URL *url.URL
	// Dial is the DialContext for an http.Transport: it reaches the
	// socket for URL's host and no other (see socketEndpoint.dial).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Shown names the URL of a request as mcpx shows it: one for URL's
	// host as the socket's unix:// URL.
	Shown func(*url.URL) string
}

// RouteSocket returns the SocketRoute of u, a URL ParseEndpoint
// returned, when it is a unix:// or pipe:// one; nil for an http:// or
// https:// URL.
func RouteSocket(u *url.URL) *SocketRoute {
	s := newSocketEndpoint(u)
	if s == nil {
		return nil
	}
	h, err := s.requestURL(u.String())
	if err != nil {
		return nil
	}
	hu, err := url.Parse(h)
	if err != nil {
		return nil
	}
	return &SocketRoute{URL: hu, Dial: s.dial, Shown: s.shown}
}
