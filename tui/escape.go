package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Escape makes server-supplied text safe to print on a terminal: C0 and C1
// control characters and DEL are shown as visible escapes (\x1b, \u009b)
// instead of being interpreted, so a server cannot move the cursor, change
// colours or retitle the window; so are the bidirectional controls
// (isBidiControl) and the invisible characters (isInvisible), which make
// text read as other text. Newlines and tabs are kept. Invalid UTF-8
// bytes are shown as \xNN.
func Escape(s string) string {
	if isPlain(s, true) {
		return s
	}
	return escape(s, true, false)
}

// EscapeLine is Escape for single-line contexts (table cells, log lines):
// newlines and tabs are escaped too.
func EscapeLine(s string) string {
	if isPlain(s, false) {
		return s
	}
	return escape(s, false, false)
}

// EscapeName is EscapeLine for an identifier a person reads to type or
// tell apart from another — a tool's, prompt's, resource's, template's or
// argument's name, a URI: the directional marks (isDirectionMark), the
// characters that show as nothing between letters (isBlankInName) and the
// joiners (isJoiner) but inside an emoji, which EscapeLine keeps for the
// prose that needs them, are escaped too, since they take no room and
// "ec\u200eho" would read as "echo".
func EscapeName(s string) string {
	if isPlain(s, false) {
		return s
	}
	return escape(s, false, true)
}

