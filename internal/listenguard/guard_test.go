package listenguard

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// ok is the handler behind the guard: it answers 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

func tcp(s string) *net.TCPAddr {
	a, err := net.ResolveTCPAddr("tcp", s)
	if err != nil {
		panic(err)
	}
	return a
}

func mustGuard(t *testing.T, o Options) *Guard {
	t.Helper()
	g, err := New(ok, o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// serve sends one request through g as if it arrived on a connection to
// local, and returns the recorded answer.
func serve(g http.Handler, method, host, local string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://x/mcp", nil)
	req.Host = host
	for k, vs := range header {
		req.Header[k] = vs
	}
	if local != "" {
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, tcp(local)))
	}
	w := httptest.NewRecorder()
	g.ServeHTTP(w, req)
	return w
}

func TestHost(t *testing.T) {
	hostname, _ := os.Hostname()
	cases := []struct {
		listen, local, host string
		want                int
	}{
		{"127.0.0.1:7000", "127.0.0.1:7000", "127.0.0.1:7000", 200},
		{"127.0.0.1:7000", "127.0.0.1:7000", "localhost:7000", 200},
		{"127.0.0.1:7000", "127.0.0.1:7000", "LocalHost:7000", 200},
		{"127.0.0.1:7000", "127.0.0.1:7000", "[::1]:7000", 200},
		{"127.0.0.1:7000", "127.0.0.1:7000", "evil.example:7000", 421}, // DNS rebinding
		{"127.0.0.1:7000", "127.0.0.1:7000", "evil.example", 421},
		{"127.0.0.1:7000", "127.0.0.1:7000", "127.0.0.1:7001", 421},
		{"127.0.0.1:7000", "127.0.0.1:7000", "127.0.0.1", 421}, // port 80
		{"127.0.0.1:7000", "127.0.0.1:7000", "localhost.:7000", 421},
		{"127.0.0.1:7000", "127.0.0.1:7000", "192.168.1.5:7000", 421},
		{"127.0.0.1:7000", "127.0.0.1:7000", "", 421},
		{"127.0.0.1:80", "127.0.0.1:80", "localhost", 200},
		{"127.0.0.1:80", "127.0.0.1:80", "[::1]", 200},
		// IPv6 loopback listener.
		{"[::1]:7000", "[::1]:7000", "[::1]:7000", 200},
		{"[::1]:7000", "[::1]:7000", "127.0.0.1:7000", 200},
		{"[::1]:7000", "[::1]:7000", "[::2]:7000", 421},
		{"[::1]:7000", "[::1]:7000", "evil.example:7000", 421},
		// A listener on one non-loopback address: that address too.
		{"192.168.1.5:7000", "192.168.1.5:7000", "192.168.1.5:7000", 200},
		{"192.168.1.5:7000", "192.168.1.5:7000", "192.168.1.6:7000", 421},
		// All interfaces: the address the connection came in on, the
		// machine's name, loopback; never another name or address.
		{"0.0.0.0:7000", "192.168.1.5:7000", "192.168.1.5:7000", 200},
		{"0.0.0.0:7000", "192.168.1.5:7000", "10.0.0.1:7000", 421},
		{"0.0.0.0:7000", "192.168.1.5:7000", "192.168.1.5:7001", 421},
		{"0.0.0.0:7000", "127.0.0.1:7000", "localhost:7000", 200},
		{"0.0.0.0:7000", "192.168.1.5:7000", "evil.example:7000", 421},
		{"[::]:7000", "[2001:db8::5]:7000", "[2001:db8::5]:7000", 200},
		{"[::]:7000", "[::ffff:192.168.1.5]:7000", "192.168.1.5:7000", 200}, // IPv4 on a dual-stack socket
		{"[::]:7000", "[2001:db8::5]:7000", "[2001:db8::6]:7000", 421},
		{"[::]:7000", "", "[2001:db8::5]:7000", 421}, // no connection address known
	}
	if hostname != "" && net.ParseIP(hostname) == nil {
		cases = append(cases,
			struct {
				listen, local, host string
				want                int
			}{"0.0.0.0:7000", "192.168.1.5:7000", strings.ToUpper(hostname) + ":7000", 200},
			struct {
				listen, local, host string
				want                int
			}{"127.0.0.1:7000", "127.0.0.1:7000", hostname + ":7000", 421})
	}
	for _, c := range cases {
		t.Run(c.listen+" "+c.host, func(t *testing.T) {
			var got []Refusal
			g := mustGuard(t, Options{Addr: tcp(c.listen), OnRefuse: func(r Refusal) { got = append(got, r) }})
			w := serve(g, "POST", c.host, c.local, nil)
			if w.Code != c.want {
				t.Fatalf("status %d, want %d (%s)", w.Code, c.want, w.Body)
			}
			if c.want == 421 {
				if len(got) != 1 || got[0].Reason != BadHost || got[0].Value != c.host || got[0].Status != 421 {
					t.Errorf("refusals %+v", got)
				}
				if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("Content-Type %q", ct)
				}
				if !strings.Contains(w.Body.String(), "answers only requests addressed to it") {
					t.Errorf("body %q", w.Body)
				}
			} else if len(got) != 0 {
				t.Errorf("refusals %+v", got)
			}
		})
	}
}

