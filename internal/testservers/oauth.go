package testservers

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuthOptions configure an OAuth-protected MCP server and the small
// authorization server in front of it (see StartOAuth).
type OAuthOptions struct {
	// TokenTTL is the access tokens' lifetime (default one hour).
	TokenTTL time.Duration
	// RefreshTokens makes the token endpoint issue refresh tokens, rotated
	// on every refresh.
	RefreshTokens bool
	// ScopesSupported is the protected resource metadata's
	// scopes_supported (and the authorization server's, plus
	// offline_access when RefreshTokens is set).
	ScopesSupported []string
	// ListScopes are the scopes every MCP request needs (the 401 challenge
	// names them); CallScopes are those tools/call needs on top, asked for
	// with 403 insufficient_scope.
	ListScopes, CallScopes []string
	// AlwaysInsufficient makes every authorized MCP request (but
	// initialize) fail with 403 insufficient_scope for ListScopes, however
	// many the token has: a server that cannot be satisfied.
	AlwaysInsufficient bool
	// DPoP makes the authorization server offer DPoP (RFC 9449): it lists
	// ES256 in dpop_signing_alg_values_supported, checks the proof of a
	// token request that has one and binds the token (and the refresh
	// token: its clients are public) to the proof's key (token_type DPoP).
	// The MCP server then checks bound tokens: the DPoP scheme, and a
	// proof for the request with the token's hash, the token's key and a
	// jti not seen before. Bearer tokens stay accepted. (DPoP replaces the
	// SDK's bearer middleware: step-up is not offered.)
	DPoP bool
	// DPoPNonce makes both servers ask for nonces of their own
	// (use_dpop_nonce, RFC 9449 sections 8 and 9); RotateNonces changes them.
	DPoPNonce bool
	// SecondIssuer starts a second authorization server (Issuer2), which
	// MoveAuthorizationServer makes the one the MCP server trusts.
	SecondIssuer bool
	// WrapMCP, when set, wraps the MCP endpoint's handler: something in
	// front of the server, such as a redirect.
	WrapMCP func(http.Handler) http.Handler
}

// OAuthServer is an MCP server (official Go SDK, behind the SDK's bearer
// token middleware) and an authorization server written for the tests: it
// registers clients dynamically, approves every authorization request at
// once (redirecting straight to the client's loopback callback, with iss),
// checks PKCE, redirect URI and resource indicator, and issues opaque
// tokens. It records what happened for the tests to check.
type OAuthServer struct {
	// MCPURL is the protected MCP endpoint; Issuer the authorization server;
	// Issuer2 the second one (SecondIssuer).
	MCPURL, Issuer, Issuer2 string

	opts OAuthOptions
	mu   sync.Mutex
	// events are the authorization server's and resource server's
	// decisions, one line each ("authorize scope=...", "token
	// grant=refresh_token", "mcp 401", ...).
	events  []string
	clients map[string]regClient // client_id → registration
	codes   map[string]*pendingCode
	tokens  map[string]*issuedToken
	refresh map[string]*issuedToken
	secrets []string // every token issued, to check none leaks
	// current is the authorization server the MCP server trusts.
	current string
	// jtis are the DPoP proof ids the MCP server has seen.
	jtis             map[string]bool
	asNonce, rsNonce string
}

type regClient struct {
	redirect, issuer string
}

type pendingCode struct {
	client, redirect, challenge, resource, issuer string
	scopes                                        []string
}

type issuedToken struct {
	scopes   []string
	expiry   time.Time
	resource string
	client   string
	issuer   string
	jkt      string // the DPoP key the token is bound to, "" for bearer
}

