package transport

import (
	"bytes"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// memberScanner reads a message fed to it in pieces, in order, and keeps
// of it what says which request it answers or is: its top-level "id" and
// "method" values (when short) and whether a "result" or "error" member
// appeared, wherever they are in the message. It is how a message over
// the maximum message size, read past and never held, still fails the
// request it answers: encoders do not all put the id first (the
// TypeScript SDK writes a response as {"result":…,"jsonrpc":"2.0","id":…}
// and a request with its "id" after its "params"), and such a response
// used to leave its request waiting for its timeout.
//
// It holds a few hundred bytes whatever it is fed, and skips the inside
// of strings and of nested values with bytes.IndexAny. What is not a JSON
// object stops the scan where it stops being one; a member counts only
// once its value ended.
type memberScanner struct {
	state uint8
	depth int  // nesting inside the current member's value
	inStr bool // inside a string of the current member's value
	esc   bool // after a backslash in a string (a name or a value)
	// name is the current member's name, quoted as sent, up to
	// maxScanName bytes (nameLong past that: no name the scanner wants).
	name     []byte
	nameLong bool
	// keep: the current member's value is kept in val (an "id" or a
	// "method"), valLong once it is longer than maxScanValue.
	keep    bool
	isID    bool
	val     []byte
	valLong bool

	id       []byte // the last "id" that was a string or a number, as sent
	method   string // the last "method" that was a string
	response bool   // a "result" or "error" member was seen
	batch    bool   // the message is a JSON array
}

// Where in the message the scanner is.
const (
	scanStart      = iota // before the object
	scanKey               // before a member's name
	scanName              // in a member's name
	scanColon             // after a member's name
	scanValueStart        // after the colon
	scanValue             // in a member's value
	scanAfter             // after a member's value
	scanDone              // after the object, or where the input stopped being one
)

const (
	// maxScanName holds "method" however its letters are escaped
	// (\u006d is six bytes).
	maxScanName = 64
	// maxScanValue is longer than any id mcpx sends and any method name
	// MCP has: a longer value is not one the scanner needs.
	maxScanValue = 256
)

// write feeds the scanner the message's next bytes.
func (s *memberScanner) write(b []byte) {
	for i := 0; i < len(b) && s.state != scanDone; {
		c := b[i]
		switch s.state {
		case scanStart:
			switch {
			case isJSONSpace(c):
				i++
			case c == '{':
				s.state = scanKey
				i++
			case c == '[':
				s.batch = true
				s.state = scanDone
			default:
				s.state = scanDone
			}
		case scanKey:
			switch {
			case isJSONSpace(c):
				i++
			case c == '"':
				s.name, s.nameLong, s.esc = append(s.name[:0], c), false, false
				s.state = scanName
				i++
			default: // the object's end, or not an object
				s.state = scanDone
			}
		case scanName:
			if len(s.name) < maxScanName {
				s.name = append(s.name, c)
			} else {
				s.nameLong = true
			}
			i++
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.state = scanColon
			}
		case scanColon:
			switch {
			case isJSONSpace(c):
				i++
			case c == ':':
				s.state = scanValueStart
				i++
			default:
				s.state = scanDone
			}
		case scanValueStart:
			if isJSONSpace(c) {
				i++
				continue
			}
			if c == ',' || c == '}' || c == ']' || c == ':' {
				s.state = scanDone
				continue
			}
			s.beginValue()
			s.keepByte(c)
			i++
			switch c {
			case '"':
				s.inStr = true
			case '{', '[':
				s.depth = 1
			}
			s.state = scanValue
		case scanValue:
			i = s.value(b, i)
		case scanAfter:
			switch {
			case isJSONSpace(c):
				i++
			case c == ',':
				s.state = scanKey
				i++
			default: // the object's end, or not an object
				s.state = scanDone
			}
		}
	}
}

// beginValue starts the value of the member just named.
func (s *memberScanner) beginValue() {
	name := s.name
	if s.nameLong {
		name = nil
	}
	s.isID = rawjson.NameIs(name, "id")
	s.keep = s.isID || rawjson.NameIs(name, "method")
	if rawjson.NameIs(name, "result") || rawjson.NameIs(name, "error") {
		s.response = true
	}
	s.val, s.valLong = s.val[:0], false
	s.depth, s.inStr, s.esc = 0, false, false
}

// value reads b from i inside a member's value and returns where it
// stopped: at the value's end, or at the end of b.
func (s *memberScanner) value(b []byte, i int) int {
	for i < len(b) {
		switch {
		case s.inStr:
			if s.esc {
				s.esc = false
				s.keepByte(b[i])
				i++
				continue
			}
			if i = s.skipTo(b, i, "\"\\"); i < 0 {
				return len(b)
			}
			c := b[i]
			s.keepByte(c)
			i++
			switch c {
			case '\\':
				s.esc = true
			case '"':
				s.inStr = false
				if s.depth == 0 {
					s.endValue()
					return i
				}
			}
		case s.depth > 0:
			if i = s.skipTo(b, i, "\"{}[]"); i < 0 {
				return len(b)
			}
			c := b[i]
			s.keepByte(c)
			i++
			switch c {
			case '"':
				s.inStr = true
			case '{', '[':
				s.depth++
			case '}', ']':
				s.depth--
				if s.depth == 0 {
					s.endValue()
					return i
				}
			}
		default: // a number or a literal: it ends where something else begins
			c := b[i]
			switch {
			case isJSONSpace(c) || c == ',' || c == '}' || c == ']':
				s.endValue()
				return i
			case c == '"' || c == '{' || c == '[' || c == ':':
				s.state = scanDone
				return i
			}
			s.keepByte(c)
			i++
		}
	}
	return i
}

// skipTo returns where the next byte of set is in b from i, -1 for
// nowhere: what comes before it is skipped unread, unless the value is
// kept, whose every byte is read (i itself).
func (s *memberScanner) skipTo(b []byte, i int, set string) int {
	if s.keep {
		return i
	}
	j := bytes.IndexAny(b[i:], set)
	if j < 0 {
		return -1
	}
	return i + j
}

func (s *memberScanner) keepByte(c byte) {
	switch {
	case !s.keep:
	case len(s.val) < maxScanValue:
		s.val = append(s.val, c)
	default:
		s.valLong = true
	}
}

// endValue ends the current member's value.
func (s *memberScanner) endValue() {
	s.state = scanAfter
	if !s.keep || s.valLong || len(s.val) == 0 {
		return
	}
	v := s.val
	if !s.isID {
		if m, ok := rawjson.String(v); ok {
			s.method = m
		}
		return
	}
	if rawjson.IsString(v) || v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
		s.id = append(s.id[:0], v...)
	}
}

// info is what the scanner found in what it was fed: see prefixInfo.
func (s *memberScanner) info() prefixInfo {
	info := prefixInfo{Method: s.method, Response: s.response, Batch: s.batch}
	if s.id == nil {
		return info
	}
	if info.Response && info.Method == "" {
		info.ID = jsonrpc.RawID(s.id).LooseKey()
	}
	if !info.Response && info.Method != "" {
		if rid := jsonrpc.RawID(s.id); rid.Valid() {
			info.RequestID = rid
		}
	}
	return info
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
