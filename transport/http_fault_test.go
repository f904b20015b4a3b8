package transport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/transport"
)

// fake is a hand-written Streamable HTTP server whose misbehaviour each
// test scripts. By default it answers initialize (with session id "s1"
// unless sessionless), accepts notifications and responses with 202,
// refuses GET with 405, answers other requests with an empty result, and
// allows DELETE.
type fake struct {
	log       *reqLog
	version   string
	sessions  atomic.Int32
	stateless bool
	// post handles a POST before the defaults; it returns true when it did.
	post func(w http.ResponseWriter, r *http.Request, s seen) bool
	// get handles a GET before the default 405; it returns true when it did.
	get func(w http.ResponseWriter, r *http.Request, s seen) bool
}

func startFake(t *testing.T, f *fake) string {
	t.Helper()
	if f.log == nil {
		f.log = newLog()
	}
	return serveMem(t, f) + "/mcp"
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := f.log.record(r)
	switch r.Method {
	case "GET":
		if f.get != nil && f.get(w, r, s) {
			return
		}
		http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
	case "DELETE":
		w.WriteHeader(http.StatusOK)
	case "POST":
		if f.post != nil && f.post(w, r, s) {
			return
		}
		switch {
		case s.RPC == "initialize":
			id := ""
			if !f.stateless {
				id = fmt.Sprintf("s%d", f.sessions.Add(1))
			}
			v := f.version
			if v == "" {
				v = "2025-11-25"
			}
			writeJSON(w, id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, s.ID, v))
		case s.RPC == "" || s.ID == "":
			w.WriteHeader(http.StatusAccepted)
		default:
			writeJSON(w, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, s.ID))
		}
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func writeJSON(w http.ResponseWriter, sessionID, body string) {
	w.Header().Set("Content-Type", "application/json")
	if sessionID != "" {
		w.Header().Set("Mcp-Session-Id", sessionID)
	}
	w.Write([]byte(body))
}

// startSSE sends the headers of an SSE answer.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func sendSSE(w http.ResponseWriter, raw string) {
	w.Write([]byte(raw))
	w.(http.Flusher).Flush()
}

// dropConnection cuts the TCP connection under a handler, mid-stream.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func response(id, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, id, text)
}

// A POST's SSE stream is cut in the middle of an event; mcpx waits the
// server's retry time, resumes with GET and Last-Event-ID, drops the torn
// event, and gets the response without sending the request again.
func TestResumeAfterDroppedStream(t *testing.T) { synctest.Test(t, testResumeAfterDroppedStream) }

func testResumeAfterDroppedStream(t *testing.T) {
	var cut atomic.Int64 // when the stream was cut, unix nanos
	var callID atomic.Value
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		callID.Store(s.ID)
		startSSE(w)
		sendSSE(w, "id: p1\nretry: 150\ndata: \n\n")
		sendSSE(w, fmt.Sprintf("id: p2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":1}}\n\n", s.ID))
		sendSSE(w, "id: p3\ndata: {\"jsonrpc\":\"2.0\",\"id\":")
		cut.Store(time.Now().UnixNano())
		dropConnection(w)
		return true
	}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.LastEvent == "" {
			return false
		}
		startSSE(w)
		sendSSE(w, "id: p4\ndata: "+response(callID.Load().(string), "resumed")+"\n\n")
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	var progress atomic.Int32
	res, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "x"},
		inspector.WithProgress(func(inspector.Progress) { progress.Add(1) }))
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if !strings.Contains(string(res), "resumed") {
		t.Errorf("result %s", res)
	}
	if n := f.log.count("POST", "tools/call"); n != 1 {
		t.Errorf("tools/call POSTed %d times, want exactly 1", n)
	}
	resumes := f.log.find("GET", "*")
	var got []string
	for _, s := range resumes {
		if s.LastEvent != "" {
			got = append(got, s.LastEvent)
			// On synctest's clock the wait is exact.
			if wait := s.Time.Sub(time.Unix(0, cut.Load())); wait != 150*time.Millisecond {
				t.Errorf("resumed %s after the cut, want the server's retry: 150ms", wait)
			}
			if s.Header.Get("Mcp-Session-Id") != "s1" {
				t.Errorf("resume GET without the session id")
			}
		}
	}
	if len(got) != 1 || got[0] != "p2" {
		t.Errorf("Last-Event-ID sent: %v, want [p2] (the torn event p3 never completed)", got)
	}
	if progress.Load() != 1 {
		t.Errorf("progress delivered %d times, want 1", progress.Load())
	}
}

// The server ends a POST stream gracefully after a priming event with
// retry: (SEP-1699 polling); mcpx reconnects, and keeps polling while the
// server keeps doing so, until the answer comes.
func TestStreamClosedEarlyWithRetry(t *testing.T) { synctest.Test(t, testStreamClosedEarlyWithRetry) }

