package oauthflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/transport"
)

// Discovery is what mcpx learned about how to authorize for one MCP server.
type Discovery struct {
	// ServerURL is the MCP endpoint.
	ServerURL string
	// Resource is the RFC 8707 resource indicator sent on authorization
	// and token requests: the protected resource metadata's resource, or
	// the server's canonical URI when there is none (2025-03-26).
	Resource string
	// ResourceMetadataURL is where the protected resource metadata came
	// from, "" when there is none.
	ResourceMetadataURL string
	// PRM is the protected resource metadata, nil for a 2025-03-26 server.
	PRM *ResourceMetadata
	// AS is the authorization server's metadata; for default endpoints
	// (2025-03-26 fallback) only the endpoints are set.
	AS ServerMetadata
	// ASMetadataURL is where AS came from, "" for default endpoints.
	ASMetadataURL string
	// Issuer is the validated issuer recorded for RFC 9207 checks and as
	// the key of client registrations and tokens. For a 2025-03-26 server
	// it is the metadata's issuer (not checked), or the authorization base
	// URL when the default endpoints are used.
	Issuer string
	// Legacy is set when the server has no protected resource metadata and
	// mcpx followed the 2025-03-26 discovery (authorization base URL =
	// the server's origin).
	Legacy bool
	// Defaults is set when even that found no metadata, and the default
	// /authorize, /token and /register endpoints are used.
	Defaults bool
}

// httpDoer performs the OAuth side requests: discovery, registration,
// token requests. It shows each exchange as a transport.EventHTTP (method,
// URL, status, content type; never headers or bodies, which carry secrets).
type loggingTransport struct {
	base http.RoundTripper
	obs  transport.Observer
}

