package oauthflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/transport"
)

// metaServer serves JSON documents at fixed paths (404 elsewhere) and logs
// every GET, so tests can check the order discovery probes in.
type metaServer struct {
	*httptest.Server
	mu   sync.Mutex
	docs map[string]any
	log  []string
	hdrs []http.Header
}

func newMetaServer(t *testing.T) *metaServer {
	m := &metaServer{docs: map[string]any{}}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.log = append(m.log, r.Method+" "+r.URL.Path)
		m.hdrs = append(m.hdrs, r.Header.Clone())
		doc, ok := m.docs[r.URL.Path]
		m.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *metaServer) set(path string, doc any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.docs[path] = doc
}

func (m *metaServer) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.log...)
}

// asDoc is authorization server metadata for issuer.
func asDoc(issuer string) map[string]any {
	return map[string]any{
		"issuer":                           issuer,
		"authorization_endpoint":           issuer + "/authorize",
		"token_endpoint":                   issuer + "/token",
		"registration_endpoint":            issuer + "/register",
		"code_challenge_methods_supported": []string{"S256"},
	}
}

type noteLog struct {
	mu    sync.Mutex
	notes []string
}

func (n *noteLog) observe(ev transport.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, string(ev.Kind)+": "+ev.Text)
}

func (n *noteLog) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.notes, "\n")
}

