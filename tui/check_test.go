package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
)

// The report is a line per area — ✓ with what it holds, - when skipped,
// ✗ with the problems under it, escaped, those counted and not listed
// (More) in a line a sort — and a summary that counts them all.
func TestCheckReport(t *testing.T) {
	three := 3
	r := &inspector.CheckReport{
		Server: &inspector.ServerInfo{ProtocolVersion: "2025-11-25", Implementation: inspector.Implementation{Name: "srv\x1b[2J", Version: "1.0"}},
		Areas: []inspector.CheckArea{
			{Name: "initialize"},
			{Name: "ping", Method: "ping", Problems: []string{"response to unknown request id 1"}, More: []inspector.Unsaid{{Kind: "responses to unknown request ids", N: 40}}},
			{Name: "tools", Method: "tools/list", Count: &three, Problems: []string{"tools/list: tool \"a\x07\" is listed 2 times"}},
			{Name: "prompts", Method: "prompts/list", Skipped: "not declared"},
			{Name: "resources", Method: "resources/list", Err: errors.New("boom"), Error: "boom"},
		},
	}
	var b strings.Builder
	NewPrinter(&b, false).CheckReport(r)
	want := `✓ initialize: srv\x1b[2J 1.0, protocol 2025-11-25
✗ ping, 41 problem(s)
    response to unknown request id 1
    and 40 more responses to unknown request ids
✗ tools: 3, 1 problem(s)
    tools/list: tool "a\x07" is listed 2 times
- prompts: not declared
✗ resources, failed
    boom
✗ 42 departure(s) from the protocol in 4 area(s) checked
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// On a terminal the report is wrapped at words, a problem's continuation
// indented under it: a problem that quotes a server's long name was
// broken mid-word at the terminal's edge, back at its first column.
func TestCheckReportWraps(t *testing.T) {
	three := 3
	r := &inspector.CheckReport{Areas: []inspector.CheckArea{{Name: "tools", Method: "tools/list", Count: &three, Problems: []string{
		`tools/list: tool name "say \"hi\" it's" has characters other than A-Z, a-z, 0-9, _, - and . (spec server/tools, "Tool Names")`}}}}
	var b strings.Builder
	NewPrinter(&b, true).WithWidth(40).CheckReport(r)
	want := `✗ tools: 3, 1 problem(s)
    tools/list: tool name "say \"hi\"
      it's" has characters other than
      A-Z, a-z, 0-9, _, - and . (spec
      server/tools, "Tool Names")
✗ 1 departure(s) from the protocol in 1
  area(s) checked
`
	if got := ansi.ReplaceAllString(b.String(), ""); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
