package record

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// A live server that answers tools/list again and again and logs without
// pause outside any request, until it sends the list_changed the
// recording waits for, holds memory within a bound (maxHeld messages to a
// list), not one message per message it sent: past the bound, verify
// counts. The report still says how many came, and that those past the
// first were counted, not kept.
func TestVerifyFloodIsCountedNotKept(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	)
	const flood = 3 * maxHeld
	live := toolsServer(t, func(ctx context.Context, server transport.Conn, answer []byte) {
		for range flood + 1 {
			server.Write(ctx, transport.Frame{Data: answer})
		}
		for i := range flood {
			server.Write(ctx, transport.Frame{Data: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`, i)})
		}
		server.Write(ctx, listChangedFrame)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := verifySessions(ctx, tr, live, VerifyOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res := &r.res
	if res.Notifications != flood+1 {
		t.Fatalf("counted %d notifications, want %d", res.Notifications, flood+1)
	}
	// The repetitions are kept in the exchange's list until it is
	// compared, in the session's after: two lists, at most maxHeld (and maxFirsts) each.
	if r.kept > 2*(maxHeld+maxFirsts) {
		t.Errorf("kept %d of the %d messages the server sent, want at most %d", r.kept, 2*flood+1, 2*(maxHeld+maxFirsts))
	}
	report := reportOf(res)
	if !strings.Contains(report, fmt.Sprintf("%d notifications/message (", flood)) || !strings.Contains(report, "the rest counted, not kept), the recording has 0") {
		t.Errorf("the report does not say how many came and that the rest were counted:\n%s", report)
	}
	// However the repetitions fell (answered again while the exchange was
	// compared, or after), all are counted.
	responses := 0
	for _, m := range res.Mismatches {
		var n int
		if _, err := fmt.Sscanf(m.Problem, "answered %d", &n); err == nil {
			responses += n - 1
		}
		if i := strings.Index(m.Problem, "differ: "); i >= 0 {
			for _, note := range strings.Split(m.Problem[i+len("differ: "):], "; ") {
				if _, err := fmt.Sscanf(note, "%d response", &n); err == nil {
					responses += n
				}
			}
		}
	}
	if responses != flood {
		t.Errorf("the report counts %d repetitions, want %d:\n%s", responses, flood, report)
	}
}

// A list keeps its first maxHeld messages and counts the rest by method;
// two lists of the same number are compared as far as both were kept, and
// of different numbers reported with the numbers.
func TestHeldList(t *testing.T) {
	t.Parallel()
	msg := func(method string, i int) *jsonrpc.Message {
		return parseMessage(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":{"i":%d}}`, method, i))
	}
	var rec, live heldList
	for i := range maxHeld + 5 {
		rec.add(msg("a", i), false)
		live.add(msg("a", i), true)
	}
	rec.add(msg("b", 0), false)
	live.add(msg("b", 0), true)
	// (The first b is kept past maxHeld: the first of a method.)
	if len(rec.msgs) != maxHeld+6 || len(live.msgs) != maxHeld+1 || live.len() != maxHeld+6 || live.n["a"] != maxHeld+5 || live.n["b"] != 1 {
		t.Fatalf("rec kept %d, live kept %d of %d: %v", len(rec.msgs), len(live.msgs), live.len(), live.n)
	}
	opts := func(string) diffOptions { return diffOptions{} }
	self := func(m *jsonrpc.Message) []byte { return m.Raw }
	if diffs, _, counts := compareWindows(&rec, &live, opts, self); len(diffs) != 0 || len(counts) != 0 {
		t.Errorf("same lists: %v %v", diffs, counts)
	}
	live.add(msg("b", 1), true)
	diffs, _, counts := compareWindows(&rec, &live, opts, self)
	if len(diffs) != 1 || len(counts) != 1 || counts[0] != (countDiff{method: "b", n: [2]int{1, 2}, cut: true, kept: 1}) {
		t.Errorf("one more b: %v %v", diffs, counts)
	}
	// What a full list holds moves with its counts (a POST stream's
	// messages into the window of the request answered on it).
	var w heldList
	w.merge(&live, true)
	if w.len() != live.len() || w.n["a"] != live.n["a"] || w.n["b"] != 2 || len(w.msgs) != maxHeld+1 {
		t.Errorf("merged: %d (%v), want %d (%v)", w.len(), w.n, live.len(), live.n)
	}
	// A made-up method for each message is counted together past a bound.
	var many heldList
	for i := range maxHeld + maxCountedNames {
		many.add(msg(fmt.Sprintf("m%07d", i), i), true)
	}
	if many.len() != maxHeld+maxCountedNames || len(many.msgs) != maxHeld+maxFirsts || many.other == 0 || many.names > maxCountedNames {
		t.Errorf("made-up methods: %d counted, %d under no method, names %d", many.len(), many.other, many.names)
	}
}
