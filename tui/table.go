package tui

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// DisplayWidth returns the number of terminal columns s takes: East Asian
// wide and fullwidth characters take two, combining marks and format
// characters none, every other character one. s is text as mcpx prints it
// (escaped: no control characters), without colour codes — colour is added
// after a table is laid out, so it never counts as width.
func DisplayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r == utf8.RuneError:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// TruncateWidth cuts s to at most w columns, ending it with "…" when it
// was cut (an ellipsis takes one column).
func TruncateWidth(s string, w int) string {
	if DisplayWidth(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	return prefixWidth(s, w-1) + "…"
}

// prefixWidth returns the longest prefix of s that takes at most w columns.
func prefixWidth(s string, w int) string {
	used := 0
	for i, r := range s {
		rw := runeWidth(r)
		if used+rw > w {
			return s[:i]
		}
		used += rw
	}
	return s
}

// span is a piece of a table cell: escaped text and the style it is
// printed in (nil: plain).
type span struct {
	text  string
	style func(a ...any) string
}

// cell is one table cell, made of spans printed one after the other.
type cell []span

func plain(s string) cell { return cell{{text: s}} }

func styled(s string, style func(a ...any) string) cell { return cell{{text: s, style: style}} }

func (c cell) width() int {
	n := 0
	for _, s := range c {
		n += DisplayWidth(s.text)
	}
	return n
}

// truncate cuts the cell to w columns, ending it with "…" in the style
// of the span it cuts.
func (c cell) truncate(w int) cell {
	if c.width() <= w {
		return c
	}
	if w <= 0 {
		return nil
	}
	var out cell
	left := w - 1 // the room before the ellipsis
	for _, s := range c {
		sw := DisplayWidth(s.text)
		if sw <= left {
			out = append(out, s)
			left -= sw
			continue
		}
		return append(out, span{text: prefixWidth(s.text, left) + "…", style: s.style})
	}
	return out
}

func (c cell) render() string {
	var b strings.Builder
	for _, s := range c {
		if s.style != nil && s.text != "" {
			b.WriteString(s.style(s.text))
		} else {
			b.WriteString(s.text)
		}
	}
	return b.String()
}

// table lays out rows in aligned columns, two spaces apart, measuring the
// display width of the text (never its colour codes). With a width, the
// columns are narrowed to fit it and cells that do not fit are cut with
// "…": the first column keeps up to half the room, the others share the
// rest fairly, so a long description gives way before a name does.
type table struct {
	rows   [][]cell
	indent string
	width  int // 0: no limit
}

const tableGap = 2

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) {
	ncol := 0
	for _, r := range t.rows {
		ncol = max(ncol, len(r))
	}
	if ncol == 0 {
		return
	}
	natural := make([]int, ncol)
	for _, r := range t.rows {
		for i, c := range r {
			natural[i] = max(natural[i], c.width())
		}
	}
	widths := natural
	if t.width > 0 {
		widths = fitColumns(natural, t.width-DisplayWidth(t.indent)-tableGap*(ncol-1))
	}
	var b strings.Builder
	for _, r := range t.rows {
		b.Reset()
		b.WriteString(t.indent)
		// Trailing empty cells are not padded.
		last := len(r) - 1
		for last > 0 && r[last].width() == 0 {
			last--
		}
		for i := 0; i <= last; i++ {
			c := r[i].truncate(widths[i])
			b.WriteString(c.render())
			if i < last {
				b.WriteString(strings.Repeat(" ", widths[i]-c.width()+tableGap))
			}
		}
		b.WriteByte('\n')
		_, _ = io.WriteString(w, b.String())
	}
}

// fitColumns narrows natural column widths to room columns in all: the
// first column gets up to half of it, the others a max-min fair share of
// what is left, and room the others do not need goes back to the first.
// Every column keeps at least one column.
func fitColumns(natural []int, room int) []int {
	total := 0
	for _, n := range natural {
		total += n
	}
	if total <= room {
		return natural
	}
	n := len(natural)
	out := make([]int, n)
	room = max(room, n)
	first := min(natural[0], max(room/2, 1))
	rest := fairShare(natural[1:], room-first)
	copy(out[1:], rest)
	used := 0
	for _, w := range rest {
		used += w
	}
	out[0] = min(natural[0], max(room-used, 1))
	return out
}

// fairShare divides room among columns of the given natural widths: a
// column that needs less than an equal share gets what it needs, the
// others share the remainder equally (max-min fairness).
func fairShare(natural []int, room int) []int {
	out := make([]int, len(natural))
	done := make([]bool, len(natural))
	left, cols := room, len(natural)
	for cols > 0 {
		share := max(left/cols, 1)
		progressed := false
		for i, w := range natural {
			if !done[i] && w <= share {
				out[i], done[i] = w, true
				left -= w
				cols--
				progressed = true
			}
		}
		if !progressed {
			extra := max(left-share*cols, 0)
			for i := range natural {
				if !done[i] {
					out[i] = share
					if extra > 0 {
						out[i]++
						extra--
					}
				}
			}
			break
		}
	}
	return out
}