// EscapeMessage is Escape for a message that may span lines, such as a
// server's error message: its line breaks (\n, \r\n) stay line breaks,
// every other control character is escaped, blank lines at its end are
// dropped, and each line after the first starts with indent, so that it
// reads as part of the message it continues.
func EscapeMessage(s, indent string) string {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
		if i > 0 {
			lines[i] = indent + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func isPlain(s string, keepNL bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keepNL && (c == '\n' || c == '\t') {
			continue
		}
		// Bytes >= 0x80 start multi-byte runes; escape decides rune by rune.
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// escape escapes s as Escape (keepNL), EscapeLine or EscapeName (name)
// do.
func escape(s string, keepNL, name bool) string {
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if name && isPictograph(r) {
			// An emoji is kept whole, with the joiners that join it
			// (ClusterAt), which are escaped anywhere else in a name.
			size, _ = ClusterAt(s[i:])
			b = append(b, s[i:i+size]...)
		} else {
			b = appendEscapedRune(b, r, []byte(s[i:i+size]), keepNL, name)
		}
		i += size
	}
	return string(b)
}

// appendEscapedRune appends rune r, which src encodes (one byte when it is
// invalid UTF-8), as escape shows it (in a name when name is set).
func appendEscapedRune(b []byte, r rune, src []byte, keepNL, name bool) []byte {
	const hex = "0123456789abcdef"
	switch {
	case r == utf8.RuneError && len(src) == 1:
		return append(b, '\\', 'x', hex[src[0]>>4], hex[src[0]&0xf])
	case keepNL && (r == '\n' || r == '\t'):
		return append(b, byte(r))
	case r == '\n':
		return append(b, `\n`...)
	case r == '\t':
		return append(b, `\t`...)
	case r == '\r':
		return append(b, `\r`...)
	case r < 0x20 || r == 0x7f:
		return append(b, '\\', 'x', hex[r>>4], hex[r&0xf])
	case r >= 0x80 && r <= 0x9f, isBidiControl(r), isInvisible(r), name && isNameOnly(r):
		if r > 0xffff {
			return append(b, '\\', 'U', '0', '0', '0', hex[r>>16&0xf], hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		}
		return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	return append(b, src...)
}

// Disguises reports the printable characters Escape shows as escapes
// because they make text read as other text: the bidirectional controls
// (isBidiControl) and the invisible characters (isInvisible).
func Disguises(r rune) bool { return isBidiControl(r) || isInvisible(r) }

// DisguisesName is Disguises for a name (see EscapeName): the directional
// marks (isDirectionMark) and the characters that show as nothing in a
// name (isBlankInName) too, and the joiners (isJoiner), which EscapeName
// keeps only inside an emoji. What cannot be escaped (a completion
// readline inserts as it is, see repl.UnsafeForTerminal) is left out when
// it holds one of these outside an emoji (NameDisguised).
func DisguisesName(r rune) bool { return Disguises(r) || isNameOnly(r) }

// NameDisguised reports whether EscapeName would escape something of s
// (a control character, invalid UTF-8, or a character of DisguisesName
// outside the emoji that need it): whether s, printed as it is, could
// drive the terminal or read as another name.
func NameDisguised(s string) bool { return !isPlain(s, false) && EscapeName(s) != s }

// isNameOnly reports what is escaped in a name but not in text: the
// directional marks (isDirectionMark), the characters that show as
// nothing in a name though text has uses for them (isBlankInName), and
// the joiners (isJoiner) but inside an emoji.
func isNameOnly(r rune) bool { return isDirectionMark(r) || isBlankInName(r) || isJoiner(r) }

// isJoiner reports the zero-width joiner and non-joiner (U+200D, U+200C).
// In text they are kept: emoji and scripts need them (👩‍💻 is 👩 ZWJ 💻;
// Persian and the Indic scripts join or part letters with them). In a name
// they show as nothing between two letters, so that "ec\u200dho" reads as
// "echo", another tool; only a joiner that joins two pictographs into one
// emoji (ClusterAt) is kept there, and the non-joiner is escaped always —
// a name's letters that look alike with and without one cannot be told
// apart (escaping one costs a name in Persian its look, not its reading).
func isJoiner(r rune) bool { return r == 0x200c || r == 0x200d }

// isBlankInName reports characters a terminal draws as nothing, or as a
// blank no wider than none, between two letters of a name, so that
// "ec\u00adho" reads as "echo": the soft hyphen (a hyphenation hint in
// text), the combining grapheme joiner, the Hangul fillers, the variation
// selectors but the emoji one (U+FE0F, which makes ❤ ❤️) and the tag
// characters. (The joiners are isJoiner.)
func isBlankInName(r rune) bool {
	switch {
	case r == 0x00ad, r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	case r >= 0xfe00 && r <= 0xfe0e, r >= 0xe0100 && r <= 0xe01ef, r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// isBidiControl reports the Unicode bidirectional embedding, override and
// isolate controls, which can make text display in a different order than
// it is stored ("Trojan Source"); they are shown as escapes.
func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// isInvisible reports the characters that take no room and join nothing
// — the zero-width space, the word joiner, the zero-width no-break space
// (byte order mark), the invisible mathematical operators and the
// Mongolian vowel separator: in a name they make "ec\u200bho" read as
// "echo", another tool, so they are shown as escapes. The joiners (U+200C,
// U+200D), which emoji and scripts need to render, are kept in text (see
// isJoiner).
func isInvisible(r rune) bool {
	return r == 0x200b || (r >= 0x2060 && r <= 0x2064) || r == 0xfeff || r == 0x180e
}

// isDirectionMark reports the implicit directional marks: the
// left-to-right and right-to-left marks and the Arabic letter mark
// (U+200E, U+200F, U+061C). Like the invisible characters (isInvisible)
// they take no room, so that in a name "ec\u200eho" reads as "echo",
// another tool; unlike them they belong in Arabic and Hebrew text, where
// they set the direction of the characters around them, so they are
// escaped in names only (EscapeName), not in descriptions and messages.
func isDirectionMark(r rune) bool { return r == 0x200e || r == 0x200f || r == 0x061c }

// EscapeJSON escapes the characters JSON allows raw inside strings that a
// terminal must not get raw (escapedInJSON), as \u escapes, so JSON text
// printed for a person (pretty-printed results, the --json error line) is
// terminal-safe and still the same JSON. (C0 controls cannot appear raw in
// valid JSON.) A byte that is not UTF-8 becomes U+FFFD, as a JSON decoder
// reads it: left raw, a byte such as 0x9b is CSI to a terminal that takes
// 8-bit controls.
func EscapeJSON(s string) string {
	needs := false
	for _, r := range s {
		// RuneError: an invalid byte (or U+FFFD itself, rewritten as is).
		if escapedInJSON(r) || r == utf8.RuneError {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if escapedInJSON(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// escapedInJSON reports the runes EscapeJSON escapes: DEL, the C1
// controls (U+0080–U+009F, CSI among them), the bidirectional controls
// (isBidiControl) and the invisible characters (isInvisible), as Escape
// escapes them in text.
func escapedInJSON(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidiControl(r) || isInvisible(r)
}

// JSONLine returns the JSON raw on one line, as JSON Lines output needs
// it (watch --json): compacted and otherwise the server's bytes ("<" stays
// "<", numbers keep their digits), with what a terminal must not get raw
// escaped as EscapeJSON escapes it, so the line is still the same JSON.
func JSONLine(raw json.RawMessage) string {
	return EscapeJSON(string(rawjson.AppendCompactPrefix(nil, raw, len(raw), false)))
}
