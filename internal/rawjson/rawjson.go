// Package rawjson reads JSON in place: the members of an object and the
// elements of an array come as slices of the input, and strings are
// decoded piece by piece, so that a large message is looked at without
// being copied. encoding/json copies every json.RawMessage it fills and
// every string it decodes; for a frame of 100 MiB those copies are what
// made reading it cost many times its size.
//
// The input must be valid JSON (callers check with json.Valid or an
// equivalent scan): on anything else these functions stop early rather
// than panic, but what they report is then unspecified.
//
// It also says why encoding/json could not decode a value, in JSON's
// terms rather than Go's (DecodeProblem, MistypedOf), for the messages of
// inspector (a server's results) and record (a trace's lines) alike.
package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after i that is
// not JSON white space (len(data) when there is none).
func SkipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// SkipString returns the index just after the string starting at i
// (len(data) when it is not closed). It
// finds the next quote and looks for an escape before it, each with
// bytes.IndexByte: bytes.IndexAny of the two goes a byte at a time, and
// was a seventh of listing 10,000 tools (issue 13). A quote found stays
// the candidate until an escape is skipped past it, so each byte is
// looked at about twice, however many escapes a string has.
func SkipString(data []byte, i int) int {
	q := -1 // the next quote at or after i
	for i++; i < len(data); {
		if q < i {
			k := bytes.IndexByte(data[i:], '"')
			if k < 0 {
				return len(data)
			}
			q = i + k
		}
		b := bytes.IndexByte(data[i:q], '\\')
		if b < 0 {
			return q + 1
		}
		i += b + 2
	}
	return len(data)
}

// SkipValue returns the index just after the value starting at i, which
// must be valid JSON: like the other scanners here it checks nothing, so
// that a frame already known to be valid is not parsed twice.
func SkipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return SkipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = SkipString(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(data)
	}
	for i < len(data) && !isSpace(data[i]) && data[i] != ',' && data[i] != '}' && data[i] != ']' {
		i++
	}
	return i
}

// Trim returns data without the white space around it.
func Trim(data []byte) []byte { return bytes.TrimSpace(data) }

// Members calls fn with the name (quoted, as written) and the value of
// each member of the object data, in order, until fn returns false. It
// reports whether data is an object.
func Members(data []byte, fn func(name, value []byte) bool) bool {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = SkipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		ks := i
		i = SkipString(data, i)
		name := data[ks:i]
		i = SkipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return true
		}
		i = SkipSpace(data, i+1)
		end := SkipValue(data, i)
		if !fn(name, data[i:end]) {
			return true
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			break
		}
		i = SkipSpace(data, i+1)
	}
	return true
}

// Elements calls fn with each element of the array data, in order, until
// fn returns false. It reports whether data is an array.
func Elements(data []byte, fn func(value []byte) bool) bool {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = SkipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end := SkipValue(data, i)
		if !fn(data[i:end]) {
			return true
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			break
		}
		i = SkipSpace(data, i+1)
	}
	return true
}

// Member returns the value of the first member of the object data whose
// name is name exactly, or nil.
func Member(data []byte, name string) []byte {
	var out []byte
	Members(data, func(n, v []byte) bool {
		if NameIs(n, name) {
			out = v
			return false
		}
		return true
	})
	return out
}

// NameIs reports whether the quoted member name q decodes to name.
func NameIs(q []byte, name string) bool {
	if len(q) == len(name)+2 && string(q[1:len(q)-1]) == name {
		return true
	}
	if bytes.IndexByte(q, '\\') < 0 {
		return false
	}
	s, ok := AppendString(nil, q)
	return ok && string(s) == name
}

// Name decodes a quoted member name.
func Name(q []byte) string {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	s, _ := AppendString(nil, q)
	return string(s)
}

// MatchName returns which of names the quoted member name q stands for,
// as encoding/json matches struct fields: exactly, else without regard to
// case; "" for none.
func MatchName(q []byte, names ...string) string {
	for _, n := range names {
		if NameIs(q, n) {
			return n
		}
	}
	name := Name(q)
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return n
		}
	}
	return ""
}

// IsString reports whether the value v is a string.
func IsString(v []byte) bool { return len(v) > 0 && v[0] == '"' }

