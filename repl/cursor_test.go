package repl

import (
	"bytes"
	"strings"
	"testing"
)

// drawn writes what readline writes for a line and returns what reached
// the terminal.
func drawn(t *testing.T, c *cursorWriter, writes ...string) string {
	t.Helper()
	var out bytes.Buffer
	c.w = &out
	for _, w := range writes {
		if n, err := c.Write([]byte(w)); err != nil || n != len(w) {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	return out.String()
}

func TestCursorWriter(t *testing.T) {
	width := func() int { return 10 }
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{{
		name:   "ASCII: the backspaces stay",
		writes: []string{"> abcd\b\b"},
		want:   "> abcd\r\x1b[4C",
	}, {
		name:   "wide characters: a backspace backs over two columns",
		writes: []string{"> 日本語\b\b"},
		want:   "> 日本語\r\x1b[4C",
	}, {
		name:   "the cursor on the wrapped row",
		writes: []string{"> abcdefg日本\b"},
		want:   "> abcdefg日本\r\x1b[2C",
	}, {
		// 日 does not fit in the last column: it begins the next row.
		name:   "back over a row readline did not see",
		writes: []string{"> abcdefg日本\b\b\x1b[A\r\x1b[10C"},
		want:   "> abcdefg日本\r",
	}, {
		name:   "up to the first row",
		writes: []string{"> abcdefg日本\b\b\b"},
		want:   "> abcdefg日本\x1b[1A\r\x1b[8C",
	}, {
		name:   "a line that fills its row: the cursor goes to the next",
		writes: []string{"> 日本語🙂"},
		want:   "> 日本語🙂 \b",
	}, {
		name:   "readline's own end-of-row space",
		writes: []string{"> abcdefgh \b"},
		want:   "> abcdefgh \r",
	}, {
		name:   "the erase goes up the rows the cursor is below",
		writes: []string{"> 🙂🙂🙂🙂🙂🙂", "\x1b[J\x1b[2K\r"},
		want:   "> 🙂🙂🙂🙂🙂🙂\x1b[J\x1b[2K\r\x1b[A\x1b[2K\r",
	}, {
		name:   "an erase after other output is readline's",
		writes: []string{"> 🙂🙂🙂🙂🙂🙂", "\x1b[J\x1b[2K\r", "\x1b[J\x1b[2K\r\x1b[A\x1b[2K\r"},
		want:   "> 🙂🙂🙂🙂🙂🙂\x1b[J\x1b[2K\r\x1b[A\x1b[2K\r\x1b[J\x1b[2K\r\x1b[A\x1b[2K\r",
	}, {
		name:   "output that is not the line goes through",
		writes: []string{"news\b\b\n", "\b\b\b", "\x1b[J"},
		want:   "news\b\b\n\b\b\b\x1b[J",
	}, {
		// Below a line of two rows, readline guessed one.
		name:   "a search's prompt below the line, the cursor back on its character",
		writes: []string{"> ab🙂🙂🙂🙂\b\b\b\b\b", "\n\x1b[Jbck-i-search: b\x1b[4m \x1b[0m\r\x1b[1A\x1b[3C"},
		want:   "> ab🙂🙂🙂🙂\x1b[1A\r\x1b[3C" + "\n\n\x1b[Jbck-i-search: b\x1b[4m \x1b[0m\x1b[2A\r\x1b[3C",
	}, {
		name:   "a list of completions below the line",
		writes: []string{"> 日本語 ", "\n\x1b[Jab  cd  \n", "ef  \x1b[2A\r\x1b[6C"},
		want:   "> 日本語 " + "\n\x1b[Jab  cd  \n" + "ef  \x1b[2A\r\x1b[9C",
	}, {
		name:   "colour codes take no room",
		writes: []string{"\x1b[1m> \x1b[0m日本\b"},
		want:   "\x1b[1m> \x1b[0m日本\r\x1b[4C",
	}, {
		// A keycap is a digit, U+FE0F and U+20E3, drawn in two columns.
		name:   "a keycap: two columns",
		writes: []string{"> 1\ufe0f\u20e3x\b"},
		want:   "> 1\ufe0f\u20e3x\r\x1b[4C",
	}, {
		name:   "an emoji of a joiner: two columns",
		writes: []string{"> 👩\u200d💻x\b"},
		want:   "> 👩\u200d💻x\r\x1b[4C",
	}, {
		// readline's cursor moves a rune at a time: inside an emoji
		// it is drawn on the emoji.
		name:   "a backspace into an emoji: the cursor on it",
		writes: []string{"> 👩\u200d💻x\b\b"},
		want:   "> 👩\u200d💻x\r\x1b[2C",
	}, {
		name:   "an emoji of a joiner that does not fit goes whole to the next row",
		writes: []string{"> abcdefg👩\u200d💻\b"},
		want:   "> abcdefg👩\u200d💻\r",
	}, {
		name:   "a line that fills its row with a keycap",
		writes: []string{"> abcdef#\ufe0f\u20e3"},
		want:   "> abcdef#\ufe0f\u20e3 \b",
	}, {
		name:   "more backspaces than characters: as it was",
		writes: []string{"> a\b\b\b\b"},
		want:   "> a\b\b\b\b",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			prompt := "> "
			if strings.HasPrefix(tc.writes[0], "\x1b[1m") {
				prompt = "\x1b[1m> \x1b[0m"
			}
			c := &cursorWriter{width: width, prompt: prompt}
			if got := drawn(t, c, tc.writes...); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// FuzzCursorWriter: whatever readline writes, the writer does not panic,
// says it wrote all of it, and passes through what does not begin with
// the prompt as it is.
func FuzzCursorWriter(f *testing.F) {
	f.Add([]byte("> 日本\b\x1b[A\r\x1b[10C\b"), 10)
	f.Add([]byte("\x1b[J\x1b[2K\r\x1b[A\x1b[2K\r"), 3)
	f.Add([]byte("> \x1b["), 1)
	f.Fuzz(func(t *testing.T, p []byte, width int) {
		var out bytes.Buffer
		c := &cursorWriter{w: &out, width: func() int { return width % 300 }, prompt: "> "}
		if n, err := c.Write(p); err != nil || n != len(p) {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if !bytes.HasPrefix(p, []byte("> ")) && !bytes.HasPrefix(p, eraseBelow) && !bytes.Equal(out.Bytes(), p) {
			t.Fatalf("%q became %q", p, out.Bytes())
		}
	})
}