func TestOrigin(t *testing.T) {
	allowed := []string{"http://localhost:6274", "https://app.example:443", "chrome-extension://abcdef/"}
	cases := []struct {
		host    string
		origins []string
		nav     bool // AllowNavigation
		mode    string
		want    int
	}{
		{"127.0.0.1:7000", nil, false, "", 200},
		{"127.0.0.1:7000", []string{"http://127.0.0.1:7000"}, false, "", 200},
		{"127.0.0.1:7000", []string{"http://localhost:7000"}, false, "", 200},
		{"127.0.0.1:7000", []string{"http://[::1]:7000"}, false, "", 200},
		{"127.0.0.1:7000", []string{"HTTP://LOCALHOST:7000"}, false, "", 200},
		{"127.0.0.1:7000", []string{"http://localhost:7001"}, false, "", 403},
		{"127.0.0.1:7000", []string{"https://localhost:7000"}, false, "", 403},
		{"127.0.0.1:7000", []string{"http://evil.example"}, false, "", 403},
		{"127.0.0.1:7000", []string{"http://evil.example:7000"}, false, "", 403},
		{"127.0.0.1:7000", []string{"null"}, false, "", 403},
		{"127.0.0.1:7000", []string{""}, false, "", 403},
		{"127.0.0.1:7000", []string{"http://127.0.0.1:7000/path"}, false, "", 403},
		{"127.0.0.1:7000", []string{"http://127.0.0.1:7000", "http://evil.example"}, false, "", 403},
		// Admitted with --allow-origin, compared as browsers serialize.
		{"127.0.0.1:7000", []string{"http://localhost:6274"}, false, "", 200},
		{"127.0.0.1:7000", []string{"https://app.example"}, false, "", 200},
		{"127.0.0.1:7000", []string{"chrome-extension://abcdef"}, false, "", 200},
		{"127.0.0.1:7000", []string{"http://app.example"}, false, "", 403},
		// The page is the listener itself, reached by a LAN address.
		{"192.168.1.5:7000", []string{"http://192.168.1.5:7000"}, false, "", 200},
		// Navigations: exempt only where the listener allows them.
		{"127.0.0.1:7000", []string{"https://as.example"}, true, "navigate", 200},
		{"127.0.0.1:7000", []string{"null"}, true, "navigate", 200},
		{"127.0.0.1:7000", []string{"https://as.example"}, true, "cors", 403},
		{"127.0.0.1:7000", []string{"https://as.example"}, true, "", 403},
		{"127.0.0.1:7000", []string{"https://as.example"}, false, "navigate", 403},
		{"evil.example:7000", []string{"https://as.example"}, true, "navigate", 421},
	}
	for _, c := range cases {
		t.Run(c.host+" "+strings.Join(c.origins, ",")+" "+c.mode, func(t *testing.T) {
			var got []Refusal
			g := mustGuard(t, Options{Addr: tcp("0.0.0.0:7000"), AllowOrigins: allowed, AllowNavigation: c.nav,
				OnRefuse: func(r Refusal) { got = append(got, r) }})
			h := http.Header{}
			if c.origins != nil {
				h["Origin"] = c.origins
			}
			if c.mode != "" {
				h.Set("Sec-Fetch-Mode", c.mode)
			}
			w := serve(g, "POST", c.host, "192.168.1.5:7000", h)
			if w.Code != c.want {
				t.Fatalf("status %d, want %d (%s)", w.Code, c.want, w.Body)
			}
			acao := w.Header().Get("Access-Control-Allow-Origin")
			switch {
			case c.want == 403:
				if len(got) != 1 || got[0].Reason != BadOrigin || got[0].Status != 403 {
					t.Errorf("refusals %+v", got)
				}
				if acao != "" {
					t.Errorf("a refused origin got Access-Control-Allow-Origin %q", acao)
				}
			case c.want == 200 && c.origins != nil && c.mode != "navigate":
				if acao != c.origins[0] || w.Header().Get("Vary") != "Origin" ||
					!strings.Contains(w.Header().Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
					t.Errorf("CORS headers %v", w.Header())
				}
			case c.want == 200 && acao != "":
				t.Errorf("Access-Control-Allow-Origin %q without an admitted Origin", acao)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	handled := false
	g, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handled = true }),
		Options{Addr: tcp("127.0.0.1:7000"), AllowOrigins: []string{"http://localhost:6274"}})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(g, "OPTIONS", "127.0.0.1:7000", "", http.Header{
		"Origin":                                 {"http://localhost:6274"},
		"Access-Control-Request-Method":          {"POST"},
		"Access-Control-Request-Headers":         {"content-type,mcp-method,mcp-name,mcp-param-region,mcp-param-a(b),x-other"},
		"Access-Control-Request-Private-Network": {"true"},
	})
	if w.Code != http.StatusNoContent || handled {
		t.Fatalf("status %d, handled %v", w.Code, handled)
	}
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") != "http://localhost:6274" || h.Get("Access-Control-Allow-Methods") != "GET, POST, DELETE" ||
		h.Get("Access-Control-Allow-Private-Network") != "true" {
		t.Errorf("headers %v", h)
	}
	allow := h.Get("Access-Control-Allow-Headers")
	for _, want := range []string{"Authorization", "Content-Type", "Last-Event-ID", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "mcp-param-region"} {
		if !strings.Contains(allow, want) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", allow, want)
		}
	}
	if strings.Contains(allow, "x-other") || strings.Contains(allow, "a(b)") {
		t.Errorf("Access-Control-Allow-Headers %q names a header that is not MCP's", allow)
	}

	// A foreign origin's preflight is refused; an OPTIONS that is not a
	// preflight goes to the handler.
	if w := serve(g, "OPTIONS", "127.0.0.1:7000", "", http.Header{"Origin": {"http://evil.example"}, "Access-Control-Request-Method": {"POST"}}); w.Code != 403 || handled {
		t.Errorf("foreign preflight: status %d, handled %v", w.Code, handled)
	}
	serve(g, "OPTIONS", "127.0.0.1:7000", "", nil)
	if !handled {
		t.Error("a plain OPTIONS did not reach the handler")
	}
}