func testStreamClosedEarlyWithRetry(t *testing.T) {
	var callID atomic.Value
	var polls atomic.Int32
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		callID.Store(s.ID)
		startSSE(w)
		sendSSE(w, "id: a1\nretry: 400\ndata:\n\n")
		return true // graceful end of the stream
	}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.LastEvent == "" {
			return false
		}
		startSSE(w)
		n := polls.Add(1)
		if n < 8 { // more polls than MaxReconnects: polling that delivers events is not a failure
			sendSSE(w, fmt.Sprintf("id: a%d\ndata:\n\n", n+1))
			return true
		}
		sendSSE(w, "data: "+response(callID.Load().(string), "done")+"\n\n")
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u, MaxReconnects: 3}, nil)
	if got := toolText(t, sess, "x", map[string]any{}); got != "done" {
		t.Errorf("result %q", got)
	}
	gets := f.log.find("GET", "*")
	var ids []string
	for _, g := range gets {
		if g.LastEvent != "" {
			ids = append(ids, g.LastEvent)
		}
	}
	if len(ids) != 8 || ids[0] != "a1" || ids[7] != "a8" {
		t.Errorf("resumed with Last-Event-IDs %v", ids)
	}
	for i := 1; i < len(gets); i++ {
		if gets[i].LastEvent != "" && gets[i-1].LastEvent != "" && gets[i].Time.Sub(gets[i-1].Time) != 400*time.Millisecond {
			t.Errorf("polled again after %s, want retry: 400ms", gets[i].Time.Sub(gets[i-1].Time))
		}
	}
	if n := f.log.count("POST", "tools/call"); n != 1 {
		t.Errorf("tools/call POSTed %d times", n)
	}
}

// A stream that ends before the response, with no event id to resume from,
// fails its request with a clear error rather than hanging.
func TestStreamEndsWithoutEventID(t *testing.T) { synctest.Test(t, testStreamEndsWithoutEventID) }

func testStreamEndsWithoutEventID(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		startSSE(w)
		sendSSE(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "x"})
	if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), "no event id") {
		t.Fatalf("err = %v, want a transport failure about the missing event id", err)
	}
	for _, g := range f.log.find("GET", "*") {
		if g.LastEvent != "" {
			t.Errorf("tried to resume without an event id")
		}
	}
}

// Resuming is capped: a server that keeps failing the GET is given up on.
func TestResumeGivesUp(t *testing.T) { synctest.Test(t, testResumeGivesUp) }

func testResumeGivesUp(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		startSSE(w)
		sendSSE(w, "id: z1\nretry: 10\ndata:\n\n")
		return true
	}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.LastEvent == "" {
			return false
		}
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u, MaxReconnects: 3}, nil)
	_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "x"})
	if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("err = %v", err)
	}
	n := 0
	for _, g := range f.log.find("GET", "*") {
		if g.LastEvent == "z1" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d resume attempts, want 3", n)
	}
}

// A server that refuses to resume (405) fails the request at once.
func TestResumeRefused(t *testing.T) { synctest.Test(t, testResumeRefused) }

func testResumeRefused(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		startSSE(w)
		sendSSE(w, "id: q1\nretry: 10\ndata:\n\n")
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "x"})
	if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), "405") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.log.find("GET", "*")); n != 2 { // the GET stream at start, one resume
		t.Errorf("%d GETs: %s", n, f.log.summary())
	}
}

// The server ends the session while a response is owed on a stream that
// broke: resuming it gets 404. That request is lost, the connection is
// not: the next request is answered 404 in turn and starts a new session,
// as the client must (it used to fail the connection for good).
func TestSessionExpiredWhileResuming(t *testing.T) {
	synctest.Test(t, testSessionExpiredWhileResuming)
}

func testSessionExpiredWhileResuming(t *testing.T) {
	f := &fake{}
	var ended atomic.Bool
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		switch {
		case s.Header.Get("Mcp-Session-Id") == "s1" && ended.Load():
			http.Error(w, "unknown session", http.StatusNotFound)
		case s.RPC == "tools/call":
			startSSE(w)
			sendSSE(w, "id: e1\nretry: 10\ndata:\n\n")
			ended.Store(true)
		default:
			return false
		}
		return true
	}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.Header.Get("Last-Event-Id") == "" {
			return false
		}
		http.Error(w, "unknown session", http.StatusNotFound)
		return true
	}
	sess, conn := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, nil)
	_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "x"})
	if !errors.Is(err, transport.ErrSessionExpired) || !strings.Contains(err.Error(), "before the response arrived") {
		t.Fatalf("err = %v", err)
	}
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatalf("tools/list after the session ended: %v", err)
	}
	if n := len(f.log.find("POST", "initialize")); n != 2 || conn.SessionID() != "s2" {
		t.Errorf("%d initialize requests, session %q: %s", n, conn.SessionID(), f.log.summary())
	}
}

// The server forgets the session in the middle of a run: the next request
// gets 404, the session re-initializes (without the old id) and the
// request is retried once, and the person is told.
func TestSessionExpiredMidRun(t *testing.T) { synctest.Test(t, testSessionExpiredMidRun) }

