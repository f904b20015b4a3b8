package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/tui"
)

// fakeBrowserArg makes the test binary act as a browser (see TestMain):
// BROWSER="<test binary> -mcpx-fake-browser" is what mcpx runs.
const fakeBrowserArg = "-mcpx-fake-browser"

func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == stdioServerArg {
		os.Exit(stdioServerMain())
	}
	if len(os.Args) == 3 && os.Args[1] == fakeBrowserArg {
		if err := testservers.FakeBrowser(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The parallel tests mostly wait for servers and subprocesses.
	testwait.RaiseParallel(4)
	os.Exit(m.Run())
}

// withBrowser is env plus a BROWSER that approves at once.
func withBrowser(env map[string]string) map[string]string {
	e := map[string]string{"BROWSER": os.Args[0] + " " + fakeBrowserArg}
	for k, v := range env {
		e[k] = v
	}
	return e
}

// noSecrets fails when any token the server issued appears in outputs.
func noSecrets(t *testing.T, srv *testservers.OAuthServer, outputs ...string) {
	t.Helper()
	for _, s := range srv.Secrets() {
		for _, o := range outputs {
			if strings.Contains(o, s) {
				t.Fatalf("a token was printed:\n%s", o)
			}
		}
	}
}

// checkPrivate checks the store's modes: directory 0700, files 0600.
func checkPrivate(t *testing.T, dir string) int {
	t.Helper()
	if runtime.GOOS == "windows" {
		return 2
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("%s has mode %04o", dir, fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, _ := e.Info()
		if fi.Mode().Perm() != 0o600 || strings.HasPrefix(e.Name(), ".tmp") {
			t.Errorf("%s has mode %04o", e.Name(), fi.Mode().Perm())
		}
	}
	return len(entries)
}

// The whole life of a token through mcpx: a command meets a 401 and
// authorizes in the (fake) browser, the token is stored privately and
// reused without a browser, shown by status (never the token), printed by
// auth token only, removed by logout; then, with no terminal and no
// BROWSER, mcpx fails at once with exit 3.
func TestOAuthTokenLifecycle(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{RefreshTokens: true, ScopesSupported: []string{"mcp:tools"}, ListScopes: []string{"mcp:tools"}})
	cfg := t.TempDir()
	env := map[string]string{"MCPX_CONFIG_DIR": cfg}
	var outputs []string
	run := func(env map[string]string, args ...string) runResult {
		r := runMcpx(t, env, args...)
		outputs = append(outputs, r.stdout, r.stderr)
		return r
	}

	r := run(withBrowser(env), "tools", "list", "--json", "-v", "--wire", "--url", srv.MCPURL)
	if r.code != 0 || !strings.Contains(r.stdout, `"echo"`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"mcpx: auth: POST " + srv.MCPURL + ": HTTP 401",
		"protected resource metadata: GET " + strings.TrimSuffix(srv.MCPURL, "/mcp") + "/.well-known/oauth-protected-resource/mcp → HTTP 200 OK (named by the WWW-Authenticate resource_metadata)",
		"issuer " + srv.Issuer + " matches",
		"client: registered dynamically at " + srv.Issuer + "/register",
		"scopes asked for: mcp:tools offline_access (from the WWW-Authenticate challenge; offline_access added",
		"Opening a browser to authorize mcpx with " + srv.Issuer,
		"iss matches the issuer",
		"scopes granted mcp:tools offline_access",
		"http oauth: POST " + srv.Issuer + "/token",
		"Authorization: [redacted]",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	store := filepath.Join(cfg, "auth")
	if n := checkPrivate(t, store); n != 2 {
		t.Errorf("%d files in the store, want a token and a registration", n)
	}

	// No browser, no terminal: the stored token is enough.
	r = run(env, "tools", "call", "echo", "message=again", "--url", srv.MCPURL)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: again" || srv.Count("authorize") != 1 {
		t.Fatalf("exit %d, %d authorizations, stdout %q stderr %s", r.code, srv.Count("authorize"), r.stdout, r.stderr)
	}

	// The token goes to no other server, not even one on the same host.
	var sawAuth []string
	var mu sync.Mutex
	other := sdkURL(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			mu.Lock()
			sawAuth = append(sawAuth, req.Header.Get("Authorization"))
			mu.Unlock()
			h.ServeHTTP(w, req)
		})
	})
	r = run(env, "ping", "--url", other)
	mu.Lock()
	if r.code != 0 || len(sawAuth) == 0 || strings.Join(sawAuth, "") != "" {
		t.Errorf("another server got Authorization %q (exit %d)", sawAuth, r.code)
	}
	mu.Unlock()

	r = run(env, "auth", "status")
	for _, want := range []string{srv.MCPURL, "authorization server: " + srv.Issuer, "(dynamic registration)", "grant:         authorization_code",
		"scopes:        mcp:tools offline_access", "expires:       in ", "refresh token: yes", "stored in:     " + store} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("auth status lacks %q: exit %d\n%s%s", want, r.code, r.stdout, r.stderr)
		}
	}
	r = run(env, "auth", "status", "--json", "--url", srv.MCPURL)
	var st struct {
		Tokens []map[string]any `json:"tokens"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || len(st.Tokens) != 1 || st.Tokens[0]["refreshToken"] != true || st.Tokens[0]["issuer"] != srv.Issuer {
		t.Errorf("auth status --json: exit %d %s", r.code, r.stdout)
	}
	r = run(env, "auth", "status", "--url", "http://127.0.0.1:1/other")
	if r.code != 0 || !strings.Contains(r.stdout, "No stored token for http://127.0.0.1:1/other") {
		t.Errorf("status for another server: %s", r.stdout)
	}
	noSecrets(t, srv, outputs...)

	// auth token prints exactly the access token (the only command that does).
	r = runMcpx(t, env, "auth", "token", "--url", srv.MCPURL)
	secrets := srv.Secrets()
	if r.code != 0 || r.stdout != secrets[0]+"\n" {
		t.Errorf("auth token: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}

	r = run(env, "auth", "logout", "--url", srv.MCPURL)
	if r.code != 0 || !strings.Contains(r.stdout, "Removed the token for "+srv.MCPURL) {
		t.Errorf("logout: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = run(env, "auth", "token", "--url", srv.MCPURL)
	if r.code != ExitAuth || r.stdout != "" || !strings.Contains(r.stderr, "no usable stored token") {
		t.Errorf("token after logout: exit %d %q %s", r.code, r.stdout, r.stderr)
	}

	// Nothing stored, no terminal, no BROWSER: exit 3 at once, saying why.
	r = run(env, "tools", "list", "--url", srv.MCPURL)
	if r.code != ExitAuth || !strings.Contains(r.stderr, "no terminal and BROWSER is not set") || !strings.Contains(r.stderr, "mcpx auth login --url "+srv.MCPURL) {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	// --stored-auth-only never starts a browser, even with one at hand.
	r = run(withBrowser(env), "tools", "list", "--stored-auth-only", "--url", srv.MCPURL)
	if r.code != ExitAuth || !strings.Contains(r.stderr, "--stored-auth-only forbids a new authorization") || srv.Count("authorize") != 1 {
		t.Errorf("exit %d, %d authorizations: %s", r.code, srv.Count("authorize"), r.stderr)
	}
	r = run(env, "auth", "logout", "--all")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed 1 stored file(s)") {
		t.Errorf("logout --all: %s %s", r.stdout, r.stderr)
	}
	noSecrets(t, srv, outputs...)
}

// auth login authorizes anew even with a token stored; an expired token
// is refreshed (with the stored refresh token) before it is sent, and a
// token the server revoked is refreshed on its 401 — never a browser.
func TestOAuthLoginAndRefresh(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{RefreshTokens: true, ListScopes: []string{"mcp:tools"}})
	cfg := t.TempDir()
	env := map[string]string{"MCPX_CONFIG_DIR": cfg}
	r := runMcpx(t, withBrowser(env), "auth", "login", "--url", srv.MCPURL)
	if r.code != 0 || !strings.Contains(r.stdout, "Authorized mcpx for "+srv.MCPURL+" with "+srv.Issuer) || !strings.Contains(r.stdout, "refresh token: yes") {
		t.Fatalf("login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runMcpx(t, withBrowser(env), "auth", "login", "--url", srv.MCPURL)
	if r.code != 0 || srv.Count("authorize") != 2 {
		t.Fatalf("second login: exit %d, %d authorizations: %s", r.code, srv.Count("authorize"), r.stderr)
	}
	// The registration was reused: one registration for two logins.
	if n := srv.Count("register"); n != 1 {
		t.Errorf("%d registrations", n)
	}

	// Make the stored token expired, here and on the server.
	files, _ := filepath.Glob(filepath.Join(cfg, "auth", "token-*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v", files)
	}
	var rec map[string]any
	data, _ := os.ReadFile(files[0])
	json.Unmarshal(data, &rec)
	rec["expiry"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
	data, _ = json.Marshal(rec)
	os.WriteFile(files[0], data, 0o600)
	srv.ExpireAll()
	r = runMcpx(t, env, "tools", "list", "-v", "--url", srv.MCPURL)
	if r.code != 0 || !strings.Contains(r.stderr, "refreshing the token") || srv.Count("token grant=refresh_token") != 1 || srv.Count("mcp 401") != 2 {
		t.Fatalf("expired: exit %d, refreshes %d, 401s %d\n%s", r.code, srv.Count("token grant=refresh_token"), srv.Count("mcp 401"), r.stderr)
	}
	// Revoked on the server only: the 401 leads to a refresh and a retry.
	srv.ExpireAll()
	r = runMcpx(t, env, "tools", "list", "--url", srv.MCPURL)
	if r.code != 0 || srv.Count("token grant=refresh_token") != 2 || srv.Count("authorize") != 2 {
		t.Fatalf("revoked: exit %d, refreshes %d\n%s", r.code, srv.Count("token grant=refresh_token"), r.stderr)
	}
	checkPrivate(t, filepath.Join(cfg, "auth"))
	// The stored token is the latest one.
	r = runMcpx(t, env, "auth", "token", "--url", srv.MCPURL)
	secrets := srv.Secrets()
	if r.stdout != secrets[len(secrets)-2]+"\n" {
		t.Errorf("auth token does not print the refreshed token")
	}
}

// A 403 insufficient_scope steps up (a second authorization, for the
// union of scopes); a server that cannot be satisfied gets one
// authorization and exit 3.
func TestOAuthStepUp(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{ListScopes: []string{"mcp:tools"}, CallScopes: []string{"mcp:call"}})
	r := runMcpx(t, withBrowser(nil), "tools", "call", "echo", "message=up", "-v", "--url", srv.MCPURL)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: up" {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	if srv.Count("authorize scope=mcp:tools resource=") != 1 || srv.Count("authorize scope=mcp:tools mcp:call resource=") != 1 {
		t.Errorf("authorizations:\n%s", strings.Join(srv.Events(), "\n"))
	}
	if !strings.Contains(r.stderr, "HTTP 403 insufficient_scope; the server asks for scopes mcp:tools mcp:call") {
		t.Errorf("stderr:\n%s", r.stderr)
	}

	bad := testservers.StartOAuth(t, testservers.OAuthOptions{ListScopes: []string{"mcp:admin"}, AlwaysInsufficient: true})
	r = runMcpx(t, withBrowser(nil), "tools", "list", "--json", "--url", bad.MCPURL)
	if r.code != ExitAuth || !strings.Contains(r.stderr, `"code":"auth"`) || !strings.Contains(r.stderr, "authorizing again cannot help") || bad.Count("authorize") != 1 {
		t.Errorf("exit %d, %d authorizations: %s", r.code, bad.Count("authorize"), r.stderr)
	}
}

// A step-up that no person can authorize here (no terminal, no BROWSER;
// or --stored-auth-only) advises a login that asks for the scopes the
// server wants, with auth login --scope; after it, the command runs
// without a browser. The advice was a plain auth login, which stored a
// token with the challenge's scopes only, refused the same way.
func TestOAuthStepUpWithoutPerson(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{ListScopes: []string{"mcp:tools"}, CallScopes: []string{"mcp:call"}})
	env := map[string]string{"MCPX_CONFIG_DIR": t.TempDir()}
	if r := runMcpx(t, withBrowser(env), "auth", "login", "--url", srv.MCPURL); r.code != 0 {
		t.Fatalf("login: exit %d\n%s", r.code, r.stderr)
	}
	advice := "(run `mcpx auth login --url " + srv.MCPURL + " --scope 'mcp:tools mcp:call'` in a terminal first: it stores a token with them)"
	for _, flags := range [][]string{nil, {"--stored-auth-only"}} {
		r := runMcpx(t, env, append([]string{"tools", "call", "echo", "message=up", "--url", srv.MCPURL}, flags...)...)
		if r.code != ExitAuth || !strings.Contains(r.stderr, "the server wants a token with scopes mcp:tools mcp:call "+advice) {
			t.Errorf("%v: exit %d\n%s", flags, r.code, r.stderr)
		}
	}
	// auth login itself without a person: run it in a terminal (not
	// "run auth login", nor "pass --bearer", which it refuses).
	r := runMcpx(t, env, "auth", "login", "--url", srv.MCPURL, "--scope", "mcp:tools mcp:call")
	if r.code != ExitAuth || !strings.HasSuffix(strings.TrimSpace(r.stderr), "there is no terminal and BROWSER is not set (run it in a terminal, set BROWSER, or use --grant client_credentials)") {
		t.Errorf("login without a person: exit %d\n%s", r.code, r.stderr)
	}
	r = runMcpx(t, withBrowser(env), "auth", "login", "--url", srv.MCPURL, "--scope", "mcp:tools mcp:call")
	if r.code != 0 || !strings.Contains(r.stdout, "scopes:        mcp:tools mcp:call\n") {
		t.Fatalf("login --scope: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runMcpx(t, env, "tools", "call", "echo", "message=up", "--url", srv.MCPURL)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: up" {
		t.Errorf("after login --scope: exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	if n := srv.Count("authorize "); n != 2 {
		t.Errorf("%d authorizations, want the 2 logins:\n%s", n, strings.Join(srv.Events(), "\n"))
	}
}

// lineWriter hands each complete line written to it to fn.
type lineWriter struct {
	mu  sync.Mutex
	buf strings.Builder
	all strings.Builder
	fn  func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.buf.Write(p)
	for {
		s := w.buf.String()
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		w.fn(s[:i])
		w.buf.Reset()
		w.buf.WriteString(s[i+1:])
	}
	return len(p), nil
}

// --no-browser prints the authorization URL and takes the redirect URL
// pasted on stdin (a browser on another machine). On a terminal what it
// says is broken at words to its width, as mcpx's other lines are (it
// was printed whole, and cut mid-word at the terminal's edge), the URL
// kept whole on a line of its own so that it can be copied as one.
func TestOAuthNoBrowserPaste(t *testing.T) {
	t.Parallel()
	for _, width := range []int{0, 40} {
		t.Run(fmt.Sprintf("width %d", width), func(t *testing.T) {
			t.Parallel()
			testOAuthNoBrowserPaste(t, width)
		})
	}
}

func testOAuthNoBrowserPaste(t *testing.T, width int) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{})
	inR, inW := io.Pipe()
	defer inW.Close()
	ios, out, _ := NewTestIOStreams(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
	errW := &lineWriter{fn: func(line string) {
		u := strings.TrimSpace(strings.TrimPrefix(line, "mcpx: "))
		if !strings.HasPrefix(u, srv.Issuer+"/authorize?") {
			return
		}
		// The "other machine": follow the authorization request but not
		// the redirect, and paste where it points.
		go func() {
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
			resp, err := c.Get(u)
			if err != nil {
				inW.CloseWithError(err)
				return
			}
			resp.Body.Close()
			fmt.Fprintln(inW, "garbage first")
			fmt.Fprintln(inW, resp.Header.Get("Location"))
		}()
	}}
	ios.In, ios.ErrOut = bufio.NewReader(inR), errW
	if width > 0 {
		ios.ErrTTY, ios.ErrWidth = true, func() int { return width }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Run(ctx, []string{"tools", "list", "--no-browser", "--color", "never", "--url", srv.MCPURL}, ios)
	errW.mu.Lock()
	stderr := errW.all.String()
	errW.mu.Unlock()
	if code != 0 || !strings.Contains(out.String(), "echo") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), stderr)
	}
	if width == 0 {
		for _, want := range []string{"Open this URL in a browser to authorize mcpx", "paste here the address", "that is not the address the browser was sent to"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		return
	}
	var urls int
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if strings.HasPrefix(l, "  "+srv.Issuer+"/authorize?") {
			urls++
			continue
		}
		if tui.DisplayWidth(l) > width {
			t.Errorf("a line takes %d columns, more than the terminal's %d: %q", tui.DisplayWidth(l), width, l)
		}
	}
	if urls != 1 {
		t.Errorf("the URL is on %d lines of its own, want 1:\n%s", urls, stderr)
	}
}

func TestOAuthUsageErrors(t *testing.T) {
	t.Parallel()
	u := "http://127.0.0.1:1/mcp"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ping", "--client-id", "x", "--", "node", "x.js"}, "--client-id applies to HTTP servers"},
		{[]string{"ping", "--url", u, "--grant", "password"}, "--grant must be authorization_code, client_credentials, id-jag or jwt-bearer"},
		{[]string{"ping", "--url", u, "--grant", "client_credentials"}, "needs a pre-registered client"},
		{[]string{"ping", "--url", u, "--grant", "client_credentials", "--client-id", "c"}, "needs a pre-registered client"},
		{[]string{"ping", "--url", u, "--client-secret", "s"}, "--client-secret goes with --client-id"},
		{[]string{"ping", "--url", u, "--bearer", "t", "--client-id", "c"}, "--bearer sends a fixed token"},
		{[]string{"ping", "--url", u, "--callback-url", "https://127.0.0.1:9/cb"}, "--callback-url"},
		{[]string{"ping", "--url", u, "--client-metadata-url", "http://example.com/c.json"}, "must be https with a path"},
		{[]string{"ping", "--url", u, "--client-id", "c", "--private-key", "/nonexistent/key.pem"}, "--private-key"},
		{[]string{"ping", "--url", u, "--grant", "id-jag", "--client-id", "c"}, "--grant id-jag needs --id-token-file"},
		{[]string{"ping", "--url", u, "--idp-token-url", "https://idp.example/token"}, "--idp-token-url applies to --grant id-jag"},
		{[]string{"ping", "--url", u, "--grant", "jwt-bearer"}, "--grant jwt-bearer needs --assertion-file FILE"},
		{[]string{"ping", "--url", u, "--assertion-file", "/nonexistent/jwt"}, "--assertion-file applies to --grant jwt-bearer"},
		{[]string{"ping", "--url", u, "--grant", "jwt-bearer", "--assertion-file", "/nonexistent/jwt"}, "--assertion-file: open /nonexistent/jwt"},
		{[]string{"auth", "logout"}, "exactly one of --url URL or --all"},
		{[]string{"auth", "token"}, "auth token needs the server: --url URL"},
		{[]string{"auth", "login"}, "auth login needs the server"},
	}
	for _, tt := range tests {
		r := runMcpx(t, nil, tt.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	// A client secret in the environment does not bother stdio servers.
	r := runMcpx(t, map[string]string{"MCPX_CLIENT_SECRET": "s"}, "ping", "--timeout", "1ms", "--", "/nonexistent/server")
	if r.code == ExitUsage {
		t.Errorf("MCPX_CLIENT_SECRET made a stdio command a usage error: %s", r.stderr)
	}
}

// DPoP through mcpx: where the authorization server offers it, the token
// is DPoP-bound, its key stored with it privately; --wire shows the proof
// header redacted; status says the token is bound; auth token prints it
// with a warning; neither token nor key ever appears in the output.
func TestOAuthDPoP(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{DPoP: true, DPoPNonce: true, ListScopes: []string{"mcp:tools"}})
	cfg := t.TempDir()
	env := map[string]string{"MCPX_CONFIG_DIR": cfg}
	var outputs []string
	run := func(env map[string]string, args ...string) runResult {
		r := runMcpx(t, env, args...)
		outputs = append(outputs, r.stdout, r.stderr)
		return r
	}
	r := run(withBrowser(env), "tools", "list", "-v", "--wire", "--url", srv.MCPURL)
	if r.code != 0 || !strings.Contains(r.stdout, "echo") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s\nserver:\n%s", r.code, r.stdout, r.stderr, strings.Join(srv.Events(), "\n"))
	}
	for _, want := range []string{"DPoP: the authorization server takes DPoP proofs (dpop_signing_alg_values_supported: ES256)",
		"answered use_dpop_nonce: sending the request again", "DPoP: the token is bound to the key", "HTTP 401 use_dpop_nonce; sending it again",
		"Authorization: [redacted], DPoP: [redacted]", "DPoP-Nonce: rs-nonce-"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := checkPrivate(t, filepath.Join(cfg, "auth")); n != 2 {
		t.Errorf("%d files in the store", n)
	}
	r = run(env, "auth", "status", "--url", srv.MCPURL)
	if r.code != 0 || !strings.Contains(r.stdout, "DPoP-bound:    yes") {
		t.Errorf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(env, "auth", "status", "--json")
	if r.code != 0 || !strings.Contains(strings.Join(strings.Fields(r.stdout), ""), `"dpop":true`) {
		t.Errorf("status --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runMcpx(t, env, "auth", "token", "--url", srv.MCPURL)
	secrets := srv.Secrets()
	if r.code != 0 || strings.TrimSpace(r.stdout) != secrets[len(secrets)-1] || !strings.Contains(r.stderr, "this token is DPoP-bound") {
		t.Errorf("auth token: exit %d, stderr %s", r.code, r.stderr)
	}
	noSecrets(t, srv, outputs...)
	entries, _ := os.ReadDir(filepath.Join(cfg, "auth"))
	for _, e := range entries {
		var rec struct {
			Key string `json:"dpop_key"`
		}
		b, _ := os.ReadFile(filepath.Join(cfg, "auth", e.Name()))
		if json.Unmarshal(b, &rec) == nil && rec.Key != "" {
			for _, o := range append(outputs, r.stdout, r.stderr) {
				if strings.Contains(o, rec.Key) {
					t.Fatal("the DPoP key was printed")
				}
			}
		}
	}
}

// The jwt-bearer grant through mcpx's flags: the workload's JWT from a
// file goes to the token endpoint as the assertion; a refusal exits 3.
func TestOAuthJWTBearerFlags(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var forms []map[string][]string
	asURL := serveOn(t, func(base string) http.Handler {
		as := http.NewServeMux()
		as.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"issuer": base, "token_endpoint": base + "/token",
				"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"}})
		})
		as.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
			r.ParseForm()
			mu.Lock()
			forms = append(forms, r.PostForm)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"JWT assertion is expired"}`)
		})
		return as
	})
	// The MCP server answers 401 naming that authorization server.
	mcpBase := serveOn(t, func(base string) http.Handler {
		mcp := http.NewServeMux()
		mcp.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{asURL}})
		})
		mcp.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "no", http.StatusUnauthorized)
		})
		return mcp
	})
	jwtFile := filepath.Join(t.TempDir(), "token")
	const jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2ln"
	os.WriteFile(jwtFile, []byte(jwt+"\n"), 0o600)
	r := runMcpx(t, map[string]string{"MCPX_CONFIG_DIR": t.TempDir()}, "tools", "list", "--url", mcpBase+"/mcp",
		"--grant", "jwt-bearer", "--assertion-file", jwtFile, "--client-id", "wl")
	if r.code != ExitAuth || !strings.Contains(r.stderr, "invalid_grant: JWT assertion is expired") || strings.Contains(r.stderr, jwt) {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(forms) != 1 || forms[0]["assertion"][0] != jwt || forms[0]["grant_type"][0] != "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
		forms[0]["client_id"][0] != "wl" || forms[0]["resource"][0] != mcpBase+"/mcp" {
		t.Errorf("token requests: %v", forms)
	}
}

