package repl

import (
	"slices"
	"strings"
	"testing"
)

func TestCharStops(t *testing.T) {
	for _, c := range []struct {
		line string
		want []int // the places the cursor can stand
	}{
		{"", []int{0}},
		{"ab", []int{0, 1, 2}},
		{"a👩\u200d💻b", []int{0, 1, 4, 5}},      // an emoji of a joiner
		{"a1\ufe0f\u20e3b", []int{0, 1, 4, 5}}, // a keycap
		{"a🇫🇷🇩🇪", []int{0, 1, 3, 5}},           // two flags
		{"👍🏽x", []int{0, 2, 3}},                // a skin tone
		{"e\u0301\u0323x", []int{0, 3, 4}},     // a letter and two accents
		{"\u0301a", []int{0, 1, 2}},            // an accent on nothing is a character
		{"👩\u200dx", []int{0, 2, 3}},           // a stray joiner goes with the emoji
		{"日本", []int{0, 1, 2}},
		{"a\xffb", []int{0, 1, 2, 3}}, // an invalid byte is a rune (U+FFFD) of its own
	} {
		stops := charStops([]rune(c.line))
		var got []int
		for i, s := range stops {
			if s {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("charStops(%q) = %v; want %v", c.line, got, c.want)
		}
	}
}

// The keys that move over the line or change it go by characters as
// they are drawn, not by runes: an emoji of several runes, a flag, a
// keycap, a skin tone, a letter and its accent are passed, taken out and
// swapped (Ctrl-T) whole.
func TestEditorEditsWholeCharacters(t *testing.T) {
	const (
		left, right   = "\x1b[D", "\x1b[C"
		ctrlB, ctrlF  = "\x02", "\x06"
		backspace     = "\x7f"
		ctrlH, ctrlD  = "\x08", "\x04"
		del, home     = "\x1b[3~", "\x01"
		ctrlT         = "\x14"
		zwj, keycap   = "👩\u200d💻", "1\ufe0f\u20e3"
		flag, skin    = "🇫🇷", "👍🏽"
		accent, marks = "e\u0301", "e\u0301\u0323"
	)
	for _, ch := range []string{zwj, keycap, flag, skin, accent, marks} {
		for _, c := range []struct {
			name, keys, want string
		}{
			{"Left, Backspace", "echo a" + ch + "b" + left + backspace, "echo ab"},
			{"Left twice, Backspace", "echo a" + ch + "b" + left + left + backspace, "echo " + ch + "b"},
			{"Ctrl-B twice, Ctrl-H", "echo a" + ch + "b" + ctrlB + ctrlB + ctrlH, "echo " + ch + "b"},
			{"Backspace at the end", "echo a" + ch + backspace, "echo a"},
			{"Left twice, insert", "echo a" + ch + "b" + left + left + "|", "echo a|" + ch + "b"},
			{"Left twice, Delete", "echo a" + ch + "b" + left + left + del, "echo ab"},
			{"Left twice, Ctrl-D", "echo a" + ch + "b" + left + left + ctrlD, "echo ab"},
			{"Right, insert", "echo a" + ch + "b" + home + strings.Repeat(right, 7) + "|", "echo a" + ch + "|b"},
			{"Ctrl-F, insert", "a" + ch + ch + home + ctrlF + ctrlF + "|", "a" + ch + "|" + ch},
			{"Delete in a line of one", ch + left + del, ""},
			{"Backspace in a line of one", ch + backspace + "x", "x"},
			{"Ctrl-T at the end", "a" + ch + ctrlT + "|", ch + "a|"},
			{"Ctrl-T after it", "a" + ch + "b" + left + ctrlT + "|", "ab" + ch + "|"},
			{"Ctrl-T at the beginning", ch + "b" + home + ctrlT + "|", "b" + ch + "|"},
			{"Ctrl-T in a line of one", ch + ctrlT + "|", ch + "|"},
		} {
			f := newFakeTerm(t, EditorOptions{})
			ch := f.read()
			f.typeKeys(t, c.keys+"\r")
			if r := wait(t, ch); r.err != nil || r.text != c.want {
				t.Errorf("%s in %q: got %q, %v; want %q", c.name, c.keys, r.text, r.err, c.want)
			}
		}
	}
}

// The word keys stop only before a letter or a digit (readline's words),
// which begins a character: Alt-B, Alt-F and Ctrl-W keep to whole
// characters, and Alt-D, which keeps the last rune before the next word
// (a blank, say), keeps the character that rune ends whole.
func TestEditorWordKeysKeepWholeCharacters(t *testing.T) {
	const (
		home, left  = "\x01", "\x1b[D"
		altD, altB  = "\x1bd", "\x1bb"
		altF, ctrlW = "\x1bf", "\x17"
		zwj, flag   = "👩\u200d💻", "🇫🇷"
	)
	for _, c := range []struct {
		name, keys, want string
	}{
		{"Alt-D", "x " + zwj + "b" + home + altD, zwj + "b"},
		{"Alt-D", "x " + flag + "b" + home + altD, flag + "b"},
		{"Alt-D", "x " + zwj + zwj + "b" + home + altD, zwj + "b"},
		{"Alt-D to the end", "x " + zwj + home + altD, ""},
		{"Alt-B, Alt-F", "a" + zwj + "b" + altB + altB + altF + "|", "a" + zwj + "|b"},
		{"Alt-B, Alt-F", "a" + flag + "b" + altB + altB + altF + "|", "a" + flag + "|b"},
		{"Ctrl-W", "echo ab " + zwj + ctrlW, "echo "},
		{"Ctrl-W", "echo ab " + flag + "c" + left + ctrlW, "echo c"},
	} {
		f := newFakeTerm(t, EditorOptions{})
		ch := f.read()
		f.typeKeys(t, c.keys+"\r")
		if r := wait(t, ch); r.err != nil || r.text != c.want {
			t.Errorf("%s in %q: got %q, %v; want %q", c.name, c.keys, r.text, r.err, c.want)
		}
	}
}

// Ctrl-T on a line of one rune, or of none, leaves the line and the
// cursor as they were: readline put the cursor past the end of a line of
// one rune, and the next key typed crashed it.
func TestEditorTransposeShortLines(t *testing.T) {
	for _, c := range []struct{ keys, want string }{
		{"a\x14|", "a|"},
		{"a\x01\x14|", "|a"},
		{"\x14|", "|"},
		{"ab\x14|", "ba|"},
	} {
		f := newFakeTerm(t, EditorOptions{})
		ch := f.read()
		f.typeKeys(t, c.keys+"\r")
		if r := wait(t, ch); r.err != nil || r.text != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.keys, r.text, r.err, c.want)
		}
	}
}