func testSessionExpiredMidRun(t *testing.T) {
	f := &fake{}
	var expired atomic.Bool
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC == "tools/list" && s.Header.Get("Mcp-Session-Id") == "s1" && expired.Load() {
			http.Error(w, "unknown session", http.StatusNotFound)
			return true
		}
		return false
	}
	u := startFake(t, f)
	rec := newRecorder()
	sess, conn := mustDial(t, transport.HTTPOptions{URL: u}, rec)
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	expired.Store(true)
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatalf("tools/list after expiry: %v", err)
	}
	inits := f.log.find("POST", "initialize")
	if len(inits) != 2 || inits[1].Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize requests: %d (second with session %q)", len(inits), inits[len(inits)-1].Header.Get("Mcp-Session-Id"))
	}
	lists := f.log.find("POST", "tools/list")
	if len(lists) != 3 || lists[2].Header.Get("Mcp-Session-Id") != "s2" {
		t.Errorf("tools/list requests: %s", f.log.summary())
	}
	if conn.SessionID() != "s2" {
		t.Errorf("session %q", conn.SessionID())
	}
	if notes := rec.allNotes(); !strings.Contains(notes, "session expired") || !strings.Contains(notes, "tools/list") {
		t.Errorf("notes %q", notes)
	}
	// The new session got its own initialized notification and GET stream.
	if n := f.log.count("POST", "notifications/initialized"); n != 2 {
		t.Errorf("initialized sent %d times", n)
	}
}

// A session that expires again right after re-initializing is not retried
// forever: the error comes back.
func TestSessionExpiredTwice(t *testing.T) { synctest.Test(t, testSessionExpiredTwice) }

func testSessionExpiredTwice(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC == "tools/list" && s.Header.Get("Mcp-Session-Id") != "" {
			http.Error(w, "unknown session", http.StatusNotFound)
			return true
		}
		return false
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	_, err := sess.Call(callCtx(t), "tools/list", nil)
	if !errors.Is(err, transport.ErrSessionExpired) {
		t.Fatalf("err = %v", err)
	}
	if n := f.log.count("POST", "tools/list"); n != 2 {
		t.Errorf("tools/list sent %d times, want 2 (the request and one retry)", n)
	}
}

func TestServerError(t *testing.T) { synctest.Test(t, testServerError) }

func testServerError(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		http.Error(w, "the database\nis on fire", http.StatusInternalServerError)
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	_, err := sess.Call(callCtx(t), "tools/list", nil)
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != 500 || !errors.Is(err, transport.ErrTransport) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "500 Internal Server Error: the database is on fire") {
		t.Errorf("message %q lacks the status and body excerpt", err)
	}
}

// An HTML error page (a proxy's, a framework's) is summarised by its
// title, or its text without markup, escaped: its tags, styles and
// scripts said nothing and filled the message.
func TestHTMLErrorPageSummarised(t *testing.T) { synctest.Test(t, testHTMLErrorPageSummarised) }

func testHTMLErrorPageSummarised(t *testing.T) {
	head := "<!DOCTYPE html>\n<html><head><style>" + strings.Repeat("body{margin:0}", 100) + "</style>"
	pages := []struct{ ct, body, want string }{
		// nginx's page, with a title after a head longer than what is read of other bodies.
		{"text/html", head + "<title>502 Bad\n Gateway &amp; \x1b[2J</title></head><body><h1>502</h1></body></html>", `HTTP 502 Bad Gateway: HTML page "502 Bad Gateway & \x1b[2J"`},
		{"", "<html><body><script>var x = '<b>';</script><!-- <p>hidden</p> --><h1>Service</h1> <p>down &quot;for now&quot;</p>" + strings.Repeat("<p>more</p>", 1000), `HTTP 502 Bad Gateway: HTML page: Service down "for now" more more`},
	}
	for _, p := range pages {
		f := &fake{}
		f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
			if s.RPC != "tools/list" {
				return false
			}
			w.Header().Set("Content-Type", p.ct)
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, p.body)
			return true
		}
		u := startFake(t, f)
		sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
		_, err := sess.Call(callCtx(t), "tools/list", nil)
		var he *transport.HTTPError
		if !errors.As(err, &he) {
			t.Fatalf("err = %v", err)
		}
		if msg := err.Error(); !strings.Contains(msg, p.want) || strings.ContainsAny(msg, "<\x1b") || len(msg) > 400 {
			t.Errorf("message %q\nwant one with %q, no markup, no control characters", msg, p.want)
		}
	}
}

