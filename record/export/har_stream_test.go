package export

import (
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
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

// The entries of a session's HTTP exchanges are written as its events
// are read, in the order of the requests: each once no later event
// changes it (its response, its JSON body or its SSE stream), so that
// what is held is the exchanges in progress, here two at most: each
// request's response comes after the next request is sent. A request
// never answered (to another URL) holds nothing back. (A Streamable
// HTTP session of 210 MB took 1 GB and five minutes to export, 68 MB
// and 12 s now.) Counted in entries, not in bytes.
func TestHARHTTPEntriesHoldWhatIsInFlight(t *testing.T) {
	const n = 300
	const u, other = "http://127.0.0.1:7000/mcp", "http://127.0.0.1:7000/other"
	at := func(i int) time.Duration { return time.Duration(i) * time.Millisecond }
	post := func(i int, url string) record.Event {
		return record.Event{Session: 1, Time: at(i), Kind: record.KindHTTP, Text: "POST " + url, Meta: &transport.Meta{HTTPMethod: "POST", URL: url}}
	}
	call := func(i int, id string) record.Event {
		return record.Event{Session: 1, Time: at(i), Kind: record.KindFrame, Dir: record.ClientToServer,
			Data: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo"}}`)}
	}
	var events []record.Event
	events = append(events, call(0, `"lost"`), post(0, other))
	for i := 1; i <= n+1; i++ {
		if i <= n {
			events = append(events, call(i, fmt.Sprint(i)), post(i, u))
		}
		if i == 1 {
			continue
		}
		// The response to the call before, on an SSE stream or (every
		// other call) as a JSON body.
		ct, stream := "text/event-stream", fmt.Sprintf("post-%d", i-1)
		if i%2 == 0 {
			ct, stream = "application/json", ""
		}
		meta := transport.Meta{HTTPMethod: "POST", URL: u, HTTPStatus: 200, ContentType: ct}
		events = append(events, record.Event{Session: 1, Time: at(i), Kind: record.KindHTTP, Text: "200 OK " + ct + " ← POST " + u, Meta: &meta})
		body := meta
		body.StreamID = stream
		events = append(events, record.Event{Session: 1, Time: at(i), Kind: record.KindFrame, Dir: record.ServerToClient, Meta: &body,
			Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i-1))})
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
	if len(sc.lasts) != n+1 {
		t.Fatalf("the first pass found %d exchanges, want %d", len(sc.lasts), n+1)
	}
	made, written, worst := 0, 0, 0
	watched := iter.Seq2[record.Event, error](func(yield func(record.Event, error) bool) {
		for _, e := range events {
			worst = max(worst, made-written)
			if e.Kind == record.KindHTTP && e.Meta.HTTPStatus == 0 {
				made++
			}
			if !yield(e, nil) {
				return
			}
		}
	})
	var bodies []string
	err = httpEntries(newSplicer(false), watched, sc.lasts, time.Unix(0, 0), func(e *harEntry, sp *splicer) error {
		written++
		bodies = append(bodies, e.Request.PostData.Text.String())
		if e.Response.Status != 0 && e.Response.Content.Text.len() == 0 {
			t.Errorf("entry %d written without its response's body", written)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if written != n+1 {
		t.Fatalf("%d entries, want %d", written, n+1)
	}
	if worst > 2 {
		t.Errorf("entries were held back while the session was read: up to %d, want the 2 in progress", worst)
	}
	if !strings.Contains(bodies[0], `"lost"`) || !strings.Contains(bodies[1], `"id":1,`) || !strings.Contains(bodies[n], fmt.Sprintf(`"id":%d,`, n)) {
		t.Errorf("entries out of order: %q …", bodies[:2])
	}
}

// A Streamable HTTP session's GET stream is opened after initialize and
// lasts until the session ends: its entry, which comes first, is settled
// only by the session's last event. The entries after it are written as
// they are settled all the same (its own is made by reading ahead), not
// held until the session's end. Counted in entries, not in bytes.
func TestHARHTTPEntriesBesideALongGETStream(t *testing.T) {
	const n = 300
	const u = "http://127.0.0.1:7000/mcp"
	at := func(i int) time.Duration { return time.Duration(i) * time.Millisecond }
	get := transport.Meta{HTTPMethod: "GET", URL: u}
	getOK := get
	getOK.HTTPStatus, getOK.ContentType = 200, "text/event-stream"
	onGet := getOK
	onGet.StreamID = "get-1"
	events := []record.Event{
		{Session: 1, Kind: record.KindHTTP, Text: "GET " + u, Meta: &get},
		{Session: 1, Kind: record.KindHTTP, Text: "200 OK text/event-stream ← GET " + u, Meta: &getOK},
	}
	for i := 1; i <= n; i++ {
		events = append(events,
			record.Event{Session: 1, Time: at(i), Kind: record.KindFrame, Dir: record.ClientToServer,
				Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`, i))},
			record.Event{Session: 1, Time: at(i), Kind: record.KindHTTP, Text: "POST " + u, Meta: &transport.Meta{HTTPMethod: "POST", URL: u}},
			record.Event{Session: 1, Time: at(i), Kind: record.KindHTTP, Text: "200 OK application/json ← POST " + u,
				Meta: &transport.Meta{HTTPMethod: "POST", URL: u, HTTPStatus: 200, ContentType: "application/json"}},
			record.Event{Session: 1, Time: at(i), Kind: record.KindFrame, Dir: record.ServerToClient,
				Meta: &transport.Meta{HTTPMethod: "POST", URL: u, HTTPStatus: 200, ContentType: "application/json"},
				Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i))})
		if i%10 == 0 {
			events = append(events, record.Event{Session: 1, Time: at(i), Kind: record.KindFrame, Dir: record.ServerToClient, Meta: &onGet,
				Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`, i))})
		}
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
	if len(sc.lasts) != n+1 || sc.lasts[0] != len(events)-1 {
		t.Fatalf("the first pass found %d exchanges, the GET's last event %d; want %d, %d", len(sc.lasts), sc.lasts[0], n+1, len(events)-1)
	}
	made, written, worst, passes := 0, 0, 0, 0
	watched := iter.Seq2[record.Event, error](func(yield func(record.Event, error) bool) {
		passes++
		main := passes == 1 // not a pass reading ahead
		for _, e := range events {
			if main {
				worst = max(worst, made-written)
				if e.Kind == record.KindHTTP && e.Meta.HTTPStatus == 0 {
					made++
				}
			}
			if !yield(e, nil) {
				return
			}
		}
	})
	var sse []int
	err = httpEntries(newSplicer(false), watched, sc.lasts, time.Unix(0, 0), func(e *harEntry, sp *splicer) error {
		written++
		sse = append(sse, len(e.SSE))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if written != n+1 || sse[0] != n/10 {
		t.Fatalf("%d entries, the first with %d SSE events; want %d, %d", written, sse[0], n+1, n/10)
	}
	if passes != 2 {
		t.Errorf("the events were read %d times, want twice (once ahead, for the GET's entry)", passes)
	}
	if worst > holdAhead+2 {
		t.Errorf("entries were held back while the session was read: up to %d, want no more than %d", worst, holdAhead+2)
	}
}

// A request answered only at the session's end (a subscription, a long
// task) holds back no more than holdAhead entries after it: its entry,
// which comes first, is made with its response by reading ahead, and the
// entries after it are written as they are settled.
func TestHARMessageEntriesBesideALongRequest(t *testing.T) {
	const n = 300
	frame := func(i int, dir record.Direction, data string) record.Event {
		return record.Event{Session: 1, Time: time.Duration(i) * time.Millisecond, Kind: record.KindFrame, Dir: dir, Data: []byte(data)}
	}
	events := []record.Event{frame(0, record.ClientToServer, `{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow"}}`)}
	for i := 1; i <= n; i++ {
		events = append(events,
			frame(i, record.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`, i)),
			frame(i, record.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i)))
	}
	events = append(events, frame(n+1, record.ServerToClient, `{"jsonrpc":"2.0","id":"long","result":{"content":[{"type":"text","text":"at last"}]}}`))
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
	// Entries that should be out when event k is read but for the long
	// request: one per exchange before k.
	emitted, worst, passes := 0, 0, 0
	watched := iter.Seq2[record.Event, error](func(yield func(record.Event, error) bool) {
		passes++
		main := passes == 1
		for k, e := range events {
			if main && k > 0 {
				worst = max(worst, (k-1)/2-emitted)
			}
			if !yield(e, nil) {
				return
			}
		}
	})
	s := &record.Session{N: 1, Info: record.SessionInfo{Transport: "stdio"}}
	sp := newSplicer(false)
	var first string
	err = messageEntries(sp, s, watched, sc.answered, func(e *harEntry) error {
		if emitted++; emitted == 1 {
			first = e.Response.Content.Text.String()
		}
		sp.reset()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if emitted != 1+n || !strings.Contains(first, "at last") {
		t.Fatalf("%d entries, the first's response %q; want %d, the long request's response", emitted, first, 1+n)
	}
	if worst > holdAhead+1 {
		t.Errorf("entries were held back while the session was read: up to %d, want no more than %d", worst, holdAhead+1)
	}
}
