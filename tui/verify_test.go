package tui

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/record"
)

// The report shows each mismatch with its differences, recorded values in
// red and live ones in green, and escapes what the server sent.
func TestWriteVerifyReport(t *testing.T) {
	res := &record.VerifyResult{Exchanges: 3, Mismatches: []record.Mismatch{{
		Method:  "tools/list",
		Request: []byte(`{}`),
		Problem: "the response differs",
		Diffs: []record.Difference{
			{Path: "$.result.tools[0].name", Recorded: `"echo"`, Live: `"echo2"`},
			{Path: "$.result.tools[1].extra", Live: "true"},
		},
		MoreDiffs: 2,
	}, {
		Method:  "tools/call",
		Request: []byte(`{"name":"evil\u001b[2J"}`),
		Problem: "no response within 30s",
	}}}
	var b strings.Builder
	NewPrinter(&b, true).VerifyReport(res)
	out := b.String()
	for _, want := range []string{"\x1b[31m- recorded: \"echo\"", "\x1b[32m+ live:     \"echo2\"", "- recorded: (absent)",
		"… and 2 more difference(s)", `tools/call "evil\x1b[2J"`, "3 exchange(s) verified, 2 mismatch(es)"} {
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
