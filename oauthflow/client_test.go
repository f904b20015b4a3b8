package oauthflow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// regServer is a registration and token endpoint that records requests.
type regServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	forms  []url.Values
	auths  []string
	answer map[string]any
}

func newRegServer(t *testing.T) *regServer {
	s := &regServer{answer: map[string]any{"client_id": "dyn-1"}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch r.URL.Path {
		case "/register":
			var b map[string]any
			json.NewDecoder(r.Body).Decode(&b)
			s.bodies = append(s.bodies, b)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(s.answer)
		case "/token":
			r.ParseForm()
			s.forms = append(s.forms, r.PostForm)
			s.auths = append(s.auths, r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"at","token_type":"Bearer","expires_in":60}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func discoveryFor(s *regServer, mod func(*ServerMetadata)) *Discovery {
	d := &Discovery{Issuer: s.URL, Resource: s.URL + "/mcp", AS: ServerMetadata{Issuer: s.URL, TokenEndpoint: s.URL + "/token",
		AuthorizationEndpoint: s.URL + "/authorize", RegistrationEndpoint: s.URL + "/register"}}
	if mod != nil {
		mod(&d.AS)
	}
	return d
}

// Client identity goes pre-registered, then Client ID Metadata Document
// (only where supported), then dynamic registration, else an error saying
// how to register by hand.
func TestClientIdentityOrder(t *testing.T) {
	s := newRegServer(t)
	const cimd = "https://client.example/mcpx.json"
	cimdOn := func(m *ServerMetadata) { m.ClientIDMetadataDocumentSupported = true }

	a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.ClientID, c.ClientSecret, c.ClientMetadataURL = "pre", "sec", cimd })
	if c := a.staticClient(discoveryFor(s, cimdOn)); c == nil || c.ID != "pre" || c.Source != "pre-registered" || c.AuthMethod != "client_secret_basic" {
		t.Errorf("pre-registered: %+v", c)
	}
	a, notes := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.ClientMetadataURL = cimd })
	if c := a.staticClient(discoveryFor(s, cimdOn)); c == nil || c.ID != cimd || c.AuthMethod != "none" {
		t.Errorf("CIMD: %+v", c)
	}
	if c := a.staticClient(discoveryFor(s, nil)); c != nil {
		t.Errorf("CIMD used without support: %+v", c)
	}
	if !strings.Contains(notes.String(), "does not advertise client_id_metadata_document_supported") {
		t.Errorf("narration:\n%s", notes)
	}
	c, err := a.registeredClient(ctxT(t), discoveryFor(s, nil), nil, "http://127.0.0.1:5555/callback")
	// Asked for client_secret_basic (what the server supports by default),
	// given no secret: a public client.
	if err != nil || c.ID != "dyn-1" || c.Source != "dynamic registration" || c.AuthMethod != "none" {
		t.Fatalf("DCR: %+v %v", c, err)
	}
	want := map[string]any{
		"client_name": "mcpx", "redirect_uris": []any{"http://127.0.0.1:5555/callback"},
		"grant_types": []any{"authorization_code", "refresh_token"}, "response_types": []any{"code"},
		"token_endpoint_auth_method": "client_secret_basic", "application_type": "native", "software_id": "mcpx",
	}
	if diff := cmp.Diff(want, s.bodies[0]); diff != "" {
		t.Errorf("registration request (-want +got):\n%s", diff)
	}
	// A stored registration for the same redirect URI is reused.
	reg := &Registration{Issuer: s.URL, RegistrationEndpoint: s.URL + "/register", Client: Client{ID: "old", AuthMethod: "none", RedirectURIs: []string{"http://127.0.0.1:5555/callback"}}}
	if c, _ := a.registeredClient(ctxT(t), discoveryFor(s, nil), reg, "http://127.0.0.1:5555/callback"); c.ID != "old" || len(s.bodies) != 1 {
		t.Errorf("stored registration not reused: %+v", c)
	}
	if c, _ := a.registeredClient(ctxT(t), discoveryFor(s, nil), reg, "http://127.0.0.1:6666/callback"); c.ID != "dyn-1" || len(s.bodies) != 2 {
		t.Errorf("stored registration reused for another redirect URI: %+v", c)
	}
	_, err = a.registeredClient(ctxT(t), discoveryFor(s, func(m *ServerMetadata) { m.RegistrationEndpoint = "" }), nil, "http://127.0.0.1:5555/callback")
	var ce *ClientError
	if !errors.As(err, &ce) || ce.Problem != NoRegistration || ce.RedirectURI != "http://127.0.0.1:5555/callback" || ce.Issuer != s.URL ||
		!strings.Contains(err.Error(), "redirect URI http://127.0.0.1:5555/callback") || !errors.Is(err, ErrAuthorization) {
		t.Errorf("no way to register: %#v", err)
	}
}

