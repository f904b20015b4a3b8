package tui

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcpx-dev/mcpx/inspector"
)

// ToolHelp describes a tool for a person about to call it: its title and
// description, then a table of its arguments (type, whether required,
// default, allowed values, description).
func (p *Printer) ToolHelp(t inspector.ToolInfo) {
	head := p.st.name(EscapeLine(t.Name))
	if t.Title != "" && t.Title != t.Name {
		head += " — " + EscapeLine(t.Title)
	}
	fmt.Fprintln(p.w, head)
	if d := strings.TrimSpace(t.Description); d != "" {
		p.indented(d, "  ")
	}
	args := t.Args()
	fmt.Fprintln(p.w)
	if len(args) == 0 {
		fmt.Fprintln(p.w, p.st.dim("This tool takes no arguments."))
		return
	}
	fmt.Fprintln(p.w, p.st.head("Arguments:"))
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tTYPE\tREQUIRED\tDEFAULT\tALLOWED\tDESCRIPTION")
	for _, a := range args {
		req := "no"
		if a.Required {
			req = "yes"
		}
		def := ""
		if len(a.Default) > 0 {
			def = compactString(a.Default)
		}
		var allowed []string
		for _, v := range a.Enum {
			allowed = append(allowed, EscapeLine(v))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", p.st.name(EscapeLine(a.Name)), orString(a.Type, "any"), req,
			EscapeLine(def), truncate(strings.Join(allowed, ", "), 60), firstLine(a.Description))
	}
	tw.Flush()
	fmt.Fprintln(p.w)
	fmt.Fprintln(p.w, p.st.dim("Give arguments as key=value (typed by the schema); arrays and objects as JSON."))
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
