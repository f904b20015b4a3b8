package oauthflow

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpx-dev/mcpx/internal/listenguard"
	"github.com/mcpx-dev/mcpx/transport"
)

// Token types and grant identifiers of the extensions.
const (
	grantTokenExchange  = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer      = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenTypeIDJAG      = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken    = "urn:ietf:params:oauth:token-type:id_token"
	clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// grantResult is a token response and the client that obtained it.
type grantResult struct {
	tok    *tokenResponse
	client *Client
}

// apply copies the token into rec. The granted scopes are the response's
// scope, or the requested ones when it has none (RFC 6749 section 5.1).
// The expiry is the token's lifetime counted on the Authorizer's clock.
func (g *grantResult) apply(rec *TokenRecord, requested []string, now time.Time) {
	rec.AccessToken = g.tok.AccessToken
	rec.TokenType = g.tok.TokenType
	rec.RefreshToken = g.tok.RefreshToken
	rec.Expiry = time.Time{}
	if g.tok.HasExpiry {
		rec.Expiry = now.Add(time.Duration(g.tok.ExpiresIn) * time.Second).Round(time.Second)
	}
	rec.Scopes = requested
	if len(g.tok.Scope) > 0 {
		rec.Scopes = g.tok.Scope
	}
}

func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// authorizationCode runs the authorization code flow with PKCE S256
// (spec: basic/authorization, "Authorization Flow Steps" and
// "Authorization Code Protection"): choose the client, send the person's
// browser to the authorization endpoint with the resource indicator,
// receive the redirect on the loopback callback (state and iss checked),
// and exchange the code.
func (a *Authorizer) authorizationCode(ctx context.Context, d *Discovery, scopes []string, key *dpopKey) (*grantResult, error) {
	as := &d.AS
	if as.AuthorizationEndpoint == "" || as.TokenEndpoint == "" {
		return nil, fmt.Errorf("the authorization server metadata at %s lacks an authorization_endpoint or token_endpoint", transport.ShortURL(d.ASMetadataURL))
	}
	for _, e := range []struct{ name, u string }{{"authorization endpoint", as.AuthorizationEndpoint}, {"token endpoint", as.TokenEndpoint}} {
		if err := checkEndpoint(e.name, e.u, a.cfg.ServerURL); err != nil {
			return nil, err
		}
	}
	switch {
	case d.Defaults:
		a.note("PKCE: S256 (the default endpoints come with no metadata to check support against)")
	case slices.Contains(as.CodeChallengeMethodsSupported, "S256"):
		a.note("PKCE: S256 (code_challenge_methods_supported: %s)", strings.Join(as.CodeChallengeMethodsSupported, " "))
	case len(as.CodeChallengeMethodsSupported) == 0 && d.Legacy:
		a.note("PKCE: S256 (the 2025-03-26 metadata does not list code_challenge_methods_supported; PKCE is required anyway)")
	default:
		return nil, fmt.Errorf("the authorization server %s does not advertise PKCE with S256 (code_challenge_methods_supported: %s), so mcpx must refuse to proceed (spec: basic/authorization, \"Authorization Code Protection\")",
			d.Issuer, scopeString(as.CodeChallengeMethodsSupported))
	}
	if len(as.ResponseTypesSupported) > 0 && !slices.Contains(as.ResponseTypesSupported, "code") {
		a.note("warning: response_types_supported (%s) does not list code; trying anyway", strings.Join(as.ResponseTypesSupported, " "))
	}

	client := a.staticClient(d)
	var reg *Registration
	if client == nil && as.RegistrationEndpoint != "" && a.cfg.Store != nil {
		var err error
		if reg, err = a.cfg.Store.Registration(d.Issuer); err != nil {
			a.note("ignoring the stored registration: %v", err)
		}
	}
	prefer := 0
	if reg != nil && len(reg.Client.RedirectURIs) > 0 {
		if u, err := url.Parse(reg.Client.RedirectURIs[0]); err == nil && u.Hostname() == "127.0.0.1" {
			fmt.Sscan(u.Port(), &prefer)
		}
	}
	cb, err := listenCallback(a.cfg.CallbackURL, prefer)
	if err != nil {
		return nil, err
	}
	defer cb.close()
	if client == nil {
		if client, err = a.registeredClient(ctx, d, reg, cb.redirect); err != nil {
			return nil, err
		}
	}

	state, err := randomString(32)
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()
	conf := a.oauthConfig(d, client, cb.redirect, scopes)
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.Resource))
	check := &responseCheck{state: state, issuer: d.Issuer, issRequired: as.AuthorizationResponseIssParameterSupported}
	if d.Defaults {
		check.issuer = ""
	}
	cb.onRefuse = listenguard.Throttle(10, func(r listenguard.Refusal, _ bool) { a.note("callback listener: %s", r) })
	cb.start(check)
	a.note("authorization request to %s: client_id %s, redirect_uri %s, resource %s, scope %s, PKCE S256, state",
		transport.ShortURL(as.AuthorizationEndpoint), transport.Excerpt(client.ID), cb.redirect, d.Resource, scopeString(scopes))

	var exited <-chan error
	var pasted <-chan authResponse
	// Pasted lines are read only while the wait lasts.
	waitCtx, endWait := context.WithCancel(ctx)
	defer endWait()
	paste := func(msg string) {
		a.notify(msg)
		if pasted != nil {
			return
		}
		switch {
		case a.cfg.ReadLine != nil:
			pasted = readPasted(waitCtx, func(ctx context.Context) (string, error) { return a.cfg.ReadLine(ctx, "") }, check, a.notify)
		case a.cfg.Stdin != nil:
			pasted = readPasted(waitCtx, scanLines(a.cfg.Stdin), check, a.notify)
		}
	}
	if a.cfg.Browser == nil {
		paste(fmt.Sprintf("Open this URL in a browser to authorize mcpx with %s:\n\n  %s\n\nmcpx is waiting for the browser to be sent to %s. If the browser runs on another machine, paste here the address it ends up on.",
			d.Issuer, authURL, cb.redirect))
	} else {
		a.notify(fmt.Sprintf("Opening a browser to authorize mcpx with %s (for %s)…", d.Issuer, d.Resource))
		if exited, err = a.cfg.Browser(authURL); err != nil {
			paste(fmt.Sprintf("%v. Open this URL in a browser to authorize mcpx:\n\n  %s\n", err, authURL))
		}
	}
	var res authResponse
	select {
	case res = <-cb.results:
		a.note("authorization response received on %s (state matches%s)", cb.redirect, a.issNote(check))
	case res = <-pasted:
		a.note("authorization response pasted (state matches%s)", a.issNote(check))
	case err := <-exited:
		return nil, err
	case <-ctx.Done():
		return nil, &transport.WaitError{For: "the browser was not sent to " + cb.redirect,
			Err: fmt.Errorf("%w: %w", ErrNoResponse, ctx.Err())}
	}
	if res.err != nil {
		return nil, res.err
	}
	a.note("token request: POST %s (authorization_code, client auth %s, resource %s%s)", transport.ShortURL(as.TokenEndpoint), client.AuthMethod, d.Resource, dpopText(key))
	tok, err := a.tokenRequest(ctx, as.TokenEndpoint, d.Issuer, client, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {res.code},
		"redirect_uri":  {cb.redirect},
		"code_verifier": {verifier},
		"resource":      {d.Resource},
	}, nil, key)
	if err != nil {
		return nil, err
	}
	if err := checkToken(tok, key); err != nil {
		return nil, err
	}
	return &grantResult{tok: tok, client: client}, nil
}

