package tui

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/record"
)

// The report shows each mismatch with its differences, recorded values in
// red and live ones in green, and escapes what the server sent.
func TestVerifyReport(t *testing.T) {
	res := &record.VerifyResult{Sessions: 1, Exchanges: 3, Mismatches: []record.Mismatch{{
		Session: 1, Exchange: 2,
		Method:  "tools/list",
		Request: []byte(`{}`),
		Problem: "the response differs",
		Diffs: []record.Difference{
			{Path: "$.result.tools[0].name", Recorded: `"echo"`, Live: `"echo2"`},
			{Path: "$.result.tools[1].extra", Live: "true"},
		},
		MoreDiffs: 2,
	}, {
		Session: 1, Exchange: 3,
		Method:  "tools/call",
		Request: []byte(`{"name":"evil\u001b[2J"}`),
		Problem: "no response within 30s",
	}}}
	var b strings.Builder
	NewPrinter(&b, true).VerifyReport(res)
	out := b.String()
	for _, want := range []string{"\x1b[31m- recorded: \"echo\"", "\x1b[32m+ live:     \"echo2\"", "- recorded: (absent)",
		"… and 2 more difference(s)", `exchange 3 tools/call "evil\x1b[2J"`, "exchange 2 tools/list",
		"3 exchange(s) verified, 2 mismatch(es)"} {
		if !strings.Contains(out, want) {
			t.Errorf("coloured report lacks %q:\n%q", want, out)
		}
	}
	b.Reset()
	NewPrinter(&b, false).VerifyReport(res)
	if strings.Contains(b.String(), "\x1b[") {
		t.Errorf("report without colour:\n%q", b.String())
	}
}

// A trace of several sessions: each mismatch names its session, and a
// difference in a notification names the message it is in.
func TestVerifyReportSessions(t *testing.T) {
	res := &record.VerifyResult{Sessions: 3, Exchanges: 7, Mismatches: []record.Mismatch{{
		Session: 2, Exchange: 4, Method: "tools/call", Request: []byte(`{"name":"log"}`),
		Problem: "the notifications differ",
		Diffs:   []record.Difference{{Message: "notifications/message #1", Path: "$.params.data", Recorded: `"a"`, Live: `"b"`}},
	}, {
		Session: 3, Problem: "the server's messages differ",
		Diffs: []record.Difference{{Message: "notifications/tools/list_changed", Path: "$", Recorded: "[]", Live: `[{"method":"notifications/tools/list_changed"}]`}},
	}}}
	var b strings.Builder
	NewPrinter(&b, false).VerifyReport(res)
	want := `✗ session 2, exchange 4 tools/call "log": the notifications differ
    params: {"name":"log"}
    notifications/message #1 $.params.data
      - recorded: "a"
      + live:     "b"
✗ session 3, outside any request: the server's messages differ
    notifications/tools/list_changed $
      - recorded: []
      + live:     [{"method":"notifications/tools/list_changed"}]
✗ 7 exchange(s) verified in 3 sessions, 2 mismatch(es)
`
	if b.String() != want {
		t.Errorf("report:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestTraceDiffReport(t *testing.T) {
	d := &record.TraceDiff{Sessions: 2, Exchanges: 5, Changes: []record.Mismatch{{
		Session: 1, Exchange: 2, Method: "tools/list", Problem: "the response differs",
		Diffs: []record.Difference{
			{Path: `$.result.tools[?@.name=="log"].name`, Recorded: `"log"`, Live: `"note"`},
			{Path: `$.result.tools[?@.name=="new"]`, Live: "{\"name\":\"new\x1b[2J\"}"},
		},
		MoreDiffs: 1,
	}, {
		Session: 1, Exchange: 4, Method: "ping", Problem: "only in the new trace",
	}, {
		Session: 2, Problem: "session only in the old trace (3 request(s))",
	}}}
	var b strings.Builder
	NewPrinter(&b, false).TraceDiffReport(d)
	want := `session 1, exchange 2 tools/list: $.result.tools[?@.name=="log"].name "log" → "note"
session 1, exchange 2 tools/list: $.result.tools[?@.name=="new"] (absent) → {"name":"new\x1b[2J"}
session 1, exchange 2 tools/list: … and 1 more difference(s)
session 1, exchange 4 ping: only in the new trace
session 2: session only in the old trace (3 request(s))
✗ 5 exchange(s) compared in 2 sessions, 5 change(s)
`
	if got := b.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}

// The total of several traces names those that differ (a few, escaped).
func TestVerifyTotalNamesTheTracesThatDiffer(t *testing.T) {
	var b strings.Builder
	NewPrinter(&b, false).VerifyTotal(VerifyTotals{Traces: 50, Verified: 49, Differ: 1, DifferNames: []string{"t\x1b[2J25.jsonl"}})
	if got, want := b.String(), "✗ 50 trace(s): 49 verified, 1 with differences (t\\x1b[2J25.jsonl)\n"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	if got, want := NameSome(names), "a, b, c, d, e and 2 more"; got != want {
		t.Errorf("NameSome: %q, want %q", got, want)
	}
}

func TestUpdateTotal(t *testing.T) {
	for _, c := range []struct {
		t    UpdateTotals
		want string
	}{
		{UpdateTotals{Traces: 3, Recorded: 1, Kept: 2}, "✓ 3 trace(s): 1 recorded again, 2 left as they were\n"},
		{UpdateTotals{Traces: 4, Recorded: 1, Failed: 1}, "✗ 4 trace(s): 1 recorded again, 0 left as they were, 1 could not be recorded again, 2 not run\n"},
	} {
		var b strings.Builder
		NewPrinter(&b, false).UpdateTotal(c.t)
		if b.String() != c.want {
			t.Errorf("got  %q\nwant %q", b.String(), c.want)
		}
	}
}
