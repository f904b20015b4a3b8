package record

import "encoding/json"

// A one-pass JSON scanner for the recorder's hot path: for every frame it
// tells whether the frame is valid JSON (exactly as encoding/json.Valid
// would; FuzzScanJSON checks the two agree), whether it is already compact
// (so the trace can hold its bytes verbatim), and where the values of
// members with sensitive names are, all without allocating. It is several
// times faster than validating and compacting with encoding/json.

// maxScanDepth matches encoding/json's nesting limit.
const maxScanDepth = 10000

type scanResult struct {
	valid   bool
	compact bool
	spans   []span // values of members for which hit returned true
}

type jsonScanner struct {
	data    []byte
	i       int
	compact bool
	depth   int
	hit     func(key []byte) bool
	inHit   int // > 0 while inside a value being collected
	spans   []span
}

// scanJSON scans data; hit (which may be nil) is asked about every member
// name (decoded when it has escapes) and selects the values to collect.
// Values inside a selected value are not asked about.
func scanJSON(data []byte, hit func(key []byte) bool) scanResult {
	s := jsonScanner{data: data, compact: true, hit: hit}
	s.ws()
	if !s.value() {
		return scanResult{}
	}
	s.ws()
	if s.i != len(data) {
		return scanResult{}
	}
	return scanResult{valid: true, compact: s.compact, spans: s.spans}
}

func (s *jsonScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.compact = false
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) value() bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

func (s *jsonScanner) lit(word string) bool {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

func (s *jsonScanner) object() bool {
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.i++ // {
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return false
		}
		ks := s.i
		escaped, ok := s.str()
		if !ok {
			return false
		}
		ke := s.i
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		collect := false
		if s.hit != nil && s.inHit == 0 {
			key := s.data[ks+1 : ke-1]
			if escaped {
				var k string
				if json.Unmarshal(s.data[ks:ke], &k) == nil {
					key = []byte(k)
				}
			}
			collect = s.hit(key)
		}
		vs := s.i
		if collect {
			s.inHit++
		}
		if !s.value() {
			return false
		}
		if collect {
			s.inHit--
			s.spans = append(s.spans, span{vs, s.i})
		}
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *jsonScanner) array() bool {
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.i++ // [
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// plain marks the bytes that stand for themselves inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str scans a string starting at s.i; escaped reports a backslash in it.
func (s *jsonScanner) str() (escaped, ok bool) {
	d := s.data
	i := s.i + 1
	for i < len(d) {
		for i < len(d) && plain[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		c := d[i]
		switch {
		case c == '"':
			s.i = i + 1
			return escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				return escaped, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					return escaped, false
				}
				i += 6
			default:
				return escaped, false
			}
		case c < 0x20:
			return escaped, false
		default:
			i++
		}
	}
	return escaped, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() bool {
	d := s.data
	i := s.i
	if d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return false
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	s.i = i
	return true
}