func (a *Authorizer) issNote(c *responseCheck) string {
	switch {
	case c.issuer == "":
		return "; no validated issuer to check iss against"
	case c.issRequired:
		return "; iss matches the issuer, as the server advertises"
	}
	return "; iss, when present, matches the issuer"
}

// oauthConfig is the x/oauth2 configuration that builds the
// authorization URL for a client of d's server. (Token requests are
// mcpx's own: tokenRequest.)
func (a *Authorizer) oauthConfig(d *Discovery, c *Client, redirect string, scopes []string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:    c.ID,
		Endpoint:    oauth2.Endpoint{AuthURL: d.AS.AuthorizationEndpoint, TokenURL: d.AS.TokenEndpoint},
		RedirectURL: redirect,
		Scopes:      scopes,
	}
}

// clientAssertion returns the private_key_jwt parameters for a client
// that authenticates that way (RFC 7523 section 2.2), with the
// authorization server's issuer as the audience.
func (a *Authorizer) clientAssertion(ctx context.Context, c *Client, audience string) (url.Values, error) {
	if c.AuthMethod != "private_key_jwt" {
		return nil, nil
	}
	key := a.cfg.PrivateKey
	if key == nil || (c.PrivateKeyFile != "" && key.File != c.PrivateKeyFile) {
		var err error
		if key, err = LoadPrivateKey(ctx, c.PrivateKeyFile, a.pipeWait); err != nil {
			return nil, fmt.Errorf("loading the private key for private_key_jwt: %w", err)
		}
	}
	jwt, err := key.assertion(c.ID, audience, a.cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("signing the client assertion: %w", err)
	}
	return url.Values{"client_assertion_type": {clientAssertionType}, "client_assertion": {jwt}}, nil
}

