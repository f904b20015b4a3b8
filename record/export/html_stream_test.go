package export

import (
	"bufio"
	"bytes"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/record"
)

// A session's timeline is written as its events are read, not once the
// session is: when an event is read, the rows of every event before it
// are out, even those of requests whose responses come later (a first
// pass found them) or never. So the page holds the requests in flight,
// not the session (a stdio session of 147 MB took 477 MB to export, 27
// MB now). Counted in rows, not in bytes, so that nothing but a change
// of what is held can fail it.
func TestHTMLRowsAreWrittenAsEventsAreRead(t *testing.T) {
	const n = 500
	frame := func(i int, dir record.Direction, data string) record.Event {
		return record.Event{Session: 1, Time: time.Duration(i) * time.Millisecond, Kind: record.KindFrame, Dir: dir, Data: []byte(data)}
	}
	var events []record.Event
	events = append(events, frame(0, record.ClientToServer, `{"jsonrpc":"2.0","id":"lost","method":"tools/call","params":{"name":"slow"}}`))
	for i := 1; i <= n; i++ {
		// Each request is answered after the next one is sent.
		events = append(events,
			frame(i, record.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`, i)),
			record.Event{Session: 1, Time: time.Duration(i) * time.Millisecond, Kind: record.KindStderr, Text: "working"})
		if i > 1 {
			events = append(events, frame(i, record.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i-1)))
		}
	}
	seq := func(yield func(record.Event, error) bool) {
		for _, e := range events {
			if !yield(e, nil) {
				return
			}
		}
	}
	sc, err := scanRows(seq)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	rows := func() int {
		w.Flush()
		return bytes.Count(out.Bytes(), []byte(`{"id":"s1-`))
	}
	worst := 0
	watched := iter.Seq2[record.Event, error](func(yield func(record.Event, error) bool) {
		for k, e := range events {
			// One row for each event before k (a message each).
			worst = max(worst, k-rows())
			if !yield(e, nil) {
				return
			}
		}
	})
	s := &record.Session{N: 1, Info: record.SessionInfo{Transport: "stdio"}}
	if err := writeSession(w, newSplicer(true), s, watched, sc); err != nil {
		t.Fatal(err)
	}
	if got := rows(); got != len(events) {
		t.Fatalf("%d rows, want %d", got, len(events))
	}
	if worst > 0 {
		t.Errorf("rows were held back while the session was read: up to %d behind the events", worst)
	}
	// The first pass is what lets a request's row name its response.
	for _, want := range []string{
		`"id":"s1-m0","t":0,"kind":"request"`,
		`"id":"s1-m1","pair":"s1-m3","t":1000,"dur":1000,"kind":"request"`,
		`"id":"s1-m3","pair":"s1-m1","t":2000,"dur":1000,"kind":"response","dir":"s2c","method":"tools/call"`,
	} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("no %s in the rows", want)
		}
	}
	if !bytes.Contains(out.Bytes(), []byte(`"rpcId":"\"lost\"","pending":true`)) {
		t.Errorf("the request never answered is not pending")
	}
}
