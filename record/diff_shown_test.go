package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// A difference in a large text is held as excerpts around where the two
// first differ, not as both texts in full: verify of a trace whose 50 MiB
// result differed in one character from the live one held both (558 MB
// peak; 865 MB and a 100 MB document with --json, a 105 MB report with
// --junit), and the report showed the starts of the two texts, the same
// when the difference was further in. Other values too long to hold
// become the start of their JSON.
func TestLargeDifferencesAreExcerpts(t *testing.T) {
	const size = 4 << 20
	text := strings.Repeat("abcdefghij", size/10)
	changed := text[:3<<20] + "Z" + text[3<<20+1:]
	resp := func(s string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":%q}]}}`, s)
	}
	diffs, _ := diffMessages(resp(text), resp(changed), diffOptions{})
	if len(diffs) != 1 {
		t.Fatalf("%d differences, want 1: %+v", len(diffs), diffs)
	}
	d := diffs[0]
	if !d.Shortened || d.Path != "$.result.content[0].text" || len(d.Recorded) > 300 || len(d.Live) > 300 ||
		!strings.HasPrefix(d.Recorded, `"…`) || !strings.HasSuffix(d.Live, `…"`) || !strings.Contains(d.Live, "Z") ||
		strings.Contains(d.Recorded, "Z") {
		t.Errorf("difference %+v, want excerpts around the Z", d)
	}

	// A large value on one side only, and a list of messages that differ
	// in number: the start of their JSON.
	added := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"},{"type":"text","text":%q}]}}`, text)
	diffs, _ = diffMessages(resp("a"), added, diffOptions{})
	if len(diffs) != 1 || !diffs[0].Shortened || diffs[0].Recorded != "" || len(diffs[0].Live) > 2*maxShown ||
		!strings.HasPrefix(diffs[0].Live, `"{\"text\":\"abcdefghij`) {
		t.Errorf("added element: %+v", diffs)
	}
	var many []*jsonrpc.Message
	for range 10000 {
		many = append(many, &jsonrpc.Message{Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)})
	}
	d = Difference{Recorded: messageList(many, func(m *jsonrpc.Message) []byte { return m.Raw }), Live: "[]"}
	d.shorten()
	if !d.Shortened || len(d.Recorded) > 2*maxShown || d.Live != "[]" {
		t.Errorf("message list: %d bytes, shortened %v", len(d.Recorded), d.Shortened)
	}

	// --json says so; the excerpts are JSON strings.
	res := &VerifyResult{Exchanges: 1, Mismatches: []Mismatch{{Session: 1, Exchange: 1, Method: "tools/call", Problem: "the response differs", Diffs: []Difference{diffs[0]}}}}
	b, err := json.Marshal(res)
	if err != nil || len(b) > 2*maxShown || !strings.Contains(string(b), `"shortened":true`) {
		t.Errorf("--json: %v, %d bytes: %.300s", err, len(b), b)
	}
}

// A carried cursor reads as the recorded one, normalized as any string
// is: where the recorded cursor was carried and the live one of a later
// listing was not (the pair is kept from the first), two cursors that
// are times compare as times, as they did before cursors were compared
// apart.
func TestCarriedCursorNormalized(t *testing.T) {
	rec := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"2024-01-01T00:00:00Z"}}`)
	live := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"2024-01-03T00:00:00Z"}}`)
	cursors := map[string]string{"2024-01-01T00:00:00Z": "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z": "2024-01-01T00:00:00Z"}
	if diffs, _ := diffMessages(rec, live, diffOptions{cursors: cursors}); len(diffs) != 0 {
		t.Errorf("differences %+v", diffs)
	}
	// A cursor that is no time still differs.
	rec = []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"a"}}`)
	live = []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"c"}}`)
	if diffs, _ := diffMessages(rec, live, diffOptions{cursors: map[string]string{"a": "a", "b": "a"}}); len(diffs) != 1 {
		t.Errorf("differences %+v, want the cursor's", diffs)
	}
}
