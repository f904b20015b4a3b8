package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// runResult is what one mcpx run produced.
type runResult struct {
	code           int
	stdout, stderr string
}

// runMcpx runs mcpx in-process with buffers for its streams and env for
// its environment (nothing from the real one; MCPX_CONFIG_DIR is a fresh
// directory unless env sets it, so no test touches the real token store).
func runMcpx(t *testing.T, env map[string]string, args ...string) runResult {
	t.Helper()
	if _, ok := env["MCPX_CONFIG_DIR"]; !ok {
		e := map[string]string{"MCPX_CONFIG_DIR": t.TempDir()}
		for k, v := range env {
			e[k] = v
		}
		env = e
	}
	ios, out, errOut := NewTestIOStreams(env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Run(ctx, args, ios)
	return runResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

func sdkURL(t *testing.T, wrap func(http.Handler) http.Handler) string {
	return testservers.Streamable(t, testservers.NewServer(), nil, wrap)
}

func TestHTTPToolsListJSON(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	r := runMcpx(t, nil, "tools", "list", "--json", "--url", u)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Tools) == 0 {
		t.Fatalf("stdout is not a tools list: %v\n%s", err, r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr not empty: %s", r.stderr)
	}
}

func TestHTTPToolsCall(t *testing.T) {
	t.Parallel()
	for name, u := range map[string]string{
		"streamable": sdkURL(t, nil),
		"sse":        testservers.SSE(t, testservers.NewServer(), nil),
	} {
		t.Run(name, func(t *testing.T) {
			r := runMcpx(t, nil, "tools", "call", "add", "a=2", "b=3", "--url", u)
			if r.code != 0 || strings.TrimSpace(r.stdout) != "5" {
				t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// mcpx info says which transport is in use and why; -v says so as it happens.
func TestHTTPInfoShowsTransport(t *testing.T) {
	t.Parallel()
	u := testservers.SSE(t, testservers.NewServer(), nil)
	r := runMcpx(t, nil, "info", "--url", u)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "Transport:") || !strings.Contains(r.stdout, "http+sse: "+u) || !strings.Contains(r.stdout, "fell back to HTTP+SSE") {
		t.Errorf("info output:\n%s", r.stdout)
	}
	r = runMcpx(t, nil, "ping", "-v", "--url", u)
	if r.code != 0 || !strings.Contains(r.stderr, "trying the HTTP+SSE transport") || !strings.Contains(r.stderr, "connected: http+sse") {
		t.Errorf("exit %d, -v stderr:\n%s", r.code, r.stderr)
	}
	u2 := sdkURL(t, nil)
	r = runMcpx(t, nil, "info", "--url", u2)
	if r.code != 0 || !strings.Contains(r.stdout, "streamable-http: "+u2) {
		t.Errorf("exit %d, info output:\n%s", r.code, r.stdout)
	}
}

func TestHTTPUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ping", "--url", "http://127.0.0.1:1/mcp", "--", "node", "x.js"}, "not both"},
		{[]string{"ping", "--url", "ftp://example.test/"}, `--url "ftp://example.test/": "ftp://" is not a scheme MCP servers are reached with; use http:// or https://`},
		{[]string{"ping", "--url", "http://127.0.0.1:/"}, `--url "http://127.0.0.1:/": the port after ":" is empty`},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--transport", "websocket"}, "--transport must be auto, http or sse"},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "-H", "no colon"}, `-H "no" (then 6 bytes, not shown): expected 'Name: value'`},
		{[]string{"ping", "--bearer", "x", "--", "node", "x.js"}, "--bearer applies to HTTP servers"},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--env", "A=1"}, "--env and --cwd apply to a server command"},
		{[]string{"ping", "--url", "https://127.0.0.1:1/", "--ca-cert", "/nonexistent/ca.pem"}, "--ca-cert"},
		{[]string{"ping"}, "or give --url URL"},
	}
	for _, tt := range tests {
		r := runMcpx(t, nil, tt.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	// A -H flag that is no header is refused without its value, which may
	// be a credential.
	for _, h := range []string{"Authorization Bearer tk-SECRET-1", "X-Api-Key=tk-SECRET-2", "tk-SECRET-3", "X-Api@Key: tk-SECRET-4"} {
		r := runMcpx(t, nil, "ping", "--url", "http://127.0.0.1:1/", "-H", h, "--json")
		if r.code != ExitUsage || strings.Contains(r.stderr, "SECRET") || !strings.Contains(r.stderr, "-H ") {
			t.Errorf("-H %q: exit %d, stderr %q", h, r.code, r.stderr)
		}
	}
}

func TestHTTPUnauthorizedExit3(t *testing.T) {
	t.Parallel()
	var gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			gets.Add(1)
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="tools"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	r := runMcpx(t, nil, "tools", "list", "--url", ts.URL+"/mcp")
	if r.code != ExitAuth {
		t.Fatalf("exit %d, want 3: %s", r.code, r.stderr)
	}
	for _, want := range []string{"401", `WWW-Authenticate: Bearer resource_metadata=`, "--bearer"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r.stderr)
		}
	}
	if gets.Load() != 0 {
		t.Error("fell back to HTTP+SSE after a 401")
	}
	r = runMcpx(t, nil, "tools", "list", "--json", "--url", ts.URL+"/mcp", "--bearer", "wrong")
	var e struct {
		Error struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			ExitCode int    `json:"exitCode"`
		} `json:"error"`
	}
	if r.code != ExitAuth || json.Unmarshal([]byte(r.stderr), &e) != nil || e.Error.Code != "auth" || !strings.Contains(e.Error.Message, "refused the bearer token") {
		t.Errorf("--json: exit %d, stderr %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "wrong") {
		t.Errorf("the token was printed: %s", r.stderr)
	}
}

func TestHTTPServerErrorExit4(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream exploded", http.StatusBadGateway)
	}))
	t.Cleanup(ts.Close)
	r := runMcpx(t, nil, "ping", "--url", ts.URL+"/mcp")
	if r.code != ExitConnect || !strings.Contains(r.stderr, "502 Bad Gateway: upstream exploded") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}

func TestHTTPConnectionRefusedExit4(t *testing.T) {
	t.Parallel()
	addr := testservers.RefusedAddr(t)
	r := runMcpx(t, nil, "ping", "--url", "http://"+addr+"/mcp")
	if r.code != ExitConnect || !strings.Contains(r.stderr, "cannot connect") || !strings.Contains(r.stderr, "refused") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}

// A slow server meets --timeout whatever its response mode.
func TestHTTPTimeoutExit6(t *testing.T) {
	t.Parallel()
	for _, jsonResp := range []bool{false, true} {
		u := testservers.Streamable(t, testservers.NewServer(), &mcp.StreamableHTTPOptions{JSONResponse: jsonResp}, nil)
		r := runMcpx(t, nil, "tools", "call", "slow", "--timeout", "300ms", "--url", u)
		if r.code != ExitTimeout || !strings.Contains(r.stderr, "no response after 300ms") {
			t.Errorf("json=%v: exit %d, stderr %s", jsonResp, r.code, r.stderr)
		}
	}
}

// --wire shows the HTTP layer, with credentials and cookies redacted.
func TestHTTPWireRedacts(t *testing.T) {
	t.Parallel()
	var sawAuth, sawCookie atomic.Bool
	u := sdkURL(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sawAuth.Store(r.Header.Get("Authorization") == "Bearer s3cr3t-token")
			sawCookie.Store(r.Header.Get("Cookie") == "sid=s3cr3t-cookie")
			h.ServeHTTP(w, r)
		})
	})
	r := runMcpx(t, nil, "ping", "--wire", "--bearer", "s3cr3t-token", "-H", "Cookie: sid=s3cr3t-cookie", "--url", u)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !sawAuth.Load() || !sawCookie.Load() {
		t.Error("the server did not get the credentials")
	}
	if strings.Contains(r.stderr, "s3cr3t") {
		t.Errorf("a secret was printed:\n%s", r.stderr)
	}
	for _, want := range []string{"http POST " + u, "Authorization: [redacted]", "Cookie: [redacted]", "200 OK", "text/event-stream",
		"Mcp-Session-Id: ", "→ send", "← recv", "stream=post-", "DELETE " + u} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("--wire output lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestHTTPBearerFromEnv(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	u := sdkURL(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.Store(r.Header.Get("Authorization"))
			h.ServeHTTP(w, r)
		})
	})
	r := runMcpx(t, map[string]string{"MCPX_BEARER_TOKEN": "from-env"}, "ping", "--url", u)
	if r.code != 0 || got.Load() != "Bearer from-env" {
		t.Errorf("exit %d, Authorization %q, stderr %s", r.code, got.Load(), r.stderr)
	}
	// The environment's default does not replace an Authorization header
	// given on the command line (it did: the header was set, then the
	// bearer token over it); --bearer, given, wins over the environment.
	r = runMcpx(t, map[string]string{"MCPX_BEARER_TOKEN": "from-env"}, "ping", "--url", u, "-H", "Authorization: Token given")
	if r.code != 0 || got.Load() != "Token given" {
		t.Errorf("-H Authorization with $MCPX_BEARER_TOKEN: exit %d, Authorization %q, stderr %s", r.code, got.Load(), r.stderr)
	}
	r = runMcpx(t, map[string]string{"MCPX_BEARER_TOKEN": "from-env"}, "ping", "--url", u, "--bearer", "from-flag")
	if r.code != 0 || got.Load() != "Bearer from-flag" {
		t.Errorf("--bearer with $MCPX_BEARER_TOKEN: exit %d, Authorization %q, stderr %s", r.code, got.Load(), r.stderr)
	}
}

