package tui

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/record"
)

// testdata/modern-http.jsonl is a session of the 2026-07-28 era recorded
// over Streamable HTTP against internal/testservers' modern server (the
// calls of record's modernCalls): server/discover, tools with x-mcp-header
// parameters, a multi-round tool, a resource and a prompt.

func readTrace(t *testing.T, name string) *record.Trace {
	t.Helper()
	tr, err := record.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// trace show names the era, summarizes stateless-era messages without
// their protocol _meta, and shows mirrored headers (and headers that
// disagree with their body).
func TestTimelineModern(t *testing.T) {
	tr := readTrace(t, "testdata/modern-http.jsonl")
	if era := Era(tr); era != "modern" {
		t.Errorf("Era = %q", era)
	}
	for i, e := range tr.Events {
		if e.Route != nil && e.Route.Name == "echo" {
			r := *e.Route
			r.Name = "echo2"
			tr.Events[i].Route = &r
		}
	}
	var b strings.Builder
	NewPrinter(&b, false).Trace(tr)
	out := b.String()
	for _, want := range []string{
		"era: modern (2026-07-28: stateless, per-request _meta, no handshake)",
		"→ server/discover #1  record-test 1.0, protocol 2026-07-28",
		"← server/discover #1 ",
		"ok modern-test-server 2.0.0, versions 2026-07-28, 2025-11-25",
		`region {"region":"eu west","priority":7,"query":"q"} [Mcp-Param-Priority: 7, Mcp-Param-Region: eu west]`,
		"ok input required: name (elicitation/create)",
		"confirm (retry with input name and the request state)",
		`headers differ from the body: Mcp-Name "echo2", body "echo"`,
		"ok Echo: hello",
		"← tools/list #2 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "io.modelcontextprotocol/") {
		t.Errorf("the timeline repeats the protocol's _meta:\n%s", out)
	}
	var withRoute int
	for _, en := range Timeline(tr) {
		if en.Route != nil {
			withRoute++
		}
	}
	if withRoute != 8 {
		t.Errorf("%d entries with routes, want 8 (every request and notification the client sent)", withRoute)
	}
}

// The timeline of a large frame looks at it in place.
func TestTimelineDoesNotCopyFrames(t *testing.T) {
	const header = `{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","transport":"stdio","redacted":true}` + "\n"
	f := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", 8<<20) + `"}]}}`
	input := header + `{"t":0,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}}` + "\n" +
		`{"t":1,"kind":"frame","dir":"s2c","msg":` + f + "}\n"
	tr, err := record.Read(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	en := Timeline(tr)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("the timeline of an 8 MiB frame allocated %d bytes", n)
	}
	if len(en) != 2 || en[1].Summary != strings.Repeat("y", 120)+"…" {
		t.Errorf("timeline = %+v", en)
	}
}

// A trace of sessions that interleave (a proxy serving two hosts at once)
// with the same request ids: each response pairs with its own session's
// request, and trace show says where each session starts and whose each
// line is.
func TestTimelineSessions(t *testing.T) {
	const input = `{"format":"mcpx-trace","version":1,"minor":2,"created":"2026-01-01T00:00:00Z","transport":"http","redacted":true,"ignore":["tools/call:$.result._meta"],"normalize":[{"builtin":"uuid"}]}
{"t":0,"s":1,"kind":"session","text":"http: POST http://x/mcp from 127.0.0.1:1","session":{"transport":"http","target":"http://x/mcp","client":"127.0.0.1:1"}}
{"t":1000,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"t":2000,"s":2,"kind":"session","text":"http: POST http://x/mcp from 127.0.0.1:2","session":{"transport":"http","target":"http://x/mcp","client":"127.0.0.1:2","prelude":true}}
{"t":3000,"s":2,"kind":"frame","dir":"c2s","prelude":true,"msg":{"jsonrpc":"2.0","id":1,"method":"prompts/list"}}
{"t":4000,"s":2,"kind":"frame","dir":"s2c","prelude":true,"msg":{"jsonrpc":"2.0","id":1,"result":{"prompts":[]}}}
{"t":5000,"s":1,"kind":"stream","text":"SSE post-1: event id=\"7\" with no data (priming)","meta":{"streamId":"post-1","eventId":"7"}}
{"t":9000,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}
`
	tr, err := record.Read(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	en := Timeline(tr)
	last := en[len(en)-1]
	if last.Session != 1 || last.Method != "tools/list" || last.LatencyMS == nil || *last.LatencyMS != 8 {
		t.Errorf("session 1's response: %+v", last)
	}
	if en[4].Session != 2 || en[4].Method != "prompts/list" || !en[4].Prelude || en[2].Kind != "session" || en[2].SessionInfo == nil {
		t.Errorf("session 2: %+v %+v", en[2], en[4])
	}
	var b strings.Builder
	NewPrinter(&b, false).Trace(tr)
	out := b.String()
	for _, want := range []string{
		"2 sessions\n",
		"ignore: tools/call:$.result._meta\n",
		"normalize: uuid\n",
		"s1    session 1: http: POST http://x/mcp from 127.0.0.1:1\n",
		"s2    session 2: http: POST http://x/mcp from 127.0.0.1:2 (started mid-session: its handshake is written from memory)\n",
		"s2 → prompts/list #1 [from memory]\n",
		"s1    stream SSE post-1: event id=\"7\" with no data (priming)\n",
		"s1 ← tools/list #1 8.0ms ok 0 tools\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace show lacks %q:\n%s", want, out)
		}
	}
}

// View events (minor 3): trace show marks them as the view's, with their
// own arrows, and escapes what the view sent.
func TestTraceShowViewMessages(t *testing.T) {
	const input = `{"format":"mcpx-trace","version":1,"minor":3,"created":"2026-01-01T00:00:00Z","transport":"stdio","redacted":true}
{"t":1000,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-time"}}}
{"t":2000,"s":1,"kind":"view","dir":"v2h","msg":{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"protocolVersion":"2026-01-26"}},"view":{"id":"v1","tool":"get-time","uri":"ui://t/app"}}
{"t":3000,"s":1,"kind":"view","dir":"h2v","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2026-01-26"}},"view":{"id":"v1","tool":"get-time"}}
{"t":4000,"s":1,"kind":"view","dir":"h2v","msg":{"jsonrpc":"2.0","method":"ui/notifications/tool-result","params":{"content":[]}},"view":{"id":"v1","tool":"get-time"}}
{"t":5000,"s":1,"kind":"view","dir":"v2h","msg":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"evil\u001b[2J"}},"view":{"id":"v1","tool":"get-time"}}
`
	tr, err := record.Read(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	en := Timeline(tr)
	if len(en) != 5 || en[1].Kind != "view-request" || en[1].View == nil || en[1].View.Tool != "get-time" || en[2].Kind != "view-response" {
		t.Fatalf("timeline %+v", en)
	}
	var b strings.Builder
	NewPrinter(&b, false).Trace(tr)
	out := b.String()
	for _, want := range []string{
		"⇠ [view get-time] ui/initialize #1",
		"⇢ [view get-time] response #1",
		"⇢ [view get-time] notification ui/notifications/tool-result",
		`⇠ [view get-time] tools/call #2  evil\x1b[2J`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("an escape sequence reached the terminal:\n%q", out)
	}
}

