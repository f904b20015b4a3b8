package oauthflow

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// decodedProof is a DPoP proof taken apart and its signature checked
// against the key in its own header (as a server does, RFC 9449 section
// 4.3), independently of the code that made it.
type decodedProof struct {
	header map[string]any
	jwk    map[string]string
	claims map[string]any
}

func decodeProof(t *testing.T, proof string) *decodedProof {
	t.Helper()
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		t.Fatalf("proof %q is not a compact JWS", proof)
	}
	dec := base64.RawURLEncoding
	var p decodedProof
	hb, _ := dec.DecodeString(parts[0])
	cb, _ := dec.DecodeString(parts[1])
	if err := json.Unmarshal(hb, &p.header); err != nil {
		t.Fatalf("header: %v", err)
	}
	if err := json.Unmarshal(cb, &p.claims); err != nil {
		t.Fatalf("claims: %v", err)
	}
	jb, _ := json.Marshal(p.header["jwk"])
	json.Unmarshal(jb, &p.jwk)
	x, _ := dec.DecodeString(p.jwk["x"])
	y, _ := dec.DecodeString(p.jwk["y"])
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatalf("jwk %v: %v", p.jwk, err)
	}
	sig, _ := dec.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatalf("the proof's signature does not verify with its jwk")
	}
	return &p
}

// rfc7638 is the JWK SHA-256 thumbprint of the P-256 public key with
// base64url coordinates x and y, computed by the letter of RFC 7638
// section 3 (the required members in lexicographic order, no whitespace),
// independently of the code under test.
func rfc7638(x, y string) string {
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A proof (RFC 9449 section 4.2): typ dpop+jwt, ES256, the public key
// alone as jwk; jti, htm, htu without query and fragment, iat; nonce and
// ath only when there is one; a new jti every time.
func TestDPoPProofFormat(t *testing.T) {
	k, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	proof, err := k.proof("POST", mustURL(t, "HTTPS://MCP.Example.com:8443/a/b?x=1#frag"), now, "n-1", "tok-1")
	if err != nil {
		t.Fatal(err)
	}
	p := decodeProof(t, proof)
	if p.header["typ"] != "dpop+jwt" || p.header["alg"] != "ES256" || len(p.header) != 3 {
		t.Errorf("header %v", p.header)
	}
	if len(p.jwk) != 4 || p.jwk["kty"] != "EC" || p.jwk["crv"] != "P-256" || p.jwk["d"] != "" {
		t.Errorf("jwk %v", p.jwk)
	}
	if got := rfc7638(p.jwk["x"], p.jwk["y"]); got != k.jkt {
		t.Errorf("thumbprint %s, key says %s", got, k.jkt)
	}
	c := p.claims
	if c["htm"] != "POST" || c["htu"] != "https://mcp.example.com:8443/a/b" || c["iat"] != float64(now.Unix()) ||
		c["nonce"] != "n-1" || c["ath"] != accessTokenHash("tok-1") || len(c) != 6 {
		t.Errorf("claims %v", c)
	}
	jti, _ := c["jti"].(string)
	if len(jti) < 16 {
		t.Errorf("jti %q", jti)
	}
	proof2, _ := k.proof("GET", mustURL(t, "http://127.0.0.1:9/mcp"), now, "", "")
	c2 := decodeProof(t, proof2).claims
	if c2["jti"] == jti || c2["htm"] != "GET" || c2["htu"] != "http://127.0.0.1:9/mcp" {
		t.Errorf("second proof %v", c2)
	}
	if _, ok := c2["nonce"]; ok {
		t.Error("a nonce without one supplied")
	}
	if _, ok := c2["ath"]; ok {
		t.Error("ath without an access token")
	}
}

// The examples of RFC 9449: the ath of its access token (section 7.1) and
// the thumbprint of its proof key (section 6.1).
func TestDPoPVectors(t *testing.T) {
	if got := accessTokenHash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"); got != "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo" {
		t.Errorf("ath %s", got)
	}
	const x, y, jkt = "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs", "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA", "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
	if got := rfc7638(x, y); got != jkt {
		t.Errorf("the test's own RFC 7638 thumbprint %s", got)
	}
	dec := base64.RawURLEncoding
	xb, _ := dec.DecodeString(x)
	yb, _ := dec.DecodeString(y)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, xb...), yb...))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := jwkThumbprint(pub); got != jkt || err != nil {
		t.Errorf("jkt %s, %v", got, err)
	}
}

