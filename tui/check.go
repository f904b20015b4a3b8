package tui

import (
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
)

// CheckReport prints what mcpx check found: a line per area, ✓ with what
// it holds or ✗ with the server's departures from the protocol under it,
// then a summary line. With a width, its lines are wrapped at words.
func (p *Printer) CheckReport(r *inspector.CheckReport) {
	st := p.st
	for i := range r.Areas {
		a := &r.Areas[i]
		what := checkWhat(r, a)
		switch {
		case a.Skipped != "":
			p.reportf("%s %s: %s", st.dim("-"), st.head(a.Name), st.dim(EscapeLine(a.Skipped)))
			continue
		case a.Departures() == 0 && a.Err == nil:
			if a.Count != nil {
				what += ", all valid"
			}
			p.reportf("%s %s%s", st.key("✓"), st.head(a.Name), what)
			p.checkNotes(a)
			continue
		}
		if n := a.Departures(); n > 0 {
			what += fmt.Sprintf(", %d problem(s)", n)
		}
		if a.Err != nil && !a.Violation() {
			what += ", failed"
		}
		p.reportf("%s %s%s", st.err("✗"), st.head(a.Name), what)
		for _, pr := range a.Problems {
			p.reportf("    %s", EscapeLine(pr))
		}
		for _, m := range a.More {
			// (As a list's problems past the first ten are counted.)
			p.reportf("    and %d more %s", m.N, EscapeLine(m.Kind))
		}
		if a.Err != nil {
			p.reportf("    %s", EscapeLine(a.Error))
		}
		p.checkNotes(a)
	}
	checked := 0
	for i := range r.Areas {
		if r.Areas[i].Skipped == "" {
			checked++
		}
	}
	n := r.Departures()
	failed := r.Failure() != nil
	switch {
	case n > 0:
		p.reportf("%s %d departure(s) from the protocol in %d area(s) checked", st.err("✗"), n, checked)
	case failed:
		p.reportf("%s no departure from the protocol in %d area(s) checked, but a request failed", st.err("✗"), checked)
	default:
		p.reportf("%s no departure from the protocol in %d area(s) checked", st.key("✓"), checked)
	}
}

// reportf prints a line of the report, wrapped at words to the
// terminal's width (WithWidth), its continuation lines indented: a
// problem the server's names make long would otherwise be broken
// mid-word at the terminal's edge, back at its first column.
func (p *Printer) reportf(format string, a ...any) {
	fmt.Fprintln(p.w, WrapText(fmt.Sprintf(format, a...), p.width))
}

// checkWhat is what an area's line says after its name: the server for
// the session's opening, the count for a list.
func checkWhat(r *inspector.CheckReport, a *inspector.CheckArea) string {
	switch {
	case a.Count != nil:
		return fmt.Sprintf(": %d", *a.Count)
	case a.Method == "" && r.Server != nil:
		name := strings.TrimSpace(r.Server.Implementation.Name + " " + r.Server.Implementation.Version)
		return ": " + EscapeLine(name) + ", protocol " + EscapeLine(r.Server.ProtocolVersion)
	}
	return ""
}

// checkNotes prints the area's notes, which are not departures.
func (p *Printer) checkNotes(a *inspector.CheckArea) {
	for _, n := range a.Notes {
		p.reportf("    %s %s", p.st.warn("note:"), EscapeLine(n))
	}
}
