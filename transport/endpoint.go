package transport

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// URLError reports an MCP server URL that cannot be used as it is, found
// before anything is sent: net/url accepts much that no HTTP client
// should dial as given (an empty port after the colon quietly became
// port 80).
type URLError struct {
	// URL is the URL as given, with its user info and secret query values
	// redacted (it is only ever shown).
	URL string
	// Problem says what is wrong ("the port after ':' is empty").
	Problem string
	// Fix says how to write it instead; it may name a corrected URL
	// (redacted too).
	Fix string
}

// Error says what is wrong with the URL and how to write it.
func (e *URLError) Error() string {
	return fmt.Sprintf("URL %q: %s; %s", e.URL, e.Problem, e.Fix)
}

// Detail is Error without the URL, for a caller that names it itself.
func (e *URLError) Detail() string { return e.Problem + "; " + e.Fix }

// ParseEndpoint parses the URL of an MCP server reached over HTTP
// (Streamable HTTP's MCP endpoint or HTTP+SSE's SSE endpoint). It accepts
// what url.Parse accepts with these exceptions, each a *URLError saying
// what to write instead:
//
//   - white space around the URL;
//   - no scheme (127.0.0.1:3001/mcp, localhost:3001, :3001), a scheme
//     other than http and https, or one not followed by "//";
//   - no host; an IPv6 address without brackets ("::1:3001" is an address,
//     not an address and a port); a ':' with no port after it (net/http
//     dials the scheme's default port then); a port that is not a number
//     from 1 to 65535;
//   - a fragment (#…), which HTTP never sends: the server would not see
//     what the URL seems to say.
//
// unix:///PATH#/HTTP-PATH and pipe:///pipe/NAME#/HTTP-PATH name a server
// listening on a Unix domain socket or a Windows named pipe, as in VS
// Code's mcp.json: there the fragment is the HTTP path (see
// parseSocketURL and socketEndpoint).
//
// User info (user:password@) is accepted, and net/http sends it as Basic
// credentials to that origin only; every URL mcpx shows goes through
// RedactURL, which hides it.
func ParseEndpoint(raw string) (*url.URL, error) {
	bad := func(problem, fix string) error {
		return &URLError{URL: redactLoose(raw), Problem: problem, Fix: fix}
	}
	suggest := func(u string) string { return "did you mean " + redactLoose(u) + "?" }
	if t := strings.TrimSpace(raw); t != raw {
		if t == "" {
			return nil, bad("it is empty", "give the server's URL, e.g. http://127.0.0.1:3001/mcp")
		}
		return nil, bad("it has white space around it", suggest(t))
	}
	if raw == "" {
		return nil, bad("it is empty", "give the server's URL, e.g. http://127.0.0.1:3001/mcp")
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || !validScheme(scheme) {
		return nil, noScheme(raw, bad, suggest)
	}
	switch strings.ToLower(scheme) {
	case "http", "https":
	case "unix", "pipe":
		return parseSocketURL(raw, strings.ToLower(scheme), rest, bad, suggest)
	case "ws":
		return nil, bad("MCP servers are not reached over WebSocket (ws://)", suggest("http://"+rest))
	case "wss":
		return nil, bad("MCP servers are not reached over WebSocket (wss://)", suggest("https://"+rest))
	default:
		return nil, bad(fmt.Sprintf("%q is not a scheme MCP servers are reached with", scheme+"://"), "use http:// or https:// (or unix:// for a Unix socket)")
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	hostport := authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		hostport = authority[i+1:]
	}
	example := strings.ToLower(scheme) + "://127.0.0.1:3001/mcp"
	host, port, hasPort := hostport, "", false
	switch {
	case hostport == "":
		return nil, bad("it has no host", "write it as "+example)
	case hostport[0] == '[':
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return nil, bad("the IPv6 address has no closing ']'", "write it as "+strings.ToLower(scheme)+"://[::1]:3001/mcp")
		}
		host = hostport[:end+1]
		after := hostport[end+1:]
		if after != "" && after[0] != ':' {
			return nil, bad(fmt.Sprintf("%q after the IPv6 address is not a port", after), "write it as "+strings.ToLower(scheme)+"://[::1]:3001/mcp")
		}
		if after != "" {
			port, hasPort = after[1:], true
		}
	case strings.Count(hostport, ":") > 1:
		fix := "put the address in brackets: " + strings.ToLower(scheme) + "://[::1]:3001/mcp"
		if i := strings.LastIndexByte(hostport, ':'); isPort(hostport[i+1:]) && net.ParseIP(hostport[:i]) != nil {
			fix = "put the address in brackets: " + suggest(strings.ToLower(scheme)+"://["+hostport[:i]+"]:"+hostport[i+1:]+rest[len(authority):])
		}
		return nil, bad("an IPv6 address in a URL must be in brackets", fix)
	default:
		host, port, hasPort = strings.Cut(hostport, ":")
	}
	if host == "[]" {
		return nil, bad("it has no host", "write it as "+example)
	}
	if host == "" {
		return nil, bad("it has no host before the port", suggest(strings.ToLower(scheme)+"://127.0.0.1"+hostport[len(host):]+rest[len(authority):]))
	}
	if hasPort {
		if port == "" {
			def := "80"
			if strings.EqualFold(scheme, "https") {
				def = "443"
			}
			shown := strings.ToLower(scheme) + "://" + host
			// The rest is redacted as it is in raw, before PORT goes in:
			// in "http://h://u:pw@x" the ":" before "//" begins a "://".
			tail := redactLoose(shown + ":" + rest[len(authority):])[len(shown)+1:]
			return nil, bad(`the port after ":" is empty`,
				fmt.Sprintf(`write the port (%s:PORT%s) or drop the ":" to use port %s`, shown, tail, def))
		}
		if !isDigits([]byte(port)) {
			return nil, bad(fmt.Sprintf("the port %q is not a number", port), "write it as "+example)
		}
		if !isPort(port) {
			return nil, bad(fmt.Sprintf("the port %s is not from 1 to 65535", port), "write it as "+example)
		}
	}
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		return nil, bad("it has a fragment ("+Excerpt(redactLoose(raw[i:]))+"), which is never sent to the server", suggest(raw[:i]))
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the URL; its inner error says what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		fix := "write it as " + example
		var esc url.EscapeError
		switch {
		case errors.As(err, &esc):
			fix = `write a "%" that is not an escape as %25`
		case strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			fix = "remove the control characters"
		}
		return nil, bad("it does not parse: "+RedactURLs(err.Error()), fix)
	}
	return u, nil
}

