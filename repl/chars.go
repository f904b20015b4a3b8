package repl

import (
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/chzyer/readline"

	"github.com/mcpx-dev/mcpx/tui"
)

// readline edits a line rune by rune, and a character drawn as one can be
// several: an emoji of a joiner (👩 ZWJ 💻), a keycap (1, U+FE0F, U+20E3),
// a flag (two regional indicators), an emoji and its skin tone, a letter
// and its combining accent (e, U+0301). Over one, Left and Right took a
// press per rune while the cursor, drawn on the character (cursorWriter),
// did not seem to move, and Backspace or Delete there took a rune of it:
// 👩‍💻 became 👩 and a stray joiner. The editor puts that right after
// readline has handled the key, in its listener (wholeChars): a move ends
// on the edge of a character, and a character cut is taken out whole.
// readline offers no other way in: its line is its own, and the listener
// is where a line is changed (insertPiece does the same for pasted text).

// charStops reports, for each place in line (0 to len(line)), whether the
// cursor can stand there: between two characters as the terminal draws
// them (tui.ClusterAt, as cursorWriter lays the line out). A character of
// no width (a combining accent, a stray joiner or variation selector) goes
// with the one before it: the cursor drawn before it and after it is in
// the same place, so a stop between them would be a press of Left or Right
// that shows nothing, and Backspace after é would take its accent unseen
// in the press (é to e) rather than the letter the cursor just passed.
func charStops(line []rune) []bool {
	stops := make([]bool, len(line)+1)
	stops[0], stops[len(line)] = true, true
	s := string(line) // one rune for each of line's, an invalid one as U+FFFD
	at := 0
	for i := 0; i < len(s); {
		size, w := tui.ClusterAt(s[i:])
		if w > 0 {
			stops[at] = true
		}
		at += utf8.RuneCountInString(s[i : i+size])
		i += size
	}
	return stops
}

// stopBefore returns the stop at pos or the nearest before it.
func stopBefore(stops []bool, pos int) int {
	pos = max(0, min(pos, len(stops)-1))
	for !stops[pos] {
		pos--
	}
	return pos
}

// stopAfter returns the stop at pos or the nearest after it.
func stopAfter(stops []bool, pos int) int {
	pos = max(0, min(pos, len(stops)-1))
	for !stops[pos] {
		pos++
	}
	return pos
}

// lineState is a line and the cursor in it.
type lineState struct {
	line []rune
	pos  int
}

// drawnLine is readline's Painter: it is given the line and the cursor each
// time readline draws the line — which it does after each change, on
// whichever goroutine — and keeps them, so that the editor knows the line
// as it is when a key comes (before): readline's listener is told the line
// only after the key has changed it. It draws the line as it is.
type drawnLine struct {
	mu   sync.Mutex
	line []rune // readline's own: read only on readline's goroutine
	pos  int
}

func (d *drawnLine) Paint(line []rune, pos int) []rune {
	d.mu.Lock()
	d.line, d.pos = line, pos
	d.mu.Unlock()
	return line
}

// before returns a copy of the line drawn last. It is called on readline's
// goroutine, the only one that changes the line's runes (and draws it after
// each change), while it handles no key.
func (d *drawnLine) before() *lineState {
	d.mu.Lock()
	defer d.mu.Unlock()
	return &lineState{line: slices.Clone(d.line), pos: d.pos}
}

// cutsChars reports the keys whose edit wholeChars mends from the line as
// it was before the key, which is kept for them: those that take runes
// out of the line or swap two.
func cutsChars(key rune) bool {
	switch key {
	case readline.CharBackspace, readline.CharCtrlH, readline.CharDelete, readline.MetaDelete, readline.CharTranspose:
		return true
	}
	return kills(key)
}