// HTMLSummary, which oauthflow quotes its endpoints' pages with, takes a
// Content-Type as sent (parameters, any case) and declines what is no
// page: JSON labelled text/html, plain text, a JSON error.
func TestHTMLSummaryExported(t *testing.T) {
	for _, tt := range []struct {
		ct, body, want string
		ok             bool
	}{
		{"Text/HTML; charset=utf-8", "<html><head><title>Sign in &ndash; IdP</title></head></html>", `HTML page "Sign in – IdP"`, true},
		{"", "<!doctype html><p>Down</p>", "HTML page: Down", true},
		{"text/html", `{"error":"invalid_grant"}`, "", false},
		{"application/json", "<html><title>x</title></html>", "", false},
		{"text/plain", "Bad Request", "", false},
	} {
		got, ok := transport.HTMLSummary([]byte(tt.body), tt.ct)
		if got != tt.want || ok != tt.ok {
			t.Errorf("HTMLSummary(%q, %q) = %q, %v; want %q, %v", tt.body, tt.ct, got, ok, tt.want, tt.ok)
		}
	}
}

// A POST's answer whose headers misdescribe its body fails saying so: an
// SSE stream labelled application/json, a body compressed with an
// encoding mcpx did not offer (it read as a malformed message). gzip,
// which net/http asks for, is decoded.
func TestMislabelledAnswer(t *testing.T) {
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.String()
	}
	for name, tt := range map[string]struct{ encoding, body, want string }{
		"sse as json": {"", "event: message\ndata: " + response("2", "hi") + "\n\n", `the body is an SSE stream, but its Content-Type is "application/json"`},
		"br":          {"br", "\x1b\x00\xf8\x00", `the server encoded its answer with Content-Encoding "br", which mcpx does not decode`},
		"gzip":        {"gzip", gz(response("2", "hi")), ""},
	} {
		t.Run(name, bubble(func(t *testing.T) {
			f := &fake{}
			f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.RPC != "tools/call" {
					return false
				}
				if tt.encoding != "" {
					w.Header().Set("Content-Encoding", tt.encoding)
				}
				writeJSON(w, "", tt.body)
				return true
			}
			sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, nil)
			_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "x"})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant one with %q", err, tt.want)
			}
		}))
	}
}

// A 429's Retry-After is kept and said, escaped like everything the
// server sent: it tells the person when to try again.
func TestRetryAfter(t *testing.T) { synctest.Test(t, testRetryAfter) }

func testRetryAfter(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		w.Header().Set("Retry-After", "30")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	_, err := sess.Call(callCtx(t), "tools/list", nil)
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != 429 || he.RetryAfter != "30" {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "HTTP 429 Too Many Requests (Retry-After: 30): slow down") {
		t.Errorf("message %q lacks the Retry-After", err)
	}
	he.RetryAfter = "Wed, 21 Oct 2026 07:28:00 GMT\x1b[2J"
	if s := he.Error(); !strings.Contains(s, "(Retry-After: Wed, 21 Oct 2026 07:28:00 GMT\\x1b[2J)") {
		t.Errorf("message %q does not escape the header", s)
	}
}

// A request taken with 202 Accepted and no body is a transport failure at
// once: a request is answered in the POST's body, so waiting would only
// run out the request timeout (as it did).
func TestAcceptedRequest(t *testing.T) { synctest.Test(t, testAcceptedRequest) }

func testAcceptedRequest(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	_, err := sess.Call(t.Context(), "tools/list", nil)
	if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), "HTTP 202 Accepted with no response, but a request must be answered") {
		t.Fatalf("err = %v", err)
	}
}

// 401 and 403 carry the challenge and never cause a fallback to HTTP+SSE.
func TestUnauthorized(t *testing.T) {
	for _, status := range []int{401, 403} {
		t.Run(fmt.Sprint(status), bubble(func(t *testing.T) {
			l := newLog()
			u := serveMem(t, l.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://example.test/.well-known/oauth-protected-resource"`)
				http.Error(w, "no", status)
			})))
			_, _, err := dial(t, transport.HTTPOptions{URL: u + "/mcp"}, nil)
			var ue *transport.UnauthorizedError
			if !errors.As(err, &ue) || !errors.Is(err, transport.ErrUnauthorized) {
				t.Fatalf("err = %v", err)
			}
			if ue.Status != status || !strings.Contains(ue.Challenge, "resource_metadata=") {
				t.Errorf("error %+v", ue)
			}
			if n := l.count("GET", "*"); n != 0 {
				t.Errorf("fell back to GET after %d", status)
			}
		}))
	}
}

// renewingAuth refuses its first token and succeeds with the second.
type renewingAuth struct {
	mu     sync.Mutex
	token  string
	asked  int
	challs []string
}

func (a *renewingAuth) Authorization(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return "Bearer " + a.token, nil
}

func (a *renewingAuth) Unauthorized(_ context.Context, e *transport.UnauthorizedError) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	a.challs = append(a.challs, e.Challenge)
	a.token = "fresh"
	return true, nil
}

// The Authorizer hook (where OAuth will plug in) can renew credentials
// after a 401; the request is sent once more.
func TestAuthorizerRetry(t *testing.T) { synctest.Test(t, testAuthorizerRetry) }

