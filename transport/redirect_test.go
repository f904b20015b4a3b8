package transport_test

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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/transport"
)

// storedToken is a RequestAuthorizer like the OAuth one with a stored
// DPoP-bound token: an Authorization header and a proof on every request.
type storedToken struct{}

func (storedToken) Authorization(context.Context) (string, error) { return "", nil }
func (storedToken) Unauthorized(context.Context, *transport.UnauthorizedError) (bool, error) {
	return false, nil
}
func (storedToken) AuthorizeRequest(_ context.Context, r *http.Request) error {
	r.Header.Set("Authorization", "DPoP SECRET-TOKEN")
	r.Header.Set("DPoP", "SECRET-PROOF")
	return nil
}

// userHeaders are -H headers: a cookie and a header mcpx cannot know is
// a credential.
func userHeaders() http.Header {
	return http.Header{"Cookie": {"session=SECRET-COOKIE"}, "X-Custom": {"SECRET-HEADER"}}
}

// sdkMux serves the SDK test server at /mcp; wrap, when set, sees every
// request first.
func sdkMux(wrap func(w http.ResponseWriter, r *http.Request, next http.Handler)) http.Handler {
	srv := testservers.NewServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wrap != nil {
			wrap(w, r, h)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// noSecrets fails when a request carried a credential or a user header.
func noSecrets(t *testing.T, got []seen) {
	t.Helper()
	for _, s := range got {
		for k, vs := range s.Header {
			if strings.Contains(strings.Join(vs, " "), "SECRET") {
				t.Errorf("%s %s reached the other origin", k, vs)
			}
		}
		for _, h := range []string{"Authorization", "Dpop", "Cookie", "X-Custom", "Mcp-Session-Id", "Referer", "Last-Event-Id"} {
			if s.Header.Get(h) != "" {
				t.Errorf("%s: %q reached the other origin", h, s.Header.Get(h))
			}
		}
	}
}

// A redirect to another origin — the same host on another port, or
// another name for the same host and port — is followed without any
// credential: no Authorization or DPoP proof from the Authorizer, none of
// the -H headers; only what describes the client. -v says so, naming what
// it dropped. (The request is the legacy transport's GET: the Streamable
// HTTP GET stream's and DELETE's redirects there are refused, see
// TestGetStreamRedirectToAnotherOriginRefused and
// TestDeleteRedirectToAnotherOriginRefused, and a POST's, which keeps its
// body, too.)
func TestRedirectToAnotherOriginDropsCredentials(t *testing.T) {
	t.Parallel()
	other := newLog()
	otherSrv := httptest.NewServer(other.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no streams here", http.StatusNotFound)
	})))
	t.Cleanup(otherSrv.Close)

	for _, tc := range []struct {
		name string
		to   func(origin string) string
	}{
		{"another port", func(string) string { return otherSrv.URL + "/elsewhere" }},
		{"another host name", func(origin string) string {
			return strings.Replace(origin, "127.0.0.1", "localhost", 1) + "/elsewhere"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			elsewhere := newLog()
			var origin string
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					elsewhere.record(r)
					http.Error(w, "no streams here", http.StatusNotFound)
					return
				}
				http.Redirect(w, r, tc.to(origin), http.StatusTemporaryRedirect)
			}))
			t.Cleanup(ts.Close)
			origin = ts.URL
			before := len(other.all())
			rec := newRecorder()
			if _, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeSSE, Header: userHeaders(),
				UserAgent: "mcpx-test", Authorizer: storedToken{}}, rec); err == nil {
				t.Fatal("connected to a stream that is not there")
			}
			got := append(elsewhere.all(), other.all()[before:]...)
			if len(got) != 1 || got[0].Method != http.MethodGet {
				t.Fatalf("the other origin got %d requests, want the redirected GET", len(got))
			}
			noSecrets(t, got)
			h := got[0].Header
			if h.Get("User-Agent") != "mcpx-test" || h.Get("Accept") != "text/event-stream" {
				t.Errorf("the headers that describe the client did not go on: %v", h)
			}
			notes := rec.eventText(transport.EventNote)
			want := "HTTP 307 redirect to " + tc.to(origin) + ", another origin: following it without credentials (dropped Authorization, Cookie, Dpop, Referer, X-Custom)"
			if !strings.Contains(notes, want) {
				t.Errorf("notes lack %q:\n%s", want, notes)
			}
		})
	}
}