// serveOn serves the handler build makes for its own base URL on 127.0.0.1
// until the test ends, and returns that URL.
func serveOn(t *testing.T, build func(base string) http.Handler) string {
	s := httptest.NewUnstartedServer(nil)
	base := "http://" + s.Listener.Addr().String()
	s.Config.Handler = build(base)
	s.Start()
	t.Cleanup(s.Close)
	return base
}

// A REPL reading its commands from stdin authorizes with --no-browser
// (the browser here comes back to the callback): the lines that follow
// are the REPL's. The wait for a pasted address went on reading stdin
// after the authorization and took them ('that is not the address the
// browser was sent to …'), so the REPL never ran them.
func TestOAuthPasteLeavesREPLLines(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{})
	inR, inW := io.Pipe()
	defer inW.Close()
	ios, out, _ := NewTestIOStreams(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
	errW := &lineWriter{fn: func(line string) {
		u := strings.TrimSpace(strings.TrimPrefix(line, "mcpx: "))
		if !strings.HasPrefix(u, srv.Issuer+"/authorize?") {
			return
		}
		go func() {
			if err := testservers.FakeBrowser(u); err != nil {
				inW.CloseWithError(err)
				return
			}
			for i := range 3 {
				fmt.Fprintf(inW, "tools call echo message=line%d\n", i)
			}
			inW.Close()
		}()
	}}
	ios.In, ios.ErrOut = bufio.NewReader(inR), errW
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Run(ctx, []string{"repl", "--no-browser", "--url", srv.MCPURL}, ios)
	errW.mu.Lock()
	stderr := errW.all.String()
	errW.mu.Unlock()
	for i := range 3 {
		if want := fmt.Sprintf("Echo: line%d", i); !strings.Contains(out.String(), want) {
			t.Errorf("the REPL did not run line %d", i)
		}
	}
	if code != 0 || strings.Contains(stderr, "not the address") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), stderr)
	}
}

