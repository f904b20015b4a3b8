package tui

import (
	"strings"
)

// WrapText breaks each line of s that is wider than width columns at
// spaces, so that a question reads word by word on a narrow terminal
// instead of being cut mid-word at its edge. A continuation line is
// indented two columns more than the line it continues, so it reads as
// part of it. A word wider than the room is cut at a character boundary,
// never inside a wide character or an escape sequence (colour), except a
// URL, which stays whole so that it can be copied as one; so does a
// command in backquotes that fits on a line. A tab takes
// the columns to the next tab stop, as on the terminal: a line wrapped is
// given spaces for its tabs (expandTabs). width <= 0
// leaves s as it is: text that is not for a terminal (a script, a log)
// is not wrapped.
func WrapText(s string, width int) string {
	if width <= 0 || !needsWrap(s, width) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = wrapLine(l, width)
	}
	return strings.Join(lines, "\n")
}

func needsWrap(s string, width int) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if textWidth(expandTabs(l)) > width {
			return true
		}
	}
	return false
}

// wrapLine wraps one line (no newline) to width columns.
func wrapLine(line string, width int) string {
	if textWidth(expandTabs(line)) <= width {
		return line
	}
	line = expandTabs(line)
	lead := len(line) - len(strings.TrimLeft(line, " "))
	cont := strings.Repeat(" ", min(lead+2, width/2))
	var b strings.Builder
	b.WriteString(line[:lead])
	col := lead // the column the next character goes to
	atStart := true
	rest := line[lead:]
	for rest != "" {
		// One gap (spaces) and the word after it.
		gapEnd := len(rest) - len(strings.TrimLeft(rest, " "))
		gap := rest[:gapEnd]
		wordEnd := wordLen(rest[gapEnd:])
		word := rest[gapEnd : gapEnd+wordEnd]
		rest = rest[gapEnd+wordEnd:]
		if word == "" { // trailing spaces
			break
		}
		// A command in backquotes ("run `mcpx auth login --url URL`"),
		// which a person copies, is one word when it fits on a line:
		// this one (the first word, after the line's indent), or a
		// continuation line.
		room := width - len(cont)
		if atStart {
			room = width - col
		}
		if n := commandLen(word, rest, room); n > 0 {
			word, rest = word+rest[:n], rest[n:]
		}
		ww := textWidth(word)
		if !atStart && col+len(gap)+ww <= width {
			b.WriteString(gap)
			b.WriteString(word)
			col += len(gap) + ww
			continue
		}
		if !atStart {
			b.WriteString("\n")
			b.WriteString(cont)
			col = len(cont)
		}
		atStart = false
		url := strings.Contains(word, "://")
		for col+ww > width && !url {
			head := prefixText(word, width-col)
			if head == "" {
				// Not even one character fits after the
				// indent: give it its own line unindented.
				head = prefixText(word, max(width, textWidth(firstChar(word))))
				if col > 0 {
					b.WriteString("\n")
				}
			}
			b.WriteString(head)
			word = word[len(head):]
			ww -= textWidth(head)
			if word == "" {
				break
			}
			b.WriteString("\n")
			b.WriteString(cont)
			col = len(cont)
		}
		b.WriteString(word)
		col += ww
	}
	return b.String()
}

// commandLen returns, when word opens a span in backquotes (it holds an
// odd number of them) that rest closes, the length of what of rest the
// span takes (to the end of its last word: "`mcpx servers -v`),"), if the
// span takes at most room columns; else 0.
func commandLen(word, rest string, room int) int {
	if strings.Count(word, "`")%2 == 0 {
		return 0
	}
	end := strings.IndexByte(rest, '`')
	if end < 0 {
		return 0
	}
	end++
	end += wordLen(rest[end:])
	if textWidth(word)+textWidth(rest[:end]) > room {
		return 0
	}
	return end
}

// wordLen returns the length of the word at the start of s: up to its
// first space outside an escape sequence.
func wordLen(s string) int {
	for i := 0; i < len(s); {
		if e := escapeLen(s[i:]); e > 0 {
			i += e
			continue
		}
		if s[i] == ' ' {
			return i
		}
		i++
	}
	return len(s)
}

// escapeLen returns the length of the escape sequence (CSI or OSC, as in
// a colour code or a link) at the start of s, 0 when there is none.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != 0x1b {
		return 0
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
	case ']':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
	}
	return len(s)
}

// expandTabs replaces each tab of line (from a server's description, kept
// by Escape) with the spaces to the next tab stop, every 8 columns as on
// a terminal, so that the line measures what the terminal shows: a tab
// counted as one column made a wrapped line wider than the terminal,
// which broke it mid-word again.
func expandTabs(line string) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(line); {
		if e := escapeLen(line[i:]); e > 0 {
			b.WriteString(line[i : i+e])
			i += e
			continue
		}
		if line[i] == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			i++
			continue
		}
		size, w := ClusterAt(line[i:])
		col += w
		b.WriteString(line[i : i+size])
		i += size
	}
	return b.String()
}

// textWidth is DisplayWidth of text that may hold escape sequences
// (colour), which take no column.
func textWidth(s string) int {
	if !strings.Contains(s, "\x1b") {
		return DisplayWidth(s)
	}
	n := 0
	for i := 0; i < len(s); {
		if e := escapeLen(s[i:]); e > 0 {
			i += e
			continue
		}
		size, w := ClusterAt(s[i:])
		n += w
		i += size
	}
	return n
}

// prefixText returns the longest prefix of s that takes at most w
// columns, with the escape sequences it reaches kept whole.
func prefixText(s string, w int) string {
	used := 0
	for i := 0; i < len(s); {
		if e := escapeLen(s[i:]); e > 0 {
			i += e
			continue
		}
		size, rw := ClusterAt(s[i:])
		if used+rw > w {
			return s[:i]
		}
		used += rw
		i += size
	}
	return s
}

// firstChar returns the first character of s (ClusterAt) with the escape
// sequences before it.
func firstChar(s string) string {
	i := 0
	for i < len(s) {
		e := escapeLen(s[i:])
		if e == 0 {
			break
		}
		i += e
	}
	size, _ := ClusterAt(s[i:])
	return s[:i+size]
}