// tokenClient is the HTTP client of token requests: with a DPoP key, each
// carries a proof of it (RFC 9449 section 5).
func (a *Authorizer) tokenClient(key *dpopKey) *http.Client {
	if key == nil {
		return a.http
	}
	c := *a.http
	c.Transport = &dpopTransport{base: a.http.Transport, key: key, nonces: &a.nonces, note: a.note}
	return &c
}

// dpopText narrates a token request's DPoP proof.
func dpopText(key *dpopKey) string {
	if key == nil {
		return ""
	}
	return ", DPoP proof"
}

// secretParams are the token request parameters that hold secrets.
var secretParams = []string{"code", "code_verifier", "refresh_token", "assertion", "client_assertion", "subject_token", "client_secret"}

// requestSecrets returns the secrets a token request carries: the
// client's secret (as sent with client_secret_basic, too) and the secret
// parameters of params.
func requestSecrets(c *Client, params ...url.Values) []string {
	var out []string
	if c.Secret != "" {
		// RFC 6749 section 2.3.1: form-encoded, then base64 in Basic.
		basic := url.QueryEscape(c.ID) + ":" + url.QueryEscape(c.Secret)
		out = append(out, c.Secret, base64.StdEncoding.EncodeToString([]byte(basic)))
	}
	for _, p := range params {
		for _, k := range secretParams {
			out = append(out, p[k]...)
		}
	}
	return out
}

// checkToken accepts a token response mcpx can use: its tokens are
// 1*VSCHAR (RFC 6749 Appendix A.12 and A.17: printable ASCII), so they fit
// in a header and print as they are (mcpx auth token); its lifetime, when
// given, has not already run out; and its type is one mcpx can send
// (checkTokenType). What is wrong is said without the token.
func checkToken(tok *tokenResponse, key *dpopKey) error {
	if i := badTokenChar(tok.AccessToken); i >= 0 {
		return fmt.Errorf("the authorization server issued an access token with a character no token may have (byte %d is %s; RFC 6749 Appendix A.12 allows printable ASCII only): mcpx refuses it", i, charName(tok.AccessToken[i]))
	}
	if tok.RefreshToken != "" {
		if i := badTokenChar(tok.RefreshToken); i >= 0 {
			return fmt.Errorf("the authorization server issued a refresh token with a character no token may have (byte %d is %s; RFC 6749 Appendix A.17 allows printable ASCII only): mcpx refuses it", i, charName(tok.RefreshToken[i]))
		}
	}
	if tok.HasExpiry && tok.ExpiresIn <= 0 {
		return fmt.Errorf("the authorization server issued a token that has expired already (expires_in %d): mcpx cannot use it", tok.ExpiresIn)
	}
	return checkTokenType(tok, key)
}

