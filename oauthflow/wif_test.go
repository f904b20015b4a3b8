package oauthflow

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workloadJWT returns an (unsigned-looking) JWT with claims, as a
// workload's platform would issue it; mcpx never verifies it, the
// authorization server does.
func workloadJWT(claims map[string]any) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + "." + enc.EncodeToString([]byte("signature"))
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "jwt")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// The JWT bearer grant (RFC 7523 section 2.1, for workload identity
// federation): grant_type, the workload's JWT as assertion, resource and
// scope, the client id when one is given and no client secret; the JWT is
// read from its file on each use and never narrated; a refusal is
// reported once, not retried.
func TestJWTBearerRequest(t *testing.T) {
	e := newTokenEndpoint(t, tokenAnswer{200, "", `{"access_token":"at-w","token_type":"Bearer","expires_in":60}`},
		tokenAnswer{400, "", `{"error":"invalid_grant","error_description":"JWT assertion is expired"}`})
	jwt := workloadJWT(map[string]any{"iss": "https://idp.example", "sub": "workload-7", "aud": e.URL, "exp": time.Now().Add(time.Hour).Unix()})
	file := writeFile(t, jwt+"\n")
	a, notes := newTestAuthorizer(t, e.URL+"/mcp", func(c *Config) {
		c.Grant, c.AssertionFile, c.ClientID = GrantJWTBearer, file, "wl-client"
	})
	d := &Discovery{Issuer: e.URL, Resource: e.URL + "/mcp", AS: ServerMetadata{Issuer: e.URL, TokenEndpoint: e.URL + "/token",
		GrantTypesSupported: []string{grantJWTBearer}, TokenEndpointAuthMethodsSupported: []string{"none"}}}
	res, err := a.jwtBearer(ctxT(t), d, []string{"mcp:read", "mcp:write"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := e.forms[0]
	want := map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": jwt, "resource": e.URL + "/mcp",
		"scope": "mcp:read mcp:write", "client_id": "wl-client"}
	if len(f) != len(want) {
		t.Errorf("form %v", f)
	}
	for k, v := range want {
		if f.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, f.Get(k), v)
		}
	}
	if e.auths[0] != "" || e.proofs[0] != "" || res.tok.AccessToken != "at-w" || res.client.ID != "wl-client" {
		t.Errorf("auth %q, proof %q, result %+v", e.auths[0], e.proofs[0], res)
	}
	n := notes.String()
	if strings.Contains(n, jwt) || strings.Contains(n, strings.Split(jwt, ".")[1]) {
		t.Error("the JWT appeared in the narration")
	}
	if !strings.Contains(n, "issuer https://idp.example, subject workload-7, audience "+e.URL+", expires in") || strings.Contains(n, "warning") {
		t.Errorf("notes:\n%s", n)
	}

	// The platform rotated the JWT (now expired, for another audience):
	// the new one is sent, with warnings, and the refusal reported as is.
	jwt2 := workloadJWT(map[string]any{"sub": "workload-7", "aud": []string{"https://other.example"}, "exp": time.Now().Add(-time.Minute).Unix()})
	os.WriteFile(file, []byte(jwt2), 0o600)
	a.cfg.ClientID = ""
	_, err = a.jwtBearer(ctxT(t), d, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid_grant: JWT assertion is expired") {
		t.Errorf("err = %v", err)
	}
	if len(e.forms) != 2 || e.forms[1].Get("assertion") != jwt2 || e.forms[1].Has("client_id") || e.forms[1].Has("scope") {
		t.Errorf("%d requests; second form %v", len(e.forms), e.forms[len(e.forms)-1])
	}
	n = notes.String()
	for _, w := range []string{"warning: the workload's JWT has expired", "warning: the workload's JWT is not addressed to this authorization server", "client: none"} {
		if !strings.Contains(n, w) {
			t.Errorf("notes lack %q:\n%s", w, n)
		}
	}
}

func TestReadAssertion(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"alg":"RS256","typ":"JWT"}`))
	for _, tt := range []struct{ content, want string }{
		{"", "is empty"},
		{"  \n", "is empty"},
		{"not-a-jwt", "does not hold a JWT: not a signed JWT in compact form"},
		{"a.b.c.d.e", "does not hold a JWT: not a signed JWT in compact form"},
		{header + ".!!.c", "does not hold a JWT: not a signed JWT in compact form"},
		{header + "." + enc([]byte("[1]")) + ".c2ln", "not a JSON object of JWT claims"},
		{header + "." + enc([]byte(`{"exp":"tomorrow"}`)) + ".c2ln", "not a JSON object of JWT claims"},
		// RFC 7523 section 3: the JWT must be signed.
		{enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`{"sub":"x"}`)) + ".", "does not hold a JWT: not a signed JWT in compact form"},
	} {
		_, err := ReadAssertion(context.Background(), writeFile(t, tt.content), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v", tt.content, err)
		}
	}
	for _, alg := range []string{"RS256", "ES384", "PS512", "EdDSA", "HS256"} {
		jwt := enc([]byte(`{"alg":"`+alg+`","kid":"k1"}`)) + "." + enc([]byte(`{"iss":"i","aud":["a","b"],"exp":1.8e9,"custom":{"x":1}}`)) + "." + enc([]byte("sig"))
		if got, err := ReadAssertion(context.Background(), writeFile(t, " "+jwt+"\n"), nil); got != jwt || err != nil {
			t.Errorf("%s: %q, %v", alg, got, err)
		}
	}
	if _, err := ReadAssertion(context.Background(), filepath.Join(t.TempDir(), "none"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// A server that moved to another authorization server: the refused token
// is removed; a dynamically registered client is simply not reused (the
// new server gets its own registration), a pre-registered one stops mcpx
// with an error that says what to do (spec 2026-07-28:
// basic/authorization/client-registration, "Authorization Server
// Binding").
func TestMigrated(t *testing.T) {
	store := NewStore(t.TempDir())
	old := &TokenRecord{Resource: "https://mcp.example/mcp", Issuer: "https://as1.example", AccessToken: "at",
		Client: Client{ID: "dyn-1", Source: "dynamic registration"}, Updated: time.Now()}
	store.SaveToken(t.Context(), old)
	d := &Discovery{Issuer: "https://as2.example"}
	a, notes := newTestAuthorizer(t, "https://mcp.example/mcp", func(c *Config) { c.Store = store })
	if err := a.migrated(t.Context(), d, old); err != nil {
		t.Fatal(err)
	}
	if recs, _ := store.Tokens(); len(recs) != 0 {
		t.Error("the refused token is still stored")
	}
	if !strings.Contains(notes.String(), "now names https://as2.example, and it refused the token from https://as1.example") {
		t.Errorf("notes:\n%s", notes)
	}

	pre := &TokenRecord{Resource: "https://mcp.example/mcp", Issuer: "https://as1.example", AccessToken: "at",
		Client: Client{ID: "pre-1", Source: "pre-registered"}}
	a, _ = newTestAuthorizer(t, "https://mcp.example/mcp", func(c *Config) { c.ClientID = "pre-1" })
	err := a.migrated(t.Context(), d, pre)
	if !errors.Is(err, ErrAuthorization) || !strings.Contains(err.Error(), "the pre-registered client pre-1 was registered with https://as1.example: register mcpx with https://as2.example") {
		t.Errorf("err = %v", err)
	}
}