// IsNull reports whether the value v is null.
func IsNull(v []byte) bool { return string(v) == "null" }

// AppendString appends the value of the JSON string q (with its quotes)
// to dst, decoded as encoding/json decodes it: escapes resolved, invalid
// UTF-8 and unpaired surrogates replaced by U+FFFD. ok is false when q is
// not a well-formed string.
func AppendString(dst, q []byte) (out []byte, ok bool) {
	ok = DecodeString(q, func(piece []byte) bool {
		dst = append(dst, piece...)
		return true
	})
	return dst, ok
}

// String is AppendString into a new string.
func String(q []byte) (string, bool) {
	if len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' && plainString(q[1:len(q)-1]) {
		return string(q[1 : len(q)-1]), true
	}
	b, ok := AppendString(nil, q)
	return string(b), ok
}

// plainString reports whether s needs no decoding: no escape, quote,
// control character or invalid UTF-8.
func plainString(s []byte) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '\\' || c == '"' || c < ' ' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		i += size
	}
	return true
}

// DecodeString decodes the JSON string q (with its quotes) like
// AppendString, handing the result to fn in pieces, each ending at a
// character boundary, until fn returns false. Pieces are slices of q or
// of a small buffer reused for the next piece: fn must not keep them. It
// reports whether q is a well-formed string (false too when fn stopped).
func DecodeString(q []byte, fn func(piece []byte) bool) bool {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return false
	}
	s := q[1 : len(q)-1]
	var buf [64]byte
	for r := 0; r < len(s); {
		// A run of bytes that stand for themselves goes out as it is.
		start := r
		for r < len(s) {
			c := s[r]
			if c == '\\' || c == '"' || c < ' ' {
				break
			}
			if c < utf8.RuneSelf {
				r++
				continue
			}
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				break
			}
			r += size
		}
		if r > start && !fn(s[start:r]) {
			return false
		}
		if r >= len(s) {
			break
		}
		w := 0
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				buf[0] = s[r]
				w = 1
				r++
			case 'b':
				buf[0], w = '\b', 1
				r++
			case 'f':
				buf[0], w = '\f', 1
				r++
			case 'n':
				buf[0], w = '\n', 1
				r++
			case 'r':
				buf[0], w = '\r', 1
				r++
			case 't':
				buf[0], w = '\t', 1
				r++
			case 'u':
				rr := getu4(s[r-1:])
				if rr < 0 {
					return false
				}
				r += 5
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != utf8.RuneError {
						r += 6
						w = utf8.EncodeRune(buf[:], dec)
						break
					}
					rr = utf8.RuneError
				}
				w = utf8.EncodeRune(buf[:], rr)
			default:
				return false
			}
		case c == '"', c < ' ':
			return false
		default:
			// Invalid UTF-8: one byte becomes U+FFFD.
			w = utf8.EncodeRune(buf[:], utf8.RuneError)
			r++
		}
		if !fn(buf[:w]) {
			return false
		}
	}
	return true
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// StringPrefix returns the start of the JSON string q, decoded: at most
// max bytes, cut at a character boundary, and whether the string is
// longer. It decodes no more of q than it returns.
func StringPrefix(q []byte, max int) (prefix string, more bool) {
	var b []byte
	DecodeString(q, func(piece []byte) bool {
		room := max - len(b)
		if len(piece) <= room {
			b = append(b, piece...)
			return true
		}
		cut := room
		for cut > 0 && !utf8.RuneStart(piece[cut]) {
			cut--
		}
		b = append(b, piece[:cut]...)
		more = true
		return false
	})
	return string(b), more
}

// AppendMember returns a copy of the object data with the member name:
// value (value is JSON) added at its end, the rest as it was written.
// data that is not an object, or already has a member of that name, is
// returned as it is.
func AppendMember(data []byte, name string, value []byte) []byte {
	t := Trim(data)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' || Member(t, name) != nil {
		return data
	}
	q, err := json.Marshal(name)
	if err != nil {
		return data
	}
	body := Trim(t[1 : len(t)-1])
	out := make([]byte, 0, len(t)+len(q)+len(value)+3)
	out = append(out, t[:len(t)-1]...)
	out = bytes.TrimRight(out, " \t\r\n")
	if len(body) > 0 {
		out = append(out, ',')
	}
	out = append(out, q...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}')
}
