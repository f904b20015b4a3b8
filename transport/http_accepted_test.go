package transport_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/transport"
)

// A POST that carries only notifications or responses is answered 202
// Accepted with no body (spec 2025-11-25: basic/transports, "Sending
// Messages to the Server"; 2025-03-26 and 2026-07-28 alike). A server that
// answers it with a body instead — here a new request each time, so that
// every answer mcpx sends is answered with another — is departing from
// the protocol: what the body holds is not read as messages (the answer
// mcpx owes would be POSTed again, and so on for as long as the session
// lasts), an SSE stream is closed unread, and the session says so, ten
// times of the sort, then counts. mcpx used to deliver the body: a
// ping-pong of requests and answers that only the server could end.
// A body under 202 Accepted is the same departure as one under 200 (mcpx
// used to close it unread and say nothing).
func TestBodyAnsweringNoRequest(t *testing.T) {
	for _, sse := range []bool{false, true} {
		for _, status := range []int{http.StatusOK, http.StatusAccepted} {
			name := fmt.Sprintf("%s %d", map[bool]string{false: "json", true: "sse"}[sse], status)
			t.Run(name, bubble(func(t *testing.T) { testBodyAnsweringNoRequest(t, sse, status) }))
		}
	}
}

func testBodyAnsweringNoRequest(t *testing.T, sse bool, status int) {
	const most = 40 // the server stops answering so after this many
	var answered, open atomic.Int32
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "" && s.ID != "" || s.RPC == "" && s.ID == "" {
			return false // a request; or no JSON-RPC at all
		}
		n := answered.Add(1)
		if n > most {
			return false
		}
		ping := fmt.Sprintf(`{"jsonrpc":"2.0","id":"srv%d","method":"ping"}`, n)
		if !sse {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(ping))
			return true
		}
		open.Add(1)
		defer open.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		sendSSE(w, "data: "+ping+"\n\n")
		<-r.Context().Done() // a stream the server never ends
		return true
	}
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, rec)
	const notes = 20
	for range notes {
		if err := sess.Notify(callCtx(t), "notifications/roots/list_changed", nil); err != nil {
			t.Fatalf("notify: %v", err)
		}
	}
	if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	synctest.Wait()

	var answers int
	for _, s := range f.log.find("POST", "") {
		if s.ID != "" {
			answers++
		}
	}
	if answers != 0 {
		t.Errorf("mcpx POSTed %d answers to the requests the server put in its answers to notifications and responses; want none", answers)
	}
	if n := open.Load(); n != 0 {
		t.Errorf("%d SSE streams answering a notification are still open", n)
	}
	// notifications/initialized and the 20: one departure each, ten said.
	deps := rec.allDepartures()
	if len(deps) != inspector.EachShown {
		t.Fatalf("%d departures said, want %d: %q", len(deps), inspector.EachShown, deps)
	}
	want := fmt.Sprintf(`/mcp carried a notification, no request, and the server answered it with HTTP %d and an application/json body, but such a POST is answered 202 Accepted with no body (spec: basic/transports, "Sending Messages to the Server"); mcpx did not read it: {"jsonrpc":"2.0","id":"srv1","method":"ping"}`, status)
	if sse {
		want = fmt.Sprintf(`/mcp carried a notification, no request, and the server answered it with HTTP %d and an SSE stream (text/event-stream), but such a POST is answered 202 Accepted with no body (spec: basic/transports, "Sending Messages to the Server"); mcpx closed it unread`, status)
	}
	if !strings.Contains(deps[0], want) || !strings.Contains(deps[0], "POST http://") {
		t.Errorf("departure %q\nwant one with %q", deps[0], want)
	}
	if last := deps[len(deps)-1]; !strings.Contains(last, "(further ") || !strings.Contains(last, "are counted, not shown)") {
		t.Errorf("the tenth departure %q does not say the rest are counted", last)
	}
	unsaid := sess.UnsaidDepartures()
	if len(unsaid) != 1 || unsaid[0].N != notes+1-inspector.EachShown {
		t.Errorf("unsaid: %+v, want %d of one sort", unsaid, notes+1-inspector.EachShown)
	}
	for _, w := range rec.warnings {
		t.Errorf("warning: %s", w)
	}
}

// What takes a POST that carried no request without a body is no
// departure: 202 Accepted, as the spec has it (with no body even when
// chunked), and an empty 200 (of known length, or chunked and ended at
// once).
func TestNoBodyAnsweringNoRequest(t *testing.T) {
	for name, answer := range map[string]func(http.ResponseWriter){
		"202":       func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) },
		"empty 200": func(w http.ResponseWriter) { w.Header().Set("Content-Length", "0") },
		"chunked empty": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.(http.Flusher).Flush()
		},
		"chunked empty 202": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			w.(http.Flusher).Flush()
		},
	} {
		t.Run(name, bubble(func(t *testing.T) {
			f := &fake{}
			f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.RPC == "" || s.ID != "" {
					return false
				}
				answer(w)
				return true
			}
			rec := newRecorder()
			sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, rec)
			if err := sess.Notify(callCtx(t), "notifications/roots/list_changed", nil); err != nil {
				t.Fatalf("notify: %v", err)
			}
			synctest.Wait()
			if d := rec.allDepartures(); len(d) != 0 || len(rec.warnings) != 0 {
				t.Errorf("departures %q, warnings %q", d, rec.warnings)
			}
		}))
	}
}
