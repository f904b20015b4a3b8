package oauthflow

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// FuzzOAuthURLs checks the URL handling of discovery and of
// --callback-url on arbitrary URLs: the metadata mcpx looks up lives on
// the origin it belongs to, a server's canonical resource is canonical,
// covers the server (a token issued for it may be sent there) and has no
// query, fragment or user info,
// Covers never crosses origins, only a plain http loopback URL with a port
// is a callback URL, and endpoints are https, loopback or on the server's
// own origin.
func FuzzOAuthURLs(f *testing.F) {
	for _, s := range []struct{ a, b string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp/sub"},
		{"https://mcp.example.com/", "https://auth.example.com/tenant1"},
		{"http://127.0.0.1:8080/callback", "http://localhost:33418/"},
		{"https://EXAMPLE.com:443/a/b/?q=1#frag", "https://example.com/a"},
		{"http://user:pw@[::1]:99/x%2Fy", "http://[::1]:99/x%2Fy/z"},
		{"https://example.com/mcp", "http://example.com/mcp"},
		{"https://mcp.example.com/mcp?jwt=eyJ&zipcode=94110", "https://mcp.example.com/mcp"},
		{"https://mcp.example.com/?", "https://mcp.example.com"},
	} {
		f.Add(s.a, s.b)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		checkResourceMetadataURLs(t, a)
		checkServerMetadataURLs(t, a)
		checkCanonical(t, a)
		checkCovers(t, a, b)
		checkCallback(t, a)
		if err := checkEndpoint("token endpoint", a, b); err == nil {
			u, _ := url.Parse(a)
			s, serr := url.Parse(b)
			if u.Scheme != "https" && !isLoopbackHost(u.Hostname()) && (serr != nil || !transport.SameOrigin(u, s)) {
				t.Fatalf("checkEndpoint accepted %q for server %q", a, b)
			}
		}
	})
}

func mustSameOrigin(t *testing.T, what, got, of string) *url.URL {
	t.Helper()
	g, err := url.Parse(got)
	o, _ := url.Parse(of)
	if err != nil || !transport.SameOrigin(g, o) {
		t.Fatalf("%s of %q: %q is not on its origin (%v)", what, of, got, err)
	}
	return g
}

func checkResourceMetadataURLs(t *testing.T, server string) {
	urls, err := ResourceMetadataURLs(server)
	if err != nil {
		return
	}
	for _, u := range urls {
		p := mustSameOrigin(t, "protected resource metadata", u, server)
		if !strings.HasPrefix(p.EscapedPath(), "/.well-known/oauth-protected-resource") {
			t.Fatalf("ResourceMetadataURLs(%q): %q is not under the well-known path", server, u)
		}
	}
}

func checkServerMetadataURLs(t *testing.T, issuer string) {
	urls, err := ServerMetadataURLs(issuer)
	if err != nil {
		return
	}
	for _, u := range urls {
		p := mustSameOrigin(t, "authorization server metadata", u, issuer)
		if p.RawQuery != "" || p.Fragment != "" || !strings.Contains(p.EscapedPath(), "/.well-known/") {
			t.Fatalf("ServerMetadataURLs(%q): %q", issuer, u)
		}
	}
}

func checkCanonical(t *testing.T, server string) {
	c, err := CanonicalResource(server)
	if err != nil {
		return
	}
	again, err := CanonicalResource(c)
	if err != nil || again != c {
		t.Fatalf("CanonicalResource(%q) = %q, whose canonical form is %q (%v)", server, c, again, err)
	}
	// Nothing of the server URL's query or user info, which may hold a
	// credential, goes to the authorization server.
	if u, err := url.Parse(c); err != nil || u.User != nil || strings.ContainsAny(c, "?#") {
		t.Fatalf("CanonicalResource(%q) = %q, with a query, a fragment or user info (%v)", server, c, err)
	}
	if !Covers(c, server) {
		t.Fatalf("the canonical resource %q of %q does not cover it", c, server)
	}
}

func checkCovers(t *testing.T, resource, server string) {
	if !Covers(resource, server) {
		return
	}
	r, _ := url.Parse(resource)
	s, _ := url.Parse(server)
	if !transport.SameOrigin(r, s) {
		t.Fatalf("Covers(%q, %q) across origins", resource, server)
	}
	rp, sp := strings.TrimSuffix(r.Path, "/"), strings.TrimSuffix(s.Path, "/")
	if rp != "" && rp != sp && !strings.HasPrefix(sp, rp+"/") {
		t.Fatalf("Covers(%q, %q): %q is not a leading segment of %q", resource, server, rp, sp)
	}
}

func checkCallback(t *testing.T, s string) {
	u, err := ParseCallbackURL(s)
	if err != nil {
		return
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	port, perr := strconv.Atoi(u.Port())
	if u.Scheme != "http" || !(host == "127.0.0.1" || strings.EqualFold(host, "localhost")) || ip != nil && !ip.IsLoopback() ||
		perr != nil || port < 1 || port > 65535 || u.RawQuery != "" || u.Fragment != "" || u.Path == "" {
		t.Fatalf("ParseCallbackURL(%q) accepted %q", s, u)
	}
	// What mcpx registers as its redirect URI reads back the same.
	again, err := ParseCallbackURL(u.String())
	if err != nil || again.String() != u.String() {
		t.Fatalf("ParseCallbackURL(%q) = %q, which reads back as %v (%v)", s, u, again, err)
	}
}