func newTestAuthorizer(t *testing.T, serverURL string, mod func(*Config)) (*Authorizer, *noteLog) {
	t.Helper()
	nl := &noteLog{}
	cfg := Config{ServerURL: serverURL, Observer: nl.observe, ProtocolVersion: "2025-11-25"}
	if mod != nil {
		mod(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, nl
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func challenge(s string) Challenge {
	c, _ := Bearer(ParseChallenges(s))
	return c
}

// The resource_metadata of the challenge is used first and alone; the
// authorization server (an issuer without a path) is probed RFC 8414 first.
func TestDiscoveryFromChallenge(t *testing.T) {
	m := newMetaServer(t)
	m.set("/custom/prm.json", map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{m.URL}, "scopes_supported": []string{"a"}})
	m.set("/.well-known/oauth-authorization-server", asDoc(m.URL))
	a, notes := newTestAuthorizer(t, m.URL+"/mcp", nil)
	d, err := a.discover(ctxT(t), challenge(`Bearer resource_metadata="`+m.URL+`/custom/prm.json"`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /custom/prm.json", "GET /.well-known/oauth-authorization-server"}
	if diff := cmp.Diff(want, m.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if d.Resource != m.URL+"/mcp" || d.Issuer != m.URL || d.Legacy || d.AS.TokenEndpoint != m.URL+"/token" {
		t.Errorf("discovery = %+v", d)
	}
	// Discovery requests say the protocol version (2025-03-26: SHOULD).
	if v := m.hdrs[0].Get("MCP-Protocol-Version"); v != "2025-11-25" {
		t.Errorf("MCP-Protocol-Version = %q", v)
	}
	for _, want := range []string{"protected resource metadata: GET " + m.URL + "/custom/prm.json → HTTP 200 OK (named by the WWW-Authenticate resource_metadata)",
		"issuer " + m.URL + " matches", "http: oauth: GET " + m.URL + "/custom/prm.json"} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("narration lacks %q:\n%s", want, notes)
		}
	}
}

// Without resource_metadata, the path-specific well-known location comes
// before the root one; an issuer with a path is probed in the spec's three
// forms and never at the root RFC 8414 location.
func TestDiscoveryWellKnownOrder(t *testing.T) {
	m := newMetaServer(t)
	m.set("/.well-known/oauth-protected-resource", map[string]any{"resource": m.URL, "authorization_servers": []string{m.URL + "/tenant1"}})
	m.set("/tenant1/.well-known/openid-configuration", asDoc(m.URL+"/tenant1"))
	a, _ := newTestAuthorizer(t, m.URL+"/api/mcp", nil)
	d, err := a.discover(ctxT(t), challenge(`Bearer error="invalid_token"`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /.well-known/oauth-protected-resource/api/mcp",
		"GET /.well-known/oauth-protected-resource",
		"GET /.well-known/oauth-authorization-server/tenant1",
		"GET /.well-known/openid-configuration/tenant1",
		"GET /tenant1/.well-known/openid-configuration",
	}
	if diff := cmp.Diff(want, m.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// The root resource covers the server, and is the resource asked for.
	if d.Resource != m.URL || d.Issuer != m.URL+"/tenant1" {
		t.Errorf("resource %q, issuer %q", d.Resource, d.Issuer)
	}
}

// A metadata document whose issuer is not the one the URL was built from
// is not used (RFC 8414 section 3.3); probing goes on.
func TestDiscoveryIssuerMismatch(t *testing.T) {
	m := newMetaServer(t)
	m.set("/.well-known/oauth-protected-resource/mcp", map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{m.URL}})
	m.set("/.well-known/oauth-authorization-server", asDoc("https://honest.example"))
	m.set("/.well-known/openid-configuration", asDoc(m.URL))
	a, notes := newTestAuthorizer(t, m.URL+"/mcp", nil)
	d, err := a.discover(ctxT(t), Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	if d.ASMetadataURL != m.URL+"/.well-known/openid-configuration" {
		t.Errorf("used %s", d.ASMetadataURL)
	}
	if !strings.Contains(notes.String(), `its issuer "https://honest.example" is not "`+m.URL+`"; not using it`) {
		t.Errorf("narration:\n%s", notes)
	}
	// With only the bad document there is nothing to use.
	m.set("/.well-known/openid-configuration", asDoc("https://honest.example"))
	a, _ = newTestAuthorizer(t, m.URL+"/mcp", nil)
	if _, err := a.discover(ctxT(t), Challenge{}); err == nil || !strings.Contains(err.Error(), "no usable authorization server metadata") {
		t.Errorf("err = %v", err)
	}
}

// Metadata naming another resource is refused before anything else.
func TestDiscoveryResourceMismatch(t *testing.T) {
	m := newMetaServer(t)
	m.set("/.well-known/oauth-protected-resource/mcp", map[string]any{"resource": "https://evil.example.com/mcp", "authorization_servers": []string{m.URL}})
	m.set("/.well-known/oauth-authorization-server", asDoc(m.URL))
	a, _ := newTestAuthorizer(t, m.URL+"/mcp", nil)
	_, err := a.discover(ctxT(t), Challenge{})
	if err == nil || !strings.Contains(err.Error(), `names the resource "https://evil.example.com/mcp", which is not this server`) {
		t.Fatalf("err = %v", err)
	}
	if n := len(m.requests()); n != 1 {
		t.Errorf("went on after the mismatch: %q", m.requests())
	}
	m.set("/.well-known/oauth-protected-resource/mcp", map[string]any{"resource": m.URL + "/mcp"})
	a, _ = newTestAuthorizer(t, m.URL+"/mcp", nil)
	if _, err := a.discover(ctxT(t), Challenge{}); err == nil || !strings.Contains(err.Error(), "names no authorization_servers") {
		t.Errorf("err = %v", err)
	}
}

// A 2025-03-26 server: no protected resource metadata, so the metadata is
// looked for at the server's origin (its issuer need not match), and
// without it the default endpoints there are used.
func TestDiscoveryLegacy(t *testing.T) {
	m := newMetaServer(t)
	m.set("/.well-known/oauth-authorization-server", asDoc(m.URL+"/oauth"))
	a, notes := newTestAuthorizer(t, m.URL+"/v1/mcp", nil)
	d, err := a.discover(ctxT(t), challenge(`Bearer error="invalid_token"`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /.well-known/oauth-protected-resource/v1/mcp", "GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-authorization-server"}
	if diff := cmp.Diff(want, m.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if !d.Legacy || d.Defaults || d.Issuer != m.URL+"/oauth" || d.Resource != m.URL+"/v1/mcp" || d.AS.AuthorizationEndpoint != m.URL+"/oauth/authorize" {
		t.Errorf("discovery = %+v", d)
	}
	if !strings.Contains(notes.String(), "2025-03-26 does not require them to match") {
		t.Errorf("narration:\n%s", notes)
	}

	m2 := newMetaServer(t)
	a, _ = newTestAuthorizer(t, m2.URL+"/v1/mcp", nil)
	d, err = a.discover(ctxT(t), Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Defaults || d.AS.AuthorizationEndpoint != m2.URL+"/authorize" || d.AS.TokenEndpoint != m2.URL+"/token" ||
		d.AS.RegistrationEndpoint != m2.URL+"/register" || d.Issuer != m2.URL {
		t.Errorf("defaults = %+v", d)
	}
}

// PKCE support must be advertised (S256) or the flow is refused before
// anything is shown to the person.
func TestPKCERequired(t *testing.T) {
	m := newMetaServer(t)
	m.set("/.well-known/oauth-protected-resource/mcp", map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{m.URL}})
	doc := asDoc(m.URL)
	delete(doc, "code_challenge_methods_supported")
	m.set("/.well-known/oauth-authorization-server", doc)
	opened := false
	a, _ := newTestAuthorizer(t, m.URL+"/mcp", func(c *Config) {
		c.Browser = func(string) (<-chan error, error) { opened = true; return nil, nil }
	})
	ok, err := a.Unauthorized(ctxT(t), &transport.UnauthorizedError{Method: "POST", URL: m.URL + "/mcp", Status: 401, Challenge: `Bearer`})
	if ok || err == nil || !strings.Contains(err.Error(), "does not advertise PKCE with S256") || !errors.Is(err, ErrAuthorization) {
		t.Errorf("ok %v, err %v", ok, err)
	}
	if opened {
		t.Error("the browser was opened")
	}
}

// With nobody to authorize, a 401 fails at once, before any discovery.
func TestNoInteractionFailsAtOnce(t *testing.T) {
	m := newMetaServer(t)
	a, _ := newTestAuthorizer(t, m.URL+"/mcp", func(c *Config) { c.NoInteraction = "there is no terminal" })
	ok, err := a.Unauthorized(ctxT(t), &transport.UnauthorizedError{Method: "POST", URL: m.URL + "/mcp", Status: 401, Challenge: `Bearer`})
	if ok || err == nil || !strings.Contains(err.Error(), "there is no terminal") || !errors.Is(err, ErrAuthorization) {
		t.Errorf("ok %v, err %v", ok, err)
	}
	if len(m.requests()) != 0 {
		t.Errorf("discovery ran: %q", m.requests())
	}
	a, _ = newTestAuthorizer(t, m.URL+"/mcp", func(c *Config) { c.StoredOnly = true })
	_, err = a.Unauthorized(ctxT(t), &transport.UnauthorizedError{Status: 401})
	var nt *NoTokenError
	if !errors.As(err, &nt) || !nt.StoredOnly || nt.ServerURL != m.URL+"/mcp" || !errors.Is(err, ErrInteraction) || !errors.Is(err, ErrAuthorization) {
		t.Errorf("stored-only: %v", err)
	}
	// A plain 403 (no insufficient_scope) is not for OAuth to fix.
	if ok, err := a.Unauthorized(ctxT(t), &transport.UnauthorizedError{Status: 403, Challenge: `Bearer error="forbidden"`}); ok || err != nil {
		t.Errorf("403: %v %v", ok, err)
	}
}

// Metadata that does not decode is described in JSON's terms, not Go's
// ('json: cannot unmarshal string into Go struct field
// ServerMetadata.code_challenge_methods_supported of type []string'), and
// an HTML page shows as one.
func TestMetadataDecodeProblems(t *testing.T) {
	var asBody atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "http://" + r.Host
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
		case "/.well-known/oauth-authorization-server":
			io.WriteString(w, asBody.Load().(string))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	for _, tt := range []struct{ body, want string }{
		{`{"issuer":"x","code_challenge_methods_supported":"S256"}`, "(not a valid metadata document: its code_challenge_methods_supported is a string, not an array)"},
		{`["x"]`, "(not a valid metadata document: it is an array, not an object)"},
		{"<html>\x1b[31m<body>hello</body></html>", `(not a valid metadata document: it is not valid JSON (at byte 1 of 36; it begins "<html>\x1b[31m<body>hello</body></html>"))`},
		{`{"issuer":"x",`, `(not a valid metadata document: it is not valid JSON (it is cut short after 14 bytes; it begins "{"issuer":"x","))`},
	} {
		asBody.Store(tt.body)
		a, _ := newTestAuthorizer(t, srv.URL+"/mcp", nil)
		_, err := a.discover(ctxT(t), Challenge{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v", tt.body, err)
		}
	}
}

// Protected resource metadata listing thousands of authorization servers
// costs a few requests and a short error, not three requests and a line
// of the error each (2000 made a 518 kB error).
func TestDiscoveryTriesFewAuthorizationServers(t *testing.T) {
	m := newMetaServer(t)
	var as []string
	for i := range 2000 {
		as = append(as, fmt.Sprintf("%s/as%d", m.URL, i))
	}
	m.set("/.well-known/oauth-protected-resource/mcp", map[string]any{"resource": m.URL + "/mcp", "authorization_servers": as})
	a, notes := newTestAuthorizer(t, m.URL+"/mcp", nil)
	_, err := a.discover(ctxT(t), Challenge{})
	if err == nil || !strings.Contains(err.Error(), "no usable authorization server metadata (of the first 5 of the 2000 authorization servers listed): ") || len(err.Error()) > 2000 {
		t.Errorf("err = %v", err)
	}
	if n := len(m.requests()); n != 1+5*3 {
		t.Errorf("%d requests", n)
	}
	if !strings.Contains(notes.String(), "the protected resource metadata lists 2000 authorization servers; trying the first 5") || len(notes.String()) > 10000 {
		t.Errorf("notes (%d bytes):\n%.2000s", len(notes.String()), notes)
	}
}

// Metadata is taken only from the origin it was asked of: a well-known
// location that redirects to another origin is not used (and that origin
// is not even asked), and discovery goes on to the next location. Such a
// document was used: a redirect on the MCP server's origin named the
// authorization servers, and one on the authorization server's origin
// (whose issuer then still matched) named the token endpoint that gets
// the code, the verifier and the client's secret.
func TestDiscoveryRefusesCrossOriginRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(asDoc("http://" + r.Host))
	}))
	t.Cleanup(other.Close)
	m := newMetaServer(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/prm", http.StatusFound)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/as", http.StatusMovedPermanently)
	})
	mux.Handle("/", m.Config.Handler)
	m.Config.Handler = mux
	m.set("/.well-known/oauth-protected-resource", map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{m.URL}})
	m.set("/.well-known/openid-configuration", asDoc(m.URL))
	a, notes := newTestAuthorizer(t, m.URL+"/mcp", nil)
	d, err := a.discover(ctxT(t), Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	if d.ResourceMetadataURL != m.URL+"/.well-known/oauth-protected-resource" || d.ASMetadataURL != m.URL+"/.well-known/openid-configuration" ||
		d.AS.TokenEndpoint != m.URL+"/token" {
		t.Errorf("discovery = %+v", d)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other origin was asked %d times", n)
	}
	for _, want := range []string{
		"GET " + m.URL + "/.well-known/oauth-protected-resource/mcp → it redirects to " + other.URL + "/prm, another origin, whose document cannot speak for " + m.URL,
		"GET " + m.URL + "/.well-known/oauth-authorization-server → it redirects to " + other.URL + "/as, another origin",
	} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// setRequestTimeout makes each OAuth request's own bound d for the test.
func setRequestTimeout(t *testing.T, d time.Duration) {
	old := requestTimeout
	requestTimeout = d
	t.Cleanup(func() { requestTimeout = old })
}

// slowLoris answers 200 and then a byte at a time, never finishing, until
// the client gives up.
func slowLoris(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		w.Write([]byte(" "))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// Each discovery, registration and token request is bounded on its own
// (requestTimeout), whatever the caller's context allows: a server that
// sends its answer a byte at a time held mcpx until --timeout (5 minutes
// for mcpx auth login, forever with --timeout 0). A metadata location
// that does not finish is passed over; an endpoint that does not is an
// authorization failure that says so.
func TestRequestsBoundedOnTheirOwn(t *testing.T) {
	setRequestTimeout(t, 200*time.Millisecond)
	t.Run("metadata", func(t *testing.T) {
		m := newMetaServer(t)
		mux := http.NewServeMux()
		mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", slowLoris)
		mux.Handle("/", m.Config.Handler)
		m.Config.Handler = mux
		m.set("/.well-known/oauth-protected-resource", map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{m.URL}})
		m.set("/.well-known/oauth-authorization-server", asDoc(m.URL))
		a, notes := newTestAuthorizer(t, m.URL+"/mcp", nil)
		d, err := a.discover(ctxT(t), Challenge{})
		if err != nil {
			t.Fatal(err)
		}
		if d.ResourceMetadataURL != m.URL+"/.well-known/oauth-protected-resource" {
			t.Errorf("used %s", d.ResourceMetadataURL)
		}
		if !strings.Contains(notes.String(), "/.well-known/oauth-protected-resource/mcp → the document did not arrive whole within 200ms") {
			t.Errorf("notes:\n%s", notes)
		}
	})
	for _, tt := range []struct {
		name string
		set  func(s *fakeAS)
		want string
	}{
		{"token endpoint", func(s *fakeAS) { s.token = slowLoris }, "token request to %s/token (reading the answer): no complete answer within 200ms"},
		{"registration", func(s *fakeAS) { s.register = slowLoris }, "dynamic client registration at %s/register (reading the answer): no complete answer within 200ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAS(t)
			tt.set(s)
			_, err, _ := authorizeOnce(t, s, nil)
			var we *transport.WaitError
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(tt.want, s.URL)) || !errors.Is(err, ErrAuthorization) || errors.As(err, &we) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// docTransport answers GETs from docs by URL (404 for others) without a
// network, and logs every URL asked.
type docTransport struct {
	mu   sync.Mutex
	docs map[string]any
	log  []string
}

func (d *docTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	d.log = append(d.log, r.URL.String())
	doc, ok := d.docs[r.URL.String()]
	d.mu.Unlock()
	rec := httptest.NewRecorder()
	if !ok {
		http.NotFound(rec, r)
	} else {
		rec.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rec).Encode(doc)
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// A challenge of a server reached over https that names its resource
// metadata at a plain http URL (here on the server's host, or another)
// is not followed there, where anyone on the path could rewrite the
// document and send the person to an authorization server of their
// choosing: a resource identifier is an https URL (RFC 9728 section 2),
// and the documents of the flow come over TLS like its endpoints (OAuth
// 2.1, "Communication Security"). The well-known location over https is
// tried instead.
func TestDiscoveryRefusesPlainHTTPResourceMetadata(t *testing.T) {
	for _, rm := range []string{"http://mcp.test/prm", "http://elsewhere.test/prm"} {
		dt := &docTransport{docs: map[string]any{
			rm: map[string]any{"resource": "https://mcp.test/mcp", "authorization_servers": []string{"https://evil.test"}},
			"https://mcp.test/.well-known/oauth-protected-resource/mcp": map[string]any{
				"resource": "https://mcp.test/mcp", "authorization_servers": []string{"https://as.test"}},
			"https://as.test/.well-known/oauth-authorization-server": asDoc("https://as.test"),
		}}
		a, notes := newTestAuthorizer(t, "https://mcp.test/mcp", func(c *Config) { c.HTTPClient = &http.Client{Transport: dt} })
		d, err := a.discover(ctxT(t), challenge(`Bearer resource_metadata="`+rm+`"`))
		if err != nil {
			t.Fatal(err)
		}
		if d.Issuer != "https://as.test" {
			t.Errorf("%s: the issuer is %s", rm, d.Issuer)
		}
		for _, u := range dt.log {
			if strings.HasPrefix(u, "http:") {
				t.Errorf("%s: GET %s", rm, u)
			}
		}
		want := "the resource metadata URL " + rm + " is not HTTPS"
		if !strings.Contains(notes.String(), want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// URLs a server chose — a challenge's resource_metadata (a header may be
// megabytes long) or an authorization server a document lists — are cut
// short in messages: discovery's errors and notes stay lines.
func TestDiscoveryQuotesLongURLsShort(t *testing.T) {
	m := newMetaServer(t)
	long := strings.Repeat("y", 512<<10)
	m.set("/prm", map[string]any{"resource": m.URL + "/other", "authorization_servers": []string{m.URL}})
	a, notes := newTestAuthorizer(t, m.URL+"/mcp", nil)
	_, err := a.discover(ctxT(t), challenge(`Bearer resource_metadata="`+m.URL+`/prm?x=`+long+`"`))
	if err == nil || !strings.Contains(err.Error(), "names the resource") || len(err.Error()) > 2000 {
		t.Errorf("err = %.500v… (%d bytes)", err, len(fmt.Sprint(err)))
	}
	m.set("/.well-known/oauth-protected-resource/mcp", map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{m.URL + "/" + long}})
	a, notes = newTestAuthorizer(t, m.URL+"/mcp", nil)
	_, err = a.discover(ctxT(t), Challenge{})
	if err == nil || !strings.Contains(err.Error(), "no usable authorization server metadata") || len(err.Error()) > 4000 {
		t.Errorf("err = %.500v… (%d bytes)\n%.3000s", err, len(fmt.Sprint(err)), notes)
	}
	for _, n := range strings.Split(notes.String(), "\n") {
		if len(n) > 2000 {
			t.Errorf("a note of %d bytes: %.300s…", len(n), n)
		}
	}
}
