package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"iter"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/record"
)

// A view event (minor 3) is a row with its message and the view it
// belongs to.
func TestHTMLViewEvents(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","id":0,"method":"ui/initialize"}`
	s := &record.Session{N: 1, Events: []record.Event{
		{Kind: record.KindView, Dir: record.ViewToHost, Data: []byte(msg),
			View: &record.ViewInfo{ID: "v", Tool: "get-time", URI: "ui://get-time/app"}},
	}}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	sc, err := scanRows(eventsOf(s))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSession(w, newSplicer(true), s, eventsOf(s), sc); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	var hs struct {
		Rows []struct {
			Kind, Dir, Text, Frame string
			Meta                   []string
		}
	}
	if err := json.Unmarshal(b.Bytes(), &hs); err != nil {
		t.Fatalf("%v: %s", err, b.Bytes())
	}
	if len(hs.Rows) != 1 {
		t.Fatalf("rows %+v", hs.Rows)
	}
	r := hs.Rows[0]
	if r.Kind != "view" || r.Dir != "v2h" || !strings.Contains(r.Text, "ui/initialize") || r.Frame != msg || len(r.Meta) != 1 || r.Meta[0] != "view of get-time (ui://get-time/app)" {
		t.Errorf("row %+v", r)
	}
}

// eventsOf returns the events of a session read whole.
func eventsOf(s *record.Session) iter.Seq2[record.Event, error] {
	return func(yield func(record.Event, error) bool) {
		for _, e := range s.Events {
			if !yield(e, nil) {
				return
			}
		}
	}
}
