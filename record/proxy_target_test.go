package record

import (
	"net/http/httptest"
	"testing"
)

// The upstream URL's query (a key or token the server takes there) stays
// on every request for the upstream's endpoint, the host's parameters
// added but not one the upstream URL sets; another path (a legacy
// server's message endpoint) is the host's, query and all.
func TestHTTPProxyTargetKeepsTheUpstreamQuery(t *testing.T) {
	t.Parallel()
	cases := []struct{ upstream, req, want string }{
		{"http://127.0.0.1:9/mcp?token=X", "/mcp?key=k", "http://127.0.0.1:9/mcp?token=X&key=k"},
		{"http://127.0.0.1:9/mcp?token=X", "/?token=host&b=2", "http://127.0.0.1:9/mcp?token=X&b=2"},
		{"http://127.0.0.1:9/mcp?to%6Ben=X", "/mcp?token=host", "http://127.0.0.1:9/mcp?to%6Ben=X"},
		{"http://127.0.0.1:9/mcp?token=X", "/mcp", "http://127.0.0.1:9/mcp?token=X"},
		{"http://127.0.0.1:9/mcp", "/mcp?key=k", "http://127.0.0.1:9/mcp?key=k"},
		{"http://127.0.0.1:9/sse?token=X", "/messages?sessionId=s", "http://127.0.0.1:9/messages?sessionId=s"},
	}
	for _, c := range cases {
		p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: c.upstream})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.target(httptest.NewRequest("POST", c.req, nil)).String(); got != c.want {
			t.Errorf("upstream %s, request %s: %s, want %s", c.upstream, c.req, got, c.want)
		}
	}
}
