package testservers

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
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
}

// OAuthServer is an MCP server (official Go SDK, behind the SDK's bearer
// token middleware) and an authorization server written for the tests: it
// registers clients dynamically, approves every authorization request at
// once (redirecting straight to the client's loopback callback, with iss),
// checks PKCE, redirect URI and resource indicator, and issues opaque
// tokens. It records what happened for the tests to check.
type OAuthServer struct {
	// MCPURL is the protected MCP endpoint; Issuer the authorization server.
	MCPURL, Issuer string

	opts OAuthOptions
	mu   sync.Mutex
	// events are the authorization server's and resource server's
	// decisions, one line each ("authorize scope=...", "token
	// grant=refresh_token", "mcp 401", ...).
	events  []string
	clients map[string]string // client_id → redirect URI
	codes   map[string]*pendingCode
	tokens  map[string]*issuedToken
	refresh map[string]*issuedToken
	secrets []string // every token issued, to check none leaks
}

type pendingCode struct {
	client, redirect, challenge, resource string
	scopes                                []string
}

type issuedToken struct {
	scopes   []string
	expiry   time.Time
	resource string
	client   string
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
	s := &OAuthServer{opts: opts, clients: map[string]string{}, codes: map[string]*pendingCode{},
		tokens: map[string]*issuedToken{}, refresh: map[string]*issuedToken{}}
	asLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	rsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		asLn.Close()
		return nil, nil, err
	}
	s.Issuer = "http://" + asLn.Addr().String()
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
		writeJSON(w, http.StatusOK, map[string]any{
			"resource": s.MCPURL, "authorization_servers": []string{s.Issuer}, "scopes_supported": opts.ScopesSupported,
		})
	})
	srv := NewServer()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	bearer := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL, Scopes: opts.ListScopes})
	rs.Handle("/mcp", s.logMCP(bearer(s.stepUp(prmURL, mcpHandler))))

	asSrv := &http.Server{Handler: as, ReadHeaderTimeout: 10 * time.Second}
	rsSrv := &http.Server{Handler: rs, ReadHeaderTimeout: 10 * time.Second}
	go asSrv.Serve(asLn)
	go rsSrv.Serve(rsLn)
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rsSrv.Shutdown(ctx)
		asSrv.Shutdown(ctx)
		rsSrv.Close()
		asSrv.Close()
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

// ExpireAll makes every access token issued so far expired, as if time
// had passed (refresh tokens stay valid).
func (s *OAuthServer) ExpireAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		t.expiry = time.Now().Add(-time.Minute)
	}
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
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         s.Issuer,
		"authorization_endpoint":                         s.Issuer + "/authorize",
		"token_endpoint":                                 s.Issuer + "/token",
		"registration_endpoint":                          s.Issuer + "/register",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          grants,
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"code_challenge_methods_supported":               []string{"S256"},
		"scopes_supported":                               scopes,
		"authorization_response_iss_parameter_supported": true,
	})
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
	s.mu.Lock()
	s.clients[id] = req.RedirectURIs[0]
	s.mu.Unlock()
	s.event("register auth=%s grants=%s", req.TokenEndpointAuthMethod, strings.Join(req.GrantTypes, ","))
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none",
	})
}

func (s *OAuthServer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	redirect, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	switch {
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
		resource: q.Get("resource"), scopes: scopes}
	s.mu.Unlock()
	s.event("authorize scope=%s resource=%s", strings.Join(scopes, " "), q.Get("resource"))
	u, _ := url.Parse(redirect)
	v := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {s.Issuer}}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *OAuthServer) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
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
		}
		tok = &issuedToken{scopes: pc.scopes, resource: pc.resource, client: pc.client}
	case "refresh_token":
		old := s.refresh[f.Get("refresh_token")]
		delete(s.refresh, f.Get("refresh_token"))
		if old == nil || f.Get("client_id") != old.client {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
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
	access := randomToken("at-")
	s.tokens[access] = tok
	s.secrets = append(s.secrets, access)
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.opts.TokenTTL.Seconds()),
		"scope": strings.Join(tok.scopes, " ")}
	if s.opts.RefreshTokens {
		rt := randomToken("rt-")
		s.refresh[rt] = tok
		s.secrets = append(s.secrets, rt)
		resp["refresh_token"] = rt
	}
	s.events = append(s.events, fmt.Sprintf("token grant=%s resource=%s scope=%s", f.Get("grant_type"), f.Get("resource"), strings.Join(tok.scopes, " ")))
	writeJSON(w, http.StatusOK, resp)
}

// verify is the resource server's token check (for the SDK middleware).
func (s *OAuthServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tokens[token]
	if t == nil || t.resource != s.MCPURL {
		return nil, fmt.Errorf("%w: unknown token", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: t.scopes, Expiration: t.expiry}, nil
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
