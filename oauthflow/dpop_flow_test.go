package oauthflow_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/transport"
)

// DPoP end to end against an authorization server and an MCP server that
// check every proof (written in the tests, independently of mcpx): a
// DPoP-bound token is obtained with a proof (after the authorization
// server's nonce), every MCP request carries a fresh proof with the
// token's hash (after the MCP server's nonce), the key is stored with the
// token and reused by the next run, refreshes prove the same key, nonces
// that change are followed, and no token, key or proof appears in any
// event.
func TestDPoPFlow(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{DPoP: true, DPoPNonce: true, RefreshTokens: true,
		ListScopes: []string{"mcp:tools"}, TokenTTL: time.Hour})
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
	noBrowser := func(c *oauthflow.Config) { c.NoInteraction = "no browser in this test" }
	dump := func() string { return strings.Join(srv.Events(), "\n") }

	sess := connect(t, srv.MCPURL, newAZ(nil), ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatalf("%v\n%s", err, dump())
	}
	sess.Close()
	for prefix, want := range map[string]int{
		"token use_dpop_nonce":                 1,
		"token grant=authorization_code":       1,
		"mcp use_dpop_nonce":                   1,
		"mcp invalid":                          0,
		"mcp DPoP-bound token with the Bearer": 0,
		"token invalid_dpop_proof":             0,
		"token grant=authorization_code resource=" + srv.MCPURL + " scope=mcp:tools offline_access dpop": 1,
	} {
		if n := srv.Count(prefix); n != want {
			t.Errorf("%d events %q, want %d:\n%s", n, prefix, want, dump())
		}
	}
	if srv.Count("mcp dpop POST") < 3 {
		t.Errorf("the MCP requests did not all carry proofs:\n%s", dump())
	}
	recs, _ := store.Tokens()
	if len(recs) != 1 || !recs[0].DPoPBound() || recs[0].DPoPKey == "" {
		t.Fatalf("stored: %+v", recs)
	}
	if fi, err := os.Stat(recs[0].File()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", fi.Mode(), err)
	}

	// The next run uses the stored token with its key: no authorization
	// (the MCP server's nonce is asked for again: nonces are not stored).
	sess = connect(t, srv.MCPURL, newAZ(noBrowser), ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatalf("%v\n%s", err, dump())
	}
	sess.Close()
	if srv.Count("authorize") != 1 || len(br.opened()) != 1 {
		t.Errorf("authorized again:\n%s", dump())
	}

	// Nearly an hour later, with new nonces: the refresh proves the same
	// key (the server refuses otherwise) and follows the new nonce.
	clk.add(time.Hour - 10*time.Second)
	srv.RotateNonces()
	sess = connect(t, srv.MCPURL, newAZ(noBrowser), ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatalf("%v\n%s", err, dump())
	}
	sess.Close()
	if srv.Count("token grant=refresh_token resource="+srv.MCPURL+" scope=mcp:tools offline_access dpop") != 1 ||
		srv.Count("token refresh refused") != 0 || srv.Count("token use_dpop_nonce") != 2 || srv.Count("mcp use_dpop_nonce") != 3 {
		t.Errorf("refresh:\n%s", dump())
	}

	all := ev.String()
	for _, s := range srv.Secrets() {
		if strings.Contains(all, s) {
			t.Fatal("a token appeared in the events")
		}
	}
	recs, _ = store.Tokens()
	if strings.Contains(all, recs[0].DPoPKey) || strings.Contains(all, "eyJ") {
		t.Error("the key or a proof appeared in the events")
	}
	if !strings.Contains(all, "DPoP: [redacted]") {
		t.Errorf("the DPoP header is not shown redacted:\n%s", all)
	}
}

// With NoDPoP, mcpx asks for a bearer token even where DPoP is offered.
func TestNoDPoP(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{DPoP: true})
	br := &browser{}
	az, err := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Browser: br.open, NoDPoP: true})
	if err != nil {
		t.Fatal(err)
	}
	sess := connect(t, srv.MCPURL, az, &events{})
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if rec := az.Current(); rec == nil || rec.DPoPBound() || srv.Count("mcp dpop") != 0 || srv.Count("token grant=authorization_code") != 1 ||
		srv.Count("token grant=authorization_code resource="+srv.MCPURL+" scope= dpop") != 0 {
		t.Errorf("token %+v:\n%s", rec, strings.Join(srv.Events(), "\n"))
	}
}

// A server that moves to another authorization server in the middle of a
// session: its refusal of the old server's token makes mcpx discover
// again, register with the new server (never presenting the old one's
// client there), authorize there and send the request again; the old
// token is dropped from the store. A token the same server refuses right
// after issuing it is still an error.
func TestAuthorizationServerMoves(t *testing.T) {
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{SecondIssuer: true, ListScopes: []string{"mcp:tools"}})
	store := oauthflow.NewStore(t.TempDir())
	br := &browser{}
	ev := &events{}
	az, err := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Store: store, Browser: br.open, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	sess := connect(t, srv.MCPURL, az, ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	srv.MoveAuthorizationServer()
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(srv.Events(), "\n"))
	}
	for prefix, want := range map[string]int{"register auth=none grants=authorization_code,refresh_token as=1": 1, "register auth=none grants=authorization_code,refresh_token as=2": 1,
		"authorize refused": 0, "authorize scope=mcp:tools": 2} {
		if n := srv.Count(prefix); n != want {
			t.Errorf("%d events %q, want %d:\n%s", n, prefix, want, strings.Join(srv.Events(), "\n"))
		}
	}
	urls := br.opened()
	if len(urls) != 2 || urls[0].Host == urls[1].Host || "http://"+urls[1].Host != srv.Issuer2 {
		t.Errorf("authorizations: %v", urls)
	}
	recs, _ := store.Tokens()
	if len(recs) != 1 || recs[0].Issuer != srv.Issuer2 {
		t.Errorf("stored: %+v", recs)
	}
	if !strings.Contains(ev.String(), "auth: the server moved to another authorization server") {
		t.Errorf("events:\n%s", ev)
	}
	sess0 := sess

	// The next run starts from the new server's token.
	az2, _ := oauthflow.New(oauthflow.Config{ServerURL: srv.MCPURL, Store: store, NoInteraction: "no browser in this test"})
	sess = connect(t, srv.MCPURL, az2, ev)
	if _, err := call(t, sess, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if len(br.opened()) != 2 {
		t.Error("authorized again")
	}
	sess.Close()

	// In the first session the token came from this run's authorization:
	// refused again while the server still names the same authorization
	// server, it is an error, not a loop.
	srv.ExpireAll()
	_, err = call(t, sess0, "tools/list", nil)
	if !errors.Is(err, transport.ErrUnauthorized) || !strings.Contains(err.Error(), "refused the token "+srv.Issuer2+" just issued") {
		t.Errorf("err = %v", err)
	}
	if len(br.opened()) != 2 {
		t.Error("authorized again")
	}
}
