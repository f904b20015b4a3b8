package tui

import (
	"fmt"
	"io"

	"github.com/fatih/color"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/record"
)

// WriteVerifyReport prints each mismatch of a verification (mcpx verify)
// with a readable diff, then the summary. Server-supplied text is
// escaped; colour is used when color is true.
func WriteVerifyReport(w io.Writer, r *record.VerifyResult, color bool) {
	st := newReportStyles(color)
	for _, m := range r.Mismatches {
		fmt.Fprintf(w, "%s %s: %s\n", st.bad("✗"), st.head(EscapeLine(m.Label())), EscapeLine(m.Problem))
		if len(m.Request) > 0 && string(m.Request) != "null" {
			fmt.Fprintf(w, "    %s\n", st.dim("params: "+EscapeLine(rawjson.Excerpt(m.Request, 200))))
		}
		writeDiffs(w, st, "    ", m.Diffs, m.MoreDiffs)
	}
	mark := st.good("✓")
	if !r.OK() {
		mark = st.bad("✗")
	}
	fmt.Fprintf(w, "%s %s\n", mark, r.Summary())
}

// reportStyles colour a verification report.
type reportStyles struct {
	bad, good, minus, plus, dim, head func(a ...any) string
}

func newReportStyles(on bool) reportStyles {
	mk := func(attrs ...color.Attribute) func(a ...any) string { return Style(on, attrs...) }
	return reportStyles{
		bad:   mk(color.FgRed, color.Bold),
		good:  mk(color.FgGreen),
		minus: mk(color.FgRed),
		plus:  mk(color.FgGreen),
		dim:   mk(color.Faint),
		head:  mk(color.Bold),
	}
}

// writeDiffs prints differences as a readable, coloured diff, one path per
// entry: the recorded value in red (-), the live one in green (+).
func writeDiffs(w io.Writer, st reportStyles, indent string, diffs []record.Difference, more int) {
	for _, d := range diffs {
		fmt.Fprintf(w, "%s%s\n", indent, st.head(EscapeLine(d.Path)))
		rec, live := rawjson.Shorten(d.Recorded, 300), rawjson.Shorten(d.Live, 300)
		if rec == "" {
			rec = "(absent)"
		}
		if live == "" {
			live = "(absent)"
		}
		fmt.Fprintf(w, "%s  %s\n", indent, st.minus("- recorded: "+EscapeLine(rec)))
		fmt.Fprintf(w, "%s  %s\n", indent, st.plus("+ live:     "+EscapeLine(live)))
	}
	if more > 0 {
		fmt.Fprintf(w, "%s%s\n", indent, st.dim(fmt.Sprintf("… and %d more difference(s)", more)))
	}
}
