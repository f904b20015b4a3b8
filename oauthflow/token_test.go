package oauthflow

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// fakeAS is an MCP server's protected resource metadata and its
// authorization server on one origin, whose authorization endpoint
// redirects the browser straight back (with the answer authz makes) and
// whose token endpoint answers with token. It counts the authorizations.
type fakeAS struct {
	*httptest.Server
	authz      func(cb url.Values)
	token      func(w http.ResponseWriter, r *http.Request)
	register   func(w http.ResponseWriter, r *http.Request)
	authorized atomic.Int32
	// suffix, when set, ends the token and registration endpoints' URLs
	// in the metadata (a query the server chose).
	suffix string
}

func newFakeAS(t *testing.T) *fakeAS {
	s := &fakeAS{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := s.URL
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"registration_endpoint":%q,"code_challenge_methods_supported":["S256"]}`,
				base, base+"/authorize", base+"/token"+s.suffix, base+"/register"+s.suffix)
		case "/register":
			if s.register != nil {
				s.register(w, r)
				return
			}
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"client_id":"c1"}`)
		case "/authorize":
			s.authorized.Add(1)
			q := r.URL.Query()
			cb := url.Values{"state": {q.Get("state")}, "code": {"the-code"}, "iss": {base}}
			if s.authz != nil {
				s.authz(cb)
			}
			http.Redirect(w, r, q.Get("redirect_uri")+"?"+cb.Encode(), http.StatusFound)
		case "/token":
			w.Header().Set("Content-Type", "application/json")
			if s.token != nil {
				s.token(w, r)
				return
			}
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, `{"access_token":"at-1","token_type":"Bearer","expires_in":3600}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// getBrowser is a Browser that follows the authorization URL's redirects
// to the callback, as a browser approving at once would.
func getBrowser(t *testing.T) Browser {
	return func(u string) (<-chan error, error) {
		exited := make(chan error, 1)
		go func() {
			resp, err := http.Get(u)
			if err != nil {
				exited <- err
				return
			}
			resp.Body.Close()
		}()
		return exited, nil
	}
}

// authorizeOnce runs an authorization as after a 401 without a token.
func authorizeOnce(t *testing.T, s *fakeAS, mod func(*Config)) (*Authorizer, error, *noteLog) {
	t.Helper()
	a, notes := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) {
		c.Browser = getBrowser(t)
		if mod != nil {
			mod(c)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := a.authorize(ctx, challenge(`Bearer`), nil)
	return a, err, notes
}

// A token response mcpx cannot use is refused, saying why without the
// token: an access or refresh token that is not printable ASCII (it could
// not be sent in a header, and mcpx auth token would print it raw), and a
// token that has expired already (sending none, mcpx met 401 after 401
// and opened the browser again each time). Nothing is stored.
func TestTokenResponseRefused(t *testing.T) {
	for _, tt := range []struct{ name, body, want string }{
		{"CRLF in the access token", `{"access_token":"abc\r\nX-Evil: 1","token_type":"Bearer"}`,
			"an access token with a character no token may have (byte 3 is the control character 0x0d; RFC 6749 Appendix A.12"},
		{"ANSI in the access token", `{"access_token":"\u001b[2J","token_type":"Bearer"}`,
			"byte 0 is the control character 0x1b"},
		{"non-ASCII refresh token", `{"access_token":"ok","refresh_token":"r\u00e9","token_type":"Bearer"}`,
			"a refresh token with a character no token may have (byte 1 is the non-ASCII byte 0xc3; RFC 6749 Appendix A.17"},
		{"expired", `{"access_token":"ok","token_type":"Bearer","expires_in":-100}`,
			"the authorization server issued a token that has expired already (expires_in -100): mcpx cannot use it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAS(t)
			s.token = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tt.body) }
			store := NewStore(t.TempDir())
			a, err, notes := authorizeOnce(t, s, func(c *Config) { c.Store = store })
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrAuthorization) {
				t.Fatalf("err = %v", err)
			}
			for _, secret := range []string{"X-Evil", "\x1b", "r\u00e9"} {
				if strings.Contains(err.Error(), secret) || strings.Contains(notes.String(), secret) {
					t.Errorf("the token shows: %q\n%s", err, notes)
				}
			}
			if a.Current() != nil {
				t.Errorf("the token was taken: %+v", a.Current())
			}
			if recs, _ := store.Tokens(); len(recs) != 0 {
				t.Errorf("stored: %v", tokensOf(recs))
			}
		})
	}
}

// Text an authorization server (or a page forging its redirect) puts in
// an error reaches the message bounded and with its control characters
// escaped: the callback's error and error_description and its iss, the
// token endpoint's and the registration endpoint's error_description. A
// description of 20 kB made a message of 20 kB on one line.
func TestServerTextBounded(t *testing.T) {
	long := "\x1b]0;title\x07\x1b[2J" + strings.Repeat("z", 20000)
	for _, tt := range []struct {
		name string
		set  func(s *fakeAS)
		want string
	}{
		{"callback error", func(s *fakeAS) {
			s.authz = func(cb url.Values) {
				cb.Del("code")
				cb.Set("error", "access_denied\x1b[31m")
				cb.Set("error_description", long)
			}
		}, `the authorization server refused: access_denied\x1b[31m: \x1b]0;title\x07\x1b[2Jzzz`},
		{"callback iss", func(s *fakeAS) {
			s.authz = func(cb url.Values) { cb.Set("iss", "https://evil.example/"+long) }
		}, `the authorization response says it comes from issuer "https://evil.example/\x1b]0;title\x07\x1b[2Jzzz`},
		{"token endpoint", func(s *fakeAS) {
			s.token = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": long})
			}
		}, `/token answered HTTP 400: invalid_grant: \x1b]0;title\x07\x1b[2Jzzz`},
		{"token endpoint HTML", func(s *fakeAS) {
			s.token = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, "<h1>"+long)
			}
		}, `/token answered HTTP 502: HTML page: \x1b]0;title\x07\x1b[2Jzzz`},
		{"registration", func(s *fakeAS) {
			s.register = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client_metadata", "error_description": long})
			}
		}, `/register was refused: HTTP 400: invalid_client_metadata: \x1b]0;title\x07\x1b[2Jzzz`},
		{"token endpoint URL", func(s *fakeAS) {
			s.suffix = "?x=" + strings.Repeat("z", 100<<10)
			s.token = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			}
		}, `/token?x=zzz`},
		{"registration endpoint URL", func(s *fakeAS) {
			s.suffix = "?x=" + strings.Repeat("z", 100<<10)
			s.register = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client_metadata"})
			}
		}, `/register?x=zzz`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAS(t)
			tt.set(s)
			_, err, _ := authorizeOnce(t, s, nil)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			// A page's text is cut shorter, as its summary (transport.HTMLSummary).
			cut := "… ("
			if strings.Contains(tt.want, "HTML page") {
				cut = "zzz…"
			}
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, cut) || len(msg) > 1000 || strings.ContainsAny(msg, "\x1b\x07") {
				t.Errorf("%d bytes: %q", len(msg), msg)
			}
		})
	}
}