// The key survives the token store; anything else is refused.
func TestDPoPKeyStorage(t *testing.T) {
	k, _ := newDPoPKey()
	enc, err := k.marshal()
	if err != nil {
		t.Fatal(err)
	}
	k2, err := parseDPoPKey(enc)
	if err != nil || k2.jkt != k.jkt {
		t.Fatalf("round trip: %v", err)
	}
	for _, bad := range []string{"", "!!", base64.StdEncoding.EncodeToString([]byte("not a key"))} {
		if _, err := parseDPoPKey(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

// Nonces are kept per server (origin); values that are not nonces are not.
func TestDPoPNonces(t *testing.T) {
	var n dpopNonces
	as, rs := mustURL(t, "https://as.example/token"), mustURL(t, "https://RS.example/mcp")
	if !n.set(as, "a-1") || n.set(rs, "") || n.set(rs, `bad"nonce`) || n.set(rs, "sp ace") || n.set(rs, strings.Repeat("n", 4097)) {
		t.Error("nonce validation")
	}
	n.set(mustURL(t, "https://rs.example/other"), "r-1")
	if n.get(as) != "a-1" || n.get(rs) != "r-1" || n.get(mustURL(t, "https://as.example:8443/token")) != "" {
		t.Errorf("nonces %v", n.m)
	}
}

// tokenEndpoint is a token endpoint that answers each request with the
// next of answers (status, DPoP-Nonce, body), recording proofs and forms.
type tokenEndpoint struct {
	*httptest.Server
	mu      sync.Mutex
	answers []tokenAnswer
	proofs  []string
	forms   []url.Values
	auths   []string
}

type tokenAnswer struct {
	status int
	nonce  string
	body   string
}

func newTokenEndpoint(t *testing.T, answers ...tokenAnswer) *tokenEndpoint {
	e := &tokenEndpoint{answers: answers}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		e.mu.Lock()
		defer e.mu.Unlock()
		e.proofs = append(e.proofs, r.Header.Get("DPoP"))
		e.forms = append(e.forms, r.PostForm)
		e.auths = append(e.auths, r.Header.Get("Authorization"))
		a := tokenAnswer{status: 500, body: `{"error":"server_error"}`}
		if len(e.answers) > 0 {
			a, e.answers = e.answers[0], e.answers[1:]
		}
		if a.nonce != "" {
			w.Header().Set("DPoP-Nonce", a.nonce)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(e.Close)
	return e
}

const dpopTokenBody = `{"access_token":"at-1","token_type":"DPoP","expires_in":60}`

// The token endpoint's use_dpop_nonce is answered once, with the same
// request and a new proof carrying the nonce (RFC 9449 section 8); other
// errors, and a second use_dpop_nonce, are not retried.
func TestDPoPTokenEndpointNonce(t *testing.T) {
	useNonce := func(n string) tokenAnswer {
		return tokenAnswer{400, n, `{"error":"use_dpop_nonce","error_description":"nonce please"}`}
	}
	e := newTokenEndpoint(t, useNonce("as-1"), tokenAnswer{200, "as-2", dpopTokenBody})
	a, notes := newTestAuthorizer(t, e.URL+"/mcp", nil)
	key, _ := newDPoPKey()
	c := &Client{ID: "c1", AuthMethod: "none"}
	tok, err := a.tokenRequest(ctxT(t), e.URL+"/token", e.URL, c, url.Values{"grant_type": {"authorization_code"}, "code": {"x"}}, nil, key)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "at-1" || checkTokenType(tok, key) != nil {
		t.Errorf("token %+v", tok)
	}
	if len(e.proofs) != 2 || e.forms[0].Encode() != e.forms[1].Encode() || e.forms[1].Get("code") != "x" {
		t.Fatalf("%d requests: %v", len(e.proofs), e.forms)
	}
	first, second := decodeProof(t, e.proofs[0]).claims, decodeProof(t, e.proofs[1]).claims
	if _, ok := first["nonce"]; ok || second["nonce"] != "as-1" || first["jti"] == second["jti"] {
		t.Errorf("proofs %v then %v", first, second)
	}
	for _, c := range []map[string]any{first, second} {
		if c["htm"] != "POST" || c["htu"] != e.URL+"/token" || c["ath"] != nil {
			t.Errorf("proof claims %v", c)
		}
	}
	if a.nonces.get(mustURL(t, e.URL)) != "as-2" {
		t.Error("the nonce of the successful answer was not kept")
	}
	if !strings.Contains(notes.String(), "answered use_dpop_nonce: sending the request again") {
		t.Errorf("notes:\n%s", notes)
	}

	// A server that keeps asking: one retry, then its error.
	e = newTokenEndpoint(t, useNonce("n-1"), useNonce("n-2"), tokenAnswer{200, "", dpopTokenBody})
	a, _ = newTestAuthorizer(t, e.URL+"/mcp", nil)
	_, err = a.tokenRequest(ctxT(t), e.URL+"/token", e.URL, c, url.Values{"grant_type": {"client_credentials"}}, nil, key)
	if err == nil || !strings.Contains(err.Error(), "use_dpop_nonce") || len(e.proofs) != 2 {
		t.Errorf("err %v after %d requests", err, len(e.proofs))
	}
	// Another error, even with a nonce: not retried.
	e = newTokenEndpoint(t, tokenAnswer{400, "n-1", `{"error":"invalid_grant"}`}, tokenAnswer{200, "", dpopTokenBody})
	a, _ = newTestAuthorizer(t, e.URL+"/mcp", nil)
	_, err = a.tokenRequest(ctxT(t), e.URL+"/token", e.URL, c, url.Values{"grant_type": {"client_credentials"}}, nil, key)
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") || len(e.proofs) != 1 {
		t.Errorf("err %v after %d requests", err, len(e.proofs))
	}
	// Without a key, no proof.
	e = newTokenEndpoint(t, tokenAnswer{200, "", `{"access_token":"b","token_type":"Bearer"}`})
	a, _ = newTestAuthorizer(t, e.URL+"/mcp", nil)
	if _, err := a.tokenRequest(ctxT(t), e.URL+"/token", e.URL, c, url.Values{"grant_type": {"client_credentials"}}, nil, nil); err != nil || e.proofs[0] != "" {
		t.Errorf("err %v, proof %q", err, e.proofs[0])
	}
}

// mcpx sends the tokens it can: bearer, and DPoP-bound ones it asked for.
func TestCheckTokenType(t *testing.T) {
	key, _ := newDPoPKey()
	for _, tt := range []struct {
		typ string
		key *dpopKey
		ok  bool
	}{{"", nil, true}, {"bearer", nil, true}, {"Bearer", key, true}, {"DPoP", key, true}, {"dpop", nil, false}, {"mac", key, false}} {
		if err := checkTokenType(&tokenResponse{TokenType: tt.typ}, tt.key); (err == nil) != tt.ok {
			t.Errorf("%q with key %v: %v", tt.typ, tt.key != nil, err)
		}
	}
}

// boundAuthorizer returns an Authorizer whose current token is DPoP-bound.
func boundAuthorizer(t *testing.T, serverURL string) (*Authorizer, *TokenRecord, *noteLog) {
	a, notes := newTestAuthorizer(t, serverURL, func(c *Config) { c.StoredOnly = true })
	key, _ := newDPoPKey()
	enc, _ := key.marshal()
	rec := &TokenRecord{Resource: serverURL, Issuer: "https://as.example", AccessToken: "at-bound", TokenType: "DPoP", DPoPKey: enc, dpop: key}
	a.rec, a.loaded = rec, true
	return a, rec, notes
}

// Requests carry the DPoP scheme and a proof for their method and URL
// with the token's hash; the resource server's use_dpop_nonce is answered
// by sending the request again with its nonce (RFC 9449 section 9),
// without authorizing anew.
func TestDPoPResourceRequests(t *testing.T) {
	const mcpURL = "https://mcp.example/mcp"
	a, rec, notes := boundAuthorizer(t, mcpURL)
	newReq := func(method string) *http.Request {
		r, _ := http.NewRequest(method, mcpURL+"?q=1", nil)
		r.Header.Set("Authorization", "Bearer stale")
		return r
	}
	r := newReq("POST")
	if err := a.AuthorizeRequest(ctxT(t), r); err != nil {
		t.Fatal(err)
	}
	if r.Header.Get("Authorization") != "DPoP at-bound" {
		t.Errorf("Authorization %q", r.Header.Get("Authorization"))
	}
	p := decodeProof(t, r.Header.Get("DPoP"))
	if p.claims["htm"] != "POST" || p.claims["htu"] != mcpURL || p.claims["ath"] != accessTokenHash("at-bound") || p.claims["nonce"] != nil ||
		rfc7638(p.jwk["x"], p.jwk["y"]) != rec.dpop.jkt {
		t.Errorf("proof %v", p.claims)
	}
	if h, _ := a.Authorization(ctxT(t)); h != "DPoP at-bound" {
		t.Errorf("Authorization() = %q", h)
	}

	refusal := &transport.UnauthorizedError{Method: "POST", URL: mcpURL, Status: 401,
		Challenge: `DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`,
		Header:    http.Header{"Dpop-Nonce": {"rs-1"}}, CredentialID: transport.CredentialID("DPoP at-bound")}
	retry, err := a.Unauthorized(ctxT(t), refusal)
	if !retry || err != nil || a.flows != 0 {
		t.Fatalf("retry %v, err %v, flows %d", retry, err, a.flows)
	}
	r = newReq("GET")
	a.AuthorizeRequest(ctxT(t), r)
	if c := decodeProof(t, r.Header.Get("DPoP")).claims; c["nonce"] != "rs-1" || c["htm"] != "GET" {
		t.Errorf("proof after the nonce %v", c)
	}
	if !strings.Contains(notes.String(), "HTTP 401 use_dpop_nonce; sending it again") {
		t.Errorf("notes:\n%s", notes)
	}

	// Without a nonce to use, it is an ordinary refusal (which here may not
	// start an authorization).
	refusal.Header = http.Header{}
	retry, err = a.Unauthorized(ctxT(t), refusal)
	if retry || !errors.Is(err, ErrInteraction) {
		t.Errorf("retry %v, err %v", retry, err)
	}

	// A token without its key sends no proof and no stale header.
	a2, _ := newTestAuthorizer(t, mcpURL, nil)
	r = newReq("POST")
	a2.AuthorizeRequest(ctxT(t), r)
	if r.Header.Get("Authorization") != "" || r.Header.Get("DPoP") != "" {
		t.Errorf("headers without a token: %v", r.Header)
	}
}

// A stored DPoP-bound token whose key is gone is useless: it is removed,
// and a new token is obtained when the server asks.
func TestDPoPStoredWithoutKey(t *testing.T) {
	store := NewStore(t.TempDir())
	rec := &TokenRecord{Resource: "https://mcp.example/mcp", Issuer: "https://as.example", AccessToken: "at", TokenType: "DPoP", Updated: time.Now()}
	if err := store.SaveToken(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	a, notes := newTestAuthorizer(t, "https://mcp.example/mcp", func(c *Config) { c.Store = store })
	if h, err := a.Authorization(ctxT(t)); h != "" || err != nil {
		t.Errorf("Authorization() = %q, %v", h, err)
	}
	if recs, _ := store.Tokens(); len(recs) != 0 {
		t.Errorf("the keyless token is still stored")
	}
	if !strings.Contains(notes.String(), "cannot be used (the DPoP key is missing)") {
		t.Errorf("notes:\n%s", notes)
	}

	// With its key, it is used, as a DPoP-bound token.
	key, _ := newDPoPKey()
	rec.DPoPKey, _ = key.marshal()
	store.SaveToken(t.Context(), rec)
	a, _ = newTestAuthorizer(t, "https://mcp.example/mcp", func(c *Config) { c.Store = store })
	if h, _ := a.Authorization(ctxT(t)); h != "DPoP at" || a.Current().dpop.jkt != key.jkt {
		t.Errorf("Authorization() = %q", h)
	}
}

// DPoP is asked for where the authorization server lists ES256 or the
// server takes DPoP-bound tokens only; not with NoDPoP, nor where the
// server signs with other algorithms only.
func TestDPoPChoice(t *testing.T) {
	for _, tt := range []struct {
		algs     []string
		dpopOnly bool
		noDPoP   bool
		want     bool
	}{
		{nil, false, false, false},
		{[]string{"RS256", "ES256"}, false, false, true},
		{[]string{"ES256"}, false, true, false},
		{[]string{"PS256"}, false, false, false},
		{nil, true, false, true},
		{[]string{"PS256"}, true, false, true},
	} {
		a, _ := newTestAuthorizer(t, "https://mcp.example/mcp", func(c *Config) { c.NoDPoP = tt.noDPoP })
		a.dpopOnly = tt.dpopOnly
		key, err := a.dpopFor(&Discovery{AS: ServerMetadata{DPoPSigningAlgValuesSupported: tt.algs}})
		if err != nil || (key != nil) != tt.want {
			t.Errorf("%+v: key %v, err %v", tt, key != nil, err)
		}
	}
}
