package tui

import (
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
)

// CheckReport prints what mcpx check found: a line per area, ✓ with what
// it holds or ✗ with the server's departures from the protocol under it,
// then a summary line.
func (p *Printer) CheckReport(r *inspector.CheckReport) {
	w, st := p.w, p.st
	for i := range r.Areas {
		a := &r.Areas[i]
		what := checkWhat(r, a)
		switch {
		case a.Skipped != "":
			fmt.Fprintf(w, "%s %s: %s\n", st.dim("-"), st.head(a.Name), st.dim(EscapeLine(a.Skipped)))
			continue
		case len(a.Problems) == 0 && a.Err == nil:
			if a.Count != nil {
				what += ", all valid"
			}
			fmt.Fprintf(w, "%s %s%s\n", st.key("✓"), st.head(a.Name), what)
			p.checkNotes(a)
			continue
		}
		n := len(a.Problems)
		if a.Violation() {
			n++
		}
		if n > 0 {
			what += fmt.Sprintf(", %d problem(s)", n)
		}
		if a.Err != nil && !a.Violation() {
			what += ", failed"
		}
		fmt.Fprintf(w, "%s %s%s\n", st.err("✗"), st.head(a.Name), what)
		for _, pr := range a.Problems {
			fmt.Fprintf(w, "    %s\n", EscapeLine(pr))
		}
		if a.Err != nil {
			fmt.Fprintf(w, "    %s\n", EscapeLine(a.Error))
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
		fmt.Fprintf(w, "%s %d departure(s) from the protocol in %d area(s) checked\n", st.err("✗"), n, checked)
	case failed:
		fmt.Fprintf(w, "%s no departure from the protocol in %d area(s) checked, but a request failed\n", st.err("✗"), checked)
	default:
		fmt.Fprintf(w, "%s no departure from the protocol in %d area(s) checked\n", st.key("✓"), checked)
	}
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
		fmt.Fprintf(p.w, "    %s %s\n", p.st.warn("note:"), EscapeLine(n))
	}
}
