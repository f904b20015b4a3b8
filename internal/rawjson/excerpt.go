package rawjson

import (
	"encoding/json"
	"unicode/utf8"
)

// Excerpt shortens raw JSON for a message: compacted (when it is valid
// JSON) and cut at max bytes, at a character boundary, with "…". Only the
// part shown is compacted, so a large value costs nothing more.
func Excerpt(raw []byte, max int) string {
	if !json.Valid(raw) {
		return Shorten(string(raw[:min(len(raw), max+utf8.UTFMax)]), max)
	}
	return Shorten(string(AppendCompactPrefix(nil, raw, max, false)), max)
}

// AppendCompactPrefix appends valid JSON raw to dst without insignificant white
// space, as json.Compact does (and, with html, escaping <, >, & and
// U+2028, U+2029 in strings, as json.Marshal does), stopping once more
// than max bytes were appended.
func AppendCompactPrefix(dst, raw []byte, max int, html bool) []byte {
	start := len(dst)
	inString, escaped := false, false
	for i := 0; i < len(raw) && len(dst)-start <= max; i++ {
		c := raw[i]
		switch {
		case !inString:
			if isSpace(c) {
				continue
			}
			inString = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case html && (c == '<' || c == '>' || c == '&'):
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			continue
		case html && c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			dst = append(dst, `\u202`...)
			dst = append(dst, "0123456789abcdef"[raw[i+2]&0xf])
			i += 2
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// Shorten cuts a long text for display, at a character boundary.
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}
