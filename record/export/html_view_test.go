package export

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/record"
)

// A view event (minor 3) is a row with its message and the view it
// belongs to.
func TestHTMLViewEvents(t *testing.T) {
	s := &record.Session{N: 1, Events: []record.Event{
		{Kind: record.KindView, Dir: record.ViewToHost, Data: []byte(`{"jsonrpc":"2.0","id":0,"method":"ui/initialize"}`),
			View: &record.ViewInfo{ID: "v", Tool: "get-time", URI: "ui://get-time/app"}},
	}}
	hs := htmlSessionOf(s)
	if len(hs.Rows) != 1 {
		t.Fatalf("rows %+v", hs.Rows)
	}
	r := hs.Rows[0]
	if r.Kind != "view" || r.Dir != "v2h" || !strings.Contains(r.Text, "ui/initialize") || len(r.Meta) != 1 || r.Meta[0] != "view of get-time (ui://get-time/app)" {
		t.Errorf("row %+v", r)
	}
}
