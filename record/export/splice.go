package export

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Frames can be large (a tool result of 50 MiB), and a trace read a
// session at a time holds them already: an export must not copy them into
// strings of its own, nor hold the JSON of a value that holds them. So a
// frame's bytes go into an export's JSON as a text, which the document's
// encoding writes as a placeholder, and the splicer writes the text's
// bytes, escaped, where the placeholder is, straight to the output.

// text is a JSON string of an export written from bytes it refers to
// (parts, one after the other; a part base64-encoded when it is to be
// written so) rather than held as a Go string.
type text struct {
	parts []textPart
	mark  string // the placeholder the encoding writes
}

type textPart struct {
	b []byte
	// b64 writes b base64-encoded; sse as the data lines of an SSE event
	// ("data: " and a newline around each of its lines).
	b64, sse bool
}

// MarshalJSON writes the text's placeholder, for the splicer to replace.
func (t *text) MarshalJSON() ([]byte, error) { return json.Marshal(t.mark) }

// len is the length of the text in bytes (base64 parts encoded).
func (t *text) len() int {
	if t == nil {
		return 0
	}
	n := 0
	for _, p := range t.parts {
		switch {
		case p.b64:
			n += base64.StdEncoding.EncodedLen(len(p.b))
		case p.sse:
			n += len(p.b) + (bytes.Count(p.b, []byte("\n"))+1)*len("data: \n")
		default:
			n += len(p.b)
		}
	}
	return n
}

// String returns the text as a Go string (for what must look into it).
func (t *text) String() string {
	if t == nil {
		return ""
	}
	var b bytes.Buffer
	for _, p := range t.parts {
		switch {
		case p.b64:
			b.WriteString(base64.StdEncoding.EncodeToString(p.b))
		case p.sse:
			for line := range bytes.SplitSeq(p.b, []byte("\n")) {
				b.WriteString("data: ")
				b.Write(line)
				b.WriteString("\n")
			}
		default:
			b.Write(p.b)
		}
	}
	return b.String()
}

// splicer makes the texts of an export and writes documents holding them.
type splicer struct {
	// prefix begins every placeholder: a NUL and a random nonce, which
	// no string of a trace holds by chance.
	prefix string
	texts  []*text
	// html escapes <, > and & in strings (and U+2028, U+2029, always), as
	// json.Marshal does; without, they are written as they are, as a
	// json.Encoder with SetEscapeHTML(false) writes them.
	html bool
}

func newSplicer(html bool) *splicer {
	var nonce [8]byte
	rand.Read(nonce[:])
	return &splicer{prefix: "\x00mcpx-" + hex.EncodeToString(nonce[:]) + ":", html: html}
}

// child returns a splicer of its own texts that writes them as sp does:
// the texts of an entry held while others are written and let go of.
func (sp *splicer) child() *splicer {
	return &splicer{prefix: sp.prefix, html: sp.html}
}

// text returns a text of the bytes b, which it refers to (not copied).
func (sp *splicer) text(b []byte) *text {
	return sp.textOf(textPart{b: b})
}

// base64 returns a text of b base64-encoded.
func (sp *splicer) base64(b []byte) *text {
	return sp.textOf(textPart{b: b, b64: true})
}

func (sp *splicer) textOf(parts ...textPart) *text {
	t := &text{parts: parts, mark: sp.prefix + strconv.Itoa(len(sp.texts))}
	sp.texts = append(sp.texts, t)
	return t
}

// reset forgets the texts made so far (once the documents holding them
// have been written), so that their bytes can be let go of.
func (sp *splicer) reset() {
	clear(sp.texts)
	sp.texts = sp.texts[:0]
}

// write writes doc, JSON holding the placeholders of texts, to w with
// each placeholder (a JSON string) replaced by its text.
func (sp *splicer) write(w *bufio.Writer, doc []byte) error {
	quoted := []byte(`"\u0000` + sp.prefix[1:])
	for {
		i := bytes.Index(doc, quoted)
		if i < 0 {
			_, err := w.Write(doc)
			return err
		}
		rest := doc[i+len(quoted):]
		end := bytes.IndexByte(rest, '"')
		n, err := strconv.Atoi(string(rest[:max(end, 0)]))
		if end < 0 || err != nil || n < 0 || n >= len(sp.texts) || sp.texts[n] == nil {
			// Not a placeholder after all: written as it is.
			if _, err := w.Write(doc[:i+len(quoted)]); err != nil {
				return err
			}
			doc = rest
			continue
		}
		if _, err := w.Write(doc[:i]); err != nil {
			return err
		}
		if err := sp.writeString(w, sp.texts[n]); err != nil {
			return err
		}
		doc = rest[end+1:]
	}
}

// writeString writes t as a JSON string, escaped exactly as encoding/json
// escapes a Go string of its bytes.
func (sp *splicer) writeString(w *bufio.Writer, t *text) error {
	w.WriteByte('"')
	for _, p := range t.parts {
		switch {
		case p.b64:
			// Base64 needs no escaping.
			enc := base64.NewEncoder(base64.StdEncoding, w)
			enc.Write(p.b)
			enc.Close()
		case p.sse:
			// The data of an SSE event: a data line for each of its
			// lines ("data: " needs no escaping; a newline is \n).
			for line := range bytes.SplitSeq(p.b, []byte("\n")) {
				w.WriteString("data: ")
				sp.escape(w, line)
				w.WriteString(`\n`)
			}
		default:
			sp.escape(w, p.b)
		}
	}
	return w.WriteByte('"')
}

const hexDigits = "0123456789abcdef"

// escape writes b escaped as the inside of a JSON string, as encoding/json
// escapes a string (its appendString; TestSplicerEscapesAsEncodingJSON
// compares them): ", \ and the control characters escaped (\b, \f, \n, \r,
// \t, or \u00XX), <, > and & as \u003c, \u003e and \u0026 when sp.html is
// set, each byte of an invalid UTF-8 sequence as \ufffd, and U+2028 and
// U+2029 as \u2028 and \u2029.
func (sp *splicer) escape(w *bufio.Writer, b []byte) {
	start := 0
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!sp.html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			w.Write(b[start:i])
			switch c {
			case '\\', '"':
				w.WriteByte('\\')
				w.WriteByte(c)
			case '\b':
				w.WriteString(`\b`)
			case '\f':
				w.WriteString(`\f`)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				w.WriteString(`\u00`)
				w.WriteByte(hexDigits[c>>4])
				w.WriteByte(hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			w.Write(b[start:i])
			w.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			w.Write(b[start:i])
			w.WriteString(`\u202`)
			w.WriteByte(hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	w.Write(b[start:])
}

// encode writes v as JSON to w (indented with prefix and indent when
// indent is not empty), its texts spliced in.
func (sp *splicer) encode(w *bufio.Writer, v any, prefix, indent string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if indent != "" {
		enc.SetIndent(prefix, indent)
	}
	enc.SetEscapeHTML(sp.html)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return sp.write(w, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
