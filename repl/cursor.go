package repl

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/tui"
)

// cursorWriter stands between readline and the terminal and puts the
// cursor where readline means it to be on a line that holds wide
// characters (CJK, emoji). readline draws the line, then moves the cursor
// back from its end with one backspace per character, whatever its width
// (chzyer/readline#184), and counts an emoji as one column: on such a line
// Left moved half a character, what was typed next showed elsewhere than
// where it went, and a search (Ctrl-R) wrote its highlight over the line's
// own text, a column off. And readline erases the line, to draw it again,
// from the row it guesses the cursor is on: on a line that wraps, a guess
// that falls short left copies of the line above it.
//
// The writer sees each of readline's draws of the line whole (one Write
// that begins with the prompt) and the erase before it (one Write of
// cursor-movement codes): it lays the line out as the terminal does (a
// wide character that does not fit at the end of a row goes to the next)
// and replaces the backspaces with a move to the character they count
// back to, and the erase's rows with the row it put the cursor on.
// Everything else goes through as it is.
type cursorWriter struct {
	w     io.Writer
	width func() int

	mu       sync.Mutex
	prompt   string
	row, col int  // the cursor in the line drawn last (rows from its first)
	last     int  // the line's last row
	known    bool // a line was drawn since the last erase: the above hold
	below    bool // below the line (a search's prompt, a list of completions)
	delta    int  // the rows added to the way down there
}

// setPrompt tells the writer the prompt readline draws the line with.
func (c *cursorWriter) setPrompt(p string) {
	c.mu.Lock()
	c.prompt = p
	c.mu.Unlock()
}