// An event of a kind a newer mcpx wrote is shown as it is, not as a
// response; a stable trace, which has no time of its own, is not said to
// have been recorded in the year 1.
func TestTraceShowUnknownKindsAndStableHeader(t *testing.T) {
	const input = `{"format":"mcpx-trace","version":1,"minor":3,"transport":"stdio","redacted":true,"stable":true}
{"s":1,"kind":"session","text":"stdio: x","session":{"transport":"stdio"}}
{"s":1,"kind":"future","text":"from a newer mcpx\u001b[2J"}
`
	tr, err := record.Read(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	NewPrinter(&b, false).Trace(tr)
	out := b.String()
	if !strings.HasPrefix(out, "mcpx-trace v1, stable\n") || !strings.Contains(out, `   future from a newer mcpx\x1b[2J`) ||
		strings.Contains(out, "response") || strings.Contains(out, "0001") {
		t.Errorf("trace show:\n%s", out)
	}
}

// A timeline printed from a trace read an event at a time (trace show of
// a file) is the one printed from the trace read whole, a request never
// answered included, and keeps none of the events it was given: the
// reader here gives each in one Event whose frame bytes it then
// overwrites, as a reader that reuses its buffers would, and the
// timeline is the same.
func TestTraceStreamHoldsNoEvents(t *testing.T) {
	tr := readTrace(t, "testdata/modern-http.jsonl")
	// (Two requests of one id, the first never answered, as a client
	// that reuses ids sends them.)
	last := tr.Events[len(tr.Events)-1].Time
	for _, name := range []string{"never", "again"} {
		tr.Events = append(tr.Events, record.Event{Time: last, Session: 1, Kind: record.KindFrame, Dir: record.ClientToServer,
			Data: []byte(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"` + name + `"}}`)})
	}
	tr.Events = append(tr.Events, record.Event{Time: last, Session: 1, Kind: record.KindFrame, Dir: record.ServerToClient,
		Data: []byte(`{"jsonrpc":"2.0","id":99,"result":{"content":[]}}`)})
	var whole strings.Builder
	NewPrinter(&whole, false).Trace(tr)
	if strings.Count(whole.String(), "(no response in the trace)") != 1 {
		t.Fatalf("the unanswered request is not said to be:\n%s", whole.String())
	}
	reads := 0
	reuse := func(header func(record.Header), event func(*record.Event) error) error {
		reads++
		header(tr.Header)
		var e record.Event
		buf := make([]byte, 0, 1<<16)
		for _, src := range tr.Events {
			clear(buf[:cap(buf)])
			e = src
			e.Data = append(buf[:0], src.Data...)
			if err := event(&e); err != nil {
				return err
			}
			clear(e.Data) // what the printer kept of it is gone now
		}
		return nil
	}
	var streamed strings.Builder
	if err := NewPrinter(&streamed, false).TraceStream(reuse); err != nil {
		t.Fatal(err)
	}
	if streamed.String() != whole.String() {
		t.Errorf("streamed:\n%s\nwhole:\n%s", streamed.String(), whole.String())
	}
	if reads != 2 {
		t.Errorf("the trace was read %d times, want 2 (its head, then its lines)", reads)
	}
}