// The DELETE that ends a Streamable HTTP session, redirected to another
// origin, is not followed: it names the session, which is the first
// origin's, and another origin has no session of it to end (nor gets the
// credentials that would let it). The other origin gets nothing, and -v
// says why. mcpx followed it there without credentials.
func TestDeleteRedirectToAnotherOriginRefused(t *testing.T) {
	t.Parallel()
	other := newLog()
	otherSrv := httptest.NewServer(other.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	t.Cleanup(otherSrv.Close)
	ts := httptest.NewServer(sdkMux(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodDelete {
			http.Redirect(w, r, otherSrv.URL+"/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	rec := newRecorder()
	_, conn := mustDial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeStreamable, Header: userHeaders(),
		Authorizer: storedToken{}}, rec)
	conn.Close()
	if got := other.all(); len(got) != 0 {
		t.Errorf("the other origin got %d requests: %s %v", len(got), got[0].Method, got[0].Header)
	}
	notes := rec.eventText(transport.EventNote)
	want := "refused to follow the HTTP 307 redirect to " + otherSrv.URL + "/elsewhere: it points at another origin, and mcpx ends a session only at the origin that began it"
	if !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
}

// A redirect to another origin that would resend the request's body (307
// and 308 keep it: here the initialize message) is refused: the other
// origin gets nothing, and the error names both URLs.
func TestRedirectWithBodyRefused(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		other := newLog()
		otherSrv := httptest.NewServer(other.wrap(http.NotFoundHandler()))
		t.Cleanup(otherSrv.Close)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, otherSrv.URL+"/mcp", status)
		}))
		t.Cleanup(ts.Close)
		_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Header: userHeaders(), Authorizer: transport.BearerToken("SECRET-BEARER")}, nil)
		var re *transport.RedirectError
		if !errors.Is(err, transport.ErrRedirect) || !errors.Is(err, transport.ErrTransport) || !errors.As(err, &re) {
			t.Fatalf("HTTP %d: err = %v, want a refused redirect", status, err)
		}
		if re.Status != status || re.From != ts.URL+"/mcp" || re.To != otherSrv.URL+"/mcp" || re.Method != "POST" {
			t.Errorf("HTTP %d: %+v", status, re)
		}
		msg := err.Error()
		if !strings.Contains(msg, "POST "+ts.URL+"/mcp") || !strings.Contains(msg, "redirect to "+otherSrv.URL+"/mcp") {
			t.Errorf("HTTP %d: the message does not name both URLs: %s", status, msg)
		}
		if n := len(other.all()); n != 0 {
			t.Errorf("HTTP %d: the other origin got %d requests", status, n)
		}
	}
}

