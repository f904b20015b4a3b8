package tui

import (
	"fmt"
	"io"

	"github.com/fatih/color"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/record"
)

// WriteVerifyReport prints each mismatch of a verification (mcpx verify)
// with a readable diff, then the summary. A mismatch is named by its
// exchange (and its session, when the trace has several), a difference by
// its path (and the message it is in, when it is not the response).
// Server-supplied text is escaped; colour is used when color is true.
func WriteVerifyReport(w io.Writer, r *record.VerifyResult, color bool) {
	st := newReportStyles(color)
	multi := r.Sessions > 1
	for _, m := range r.Mismatches {
		if m.Session > 1 {
			multi = true
		}
	}
	for _, m := range r.Mismatches {
		fmt.Fprintf(w, "%s %s: %s\n", st.bad("✗"), st.head(inspector.EscapeLine(m.Where(multi))), inspector.EscapeLine(m.Problem))
		if len(m.Request) > 0 && string(m.Request) != "null" {
			fmt.Fprintf(w, "    %s\n", st.dim("params: "+inspector.EscapeLine(rawjson.Excerpt(m.Request, 200))))
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
	mk := func(attrs ...color.Attribute) func(a ...any) string { return inspector.Style(on, attrs...) }
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
		at := d.Path
		if d.Message != "" {
			at = d.Message + " " + d.Path
		}
		fmt.Fprintf(w, "%s%s\n", indent, st.head(inspector.EscapeLine(at)))
		rec, live := rawjson.Shorten(d.Recorded, 300), rawjson.Shorten(d.Live, 300)
		if rec == "" {
			rec = "(absent)"
		}
		if live == "" {
			live = "(absent)"
		}
		fmt.Fprintf(w, "%s  %s\n", indent, st.minus("- recorded: "+inspector.EscapeLine(rec)))
		fmt.Fprintf(w, "%s  %s\n", indent, st.plus("+ live:     "+inspector.EscapeLine(live)))
	}
	if more > 0 {
		fmt.Fprintf(w, "%s%s\n", indent, st.dim(fmt.Sprintf("… and %d more difference(s)", more)))
	}
}
