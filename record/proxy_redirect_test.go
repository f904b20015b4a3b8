package record

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// The proxy's upstream requests follow mcpx's redirect policy: a POST
// redirected to another origin is refused (502, naming both URLs) and the
// other origin gets nothing, nor a DELETE (a session's end); another
// request without a body (OPTIONS) goes there without the credentials
// the proxy adds or the client's headers.
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

	// The DELETE that ends the host's session is not the other
	// origin's to take.
	if status, _ := do(http.MethodDelete, ""); status != http.StatusBadGateway {
		t.Errorf("DELETE: %d, want 502", status)
	}
	mu.Lock()
	n = len(got)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("the other origin got the DELETE")
	}
	if status, _ := do(http.MethodOptions, ""); status != http.StatusNotFound {
		t.Errorf("OPTIONS: %d, want the other origin's 404", status)
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

// An upstream Streamable HTTP GET stream redirected to another origin is
// refused, as mcpx's own client refuses it: what that origin sends would
// be taken by the host for the server's own messages, though it got no
// credentials and knows nothing of the session. The other origin gets
// nothing; the host is answered 405 Method Not Allowed, as by a server
// that offers no GET stream (spec: basic/transports, "Listening for
// Messages from the Server"), so that it goes on with the answers on its
// POSTs; the person is told once, whatever the verbosity, and the
// recording holds the answer the host got. The proxy followed it without
// credentials and passed on what came.
func TestHTTPProxyGetStreamRedirectElsewhereRefused(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*http.Request
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Clone(r.Context()))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"from elsewhere"}}`+"\n\n")
	}))
	t.Cleanup(other.Close)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/stream", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(upstream.Close)
	var told []string
	var events []transport.Event
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upstream.URL + "/mcp",
		Tell: func(msg string) {
			mu.Lock()
			told = append(told, msg)
			mu.Unlock()
		},
		OnEvent: func(ev transport.Event) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	for range 2 {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", "s1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || strings.Contains(string(b), "from elsewhere") ||
			!strings.Contains(string(b), "GET "+upstream.URL+"/mcp: refused to follow the HTTP 307 redirect to "+other.URL+"/stream") {
			t.Errorf("GET: %d %s", resp.StatusCode, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("the other origin got %d requests", len(got))
	}
	want := "the upstream server redirected its GET stream for messages of its own (GET " + upstream.URL + "/mcp) to " + other.URL + "/stream, on another origin; the proxy takes the server's messages only from the origin it proxies, so it answers the host 405 Method Not Allowed, as a server without that stream does: the host goes on with what comes with the answers to its requests"
	if len(told) != 1 || told[0] != want {
		t.Errorf("told %q\nwant once %q", told, want)
	}
	var answered int
	for _, ev := range events {
		if ev.Kind == transport.EventHTTP && ev.Meta != nil && ev.Meta.HTTPStatus == http.StatusMethodNotAllowed {
			answered++
		}
	}
	if answered != 2 {
		t.Errorf("%d events of the 405 the host got, want 2: %v", answered, events)
	}
}
