package oauthflow

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// hostLog records the requests a server receives.
type hostLog struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string
	hdrs []http.Header
}

func newHostLog(t *testing.T, h http.HandlerFunc) *hostLog {
	l := &hostLog{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+" "+string(body))
		l.hdrs = append(l.hdrs, r.Header.Clone())
		l.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *hostLog) seen() ([]string, []http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...), append([]http.Header(nil), l.hdrs...)
}

// Token requests follow mcpx's one redirect policy: a 307 to another
// origin (which would resend the code or the client secret in the body)
// is refused, the other origin getting nothing; so is a 303, which would
// turn the token request into a GET without its body (and take the GET's
// answer for the token response); a redirect within the origin is
// followed with everything.
func TestTokenRequestRedirects(t *testing.T) {
	other := newHostLog(t, nil)
	as := newHostLog(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token307":
			http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
		case "/token303":
			http.Redirect(w, r, other.URL+"/landing", http.StatusSeeOther)
		case "/moved":
			http.Redirect(w, r, "/token", http.StatusPermanentRedirect)
		case "/token":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"at","token_type":"Bearer","expires_in":60}`)
		}
	})
	a, _ := newTestAuthorizer(t, as.URL+"/mcp", nil)
	c := &Client{ID: "id", Secret: "SECRET-CLIENT", AuthMethod: "client_secret_basic"}
	params := url.Values{"grant_type": {"authorization_code"}, "code": {"SECRET-CODE"}}
	key, _ := newDPoPKey()

	_, err := a.tokenRequest(ctxT(t), as.URL+"/token307", as.URL, c, params, nil, key)
	if !errors.Is(err, transport.ErrRedirect) || !strings.Contains(err.Error(), other.URL+"/token") {
		t.Errorf("307 to another origin: err = %v", err)
	}
	if reqs, _ := other.seen(); len(reqs) != 0 {
		t.Fatalf("the other origin got %q", reqs)
	}

	_, err = a.tokenRequest(ctxT(t), as.URL+"/token303", as.URL, c, params, nil, key)
	if !errors.Is(err, transport.ErrRedirect) || !strings.Contains(err.Error(), "would turn the POST into a GET") {
		t.Errorf("303 to another origin: err = %v", err)
	}
	if reqs, _ := other.seen(); len(reqs) != 0 {
		t.Fatalf("303 to another origin: the other origin got %q", reqs)
	}

	tok, err := a.tokenRequest(ctxT(t), as.URL+"/moved", as.URL, c, params, nil, nil)
	if err != nil || tok.AccessToken != "at" {
		t.Fatalf("308 within the origin: %v", err)
	}
	reqs, hdrs := as.seen()
	last := len(reqs) - 1
	if !strings.HasPrefix(reqs[last], "POST /token ") || !strings.Contains(reqs[last], "SECRET-CODE") || !strings.HasPrefix(hdrs[last].Get("Authorization"), "Basic ") {
		t.Errorf("308 within the origin: %q %v", reqs[last], hdrs[last])
	}
}

// Dynamic registration, whose answer may hold a client secret, is never
// sent on to another origin.
func TestRegistrationRedirectRefused(t *testing.T) {
	other := newHostLog(t, nil)
	s := newRegServer(t)
	a, _ := newTestAuthorizer(t, s.URL+"/mcp", nil)
	d := discoveryFor(s, nil)
	redirector := newHostLog(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/register", http.StatusPermanentRedirect)
	})
	d.AS.RegistrationEndpoint = redirector.URL + "/register"
	_, err := a.register(ctxT(t), d, "http://127.0.0.1:1/callback")
	if !errors.Is(err, transport.ErrRedirect) {
		t.Errorf("err = %v", err)
	}
	if reqs, _ := other.seen(); len(reqs) != 0 {
		t.Errorf("the other origin got %q", reqs)
	}
}

// Discovery follows a metadata document that moved within its origin.
func TestDiscoveryFollowsRedirects(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/prm.json", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/as.json", http.StatusFound)
	})
	mux.HandleFunc("/prm.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/as.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(asDoc(base))
	})
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	a, _ := newTestAuthorizer(t, base+"/mcp", nil)
	d, err := a.discover(ctxT(t), challenge(`Bearer error="invalid_token"`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Issuer != base || d.ResourceMetadataURL != base+"/.well-known/oauth-protected-resource/mcp" || d.AS.TokenEndpoint != base+"/token" {
		t.Errorf("discovery = %+v", d)
	}
}
