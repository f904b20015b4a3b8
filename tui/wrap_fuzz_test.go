package tui

import (
	"strings"
	"testing"
)

// FuzzWrapText wraps arbitrary text (wide characters, escape sequences,
// runs of spaces) to an arbitrary width: nothing but blanks and line
// breaks is added or lost, and every line fits the width unless it holds
// a URL, which stays whole, or only one character wider than the width.
func FuzzWrapText(f *testing.F) {
	for _, s := range []string{
		"Fields: String (name) *, Boolean (check), String with default (firstLine)",
		"URL:  https://example.com/a/very/long/path?with=query",
		"名前 電子メール アドレス",
		"\x1b[1mbold\x1b[0m and plain",
		"    indented line that goes on",
		"a\nb c d\n\n e",
		"name\tsize\tdate\t名前\tx",
		"\x1b]8;;http://x\x07link\x1b]8;;\x07",
		"mcpx: run `mcpx auth login --url https://h.example/mcp` in a terminal first",
		"a `b c` d ` e `f`g` h`",
	} {
		for _, w := range []int{0, 1, 3, 10, 40} {
			f.Add(s, w)
		}
	}
	f.Fuzz(func(t *testing.T, s string, width int) {
		width %= 200
		got := WrapText(s, width)
		strip := func(s string) string { return strings.NewReplacer(" ", "", "\n", "", "\t", "").Replace(s) }
		if strip(got) != strip(s) {
			t.Fatalf("WrapText(%q, %d) = %q: text changed", s, width, got)
		}
		if width <= 0 {
			if got != s {
				t.Fatalf("WrapText(%q, %d) = %q, want it unchanged", s, width, got)
			}
			return
		}
		for l := range strings.SplitSeq(got, "\n") {
			if textWidth(expandTabs(l)) <= width || strings.Contains(l, "://") {
				continue
			}
			if c := strings.TrimLeft(l, " "); textWidth(firstChar(c)) == textWidth(c) {
				continue // one character wider than the width, on its own
			}
			t.Fatalf("WrapText(%q, %d): line %q takes %d columns", s, width, l, textWidth(expandTabs(l)))
		}
	})
}