func (t *loggingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The line names the URL cut short (a server chose it: see
	// transport.ShortURL); Meta keeps it whole.
	u, shown := redactURL(r.URL), transport.ShortURL(r.URL.String())
	t.event(r.Method+" "+shown, &transport.Meta{HTTPMethod: r.Method, URL: u})
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		t.event(fmt.Sprintf("%s %s failed: %v", r.Method, shown, errors.Unwrap(err)), &transport.Meta{HTTPMethod: r.Method, URL: u})
		return nil, err
	}
	text := transport.Excerpt(resp.Status)
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		text += " " + transport.Excerpt(ct)
	}
	t.event(text+" ← "+r.Method+" "+shown, &transport.Meta{HTTPMethod: r.Method, URL: u, HTTPStatus: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type")})
	return resp, nil
}

func (t *loggingTransport) event(text string, meta *transport.Meta) {
	if t.obs != nil {
		t.obs(transport.Event{Time: time.Now(), Kind: transport.EventHTTP, Text: "oauth: " + transport.RedactURLs(text), Meta: meta})
	}
}

// redactURL renders u for display, with its secrets redacted by the rule
// of every URL mcpx shows (transport.RedactURL).
func redactURL(u *url.URL) string {
	return transport.RedactURL(u.String())
}

// loggingClient wraps c so that every request it makes is observed. The
// requests follow redirects by mcpx's one policy (transport.RedirectPolicy,
// added when c has no CheckRedirect): within the origin with their
// headers, to another origin without credentials and never with a body (a
// registration or token request, whose body holds secrets, is refused),
// never from https to http.
func loggingClient(c *http.Client, obs transport.Observer) *http.Client {
	c = transport.WithRedirectPolicy(c, obs)
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &loggingTransport{base: base, obs: obs}
	return &cc
}

// fetchResult is one metadata GET: the status, or the error that kept it
// from completing.
type fetchResult struct {
	status int
	err    error
}

func (f fetchResult) String() string {
	if f.err != nil {
		return f.err.Error()
	}
	return fmt.Sprintf("HTTP %d %s", f.status, http.StatusText(f.status))
}

// maxMetadata bounds a metadata document.
const maxMetadata = 1 << 20

// getJSON GETs u and decodes a 200 JSON answer into v. It reports the
// status; a non-200 answer is not an error (discovery moves on), a
// malformed 200 answer is.
func (a *Authorizer) getJSON(ctx context.Context, u string, v any) fetchResult {
	rctx, cancel := a.requestContext(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return fetchResult{err: err}
	}
	req.Header.Set("Accept", "application/json")
	if a.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", a.cfg.UserAgent)
	}
	if a.cfg.ProtocolVersion != "" {
		// 2025-03-26: basic/authorization, "Server Metadata Discovery
		// Headers": clients SHOULD send the protocol version.
		req.Header.Set("MCP-Protocol-Version", a.cfg.ProtocolVersion)
	}
	resp, err := sameOriginClient(a.http).Do(req)
	if err != nil {
		var co *crossOriginError
		switch {
		case ctx.Err() != nil:
			return fetchResult{err: ctx.Err()}
		case errors.As(err, &co):
			return fetchResult{err: co}
		case rctx.Err() != nil:
			return fetchResult{err: fmt.Errorf("no answer within %s", requestTimeout)}
		}
		return fetchResult{err: fmt.Errorf("request failed: %w", unwrapURLError(err))}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.CopyN(io.Discard, resp.Body, 4096)
		return fetchResult{status: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		if ctx.Err() != nil {
			return fetchResult{err: ctx.Err()}
		}
		if rctx.Err() != nil {
			return fetchResult{status: resp.StatusCode, err: fmt.Errorf("the document did not arrive whole within %s", requestTimeout)}
		}
		return fetchResult{status: resp.StatusCode, err: fmt.Errorf("reading the body: %w", err)}
	}
	if len(body) > maxMetadata {
		return fetchResult{status: resp.StatusCode, err: fmt.Errorf("the document is larger than %d bytes", maxMetadata)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fetchResult{status: resp.StatusCode, err: fmt.Errorf("not a valid metadata document: %s", jsonProblem(body, err, true))}
	}
	return fetchResult{status: resp.StatusCode}
}

// crossOriginError is a metadata request redirected to another origin.
type crossOriginError struct{ from, to *url.URL }

func (e *crossOriginError) Error() string {
	return fmt.Sprintf("it redirects to %s, another origin, whose document cannot speak for %s (metadata is taken only from the origin it is asked of)",
		redactURL(e.to), transport.RedactURL(e.from.Scheme+"://"+e.from.Host))
}

// sameOriginClient returns c, refusing redirects to another origin than
// the first request's. A metadata document speaks for the origin it is
// served by: the issuer check of RFC 8414 section 3.3 (and the spec's
// "Authorization Server Metadata Discovery") binds a document to the
// issuer the URL was built from only when it comes from there, and a
// redirect elsewhere (an open redirect on the authorization server's or
// the MCP server's origin) would let another origin name the token
// endpoint that receives the code, the verifier and the client's secret,
// or the authorization server a person is sent to. A redirect within the
// origin is followed as c's policy says.
func sameOriginClient(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	if next == nil {
		next = transport.RedirectPolicy(nil)
	}
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !transport.SameOrigin(via[0].URL, req.URL) {
			return &crossOriginError{from: via[0].URL, to: req.URL}
		}
		return next(req, via)
	}
	return &cc
}

// jsonProblem says why body did not decode, in JSON's terms: the member
// that has the wrong type ("its authorization_servers is a string, not an
// array"), or where the JSON breaks and, with showHead, how the body
// begins (an HTML page where JSON was expected shows as such; a file of
// secrets is not quoted).
func jsonProblem(body []byte, err error, showHead bool) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return rawjson.DecodeProblem(err)
	}
	var msg string
	if se.Offset >= int64(len(body)) {
		msg = fmt.Sprintf("it is not valid JSON (it is cut short after %d bytes", len(body))
	} else {
		msg = fmt.Sprintf("it is not valid JSON (at byte %d of %d", se.Offset, len(body))
	}
	if showHead {
		msg += "; it begins " + quoted(string(body[:min(len(body), 40)]))
	}
	return msg + ")"
}

