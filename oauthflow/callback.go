package oauthflow

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/listenguard"
	"github.com/mcpx-dev/mcpx/transport"
)

// ParseCallbackURL checks a callback URL for Config.CallbackURL: an http
// URL on a loopback host (127.0.0.1 or localhost) with an explicit port.
// mcpx listens on 127.0.0.1 only. A URL it cannot use is a
// *CallbackURLError.
func ParseCallbackURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, &CallbackURLError{URL: s, Reason: err.Error()}
	}
	host := u.Hostname()
	if u.Scheme != "http" || (host != "127.0.0.1" && !strings.EqualFold(host, "localhost")) || u.Port() == "" {
		return nil, &CallbackURLError{URL: s, Reason: "expected http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH (mcpx receives the redirect on 127.0.0.1)"}
	}
	if p, err := strconv.Atoi(u.Port()); err != nil || p <= 0 || p > 65535 {
		return nil, &CallbackURLError{URL: s, Reason: "invalid port"}
	}
	if u.Fragment != "" || u.RawQuery != "" {
		return nil, &CallbackURLError{URL: s, Reason: "must not have a query or fragment"}
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// authResponse is the outcome of an authorization response (RFC 6749
// section 4.1.2): the code, or why there is none.
type authResponse struct {
	code string
	err  error
}

// responseCheck validates authorization responses for one request.
type responseCheck struct {
	state string
	// issuer is the recorded issuer ("" when there is no validated one:
	// the 2025-03-26 default endpoints); issRequired is the metadata's
	// authorization_response_iss_parameter_supported.
	issuer      string
	issRequired bool
}

// check returns (response, true) for a response to this request, or
// (_, false) for one whose state does not match: such responses are
// discarded (spec: basic/authorization, "Open Redirection"). The iss
// parameter is validated before anything else in the response is used
// (spec draft: basic/authorization, "Authorization Response Validation";
// RFC 9207 section 2.4): compared as an exact string whenever present,
// required when the server advertises it.
func (c *responseCheck) check(q url.Values) (authResponse, bool) {
	if q.Get("state") != c.state || c.state == "" {
		return authResponse{}, false
	}
	iss, hasIss := q.Get("iss"), q.Has("iss")
	switch {
	case hasIss && c.issuer != "" && iss != c.issuer:
		return authResponse{err: fmt.Errorf("the authorization response says it comes from issuer %s, not %q (RFC 9207): it is rejected, as a mix-up attack may be under way", quoted(iss), c.issuer)}, true
	case !hasIss && c.issRequired:
		return authResponse{err: errors.New("the authorization response has no iss parameter although the authorization server advertises authorization_response_iss_parameter_supported (RFC 9207): it is rejected")}, true
	}
	if e := q.Get("error"); e != "" {
		// The response is anyone's to forge (a page can navigate the
		// browser here): its text is bounded and its control characters
		// escaped before it reaches a message or the page.
		msg := "the authorization server refused: " + transport.Excerpt(e)
		if d := q.Get("error_description"); d != "" {
			msg += ": " + transport.Excerpt(d)
		}
		return authResponse{err: errors.New(msg)}, true
	}
	code := q.Get("code")
	if code == "" {
		return authResponse{err: errors.New("the authorization response has neither a code nor an error")}, true
	}
	return authResponse{code: code}, true
}

// callbackServer receives the browser's redirect on a loopback address
// (RFC 8252 section 7.3): it listens on 127.0.0.1 only, accepts one
// response that matches the request, answers the browser with a short page
// and is then closed.
//
// Like every local listener of mcpx it follows the rule of package
// listenguard: a request whose Host is not the listener's (a page that
// rebinds its name to 127.0.0.1) gets 421. The Origin check is relaxed
// for top-level navigations only, which is how the browser arrives: the
// authorization server's redirect is a navigation, and a GET navigation
// carries no Origin (Fetch standard, "append a request Origin header":
// only CORS requests and methods other than GET and HEAD get one, and a
// redirect does not change that), while a POSTed form (response_mode=
// form_post) carries the authorization server's origin, or "null" after a
// cross-origin redirect. Browsers mark navigations with Sec-Fetch-Mode:
// navigate (sent to loopback addresses, which are potentially trustworthy;
// no script can set it). A script's request from a foreign page (fetch,
// XMLHttpRequest) carries its Origin and gets 403. What protects the flow
// from a forged navigation is the state check, not the Origin.
type callbackServer struct {
	ln       net.Listener
	srv      *http.Server
	redirect string
	path     string
	check    *responseCheck
	results  chan authResponse
	once     sync.Once
	done     chan struct{}
	// onRefuse, set before start, is told of requests the listener rule
	// refused.
	onRefuse func(listenguard.Refusal)
}

// listenCallback listens for the redirect: on the callback URL's port
// when fixed is set, else on preferPort when it is free (so a client
// registered with that redirect URI can be reused), else on any port.
func listenCallback(fixed *url.URL, preferPort int) (*callbackServer, error) {
	cs := &callbackServer{results: make(chan authResponse, 1), done: make(chan struct{})}
	var err error
	if fixed != nil {
		cs.ln, err = net.Listen("tcp", "127.0.0.1:"+fixed.Port())
		if err != nil {
			return nil, fmt.Errorf("listening for the authorization callback on 127.0.0.1:%s (the callback URL's port): %w", fixed.Port(), err)
		}
		cs.redirect, cs.path = fixed.String(), fixed.Path
	} else {
		if preferPort > 0 {
			cs.ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(preferPort))
		}
		if cs.ln == nil {
			cs.ln, err = net.Listen("tcp", "127.0.0.1:0")
		}
		if err != nil {
			return nil, fmt.Errorf("listening for the authorization callback on 127.0.0.1: %w", err)
		}
		port := cs.ln.Addr().(*net.TCPAddr).Port
		cs.redirect, cs.path = fmt.Sprintf("http://127.0.0.1:%d/callback", port), "/callback"
	}
	guard, err := listenguard.New(http.HandlerFunc(cs.serve), listenguard.Options{
		Addr:            cs.ln.Addr(),
		AllowNavigation: true,
		OnRefuse: func(r listenguard.Refusal) {
			if cs.onRefuse != nil {
				cs.onRefuse(r)
			}
		},
	})
	if err != nil {
		cs.ln.Close()
		return nil, err
	}
	cs.srv = &http.Server{Handler: guard, ReadHeaderTimeout: 10 * time.Second}
	return cs, nil
}

