package oauthflow

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpx-dev/mcpx/internal/userfile"
	"github.com/mcpx-dev/mcpx/transport"
)

// Workload identity federation (the MCP extension, SEP-1933): a workload
// (a CI job, a pod, a cloud function) holds a JWT its platform issued it,
// and presents it to the MCP server's authorization server as an RFC 7523
// authorization grant (section 2.1) instead of a person authorizing in a
// browser or a stored client secret.

// ReadAssertion reads the JWT in file (surrounding whitespace trimmed), and
// checks that it looks like a signed JWT: a compact JWS (RFC 7515 section
// 7.1) with a JOSE signature algorithm and a claims set of JWT claims
// (RFC 7519 section 4.1). It does not verify the signature: the
// authorization server does that. A named pipe's wait for its writer ends
// with ctx; onWait, when not nil, is told of it (see userfile.Read).
func ReadAssertion(ctx context.Context, file string, onWait func(path string)) (string, error) {
	b, err := userfile.Read(ctx, file, keyFileLimit, onWait)
	if err != nil {
		return "", err
	}
	assertion := strings.TrimSpace(string(b))
	if assertion == "" {
		return "", fmt.Errorf("%s is empty", file)
	}
	if _, err := unverifiedClaims(assertion); err != nil {
		return "", fmt.Errorf("%s does not hold a JWT: %w", file, err)
	}
	return assertion, nil
}

// assertionAlgorithms are the signature algorithms a workload JWT may be
// signed with: every JWS algorithm go-jose names (parsing only compares
// the alg header with this list). mcpx checks no signature, so it accepts
// any algorithm the authorization server might;
// an unsigned JWT ("alg": "none") is refused, as RFC 7523 section 3 says
// the authorization server must.
var assertionAlgorithms = []jose.SignatureAlgorithm{
	jose.EdDSA, jose.HS256, jose.HS384, jose.HS512, jose.RS256, jose.RS384, jose.RS512,
	jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.MLDSA44, jose.MLDSA65, jose.MLDSA87,
}

// unverifiedClaims decodes a JWT's registered claims WITHOUT verifying its
// signature. They describe the JWT to the person (and explain a refusal
// before it happens); nothing is trusted or decided on them.
func unverifiedClaims(s string) (*jwt.Claims, error) {
	tok, err := jwt.ParseSigned(s, assertionAlgorithms)
	if err != nil {
		return nil, fmt.Errorf("not a signed JWT in compact form (RFC 7515 section 7.1): %w", err)
	}
	var c jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil {
		return nil, fmt.Errorf("its claims are not a JSON object of JWT claims: %w", err)
	}
	return &c, nil
}

// describeAssertion narrates the workload JWT (never the JWT itself) and
// warns about what will make the authorization server refuse it: an
// expiry in the past, an audience that is not this authorization server.
func (a *Authorizer) describeAssertion(assertion string, d *Discovery) {
	c, err := unverifiedClaims(assertion)
	if err != nil {
		return
	}
	aud := c.Audience
	exp := "no expiry"
	expired := false
	if c.Expiry != nil {
		if left := c.Expiry.Time().Sub(a.cfg.Now()).Round(time.Second); left > 0 {
			exp = fmt.Sprintf("expires in %s", left)
		} else {
			exp, expired = fmt.Sprintf("expired %s ago", -left), true
		}
	}
	a.note("the workload's JWT from %s: issuer %s, subject %s, audience %s, %s", a.cfg.AssertionFile, orNone(c.Issuer), orNone(c.Subject), orNone(strings.Join(aud, " ")), exp)
	if expired {
		a.note("warning: the workload's JWT has expired; the authorization server will likely refuse it (get a fresh one from the workload's platform)")
	}
	ok := false
	for _, x := range aud {
		x = strings.TrimSuffix(x, "/")
		if x == strings.TrimSuffix(d.Issuer, "/") || x == d.AS.TokenEndpoint {
			ok = true
		}
	}
	if !ok {
		a.note("warning: the workload's JWT is not addressed to this authorization server (its issuer %s or token endpoint %s); it will likely be refused",
			d.Issuer, d.AS.TokenEndpoint)
	}
}

// jwtBearer obtains a token with the workload's JWT as the grant (RFC 7523
// section 2.1): grant_type jwt-bearer, the JWT as assertion, the resource
// indicator and scopes. The client is the one given with --client-id (the
// authorization server may want one), else none: the assertion identifies
// the workload. Errors (invalid_grant, invalid_scope, unauthorized_client)
// are reported as they are; mcpx neither retries nor falls back to
// another grant.
func (a *Authorizer) jwtBearer(ctx context.Context, d *Discovery, scopes []string, key *dpopKey) (*grantResult, error) {
	as := &d.AS
	if as.TokenEndpoint == "" {
		return nil, fmt.Errorf("the authorization server metadata at %s has no token_endpoint", transport.ShortURL(d.ASMetadataURL))
	}
	if err := checkEndpoint("token endpoint", as.TokenEndpoint, a.cfg.ServerURL); err != nil {
		return nil, err
	}
	if len(as.GrantTypesSupported) > 0 && !slices.Contains(as.GrantTypesSupported, grantJWTBearer) {
		a.note("warning: grant_types_supported (%s) does not list %s; trying anyway", strings.Join(as.GrantTypesSupported, " "), grantJWTBearer)
	}
	assertion, err := ReadAssertion(ctx, a.cfg.AssertionFile, a.pipeWait)
	if err != nil {
		return nil, fmt.Errorf("reading the workload's JWT: %w", err)
	}
	a.describeAssertion(assertion, d)
	client := a.staticClient(d)
	if client == nil {
		client = &Client{AuthMethod: "none", Source: "none"}
		a.note("client: none (the workload's JWT identifies it; an authorization server that wants a client needs a pre-registered one)")
	}
	a.note("token request: POST %s (jwt-bearer with the workload's JWT, client auth %s, resource %s%s)", transport.ShortURL(as.TokenEndpoint), client.AuthMethod, d.Resource, dpopText(key))
	tok, err := a.tokenRequest(ctx, as.TokenEndpoint, d.Issuer, client, url.Values{
		"grant_type": {grantJWTBearer},
		"assertion":  {assertion},
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