// A browser authorization that outlasts --timeout says so, and what to
// do: the request's timeout said only 'initialize: no response after
// 1s', blaming the server, and the advice for a browser that took too
// long was never shown.
func TestOAuthBrowserTimeoutSaysSo(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the browser here is true(1)")
	}
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{})
	// A browser that opens nothing and exits.
	r := runMcpx(t, map[string]string{"BROWSER": "true"}, "tools", "list", "--timeout", "1s", "--url", srv.MCPURL)
	want := "mcpx: initialize: no response after 1s (the browser was not sent to http://127.0.0.1:"
	if r.code != ExitTimeout || !strings.Contains(r.stderr, want) ||
		!strings.Contains(r.stderr, "(the browser authorization took longer than --timeout; run `mcpx auth login --url URL`, which waits 5 minutes, or raise --timeout)") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

// In mcpx auth login itself, the advice for a browser authorization that
// outlasted --timeout was to run mcpx auth login: it is to raise
// --timeout.
func TestOAuthLoginBrowserTimeoutAdvice(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the browser here is true(1)")
	}
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{})
	r := runMcpx(t, map[string]string{"BROWSER": "true"}, "auth", "login", "--timeout", "1s", "--url", srv.MCPURL)
	if r.code != ExitTimeout || strings.Contains(r.stderr, "run `mcpx auth login") ||
		!strings.Contains(r.stderr, "(the browser authorization took longer than --timeout; raise it to wait longer, e.g. --timeout 15m)") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}
