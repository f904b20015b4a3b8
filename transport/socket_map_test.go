package transport

import (
	"net/url"
	"testing"
)

// A socket's URL maps onto the http://localhost URL sent over it (the
// fragment the path, "/" without one; the query kept), and back: what the
// server names on http://localhost (the HTTP+SSE endpoint) is the
// socket's URL again, and what it names elsewhere is refused.
func TestSocketURLMapping(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, request string }{
		{"unix:///tmp/s.sock", "http://localhost/"},
		{"unix:///tmp/s.sock#/", "http://localhost/"},
		{"unix:///tmp/s.sock#/mcp", "http://localhost/mcp"},
		{"unix:///tmp/s.sock?key=1&b=2#/a/b", "http://localhost/a/b?key=1&b=2"},
		{"unix:///tmp/s.sock#/a%2Fb%20c", "http://localhost/a%2Fb%20c"},
		{"UNIX:///tmp/s.sock#/mcp", "http://localhost/mcp"},
	} {
		u, err := ParseEndpoint(tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		s := newSocketEndpoint(u)
		if s == nil || s.network != "unix" || s.address != "/tmp/s.sock" {
			t.Fatalf("%q: socket %+v", tt.in, s)
		}
		got, err := s.requestURL(u.String())
		if err != nil || got != tt.request {
			t.Errorf("%q: request URL %q (%v), want %q", tt.in, got, err, tt.request)
		}
	}
	u, _ := ParseEndpoint("unix:///tmp/s.sock?key=1#/sse")
	s := newSocketEndpoint(u)
	for _, tt := range []struct {
		ref, want string
		same      bool
	}{
		{"?sessionid=7", "unix:///tmp/s.sock?sessionid=7#/sse", true},
		{"/messages?sessionid=7", "unix:///tmp/s.sock?sessionid=7#/messages", true},
		{"http://localhost/m", "unix:///tmp/s.sock#/m", true},
		{"/", "unix:///tmp/s.sock", true},
		{"http://localhost:8080/m", "http://localhost:8080/m", false},
		{"https://evil.example/m", "https://evil.example/m", false},
	} {
		got, same, err := s.resolve(u.String(), tt.ref)
		if err != nil || got != tt.want || same != tt.same {
			t.Errorf("resolve(%q) = %q, %v, %v; want %q, %v", tt.ref, got, same, err, tt.want, tt.same)
		}
		if tt.ref == "?sessionid=7" {
			// What resolve returns is sent where the server meant it.
			if req, _ := s.requestURL(got); req != "http://localhost/sse?sessionid=7" {
				t.Errorf("%q is requested as %q", got, req)
			}
		}
	}
	if r := RouteSocket(mustParse(t, "http://127.0.0.1:1/mcp")); r != nil {
		t.Error("RouteSocket takes an http:// URL for a socket's")
	}
	r := RouteSocket(u)
	if r == nil || r.Dial == nil || r.URL.String() != "http://localhost/sse?key=1" {
		t.Fatalf("RouteSocket = %+v", r)
	}
	if got := r.Shown(mustParse(t, "http://localhost/m?x=1")); got != "unix:///tmp/s.sock?x=1#/m" {
		t.Errorf("Shown = %q", got)
	}
	if got := r.Shown(mustParse(t, "http://example.com/m")); got != "http://example.com/m" {
		t.Errorf("Shown = %q", got)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := ParseEndpoint(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// URLs of sockets in free text have their secrets redacted like any.
func TestRedactSocketURLs(t *testing.T) {
	t.Parallel()
	in := "POST unix:///tmp/s.sock?api_key=K1&x=2#/mcp: refused; see pipe:///pipe/p?token=K2#/m."
	want := "POST unix:///tmp/s.sock?api_key=[redacted]&x=2#/mcp: refused; see pipe:///pipe/p?token=[redacted]#/m."
	if got := RedactURLs(in); got != want {
		t.Errorf("RedactURLs = %q, want %q", got, want)
	}
}
