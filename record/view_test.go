package record

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// View events (minor 3): written by Recorder.View with the view and its
// direction, redacted like frames, read back byte for byte.
func TestViewEventsRoundTrip(t *testing.T) {
	var b bytes.Buffer
	rec, err := NewRecorder(&b, RecorderOptions{Header: Header{Mcpx: "test", Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show"}}`)})
	v := ViewInfo{ID: "v1", Tool: "show", URI: "ui://test/app"}
	rec.View(ViewToHost, v, []byte(`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"password":"hunter2"}}`))
	rec.View(HostToView, v, []byte(`{"jsonrpc":"2.0", "id":1,"result":{}}`))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "hunter2") {
		t.Errorf("a secret in a view message was recorded:\n%s", b.String())
	}
	tr, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.Minor != Minor {
		t.Errorf("minor %d, want %d", tr.Header.Minor, Minor)
	}
	var views []Event
	for _, e := range tr.Events {
		if e.Kind == KindView {
			views = append(views, e)
		}
	}
	if len(views) != 2 || len(tr.Frames()) != 1 {
		t.Fatalf("events %+v", tr.Events)
	}
	if views[0].Dir != ViewToHost || views[1].Dir != HostToView || *views[0].View != v || *views[1].View != v {
		t.Errorf("view events %+v %+v", views[0], views[1])
	}
	if got := string(views[1].Data); got != `{"jsonrpc":"2.0", "id":1,"result":{}}` {
		t.Errorf("not byte for byte: %s", got)
	}
	if !strings.Contains(string(views[0].Data), `"ui/initialize"`) {
		t.Errorf("data %s", views[0].Data)
	}
}

// A view event with a frame's direction is malformed; one of an unknown
// future kind is kept.
func TestViewEventDirection(t *testing.T) {
	_, err := parseEvent([]byte(`{"t":1,"kind":"view","dir":"c2s","msg":{}}`))
	if err == nil || !strings.Contains(err.Error(), "h2v or v2h") {
		t.Errorf("err %v", err)
	}
}

// Replay and verify skip view events: a session with a view's messages
// between its frames replays and verifies as the frames alone.
func TestViewEventsIgnoredByReplayAndVerify(t *testing.T) {
	tr := mkTrace(verifyTrace...)
	v := &ViewInfo{ID: "v1", Tool: "clock"}
	var events []Event
	for i, e := range tr.Events {
		events = append(events, e)
		if i == 5 { // after tools/call was sent
			events = append(events,
				Event{Time: e.Time, Kind: KindView, Dir: ViewToHost, View: v, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{}}`)},
				Event{Time: e.Time, Kind: KindView, Dir: HostToView, View: v, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
				Event{Time: e.Time, Kind: KindView, Dir: ViewToHost, View: v, Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)})
		}
	}
	tr.Events = events
	res := runVerify(t, tr, liveReplay(t, tr), VerifyOptions{})
	if !res.OK() || res.Exchanges != 3 {
		t.Fatalf("verify with view events: %+v", res)
	}
}