// A wait that runs out says what was waited for, as a
// transport.WaitError: the browser (ErrNoResponse), or the endpoint that
// did not answer. A token endpoint that never answered was reported as
// "no authorization response: context deadline exceeded", which mcpx
// explained as a browser authorization that took longer than --timeout,
// even for client_credentials.
func TestTimeoutSaysWhatWasWaitedFor(t *testing.T) {
	for _, tt := range []struct {
		name     string
		grant    Grant
		browser  bool
		set      func(s *fakeAS, hang func(http.ResponseWriter, *http.Request))
		want     string
		browserW bool
	}{
		{"token endpoint", GrantAuthorizationCode, true, func(s *fakeAS, hang func(http.ResponseWriter, *http.Request)) { s.token = hang },
			"the OAuth token endpoint http://127.0.0.1:", false},
		{"client credentials", GrantClientCredentials, false, func(s *fakeAS, hang func(http.ResponseWriter, *http.Request)) { s.token = hang },
			"/token did not answer: context deadline exceeded", false},
		{"registration", GrantAuthorizationCode, true, func(s *fakeAS, hang func(http.ResponseWriter, *http.Request)) { s.register = hang },
			"the OAuth registration endpoint http://127.0.0.1:", false},
		{"browser", GrantAuthorizationCode, false, func(*fakeAS, func(http.ResponseWriter, *http.Request)) {},
			"the browser was not sent to http://127.0.0.1:", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAS(t)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			tt.set(s, func(w http.ResponseWriter, r *http.Request) { <-release })
			a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) {
				c.Grant, c.ClientID, c.ClientSecret = tt.grant, "", ""
				if tt.grant == GrantClientCredentials {
					c.ClientID, c.ClientSecret = "cid", "secret"
				}
				// A browser that never comes back to the callback.
				c.Browser = func(string) (<-chan error, error) { return nil, nil }
				if tt.browser {
					c.Browser = getBrowser(t)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := a.authorize(ctx, challenge(`Bearer`), nil)
			// A WaitError: a request's timeout says what it waited for.
			var we *transport.WaitError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, context.DeadlineExceeded) ||
				errors.Is(err, ErrNoResponse) != tt.browserW || !errors.As(err, &we) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// A token endpoint (or a proxy's error page) that echoes the request in
// its error shows no secret of it: the client secret, as sent in Basic or
// in the body, the code and its verifier, the refresh token. They were
// printed as the endpoint sent them ('answered HTTP 500: <pre>
// Authorization: Basic Y2lkOnRvcC1zZWNyZXQ= …', 'code=the-code&code_verifier=…').
func TestTokenErrorRedactsRequestSecrets(t *testing.T) {
	s := newFakeAS(t)
	s.token = func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "<pre>Authorization: %s\n%s\n%v</pre>", r.Header.Get("Authorization"), r.PostForm.Encode(), r.PostForm)
	}
	secrets := []string{"s&cret/1", "s%26cret%2F1", base64.StdEncoding.EncodeToString([]byte("cid:s%26cret%2F1")), "the-code", "rt-1"}
	check := func(t *testing.T, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%q shows in %q", s, err)
			}
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q", err, w)
			}
		}
	}
	t.Run("client_secret_basic", func(t *testing.T) {
		_, err, _ := authorizeOnce(t, s, func(c *Config) { c.Grant, c.ClientID, c.ClientSecret = GrantClientCredentials, "cid", "s&cret/1" })
		check(t, err, "answered HTTP 500: HTML page: Authorization: [redacted]", " grant_type=client_credentials")
	})
	t.Run("client_secret_post", func(t *testing.T) {
		a, _ := newTestAuthorizer(t, s.URL+"/mcp", nil)
		_, err := a.tokenRequest(ctxT(t), s.URL+"/token", s.URL, &Client{ID: "cid", Secret: "s&cret/1", AuthMethod: "client_secret_post"}, url.Values{}, nil, nil)
		check(t, err, "client_secret=[redacted]", "client_secret:[redacted]")
	})
	t.Run("authorization code", func(t *testing.T) {
		_, err, _ := authorizeOnce(t, s, nil)
		check(t, err, "code=[redacted]&code_verifier=[redacted]&grant_type=authorization_code")
	})
	t.Run("refresh", func(t *testing.T) {
		a, _ := newTestAuthorizer(t, s.URL+"/mcp", nil)
		_, err := a.refresh(ctxT(t), &TokenRecord{Resource: s.URL + "/mcp", Issuer: s.URL, TokenEndpoint: s.URL + "/token", RefreshToken: "rt-1", Client: Client{ID: "c1", AuthMethod: "none"}})
		check(t, err, "refresh_token=[redacted]")
	})
	// A token may hold spaces (VSCHAR): it is redacted before the white
	// space of the excerpt is collapsed, which would make it unrecognised.
	t.Run("refresh token with spaces", func(t *testing.T) {
		a, _ := newTestAuthorizer(t, s.URL+"/mcp", nil)
		_, err := a.refresh(ctxT(t), &TokenRecord{Resource: s.URL + "/mcp", Issuer: s.URL, TokenEndpoint: s.URL + "/token", RefreshToken: "rt  zq9", Client: Client{ID: "c1", AuthMethod: "none"}})
		if check(t, err, "refresh_token=[redacted]"); strings.Contains(err.Error(), "zq9") {
			t.Errorf("the refresh token shows: %q", err)
		}
	})
}

