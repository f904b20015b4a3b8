package tui

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Large results are printed straight from the frame they arrived in:
// JSON is laid out as it is written, and a text is decoded and escaped
// piece by piece, so printing a result never holds a second copy of it.

// streamJSONMin is the size from which JSON output is written as it is
// laid out rather than built in memory first.
const streamJSONMin = 64 << 10

// prettyWidth is the line width within which JSON output keeps an array
// on one line (tidwall/pretty's Width).
const prettyWidth = 80

// maxIndentLevels is the deepest level JSON output is indented to: an
// object or array nested deeper is written on one line, compact (the
// same JSON). Indenting costs two spaces a level on every line, so a
// result of 18 KB nested 9,000 levels deep (mcpx reads 10,000) was laid
// out in 162 MB, built in memory; capped, the output grows with the
// document, not with the square of its depth.
const maxIndentLevels = 64

// prettyWriter writes JSON laid out exactly as tidwall/pretty lays it out
// (Width 80, Indent two spaces, no prefix, keys in their order), then
// escaped as EscapeJSON escapes it, without building it in memory.
// TestPrettyWriterMatchesPretty holds it to that.
type prettyWriter struct {
	w *bufio.Writer
	// col is the position on the current line the way tidwall/pretty
	// counts it to decide whether an array fits on one line (one more
	// than the characters written after a newline it appended, as many
	// after a newline that replaced a space).
	col int
	// c1 is set when the text holds a rune EscapeJSON escapes (DEL,
	// a C1 or a bidirectional control) or an invalid byte: it then
	// rewrites the whole text rune by rune.
	c1 bool
	// prefix begins every line (tidwall/pretty's Prefix).
	prefix string
}

// writePrettyJSON writes valid JSON raw to w, pretty-printed, each line
// beginning with prefix. Objects and arrays nested deeper than
// maxIndentLevels are written compact.
func writePrettyJSON(w io.Writer, raw []byte, prefix string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	p := &prettyWriter{w: bw, c1: hasC1(raw), prefix: prefix}
	p.emitString(prefix)
	p.value(bytes.TrimSpace(raw), 0)
	p.w.WriteByte('\n')
	return bw.Flush()
}

// hasC1 reports whether b holds a rune EscapeJSON escapes (DEL, a C1
// or a bidirectional control; see escapedInJSON) or a byte that is not
// UTF-8 (which it replaces), decoding as it does.
func hasC1(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if escapedInJSON(r) || r == utf8.RuneError && size == 1 {
			return true
		}
		i += size
	}
	return false
}

// emit writes output text, counting it on the line.
func (p *prettyWriter) emit(b []byte) {
	p.col += len(b)
	if !p.c1 {
		p.w.Write(b)
		return
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case escapedInJSON(r):
			fmt.Fprintf(p.w, `\u%04x`, r)
		case r == utf8.RuneError && size == 1:
			p.w.WriteRune(r)
		default:
			p.w.Write(b[i : i+size])
		}
		i += size
	}
}

func (p *prettyWriter) emitString(s string) {
	p.col += len(s)
	p.w.WriteString(s) // structure: never escaped
}

// newline starts a line after the last thing written; replaced says
// whether tidwall/pretty replaced a space by it (which counts the column
// one lower).
func (p *prettyWriter) newline(tabs int, replaced bool) {
	p.w.WriteByte('\n')
	p.col = 1
	if replaced {
		p.col = 0
	}
	p.emitString(p.prefix)
	for range tabs {
		p.emitString("  ")
	}
}

