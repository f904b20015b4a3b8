package transport_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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

// What takes a POST that carried no request with 202 Accepted and no
// body is no departure, whatever Content-Type it names: the type of a
// body that is not there says nothing (with no body even when chunked,
// and an SSE stream chunked and ended at once: mcpx reported that one as
// a stream it closed unread).
func TestNoBodyAnsweringNoRequest(t *testing.T) {
	for name, answer := range map[string]func(http.ResponseWriter){
		"202": func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) },
		"chunked empty 202": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			w.(http.Flusher).Flush()
		},
		"sse 202 of length 0": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusAccepted)
		},
		"chunked empty sse 202": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusAccepted)
			w.(http.Flusher).Flush()
		},
	} {
		t.Run(name, bubble(func(t *testing.T) {
			rec, sess := dialAnsweringNotes(t, answer)
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

// A success other than 202 Accepted with no body (an empty 200 OK, 204
// No Content) takes a POST that carried no request too, but the spec says
// 202: the session says so once, and the notifications count as
// delivered. mcpx took an empty 200 without a word.
func TestEmptyNon202AnsweringNoRequest(t *testing.T) {
	for name, c := range map[string]struct {
		status int
		answer func(http.ResponseWriter)
	}{
		"empty 200": {200, func(w http.ResponseWriter) { w.Header().Set("Content-Length", "0") }},
		"chunked empty 200": {200, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.(http.Flusher).Flush()
		}},
		"chunked empty sse 200": {200, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
		}},
		"204": {204, func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }},
	} {
		t.Run(name, bubble(func(t *testing.T) {
			rec, sess := dialAnsweringNotes(t, c.answer)
			for range 3 {
				if err := sess.Notify(callCtx(t), "notifications/roots/list_changed", nil); err != nil {
					t.Fatalf("notify: %v", err)
				}
			}
			synctest.Wait()
			want := fmt.Sprintf(`/mcp carried a notification, no request, and the server answered it with HTTP %d and no body, but such a POST is answered 202 Accepted (spec: basic/transports, "Sending Messages to the Server"); mcpx took it as accepted (further such answers are not said)`, c.status)
			d := rec.allDepartures()
			if len(d) != 1 || !strings.Contains(d[0], want) {
				t.Errorf("departures %q\nwant one with %q", d, want)
			}
			if len(rec.warnings) != 0 {
				t.Errorf("warnings %q", rec.warnings)
			}
		}))
	}
}

// An SSE stream of unknown length answering a POST that carried no
// request, held open with nothing on it, is closed once mcpx waited for
// its end as long as it does, and is a body: the notification is
// delivered meanwhile (Notify does not wait for it).
func TestQuietStreamAnsweringNoRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var open atomic.Int32
		var closed atomic.Int64
		start := time.Now()
		f := &fake{}
		f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
			if s.RPC != "notifications/roots/list_changed" {
				return false
			}
			open.Add(1)
			defer open.Add(-1)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusAccepted)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			closed.Store(int64(time.Since(start)))
			return true
		}
		rec := newRecorder()
		sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, rec)
		start = time.Now()
		if err := sess.Notify(callCtx(t), "notifications/roots/list_changed", nil); err != nil {
			t.Fatalf("notify: %v", err)
		}
		if d := time.Since(start); d > 0 {
			t.Errorf("Notify took %s: it waited for the stream", d)
		}
		synctest.Wait()
		if n := open.Load(); n != 1 {
			t.Fatalf("%d streams open before mcpx's wait ran out, want 1", n)
		}
		time.Sleep(5 * time.Second) // the bubble's clock
		synctest.Wait()
		if n := open.Load(); n != 0 {
			t.Errorf("%d quiet streams still open", n)
		}
		d := rec.allDepartures()
		want := "HTTP 202 and an SSE stream (text/event-stream), but such a POST is answered 202 Accepted with no body (spec: basic/transports, \"Sending Messages to the Server\"); it sent nothing for 5s without ending, and mcpx closed it"
		if len(d) != 1 || !strings.Contains(d[0], want) {
			t.Errorf("departures %q\nwant one with %q", d, want)
		}
		if got := time.Duration(closed.Load()); got != 5*time.Second {
			t.Errorf("the stream was closed after %s, want 5s", got)
		}
	})
}

// dialAnsweringNotes connects to a fake server that answers every
// notification with answer.
func dialAnsweringNotes(t *testing.T, answer func(http.ResponseWriter)) (*recorder, *inspector.Session) {
	t.Helper()
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
	return rec, sess
}