// Config.ReadLine is asked for a pasted address only while the wait for
// the browser lasts: when the browser comes back to the callback, the
// question's context ends and no other line is asked for, so the lines
// typed next go to whoever asks next (a prompt, the REPL's editor).
func TestReadLineOnlyWhileWaiting(t *testing.T) {
	s := newFakeAS(t)
	var asked atomic.Int32
	ended := make(chan error, 10)
	_, err, _ := authorizeOnce(t, s, func(c *Config) {
		c.Browser = nil // --no-browser: the URL is shown …
		c.Notify = func(msg string) {
			// … and opened in a browser here all the same.
			if i := strings.Index(msg, s.URL+"/authorize?"); i >= 0 {
				getBrowser(t)(strings.Fields(msg[i:])[0])
			}
		}
		c.ReadLine = func(ctx context.Context, prompt string) (string, error) {
			asked.Add(1)
			<-ctx.Done()
			ended <- ctx.Err()
			return "", ctx.Err()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the question ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the question for a pasted address outlived the authorization")
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("asked for %d lines", n)
	}
}

// A token endpoint's answer that is no token response is one line in
// mcpx's words, naming the endpoint and what was wrong, with what it sent
// bounded and its secrets redacted. These were x/oauth2's errors: "oauth2:
// cannot parse json: invalid character '<' looking for beginning of
// value", "oauth2: server response missing access_token", "json: cannot
// unmarshal number into Go struct field tokenJSON.access_token of type
// string" (and an HTML page's text, or an echo of the code, was never
// shown for a 200).
func TestTokenResponseUnreadable(t *testing.T) {
	for _, tt := range []struct{ name, ct, body, want string }{
		{"login page", "text/html", "<html><body>Sign in\n to continue</body></html>",
			"answered HTTP 200 with text/html that is not a token response (it is not valid JSON): HTML page: Sign in to continue"},
		{"no access_token", "application/json", `{"token_type":"Bearer","refresh_token":"rt-leak"}`,
			"answered HTTP 200 with a token response mcpx cannot use: it has no access_token (its members: refresh_token, token_type)"},
		{"empty object", "application/json", `{}`, "it has no access_token (it is empty)"},
		{"empty body", "application/json", ``, "answered HTTP 200 (application/json) with no body, not a token response"},
		{"no content type", "", `hello`, "answered HTTP 200 with no Content-Type that is not a token response (it is not valid JSON): hello"},
		{"plain text", "text/plain", `hello world`, "with text/plain that is not a token response (it is neither JSON nor form-encoded parameters): hello world"},
		{"array", "application/json", `[]`, "with application/json that is not a token response (it is an array, not an object): []"},
		{"null", "application/json", `null`, "(it is null, not an object): null"},
		{"access_token a number", "application/json", `{"access_token":5,"token_type":"Bearer"}`,
			"with a token response mcpx cannot use: its access_token is a number, not a string"},
		{"token_type a number", "application/json", `{"access_token":"x","token_type":5}`, "its token_type is a number, not a string"},
		{"expires_in an object", "application/json", `{"access_token":"x","expires_in":{}}`, "its expires_in is an object, not a number of seconds"},
		{"echo of the request", "text/html", `<pre>code=the-code&access_token=at-leak</pre>`,
			"with text/html that is not a token response (it is not valid JSON): HTML page: code=[redacted]&access_token=[redacted]"},
		{"error with 200", "application/json", `{"error":"invalid_grant","error_description":"the-code was used"}`,
			"answered HTTP 200: invalid_grant: [redacted] was used"},
		{"cut short", "application/json", `{"access_token":"at-leak`, "(it is not valid JSON)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAS(t)
			s.token = func(w http.ResponseWriter, r *http.Request) {
				if tt.ct == "" {
					w.Header()["Content-Type"] = nil
				} else {
					w.Header().Set("Content-Type", tt.ct)
				}
				io.WriteString(w, tt.body)
			}
			_, err, notes := authorizeOnce(t, s, nil)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, "the token endpoint "+s.URL+"/token answered HTTP 200") || !strings.Contains(msg, tt.want) ||
				strings.ContainsAny(msg, "\n") || strings.Contains(msg, "oauth2") || strings.Contains(msg, "Go ") || !errors.Is(err, ErrAuthorization) {
				t.Errorf("err = %q\nwant %q", msg, tt.want)
			}
			for _, secret := range []string{"the-code", "at-leak", "rt-leak"} {
				if strings.Contains(msg, secret) || strings.Contains(notes.String(), secret) {
					t.Errorf("%q shows: %q", secret, msg)
				}
			}
		})
	}
}

