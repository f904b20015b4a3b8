package tui

import (
	"bytes"
	"io"
	"strings"
)

// Columns aligns lines of tab-separated cells as text/tabwriter does with
// the settings mcpx uses (NewWriter(w, 0, 4, 2, ' ', 0)): each cell a tab
// ends is padded to the widest of its column plus two spaces, a column
// running over the consecutive lines that have it, and the text after a
// line's last tab is printed as it is. It measures a cell in terminal
// columns (textWidth), not in runes as tabwriter does: a wide (CJK)
// character takes two, a combining mark or a colour code none, so a
// server's wide capability or session name no longer pushes the rest of
// its row out of line. ASCII text comes out byte for byte as tabwriter's.
// Nothing is written before Flush.
type Columns struct {
	w   io.Writer
	buf bytes.Buffer
}

// NewColumns returns a Columns writing to w.
func NewColumns(w io.Writer) *Columns { return &Columns{w: w} }

// Write takes text to align; it never fails.
func (c *Columns) Write(p []byte) (int, error) { return c.buf.Write(p) }

// Flush writes what was written, aligned, and forgets it.
func (c *Columns) Flush() error {
	if c.buf.Len() == 0 {
		return nil
	}
	text := c.buf.String()
	c.buf.Reset()
	lines := strings.Split(text, "\n") // the last one: what follows the last newline
	rows := make([][]string, len(lines))
	pads := make([][]int, len(lines)) // per row, the width of each cell a tab ends
	for i, l := range lines {
		rows[i] = strings.Split(l, "\t")
		if i == len(lines)-1 && len(rows[i]) > 1 && rows[i][len(rows[i])-1] == "" {
			// Text after the last newline ending in a tab: tabwriter
			// takes its last cell for the line's last text (unpadded).
			rows[i] = rows[i][:len(rows[i])-1]
		}
		pads[i] = make([]int, len(rows[i])-1)
	}
	for j := 0; ; j++ {
		found := false
		for i := 0; i < len(rows); {
			if len(rows[i])-1 <= j {
				i++
				continue
			}
			// A block of lines that all have cell j.
			found = true
			end, widest := i, 0
			for ; end < len(rows) && len(rows[end])-1 > j; end++ {
				widest = max(widest, textWidth(rows[end][j]))
			}
			for ; i < end; i++ {
				pads[i][j] = widest + tableGap
			}
		}
		if !found {
			break
		}
	}
	var b strings.Builder
	for i, r := range rows {
		for j, cell := range r[:len(r)-1] {
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", pads[i][j]-textWidth(cell)))
		}
		b.WriteString(r[len(r)-1])
		if i < len(rows)-1 {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(c.w, b.String())
	return err
}
