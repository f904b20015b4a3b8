package tui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDisplayWidth measures and cuts arbitrary text (emoji sequences,
// joiners, selectors, flags, invalid UTF-8) by characters (ClusterAt):
// each is at least one rune and at most two columns, the text's width is
// theirs summed, and a cut to w columns falls between two of them, takes
// at most w columns, and leaves out only what would not fit.
func FuzzDisplayWidth(f *testing.F) {
	for _, s := range []string{
		"echo", "名前", "e\u0301", "👩\u200d💻", "👩\u200d👩\u200d👧\u200d👦", "👩\u200d❤\ufe0f\u200d👨",
		"👍🏽", "🇫🇷🇩🇪🇮", "❤\ufe0f", "a\u200d\u200db", "👩\u200d", "\u200d👩", "\xff\u200d\xfe", "🏽🏽", "#\ufe0f\u20e3",
		"1\ufe0f\u20e3x", "a1\ufe0f", "9\ufe0f\u20e3\u200d👩", "名\u200d前", "👩🏽\u200d💻",
	} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, w int) {
		w %= 40
		sum := 0
		for i := 0; i < len(s); {
			size, cw := ClusterAt(s[i:])
			if size <= 0 || i+size > len(s) || cw < 0 || cw > 2 {
				t.Fatalf("ClusterAt(%q) = %d bytes, %d columns", s[i:], size, cw)
			}
			if i+size < len(s) && !utf8.RuneStart(s[i+size]) && utf8.ValidString(s) {
				t.Fatalf("ClusterAt(%q) = %d bytes: inside a rune", s[i:], size)
			}
			sum += cw
			i += size
		}
		if got := DisplayWidth(s); got != sum {
			t.Fatalf("DisplayWidth(%q) = %d, its characters take %d", s, got, sum)
		}
		if !strings.Contains(s, "\x1b") && textWidth(s) != sum {
			t.Fatalf("textWidth(%q) = %d, DisplayWidth %d", s, textWidth(s), sum)
		}
		p := prefixWidth(s, w)
		if !strings.HasPrefix(s, p) || w >= 0 && DisplayWidth(p) > w {
			t.Fatalf("prefixWidth(%q, %d) = %q (%d columns)", s, w, p, DisplayWidth(p))
		}
		rest := s[len(p):]
		if DisplayWidth(p)+DisplayWidth(rest) != sum {
			t.Fatalf("prefixWidth(%q, %d) = %q cuts a character", s, w, p)
		}
		if rest != "" {
			if _, cw := ClusterAt(rest); DisplayWidth(p)+cw <= w {
				t.Fatalf("prefixWidth(%q, %d) = %q leaves out %q, which fits", s, w, p, rest)
			}
		}
		if !strings.Contains(s, "\x1b") && prefixText(s, w) != p {
			t.Fatalf("prefixText(%q, %d) = %q, prefixWidth %q", s, w, prefixText(s, w), p)
		}
	})
}