// What servers send that x/oauth2 took, mcpx takes too: form-encoded
// parameters, expires_in as a string, and more (a fraction, an array of
// scopes); token types are compared without regard to case.
func TestTokenResponseVariants(t *testing.T) {
	for _, tt := range []struct {
		name, ct, body string
		expiry         time.Duration
		scopes         string
	}{
		{"form", "application/x-www-form-urlencoded", "access_token=at&token_type=bearer&expires_in=60&scope=a+b", time.Minute, "a b"},
		{"expires_in string", "application/json", `{"access_token":"at","token_type":"BEARER","expires_in":" 120 "}`, 2 * time.Minute, ""},
		{"expires_in fraction", "application/json", `{"access_token":"at","token_type":"Bearer","expires_in":60.9}`, time.Minute, ""},
		{"expires_in huge", "application/json", `{"access_token":"at","token_type":"Bearer","expires_in":1e300}`, math.MaxInt32 * time.Second, ""},
		{"scope array", "application/json", `{"access_token":"at","token_type":"Bearer","scope":["x","y"]}`, 0, "x y"},
		{"json as text/plain", "text/plain", `{"access_token":"at"}`, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAS(t)
			s.token = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ct)
				io.WriteString(w, tt.body)
			}
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			a, err, _ := authorizeOnce(t, s, func(c *Config) { c.Now = func() time.Time { return now } })
			if err != nil {
				t.Fatal(err)
			}
			rec := a.Current()
			var want time.Time
			if tt.expiry != 0 {
				want = now.Add(tt.expiry)
			}
			if rec.AccessToken != "at" || !rec.Expiry.Equal(want) || strings.Join(rec.Scopes, " ") != tt.scopes {
				t.Errorf("token %q, expiry %v (want %v), scopes %q", rec.AccessToken, rec.Expiry, want, rec.Scopes)
			}
		})
	}
}

