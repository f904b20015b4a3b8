package tui

import (
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// DisplayWidth returns the number of terminal columns s takes: East Asian
// wide and fullwidth characters take two, combining marks and format
// characters none, every other character one, and an emoji drawn as one
// picture two (see ClusterAt). s is text as mcpx prints it
// (escaped: no control characters), without colour codes — colour is added
// after a table is laid out, so it never counts as width.
func DisplayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		// An ASCII character is one column, but a keycap's base
		// (followed by a rune that is not ASCII).
		if s[i] < utf8.RuneSelf && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) {
			n++
			i++
			continue
		}
		size, w := ClusterAt(s[i:])
		n += w
		i += size
	}
	return n
}

// ClusterAt returns the length in bytes of the character at the start of
// s as a terminal draws it, and the columns it takes: a rune, and for an
// emoji what makes one picture of it, drawn in two columns: the
// pictograph after a zero-width joiner (U+200D: 👩‍💻 is 👩 ZWJ 💻), a skin
// tone (👍🏽), the second regional indicator of a flag (🇫🇷), the emoji
// presentation selector (U+FE0F), which makes a narrow symbol an emoji
// (❤️), and a keycap (1️⃣: a digit, # or *, U+FE0F and U+20E3). These are
// the emoji sequences of Unicode's grapheme clusters (UAX #29) as
// terminals that join them draw them; measured rune by rune, 👩‍👩‍👧‍👦 took
// 8 columns, not 2, and a wrap or a cut fell inside it. An emoji is told
// by its width: a wide rune, or one with U+FE0F; a joiner joins two
// pictographs (isPictograph) only, as in UAX #29 (GB11): between two
// letters, wide ones too (名‍前), it joins nothing, and the letters are
// drawn as they are. (A combining mark after a rune is a character of its
// own here, of no column: a cut before it is a cut that fits, never
// made.) It is exported for the REPL, which lays out the line being typed
// by the same characters as mcpx's output, to put the cursor where the
// terminal draws it.
func ClusterAt(s string) (size, w int) {
	r, size := utf8.DecodeRuneInString(s)
	if r < utf8.RuneSelf {
		if n := keycapLen(s); n > 0 {
			return n, 2
		}
		return size, 1
	}
	w = runeWidth(r)
	if w == 0 {
		return size, w
	}
	emoji := w == 2
	pict := isPictograph(r) // what a joiner after it joins to
	flag := isRegionalIndicator(r)
	for size < len(s) && s[size] >= utf8.RuneSelf {
		next, n := utf8.DecodeRuneInString(s[size:])
		switch {
		case next == 0xfe0f:
			w, emoji = 2, true
		case next == 0x200d && emoji && pict:
			// The pictograph joined is drawn in this picture (a
			// narrow one made an emoji by the U+FE0F after it too).
			after, m := utf8.DecodeRuneInString(s[size+n:])
			if !isPictograph(after) {
				return size, w
			}
			n += m
		case emoji && next >= 0x1f3fb && next <= 0x1f3ff: // skin tones
		case flag && isRegionalIndicator(next):
			w, flag = 2, false
		default:
			return size, w
		}
		size += n
	}
	return size, w
}

// keycapLen returns the length of the keycap emoji at the start of s
// (UTS #51: a digit, # or *, U+FE0F, U+20E3), 0 when there is none.
// Without U+FE0F it is the character and a combining mark, as it is drawn.
func keycapLen(s string) int {
	const keycap = "\ufe0f\u20e3"
	if len(s) > len(keycap) && strings.HasPrefix(s[1:], keycap) && (s[0] >= '0' && s[0] <= '9' || s[0] == '#' || s[0] == '*') {
		return 1 + len(keycap)
	}
	return 0
}

// isRegionalIndicator reports the letters of which two make a flag.
func isRegionalIndicator(r rune) bool { return r >= 0x1f1e6 && r <= 0x1f1ff }

