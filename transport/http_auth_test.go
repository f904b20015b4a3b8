package transport_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

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
