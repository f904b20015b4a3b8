package transport_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/transport"
)

// stubbornAuth always asks for another try and records what it was told.
type stubbornAuth struct {
	mu    sync.Mutex
	n     int
	creds []string
}

func (a *stubbornAuth) Authorization(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 {
		return "", nil
	}
	return "Bearer try-" + string(rune('0'+a.n)), nil
}

func (a *stubbornAuth) Unauthorized(_ context.Context, e *transport.UnauthorizedError) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.creds = append(a.creds, e.CredentialID)
	a.n++
	return true, nil
}

// A request is sent again as long as the Authorizer asks, up to a cap, so
// a server that refuses everything cannot loop mcpx; each refusal names
// the credential it refused by fingerprint ("" for none), never by value.
func TestAuthorizerRetryCap(t *testing.T) {
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	auth := &stubbornAuth{}
	_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Authorizer: auth}, nil)
	var ue *transport.UnauthorizedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v", err)
	}
	if n := posts.Load(); n != 4 {
		t.Errorf("the request was sent %d times, want 4 (once, then 3 retries)", n)
	}
	want := []string{"", transport.CredentialID("Bearer try-1"), transport.CredentialID("Bearer try-2")}
	if len(auth.creds) != 3 {
		t.Fatalf("authorizer told %d times", len(auth.creds))
	}
	for i, w := range want {
		if auth.creds[i] != w {
			t.Errorf("refusal %d names credential %q, want %q", i, auth.creds[i], w)
		}
	}
	if ue.CredentialID != transport.CredentialID("Bearer try-3") || len(ue.CredentialID) != 16 {
		t.Errorf("final refusal names %q", ue.CredentialID)
	}
	if transport.CredentialID("") != "" || transport.CredentialID("a") == transport.CredentialID("b") {
		t.Error("CredentialID is not a fingerprint")
	}
}

// proofAuth is a RequestAuthorizer: it signs (here: spells out) each
// request's method and URL into a per-request header, and takes a nonce
// from a refusal's headers.
type proofAuth struct {
	mu      sync.Mutex
	nonce   string
	refused []*transport.UnauthorizedError
}

func (a *proofAuth) Authorization(context.Context) (string, error) {
	panic("Authorization called on a RequestAuthorizer")
}

func (a *proofAuth) AuthorizeRequest(_ context.Context, r *http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	r.Header.Set("Authorization", "DPoP secret-token")
	r.Header.Set("DPoP", "proof-secret "+r.Method+" "+r.URL.String()+" nonce="+a.nonce)
	return nil
}

func (a *proofAuth) Unauthorized(_ context.Context, e *transport.UnauthorizedError) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refused = append(a.refused, e)
	a.nonce = e.Header.Get("DPoP-Nonce")
	return a.nonce != "", nil
}

// A RequestAuthorizer sets the credentials of every request itself, once
// its method and URL are final; a refusal hands it the response headers
// (a DPoP-Nonce) but no cookie; --wire shows the proof header redacted.
func TestRequestAuthorizer(t *testing.T) {
	l := newLog()
	u := testservers.Streamable(t, testservers.NewServer(), &mcp.StreamableHTTPOptions{Stateless: true}, func(h http.Handler) http.Handler {
		return l.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.Header.Get("DPoP"), "nonce=n-1") {
				w.Header().Set("DPoP-Nonce", "n-1")
				w.Header().Set("Set-Cookie", "session=secret-cookie")
				w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
				http.Error(w, "nonce please", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		}))
	})
	auth := &proofAuth{}
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u + "?x=1", Authorizer: auth}, rec)
	if got := toolText(t, sess, "echo", map[string]any{"message": "hi"}); got != "Echo: hi" {
		t.Errorf("echo = %q", got)
	}
	auth.mu.Lock()
	refused := auth.refused
	auth.mu.Unlock()
	if len(refused) != 1 || refused[0].Header.Get("DPoP-Nonce") != "n-1" || refused[0].Header.Get("Set-Cookie") != "" ||
		refused[0].CredentialID != transport.CredentialID("DPoP secret-token") {
		t.Fatalf("refusals: %+v", refused)
	}
	if strings.Contains(refused[0].Error(), "n-1") {
		t.Errorf("the error shows the headers: %v", refused[0])
	}
	posts := l.find("POST", "tools/call")
	if len(posts) != 1 || posts[0].Header.Get("DPoP") != "proof-secret POST "+u+"?x=1 nonce=n-1" {
		t.Errorf("tools/call requests: %+v", posts)
	}
	wire := rec.eventText(transport.EventHTTP)
	if strings.Contains(wire, "secret") || !strings.Contains(wire, "Authorization: [redacted], DPoP: [redacted]") || !strings.Contains(wire, "DPoP-Nonce: n-1") {
		t.Errorf("wire events:\n%s", wire)
	}
}
