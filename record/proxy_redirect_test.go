package record

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The proxy's upstream requests follow mcpx's redirect policy: a POST
// redirected to another origin is refused (502, naming both URLs) and the
// other origin gets nothing; a GET goes there without the credentials the
// proxy adds or the client's headers.
func TestHTTPProxyUpstreamRedirects(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*http.Request
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Clone(r.Context()))
		mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(upstream.Close)
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upstream.URL + "/mcp", Header: http.Header{"Authorization": {"Bearer SECRET-BEARER"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)

	do := func(method, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("X-Custom", "SECRET-HEADER")
		req.Header.Set("Mcp-Session-Id", "SECRET-SESSION")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if status != http.StatusBadGateway || !strings.Contains(body, "POST "+upstream.URL+"/mcp: refused to follow the HTTP 307 redirect to "+other.URL+"/mcp") {
		t.Errorf("POST: %d %s", status, body)
	}
	mu.Lock()
	n := len(got)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("the other origin got the POST")
	}

	if status, _ := do(http.MethodGet, ""); status != http.StatusNotFound {
		t.Errorf("GET: %d, want the other origin's 404", status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("the other origin got %d requests", len(got))
	}
	for k, vs := range got[0].Header {
		if strings.Contains(strings.Join(vs, " "), "SECRET") {
			t.Errorf("%s: %s reached the other origin", k, vs)
		}
	}
	if got[0].Header.Get("Accept") == "" {
		t.Errorf("Accept did not go on: %v", got[0].Header)
	}
}