// The registration asks for a method the server supports, public first.
func TestRegistrationAuthMethod(t *testing.T) {
	s := newRegServer(t)
	a, _ := newTestAuthorizer(t, s.URL+"/mcp", nil)
	tests := []struct {
		supported []string
		answer    map[string]any
		asked     string
		used      string
	}{
		{[]string{"none", "client_secret_basic"}, map[string]any{"client_id": "x"}, "none", "none"},
		{[]string{"client_secret_post"}, map[string]any{"client_id": "x", "client_secret": "s"}, "client_secret_post", "client_secret_post"},
		// The server says how the client authenticates: that wins.
		{[]string{"client_secret_basic", "client_secret_post"}, map[string]any{"client_id": "x", "client_secret": "s", "token_endpoint_auth_method": "client_secret_post"}, "client_secret_basic", "client_secret_post"},
		// A secret nobody asked for, the server supporting only none: none.
		{[]string{"none"}, map[string]any{"client_id": "x", "client_secret": "s"}, "none", "none"},
	}
	for _, tt := range tests {
		s.mu.Lock()
		s.answer, s.bodies = tt.answer, nil
		s.mu.Unlock()
		c, err := a.register(ctxT(t), discoveryFor(s, func(m *ServerMetadata) { m.TokenEndpointAuthMethodsSupported = tt.supported }), "http://127.0.0.1:1/callback")
		if err != nil || s.bodies[0]["token_endpoint_auth_method"] != tt.asked || c.AuthMethod != tt.used {
			t.Errorf("supported %v: asked %v, used %+v, %v", tt.supported, s.bodies[0]["token_endpoint_auth_method"], c, err)
		}
	}
	if _, err := a.register(ctxT(t), discoveryFor(s, func(m *ServerMetadata) { m.TokenEndpointAuthMethodsSupported = []string{"private_key_jwt"} }), "x"); err == nil {
		t.Error("registered with an unsupported method")
	}
}

// Each token endpoint authentication method on the wire: basic in the
// header (form-encoded credentials), post in the body, none with only the
// client_id, private_key_jwt with a signed assertion; the extra parameters
// (resource) always in the body.
func TestTokenEndpointAuth(t *testing.T) {
	s := newRegServer(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyFile := writePEM(t, "PRIVATE KEY", der)
	pk, err := LoadPrivateKey(context.Background(), keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.PrivateKey = pk })
	params := url.Values{"resource": {s.URL + "/mcp"}}
	for _, c := range []*Client{
		{ID: "id:1", Secret: "s&1", AuthMethod: "client_secret_basic"},
		{ID: "id2", Secret: "s2", AuthMethod: "client_secret_post"},
		{ID: "id3", AuthMethod: "none"},
		{ID: "id4", AuthMethod: "private_key_jwt", PrivateKeyFile: keyFile},
	} {
		if _, err := a.tokenRequest(ctxT(t), s.URL+"/token", s.URL, c, params, []string{"a", "b"}, nil); err != nil {
			t.Fatalf("%s: %v", c.AuthMethod, err)
		}
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("id%3A1:s%261"))
	if s.auths[0] != basic || s.forms[0].Has("client_secret") || s.forms[0].Get("grant_type") != "client_credentials" || s.forms[0].Get("scope") != "a b" {
		t.Errorf("basic: %q %v", s.auths[0], s.forms[0])
	}
	if s.auths[1] != "" || s.forms[1].Get("client_id") != "id2" || s.forms[1].Get("client_secret") != "s2" {
		t.Errorf("post: %q %v", s.auths[1], s.forms[1])
	}
	if s.auths[2] != "" || s.forms[2].Get("client_id") != "id3" || s.forms[2].Has("client_secret") {
		t.Errorf("none: %q %v", s.auths[2], s.forms[2])
	}
	f := s.forms[3]
	if s.auths[3] != "" || f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || f.Has("client_secret") {
		t.Errorf("private_key_jwt: %v", f)
	}
	_, claims, _, _ := decodeJWT(t, f.Get("client_assertion"))
	if claims["iss"] != "id4" || claims["aud"] != s.URL {
		t.Errorf("assertion claims %v", claims)
	}
	for i, f := range s.forms {
		if f.Get("resource") != s.URL+"/mcp" {
			t.Errorf("request %d lacks the resource: %v", i, f)
		}
	}
}