// The listener's CORS answer replaces the handler's (a proxied server's),
// also when the handler streams.
func TestCORSReplacesHandlers(t *testing.T) {
	g, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "https://upstream.example")
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Content-Type", "text/event-stream")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the guard: %v", err)
		}
		io.WriteString(w, "data: {}\n\n")
	}), Options{Addr: tcp("127.0.0.1:7000")})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(g, "GET", "127.0.0.1:7000", "", http.Header{"Origin": {"http://localhost:7000"}})
	if got := w.Header().Get("Access-Control-Allow-Origin"); got != "http://localhost:7000" {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	if got := w.Header().Get("Access-Control-Allow-Credentials"); got != "" {
		t.Errorf("Access-Control-Allow-Credentials %q passed through", got)
	}
	if !w.Flushed || w.Body.String() != "data: {}\n\n" {
		t.Errorf("flushed %v, body %q", w.Flushed, w.Body)
	}
}

// A listener asked for port 0 is guarded at the port it got, over a real
// connection (the Host a client sends comes from the URL it dialled).
func TestResolvedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(ok, Options{Addr: tcp("127.0.0.1:0")}); err == nil {
		t.Error("New accepted an unresolved port 0")
	}
	g := mustGuard(t, Options{Addr: l.Addr()})
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	defer srv.Close()
	port := l.Addr().(*net.TCPAddr).Port
	client := &http.Client{Timeout: 10 * time.Second}
	for host, want := range map[string]int{
		fmt.Sprintf("localhost:%d", port):      200,
		fmt.Sprintf("127.0.0.1:%d", port):      200,
		"127.0.0.1:0":                          421,
		fmt.Sprintf("rebind.example:%d", port): 421,
	} {
		req, _ := http.NewRequest("GET", "http://"+l.Addr().String()+"/", nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func TestParseOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:6274":     "http://localhost:6274",
		"http://localhost:6274/":    "http://localhost:6274",
		"HTTP://LocalHost:6274":     "http://localhost:6274",
		"http://example.com:80":     "http://example.com",
		"https://example.com:443":   "https://example.com",
		"https://example.com:8443":  "https://example.com:8443",
		"http://[::1]:7000":         "http://[::1]:7000",
		"http://[2001:DB8::1]":      "http://[2001:db8::1]",
		"chrome-extension://abcdef": "chrome-extension://abcdef",
		"http://127.0.0.1:007000":   "http://127.0.0.1:7000",
	} {
		got, err := ParseOrigin(in)
		if err != nil || got != want {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"*", "null", "", "localhost:6274", "http://", "http://localhost:6274/app",
		"http://localhost:6274?x=1", "http://localhost:6274#f", "http://user@localhost:6274", "http://localhost:0",
		"http://localhost:70000", "http://localhost:", "http://localhost:x", "//localhost:6274", "http://localhost:6274//"} {
		if got, err := ParseOrigin(in); err == nil {
			t.Errorf("ParseOrigin(%q) = %q, want an error", in, got)
		}
	}
}

func TestRefusalString(t *testing.T) {
	r := Refusal{Reason: BadOrigin, Value: "http://evil\x1b[2J.example" + strings.Repeat("x", 500), Method: "POST", Path: "/m\x1bcp", Remote: "127.0.0.1:5555", Status: 403}
	s := r.String()
	if strings.ContainsAny(s, "\x1b\n") || len(s) > 400 {
		t.Errorf("String() = %q", s)
	}
	if !strings.Contains(s, `Origin "http://evil\x1b[2J.example`) || !strings.Contains(s, "refused POST \"/m\\x1bcp\" from 127.0.0.1:5555 (403)") {
		t.Errorf("String() = %s", s)
	}
	h := Refusal{Reason: BadHost, Value: "evil.example:7000", Method: "GET", Path: "/mcp", Remote: "127.0.0.1:5555", Status: 421}
	if got, want := h.String(), `refused GET /mcp from 127.0.0.1:5555 (421): Host "evil.example:7000" does not name this listener`; got != want {
		t.Errorf("String() = %s\nwant       %s", got, want)
	}
}

func TestThrottle(t *testing.T) {
	var got []string
	f := Throttle(3, func(r Refusal, last bool) { got = append(got, fmt.Sprintf("%s %v", r.Value, last)) })
	for _, v := range []string{"a", "a", "b", "a", "c", "d", "b"} {
		f(Refusal{Reason: BadOrigin, Value: v})
	}
	f(Refusal{Reason: BadHost, Value: "e"})
	if want := "[a false b false c true]"; fmt.Sprint(got) != want {
		t.Errorf("reported %v, want %s", got, want)
	}
}