// StartOAuth serves an OAuth-protected MCP server (the tools of NewServer)
// and its authorization server on 127.0.0.1, until the test ends.
func StartOAuth(t testing.TB, opts OAuthOptions) *OAuthServer {
	t.Helper()
	s, stop, err := ServeOAuth(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s
}

// ServeOAuth is StartOAuth for programs: it returns a function that stops
// both servers.
func ServeOAuth(opts OAuthOptions) (*OAuthServer, func(), error) {
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Hour
	}
	s := &OAuthServer{opts: opts, clients: map[string]regClient{}, codes: map[string]*pendingCode{},
		tokens: map[string]*issuedToken{}, refresh: map[string]*issuedToken{}, jtis: map[string]bool{},
		asNonce: randomToken("as-nonce-"), rsNonce: randomToken("rs-nonce-")}
	n := 2
	if opts.SecondIssuer {
		n = 3
	}
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, nil, err
		}
		lns = append(lns, ln)
	}
	asLn, rsLn := lns[0], lns[1]
	s.Issuer = "http://" + asLn.Addr().String()
	s.current = s.Issuer
	rsBase := "http://" + rsLn.Addr().String()
	s.MCPURL = rsBase + "/mcp"

	as := http.NewServeMux()
	as.HandleFunc("GET /.well-known/oauth-authorization-server", s.serveMetadata)
	as.HandleFunc("POST /register", s.serveRegister)
	as.HandleFunc("GET /authorize", s.serveAuthorize)
	as.HandleFunc("POST /token", s.serveToken)

	prmURL := rsBase + "/.well-known/oauth-protected-resource/mcp"
	rs := http.NewServeMux()
	rs.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		current := s.current
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{
			"resource": s.MCPURL, "authorization_servers": []string{current}, "scopes_supported": opts.ScopesSupported,
		})
	})
	srv := NewServer()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var protected http.Handler
	if opts.DPoP {
		protected = s.logMCP(s.requireToken(prmURL, mcpHandler))
	} else {
		bearer := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL, Scopes: opts.ListScopes})
		protected = s.logMCP(bearer(s.stepUp(prmURL, mcpHandler)))
	}
	if opts.WrapMCP != nil {
		protected = opts.WrapMCP(protected)
	}
	rs.Handle("/mcp", protected)

	servers := []*http.Server{{Handler: rs, ReadHeaderTimeout: 10 * time.Second}, {Handler: as, ReadHeaderTimeout: 10 * time.Second}}
	go servers[0].Serve(rsLn)
	go servers[1].Serve(asLn)
	if opts.SecondIssuer {
		s.Issuer2 = "http://" + lns[2].Addr().String()
		servers = append(servers, &http.Server{Handler: as, ReadHeaderTimeout: 10 * time.Second})
		go servers[2].Serve(lns[2])
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, srv := range servers {
			srv.Shutdown(ctx)
			srv.Close()
		}
	}
	return s, stop, nil
}

func (s *OAuthServer) event(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, fmt.Sprintf(format, args...))
}

// Events returns what happened so far, one line per decision.
func (s *OAuthServer) Events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// Count returns how many events start with prefix.
func (s *OAuthServer) Count(prefix string) int {
	n := 0
	for _, e := range s.Events() {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

// Secrets returns every access and refresh token issued so far.
func (s *OAuthServer) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.secrets)
}

// MoveAuthorizationServer makes the MCP server trust the second
// authorization server (SecondIssuer) instead of the first: its protected
// resource metadata names Issuer2, and it refuses the first one's tokens.
func (s *OAuthServer) MoveAuthorizationServer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = s.Issuer2
	s.events = append(s.events, "moved to the second authorization server")
}

// RotateNonces gives both servers new DPoP nonces (DPoPNonce).
func (s *OAuthServer) RotateNonces() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asNonce, s.rsNonce = randomToken("as-nonce-"), randomToken("rs-nonce-")
}

// issuerOf returns the issuer of the authorization server r reached.
func (s *OAuthServer) issuerOf(r *http.Request) string {
	if iss := "http://" + r.Host; iss == s.Issuer2 {
		return iss
	}
	return s.Issuer
}

// asNumber names an authorization server in events: 1 or 2.
func (s *OAuthServer) asNumber(issuer string) int {
	if issuer == s.Issuer2 {
		return 2
	}
	return 1
}

// ExpireAll makes every access token issued so far expired, as if time
// had passed (refresh tokens stay valid).
func (s *OAuthServer) ExpireAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		t.expiry = time.Now().Add(-time.Minute)
	}
}

// RevokeAll revokes every token issued so far, access and refresh tokens
// alike, as an authorization server does when a person revokes the grant:
// a refresh is then refused with invalid_grant.
func (s *OAuthServer) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
	clear(s.refresh)
	s.events = append(s.events, "revoked every token")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func randomToken(prefix string) string {
	b := make([]byte, 18)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

func (s *OAuthServer) serveMetadata(w http.ResponseWriter, r *http.Request) {
	scopes := slices.Clone(s.opts.ScopesSupported)
	grants := []string{"authorization_code"}
	if s.opts.RefreshTokens {
		scopes = append(scopes, "offline_access")
		grants = append(grants, "refresh_token")
	}
	iss := s.issuerOf(r)
	m := map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/authorize",
		"token_endpoint":                                 iss + "/token",
		"registration_endpoint":                          iss + "/register",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          grants,
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"code_challenge_methods_supported":               []string{"S256"},
		"scopes_supported":                               scopes,
		"authorization_response_iss_parameter_supported": true,
	}
	if s.opts.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *OAuthServer) serveRegister(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs            []string `json:"redirect_uris"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
		GrantTypes              []string `json:"grant_types"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) != 1 {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "want one redirect URI")
		return
	}
	id := randomToken("client-")
	iss := s.issuerOf(r)
	s.mu.Lock()
	s.clients[id] = regClient{redirect: req.RedirectURIs[0], issuer: iss}
	s.mu.Unlock()
	s.event("register auth=%s grants=%s as=%d", req.TokenEndpointAuthMethod, strings.Join(req.GrantTypes, ","), s.asNumber(iss))
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none",
	})
}

