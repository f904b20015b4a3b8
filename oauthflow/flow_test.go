package oauthflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/transport"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// browser is an in-process Browser that records the authorization URLs.
type browser struct {
	mu   sync.Mutex
	urls []*url.URL
}

func (b *browser) open(u string) (<-chan error, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.urls = append(b.urls, pu)
	b.mu.Unlock()
	exited := make(chan error, 1)
	go func() {
		if err := testservers.FakeBrowser(u); err != nil {
			exited <- err
		}
	}()
	return exited, nil
}

func (b *browser) opened() []*url.URL {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*url.URL(nil), b.urls...)
}

type events struct {
	mu   sync.Mutex
	text []string
}

func (e *events) observe(ev transport.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.text = append(e.text, ev.Text)
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.text, "\n")
}

// connect opens an MCP session to the server through the real HTTP
// transport with az as its Authorizer.
func connect(t *testing.T, mcpURL string, az transport.Authorizer, ev *events) *inspector.Session {
	t.Helper()
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: mcpURL, Authorizer: az, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := inspector.Connect(ctx, conn, inspector.Options{Lifecycle: &inspector.Legacy{
		ClientInfo: inspector.Implementation{Name: "test", Version: "1"}, Capabilities: json.RawMessage("{}")}})
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func call(t *testing.T, s *inspector.Session, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.Call(ctx, method, params)
}

// The authorization code flow against a real server: PKCE S256, state,
// iss, the resource indicator on both requests, the scope of the
// challenge plus offline_access, a stored token reused by the next
// session; then refresh before expiry, with the resource, rotating the
// refresh token.
func TestAuthorizationCodeAndRefresh(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{
		RefreshTokens: true, ScopesSupported: []string{"mcp:tools"}, ListScopes: []string{"mcp:tools"}, TokenTTL: time.Hour,
	})
	store := oauthflow.NewStore(t.TempDir())
	clk := &clock{t: time.Now()}
	br := &browser{}
	ev := &events{}
	newAZ := func(mod func(*oauthflow.Config)) *oauthflow.Authorizer {
		cfg := oauthflow.Config{ServerURL: srv.MCPURL, Store: store, Browser: br.open, Observer: ev.observe, Now: clk.now}
		if mod != nil {
			mod(&cfg)
		}
		az, err := oauthflow.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return az
	}
	sess := connect(t, srv.MCPURL, newAZ(nil), ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	urls := br.opened()
	if len(urls) != 1 {
		t.Fatalf("browser opened %d times", len(urls))
	}
	q := urls[0].Query()
	if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || len(q.Get("state")) < 32 ||
		q.Get("resource") != srv.MCPURL || q.Get("scope") != "mcp:tools offline_access" || q.Get("response_type") != "code" {
		t.Errorf("authorization request: %v", q)
	}
	want := []string{
		"register auth=none grants=authorization_code,refresh_token",
		"authorize scope=mcp:tools offline_access resource=" + srv.MCPURL,
		"token grant=authorization_code resource=" + srv.MCPURL + " scope=mcp:tools offline_access",
	}
	for _, w := range want {
		if srv.Count(w) != 1 {
			t.Errorf("server events lack %q:\n%s", w, strings.Join(srv.Events(), "\n"))
		}
	}
	sess.Close()

	// A new session uses the stored token: no browser.
	sess = connect(t, srv.MCPURL, newAZ(func(c *oauthflow.Config) { c.NoInteraction = "no browser in this test" }), ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if len(br.opened()) != 1 || srv.Count("authorize") != 1 {
		t.Errorf("authorized again: %d", srv.Count("authorize"))
	}
	sess.Close()

	// An hour later the token is about to expire: it is refreshed first.
	clk.add(time.Hour - 10*time.Second)
	srv.ExpireAll()
	sess = connect(t, srv.MCPURL, newAZ(func(c *oauthflow.Config) { c.NoInteraction = "no browser in this test" }), ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("token grant=refresh_token resource=" + srv.MCPURL); n != 1 {
		t.Errorf("refreshed %d times:\n%s", n, strings.Join(srv.Events(), "\n"))
	}
	// Only the first connection met a 401: the refresh came before sending.
	if n := srv.Count("mcp 401"); n != 1 {
		t.Errorf("%d refusals:\n%s", n, strings.Join(srv.Events(), "\n"))
	}
	recs, _ := store.Tokens()
	secrets := srv.Secrets()
	if len(recs) != 1 || recs[0].AccessToken != secrets[len(secrets)-2] || recs[0].RefreshToken != secrets[len(secrets)-1] {
		t.Errorf("the store does not hold the refreshed token and the rotated refresh token")
	}
	sess.Close()

	// The server revokes the token (it expires there, not here): the 401
	// is answered by a refresh and the request sent again.
	srv.ExpireAll()
	sess = connect(t, srv.MCPURL, newAZ(func(c *oauthflow.Config) { c.NoInteraction = "no browser in this test" }), ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("token grant=refresh_token"); n != 2 {
		t.Errorf("refreshed %d times in all", n)
	}
	// No token ever appeared in an event.
	for _, s := range srv.Secrets() {
		if strings.Contains(ev.String(), s) {
			t.Fatalf("a token appeared in the events")
		}
	}
	for _, w := range []string{"auth: refreshing the token: POST " + srv.Issuer + "/token (refresh_token, client auth none, resource " + srv.MCPURL + ")",
		"oauth: POST " + srv.Issuer + "/token", "auth: authorization response received on http://127.0.0.1:"} {
		if !strings.Contains(ev.String(), w) {
			t.Errorf("events lack %q", w)
		}
	}
}

// 403 insufficient_scope steps up to the union of the scopes asked for
// and the challenge's; a server that asks for scopes already granted is
// not re-authorized for.
func TestStepUpAndRetryLimit(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{ListScopes: []string{"mcp:tools"}, CallScopes: []string{"mcp:call"}})
	br := &browser{}
	ev := &events{}
	az, err := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Browser: br.open, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	sess := connect(t, srv.MCPURL, az, ev)
	if _, err := call(t, sess, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}}); err != nil {
		t.Fatal(err)
	}
	urls := br.opened()
	if len(urls) != 2 || urls[0].Query().Get("scope") != "mcp:tools" || urls[1].Query().Get("scope") != "mcp:tools mcp:call" {
		t.Errorf("authorizations: %v", urls)
	}
	if rec := az.Current(); rec == nil || strings.Join(rec.Scopes, " ") != "mcp:tools mcp:call" {
		t.Errorf("current token scopes: %+v", rec)
	}

	bad := testservers.StartOAuth(t, testservers.OAuthOptions{ListScopes: []string{"mcp:admin"}, AlwaysInsufficient: true})
	br2 := &browser{}
	az2, _ := oauthflow.New(oauthflow.Config{ServerURL: bad.MCPURL, Browser: br2.open, Observer: ev.observe})
	sess2 := connect(t, bad.MCPURL, az2, ev)
	_, err = call(t, sess2, "tools/list", nil)
	if !errors.Is(err, transport.ErrUnauthorized) || !strings.Contains(err.Error(), "authorizing again cannot help") {
		t.Errorf("err = %v", err)
	}
	if n := len(br2.opened()); n != 1 {
		t.Errorf("authorized %d times against a server that cannot be satisfied", n)
	}
}

// A browser that fails ends the wait at once, with its error.
func TestBrowserFailure(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{})
	az, _ := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Browser: oauthflow.CommandBrowser("false")})
	conn, _ := transport.NewHTTP(transport.HTTPOptions{URL: srv.MCPURL, Authorizer: az})
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := inspector.Connect(ctx, conn, inspector.Options{Lifecycle: &inspector.Legacy{Capabilities: json.RawMessage("{}")}})
	if err == nil || !strings.Contains(err.Error(), "the browser command false (from BROWSER) failed") || ctx.Err() != nil {
		t.Errorf("err = %v", err)
	}
}