// badTokenChar returns the index of the first byte of token that is not a
// VSCHAR (%x20-7E, RFC 6749 Appendix A), 0 for an empty token, or -1.
func badTokenChar(token string) int {
	if token == "" {
		return 0
	}
	for i := 0; i < len(token); i++ {
		if token[i] < 0x20 || token[i] > 0x7e {
			return i
		}
	}
	return -1
}

// charName names the byte c of a token without showing the token.
func charName(c byte) string {
	if c < 0x20 || c == 0x7f {
		return fmt.Sprintf("the control character 0x%02x", c)
	}
	return fmt.Sprintf("the non-ASCII byte 0x%02x", c)
}

// checkTokenType accepts the tokens mcpx can send: bearer tokens, and
// DPoP-bound tokens when it asked for one with a proof of key.
func checkTokenType(tok *tokenResponse, key *dpopKey) error {
	switch {
	case tok.TokenType == "", strings.EqualFold(tok.TokenType, "bearer"):
		return nil
	case strings.EqualFold(tok.TokenType, tokenTypeDPoP):
		if key != nil {
			return nil
		}
		return errors.New("the authorization server issued a DPoP-bound token, but mcpx sent no DPoP proof to bind it to")
	}
	return fmt.Errorf("the authorization server issued a %s token; mcpx sends bearer and DPoP-bound tokens only", quoted(tok.TokenType))
}

// clientCredentials obtains a token for a pre-registered client on its own
// behalf (the MCP OAuth client credentials extension): client_secret_basic
// or client_secret_post with a secret, private_key_jwt with a key.
func (a *Authorizer) clientCredentials(ctx context.Context, d *Discovery, scopes []string, key *dpopKey) (*grantResult, error) {
	as := &d.AS
	if as.TokenEndpoint == "" {
		return nil, fmt.Errorf("the authorization server metadata at %s has no token_endpoint", transport.ShortURL(d.ASMetadataURL))
	}
	if err := checkEndpoint("token endpoint", as.TokenEndpoint, a.cfg.ServerURL); err != nil {
		return nil, err
	}
	if len(as.GrantTypesSupported) > 0 && !slices.Contains(as.GrantTypesSupported, "client_credentials") {
		a.note("warning: grant_types_supported (%s) does not list client_credentials; trying anyway", strings.Join(as.GrantTypesSupported, " "))
	}
	client := a.preRegistered(d)
	a.note("token request: POST %s (client_credentials, client auth %s, resource %s%s)", transport.ShortURL(as.TokenEndpoint), client.AuthMethod, d.Resource, dpopText(key))
	tok, err := a.tokenRequest(ctx, as.TokenEndpoint, d.Issuer, client, url.Values{"resource": {d.Resource}}, scopes, key)
	if err != nil {
		return nil, err
	}
	if err := checkToken(tok, key); err != nil {
		return nil, err
	}
	return &grantResult{tok: tok, client: client}, nil
}