// Without a store (no configuration directory: Config.Store nil), a token
// obtained in this run is refreshed and kept for the run. It panicked
// (a nil *Store's saveToken) the first time the token of a long session
// was refreshed.
func TestRefreshWithoutStore(t *testing.T) {
	s := newFakeAS(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.Now = func() time.Time { return now } })
	a.rec = &TokenRecord{Resource: s.URL + "/mcp", Issuer: s.URL, TokenEndpoint: s.URL + "/token", AccessToken: "at-old", RefreshToken: "rt",
		Client: Client{ID: "c", AuthMethod: "none"}, Updated: now, Expiry: now.Add(10 * time.Second)}
	a.loaded, a.origin = true, fromFlow
	now = now.Add(6 * time.Second)
	h, err := a.Authorization(ctxT(t))
	if err != nil || h != "Bearer at-1" || a.StoreError() != nil {
		t.Errorf("%q, %v, StoreError %v", h, err, a.StoreError())
	}
}

// A token issued for less than the refresh margin is refreshed once half
// its life has passed, not before every request: each refresh of a token
// with expires_in 10 issued another one that was "about to expire", so
// every MCP request cost a token request first.
func TestShortLivedTokenNotRefreshedEachTime(t *testing.T) {
	s := newFakeAS(t)
	var refreshes atomic.Int32
	s.token = func(w http.ResponseWriter, r *http.Request) {
		refreshes.Add(1)
		io.WriteString(w, `{"access_token":"at-new","token_type":"Bearer","expires_in":10}`)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.Now = func() time.Time { return now } })
	a.rec = &TokenRecord{Resource: s.URL + "/mcp", Issuer: s.URL, TokenEndpoint: s.URL + "/token", AccessToken: "at-old", RefreshToken: "rt",
		Client: Client{ID: "c", AuthMethod: "none"}, Updated: now, Expiry: now.Add(10 * time.Second)}
	a.loaded = true
	for _, step := range []struct {
		after     time.Duration
		token     string
		refreshes int32
	}{{0, "at-old", 0}, {4 * time.Second, "at-old", 0}, {2 * time.Second, "at-new", 1}, {time.Second, "at-new", 1}, {3 * time.Second, "at-new", 1}, {2 * time.Second, "at-new", 2}} {
		now = now.Add(step.after)
		h, err := a.Authorization(ctxT(t))
		if err != nil || h != "Bearer "+step.token || refreshes.Load() != step.refreshes {
			t.Fatalf("after %v more: %q, %v, %d refreshes (want %s, %d)", step.after, h, err, refreshes.Load(), step.token, step.refreshes)
		}
	}
}

