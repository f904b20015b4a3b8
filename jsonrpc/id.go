package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// ID is a JSON-RPC request id as it was written: a string, a number, or
// (in a message that departs from JSON-RPC 2.0 or answers an unreadable
// request) null or anything else. The zero ID is the absent id of a
// notification.
//
// A number and a string are different ids, as JSON-RPC 2.0 says: the id
// 7 is not the id "7". Key gives each id the one canonical form that maps
// and comparisons use. Some peers echo an id back with the other JSON
// type; LooseKey is the explicit, separate comparison that tolerates
// that, for code that decides to (see its doc).
type ID struct {
	raw string // the id's JSON text, white space trimmed; "" when absent
}

// Int returns the number id n.
func Int(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// String returns the string id s.
func String(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// RawID returns the id written as raw (any JSON value; its surrounding
// white space does not count). Empty raw is the absent id.
func RawID(raw []byte) ID { return ID{raw: string(rawjson.Trim(raw))} }

// IsZero reports whether the id is absent (a notification's).
func (id ID) IsZero() bool { return id.raw == "" }

// IsNull reports whether the id is JSON null: the id of an error answering
// a request whose id could not be read (JSON-RPC 2.0, section 5).
func (id ID) IsNull() bool { return id.raw == "null" }

// IsString reports whether the id is a JSON string.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// Valid reports whether the id is one a request may carry in MCP: a
// string or an integer (spec: basic, "Requests"; JSON-RPC allows
// fractions, which MCP's schema does not).
func (id ID) Valid() bool {
	if id.raw == "" {
		return false
	}
	switch id.raw[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseInt(id.raw, 10, 64)
		return err == nil
	}
	return false
}

// Int returns the id's value when it is an integer number.
func (id ID) Int() (int64, bool) {
	if id.IsString() {
		return 0, false
	}
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// IntegerValue returns the integer id that a number id written with a
// fraction or an exponent equals (3.0, 3e0, 0.3e1 are 3), and false for
// any other id, or one whose value is not an integer within int64.
// JSON-RPC 2.0 says an id number SHOULD NOT have a fraction, and MCP's
// ids are strings or integers; but a peer whose JSON library writes every
// number as a float echoes 3 back as 3.0, and parsers that read numbers
// as numbers (JavaScript's, Python's) take it for 3. Key keeps the text,
// so IntegerValue is the explicit, separate comparison for the code that
// decides to tolerate it (the connection engine, which says so).
func (id ID) IntegerValue() (ID, bool) {
	raw := id.raw
	if len(raw) == 0 || len(raw) > maxExcerpt || raw[0] == '"' {
		return ID{}, false
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	digitsOf := func(s string) (string, string) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[:i], s[i:]
	}
	intPart, rest := digitsOf(raw)
	if intPart == "" {
		return ID{}, false
	}
	var frac string
	if strings.HasPrefix(rest, ".") {
		if frac, rest = digitsOf(rest[1:]); frac == "" {
			return ID{}, false
		}
	}
	exp := 0
	marked := false
	if len(rest) > 0 && (rest[0] == 'e' || rest[0] == 'E') {
		marked = true
		rest = rest[1:]
		expNeg := strings.HasPrefix(rest, "-")
		rest = strings.TrimLeft(rest, "+-")
		var e string
		if e, rest = digitsOf(rest); e == "" || len(e) > 3 {
			return ID{}, false
		}
		exp, _ = strconv.Atoi(e)
		if expNeg {
			exp = -exp
		}
	}
	if rest != "" || (frac == "" && !marked) {
		return ID{}, false // not a number, or an integer already
	}
	// The value is digits with its point after point digits.
	digits := intPart + frac
	point := len(intPart) + exp
	if point < 0 {
		point = 0
	}
	if point < len(digits) {
		if strings.Trim(digits[point:], "0") != "" {
			return ID{}, false
		}
		digits = digits[:point]
	} else {
		digits += strings.Repeat("0", point-len(digits))
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 19 {
		return ID{}, false
	}
	if digits == "" {
		digits = "0"
	} else if neg {
		digits = "-" + digits
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return ID{}, false
	}
	return Int(n), true
}

// Raw returns the id as written (nil when absent).
func (id ID) Raw() json.RawMessage {
	if id.raw == "" {
		return nil
	}
	return json.RawMessage(id.raw)
}

// String returns the id as written, for messages ("" when absent).
func (id ID) String() string { return id.raw }

// Excerpt returns the id as written, cut short for a line of text: a
// peer's id may be anything (an object, a string of a megabyte), and a
// warning that quotes it stays one line.
func (id ID) Excerpt() string {
	if len(id.raw) <= maxExcerpt {
		return id.raw
	}
	return rawjson.Excerpt([]byte(id.raw), maxExcerpt)
}

// maxExcerpt is the longest id Excerpt returns whole, in bytes.
const maxExcerpt = 64

// Key is the id's canonical form: equal for equal ids ("ab" and "a\u0062"
// are one id), different for a number and a string ("n:7", "s:7"), ""
// for the absent id. Numbers keep their text (1 and 1.0 differ).
func (id ID) Key() string {
	switch {
	case id.raw == "":
		return ""
	case id.IsString():
		if s, ok := rawjson.String([]byte(id.raw)); ok {
			return "s:" + s
		}
	}
	return "n:" + id.raw
}

// LooseKey is the id's form when the JSON type does not count: a string's
// contents or a number's text, so that 7 and "7" have the same LooseKey.
// JSON-RPC keeps them apart, and so does Key; LooseKey exists for the
// places that deliberately tolerate peers that retype ids: the transport
// following which requests a stream still owes answers to, and the
// connection engine recognising (and reporting) an answer whose id
// changed type.
func (id ID) LooseKey() string {
	if id.IsString() {
		if s, ok := rawjson.String([]byte(id.raw)); ok {
			return s
		}
	}
	return id.raw
}

// MarshalJSON encodes the id as written; the absent id as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON keeps the id as written.
func (id *ID) UnmarshalJSON(b []byte) error {
	if !json.Valid(b) {
		return errors.New("jsonrpc: an id is not JSON: " + string(b))
	}
	*id = RawID(b)
	return nil
}