// Two runs share a stored token (a long session and a command run
// meanwhile): when the other run has refreshed it, rotating the refresh
// token, this one takes the newer stored token instead of refreshing with
// the refresh token it read, which the server no longer takes (then it
// needed a browser again: "authorization needs a person").
func TestRefreshTakesTokenAnotherRunStored(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{RefreshTokens: true, ListScopes: []string{"mcp:tools"}, TokenTTL: time.Hour})
	store := oauthflow.NewStore(t.TempDir())
	clk := &clock{t: time.Now()}
	ev := &events{}
	newAZ := func(br *browser) *oauthflow.Authorizer {
		cfg := oauthflow.Config{ServerURL: srv.MCPURL, Store: store, Observer: ev.observe, Now: clk.now, NoInteraction: "no browser in this test"}
		if br != nil {
			cfg.Browser, cfg.NoInteraction = br.open, ""
		}
		az, err := oauthflow.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return az
	}
	first := connect(t, srv.MCPURL, newAZ(&browser{}), ev)
	if _, err := call(t, first, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	first.Close()

	long := connect(t, srv.MCPURL, newAZ(nil), ev)
	if _, err := call(t, long, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	// Near the expiry, another run refreshes the stored token.
	clk.add(time.Hour - 10*time.Second)
	srv.ExpireAll()
	other := connect(t, srv.MCPURL, newAZ(nil), ev)
	if _, err := call(t, other, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	other.Close()
	// The long session's token is about to expire too.
	if _, err := call(t, long, "tools/list", nil); err != nil {
		t.Fatalf("the session that read the token first: %v\n%s", err, ev)
	}
	if n := srv.Count("token grant=refresh_token"); n != 1 {
		t.Errorf("refreshed %d times:\n%s", n, strings.Join(srv.Events(), "\n"))
	}
	if !strings.Contains(ev.String(), "was updated by another mcpx run since this one read it (expires in 1h0m0s); using it") {
		t.Errorf("events:\n%s", ev)
	}
}

// A long session (the REPL, mcpx connect) whose token, obtained by this
// run's authorization and taken by the server since, is refused later
// (it expired or was revoked there before the expiry mcpx knows, or
// never said one): the refusal is answered with a refresh, as for a
// stored token. It was an error ("the server refused the token … just
// issued"), ending the session although a refresh token was at hand. A
// token refused before the server ever took it is still that error, not
// a loop of refreshes and authorizations.
func TestFlowTokenRefusedLaterIsRefreshed(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{RefreshTokens: true, ListScopes: []string{"mcp:tools"}, TokenTTL: time.Hour})
	br := &browser{}
	ev := &events{}
	az, err := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Store: oauthflow.NewStore(t.TempDir()), Browser: br.open, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	sess := connect(t, srv.MCPURL, az, ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	srv.ExpireAll()
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(srv.Events(), "\n"))
	}
	if n, m := srv.Count("token grant=refresh_token"), len(br.opened()); n != 1 || m != 1 {
		t.Errorf("%d refreshes, %d authorizations; want 1 and 1:\n%s", n, m, strings.Join(srv.Events(), "\n"))
	}

	// A server that takes none of its authorization server's tokens.
	refusing := testservers.StartOAuth(t, testservers.OAuthOptions{RefreshTokens: true, ListScopes: []string{"mcp:tools"},
		WrapMCP: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Del("Authorization")
				h.ServeHTTP(w, r)
			})
		}})
	br2 := &browser{}
	az2, _ := oauthflow.New(oauthflow.Config{ServerURL: refusing.MCPURL, Browser: br2.open, Observer: ev.observe})
	conn, _ := transport.NewHTTP(transport.HTTPOptions{URL: refusing.MCPURL, Authorizer: az2})
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = inspector.Connect(ctx, conn, inspector.Options{Lifecycle: &inspector.Legacy{Capabilities: json.RawMessage("{}")}})
	if err == nil || !strings.Contains(err.Error(), "just issued") {
		t.Errorf("err = %v", err)
	}
	if n, m := refusing.Count("token grant=refresh_token"), len(br2.opened()); n != 0 || m != 1 {
		t.Errorf("%d refreshes, %d authorizations; want 0 and 1", n, m)
	}
}