func (s *OAuthServer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	iss := s.issuerOf(r)
	s.mu.Lock()
	c, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := c.redirect
	switch {
	case known && c.issuer != iss:
		s.event("authorize refused: a client of another authorization server")
		http.Error(w, "that client is registered with another authorization server", http.StatusBadRequest)
		return
	case !known || redirect != q.Get("redirect_uri"):
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "want response_type=code with a PKCE S256 challenge", http.StatusBadRequest)
		return
	}
	code := randomToken("code-")
	scopes := strings.Fields(q.Get("scope"))
	s.mu.Lock()
	s.codes[code] = &pendingCode{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scopes: scopes, issuer: iss}
	s.mu.Unlock()
	s.event("authorize scope=%s resource=%s", strings.Join(scopes, " "), q.Get("resource"))
	u, _ := url.Parse(redirect)
	v := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {iss}}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *OAuthServer) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	f := r.PostForm
	iss := s.issuerOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	// DPoP (RFC 9449 section 5): a token request with a proof gets a
	// token bound to the proof's key, once the proof carries the nonce.
	jkt := ""
	if proof := r.Header.Values("DPoP"); s.opts.DPoP && len(proof) > 0 {
		p, err := checkDPoPProof(proof[0], http.MethodPost, iss+"/token", time.Now())
		if err == nil && len(proof) > 1 {
			err = fmt.Errorf("%d DPoP headers", len(proof))
		}
		if err == nil && s.jtis[p.jti] {
			err = fmt.Errorf("jti replayed")
		}
		if err != nil {
			s.events = append(s.events, "token invalid_dpop_proof: "+err.Error())
			oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", err.Error())
			return
		}
		s.jtis[p.jti] = true
		if s.opts.DPoPNonce && p.nonce != s.asNonce {
			s.events = append(s.events, "token use_dpop_nonce")
			w.Header().Set("DPoP-Nonce", s.asNonce)
			oauthError(w, http.StatusBadRequest, "use_dpop_nonce", "the authorization server wants a nonce in the proof")
			return
		}
		jkt = p.jkt
	}
	var tok *issuedToken
	switch f.Get("grant_type") {
	case "authorization_code":
		pc := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case pc == nil:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown code")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != pc.challenge:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verifier does not match")
			return
		case f.Get("redirect_uri") != pc.redirect || f.Get("client_id") != pc.client:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri or client_id differs")
			return
		case f.Get("resource") != pc.resource || pc.resource != s.MCPURL:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs")
			return
		case pc.issuer != iss:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "a code of another authorization server")
			return
		}
		tok = &issuedToken{scopes: pc.scopes, resource: pc.resource, client: pc.client}
	case "refresh_token":
		old := s.refresh[f.Get("refresh_token")]
		if old == nil || f.Get("client_id") != old.client || old.issuer != iss {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		if old.jkt != "" && jkt != old.jkt {
			// RFC 9449 section 5: a public client's refresh token is bound
			// to its DPoP key.
			s.events = append(s.events, "token refresh refused: not a proof of the bound key")
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is bound to another DPoP key")
			return
		}
		delete(s.refresh, f.Get("refresh_token"))
		if f.Get("resource") != old.resource {
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs")
			return
		}
		tok = &issuedToken{scopes: old.scopes, resource: old.resource, client: old.client}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	tok.expiry = time.Now().Add(s.opts.TokenTTL)
	tok.issuer, tok.jkt = iss, jkt
	access := randomToken("at-")
	s.tokens[access] = tok
	s.secrets = append(s.secrets, access)
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
	}
	resp := map[string]any{"access_token": access, "token_type": typ, "expires_in": int(s.opts.TokenTTL.Seconds()),
		"scope": strings.Join(tok.scopes, " ")}
	if s.opts.RefreshTokens {
		rt := randomToken("rt-")
		s.refresh[rt] = tok
		s.secrets = append(s.secrets, rt)
		resp["refresh_token"] = rt
	}
	ev := fmt.Sprintf("token grant=%s resource=%s scope=%s", f.Get("grant_type"), f.Get("resource"), strings.Join(tok.scopes, " "))
	if jkt != "" {
		ev += " dpop"
	}
	s.events = append(s.events, ev)
	writeJSON(w, http.StatusOK, resp)
}