// discover finds the protected resource metadata and the authorization
// server for the MCP server, following the challenge's resource_metadata
// when present. Every URL probed and why a document was or was not used
// is narrated.
func (a *Authorizer) discover(ctx context.Context, ch Challenge) (*Discovery, error) {
	d := &Discovery{ServerURL: a.cfg.ServerURL}
	var tried []string
	try := func(u, why string) (*ResourceMetadata, bool) {
		var prm ResourceMetadata
		r := a.getJSON(ctx, u, &prm)
		tried = append(tried, transport.ShortURL(u)+" ("+r.String()+")")
		a.note("protected resource metadata: GET %s → %s%s", transport.ShortURL(u), r, why)
		return &prm, r.err == nil && r.status == http.StatusOK
	}
	var prm *ResourceMetadata
	if rm := ch.Param("resource_metadata"); rm != "" {
		if pu, err := url.Parse(rm); err != nil || !pu.IsAbs() || (pu.Scheme != "https" && pu.Scheme != "http") {
			a.note("the WWW-Authenticate resource_metadata %s is not an http(s) URL; trying the well-known locations", quoted(rm))
		} else if err := checkEndpoint("resource metadata URL", rm, a.cfg.ServerURL); err != nil {
			// The document names the authorization server the person is
			// sent to: over plain http anyone on the path could name
			// theirs. A resource identifier is an https URL (RFC 9728
			// section 2), and the well-known locations are on the
			// server's own origin.
			a.note("%v; trying the well-known locations", err)
		} else if p, ok := try(rm, " (named by the WWW-Authenticate resource_metadata)"); ok {
			prm, d.ResourceMetadataURL = p, rm
		} else {
			a.note("trying the well-known locations instead")
		}
	} else {
		a.note("the challenge names no resource_metadata; trying the well-known locations")
	}
	if prm == nil {
		urls, err := ResourceMetadataURLs(a.cfg.ServerURL)
		if err != nil {
			return nil, err
		}
		for _, u := range urls {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if p, ok := try(u, ""); ok {
				prm, d.ResourceMetadataURL = p, u
				break
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if prm == nil {
		a.note("no protected resource metadata (tried %s); following the 2025-03-26 discovery: the authorization server is the server's origin",
			strings.Join(tried, ", "))
		return d, a.discoverLegacy(ctx, d)
	}
	if err := a.acceptResource(d, prm); err != nil {
		return nil, err
	}
	return d, a.discoverServer(ctx, d)
}

// acceptResource validates protected resource metadata: the resource it
// names must cover the server (refuse otherwise: a token for another
// resource must not be obtained on this server's word), and it must name
// an authorization server.
func (a *Authorizer) acceptResource(d *Discovery, prm *ResourceMetadata) error {
	server := a.cfg.ServerURL
	switch {
	case prm.Resource == "":
		canon, err := CanonicalResource(server)
		if err != nil {
			return err
		}
		a.note("the protected resource metadata names no resource (RFC 9728 requires one); using the server's URL %s", canon)
		d.Resource = canon
	case !Covers(prm.Resource, server):
		return fmt.Errorf("the protected resource metadata at %s names the resource %s, which is not this server (%s); mcpx refuses to authorize for it",
			transport.ShortURL(d.ResourceMetadataURL), quoted(prm.Resource), server)
	default:
		d.Resource = prm.Resource
	}
	if len(prm.AuthorizationServers) == 0 {
		return fmt.Errorf("the protected resource metadata at %s names no authorization_servers", transport.ShortURL(d.ResourceMetadataURL))
	}
	d.PRM = prm
	msg := fmt.Sprintf("resource %s; authorization servers: %s", d.Resource, transport.Excerpt(strings.Join(prm.AuthorizationServers, ", ")))
	if len(prm.ScopesSupported) > 0 {
		msg += "; scopes_supported: " + transport.Excerpt(strings.Join(prm.ScopesSupported, " "))
	}
	a.note("%s", msg)
	return nil
}

// discoverServer finds the metadata of the first listed authorization
// server that has valid metadata (RFC 9728 section 7.6 leaves the choice
// to the client), probing RFC 8414 and OpenID Connect Discovery locations
// in the spec's order and requiring the document's issuer to be exactly
// the issuer the URL was built from (RFC 8414 section 3.3).
func (a *Authorizer) discoverServer(ctx context.Context, d *Discovery) error {
	var problems []string
	servers, of := d.PRM.AuthorizationServers, ""
	if len(servers) > maxAuthorizationServers {
		// Each costs up to three requests and a line in the error.
		a.note("the protected resource metadata lists %d authorization servers; trying the first %d", len(servers), maxAuthorizationServers)
		of = fmt.Sprintf(" (of the first %d of the %d authorization servers listed)", maxAuthorizationServers, len(servers))
		servers = servers[:maxAuthorizationServers]
	}
	for _, issuer := range servers {
		probes, err := serverMetadataProbes(issuer)
		if err != nil {
			a.note("%v; skipping it", err)
			problems = append(problems, err.Error())
			continue
		}
		if err := checkEndpoint("authorization server", issuer, a.cfg.ServerURL); err != nil {
			a.note("%v; skipping it", err)
			problems = append(problems, err.Error())
			continue
		}
		for _, p := range probes {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var m ServerMetadata
			r := a.getJSON(ctx, p.URL, &m)
			if r.err != nil || r.status != http.StatusOK {
				a.note("authorization server metadata (%s): GET %s → %s", p.Kind, transport.ShortURL(p.URL), r)
				problems = append(problems, transport.ShortURL(p.URL)+" ("+r.String()+")")
				continue
			}
			if m.Issuer != issuer {
				a.note("authorization server metadata (%s): GET %s → %s, but its issuer %s is not %s; not using it (RFC 8414 section 3.3)",
					p.Kind, transport.ShortURL(p.URL), r, quoted(m.Issuer), quoted(issuer))
				problems = append(problems, fmt.Sprintf("%s (issuer %s, want %s)", transport.ShortURL(p.URL), quoted(m.Issuer), quoted(issuer)))
				continue
			}
			a.note("authorization server metadata (%s): GET %s → %s; issuer %s matches", p.Kind, transport.ShortURL(p.URL), r, transport.ShortURL(issuer))
			d.AS, d.ASMetadataURL, d.Issuer = m, p.URL, issuer
			a.describeServer(d)
			return nil
		}
	}
	return fmt.Errorf("no usable authorization server metadata%s: %s", of, strings.Join(problems, "; "))
}

// maxAuthorizationServers bounds how many of the authorization servers
// protected resource metadata lists are tried (RFC 9728 section 7.6 leaves
// the choice to the client).
const maxAuthorizationServers = 5

// discoverLegacy is the 2025-03-26 discovery (basic/authorization, "Server
// Metadata Discovery" and "Fallbacks for Servers without Metadata
// Discovery"): RFC 8414 metadata at the authorization base URL (the
// server's URL without its path), else the default endpoints there.
func (a *Authorizer) discoverLegacy(ctx context.Context, d *Discovery) error {
	su, err := url.Parse(a.cfg.ServerURL)
	if err != nil {
		return err
	}
	base := su.Scheme + "://" + su.Host
	canon, err := CanonicalResource(a.cfg.ServerURL)
	if err != nil {
		return err
	}
	d.Legacy, d.Resource = true, canon
	mu := base + "/.well-known/oauth-authorization-server"
	var m ServerMetadata
	r := a.getJSON(ctx, mu, &m)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r.err == nil && r.status == http.StatusOK {
		a.note("authorization server metadata (2025-03-26, at the authorization base URL): GET %s → %s", mu, r)
		if m.Issuer != base && m.Issuer != base+"/" {
			a.note("its issuer %s is not the authorization base URL %s; 2025-03-26 does not require them to match, so it is used", quoted(m.Issuer), base)
		}
		d.AS, d.ASMetadataURL, d.Issuer = m, mu, m.Issuer
		if d.Issuer == "" {
			d.Issuer = base
		}
		a.describeServer(d)
		return nil
	}
	if r.err != nil && r.status == http.StatusOK {
		return fmt.Errorf("authorization server metadata at %s: %w", mu, r.err)
	}
	a.note("authorization server metadata (2025-03-26): GET %s → %s; using the default endpoints %s/authorize, %s/token and %s/register",
		mu, r, base, base, base)
	d.Defaults, d.Issuer = true, base
	d.AS = ServerMetadata{
		AuthorizationEndpoint: base + "/authorize",
		TokenEndpoint:         base + "/token",
		RegistrationEndpoint:  base + "/register",
	}
	return nil
}

// describeServer narrates what the chosen metadata offers.
func (a *Authorizer) describeServer(d *Discovery) {
	m := &d.AS
	var parts []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, name+" "+strings.Join(v, " "))
		}
	}
	if m.RegistrationEndpoint != "" {
		parts = append(parts, "dynamic registration")
	}
	if m.ClientIDMetadataDocumentSupported {
		parts = append(parts, "client ID metadata documents")
	}
	add("grants:", m.GrantTypesSupported)
	add("token endpoint auth:", m.TokenEndpointAuthMethodsSupported)
	add("PKCE:", m.CodeChallengeMethodsSupported)
	add("scopes:", m.ScopesSupported)
	if m.AuthorizationResponseIssParameterSupported {
		parts = append(parts, "iss in responses")
	}
	add("DPoP proofs:", m.DPoPSigningAlgValuesSupported)
	if len(parts) > 0 {
		a.note("authorization server %s offers %s", d.Issuer, strings.Join(parts, "; "))
	}
}

// requestTimeout bounds each discovery, registration and token request,
// whatever the caller's context allows (a browser authorization may wait
// minutes, and --timeout 0 not at all): a server that answers one byte at
// a time, or never, must not hold mcpx for that long.
var requestTimeout = 30 * time.Second

// requestContext returns the context of one discovery, registration or
// token request (requestTimeout).
func (a *Authorizer) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, requestTimeout)
}

// requestFailed describes the failure err of a request (what: "token
// request to URL") made with rctx, from requestContext(ctx): the end of
// ctx as a transport.WaitError saying what was waited for (endpoint: "the
// OAuth token endpoint URL"), the end of the request's own time as such,
// and anything else as it is.
func requestFailed(what, endpoint string, ctx, rctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return &transport.WaitError{For: endpoint + " did not answer", Err: ctx.Err()}
	case rctx.Err() != nil:
		return fmt.Errorf("%s: no complete answer within %s", what, requestTimeout)
	}
	return fmt.Errorf("%s failed: %w", what, err)
}
