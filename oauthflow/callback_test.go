package oauthflow

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/listenguard"
)

func getPage(t *testing.T, u string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func pending(cs *callbackServer) (authResponse, bool) {
	select {
	case r := <-cs.results:
		return r, true
	default:
		return authResponse{}, false
	}
}

// The callback listens on 127.0.0.1 only, ignores responses to other
// requests (state), takes the first matching one and says so to the
// browser, and answers later ones without using them.
func TestCallbackServer(t *testing.T) {
	cs, err := listenCallback(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.close()
	if ip := cs.ln.Addr().(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("listening on %v", ip)
	}
	if !strings.HasPrefix(cs.redirect, "http://127.0.0.1:") || !strings.HasSuffix(cs.redirect, "/callback") {
		t.Errorf("redirect %q", cs.redirect)
	}
	cs.start(&responseCheck{state: "s1", issuer: "https://as.example", issRequired: true})

	if code, _ := getPage(t, strings.TrimSuffix(cs.redirect, "/callback")+"/other?state=s1&code=c"); code != http.StatusNotFound {
		t.Errorf("another path answered %d", code)
	}
	code, body := getPage(t, cs.redirect+"?state=forged&code=c&iss=https://as.example")
	if code != http.StatusBadRequest || !strings.Contains(body, "state does not match") {
		t.Errorf("forged state: %d %s", code, body)
	}
	if r, ok := pending(cs); ok {
		t.Fatalf("a forged response was delivered: %+v", r)
	}
	code, body = getPage(t, cs.redirect+"?"+url.Values{"state": {"s1"}, "code": {"the-code"}, "iss": {"https://as.example"}}.Encode())
	if code != http.StatusOK || !strings.Contains(body, "Authorization complete") {
		t.Errorf("matching response: %d %s", code, body)
	}
	r, ok := pending(cs)
	if !ok || r.code != "the-code" || r.err != nil {
		t.Fatalf("delivered %+v, %v", r, ok)
	}
	code, body = getPage(t, cs.redirect+"?state=s1&code=again&iss=https://as.example")
	if code != http.StatusOK || !strings.Contains(body, "already received") {
		t.Errorf("second response: %d %s", code, body)
	}
	if _, ok := pending(cs); ok {
		t.Error("a second response was delivered")
	}
}

// RFC 9207: iss is compared exactly whenever present, required when
// advertised; a mismatching response's error is not shown.
func TestResponseCheck(t *testing.T) {
	const iss = "https://as.example/tenant"
	tests := []struct {
		name     string
		check    responseCheck
		q        url.Values
		code     string
		errWants string
	}{
		{"ok with iss", responseCheck{state: "s", issuer: iss, issRequired: true}, url.Values{"state": {"s"}, "code": {"c"}, "iss": {iss}}, "c", ""},
		{"ok without iss, not advertised", responseCheck{state: "s", issuer: iss}, url.Values{"state": {"s"}, "code": {"c"}}, "c", ""},
		{"iss missing but advertised", responseCheck{state: "s", issuer: iss, issRequired: true}, url.Values{"state": {"s"}, "code": {"c"}}, "", "has no iss parameter"},
		{"iss differs, not advertised", responseCheck{state: "s", issuer: iss}, url.Values{"state": {"s"}, "code": {"c"}, "iss": {"https://evil.example"}}, "", "mix-up"},
		{"iss differs only by a slash", responseCheck{state: "s", issuer: iss}, url.Values{"state": {"s"}, "code": {"c"}, "iss": {iss + "/"}}, "", "mix-up"},
		{"iss differs only by case", responseCheck{state: "s", issuer: iss}, url.Values{"state": {"s"}, "code": {"c"}, "iss": {"https://AS.example/tenant"}}, "", "mix-up"},
		{"error", responseCheck{state: "s", issuer: iss}, url.Values{"state": {"s"}, "error": {"access_denied"}, "error_description": {"no"}, "iss": {iss}}, "", "refused: access_denied: no"},
		{"no code", responseCheck{state: "s"}, url.Values{"state": {"s"}}, "", "neither a code nor an error"},
		{"no validated issuer", responseCheck{state: "s"}, url.Values{"state": {"s"}, "code": {"c"}, "iss": {"anything"}}, "c", ""},
	}
	for _, tt := range tests {
		r, ok := tt.check.check(tt.q)
		if !ok {
			t.Errorf("%s: not accepted", tt.name)
			continue
		}
		if r.code != tt.code || (tt.errWants == "") != (r.err == nil) || (r.err != nil && !strings.Contains(r.err.Error(), tt.errWants)) {
			t.Errorf("%s: got code %q err %v", tt.name, r.code, r.err)
		}
	}
	mix := responseCheck{state: "s", issuer: iss}
	r, _ := mix.check(url.Values{"state": {"s"}, "error": {"secret_error_text"}, "iss": {"https://evil.example"}})
	if r.err == nil || strings.Contains(r.err.Error(), "secret_error_text") {
		t.Errorf("a mismatching response's error was used: %v", r.err)
	}
	if _, ok := mix.check(url.Values{"code": {"c"}}); ok {
		t.Error("a response without state was accepted")
	}
	if _, ok := (&responseCheck{}).check(url.Values{"code": {"c"}}); ok {
		t.Error("an empty state matched")
	}
}

func TestCallbackURL(t *testing.T) {
	u, err := ParseCallbackURL("http://localhost:8976/oauth/cb")
	if err != nil || u.Port() != "8976" || u.Path != "/oauth/cb" {
		t.Fatalf("%v %v", u, err)
	}
	for _, bad := range []string{"https://127.0.0.1:8976/cb", "http://example.com:8976/cb", "http://127.0.0.1/cb", "http://[::1]:8976/cb", "http://127.0.0.1:0/cb", "http://127.0.0.1:8976/cb?x=1"} {
		if _, err := ParseCallbackURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// A fixed callback URL is served on its port and path.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	fixed, _ := url.Parse("http://localhost:" + strconv.Itoa(port) + "/cb")
	cs, err := listenCallback(fixed, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.close()
	cs.start(&responseCheck{state: "s"})
	if cs.redirect != fixed.String() {
		t.Errorf("redirect %q", cs.redirect)
	}
	if code, _ := getPage(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/cb?state=s&code=c"); code != http.StatusOK {
		t.Errorf("fixed callback answered %d", code)
	}
}

// A pasted redirect URL completes the authorization; unrelated lines are
// answered and skipped.
func TestReadPasted(t *testing.T) {
	var prompts []string
	in := strings.NewReader("\nnot a url\nhttp://127.0.0.1:1/callback?state=old&code=x\nhttp://127.0.0.1:1/callback?state=s&code=good&iss=https%3A%2F%2Fas\n")
	ch := readPasted(context.Background(), scanLines(in), &responseCheck{state: "s", issuer: "https://as"}, func(p string) { prompts = append(prompts, p) })
	select {
	case r := <-ch:
		if r.code != "good" || r.err != nil {
			t.Errorf("got %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no response")
	}
	if len(prompts) != 2 || !strings.Contains(prompts[0], "not the address") || !strings.Contains(prompts[1], "state does not match") {
		t.Errorf("prompts %q", prompts)
	}
}

// The callback follows the local listener rule: a request addressed under
// another name (a DNS-rebinding page) or a foreign page's script request
// is refused before the state is looked at; the browser's own arrival, a
// top-level navigation (GET without Origin, or a form_post POST carrying
// the authorization server's origin), is not.
func TestCallbackRefusesWebPages(t *testing.T) {
	cs, err := listenCallback(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.close()
	var refused []listenguard.Refusal
	var mu sync.Mutex
	cs.onRefuse = func(r listenguard.Refusal) {
		mu.Lock()
		refused = append(refused, r)
		mu.Unlock()
	}
	cs.start(&responseCheck{state: "s1"})
	c := &http.Client{Timeout: 10 * time.Second}
	send := func(method, host, body string, h map[string]string) int {
		t.Helper()
		req, err := http.NewRequest(method, cs.redirect, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if host != "" {
			req.Host = host
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	port := strconv.Itoa(cs.ln.Addr().(*net.TCPAddr).Port)
	forged := "state=s1&code=stolen"
	if code := send("POST", "rebind.example:"+port, forged, nil); code != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d", code)
	}
	if code := send("POST", "", forged, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Mode": "cors"}); code != http.StatusForbidden {
		t.Errorf("a foreign page's fetch: %d", code)
	}
	if code := send("GET", "", "", map[string]string{"Origin": "https://evil.example"}); code != http.StatusForbidden {
		t.Errorf("a GET with a foreign Origin and no navigation: %d", code)
	}
	if _, ok := pending(cs); ok {
		t.Fatal("a refused request was delivered")
	}
	mu.Lock()
	if len(refused) != 3 || refused[0].Reason != listenguard.BadHost || refused[1].Reason != listenguard.BadOrigin {
		t.Errorf("refusals %v", refused)
	}
	mu.Unlock()
	// The browser's navigation: a form_post from the authorization server.
	if code := send("POST", "localhost:"+port, "state=s1&code=the-code", map[string]string{"Origin": "https://as.example", "Sec-Fetch-Mode": "navigate"}); code != http.StatusOK {
		t.Errorf("form_post navigation: %d", code)
	}
	if r, ok := pending(cs); !ok || r.code != "the-code" {
		t.Errorf("delivered %+v %v", r, ok)
	}
	// And a plain redirect GET, without Origin.
	if code := send("GET", "", "", map[string]string{"Sec-Fetch-Mode": "navigate"}); code != http.StatusBadRequest {
		t.Errorf("navigation GET without state: %d (want the state check's 400)", code)
	}
}