// Ctrl-W (and Alt-Backspace) cuts from the start of the word before the
// cursor up to it, and the blanks between them, as readline does: where
// that word begins the line, readline emptied it, and what was after the
// cursor went too. Ctrl-U and Ctrl-K cut before the cursor and after it;
// a cursor inside a character (a letter typed before a flag's second
// half) stands where it is drawn, before it, and the character is kept
// or cut whole.
func TestEditorKillKeys(t *testing.T) {
	const (
		home, left   = "\x01", "\x1b[D"
		ctrlW, altBS = "\x17", "\x1b\x7f"
		ctrlU, ctrlK = "\x15", "\x0b"
		zwj, flag    = "👩\u200d💻", "🇫🇷"
	)
	for _, c := range []struct {
		name, keys, want string
	}{
		{"Ctrl-W", "ab cd" + left + left + left + ctrlW + "|", "| cd"},
		{"Ctrl-W", "ab cd" + left + left + ctrlW + "|", "|cd"},
		{"Ctrl-W", "x ab cd" + left + ctrlW + "|", "x ab |d"},
		{"Ctrl-W", "ab cd  " + ctrlW + "|", "ab |"},
		{"Ctrl-W", "ab cd  " + left + ctrlW + "|", "ab | "},
		{"Ctrl-W", "ab!!" + ctrlW + "|", "|"},
		{"Ctrl-W", "ab!!x" + left + ctrlW + "|", "|x"},
		{"Ctrl-W", "  ab" + left + left + ctrlW + "|", "|ab"},
		{"Ctrl-W", "ab" + home + ctrlW + "|", "|ab"},
		{"Ctrl-W", zwj + "ab" + left + left + ctrlW + "|", "|ab"},
		{"Ctrl-W", "ab " + zwj + "cd" + left + left + ctrlW + "|", "|cd"},
		{"Ctrl-W", "x ab " + zwj + "cd" + left + left + ctrlW + "|", "x |cd"},
		{"Alt-Backspace", "ab cd" + left + left + left + altBS + "|", "| cd"},
		{"Ctrl-U", "ab " + zwj + "cd" + left + left + ctrlU + "|", "|cd"},
		{"Ctrl-K", "ab " + zwj + "cd" + left + left + left + ctrlK + "|", "ab |"},
		{"Ctrl-U inside a flag", flag + home + "\U0001F1E9" + ctrlU + "|", "|\U0001F1E9" + flag},
		{"Ctrl-K inside a flag", flag + home + "\U0001F1E9" + ctrlK + "|", "|"},
		{"Ctrl-W inside a flag", "x ab " + flag + left + "\U0001F1E9" + ctrlW + "|", "x |\U0001F1E9" + flag},
	} {
		f := newFakeTerm(t, EditorOptions{})
		ch := f.read()
		f.typeKeys(t, c.keys+"\r")
		if r := wait(t, ch); r.err != nil || r.text != c.want {
			t.Errorf("%s in %q: got %q, %v; want %q", c.name, c.keys, r.text, r.err, c.want)
		}
	}
}