// kills reports the keys that cut the line and whose cut readline keeps
// for Ctrl-Y to put back (its kill buffer): Delete (Ctrl-D), Alt-D,
// Ctrl-U, Ctrl-K, Ctrl-W and Alt-Backspace. Backspace is not one. During
// a search (Ctrl-R) they cut the line found, and Backspace takes from
// what is searched for.
func kills(key rune) bool {
	switch key {
	case readline.CharDelete, readline.MetaDelete, readline.CharCtrlU, readline.CharKill,
		readline.CharCtrlW, readline.MetaBackspace:
		return true
	}
	return false
}

// cutText returns what a key that cuts (see kills) took out of before's
// line to leave line, the cursor at pos where the cut began, as readline
// leaves it and wholeChars mends it: the runes of before's line from pos
// on that line does not have. ok is false when line is not before's with
// runes cut at pos (when before is not known: nil); cut is empty when
// nothing was.
func cutText(before *lineState, line []rune, pos int) (cut []rune, ok bool) {
	if before == nil || pos < 0 || pos > len(line) || len(line) > len(before.line) {
		return nil, false
	}
	old := before.line
	n := len(old) - len(line)
	if !slices.Equal(line[:pos], old[:pos]) || !slices.Equal(line[pos:], old[pos+n:]) {
		return nil, false
	}
	return slices.Clone(old[pos : pos+n]), true
}

// wholeChars is the part of readline's listener that keeps the editing to
// whole characters (see charStops): called after readline handled key,
// with the line and the cursor it left, and before, the line when the key
// came (nil when not kept: see cutsChars), it returns the line and cursor
// to put in their place, ok false when they stand.
//
// Left and Right (Ctrl-B, Ctrl-F) moved a rune: the cursor goes on to the
// edge of the character it went into. Backspace, Delete and Ctrl-D took a
// rune: the character it was part of goes whole. Alt-D took the runes up
// to the last rune before the next word: a character that rune ends is
// kept whole (readline keeps that rune, a blank say, between the words).
// Ctrl-T swapped two runes: the two characters they are of are swapped
// (transposeChars). Ctrl-U, Ctrl-K and Ctrl-W (Alt-Backspace) are cut
// as killChars says. The word moves stop only before a letter or a digit
// of ASCII (readline's words), which always begins a character.
// An edit that does not follow from before (a line changed since it was
// drawn, which readline does not do while it waits for a key) is left as
// it is.
func wholeChars(before *lineState, line []rune, pos int, key rune) ([]rune, int, bool) {
	switch key {
	case readline.CharBackward:
		to := stopBefore(charStops(line), pos)
		return line, to, to != pos
	case readline.CharForward:
		to := stopAfter(charStops(line), pos)
		return line, to, to != pos
	}
	if before == nil {
		return nil, 0, false
	}
	switch key {
	case readline.CharTranspose:
		return transposeChars(before, line, pos)
	case readline.CharCtrlU, readline.CharKill, readline.CharCtrlW, readline.MetaBackspace:
		return killChars(before, line, pos, key)
	}
	if len(line) >= len(before.line) || pos > len(line) {
		return nil, 0, false
	}
	old := before.line
	cut := len(old) - len(line) // readline's cut: old[from:from+cut]
	from := pos
	if !slices.Equal(line[:from], old[:from]) || !slices.Equal(line[from:], old[from+cut:]) {
		return nil, 0, false
	}
	stops := charStops(old)
	switch {
	case cut == 1 && (key == readline.CharDelete && from == before.pos ||
		(key == readline.CharBackspace || key == readline.CharCtrlH) && from == before.pos-1):
		start, end := stopBefore(stops, from), stopAfter(stops, from+1)
		if start == from && end == from+1 {
			return nil, 0, false
		}
		return slices.Concat(old[:start], old[end:]), start, true
	case key == readline.MetaDelete && from == before.pos:
		end := max(from, stopBefore(stops, from+cut))
		if end == from+cut {
			return nil, 0, false
		}
		return slices.Concat(old[:from], old[end:]), from, true
	}
	return nil, 0, false
}