// start serves callbacks checked by check.
func (cs *callbackServer) start(check *responseCheck) {
	cs.check = check
	go func() {
		defer close(cs.done)
		cs.srv.Serve(cs.ln)
	}()
}

// close stops listening, letting a page being sent finish briefly.
func (cs *callbackServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if cs.srv.Shutdown(ctx) != nil {
		cs.srv.Close()
	}
	if cs.check == nil {
		cs.ln.Close()
		return
	}
	<-cs.done
}

func (cs *callbackServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != cs.path || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		// response_mode=form_post is not requested, but a form is as good.
		if err := r.ParseForm(); err == nil {
			q = r.Form
		}
	}
	res, ok := cs.check.check(q)
	if !ok {
		page(w, http.StatusBadRequest, "This response does not belong to the authorization mcpx is waiting for (its state does not match), so mcpx ignored it.")
		return
	}
	delivered := false
	cs.once.Do(func() {
		cs.results <- res
		delivered = true
	})
	switch {
	case !delivered:
		page(w, http.StatusOK, "mcpx already received the authorization response. You can close this tab.")
	case res.err != nil:
		page(w, http.StatusOK, "Authorization failed: "+res.err.Error()+". You can close this tab; mcpx says more in the terminal.")
	default:
		page(w, http.StatusOK, "Authorization complete. You can close this tab and return to mcpx.")
	}
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>mcpx</title><p style=\"font-family:sans-serif\">%s</p>\n", html.EscapeString(msg))
}

// readPasted reads redirect URLs pasted (for a browser on another
// machine, --no-browser), one line at a time from next, and delivers the
// first one that matches the request. Lines that do not are answered on
// prompt. It stops when next fails: at the end of the input, or once ctx
// ends (the wait is over).
func readPasted(ctx context.Context, next func(context.Context) (string, error), check *responseCheck, prompt func(string)) <-chan authResponse {
	out := make(chan authResponse, 1)
	go func() {
		for ctx.Err() == nil {
			line, err := next(ctx)
			if err != nil || ctx.Err() != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			q, err := pastedQuery(line)
			if err != nil {
				prompt("that is not the address the browser was sent to (" + err.Error() + "); paste the whole address, starting with http://")
				continue
			}
			res, ok := check.check(q)
			if !ok {
				prompt("that address does not belong to this authorization (its state does not match); paste the address of the latest attempt")
				continue
			}
			out <- res
			return
		}
	}()
	return out
}

// scanLines reads the lines of r (Config.Stdin) for readPasted. A read
// cannot be taken back, so what it reads after the wait is lost to anyone
// else reading r: it serves where nothing else does (Config.ReadLine is
// for a reader that is shared).
func scanLines(r io.Reader) func(context.Context) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024)
	return func(context.Context) (string, error) {
		if sc.Scan() {
			return sc.Text(), nil
		}
		if err := sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
}

// pastedQuery extracts the response parameters from a pasted redirect URL
// (or just its query string).
func pastedQuery(s string) (url.Values, error) {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, err
	}
	if !q.Has("state") && !q.Has("code") && !q.Has("error") {
		return nil, errors.New("it has no code, error or state parameter")
	}
	return q, nil
}