func (p *prettyWriter) value(v []byte, tabs int) {
	if len(v) == 0 {
		return
	}
	if tabs >= maxIndentLevels && (v[0] == '{' || v[0] == '[') {
		p.emit(rawjson.AppendCompactPrefix(nil, v, len(v), false))
		return
	}
	switch v[0] {
	case '{':
		n := 0
		p.emitString("{")
		rawjson.Members(v, func(name, val []byte) bool {
			if n > 0 {
				p.emitString(",")
			}
			p.newline(tabs+1, false)
			p.emit(name)
			p.emitString(": ")
			p.value(val, tabs+1)
			n++
			return true
		})
		if n > 0 {
			p.newline(tabs, false)
		}
		p.emitString("}")
	case '[':
		if room := prettyWidth - p.col; room > 3 {
			var line []byte
			if line, ok := appendOneLine(line, v, room); ok {
				p.emit(line)
				return
			}
		}
		n := 0
		p.emitString("[")
		rawjson.Elements(v, func(e []byte) bool {
			if n > 0 {
				p.emitString(",") // and a space, which the newline replaces
			}
			p.newline(tabs+1, n > 0)
			p.value(e, tabs+1)
			n++
			return true
		})
		if n > 0 {
			p.newline(tabs, false)
		}
		p.emitString("]")
	default:
		p.emit(v)
	}
}

// appendOneLine appends the one-line form of array v ("[1, [2, 3]]") to
// b when it has no object in it and is at most room bytes long.
func appendOneLine(b []byte, v []byte, room int) ([]byte, bool) {
	if len(v) == 0 || v[0] == '{' {
		return b, false
	}
	if v[0] != '[' {
		if len(b)+len(v) > room {
			return b, false // a long string is not copied to learn that
		}
		return append(b, v...), true
	}
	ok := true
	n := 0
	b = append(b, '[')
	rawjson.Elements(v, func(e []byte) bool {
		if n > 0 {
			b = append(b, ", "...)
		}
		n++
		b, ok = appendOneLine(b, e, room)
		return ok && len(b) <= room
	})
	b = append(b, ']')
	return b, ok && len(b) <= room
}

// ---- text ----

// textWriter writes decoded, escaped text (see Escape) to a buffered
// writer, remembering the last byte written.
type textWriter struct {
	w       *bufio.Writer
	keepNL  bool
	last    byte
	scratch [16]byte
}

// write escapes b, which ends at a character boundary.
func (t *textWriter) write(b []byte) {
	if len(b) == 0 {
		return
	}
	for len(b) > 0 {
		i := 0
		for i < len(b) {
			c := b[i]
			if c < 0x20 && !(t.keepNL && (c == '\n' || c == '\t')) || c >= 0x7f {
				break
			}
			i++
		}
		if i > 0 {
			t.w.Write(b[:i])
			t.last = b[i-1]
			b = b[i:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		e := appendEscapedRune(t.scratch[:0], r, b[:size], t.keepNL, false)
		t.w.Write(e)
		t.last = e[len(e)-1]
		b = b[size:]
	}
}

// text prints a text exactly as Escape(s) followed by a newline when it
// does not end with one.
func (p *Printer) text(s string) {
	s = Escape(s)
	if !strings.HasSuffix(s, "\n") {
		// One write for the text and its line's end: a REPL script's
		// every result is one, and each write is a system call.
		s += "\n"
	}
	io.WriteString(p.w, s)
}

// rawText is text for a JSON string q, decoded and escaped as it is
// written.
func (p *Printer) rawText(q []byte) {
	if len(q) < streamJSONMin {
		s, _ := rawjson.String(q)
		p.text(s)
		return
	}
	bw := bufio.NewWriterSize(p.w, 64<<10)
	t := &textWriter{w: bw, keepNL: true}
	rawjson.DecodeString(q, func(piece []byte) bool {
		t.write(piece)
		return true
	})
	if t.last != '\n' {
		bw.WriteByte('\n')
	}
	bw.Flush()
}

// stringLen returns the length of the JSON string q once decoded, without
// decoding it when it has no escapes.
func stringLen(q []byte) int {
	if bytes.IndexByte(q, '\\') < 0 && len(q) >= 2 {
		return len(q) - 2
	}
	n := 0
	rawjson.DecodeString(q, func(piece []byte) bool {
		n += len(piece)
		return true
	})
	return n
}
