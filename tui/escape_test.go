package tui

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		escape     string // Escape
		escapeLine string // EscapeLine
	}{
		{"plain", "hello, world", "hello, world", "hello, world"},
		{"unicode kept", "héllo ✓ 日本", "héllo ✓ 日本", "héllo ✓ 日本"},
		{"ESC sequence", "a\x1b[31mred\x1b[0m", `a\x1b[31mred\x1b[0m`, `a\x1b[31mred\x1b[0m`},
		{"OSC title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"C1 CSI", "x\u009b2Jy", `x\u009b2Jy`, `x\u009b2Jy`},
		{"C1 range ends", "\u0080\u009f\u00a0", `\u0080\u009f` + "\u00a0", `\u0080\u009f` + "\u00a0"},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"NUL and BEL", "\x00\x07", `\x00\x07`, `\x00\x07`},
		{"CR", "over\rwrite", `over\rwrite`, `over\rwrite`},
		{"newline and tab", "a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"raw C1 byte is invalid UTF-8", "\x9b", `\x9b`, `\x9b`},
		{"bidi override", "a\u202eb\u2066c", `a\u202eb\u2066c`, `a\u202eb\u2066c`},
		{"invisible characters", "ec\u200bho\u2060\ufeff\u180e\u2064", `ec\u200bho\u2060\ufeff\u180e\u2064`, `ec\u200bho\u2060\ufeff\u180e\u2064`},
		{"joiners kept", "👩\u200d💻 \u200c", "👩\u200d💻 \u200c", "👩\u200d💻 \u200c"},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.escape {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.escape)
			}
			if got := EscapeLine(tt.in); got != tt.escapeLine {
				t.Errorf("EscapeLine(%q) = %q, want %q", tt.in, got, tt.escapeLine)
			}
		})
	}
}

// Whatever the input, the output has no byte a terminal interprets: no C0
// control but newline and tab (Escape) or none at all (EscapeLine), no DEL,
// no C1 control, and it is valid UTF-8.
func TestEscapeOutputIsTerminalSafe(t *testing.T) {
	var inputs []string
	for b := range 256 {
		inputs = append(inputs, "x"+string([]byte{byte(b)})+"y")
	}
	for r := rune(0x80); r <= 0x9f; r++ {
		inputs = append(inputs, string(r))
	}
	inputs = append(inputs, "\xe2\x82", "\xf0\x9f\x98", "ok\x1b[2J\u009b\r\n\t\x7f")
	check := func(name, in, out string, keepNL bool) {
		if !utf8.ValidString(out) {
			t.Errorf("%s(%q) = %q: invalid UTF-8", name, in, out)
		}
		for _, r := range out {
			if keepNL && (r == '\n' || r == '\t') {
				continue
			}
			if unicode.IsControl(r) {
				t.Errorf("%s(%q) = %q: contains control %U", name, in, out, r)
			}
		}
	}
	for _, in := range inputs {
		check("Escape", in, Escape(in), true)
		check("EscapeLine", in, EscapeLine(in), false)
	}
}