// A POST answered with 301, 302 or 303 is refused, within the origin too:
// Go's client would send a GET without the message in its place and take
// the GET's answer for the response (the server never got initialize).
func TestRedirectChangingMethodRefused(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		gets := newLog()
		mux := http.NewServeMux()
		mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/mcp2", status)
		})
		mux.Handle("/mcp2", gets.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"GET-ANSWER","version":"1"}}}`)
		})))
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeStreamable}, nil)
		var re *transport.RedirectError
		if !errors.As(err, &re) || re.Status != status || re.Method != "POST" || !strings.Contains(err.Error(), "would turn the POST into a GET without its body") {
			t.Errorf("HTTP %d: err = %v, want a refused redirect", status, err)
		}
		if n := len(gets.all()); n != 0 {
			t.Errorf("HTTP %d: the redirect was followed (%d requests)", status, n)
		}
	}
}

// A redirect from https to http is never followed, even without a body;
// the policy applies to a client the caller supplied (without a
// CheckRedirect of its own) too.
func TestRedirectHTTPSToHTTPRefused(t *testing.T) {
	t.Parallel()
	plain := newLog()
	plainSrv := httptest.NewServer(plain.wrap(http.NotFoundHandler()))
	t.Cleanup(plainSrv.Close)
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, plainSrv.URL+"/mcp", status)
		}))
		t.Cleanup(tlsSrv.Close)
		_, _, err := dial(t, transport.HTTPOptions{URL: tlsSrv.URL + "/mcp", Client: tlsSrv.Client(), Authorizer: transport.BearerToken("SECRET-BEARER")}, nil)
		if !errors.Is(err, transport.ErrRedirect) || !strings.Contains(err.Error(), "leaves https") ||
			!strings.Contains(err.Error(), tlsSrv.URL+"/mcp") || !strings.Contains(err.Error(), plainSrv.URL+"/mcp") {
			t.Errorf("HTTP %d: err = %v", status, err)
		}
	}
	if n := len(plain.all()); n != 0 {
		t.Errorf("the http server got %d requests", n)
	}
}

// A redirect within the origin keeps every header: the server's real
// endpoint gets the bearer token and the -H headers, and the session
// works; -v says it followed.
func TestRedirectSameOriginKeepsCredentials(t *testing.T) {
	t.Parallel()
	var refused atomic.Int32
	ts := httptest.NewServer(sdkMux(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == "/mcp" {
			http.Redirect(w, r, "/real", http.StatusPermanentRedirect)
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Custom") != "SECRET-HEADER" {
			refused.Add(1)
			http.Error(w, "credentials please", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeStreamable, Header: userHeaders(),
		Authorizer: transport.BearerToken("tok")}, rec)
	if got := toolText(t, sess, "echo", map[string]any{"message": "hi"}); got != "Echo: hi" {
		t.Errorf("echo = %q", got)
	}
	if n := refused.Load(); n != 0 {
		t.Errorf("%d redirected requests lacked the credentials", n)
	}
	if notes := rec.eventText(transport.EventNote); !strings.Contains(notes, "POST "+ts.URL+"/mcp: HTTP 308 redirect to "+ts.URL+"/real (same origin): following it") {
		t.Errorf("notes:\n%s", notes)
	}
}

// Redirects are capped: a loop ends after MaxRedirects with a clear error.
func TestRedirectLoopCapped(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		next := "/a"
		if r.URL.Path == "/a" {
			next = "/b"
		}
		http.Redirect(w, r, next, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(ts.Close)
	_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp"}, nil)
	if !errors.Is(err, transport.ErrRedirect) || !strings.Contains(err.Error(), "mcpx follows at most 10") {
		t.Errorf("err = %v", err)
	}
	if n := hits.Load(); n != transport.MaxRedirects+1 {
		t.Errorf("%d requests, want the first and %d redirects", n, transport.MaxRedirects)
	}
}

// Once a chain of redirects has left the origin, credentials never come
// back, not even on a hop that returns to the first origin; the client
// NewHTTPClient makes (the one OAuth requests use) has the policy.
func TestRedirectChainStaysStripped(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var back http.Header
	var origin string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, origin+"/back", http.StatusFound)
	}))
	t.Cleanup(other.Close)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/back" {
			mu.Lock()
			back = r.Header.Clone()
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.Redirect(w, r, other.URL+"/away", http.StatusFound)
	}))
	t.Cleanup(ts.Close)
	origin = ts.URL
	client, err := transport.NewHTTPClient(transport.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(callCtx(t), http.MethodGet, ts.URL+"/start", nil)
	req.Header = userHeaders()
	req.Header.Set("Authorization", "Bearer SECRET-BEARER")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != http.StatusNoContent || back == nil {
		t.Fatalf("status %d; /back reached: %v", resp.StatusCode, back != nil)
	}
	noSecrets(t, []seen{{Header: back}})
}

// A refusal from another origin, reached by a redirect that carried no
// credentials, is not the Authorizer's business: new credentials would not
// go there either. The error names the origin that refused. (The request
// is the legacy transport's GET: a POST is never redirected to another
// origin.)
func TestRedirectRefusalElsewhereNotAuthorized(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	t.Cleanup(other.Close)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusFound)
	}))
	t.Cleanup(ts.Close)
	auth := &stubbornAuth{}
	rec := newRecorder()
	_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeSSE, Authorizer: auth}, rec)
	var ue *transport.UnauthorizedError
	if !errors.As(err, &ue) || ue.URL != ts.URL+"/mcp" || !ue.LeftOrigin ||
		!strings.Contains(err.Error(), "GET "+ts.URL+"/mcp (answered by "+other.URL+"/mcp): HTTP 401 Unauthorized") {
		t.Fatalf("err = %v", err)
	}
	if len(auth.creds) != 0 {
		t.Errorf("the Authorizer was asked %d times", len(auth.creds))
	}
	if wire := rec.eventText(transport.EventHTTP); !strings.Contains(wire, "401 Unauthorized text/plain; charset=utf-8 ← GET "+ts.URL+"/mcp (answered by "+other.URL+"/mcp)") {
		t.Errorf("wire events:\n%s", wire)
	}
}

// An HTTP error after redirects were followed names the URL that answered
// it, as -v does, with its secrets redacted like the first URL's.
func TestRedirectedErrorNamesWhoAnswered(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone fishing", http.StatusServiceUnavailable)
	}))
	t.Cleanup(other.Close)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/mcp": // within the origin
			http.Redirect(w, r, "/moved?token=SECRET-MOVED", http.StatusTemporaryRedirect)
		case "/moved": // to another origin
			http.Redirect(w, r, other.URL+"/sse?api_key=SECRET-KEY", http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp?token=SECRET-FIRST", Mode: transport.ModeSSE}, newRecorder())
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusServiceUnavailable {
		t.Fatalf("err = %v", err)
	}
	want := "initialize: GET " + ts.URL + "/mcp?token=[redacted] (answered by " + other.URL + "/sse?api_key=[redacted]): HTTP 503 Service Unavailable: gone fishing"
	if err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// legacyStream serves an HTTP+SSE stream whose endpoint event is
// endpoint, and answers initialize POSTed to any other path on it.
func legacyStream(endpoint string) http.Handler {
	out := make(chan string, 8)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			serveSSEStream(w, r, endpoint, out, nil)
			return
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusAccepted)
		out <- `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"legacy","version":"1"}}}`
	})
}

// The endpoint event of an HTTP+SSE stream that a redirect led to another
// origin comes from that origin, to which mcpx sent no credentials: it
// cannot choose where the messages go with them. Neither a relative
// endpoint (on the other origin) nor one naming the first origin is
// used, and nothing is POSTed.
func TestLegacyEndpointFromAnotherOriginRefused(t *testing.T) {
	t.Parallel()
	var firstURL string
	for _, endpoint := range []func() string{
		func() string { return "/msg?from=other" },
		func() string { return firstURL + "/msg?from=other" },
	} {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			legacyStream(endpoint()).ServeHTTP(w, r)
		}))
		t.Cleanup(other.Close)
		first := newLog()
		ts := httptest.NewServer(first.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/sse" {
				http.Redirect(w, r, other.URL+"/sse", http.StatusTemporaryRedirect)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		})))
		t.Cleanup(ts.Close)
		firstURL = ts.URL
		_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/sse", Mode: transport.ModeSSE, Authorizer: transport.BearerToken("SECRET-TOKEN")}, nil)
		want := "the HTTP+SSE stream was answered by " + other.URL + "/sse, on another origin (a redirect led there), which cannot name where mcpx sends messages"
		if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), want) {
			t.Errorf("endpoint %s: err = %v\nwant it to say %q", endpoint(), err, want)
		}
		for _, s := range first.all() {
			if s.Method == http.MethodPost {
				t.Errorf("endpoint %s: the first origin got a POST with %q", endpoint(), s.Header.Get("Authorization"))
			}
		}
	}
}

// A relative endpoint is resolved against the URL that answered the
// stream, after the redirects within the origin (RFC 3986 section 5.1.3),
// not against the URL first asked.
func TestLegacyEndpointResolvedAgainstAnsweringURL(t *testing.T) {
	t.Parallel()
	stream := legacyStream("msg")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sse":
			http.Redirect(w, r, "/v2/sse", http.StatusTemporaryRedirect)
		case "/v2/sse", "/v2/msg":
			stream.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	_, conn := mustDial(t, transport.HTTPOptions{URL: ts.URL + "/sse", Mode: transport.ModeSSE}, nil)
	if got, want := conn.Describe(), "(messages to "+ts.URL+"/v2/msg;"; !strings.Contains(got, want) {
		t.Errorf("Describe() = %s, want it to say %s", got, want)
	}
}

// A redirect's Location is the server's to choose, at any length a header
// may have: the refusal, the notes and an error after it name the URL
// cut short.
func TestRedirectToALongURLShownShort(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", 100<<10)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusServiceUnavailable)
	}))
	t.Cleanup(other.Close)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/mcp" && r.Method == http.MethodPost:
			http.Redirect(w, r, other.URL+"/mcp?q="+long, http.StatusTemporaryRedirect)
		case r.URL.Path == "/mcp":
			http.Redirect(w, r, "/moved?q="+long, http.StatusTemporaryRedirect)
		default:
			http.Error(w, "gone", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(ts.Close)
	for _, mode := range []transport.HTTPMode{transport.ModeStreamable, transport.ModeSSE} {
		rec := newRecorder()
		_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: mode}, rec)
		if err == nil || len(err.Error()) > 2000 {
			t.Errorf("%s: err = %.300v… (%d bytes)", mode, err, len(fmt.Sprint(err)))
		}
		for _, line := range strings.Split(rec.eventText(transport.EventNote)+"\n"+rec.eventText(transport.EventHTTP), "\n") {
			if len(line) > 2000 {
				t.Errorf("%s: an event of %d bytes: %.300s…", mode, len(line), line)
			}
		}
	}
}

// The GET stream for server-initiated messages redirected to another
// origin is refused, not followed: what another origin sends would be
// taken for the server's own requests and notifications, though that
// origin got no credentials and knows nothing of the session. The other
// origin gets nothing; the person is told whatever the verbosity
// (EventDropped), once; and the session goes on, its requests answered
// on their POSTs. mcpx followed it without credentials and delivered
// what came.
func TestGetStreamRedirectToAnotherOriginRefused(t *testing.T) {
	t.Parallel()
	other := newLog()
	otherSrv := httptest.NewServer(other.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		sendSSE(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"from elsewhere"}}`+"\n\n")
		<-r.Context().Done()
	})))
	t.Cleanup(otherSrv.Close)
	ts := httptest.NewServer(sdkMux(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodGet {
			http.Redirect(w, r, otherSrv.URL+"/stream", http.StatusTemporaryRedirect)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	rec := newRecorder()
	sess, conn := mustDial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeStreamable,
		Authorizer: transport.BearerToken("SECRET-TOKEN")}, rec)
	if got := other.all(); len(got) != 0 {
		t.Errorf("the other origin got %d requests: %v", len(got), got[0].Header)
	}
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatalf("tools/list after the refusal: %v", err)
	}
	rec.mu.Lock()
	n := len(rec.notifications)
	rec.mu.Unlock()
	if n != 0 {
		t.Errorf("%d notifications delivered from the other origin", n)
	}
	want := "the server redirected its GET stream for messages of its own (GET " + ts.URL + "/mcp) to " + otherSrv.URL + "/stream, on another origin; mcpx takes the server's messages only from the origin it connected to, so this session goes on without that stream: only what comes with the answers to mcpx's requests arrives"
	if got := rec.eventText(transport.EventDropped); got != want+"\n" {
		t.Errorf("EventDropped:\n%s\nwant:\n%s", got, want)
	}
	var re *transport.RedirectError
	if err := conn.ServerStreamErr(); !errors.As(err, &re) || !strings.Contains(err.Error(), "it points at another origin") {
		t.Errorf("ServerStreamErr() = %v, want the refused redirect", err)
	}
}

