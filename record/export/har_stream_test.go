package export

import (
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/record"
)

// The synthetic entries of a session without HTTP are written as its
// events are read, not once the session is: when a response has been
// read, its request's entry is out, and so is every entry before it,
// even after a request that is never answered or a notification. So an
// export holds the messages in flight, not the session (a session of
// 147 MB took 543 MB to export, 26 MB now). Counted in entries, not in
// bytes, so that nothing but a change of what is held can fail it.
func TestHARMessageEntriesHoldWhatIsInFlight(t *testing.T) {
	const n = 1000
	frame := func(i int, dir record.Direction, data string) record.Event {
		return record.Event{Session: 1, Time: time.Duration(i) * time.Millisecond, Kind: record.KindFrame, Dir: dir, Data: []byte(data)}
	}
	var events []record.Event
	events = append(events, frame(0, record.ClientToServer, `{"jsonrpc":"2.0","id":"lost","method":"tools/call","params":{"name":"slow"}}`))
	for i := 1; i <= n; i++ {
		events = append(events,
			frame(i, record.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`, i)),
			frame(i, record.ServerToClient, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`),
			frame(i, record.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i)))
	}
	seq := func(yield func(record.Event, error) bool) {
		for _, e := range events {
			if !yield(e, nil) {
				return
			}
		}
	}
	sc, err := scanSession(seq)
	if err != nil {
		t.Fatal(err)
	}
	// Entries that should be out when event k is read: the lost request
	// (never answered), then for each exchange before k its request and
	// the notification.
	emitted, worst := 0, 0
	watched := iter.Seq2[record.Event, error](func(yield func(record.Event, error) bool) {
		for k, e := range events {
			if k > 0 {
				want := 1 + 2*((k-1)/3)
				worst = max(worst, want-emitted)
			}
			if !yield(e, nil) {
				return
			}
		}
	})
	s := &record.Session{N: 1, Info: record.SessionInfo{Transport: "stdio"}}
	sp := newSplicer(false)
	var urls []string
	err = messageEntries(sp, s, watched, sc.answered, func(e *harEntry) error {
		emitted++
		urls = append(urls, e.Request.URL)
		sp.reset()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if emitted != 1+2*n {
		t.Fatalf("%d entries, want %d", emitted, 1+2*n)
	}
	if worst > 0 {
		t.Errorf("entries were held back while the session was read: up to %d more than the messages in flight", worst)
	}
	if urls[0] != "stdio://session-1/tools/call" || urls[2] != "stdio://session-1/notifications/message" {
		t.Errorf("entries out of order: %q", urls[:3])
	}
}