func TestEscapeJSONText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{"{\"a\":\"x\u009by\"}", `{"a":"x\u009by"}`},
		{"{\"a\":\"\x7f\"}", `{"a":"\u007f"}`},
		{`{"a":"é"}`, `{"a":"é"}`},
		// Bidirectional controls reorder what a terminal shows.
		{"{\"a\u202e\":\"b\u2066c\u2069\"}", `{"a\u202e":"b\u2066c\u2069"}`},
		// Invisible characters make a name read as another; joiners stay.
		{"{\"ec\u200bho\":\"\ufeff👩\u200d💻\"}", `{"ec\u200bho":"\ufeff👩` + "\u200d" + `💻"}`},
	}
	for _, tt := range tests {
		if got := EscapeJSON(tt.in); got != tt.want {
			t.Errorf("EscapeJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The escaped text is the same JSON.
	in := "{\"k\":\"a\u0085b\x7f\"}"
	if !jsonEqual(t, []byte(in), []byte(EscapeJSON(in))) {
		t.Errorf("escaping changed the JSON value")
	}
	if strings.ContainsRune(EscapeJSON(in), 0x85) {
		t.Errorf("C1 control left in %q", EscapeJSON(in))
	}
}

// A string that is not valid UTF-8 (JSON as a server sent it) reaches the
// terminal as valid UTF-8 through every JSON path a person reads: a raw
// byte 0x9b is CSI to a terminal that takes 8-bit controls, and Escape
// already shows such bytes as escapes. It is the same JSON to a decoder
// (which reads an invalid byte as U+FFFD).
func TestEscapeJSONInvalidUTF8(t *testing.T) {
	in := "{\"k\xff\":\"a\x9b2Jb\xc3\"}"
	for name, got := range map[string]string{
		"EscapeJSON": EscapeJSON(in),
		"JSONLine":   JSONLine([]byte(in)),
	} {
		if !utf8.ValidString(got) || strings.ContainsRune(got, 0x9b) {
			t.Errorf("%s(%q) = %q: not valid UTF-8", name, in, got)
		}
		if !jsonEqual(t, []byte(in), []byte(got)) {
			t.Errorf("%s(%q) = %q: not the same JSON", name, in, got)
		}
	}
	// Large JSON is laid out as it is written, small JSON in memory: the
	// same safety either way, and the same bytes.
	for _, doc := range []string{in, `{"pad":"` + strings.Repeat("x", streamJSONMin) + "\",\"v\":\"\x9b\"}"} {
		var out strings.Builder
		NewPrinter(&out, false).JSON([]byte(doc))
		if !utf8.ValidString(out.String()) {
			t.Errorf("Printer.JSON of %d bytes left invalid UTF-8: %q", len(doc), tail(out.String(), 40))
		}
		var streamed strings.Builder
		if err := writePrettyJSON(&streamed, []byte(doc), ""); err != nil {
			t.Fatal(err)
		}
		if want := NewPrinter(nil, false).prettyJSON([]byte(doc), ""); streamed.String() != want {
			t.Errorf("streamed layout %q differs from %q", tail(streamed.String(), 40), tail(want, 40))
		}
	}
	// A tool result's structured content, annotations and members of its
	// own, as a person sees them.
	var out strings.Builder
	NewPrinter(&out, false).ToolResult([]byte("{\"content\":[{\"type\":\"text\",\"text\":\"t\",\"annotations\":{\"x\":\"\x9b\"}}],\"structuredContent\":{\"k\":\"\x9b31m\"},\"extra\":\"\x9b\"}"))
	if !utf8.ValidString(out.String()) {
		t.Errorf("ToolResult left invalid UTF-8: %q", out.String())
	}
}

func tail(s string, n int) string { return s[max(len(s)-n, 0):] }

// The directional marks (LRM, RLM, ALM) are kept in text, where Arabic
// and Hebrew need them, and escaped in a name, where they take no room
// and "ec\u200eho" would read as "echo"; a name is escaped as a line
// otherwise.
func TestEscapeName(t *testing.T) {
	for _, tc := range []struct{ in, text, name string }{
		{"ec\u200eho", "ec\u200eho", `ec\u200eho`},
		{"\u200fecho\u061c", "\u200fecho\u061c", `\u200fecho\u061c`},
		{"مرحبا\u200f (1)", "مرحبا\u200f (1)", `مرحبا\u200f (1)`},
		{"a\nb\x1b[2J\u202e\u200bc", "a\nb\\x1b[2J\\u202e\\u200bc", `a\nb\x1b[2J\u202e\u200bc`},
		{"👩\u200d💻 echo", "👩\u200d💻 echo", "👩\u200d💻 echo"},
		{"ec\u00adho", "ec\u00adho", `ec\u00adho`},
		{"ec\u3164ho\ufe00", "ec\u3164ho\ufe00", `ec\u3164ho\ufe00`},
		{"echo\U000e0041", "echo\U000e0041", `echo\U000e0041`},
		{"❤\ufe0f", "❤\ufe0f", "❤\ufe0f"},
		// A joiner between letters joins nothing and shows as nothing;
		// one inside an emoji (ClusterAt) joins it into one picture.
		{"ec\u200dho", "ec\u200dho", `ec\u200dho`},
		{"ec\u200cho", "ec\u200cho", `ec\u200cho`},
		{"名\u200d前", "名\u200d前", `名\u200d前`},
		{"👩\u200dho", "👩\u200dho", `👩\u200dho`},
		{"ec\u200d💻", "ec\u200d💻", `ec\u200d💻`},
		{"👩\u200d", "👩\u200d", `👩\u200d`},
		{"👩\u200c💻", "👩\u200c💻", `👩\u200c💻`},
		{"dev-👩\u200d💻-👩🏽\u200d💻", "dev-👩\u200d💻-👩🏽\u200d💻", "dev-👩\u200d💻-👩🏽\u200d💻"},
		{"👩\u200d❤\ufe0f\u200d👨", "👩\u200d❤\ufe0f\u200d👨", "👩\u200d❤\ufe0f\u200d👨"},
		{"🏳\ufe0f\u200d🌈x", "🏳\ufe0f\u200d🌈x", "🏳\ufe0f\u200d🌈x"},
		{"👩\u200d\u200d💻", "👩\u200d\u200d💻", `👩\u200d\u200d💻`},
	} {
		if got := Escape(tc.in); got != tc.text {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := EscapeName(tc.in); got != tc.name {
			t.Errorf("EscapeName(%q) = %q, want %q", tc.in, got, tc.name)
		}
	}
	// EscapeName escapes what EscapeLine does, and the marks.
	for r := rune(0); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		want := EscapeLine(s) != s || r == 0x200e || r == 0x200f || r == 0x061c || r == 0x200c || r == 0x200d || isBlankInName(r)
		if got := EscapeName(s) != s; got != want || got != (unicode.IsControl(r) || DisguisesName(r)) {
			t.Errorf("U+%04X: EscapeName escapes it: %v, want %v (DisguisesName %v)", r, got, want, DisguisesName(r))
		}
	}
}

// FuzzEscapeName escapes arbitrary names: what EscapeName prints is valid
// UTF-8 with no control character, and holds a character that disguises
// a name (DisguisesName) only as a joiner inside an emoji, where it joins
// two pictographs into one picture (ClusterAt), never a letter; and
// NameDisguised says whether it escaped anything.
func FuzzEscapeName(f *testing.F) {
	for _, s := range []string{
		"echo", "ec\u200dho", "ec\u200cho", "名\u200d前", "👩\u200d💻", "👩\u200d👩\u200d👧\u200d👦", "👩\u200d❤\ufe0f\u200d👨",
		"👩🏽\u200d💻", "🏳\ufe0f\u200d🌈", "👩\u200d", "\u200d👩", "👩\u200d\u200d💻", "名🏽\u200d💻", "🇫🇷\u200d👩",
		"a\xff\u200d👩", "ec\u200eho", "1\ufe0f\u20e3\u200d👩",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := EscapeName(s)
		if NameDisguised(s) != (out != s) {
			t.Fatalf("NameDisguised(%q) = %v, EscapeName %q", s, NameDisguised(s), out)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("EscapeName(%q) = %q: invalid UTF-8", s, out)
		}
		for i := 0; i < len(out); {
			size, _ := ClusterAt(out[i:])
			c := out[i : i+size]
			for j, r := range c {
				if unicode.IsControl(r) || DisguisesName(r) && !(r == 0x200d && j > 0 && j+utf8.RuneLen(r) < len(c)) {
					t.Fatalf("EscapeName(%q) = %q: %U in %q", s, out, r, c)
				}
			}
			if strings.ContainsRune(c, 0x200d) {
				if first, _ := utf8.DecodeRuneInString(c); !isPictograph(first) {
					t.Fatalf("EscapeName(%q) = %q: a joiner in %q, which is no emoji", s, out, c)
				}
			}
			i += size
		}
	})
}