func testAuthorizerRetry(t *testing.T) {
	f := &fake{log: newLog()}
	inner := f
	l := newLog()
	u := serveMem(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fresh" {
			l.record(r)
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "expired token", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	auth := &renewingAuth{token: "stale"}
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u + "/mcp", Authorizer: auth}, nil)
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if auth.asked != 1 || !strings.Contains(auth.challs[0], "invalid_token") {
		t.Errorf("authorizer asked %d times, challenges %v", auth.asked, auth.challs)
	}
	if n := inner.log.count("POST", "initialize"); n != 1 {
		t.Errorf("initialize reached the server %d times", n)
	}
}

// In auto mode, only the statuses the offered revision names lead to the
// HTTP+SSE fallback.
func TestNoFallbackOnOtherStatus(t *testing.T) { synctest.Test(t, testNoFallbackOnOtherStatus) }

func testNoFallbackOnOtherStatus(t *testing.T) {
	l := newLog()
	u := serveMem(t, l.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unsupported media", http.StatusUnsupportedMediaType)
	})))
	_, _, err := dial(t, transport.HTTPOptions{URL: u, ProtocolVersion: "2025-11-25"}, nil)
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != 415 {
		t.Fatalf("err = %v", err)
	}
	if l.count("GET", "*") != 0 {
		t.Error("fell back on 415 while offering 2025-11-25")
	}
	// Offering an older revision, any 4xx means "try HTTP+SSE".
	l2 := newLog()
	u2 := serveMem(t, l2.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unsupported media", http.StatusUnsupportedMediaType)
	})))
	_, _, err = dial(t, transport.HTTPOptions{URL: u2, ProtocolVersion: "2025-03-26"}, nil)
	if err == nil || l2.count("GET", "*") != 1 {
		t.Errorf("err = %v; GETs %d, want the fallback attempt", err, l2.count("GET", "*"))
	}
	if !strings.Contains(err.Error(), "not an HTTP+SSE server either") {
		t.Errorf("err = %v", err)
	}
}