// A registration answer mcpx cannot use is refused, saying what was wrong
// with it, and nothing is stored. It was "the answer has no client_id"
// whatever came (a login page, a client_id of the wrong type, an error
// sent with 200), and a client secret that had expired already, or a
// token endpoint authentication method mcpx cannot use (a secret then
// went unsent, or a private key was looked for at ""), was taken.
func TestRegistrationAnswerRefused(t *testing.T) {
	for _, tt := range []struct {
		name, ct, body, want string
		refused              bool
	}{
		{"login page", "text/html", "<html><title>Sign in</title>\n client_secret=s3cr3t</html>",
			`answered HTTP 201 with "text/html" that is not a registration (it is not valid JSON): HTML page "Sign in"`, false},
		{"page echoing the secret", "text/html", "<html><body>Welcome \n client_secret=s3cr3t</body></html>",
			`answered HTTP 201 with "text/html" that is not a registration (it is not valid JSON): HTML page: Welcome client_secret=[redacted]`, false},
		{"empty", "application/json", "", `answered HTTP 201 with no body ("application/json"), not a registration`, false},
		{"no client_id", "application/json", `{"client_secret":"s3cr3t"}`, "answered HTTP 201 without a client_id", false},
		{"client_id a number", "application/json", `{"client_id":5}`, "answered HTTP 201 with a registration mcpx cannot use: its client_id is a number, not a string", false},
		{"error", "application/json", `{"error":"invalid_redirect_uri","error_description":"no"}`, "was refused: HTTP 201: invalid_redirect_uri: no", true},
		{"expired secret", "application/json", `{"client_id":"c","client_secret":"s3cr3t","client_secret_expires_at":1000}`,
			"answered HTTP 201 with a client secret that has expired already (client_secret_expires_at 1000 is 1970-01-01T00:16:40Z; RFC 7591 section 3.2.1)", false},
		{"unusable method", "application/json", `{"client_id":"c","client_secret":"s3cr3t","token_endpoint_auth_method":"tls_client_auth"}`,
			`registered mcpx with token_endpoint_auth_method "tls_client_auth", which mcpx cannot authenticate with (it asked for none)`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newRegServer(t)
			s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ct)
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, tt.body)
			})
			store := NewStore(t.TempDir())
			a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.Store = store })
			d := discoveryFor(s, func(m *ServerMetadata) { m.TokenEndpointAuthMethodsSupported = []string{"none"} })
			_, err := a.register(ctxT(t), d, "http://127.0.0.1:1/callback")
			var ce *ClientError
			if err == nil || !strings.Contains(err.Error(), "dynamic client registration at "+s.URL+"/register") || !strings.Contains(err.Error(), tt.want) ||
				strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "\n") || errors.As(err, &ce) != tt.refused {
				t.Errorf("err = %v\nwant %q", err, tt.want)
			}
			if reg, _ := store.Registration(s.URL); reg != nil {
				t.Errorf("stored %+v", reg)
			}
		})
	}
}
