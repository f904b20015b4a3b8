package transport_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

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