// isPictograph reports, near enough, Unicode's Extended_Pictographic
// characters (UTS #51), those a zero-width joiner joins into one emoji:
// the emoji planes (U+1F000–U+1FAFF, but the regional indicators and the
// skin tones, which are not pictographs of their own, and U+1FC00 on,
// kept for emoji to come), the Miscellaneous Symbols and the Dingbats
// (U+2600–U+27BF) and the few other symbols that are emoji (©, ®, ‼, ™,
// arrows, ⌚, ⏩, ▶, ⬅, ⭐, 〰 …). The Go standard library has no such table;
// this one errs, in those two blocks, on a few symbols that are not
// emoji, which only keeps a joiner between them.
func isPictograph(r rune) bool {
	switch {
	case r >= 0x1f000 && r <= 0x1faff:
		return !isRegionalIndicator(r) && !(r >= 0x1f3fb && r <= 0x1f3ff)
	case r >= 0x1fc00 && r <= 0x1fffd, r >= 0x2600 && r <= 0x27bf:
		return true
	case r == 0xa9, r == 0xae, r == 0x203c, r == 0x2049, r == 0x2122, r == 0x2139,
		r >= 0x2194 && r <= 0x2199, r == 0x21a9, r == 0x21aa, r == 0x231a, r == 0x231b,
		r == 0x2328, r == 0x2388, r == 0x23cf, r >= 0x23e9 && r <= 0x23f3, r >= 0x23f8 && r <= 0x23fa,
		r == 0x24c2, r == 0x25aa, r == 0x25ab, r == 0x25b6, r == 0x25c0, r >= 0x25fb && r <= 0x25fe,
		r == 0x2934, r == 0x2935, r >= 0x2b05 && r <= 0x2b07, r == 0x2b1b, r == 0x2b1c,
		r == 0x2b50, r == 0x2b55, r == 0x3030, r == 0x303d, r == 0x3297, r == 0x3299:
		return true
	}
	return false
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

// prefixWidth returns the longest prefix of s that takes at most w
// columns, never cutting a character (ClusterAt).
func prefixWidth(s string, w int) string {
	used := 0
	for i := 0; i < len(s); {
		size, cw := 1, 1
		if s[i] >= utf8.RuneSelf || i+1 < len(s) && s[i+1] >= utf8.RuneSelf {
			size, cw = ClusterAt(s[i:])
		}
		if used+cw > w {
			return s[:i]
		}
		used += cw
		i += size
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
// "…", except in the first column: in every table mcpx prints, it is an
// identifier (a tool's, a prompt's, a resource's, an argument's name, a
// key, a path), and two names cut to the same prefix
// ("trigger-sampling-…") could not be told apart, nor typed. The other
// columns give way instead, the last ones first, down to nothing; a name
// wider than the whole room is broken across lines of its own, its
// continuation lines indented and its row's other cells on the line
// after them, and does not count in its column's width.
type table struct {
	rows   [][]cell
	indent string
	width  int // 0: no limit
}

const tableGap = 2

// minShown is the fewest columns a cut column is given ("message…"): a
// column cut shorter says too little to be worth its room, and is left
// out.
const minShown = 8

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
	room := 0 // with a width, the room a row has
	if t.width > 0 {
		room = t.width - DisplayWidth(t.indent)
		// A name wider than the room is broken across lines of its own
		// whatever the column's width, so it does not set that width:
		// one such name (a server's 10,000-character one) would leave no
		// room for the other columns in any row.
		if natural[0] > room {
			natural = slices.Clone(natural)
			natural[0] = 0
			for _, r := range t.rows {
				if len(r) > 0 && r[0].width() <= room {
					natural[0] = max(natural[0], r[0].width())
				}
			}
		}
		widths = fitKeepingFirst(natural, room)
	}
	// The columns shown: those left out (width 0 where there is text)
	// are the last ones.
	shown := ncol
	for shown > 1 && widths[shown-1] == 0 && natural[shown-1] > 0 {
		shown--
	}
	var b strings.Builder
	for _, r := range t.rows {
		b.Reset()
		b.WriteString(t.indent)
		// Trailing empty cells are not padded.
		last := min(len(r), shown) - 1
		for last > 0 && r[last].width() == 0 {
			last--
		}
		var rest cell // what of a whole first cell goes on the next lines
		if room > 0 && len(r) > 0 && r[0].width() > widths[0] {
			// A name wider than the room: its lines take the whole
			// room, and the row's other cells follow on a line of their
			// own, in their columns.
			b.WriteString(t.wrapName(r[0], room))
			if last == 0 {
				_, _ = io.WriteString(w, b.String())
				continue
			}
			b.WriteString(t.indent)
			r = append([]cell{nil}, r[1:]...)
		}
		for i := 0; i <= last; i++ {
			var c cell
			if i == 0 {
				c, rest = r[0].split(widths[0])
			} else {
				c = r[i].truncate(widths[i])
			}
			b.WriteString(c.render())
			if i < last {
				b.WriteString(strings.Repeat(" ", max(widths[i]-c.width(), 0)+tableGap))
			}
		}
		b.WriteByte('\n')
		if len(rest) > 0 {
			b.WriteString(t.continuation(rest, widths[0]))
		}
		_, _ = io.WriteString(w, b.String())
	}
}

// wrapName returns the lines of a first cell broken to w columns (the
// first line's indent is the caller's).
func (t *table) wrapName(name cell, w int) string {
	head, rest := name.split(w)
	return head.render() + "\n" + t.continuation(rest, w)
}

// continuation returns the lines of what of a name did not fit on its
// first line, broken to w columns.
func (t *table) continuation(rest cell, w int) string {
	var b strings.Builder
	for len(rest) > 0 {
		// A continuation of a name: two columns in, so that it
		// does not read as the next row (not in a column too
		// narrow to spare them).
		cont := 2
		if w < 6 {
			cont = 0
		}
		var c cell
		c, rest = rest.split(w - cont)
		b.WriteString(t.indent + strings.Repeat(" ", cont) + c.render() + "\n")
	}
	return b.String()
}

// split cuts the cell after w columns (at least one character), after a
// separator ("-", "_", ".", "/", ":") in the second half of what fits when
// there is one, returning the part that fits and the rest (nil when it
// fits whole).
func (c cell) split(w int) (head, rest cell) {
	// (Each piece costs what it measures, not the whole cell: a name
	// of a megabyte is broken in linear time.)
	left := w
	for i, s := range c {
		p := prefixWidth(s.text, left)
		if p == s.text {
			head = append(head, s)
			left -= DisplayWidth(p)
			continue
		}
		if j := strings.LastIndexAny(p, "-_./:"); j >= len(p)/2 && j+1 < len(p) {
			p = p[:j+1] // after a separator of the name's parts
		}
		if p == "" && len(head) == 0 {
			size, _ := ClusterAt(s.text)
			p = s.text[:size] // one character, however wide
		}
		if p != "" {
			head = append(head, span{text: p, style: s.style})
		}
		rest = append(cell{{text: s.text[len(p):], style: s.style}}, c[i+1:]...)
		return head, rest
	}
	return head, nil
}

// fitKeepingFirst narrows natural column widths to room columns in all
// (gaps included) without narrowing the first: the others share what the
// first leaves fairly (fairShare), and those that would be cut to fewer
// than minShown columns are left out (0), the last first. A first column
// wider than the room gets the room, and its cells are broken across
// lines.
func fitKeepingFirst(natural []int, room int) []int {
	total := tableGap * (len(natural) - 1)
	for _, n := range natural {
		total += n
	}
	if total <= room {
		return natural
	}
	out := make([]int, len(natural))
	out[0] = max(min(natural[0], room), 1)
	for k := len(natural) - 1; k >= 1; k-- { // k other columns shown
		left := room - out[0] - tableGap*k
		if left < k {
			continue
		}
		share := fairShare(natural[1:k+1], left)
		ok := true
		for i, w := range share {
			ok = ok && w >= min(natural[i+1], minShown)
		}
		if ok {
			copy(out[1:], share)
			return out
		}
	}
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