// legacyServer is a hand-written HTTP+SSE server: GET /sse sends the
// endpoint event named by endpoint, POST /msg queues an answer on the
// stream; end closes the stream.
type legacyServer struct {
	endpoint string
	out      chan string
	end      chan struct{}
}

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/sse":
		serveSSEStream(w, r, s.endpoint, s.out, s.end)
	case r.Method == "POST" && r.URL.Path == "/msg":
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusAccepted)
		if m.Method == "initialize" {
			s.out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"legacy","version":"1"}}}`, m.ID)
		}
	default:
		http.NotFound(w, r)
	}
}

func TestLegacyEndpointOnOtherOrigin(t *testing.T) { synctest.Test(t, testLegacyEndpointOnOtherOrigin) }

func testLegacyEndpointOnOtherOrigin(t *testing.T) {
	s := &legacyServer{endpoint: "http://evil.example/msg", out: make(chan string, 8), end: make(chan struct{})}
	u := serveMem(t, s)
	t.Cleanup(func() { close(s.end) })
	_, _, err := dial(t, transport.HTTPOptions{URL: u + "/sse", Mode: transport.ModeSSE}, nil)
	if err == nil || !strings.Contains(err.Error(), "different origin") {
		t.Fatalf("err = %v", err)
	}
}

// An endpoint event of a megabyte, whether a URL on another origin or on
// the server's own, is refused saying how long it is, not quoted whole.
func TestLegacyEndpointTooLong(t *testing.T) { synctest.Test(t, testLegacyEndpointTooLong) }

func testLegacyEndpointTooLong(t *testing.T) {
	for _, endpoint := range []string{"http://[::1]:" + strings.Repeat("9", 1<<20) + "/msg", "/msg?s=" + strings.Repeat("x", 1<<20)} {
		s := &legacyServer{endpoint: endpoint, out: make(chan string, 8), end: make(chan struct{})}
		u := serveMem(t, s)
		_, _, err := dial(t, transport.HTTPOptions{URL: u + "/sse", Mode: transport.ModeSSE}, nil)
		close(s.end)
		if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), fmt.Sprintf("the endpoint event is %d bytes long, more than the 8 KiB mcpx takes for a URL", len(endpoint))) {
			t.Errorf("err = %.300v", err)
		}
		if err != nil && len(err.Error()) > 1000 {
			t.Errorf("the error is %d bytes long", len(err.Error()))
		}
	}
}

// A server that never answers: the request's timeout applies whether the
// server holds back its headers (JSON mode) or its events (SSE mode), and
// the server is told with notifications/cancelled.
func TestSlowServerTimeout(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[sse], bubble(func(t *testing.T) {
			release := make(chan struct{})
			f := &fake{}
			f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.RPC != "tools/call" {
					return false
				}
				if sse {
					startSSE(w)
				}
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return true
			}
			u := startFake(t, f)
			t.Cleanup(func() { close(release) })
			sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
			_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "slow"}, inspector.WithTimeout(200*time.Millisecond, time.Minute))
			var te *inspector.TimeoutError
			if !errors.As(err, &te) || te.After != 200*time.Millisecond {
				t.Fatalf("err = %v, want a timeout after 200ms", err)
			}
			f.log.waitFor(t, "notifications/cancelled", func() bool { return f.log.count("POST", "notifications/cancelled") == 1 })
		}))
	}
}

// MCP-Protocol-Version goes on every request after initialize for the
// revisions that define it (2025-06-18 on), and not for 2025-03-26.
func TestProtocolVersionHeader(t *testing.T) {
	for version, want := range map[string]string{"2025-03-26": "", "2025-06-18": "2025-06-18", "2025-11-25": "2025-11-25"} {
		t.Run(version, bubble(func(t *testing.T) {
			f := &fake{version: version}
			u := startFake(t, f)
			sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
			if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
				t.Fatal(err)
			}
			sess.Close()
			for _, s := range f.log.all() {
				if s.RPC == "initialize" {
					continue
				}
				if got := s.Header.Get("Mcp-Protocol-Version"); got != want {
					t.Errorf("%s %s: MCP-Protocol-Version %q, want %q", s.Method, s.RPC, got, want)
				}
			}
			if n := f.log.count("DELETE", "*"); n != 1 {
				t.Errorf("DELETE sent %d times", n)
			}
		}))
	}
}

// The GET stream is reopened (with Last-Event-ID) when the server closes
// it, and what arrives on the new one is delivered.
func TestGETStreamReconnects(t *testing.T) { synctest.Test(t, testGETStreamReconnects) }

func testGETStreamReconnects(t *testing.T) {
	var gets atomic.Int32
	f := &fake{}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		startSSE(w)
		if gets.Add(1) == 1 {
			// Seconds meant, milliseconds said: mcpx waits its floor.
			sendSSE(w, "id: g1\nretry: 3\ndata:\n\n")
			return true
		}
		sendSSE(w, "id: g2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n")
		<-r.Context().Done()
		return true
	}
	u := startFake(t, f)
	rec := newRecorder()
	mustDial(t, transport.HTTPOptions{URL: u}, rec)
	select {
	case <-rec.notified:
	case <-time.After(5 * time.Second):
		t.Fatal("nothing arrived on the reopened GET stream")
	}
	gs := f.log.find("GET", "*")
	if len(gs) < 2 || gs[0].LastEvent != "" || gs[1].LastEvent != "g1" {
		t.Fatalf("GETs: %+v", gs)
	}
	// The first stream ended as soon as it opened; on synctest's clock the
	// reconnection comes exactly the server's retry later, but never
	// sooner than 100 ms: a retry of 3 ms had mcpx reopen the stream
	// hundreds of times a second.
	if wait := gs[1].Time.Sub(gs[0].Time); wait != 100*time.Millisecond {
		t.Errorf("reopened the GET stream after %s, want 100ms (retry: 3 raised to the floor)", wait)
	}
}

// A GET stream that ends asking to wait 23 days before reconnecting is
// given up at once, and the session told why (watch says so), rather than
// waited on in silence.
func TestGETStreamHugeRetry(t *testing.T) { synctest.Test(t, testGETStreamHugeRetry) }

func testGETStreamHugeRetry(t *testing.T) {
	f := &fake{}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		startSSE(w)
		sendSSE(w, "id: g1\nretry: 2000000000\ndata:\n\n")
		return true
	}
	u := startFake(t, f)
	rec := newRecorder()
	mustDial(t, transport.HTTPOptions{URL: u}, rec)
	synctest.Wait()
	want := "the server asked to wait 555h33m20s before reconnecting (retry: 2000000000); mcpx waits at most 1h0m0s"
	if notes := rec.eventText(transport.EventNote); !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
	if n := len(f.log.find("GET", "*")); n != 1 {
		t.Errorf("%d GETs", n)
	}
}

// A GET stream whose last event id holds a control character, which no
// Last-Event-ID header can carry, is reopened without one, and -v says
// so: sending it failed in net/http at every attempt, and the stream
// ended for good.
func TestGETStreamUnsendableEventID(t *testing.T) {
	synctest.Test(t, testGETStreamUnsendableEventID)
}

func testGETStreamUnsendableEventID(t *testing.T) {
	var gets atomic.Int32
	f := &fake{}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		startSSE(w)
		if gets.Add(1) == 1 {
			sendSSE(w, "id: g\x01\nretry: 100\ndata:\n\n")
			return true
		}
		sendSSE(w, "id: g2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n")
		<-r.Context().Done()
		return true
	}
	u := startFake(t, f)
	rec := newRecorder()
	mustDial(t, transport.HTTPOptions{URL: u}, rec)
	select {
	case <-rec.notified:
	case <-time.After(5 * time.Second):
		t.Fatal("nothing arrived on the reopened GET stream")
	}
	gs := f.log.find("GET", "*")
	if len(gs) != 2 || gs[1].LastEvent != "" {
		t.Fatalf("GETs: %+v", gs)
	}
	want := `the server's event id "g\x01" cannot be sent back (a Last-Event-ID header cannot hold its byte 0x01); reconnecting without it`
	if notes := rec.eventText(transport.EventNote); !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
}

