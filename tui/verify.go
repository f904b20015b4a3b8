package tui

import (
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/record"
)

// VerifyReport prints each mismatch of a verification (mcpx verify) with a
// readable diff, then the summary. A mismatch is named by its exchange (and
// its session, when the trace has several), a difference by its path (and
// the message it is in, when it is not the response). Server-supplied text
// is escaped.
func (p *Printer) VerifyReport(r *record.VerifyResult) {
	w, st := p.w, p.st
	multi := r.Sessions > 1
	for _, m := range r.Mismatches {
		if m.Session > 1 {
			multi = true
		}
	}
	for _, m := range r.Mismatches {
		fmt.Fprintf(w, "%s %s: %s\n", st.err("✗"), st.head(EscapeLine(m.Where(multi))), EscapeLine(m.Problem))
		if len(m.Request) > 0 && string(m.Request) != "null" {
			fmt.Fprintf(w, "    %s\n", st.dim("params: "+EscapeLine(rawjson.Excerpt(m.Request, 200))))
		}
		p.diffs("    ", m.Diffs, m.MoreDiffs)
	}
	mark := st.key("✓")
	if !r.OK() {
		mark = st.err("✗")
	}
	fmt.Fprintf(w, "%s %s\n", mark, r.Summary())
}

// VerifyFile heads the report of one of several traces verified in turn.
func (p *Printer) VerifyFile(name string) {
	fmt.Fprintf(p.w, "%s\n", p.st.head("== "+EscapeLine(name)))
}

// VerifyTotals counts the traces of a verify of several.
type VerifyTotals struct {
	Traces   int // given
	Verified int // matched their recordings
	Differ   int // differ from them
	Empty    int // held nothing to verify
	Failed   int // could not be verified (the run stopped there)
	// DifferNames names the traces that differ, so that the one among
	// many is found without scrolling back.
	DifferNames []string
}

// maxNamed bounds the traces a total names.
const maxNamed = 5

// NameSome joins the first few names (escaped), saying how many more
// there are.
func NameSome(names []string) string {
	shown := make([]string, 0, min(len(names), maxNamed))
	for _, n := range names[:min(len(names), maxNamed)] {
		shown = append(shown, EscapeLine(n))
	}
	s := strings.Join(shown, ", ")
	if len(names) > maxNamed {
		s += fmt.Sprintf(" and %d more", len(names)-maxNamed)
	}
	return s
}

// VerifyTotal ends the reports of several traces with what became of
// them.
func (p *Printer) VerifyTotal(t VerifyTotals) {
	mark := p.st.key("✓")
	if t.Verified < t.Traces {
		mark = p.st.err("✗")
	}
	msg := fmt.Sprintf("%d trace(s): %d verified, %d with differences", t.Traces, t.Verified, t.Differ)
	if len(t.DifferNames) > 0 {
		msg += " (" + NameSome(t.DifferNames) + ")"
	}
	if t.Empty > 0 {
		msg += fmt.Sprintf(", %d with nothing to verify", t.Empty)
	}
	if t.Failed > 0 {
		msg += fmt.Sprintf(", %d could not be verified", t.Failed)
	}
	if rest := t.Traces - t.Verified - t.Differ - t.Empty - t.Failed; rest > 0 {
		msg += fmt.Sprintf(", %d not run", rest)
	}
	fmt.Fprintf(p.w, "%s %s\n", mark, msg)
}

// UpdateTotals counts the traces of a verify --update of several.
type UpdateTotals struct {
	Traces   int // given
	Recorded int // recorded again from the live server
	Kept     int // left as they were: the live server matches them
	Failed   int // could not be recorded again (the run stopped there)
}

// UpdateTotal ends the reports of verify --update over several traces
// with what became of them, as VerifyTotal does for verify's.
func (p *Printer) UpdateTotal(t UpdateTotals) {
	mark := p.st.key("✓")
	if t.Recorded+t.Kept < t.Traces {
		mark = p.st.err("✗")
	}
	msg := fmt.Sprintf("%d trace(s): %d recorded again, %d left as they were", t.Traces, t.Recorded, t.Kept)
	if t.Failed > 0 {
		msg += fmt.Sprintf(", %d could not be recorded again", t.Failed)
	}
	if rest := t.Traces - t.Recorded - t.Kept - t.Failed; rest > 0 {
		msg += fmt.Sprintf(", %d not run", rest)
	}
	fmt.Fprintf(p.w, "%s %s\n", mark, msg)
}

// diffs prints differences as a readable, coloured diff, one path per
// entry: the recorded value in red (-), the live one in green (+).
func (p *Printer) diffs(indent string, diffs []record.Difference, more int) {
	w, st := p.w, p.st
	for _, d := range diffs {
		at := d.Path
		if d.Message != "" {
			at = d.Message + " " + d.Path
		}
		fmt.Fprintf(w, "%s%s\n", indent, st.head(EscapeLine(at)))
		rec, live := rawjson.Shorten(d.Recorded, 300), rawjson.Shorten(d.Live, 300)
		if rec == "" {
			rec = "(absent)"
		}
		if live == "" {
			live = "(absent)"
		}
		fmt.Fprintf(w, "%s  %s\n", indent, st.removed("- recorded: "+EscapeLine(rec)))
		fmt.Fprintf(w, "%s  %s\n", indent, st.key("+ live:     "+EscapeLine(live)))
	}
	if more > 0 {
		fmt.Fprintf(w, "%s%s\n", indent, st.dim(fmt.Sprintf("… and %d more difference(s)", more)))
	}
}

// TraceDiffReport prints the changes between two traces (mcpx trace diff),
// one line per difference: where it is (session, exchange and method, the
// message when it is not the response, the JSONPath) and the old and new
// values; a change without a listed difference (an exchange only one trace
// has) is one line with what it is. Then the summary. Server-supplied text
// is escaped and long values shortened.
func (p *Printer) TraceDiffReport(d *record.TraceDiff) {
	w, st := p.w, p.st
	for _, c := range d.Changes {
		where := c.Where(true)
		if c.Method == "" && c.Exchange == 0 {
			where = fmt.Sprintf("session %d", c.Session)
		}
		if len(c.Diffs) == 0 {
			fmt.Fprintf(w, "%s %s\n", st.head(EscapeLine(where)+":"), EscapeLine(c.Problem))
			continue
		}
		for _, x := range c.Diffs {
			at := x.Path
			if x.Message != "" {
				at = x.Message + " " + x.Path
			}
			old, nu := rawjson.Shorten(x.Recorded, 200), rawjson.Shorten(x.Live, 200)
			if old == "" {
				old = "(absent)"
			}
			if nu == "" {
				nu = "(absent)"
			}
			fmt.Fprintf(w, "%s %s %s %s %s\n", st.head(EscapeLine(where)+":"), EscapeLine(at),
				st.removed(EscapeLine(old)), "→", st.key(EscapeLine(nu)))
		}
		if c.MoreDiffs > 0 {
			fmt.Fprintf(w, "%s %s\n", st.head(EscapeLine(where)+":"), st.dim(fmt.Sprintf("… and %d more difference(s)", c.MoreDiffs)))
		}
	}
	mark := st.key("✓")
	if !d.Equal() {
		mark = st.err("✗")
	}
	fmt.Fprintf(w, "%s %s\n", mark, d.Summary())
}
