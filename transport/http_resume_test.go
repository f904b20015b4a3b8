package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// toolName returns the name a tools/call request asks for.
func toolName(s seen) string {
	var m struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(s.Body, &m)
	return m.Params.Name
}

// A POST stream that cannot be resumed loses the requests it owed, and
// only those: the session, a request waiting on another stream, and
// later requests carry on (spec 2025-11-25: basic/transports,
// "Resumability and Redelivery": redelivery is per stream). Each loss
// says what happened. mcpx used to fail the whole connection.
func TestResumeFailureLosesOnlyItsRequests(t *testing.T) {
	cases := []struct {
		name string
		// prime is what the "lost" request's POST stream sends before it
		// ends.
		prime string
		// resume answers the GET with Last-Event-ID; nil: never asked.
		resume func(w http.ResponseWriter)
		limit  int64
		// attempts is how many resumptions are tried.
		attempts int
		// resent: net/http may send a GET again once by itself when a
		// reused connection is closed under it (up to 2*attempts GETs).
		resent bool
		want   []string
		is     error
	}{
		{
			name:  "refused with 400",
			prime: "id: L1\nretry: 10\ndata:\n\n",
			resume: func(w http.ResponseWriter) {
				http.Error(w, "unknown \x1b[31mevent id", http.StatusBadRequest)
			},
			attempts: 1,
			want:     []string{"the SSE stream answering POST http://", "ended before the response arrived, and resuming it failed: GET http://", "HTTP 400 Bad Request: unknown \\x1b[31mevent id"},
		},
		{
			name:  "refused with 401",
			prime: "id: L1\nretry: 10\ndata:\n\n",
			resume: func(w http.ResponseWriter) {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				http.Error(w, "expired", http.StatusUnauthorized)
			},
			attempts: 1,
			want:     []string{"resuming it failed: GET http://", "HTTP 401"},
			is:       transport.ErrUnauthorized,
		},
		{
			name:  "answered with JSON",
			prime: "id: L1\nretry: 10\ndata:\n\n",
			resume: func(w http.ResponseWriter) {
				writeJSON(w, "", `{}`)
			},
			attempts: 1,
			want:     []string{`resuming it failed: GET http://`, `the server answered with Content-Type "application/json", not text/event-stream`},
		},
		{
			name:  "resumed stream closes at once",
			prime: "id: L1\nretry: 10\ndata:\n\n",
			resume: func(w http.ResponseWriter) {
				startSSE(w)
			},
			attempts: 3,
			want:     []string{"ended again as soon as it was resumed, with no event before the response arrived; gave up resuming it after 3 attempts"},
		},
		{
			name:  "connection dropped",
			prime: "id: L1\nretry: 10\ndata:\n\n",
			resume: func(w http.ResponseWriter) {
				dropConnection(w)
			},
			attempts: 3,
			resent:   true,
			want:     []string{"could not be resumed before the response arrived; gave up resuming it after 3 attempts; the last attempt: GET http://", "the server closed the connection without answering"},
		},
		{
			name:  "server error",
			prime: "id: L1\nretry: 10\ndata:\n\n",
			resume: func(w http.ResponseWriter) {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
			},
			attempts: 3,
			want:     []string{"gave up resuming it after 3 attempts; the last attempt: GET http://", "HTTP 503 Service Unavailable: overloaded"},
		},
		{
			name:     "no event id",
			prime:    ": nothing\n\n",
			want:     []string{"ended before the response arrived, and the server gave no event id to resume it from"},
			attempts: 0,
		},
		{
			name:     "event over the maximum message size",
			prime:    "id: L1\ndata: " + strings.Repeat("x", 2048) + "\n\n",
			limit:    1024,
			want:     []string{"the SSE stream answering POST http://", "an SSE event exceeds the maximum message size (1 KiB)"},
			is:       transport.ErrFrameTooLarge,
			attempts: 0,
		},
		{
			// The response, its id after its result: the id is not read
			// before the limit is passed, so the stream ends, failing
			// the one request it owes, not the session.
			name: "response over the maximum message size, its id last",
			prime: "id: L1\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n\n" +
				"id: L2\ndata: " + `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 2048) + `"}]},"id":{{id}}}` + "\n\n",
			limit:    1024,
			want:     []string{"the SSE stream answering POST http://", "an SSE event exceeds the maximum message size (1 KiB)"},
			is:       transport.ErrFrameTooLarge,
			attempts: 0,
		},
		{
			// An id a header cannot carry (HTTP field values hold no
			// control characters but tab): no GET could send it back.
			name:     "event id with a control character",
			prime:    "id: L\x01\x1b[31m\nretry: 10\ndata:\n\n",
			want:     []string{"ended before the response arrived, and the server's event id \"L\\x01\\x1b[31m\" cannot be sent back to resume it: a Last-Event-ID header cannot hold its byte 0x01"},
			attempts: 0,
		},
		{
			name:     "retry of 23 days",
			prime:    "id: L1\nretry: 2000000000\ndata:\n\n",
			want:     []string{"the server asked to wait 555h33m20s before resuming it (retry: 2000000000); mcpx waits at most 1h0m0s"},
			attempts: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, bubble(func(t *testing.T) {
			release := make(chan struct{})
			free := sync.OnceFunc(func() { close(release) })
			defer free() // a failing test does not leave the handler blocked
			f := &fake{}
			f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.RPC != "tools/call" {
					return false
				}
				startSSE(w)
				switch toolName(s) {
				case "slow":
					sendSSE(w, "id: S1\ndata:\n\n")
					<-release
					sendSSE(w, "id: S2\ndata: "+response(s.ID, "slow done")+"\n\n")
				case "lost":
					sendSSE(w, strings.ReplaceAll(tc.prime, "{{id}}", s.ID))
				}
				return true
			}
			f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.LastEvent == "" {
					return false
				}
				if s.LastEvent != "L1" || tc.resume == nil {
					t.Errorf("GET with Last-Event-ID %q", s.LastEvent)
					http.Error(w, "unexpected", http.StatusBadRequest)
					return true
				}
				tc.resume(w)
				return true
			}
			start := time.Now()
			sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f), MaxReconnects: 3, MaxMessageSize: tc.limit,
				ReconnectDelay: 10 * time.Millisecond}, nil)

			slow := make(chan error, 1)
			var slowRes json.RawMessage
			go func() {
				res, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "slow"})
				slowRes = res
				slow <- err
			}()
			synctest.Wait() // the slow request waits on its stream

			_, err := sess.Call(callCtx(t), "tools/call", map[string]any{"name": "lost"})
			if !errors.Is(err, transport.ErrStreamLost) {
				t.Fatalf("err = %v, want a lost response stream", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to match %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to say %q", err, w)
				}
			}
			if strings.Count(err.Error(), "transport failure") != 1 {
				t.Errorf("err = %v: says transport failure more than once", err)
			}
			if tc.name == "retry of 23 days" && time.Since(start) > time.Second {
				t.Errorf("gave up after %s, want at once", time.Since(start))
			}
			n := 0
			for _, g := range f.log.find("GET", "*") {
				if g.LastEvent != "" {
					n++
				}
			}
			if n != tc.attempts && !(tc.resent && n > tc.attempts && n <= 2*tc.attempts) {
				t.Errorf("%d attempts to resume, want %d: %s", n, tc.attempts, f.log.summary())
			}
			select {
			case <-sess.Done():
				t.Fatalf("the session ended: %v", sess.Err())
			default:
			}

			// The request on the other stream carries on.
			free()
			if err := <-slow; err != nil || !strings.Contains(string(slowRes), "slow done") {
				t.Fatalf("the other request: %s, %v", slowRes, err)
			}
			// And so does the session.
			if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
				t.Fatalf("tools/list after the loss: %v", err)
			}
			if n := f.log.count("POST", "initialize"); n != 1 {
				t.Errorf("initialized %d times", n)
			}
			if n := f.log.count("POST", "tools/call"); n != 2 {
				t.Errorf("tools/call POSTed %d times, want 2 (none sent again)", n)
			}
		}))
	}
}