// discoveringAuthorizer answers a 401 as oauthflow's Authorizer does:
// it fetches metadata with the request's context, following redirects by
// mcpx's policy, and tells what it got (on got) before declining.
type discoveringAuthorizer struct {
	url string
	got chan error
}

func (discoveringAuthorizer) Authorization(context.Context) (string, error) { return "", nil }
func (a discoveringAuthorizer) Unauthorized(ctx context.Context, _ *transport.UnauthorizedError) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url, nil)
	if err == nil {
		var resp *http.Response
		c := &http.Client{CheckRedirect: transport.RedirectPolicy(nil)}
		if resp, err = c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	select {
	case a.got <- err:
	default:
	}
	return false, nil
}

// The refusal of a redirect to another origin is the GET stream's own
// (and the DELETE's): what the Authorizer fetches when the stream is
// answered 401 (the authorization server's metadata, which may be
// redirected to another origin) is followed by the usual rules. The
// stream's mark was on the context the Authorizer was handed, and its
// discovery was refused as a stream would be.
func TestGetStreamRefusalIsNotTheAuthorizers(t *testing.T) {
	t.Parallel()
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"issuer":"x"}`))
	}))
	t.Cleanup(meta.Close)
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, meta.URL+"/.well-known/oauth-authorization-server", http.StatusFound)
	}))
	t.Cleanup(moved.Close)
	ts := httptest.NewServer(sdkMux(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodGet {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "expired", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	a := discoveringAuthorizer{url: moved.URL + "/.well-known/oauth-authorization-server", got: make(chan error, 1)}
	mustDial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeStreamable, Authorizer: a}, newRecorder())
	select {
	case err := <-a.got:
		if err != nil {
			t.Errorf("the Authorizer's metadata request, redirected to another origin: %v", err)
		}
	case <-time.After(testwait.Bound):
		t.Fatal("the GET stream's 401 never reached the Authorizer")
	}
}