// idJAG is Enterprise-Managed Authorization: the ID token is exchanged at
// the IdP for an ID-JAG naming the authorization server as audience and
// the MCP server as resource (RFC 8693), then presented to the
// authorization server as a JWT bearer grant (RFC 7523).
func (a *Authorizer) idJAG(ctx context.Context, d *Discovery, scopes []string, key *dpopKey) (*grantResult, error) {
	as := &d.AS
	if as.TokenEndpoint == "" {
		return nil, fmt.Errorf("the authorization server metadata at %s has no token_endpoint", transport.ShortURL(d.ASMetadataURL))
	}
	for _, e := range []struct{ name, u string }{{"IdP token endpoint", a.cfg.IDPTokenURL}, {"token endpoint", as.TokenEndpoint}} {
		if err := checkEndpoint(e.name, e.u, a.cfg.ServerURL); err != nil {
			return nil, err
		}
	}
	idp := &Client{ID: a.cfg.IDPClientID, Secret: a.cfg.IDPClientSecret, AuthMethod: "none"}
	if idp.Secret != "" {
		idp.AuthMethod = "client_secret_post"
	}
	a.note("token exchange at the IdP: POST %s (ID token for an ID-JAG; audience %s, resource %s)", a.cfg.IDPTokenURL, d.Issuer, d.Resource)
	jag, err := a.tokenRequest(ctx, a.cfg.IDPTokenURL, "", idp, url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {d.Issuer},
		"resource":             {d.Resource},
		"subject_token":        {a.cfg.IDToken},
		"subject_token_type":   {tokenTypeIDToken},
	}, scopes, nil)
	if err != nil {
		return nil, fmt.Errorf("exchanging the ID token at the IdP: %w", err)
	}
	if t := jag.IssuedTokenType; t != "" && t != tokenTypeIDJAG {
		return nil, fmt.Errorf("the IdP issued a %s, not an ID-JAG", quoted(t))
	}
	client := a.staticClient(d)
	if client == nil {
		return nil, &ClientError{Problem: NeedsStaticClient, Issuer: d.Issuer, Detail: "no client for " + d.Issuer,
			MetadataDocuments: d.AS.ClientIDMetadataDocumentSupported}
	}
	a.note("token request: POST %s (jwt-bearer with the ID-JAG, client auth %s, resource %s%s)", transport.ShortURL(as.TokenEndpoint), client.AuthMethod, d.Resource, dpopText(key))
	tok, err := a.tokenRequest(ctx, as.TokenEndpoint, d.Issuer, client, url.Values{
		"grant_type": {grantJWTBearer},
		"assertion":  {jag.AccessToken},
		"resource":   {d.Resource},
	}, scopes, key)
	if err != nil {
		return nil, err
	}
	if err := checkToken(tok, key); err != nil {
		return nil, err
	}
	return &grantResult{tok: tok, client: client}, nil
}

// refresh uses r's refresh token (RFC 6749 section 6) with the resource
// indicator, and returns the updated record (the old refresh token kept
// when the server issues no new one).
func (a *Authorizer) refresh(ctx context.Context, r *TokenRecord) (*TokenRecord, error) {
	if r.TokenEndpoint == "" {
		return nil, errors.New("the stored token has no token endpoint to refresh it at")
	}
	// A DPoP-bound token is refreshed with a proof of its key: a refresh
	// token issued to a public client is bound to it too (RFC 9449
	// section 5).
	key := r.dpop
	a.note("refreshing the token: POST %s (refresh_token, client auth %s, resource %s%s)", transport.ShortURL(r.TokenEndpoint), r.Client.AuthMethod, r.Resource, dpopText(key))
	tok, err := a.tokenRequest(ctx, r.TokenEndpoint, r.Issuer, &r.Client, url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {r.RefreshToken},
		"resource":      {r.Resource},
	}, nil, key)
	if err != nil {
		return nil, err
	}
	if err := checkToken(tok, key); err != nil {
		return nil, err
	}
	nr := *r
	(&grantResult{tok: tok}).apply(&nr, r.Scopes, a.cfg.Now())
	if err := a.bind(&nr, key); err != nil {
		return nil, err
	}
	if nr.RefreshToken == "" {
		nr.RefreshToken = r.RefreshToken
	}
	nr.Updated = a.cfg.Now()
	a.note("token refreshed: scopes %s; %s; refresh token rotated: %s", scopeString(nr.Scopes), a.expiryText(&nr), yesNo(nr.RefreshToken != r.RefreshToken))
	return &nr, nil
}
