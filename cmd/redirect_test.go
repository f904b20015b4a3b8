package cmd

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// A stored OAuth token stays with its server: when the server redirects
// to another origin (the same host, another port), a 302 (which would
// turn the POST into a GET without the message) and a 307 (which would
// resend the message there) are refused with exit 4, naming both URLs,
// and the other origin gets nothing.
func TestStoredTokenNotRedirected(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(other.Close)
	var status atomic.Int32
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{ScopesSupported: []string{"mcp:tools"}, ListScopes: []string{"mcp:tools"},
		WrapMCP: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if s := int(status.Load()); s != 0 {
					http.Redirect(w, r, other.URL+"/mcp", s)
					return
				}
				h.ServeHTTP(w, r)
			})
		}})
	env := map[string]string{"MCPX_CONFIG_DIR": t.TempDir()}
	if r := runMcpx(t, withBrowser(env), "ping", "--url", srv.MCPURL); r.code != 0 {
		t.Fatalf("authorizing: exit %d: %s", r.code, r.stderr)
	}

	status.Store(http.StatusFound)
	r := runMcpx(t, env, "ping", "-v", "--transport", "http", "--url", srv.MCPURL)
	mu.Lock()
	n := len(seen)
	for _, h := range seen {
		if h.Get("Authorization") != "" {
			t.Errorf("the other origin got Authorization: %s", h.Get("Authorization"))
		}
	}
	mu.Unlock()
	if r.code != ExitConnect || n != 0 || !strings.Contains(r.stderr, "refused to follow the HTTP 302 redirect to "+other.URL+"/mcp: it would turn the POST into a GET") {
		t.Errorf("302: exit %d, %d requests elsewhere:\n%s", r.code, n, r.stderr)
	}
	noSecrets(t, srv, r.stdout, r.stderr)

	status.Store(http.StatusTemporaryRedirect)
	r = runMcpx(t, env, "ping", "--json", "--url", srv.MCPURL)
	want := `"message":"initialize: POST ` + srv.MCPURL + `: refused to follow the HTTP 307 redirect to ` + other.URL + `/mcp: it points at another origin`
	if r.code != ExitConnect || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, `"code":"connection"`) {
		t.Errorf("307: exit %d:\n%s", r.code, r.stderr)
	}
	mu.Lock()
	if len(seen) != n {
		t.Errorf("the other origin got the 307's request")
	}
	mu.Unlock()
}
