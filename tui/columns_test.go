package tui

import (
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
)

// Columns lays ASCII text out byte for byte as the tabwriter it replaces
// did: blocks of lines with a column, empty cells, a line with no tab
// between blocks, text after the last newline.
func TestColumnsIsTabwriterForASCII(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		"a\tb\n",
		"NAME\tSOURCE\tTRANSPORT\tCOMMAND OR URL\tFILE\nx\tmcpx\tstdio\tnode s.js\t/a/b.json\nlonger-name\tclaude\thttp\thttps://x.example/mcp\t\n",
		"  tools\tlistChanged\n  resources\tsubscribe, listChanged\n  logging\t\n",
		"Protocol commands:\n  ping\tPing the server\n  tools list\tList tools\n\nREPL commands:\n  exit\tLeave\n",
		"a\tb\tc\nlong one\tb\nx\ty\tzz\tw\n\t\t\n",
		"no newline\tat the end",
		"only text\nand more\n",
	} {
		var want strings.Builder
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		fmt.Fprint(tw, in)
		if err := tw.Flush(); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		c := NewColumns(&got)
		fmt.Fprint(c, in)
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%q:\n got %q\nwant %q", in, got.String(), want.String())
		}
	}
}

// A wide (CJK) cell takes two columns a character, and a colour code
// none: the cells after them start in the same column on every line.
func TestColumnsMeasuresTerminalColumns(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	c := NewColumns(&b)
	fmt.Fprint(c, "  tools\tlistChanged\n  宽字符\tx\n  \x1b[1mlogging\x1b[0m\ty\n")
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "  tools    listChanged\n  宽字符   x\n  \x1b[1mlogging\x1b[0m  y\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// FuzzColumnsASCII: for text of printable ASCII, tabs and newlines,
// Columns writes what tabwriter does.
func FuzzColumnsASCII(f *testing.F) {
	f.Add("a\tb\nlong\tc\td\n\n\tx")
	f.Fuzz(func(t *testing.T, in string) {
		for _, r := range in {
			if (r < ' ' || r > '~') && r != '\t' && r != '\n' {
				return
			}
		}
		var want, got strings.Builder
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		fmt.Fprint(tw, in)
		_ = tw.Flush()
		c := NewColumns(&got)
		fmt.Fprint(c, in)
		_ = c.Flush()
		if got.String() != want.String() {
			t.Errorf("%q:\n got %q\nwant %q", in, got.String(), want.String())
		}
	})
}
