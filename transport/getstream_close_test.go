package transport

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// failingBody is a response body whose reads fail with err.
type failingBody struct{ err error }

func (f failingBody) Read([]byte) (int, error) { return 0, f.err }
func (f failingBody) Close() error             { return nil }

// A GET stream that breaks because the connection is closing ends without
// a word. The stream's request and the stream's own context are both
// children of the connection's, and which of them hears of the close first
// is chance: here the request has (its body fails with context.Canceled)
// and the stream's context has not. Reported, the end ("broke; reconnecting
// in …") made traces recorded with --stable differ from run to run.
func TestGETStreamEndedByCloseIsQuiet(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	b, err := newHTTPBase(HTTPOptions{
		URL:            "http://127.0.0.1:1/mcp",
		ReconnectDelay: time.Millisecond,
		Observer: func(ev Event) {
			if ev.Kind == EventNote {
				mu.Lock()
				notes = append(notes, ev.Text)
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newStreamable(b, "http://127.0.0.1:1/mcp")
	b.cancel() // the connection closes
	x := &exchange{
		resp:   &http.Response{StatusCode: http.StatusOK, Body: failingBody{context.Canceled}},
		cancel: func() {},
		stop:   func() bool { return true },
	}
	s.runGetStream(context.Background(), x, &streamState{name: "get-1", method: "GET"})
	mu.Lock()
	defer mu.Unlock()
	if len(notes) > 0 {
		t.Errorf("the closing connection's GET stream was reported:\n%s", strings.Join(notes, "\n"))
	}
}