// A long session (mcpx connect, the REPL) with no browser whose grant is
// revoked fails its next request, advising mcpx auth login; once the
// person has logged in (another run storing a new token), the session's
// next request takes that token. It kept failing until restarted: having
// given its token up, it never read the store again. A session that gave
// up a token does not take it up again: an expired stored token whose
// refresh fails ends in the same error, not a loop.
func TestSessionTakesTokenOfLaterLogin(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{RefreshTokens: true, ListScopes: []string{"mcp:tools"}, TokenTTL: time.Hour})
	store := oauthflow.NewStore(t.TempDir())
	ev := &events{}
	login := func() { t.Helper(); logIn(t, srv.MCPURL, store, ev) }
	login()
	az, err := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Store: store, Observer: ev.observe, NoInteraction: "no browser in this test"})
	if err != nil {
		t.Fatal(err)
	}
	long := connect(t, srv.MCPURL, az, ev)
	srv.RevokeAll()
	for range 2 {
		// The token was revoked, not expired: the error says neither.
		if _, err := call(t, long, "tools/list", nil); !errors.Is(err, oauthflow.ErrInteraction) ||
			!strings.Contains(err.Error(), "(refreshing the stored token failed: the token endpoint "+srv.Issuer+"/token answered HTTP 400: invalid_grant") {
			t.Fatalf("after the revocation: err = %v", err)
		}
	}
	login()
	if _, err := call(t, long, "tools/list", nil); err != nil {
		t.Fatalf("after mcpx auth login: %v\n%s", err, ev)
	}
	if !strings.Contains(ev.String(), "stored by another mcpx run since this one read it (mcpx auth login); using it") {
		t.Errorf("events:\n%s", ev)
	}
	if n := srv.Count("authorize "); n != 2 {
		t.Errorf("%d authorizations, want the 2 logins:\n%s", n, strings.Join(srv.Events(), "\n"))
	}
}

