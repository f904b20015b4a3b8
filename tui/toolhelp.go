package tui

import (
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
)

// ToolHelp describes a tool for a person about to call it: its title and
// description, then a table of its arguments (type, whether required,
// default, allowed values, description).
func (p *Printer) ToolHelp(t inspector.ToolInfo) {
	head := p.st.name(EscapeName(t.Name))
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
		p.say(p.st.dim("This tool takes no arguments."))
		return
	}
	fmt.Fprintln(p.w, p.st.head("Arguments:"))
	tb := &table{indent: "  ", width: p.width}
	tb.add(plain("NAME"), plain("TYPE"), plain("REQUIRED"), plain("DEFAULT"), plain("ALLOWED"), plain("DESCRIPTION"))
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
		tb.add(styled(EscapeName(a.Name), p.st.name), plain(orString(a.Type, "any")), plain(req),
			plain(EscapeLine(def)), plain(truncate(strings.Join(allowed, ", "), 60)), plain(firstLine(a.Description)))
	}
	tb.write(p.w)
	fmt.Fprintln(p.w)
	p.say(p.st.dim("Give arguments as key=value (typed by the schema); arrays and objects as JSON."))
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