// transposeChars mends Ctrl-T, which swapped the runes before the cursor
// and at it (the last two at the end of the line, the first two at its
// beginning) and moved the cursor past them: it swaps the characters
// instead, and puts the cursor after them. A line of one character is
// left as it was, the cursor where it was: on a line of one rune readline
// put it past the end, and the next key typed crashed it (a slice out of
// range).
func transposeChars(before *lineState, line []rune, pos int) ([]rune, int, bool) {
	old, at := before.line, before.pos
	// What readline did (RuneBuffer.Transpose), to know the key did it.
	want, wantPos := slices.Clone(old), at
	if len(want) == 1 {
		wantPos++
	}
	if len(want) >= 2 {
		wantPos = max(1, min(wantPos, len(want)-1))
		want[wantPos], want[wantPos-1] = want[wantPos-1], want[wantPos]
		wantPos++
	}
	if pos != wantPos || !slices.Equal(line, want) {
		return nil, 0, false
	}
	stops := charStops(old)
	out, to := old, stopAfter(stops, at)
	if first, last := stopAfter(stops, 1), stopBefore(stops, len(old)-1); first < len(old) {
		mid := max(first, min(stopBefore(stops, at), last))
		start, end := stopBefore(stops, mid-1), stopAfter(stops, mid+1)
		out, to = slices.Concat(old[:start], old[mid:end], old[start:mid], old[end:]), end
	}
	if to == pos && slices.Equal(out, line) {
		return nil, 0, false
	}
	return out, to, true
}

// killChars mends Ctrl-U, Ctrl-K and Ctrl-W (Alt-Backspace), which cut
// the line before the cursor, after it, and from the start of the word
// before it (wordStart) up to it. Where that word began the line,
// readline's Ctrl-W emptied it, and what was after the cursor went too
// (RuneBuffer.BackEscapeWord): only the runes before the cursor go. And
// a cursor inside a character (after a regional indicator typed before
// a flag, which joins the flag's first) is drawn before it (cursorWriter)
// and cuts there, so the character is kept (Ctrl-U, Ctrl-W) or cut (Ctrl-K)
// whole. Ctrl-W's word starts with a letter or a digit of ASCII, which
// always begins a character.
func killChars(before *lineState, line []rune, pos int, key rune) ([]rune, int, bool) {
	old, at := before.line, before.pos
	if at < 0 || at > len(old) {
		return nil, 0, false
	}
	// What readline did, to know the key did it.
	var want []rune
	wantPos := at
	switch {
	case key == readline.CharCtrlU:
		want, wantPos = old[at:], 0
	case key == readline.CharKill:
		want = old[:at]
	case at == 0:
		want = old
	case wordStart(old, at) == 0:
		want, wantPos = nil, 0
	default:
		wantPos = wordStart(old, at)
		want = slices.Concat(old[:wantPos], old[at:])
	}
	if pos != wantPos || !slices.Equal(line, want) {
		return nil, 0, false
	}
	c := stopBefore(charStops(old), at)
	var out []rune
	to := 0
	switch key {
	case readline.CharCtrlU:
		out = slices.Clone(old[c:])
	case readline.CharKill:
		out, to = slices.Clone(old[:c]), c
	default:
		to = wordStart(old, c)
		out = slices.Concat(old[:to], old[c:])
	}
	if to == pos && slices.Equal(out, line) {
		return nil, 0, false
	}
	return out, to, true
}

// wordStart returns where readline's Ctrl-W begins to cut before at: the
// nearest place before at where a word (a letter or a digit of ASCII)
// follows a rune that is not of one, else the line's start. What it cuts
// is the word and the blanks (anything not of a word) after it.
func wordStart(line []rune, at int) int {
	for i := at - 1; i > 0; i-- {
		if !readline.IsWordBreak(line[i]) && readline.IsWordBreak(line[i-1]) {
			return i
		}
	}
	return 0
}