// verify is the resource server's token check (for the SDK middleware).
func (s *OAuthServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tokens[token]
	if t == nil || t.resource != s.MCPURL || t.issuer != s.current {
		return nil, fmt.Errorf("%w: unknown token", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: t.scopes, Expiration: t.expiry}, nil
}

// requireToken is the MCP server's token check with DPoP (RFC 9449
// section 7): a bearer token as RFC 6750 says; a DPoP-bound token only with
// the DPoP scheme and a proof for this request, made with the token's key,
// carrying its hash, never seen before, and with the server's nonce
// (DPoPNonce).
func (s *OAuthServer) requireToken(prmURL string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		challenge, nonce := s.checkToken(r, prmURL)
		if challenge != "" {
			if nonce != "" {
				w.Header().Set("DPoP-Nonce", nonce)
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkToken returns the challenge refusing r ("" to accept it), with the
// nonce to send along; it records what it decided.
func (s *OAuthServer) checkToken(r *http.Request, prmURL string) (challenge, nonce string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope := ""
	if len(s.opts.ListScopes) > 0 {
		scope = fmt.Sprintf(", scope=%q", strings.Join(s.opts.ListScopes, " "))
	}
	plain := fmt.Sprintf(`Bearer resource_metadata=%q%s, DPoP algs="ES256"`, prmURL, scope)
	invalid := fmt.Sprintf(`Bearer error="invalid_token", resource_metadata=%q%s, DPoP algs="ES256", error="invalid_token"`, prmURL, scope)
	badProof := `DPoP error="invalid_dpop_proof", algs="ES256"`
	refuse := func(event, challenge string) (string, string) {
		s.events = append(s.events, event)
		return challenge, ""
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	t := s.tokens[token]
	switch {
	case token == "":
		return refuse("mcp no token", plain)
	case t == nil || t.resource != s.MCPURL || t.issuer != s.current || time.Now().After(t.expiry) || !subset(s.opts.ListScopes, t.scopes):
		return refuse("mcp invalid token", invalid)
	case t.jkt == "" && strings.EqualFold(scheme, "Bearer"):
		return "", ""
	case t.jkt == "":
		return refuse("mcp bearer token with the "+scheme+" scheme", invalid)
	case !strings.EqualFold(scheme, "DPoP"):
		return refuse("mcp DPoP-bound token with the "+scheme+" scheme", invalid)
	}
	proofs := r.Header.Values("DPoP")
	if len(proofs) != 1 {
		return refuse(fmt.Sprintf("mcp %d DPoP proofs", len(proofs)), badProof)
	}
	p, err := checkDPoPProof(proofs[0], r.Method, s.MCPURL, time.Now())
	switch {
	case err != nil:
	case p.jkt != t.jkt:
		err = errors.New("the proof's key is not the token's")
	case p.ath != tokenHash(token):
		err = errors.New("ath is not the token's hash")
	case s.jtis[p.jti]:
		err = errors.New("jti replayed")
	}
	if err != nil {
		return refuse("mcp invalid_dpop_proof: "+err.Error(), badProof)
	}
	s.jtis[p.jti] = true
	if s.opts.DPoPNonce && p.nonce != s.rsNonce {
		s.events = append(s.events, "mcp use_dpop_nonce")
		return fmt.Sprintf(`DPoP error="use_dpop_nonce", algs="ES256", resource_metadata=%q`, prmURL), s.rsNonce
	}
	s.events = append(s.events, "mcp dpop "+r.Method)
	return "", ""
}

// logMCP records the resource server's refusals.
func (s *OAuthServer) logMCP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusUnauthorized || rec.status == http.StatusForbidden {
			s.event("mcp %d %s", rec.status, r.Method)
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// stepUp asks for CallScopes on tools/call with 403 insufficient_scope
// (spec 2025-11-25: basic/authorization, "Runtime Insufficient Scope
// Errors"), or refuses everything with AlwaysInsufficient.
func (s *OAuthServer) stepUp(prmURL string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti := auth.TokenInfoFromContext(r.Context())
		if r.Method != http.MethodPost || ti == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &msg)
		var need []string
		switch {
		case s.opts.AlwaysInsufficient && msg.Method != "initialize" && !strings.HasPrefix(msg.Method, "notifications/"):
			need = s.opts.ListScopes
		case msg.Method == "tools/call" && len(s.opts.CallScopes) > 0 && !subset(s.opts.CallScopes, ti.Scopes):
			need = append(slices.Clone(s.opts.ListScopes), s.opts.CallScopes...)
		}
		if need != nil {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, strings.Join(need, " "), prmURL))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// readBody reads a request body and puts it back for the next handler.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

// FakeBrowser does what a person's browser does with an authorization
// server that approves at once: it GETs the authorization URL and follows
// the redirects to the client's loopback callback. It fails unless the
// last page answers 200.
func FakeBrowser(u string) error {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fake browser: %s answered %s: %s", resp.Request.URL.Redacted(), resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