func TestConnectionRefused(t *testing.T) {
	addr := testservers.RefusedAddr(t)
	_, _, err := dial(t, transport.HTTPOptions{URL: "http://" + addr + "/mcp"}, nil)
	if !errors.Is(err, transport.ErrConnect) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v", err)
	}
}

// An https:// URL whose server speaks plain HTTP cannot be connected to,
// as one that does not speak TLS at all (tls.RecordHeaderError) cannot:
// net/http's own error for it is not a failure of the transport.
func TestHTTPSToPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	u := "https://" + strings.TrimPrefix(srv.URL, "http://") + "/mcp"
	_, _, err := dial(t, transport.HTTPOptions{URL: u}, nil)
	if !errors.Is(err, transport.ErrConnect) || errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), "HTTP response to HTTPS client") {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
}

// Headers, credentials and cookies reach the server; what the observer
// shows (--wire) has the secrets redacted.
func TestHeadersAndRedaction(t *testing.T) { synctest.Test(t, testHeadersAndRedaction) }

func testHeadersAndRedaction(t *testing.T) {
	f := &fake{}
	u := startFake(t, f)
	rec := newRecorder()
	hdr := http.Header{}
	hdr.Set("Cookie", "session=cookie-secret")
	hdr.Set("X-Tenant", "acme")
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u, Header: hdr, Authorizer: transport.BearerToken("token-secret"), UserAgent: "mcpx/9"}, rec)
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	for _, s := range f.log.all() {
		if s.Header.Get("Authorization") != "Bearer token-secret" || s.Header.Get("Cookie") != "session=cookie-secret" || s.Header.Get("X-Tenant") != "acme" {
			t.Errorf("%s %s headers %v", s.Method, s.RPC, s.Header)
		}
	}
	text := rec.eventText(transport.EventHTTP) + rec.eventText(transport.EventNote)
	// A header the user added is shown by name only: any may be a
	// credential (X-Auth), whatever its name.
	if strings.Contains(text, "secret") || strings.Contains(text, "acme") {
		t.Errorf("a header's value was shown:\n%s", text)
	}
	for _, want := range []string{"Authorization: [redacted]", "Cookie: [redacted]", "X-Tenant: [redacted]", "POST " + u, "200 OK application/json", "Mcp-Session-Id: s1", "DELETE " + u} {
		if !strings.Contains(text, want) {
			t.Errorf("wire output lacks %q:\n%s", want, text)
		}
	}
}

// Close is idempotent, unblocks Read, ends in-flight requests and streams,
// and leaves no goroutine behind.
func TestCloseUnblocks(t *testing.T) { synctest.Test(t, testCloseUnblocks) }

func testCloseUnblocks(t *testing.T) {
	f := &fake{}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		startSSE(w)
		<-r.Context().Done()
		return true
	}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		startSSE(w)
		<-r.Context().Done()
		return true
	}
	u := startFake(t, f)
	sess, conn := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	callErr := make(chan error, 1)
	go func() {
		_, err := sess.Call(context.Background(), "tools/call", map[string]any{"name": "slow"})
		callErr <- err
	}()
	f.log.waitFor(t, "the tools/call POST", func() bool { return f.log.count("POST", "tools/call") == 1 })
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	select {
	case err := <-callErr:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("call ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the in-flight call")
	}
	if _, err := conn.Read(context.Background()); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if err := conn.Write(context.Background(), transport.Frame{Data: []byte(`{}`)}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	checkNoLeaks(t)
}

// A request answered with application/json whose body is not its response
// (a response to another id, a notification, garbage) is a transport
// failure at once: the JSON body is the request's one answer, so waiting
// would only run out the request timeout (as it did). What the body held
// is still delivered.
//
// A body that holds the response and more (newline-delimited messages,
// as over stdio) is not a JSON text, and the error says so: it used to
// say only that the body, which visibly held "id":2, did not answer
// request id 2.
func TestJSONBodyWithoutResponse(t *testing.T) {
	for name, body := range map[string]string{
		"wrongid": `{"jsonrpc":"2.0","id":999,"result":{"tools":[]}}`,
		"notif":   `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`,
		"garbage": `<html>oops</html>`,
		"ndjson":  `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}` + "\n",
		"cut":     `{"jsonrpc":"2.0","id":2,"result":{"tools":[`,
	} {
		why := map[string]string{
			"garbage": "(it is not JSON)",
			"ndjson":  "(it holds more than one JSON value, but a response body is one JSON-RPC message)",
			"cut":     "(it is not valid JSON)",
		}[name]
		t.Run(name, bubble(func(t *testing.T) {
			f := &fake{}
			f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.RPC != "tools/list" {
					return false
				}
				writeJSON(w, "", body)
				return true
			}
			u := startFake(t, f)
			rec := newRecorder()
			sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, rec)
			_, err := sess.Call(callCtx(t), "tools/list", nil)
			if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), "JSON body did not answer request id 2") {
				t.Fatalf("err = %v", err)
			}
			if want := strings.TrimSpace("request id 2 "+why) + ";"; !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say %q", err, want)
			}
			if !strings.Contains(err.Error(), strings.Join(strings.Fields(body), " ")) {
				t.Errorf("message %q does not say what the body held", err)
			}
			if name == "notif" {
				select {
				case <-rec.notified:
				case <-callCtx(t).Done():
					t.Fatal("the notification in the body was not delivered")
				}
			}
		}))
	}
}

