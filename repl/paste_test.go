package repl

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// feedAll runs the terminal's bytes, read by read, through the key reader
// and returns the keys readline would read (each pasteKey written as
// «piece») — what the editor puts in the line.
func feedAll(reads ...string) string {
	k := newKeyReader(strings.NewReader(""), false)
	for _, r := range reads {
		k.feed([]byte(r), false)
	}
	var out strings.Builder
	for _, r := range string(k.buf) {
		if r == pasteKey {
			out.WriteString("«" + string(k.takePiece()) + "»")
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

func TestKeyReaderHandsTextOverInPieces(t *testing.T) {
	long := strings.Repeat("x", pieceMin)
	for _, tc := range []struct {
		name  string
		reads []string
		want  string
	}{
		{"keys typed go as they are", []string{"a", "é", "tools list"}, "aétools list"},
		{"a run of text is one piece", []string{"tools call echo message=hi"}, "«tools call echo message=hi»"},
		{"keys between runs stay keys", []string{long + "\t" + long + "\x7f" + long + "\r"}, "«" + long + "»\t«" + long + "»\x7f«" + long + "»\r"},
		{"escape sequences go whole, not as text", []string{long + "\x1b[1;5C" + long + "\x1bbx\x1bOPy"}, "«" + long + "»\x1b[1;5C«" + long + "»\x1bbx\x1bOPy"},
		{"a sequence split over reads", []string{"\x1b[1", ";5C"}, "\x1b[1;5C"},
		{"a character split over reads", []string{long + "\xc3", "\xa9" + long}, "«" + long + "»«é" + long + "»"},
		{"one piece a read, unmarked", []string{long, long}, "«" + long + "»«" + long + "»"},
		{"a bracketed paste is one piece, whatever the reads", []string{"\x1b[200~ab", "cd", "ef\x1b[201~"}, "«abcdef»"},
		{"a Tab in a paste is text", []string{"\x1b[200~{\t\"a\": 1}\x1b[201~\t"}, "«{\t\"a\": 1}»\t"},
		{"a line break in a paste is Enter", []string{"\x1b[200~ping\rtools list\n\x1b[201~"}, "«ping»\r«tools list»\n"},
		{"the paste key itself is never a key", []string{"\uFFFC", "a\uFFFCb"}, "«\uFFFC»«a\uFFFCb»"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := feedAll(tc.reads...); got != tc.want {
				t.Errorf("keys %q, want %q", got, tc.want)
			}
		})
	}
}

// What is held back is not lost at the end of the input.
func TestKeyReaderEndWhileHolding(t *testing.T) {
	k := newKeyReader(strings.NewReader("\x1b[200~tools list"), false)
	b, err := io.ReadAll(k)
	if err != nil || string(b) != string(utf8.AppendRune(nil, pasteKey)) || string(k.takePiece()) != "tools list" {
		t.Fatalf("read %q, %v", b, err)
	}
}

// A long line pasted is drawn a few times, not once per character: the
// editor took time (and drew bytes) in the square of the line's length
// (a JSON value of 10 KB for --args took seconds; 200 KB, half an hour).
// BenchmarkEditorPaste measures the time.
func TestEditorPasteDrawsTheLineOnce(t *testing.T) {
	for _, bracketed := range []bool{false, true} {
		f := newFakeTerm(t, EditorOptions{})
		line := `tools call echo --args '{"message":"` + strings.Repeat("x", 3000) + `"}'`
		keys := line
		if bracketed {
			keys = string(pasteStart) + line + string(pasteEnd)
		}
		ch := f.read()
		f.typeKeys(t, keys+"\r")
		if r := wait(t, ch); r.err != nil || r.text != line {
			t.Fatalf("bracketed=%v: read %d bytes, %v; want the %d pasted", bracketed, len(r.text), r.err, len(line))
		}
		if n := len(f.screen.String()); n > 10*len(line) {
			t.Errorf("bracketed=%v: pasting %d bytes drew %d", bracketed, len(line), n)
		}
	}
}

// Text goes in where the cursor is, and a paste ends a search or a
// completion as a typed key would not: the text goes into the line.
func TestEditorPasteAtTheCursor(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return fakeSource{} }}
	f := newFakeTerm(t, EditorOptions{Complete: c})
	ch := f.read()
	f.typeKeys(t, "tools call echo message=")
	f.typeKeys(t, "\x1b[D\x1b[D")
	f.typeKeys(t, "\x1b[200~\"hi\tthere\"\x1b[201~")
	f.typeKeys(t, "\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools call echo messag\"hi\tthere\"e=" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}
	f.ed.AddHistory("tools list")

	// Completion candidates shown, then a paste.
	ch = f.read()
	f.typeKeys(t, "tools call \t\t")
	f.typeKeys(t, "\x1b[200~echo\x1b[201~\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools call echo" {
		t.Fatalf("after completion: got %q, %v", r.text, r.err)
	}

	// During a search (Ctrl-R) a short paste is what is searched for; a
	// long one ends the search, with the line found, and goes into it
	// where the search left the cursor (at the match).
	ch = f.read()
	f.typeKeys(t, "\x12\x1b[200~list\x1b[201~\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools list" {
		t.Fatalf("searched for a paste: got %q, %v", r.text, r.err)
	}
	f.ed.AddHistory("tools list")
	long := " " + strings.Repeat("y", searchPieceMax)
	ch = f.read()
	f.typeKeys(t, "\x12li\x1b[200~"+long+"\x1b[201~\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools "+long+"list" {
		t.Fatalf("pasted during a search: got %q, %v", r.text, r.err)
	}
}

// While a question is asked, Esc then Enter (in one read or two, Esc
// pressed once or more) is the dismissKey and Enter; at the prompt it
// stays what it was, and an Alt key stays one.
func TestKeyReaderEscEnterDismisses(t *testing.T) {
	asking := true
	feed := func(reads ...string) string {
		k := newKeyReader(strings.NewReader(""), false)
		k.dismissible = func() bool { return asking }
		for _, r := range reads {
			k.feed([]byte(r), false)
		}
		return string(k.buf)
	}
	dismiss := string(dismissKey) + "\r"
	for _, tc := range []struct {
		reads []string
		want  string
	}{
		{[]string{"ab\x1b\r"}, "ab" + dismiss},
		{[]string{"\x1b", "\r"}, dismiss},
		{[]string{"\x1b\x1b\n"}, dismiss},
		{[]string{"\x1bb\r"}, "\x1bb\r"},
		{[]string{"\x1b[D\r"}, "\x1b[D\r"},
	} {
		if got := feed(tc.reads...); got != tc.want {
			t.Errorf("asking, %q: %q, want %q", tc.reads, got, tc.want)
		}
	}
	asking = false
	if got := feed("\x1b\r"); got != "\x1b\r" {
		t.Errorf("at the prompt: %q", got)
	}
	// Typed or pasted, the character itself goes as text.
	asking = true
	if got := feedAll(string(dismissKey)); got != "«"+string(dismissKey)+"»" {
		t.Errorf("the character typed: %q", got)
	}
}