// A stored token that has expired and whose refresh the authorization
// server refuses (the refresh token revoked, or rotated away by a client
// of the grant mcpx does not know of) leaves mcpx without a token. Where
// no new authorization may start, the error says why the stored token
// did not serve: it said only "no usable stored token" (or that
// authorization needs a person), while mcpx auth status showed the token
// and its refresh token, and the token endpoint's answer was seen with -v
// only.
func TestFailedRefreshSaysWhy(t *testing.T) {
	s := newFakeAS(t)
	s.token = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"refresh token revoked"}`)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"token", nil, "no usable stored token for " + s.URL + "/mcp (refreshing it failed: the token endpoint " + s.URL +
			"/token answered HTTP 400: invalid_grant: refresh token revoked)"},
		{"stored only", func(c *Config) { c.StoredOnly = true }, "authorization needs a person: no usable stored token for " + s.URL +
			"/mcp (refreshing it failed: the token endpoint " + s.URL + "/token answered HTTP 400: invalid_grant: refresh token revoked), and only stored tokens may be used"},
		{"no interaction", func(c *Config) { c.NoInteraction = "nobody is here" }, "authorization needs a person (refreshing the stored token failed: the token endpoint " + s.URL +
			"/token answered HTTP 400: invalid_grant: refresh token revoked), but nobody is here"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := NewStore(t.TempDir())
			a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) {
				c.Now, c.Store = func() time.Time { return now }, store
				if tt.mod != nil {
					tt.mod(c)
				}
			})
			rec := &TokenRecord{Resource: s.URL + "/mcp", Issuer: s.URL, TokenEndpoint: s.URL + "/token", AccessToken: "at-old", RefreshToken: "rt-old",
				Client: Client{ID: "c", AuthMethod: "none"}, Updated: now.Add(-2 * time.Hour), Expiry: now.Add(-time.Hour)}
			if err := store.SaveToken(ctxT(t), rec); err != nil {
				t.Fatal(err)
			}
			var err error
			if tt.mod == nil {
				_, _, err = a.Token(ctxT(t))
			} else {
				if h, err := a.Authorization(ctxT(t)); h != "" || err != nil {
					t.Fatalf("Authorization = %q, %v", h, err)
				}
				_, err = a.Unauthorized(ctxT(t), &transport.UnauthorizedError{Method: "POST", URL: s.URL + "/mcp", Status: http.StatusUnauthorized,
					Challenge: `Bearer resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`})
			}
			if err == nil || !errors.Is(err, ErrAuthorization) || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "rt-old") {
				t.Error("the refresh token is in the error")
			}
		})
	}
}

// A token endpoint that answers with an HTML page — a proxy's error page,
// a login form — is named by its title, as transport names the pages an
// MCP server answers with: its markup cut to 300 bytes said nothing (a
// page's <head> of styles fills them long before its title), and the
// title is what tells "502 Bad Gateway" from "Sign in". A page without a
// title shows the start of its text. What the page echoes of the
// request is redacted, its title's too.
func TestTokenAnswerHTMLPage(t *testing.T) {
	head := "<!DOCTYPE html>\n<html><head>" + strings.Repeat(`<meta name="x" content="y">`, 20)
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"error page", http.StatusBadGateway, head + "<title>502 Bad Gateway &ndash; Edge</title></head><body><h1>Bad gateway</h1></body></html>",
			`answered HTTP 502: HTML page "502 Bad Gateway – Edge"`},
		{"no title", http.StatusInternalServerError, "<html><body><p>Upstream\n  failed</p><script>x()</script></body></html>",
			`answered HTTP 500: HTML page: Upstream failed`},
		{"title echoes the code", http.StatusBadRequest, head + "<title>bad code the-code</title></head></html>",
			`answered HTTP 400: HTML page "bad code [redacted]"`},
		{"login page with 200", http.StatusOK, head + "<title>Sign in</title></head><body>code=the-code</body></html>",
			`answered HTTP 200 with text/html that is not a token response (it is not valid JSON): HTML page "Sign in"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAS(t)
			s.token = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}
			_, err, _ := authorizeOnce(t, s, nil)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "<") || strings.Contains(msg, "the-code") {
				t.Errorf("err = %q\nwant %q", msg, tt.want)
			}
		})
	}
}