// A server that closes the connection after reading a POST, before any
// response headers, is said to have done so: the error was a bare
// "POST …: EOF".
func TestConnectionClosedWithoutAnswer(t *testing.T) {
	synctest.Test(t, testConnectionClosedWithoutAnswer)
}

func testConnectionClosedWithoutAnswer(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		dropConnection(w)
		return true
	}
	u := startFake(t, f)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	_, err := sess.Call(callCtx(t), "tools/list", nil)
	if !errors.Is(err, transport.ErrTransport) || !strings.Contains(err.Error(), "POST "+u+": the server closed the connection without answering") {
		t.Fatalf("err = %v", err)
	}
}

// A server that resets the connection after reading a POST, before any
// response headers (a server killed with the request not all read), has
// closed it without answering too: the error was the bare "read tcp
// …: connection reset by peer".
func TestConnectionResetWithoutAnswer(t *testing.T) {
	f := &fake{log: newLog()}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return true
		}
		// No linger: the close is a reset (RST), not an end (FIN).
		if err := conn.(*net.TCPConn).SetLinger(0); err != nil {
			t.Errorf("linger: %v", err)
		}
		conn.Close()
		return true
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	u := srv.URL + "/mcp"
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	defer sess.Close()
	_, err := sess.Call(callCtx(t), "tools/list", nil)
	if !errors.Is(err, transport.ErrTransport) || !errors.Is(err, syscall.ECONNRESET) ||
		!strings.Contains(err.Error(), "POST "+u+": the server closed the connection without answering (") {
		t.Fatalf("err = %v", err)
	}
}

// serveSSEStream is a legacy server's GET /sse: the endpoint event, then
// each message from out, until end is closed or the client goes.
func serveSSEStream(w http.ResponseWriter, r *http.Request, endpoint string, out <-chan string, end <-chan struct{}) {
	startSSE(w)
	sendSSE(w, "event: endpoint\ndata: "+endpoint+"\n\n")
	for {
		select {
		case m := <-out:
			sendSSE(w, "event: message\ndata: "+m+"\n\n")
		case <-end:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// A JSON-RPC error that answers a request with a 4xx status is the
// request's answer only within --max-message-size, like any other: one
// larger fails the request with the HTTP error, never delivered whole.
func TestErrorStatusAnswerOverTheLimit(t *testing.T) {
	synctest.Test(t, testErrorStatusAnswerOverTheLimit)
}

func testErrorStatusAnswerOverTheLimit(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"refused","data":"%s"}}`, s.ID, strings.Repeat("x", 4096))
		return true
	}
	sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f), MaxMessageSize: 1024}, nil)
	_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "echo"})
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest {
		t.Fatalf("err = %v, want the HTTP 400", err)
	}
	if len(err.Error()) > 1024 {
		t.Errorf("the error quotes %d bytes", len(err.Error()))
	}
}

// A Content-Type header is the server's, at any length a header may have,
// and so is a status line's reason phrase: the error refusing the type,
// and --wire's line for the answer, quote them cut short.
func TestLongContentTypeQuotedShort(t *testing.T) {
	ct := "text/x-" + strings.Repeat("y", 100<<10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(conn, "HTTP/1.1 200 O%s\r\nContent-Type: %s\r\nContent-Length: 10\r\n\r\ndata: {}\n\n", strings.Repeat("K", 100<<10), ct)
	}))
	t.Cleanup(ts.Close)
	for _, mode := range []transport.HTTPMode{transport.ModeStreamable, transport.ModeSSE} {
		rec := newRecorder()
		_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: mode}, rec)
		if err == nil || !strings.Contains(err.Error(), `Content-Type "text/x-yyy`) || len(err.Error()) > 2000 {
			t.Errorf("%s: err = %.300v… (%d bytes)", mode, err, len(fmt.Sprint(err)))
		}
		for _, line := range strings.Split(rec.eventText(transport.EventHTTP), "\n") {
			if len(line) > 2000 {
				t.Errorf("%s: an event of %d bytes: %.300s…", mode, len(line), line)
			}
		}
	}
}