// "retry: 0" asks to reconnect at once: mcpx waits its shortest delay
// (100 ms), not the delay it waits when the server set none.
func TestRetryZero(t *testing.T) { synctest.Test(t, testRetryZero) }

func testRetryZero(t *testing.T) {
	var cut atomic.Int64
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		startSSE(w)
		sendSSE(w, "id: z1\nretry: 0\ndata:\n\n")
		cut.Store(time.Now().UnixNano())
		return true
	}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.LastEvent == "" {
			return false
		}
		startSSE(w)
		sendSSE(w, "data: "+response(f.log.find("POST", "tools/call")[0].ID, "resumed")+"\n\n")
		return true
	}
	sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f), ReconnectDelay: 5 * time.Second}, nil)
	if got := toolText(t, sess, "x", map[string]any{}); got != "resumed" {
		t.Fatalf("result %q", got)
	}
	var resumes []seen
	for _, g := range f.log.find("GET", "*") {
		if g.LastEvent != "" {
			resumes = append(resumes, g)
		}
	}
	if len(resumes) != 1 {
		t.Fatalf("%d resumptions: %s", len(resumes), f.log.summary())
	}
	// On synctest's clock the wait is exact.
	if wait := resumes[0].Time.Sub(time.Unix(0, cut.Load())); wait != 100*time.Millisecond {
		t.Errorf("resumed %s after the stream ended, want 100ms (retry: 0, at the shortest delay)", wait)
	}
}

// A request mcpx stopped waiting for (its timeout, an interrupt) lets go
// of its stream once the server is told (notifications/cancelled): a
// server that polls, closing the stream with a retry field and answering
// each resumption with another event, was polled for as long as the
// session lasted, and a stream left open held a connection.
func TestAbandonedRequestStopsResuming(t *testing.T) {
	synctest.Test(t, testAbandonedRequestStopsResuming)
}

func testAbandonedRequestStopsResuming(t *testing.T) {
	var polls atomic.Int32
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/call" {
			return false
		}
		startSSE(w)
		sendSSE(w, "id: p0\nretry: 100\ndata:\n\n")
		return true
	}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.LastEvent == "" {
			return false
		}
		startSSE(w)
		sendSSE(w, fmt.Sprintf("id: p%d\ndata:\n\n", polls.Add(1)))
		return true
	}
	sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := sess.Call(ctx, "tools/call", map[string]any{"name": "x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if n := f.log.count("POST", "notifications/cancelled"); n != 1 {
		t.Errorf("notifications/cancelled sent %d times", n)
	}
	synctest.Wait()
	before := polls.Load()
	if before < 5 {
		t.Fatalf("polled %d times while the request was waited for, want about 9", before)
	}
	time.Sleep(time.Minute)
	synctest.Wait()
	if after := polls.Load(); after != before {
		t.Errorf("polled %d more times after the request was given up", after-before)
	}
	// The session goes on.
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
}
