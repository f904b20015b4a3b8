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