// During a search (Ctrl-R) Ctrl-W cuts the line found, and Ctrl-Y puts
// back what it cut.
func TestEditorKillDuringSearch(t *testing.T) {
	for _, c := range []struct{ keys, want string }{
		{"\x12cd\x17|\r", "|cd"},
		{"\x12cd\x17\x05\x19|\r", "cdab |"},
	} {
		f := newFakeTerm(t, EditorOptions{})
		f.ed.AddHistory("ab cd")
		ch := f.read()
		f.typeKeys(t, c.keys)
		if r := wait(t, ch); r.err != nil || r.text != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.keys, r.text, r.err, c.want)
		}
	}
}

// Ctrl-Y puts back what the last key that cut took, whole: readline kept
// only the runes it cut itself (of 👩‍💻 after Delete, 👩; after Alt-D,
// 👩 and a joiner), and nothing of what Ctrl-W cut from the line's start.
// Backspace keeps nothing, as in readline.
func TestEditorYankWholeCharacters(t *testing.T) {
	const (
		home, left, end = "\x01", "\x1b[D", "\x05"
		del, ctrlD      = "\x1b[3~", "\x04"
		ctrlW, ctrlU    = "\x17", "\x15"
		ctrlK, ctrlY    = "\x0b", "\x19"
		altD, bs        = "\x1bd", "\x7f"
		zwj, flag       = "👩\u200d💻", "🇫🇷"
	)
	for _, c := range []struct {
		name, keys, want string
	}{
		{"Delete", "a" + zwj + "b" + left + left + del + end + ctrlY + "|", "ab" + zwj + "|"},
		{"Ctrl-D", "a" + flag + "b" + left + left + ctrlD + end + ctrlY + "|", "ab" + flag + "|"},
		{"Alt-D", "x " + zwj + "b" + home + altD + end + ctrlY + "|", zwj + "bx |"},
		{"Alt-D", "x " + zwj + "b" + home + altD + altD + ctrlY + "|", zwj + "b|"},
		{"Ctrl-W", "ab cd" + left + left + left + ctrlW + end + ctrlY + "|", " cdab|"},
		{"Ctrl-W", "ab cd" + ctrlW + home + ctrlY + "|", "cd|ab "},
		{"Ctrl-U", "ab " + zwj + "c" + left + ctrlU + end + ctrlY + "|", "cab " + zwj + "|"},
		{"Ctrl-K", "ab " + zwj + "c" + left + left + ctrlK + home + ctrlY + "|", zwj + "c|ab "},
		{"twice", "a" + zwj + left + del + ctrlY + ctrlY + "|", "a" + zwj + zwj + "|"},
		{"after Backspace", "ab" + left + del + zwj + bs + ctrlY + "|", "ab|"},
		{"after a cut of nothing", "ab" + left + del + end + ctrlK + ctrlY + "|", "ab|"},
		{"nothing cut", "ab" + ctrlY + "|", "ab|"},
	} {
		f := newFakeTerm(t, EditorOptions{})
		ch := f.read()
		f.typeKeys(t, c.keys+"\r")
		if r := wait(t, ch); r.err != nil || r.text != c.want {
			t.Errorf("%s in %q: got %q, %v; want %q", c.name, c.keys, r.text, r.err, c.want)
		}
	}
}