func TestHTTPTLSFlags(t *testing.T) {
	t.Parallel()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testservers.NewServer() }, nil)
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = discardLog()
	ts.StartTLS()
	t.Cleanup(ts.Close)
	r := runMcpx(t, nil, "ping", "--url", ts.URL)
	if r.code != ExitConnect || !strings.Contains(r.stderr, "--ca-cert") {
		t.Errorf("unknown CA: exit %d, stderr %s", r.code, r.stderr)
	}
	r = runMcpx(t, nil, "ping", "--insecure", "--url", ts.URL)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: --insecure") {
		t.Errorf("--insecure: exit %d, stderr %s", r.code, r.stderr)
	}
}

// The server ends the session before the request: mcpx starts a new one,
// retries, and says so on stderr.
func TestHTTPSessionExpiredSaysSo(t *testing.T) {
	t.Parallel()
	var once sync.Once
	u := sdkURL(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			expire := false
			if r.Method == "POST" && r.Header.Get("Mcp-Session-Id") != "" {
				body := new(bytes.Buffer)
				body.ReadFrom(r.Body)
				r.Body = readCloser{bytes.NewReader(body.Bytes())}
				if strings.Contains(body.String(), `"tools/list"`) {
					once.Do(func() { expire = true })
				}
			}
			if expire {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	r := runMcpx(t, nil, "tools", "list", "--json", "--url", u)
	if r.code != 0 || !strings.Contains(r.stderr, "session expired") || !strings.Contains(r.stderr, "re-initialized") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}

// forgettingServer wraps h as a server built on the TypeScript SDK's
// examples that restarted: once a POST of method forget arrives in a
// session, every later request in that session is answered 400 with the
// examples' JSON-RPC error, not the spec's 404. With only, the session is
// not forgotten: that one request is refused, and the session goes on.
func forgettingServer(forget string, only bool) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		var mu sync.Mutex
		dead := map[string]bool{}
		refused := false
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sid := r.Header.Get("Mcp-Session-Id")
			refuse := false
			if sid != "" {
				body := new(bytes.Buffer)
				body.ReadFrom(r.Body)
				r.Body = readCloser{bytes.NewReader(body.Bytes())}
				mu.Lock()
				if r.Method == "POST" && !refused && strings.Contains(body.String(), `"`+forget+`"`) {
					refused, refuse = true, true
					dead[sid] = !only
				}
				refuse = refuse || dead[sid]
				mu.Unlock()
			}
			if refuse {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// A server that forgot the session and answers 400 to it, as those built
// on the TypeScript SDK's examples do (the spec says 404), gets a new
// session, found out with a ping, and mcpx says so.
func TestHTTPSessionUnknown400Renews(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, forgettingServer("tools/list", false))
	r := runMcpx(t, nil, "tools", "list", "--json", "--url", u)
	if r.code != 0 || !strings.Contains(r.stderr, "HTTP 400 for session") || !strings.Contains(r.stderr, "re-initialized a new session and sent tools/list again") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"tools"`) {
		t.Errorf("stdout %s", r.stdout)
	}
}

// A 400 that refuses one request of a session the server still knows
// (its ping is answered) fails that request, and the session is kept.
func TestHTTPRequestRefused400KeepsSession(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, forgettingServer("tools/list", true))
	r := runMcpx(t, nil, "tools", "list", "--json", "--url", u)
	if r.code != 4 || !strings.Contains(r.stderr, "HTTP 400 Bad Request") || strings.Contains(r.stderr, "re-initialized") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}

// The server restarted under a watch: its GET stream breaks, and
// reopening it is answered 404 (the session is gone). Nothing else would
// find out, since watch sends no request: mcpx starts a new session at
// once, and says so, instead of watching a dead session in silence.
func TestHTTPWatchRenewsWhenTheStreamFindsTheSessionGone(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, func(h http.Handler) http.Handler {
		var mu sync.Mutex
		dead := map[string]bool{}
		var first string
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sid := r.Header.Get("Mcp-Session-Id")
			mu.Lock()
			if r.Method == "GET" && sid != "" && first == "" {
				// The first session's GET stream: it ends at once, and
				// the session with it (the server restarted).
				first, dead[sid] = sid, true
				mu.Unlock()
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				fmt.Fprint(w, "retry: 10\n\n")
				return
			}
			gone := dead[sid] && r.Method == "GET"
			mu.Unlock()
			if gone {
				// (Only the GET is refused: the POSTs of the handshake
				// still under way would find out first otherwise.)
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	r := runMcpx(t, nil, "watch", "--for", "3s", "--url", u)
	if r.code != 0 || !strings.Contains(r.stderr, "the server answered GET") || !strings.Contains(r.stderr, "with HTTP 404 for session") ||
		!strings.Contains(r.stderr, "re-initialized a new session") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}

// HTTP_PROXY from the environment is honoured. The environment is read
// once per process, so the check runs mcpx in a child process whose only
// proxy setting points at a loopback server that plays the MCP server.
func TestHTTPProxyFromEnvironment(t *testing.T) {
	t.Parallel()
	if os.Getenv("MCPX_TEST_PROXY_CHILD") == "1" {
		r := runMcpx(t, nil, "tools", "list", "--json", "--url", "http://mcp.proxied.test/mcp")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return
	}
	var hosts sync.Map
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testservers.NewServer() },
		&mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts.Store(r.Host, true)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPProxyFromEnvironment$", "-test.count=1")
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "REQUEST_METHOD":
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "MCPX_TEST_PROXY_CHILD=1", "HTTP_PROXY="+proxy.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if _, ok := hosts.Load("mcp.proxied.test"); !ok {
		t.Errorf("the proxy never saw a request for mcp.proxied.test")
	}
}

// The acceptance commands against server-everything, in both HTTP modes.
func TestHTTPEverything(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"streamableHttp", "sse"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			u := testservers.Everything(t, mode)
			r := runMcpx(t, nil, "tools", "list", "--json", "--url", u)
			if r.code != 0 || !strings.Contains(r.stdout, `"name": "echo"`) {
				t.Fatalf("tools list: exit %d, stderr %s", r.code, r.stderr)
			}
			r = runMcpx(t, nil, "tools", "call", "echo", "message=hi", "--url", u)
			if r.code != 0 || !strings.Contains(r.stdout, "Echo: hi") {
				t.Fatalf("tools call: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
			}
			r = runMcpx(t, nil, "info", "--url", u)
			want := map[string]string{"streamableHttp": "streamable-http: ", "sse": "http+sse: "}[mode]
			if r.code != 0 || !strings.Contains(r.stdout, want+u) {
				t.Errorf("info: exit %d, stdout %s", r.code, r.stdout)
			}
		})
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func discardLog() *stdlog.Logger { return stdlog.New(io.Discard, "", 0) }

// SSE priming events (an event id, no data) are transport chatter: shown
// with -v (or --wire), never without, by the one-shot commands and by
// verify alike.
func TestHTTPPrimingEventsOnlyWithVerbose(t *testing.T) {
	t.Parallel()
	u := testservers.Streamable(t, testservers.NewServer(), &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}, nil)
	trace := t.TempDir() + "/t.jsonl"
	r := runMcpx(t, nil, "tools", "list", "--url", u, "--record", trace)
	if r.code != 0 || strings.Contains(r.stderr, "priming") {
		t.Fatalf("exit %d, a priming event on stderr:\n%s", r.code, r.stderr)
	}
	if r := runMcpx(t, nil, "tools", "list", "-v", "--url", u); r.code != 0 || !strings.Contains(r.stderr, "with no data (priming)") {
		t.Fatalf("-v: exit %d, no priming event on stderr:\n%s", r.code, r.stderr)
	}
	if r := runMcpx(t, nil, "verify", trace, "--url", u); r.code != 0 || strings.Contains(r.stderr, "priming") {
		t.Fatalf("verify: exit %d, a priming event on stderr:\n%s%s", r.code, r.stderr, r.stdout)
	}
}

// A server's error that quotes the credentials it was sent (here the
// Authorization header, in a JSON-RPC error's message and data) is
// reported without them, on the error line and in --json's error: --wire
// and traces redact such echoes already.
func TestServerErrorEchoingTokenIsRedacted(t *testing.T) {
	t.Parallel()
	u := fakeHTTPServer(t, func(w http.ResponseWriter, req fakeRequest) {
		auth, _ := json.Marshal("rejected: " + req.r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":%s,"data":{"sent":%s}}}`, req.ID, auth, auth)
	})
	const token = "s3cr3t-t0ken-echoed"
	for _, args := range [][]string{
		{"ping", "--url", u, "--bearer", token},
		{"ping", "--json", "--url", u, "--bearer", token},
		{"ping", "--url", u, "-H", "Authorization: Bearer " + token},
	} {
		r := runMcpx(t, nil, args...)
		if r.code == ExitOK || strings.Contains(r.stderr, token) || !strings.Contains(r.stderr, "rejected: ") || !strings.Contains(r.stderr, "[redacted]") {
			t.Errorf("%q: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
}