// logIn does what mcpx auth login [--scope SCOPES] does: a fresh
// authorization in the browser, its token stored.
func logIn(t *testing.T, mcpURL string, store *oauthflow.Store, ev *events, scopes ...string) {
	t.Helper()
	az, err := oauthflow.New(oauthflow.Config{ServerURL: mcpURL, Store: store, Browser: (&browser{}).open, Fresh: true, Scopes: scopes, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, mcpURL, az, ev)
	if _, err := call(t, s, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// A step-up in a long session with no browser fails with a StepUpError
// naming the scopes to log in with; once another run has stored a token
// with them (Config.Scopes, mcpx auth login --scope), the session takes
// it. It kept failing until restarted: a step-up never read the store.
func TestSessionTakesStepUpTokenOfLaterLogin(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{ListScopes: []string{"mcp:tools"}, CallScopes: []string{"mcp:call"}})
	store := oauthflow.NewStore(t.TempDir())
	ev := &events{}
	login := func(scopes ...string) { t.Helper(); logIn(t, srv.MCPURL, store, ev, scopes...) }
	login()
	az, err := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Store: store, Observer: ev.observe, NoInteraction: "no browser in this test"})
	if err != nil {
		t.Fatal(err)
	}
	long := connect(t, srv.MCPURL, az, ev)
	echo := map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}}
	_, err = call(t, long, "tools/call", echo)
	var su *oauthflow.StepUpError
	if !errors.As(err, &su) || strings.Join(su.Scopes, " ") != "mcp:tools mcp:call" || su.ServerURL != srv.MCPURL || !errors.Is(err, oauthflow.ErrInteraction) {
		t.Fatalf("step-up without a person: %v", err)
	}
	login("mcp:call")
	if _, err := call(t, long, "tools/call", echo); err != nil {
		t.Fatalf("after the login with the scopes: %v\n%s", err, ev)
	}
	if n := srv.Count("authorize scope=mcp:tools mcp:call resource="); n != 1 || srv.Count("authorize ") != 2 {
		t.Errorf("authorizations:\n%s", strings.Join(srv.Events(), "\n"))
	}
}

// Sessions of one run that share a Gate (verify --parallel's traces)
// authorize one at a time: those that waited take the token the first
// stored, so the person is asked once, not once per session.
func TestGateAuthorizesOnce(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{ListScopes: []string{"mcp:tools"}, TokenTTL: time.Hour})
	store := oauthflow.NewStore(t.TempDir())
	ev := &events{}
	b := &browser{}
	var gate oauthflow.Gate
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			az, err := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Store: store, Browser: b.open, Gate: &gate, Observer: ev.observe})
			if err != nil {
				errs <- err
				return
			}
			conn, err := transport.NewHTTP(transport.HTTPOptions{URL: srv.MCPURL, Authorizer: az, Observer: ev.observe})
			if err != nil {
				errs <- err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sess, err := inspector.Connect(ctx, conn, inspector.Options{Lifecycle: &inspector.Legacy{
				ClientInfo: inspector.Implementation{Name: "test", Version: "1"}, Capabilities: json.RawMessage("{}")}})
			if err != nil {
				conn.Close()
				errs <- err
				return
			}
			defer sess.Close()
			_, err = sess.Call(ctx, "tools/list", nil)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("a session: %v\n%s", err, ev)
		}
	}
	if got := len(b.opened()); got != 1 {
		t.Errorf("the browser opened %d times, want once:\n%s", got, ev)
	}
	if got := srv.Count("authorize "); got != 1 {
		t.Errorf("%d authorizations, want 1:\n%s", got, strings.Join(srv.Events(), "\n"))
	}
}