// noScheme is ParseEndpoint's error for a URL that does not start with a
// scheme and "//".
func noScheme(raw string, bad func(problem, fix string) error, suggest func(string) string) error {
	if scheme, rest, ok := strings.Cut(raw, ":"); ok && httpScheme(scheme) {
		// http:/host, http:host
		return bad(`the scheme must be followed by "//"`, suggest(strings.ToLower(scheme)+"://"+strings.TrimLeft(rest, "/")))
	} else if ok && (strings.EqualFold(scheme, "unix") || strings.EqualFold(scheme, "pipe")) {
		// unix:/tmp/s.sock: the path follows "//" (see parseSocketURL).
		return bad(`the scheme must be followed by "//" and the socket's absolute path`, suggest(strings.ToLower(scheme)+":///"+strings.TrimLeft(rest, "/")))
	}
	rest := strings.TrimPrefix(raw, "//")
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	hostport := authority[strings.LastIndexByte(authority, '@')+1:]
	host, port, hasPort := strings.Cut(hostport, ":")
	if hasPort && !isPort(port) || host == "" && !hasPort || strings.ContainsAny(hostport, "[]") {
		return bad("it has no http:// or https:// scheme", "write it as http://127.0.0.1:3001/mcp")
	}
	if host == "" {
		// :3001
		rest = "127.0.0.1" + rest
	}
	scheme := "https://"
	if h := strings.ToLower(host); h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		scheme = "http://"
	} else if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		scheme = "http://"
	}
	return bad("it has no http:// or https:// scheme", suggest(scheme+rest))
}

// validScheme reports whether s is a URL scheme (RFC 3986 section 3.1).
func validScheme(s string) bool {
	if s == "" || !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// isPort reports whether s is a TCP port number, 1 to 65535.
func isPort(s string) bool {
	if !isDigits([]byte(s)) || len(s) > 5 {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}