func (c *cursorWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rows, ok := eraseRows(p); ok {
		known, row := c.known, c.row
		c.known, c.below = false, false
		if !known || row == rows {
			return c.w.Write(p)
		}
		if _, err := c.w.Write(eraseFrom(row)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if c.prompt == "" || !bytes.HasPrefix(p, []byte(c.prompt)) {
		return c.writeOther(p)
	}
	width := c.width()
	body, back, ok := splitBack(p)
	if !ok || width < 2 || bytes.ContainsAny(body, "\r\n\b") {
		c.known = false
		return c.w.Write(p)
	}
	starts, endRow, endCol := layout(body, width)
	out := body
	c.last = endRow
	switch {
	case back > 0 && back <= len(starts):
		to := starts[len(starts)-back]
		out = append(out[:len(out):len(out)], moveBack(endRow, min(endCol, width-1), to)...)
		c.row, c.col = to.row, to.col
	case back > 0:
		c.known = false
		return c.w.Write(p)
	case endCol == width:
		// The line ends at the end of a row: the cursor goes to the next,
		// as readline's own " \b" does where it counts the columns right.
		out = append(out[:len(out):len(out)], " \b"...)
		c.row, c.col, c.last = endRow+1, 0, endRow+1
	default:
		c.row, c.col = endRow, endCol
	}
	c.known, c.below = true, false
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeOther writes what is not the line nor its erase. A search's prompt
// and a list of completions are written below the line, from the cursor
// down the rows readline guesses the line has left, and the cursor is put
// back up those rows, at the column it guesses: the rows down are made
// the line's, and the cursor put back where it was.
func (c *cursorWriter) writeOther(p []byte) (int, error) {
	if !c.known {
		return c.w.Write(p)
	}
	out := p
	if down := leadingNewlines(p); down > 0 && bytes.HasPrefix(p[down:], eraseBelow) {
		rows := c.last - c.row + 1
		out = append(bytes.Repeat([]byte{'\n'}, rows), p[down:]...)
		c.below, c.delta = true, rows-down
	}
	if c.below {
		if m := backUp().FindSubmatchIndex(out); m != nil {
			i := 2 // the group that matched
			if m[i] < 0 {
				i = 4
			}
			n := out[m[i]:m[i+1]]
			up, _ := strconv.Atoi(string(n))
			end := append([]byte(nil), out[:m[0]]...)
			if up += c.delta; up > 0 {
				end = append(end, "\x1b["+strconv.Itoa(up)+"A"...)
			}
			end = append(end, '\r')
			if c.col > 0 {
				end = append(end, "\x1b["+strconv.Itoa(c.col)+"C"...)
			}
			out, c.below = end, false
		}
	}
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// backUp is how a search's prompt (CR, up) and a list of completions (up,
// CR) end: the move back to the line, to a column. It is compiled on first
// use: every mcpx command links this package, and only the REPL writes.
var backUp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:\x1b\[(\d+)A\r|\r\x1b\[(\d+)A)(?:\x1b\[\d+C)?$`)
})

func leadingNewlines(p []byte) int {
	n := 0
	for n < len(p) && p[n] == '\n' {
		n++
	}
	return n
}

// cell is a position on the terminal, in rows from the line's first.
type cell struct{ row, col int }

// layout places the characters of a line drawn from the first column of
// a row of width columns, as the terminal does: colour codes take no
// room, a character is what the terminal draws as one (tui.ClusterAt: an
// emoji of several runes, 👩‍💻 or 1️⃣, is one of two columns), and a
// character wider than what is left of a row begins the next. It returns
// where each rune begins, as readline counts them back, a rune inside a
// character where the character does (the cursor can stand only on it),
// and where the line ends (its column is width when the line fills its
// last row).
func layout(line []byte, width int) (starts []cell, row, col int) {
	s := string(line)
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i += escapeLen(line[i:])
			continue
		}
		size, w := tui.ClusterAt(s[i:])
		if w > 0 && col+w > width {
			row, col = row+1, 0
		}
		for range utf8.RuneCountInString(s[i : i+size]) {
			starts = append(starts, cell{row, col})
		}
		col += w
		i += size
	}
	return starts, row, col
}

// escapeLen is the length of the escape sequence s begins with: a CSI
// sequence (ESC [ parameters, a final byte), else ESC and the byte after.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return len(s)
	}
	if s[1] != '[' {
		return 2
	}
	for i := 2; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
	}
	return len(s)
}

// readline's move up a row, to its end, while it backs over a line.
var upToEnd = []byte("\x1b[A\r\x1b[")

// splitBack splits a draw of the line into the line and the count of the
// backspaces after it, with which readline puts the cursor back (each one
// character; the moves up a row between them are readline's guesses of
// where a row ends, left out). ok is false when what follows the line is
// not that.
func splitBack(p []byte) (body []byte, back int, ok bool) {
	end := len(p)
	for end > 0 {
		switch {
		case p[end-1] == '\b':
			back++
			end--
			continue
		case p[end-1] == 'C':
			// ESC [ A CR ESC [ digits C
			j := end - 1
			for j > 0 && p[j-1] >= '0' && p[j-1] <= '9' {
				j--
			}
			if j < end-1 && bytes.HasSuffix(p[:j], upToEnd) {
				end = j - len(upToEnd)
				continue
			}
		}
		break
	}
	if back == 0 && end != len(p) {
		return nil, 0, false
	}
	return p[:end], back, true
}

// moveBack moves the cursor from (row, col) up to the cell to, which is
// on the same row or above.
func moveBack(row, col int, to cell) []byte {
	var b []byte
	if up := row - to.row; up > 0 {
		b = append(b, "\x1b["+strconv.Itoa(up)+"A"...)
	}
	if to.col == col {
		return b
	}
	b = append(b, '\r')
	if to.col > 0 {
		b = append(b, "\x1b["+strconv.Itoa(to.col)+"C"...)
	}
	return b
}

// readline's erase of the line: clear below the cursor, then each row up
// to the line's first, the cursor left at its beginning.
var (
	eraseBelow = []byte("\x1b[J")
	eraseUp    = []byte("\x1b[2K\r\x1b[A")
	eraseLast  = []byte("\x1b[2K\r")
)

// eraseRows reports whether p is readline's erase of the line, and the
// rows it goes up.
func eraseRows(p []byte) (rows int, ok bool) {
	rest, ok := bytes.CutPrefix(p, eraseBelow)
	if !ok {
		return 0, false
	}
	for {
		next, up := bytes.CutPrefix(rest, eraseUp)
		if !up {
			break
		}
		rest = next
		rows++
	}
	return rows, bytes.Equal(rest, eraseLast)
}

// eraseFrom is readline's erase of a line whose cursor is rows below its
// first row.
func eraseFrom(rows int) []byte {
	b := append([]byte(nil), eraseBelow...)
	for range rows {
		b = append(b, eraseUp...)
	}
	return append(b, eraseLast...)
}
