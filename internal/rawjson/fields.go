package rawjson

import "bytes"

// Fields reads the members of an object in place, with the types
// encoding/json would insist on: a member that has neither its type nor
// null makes the object unreadable, as decoding it into a struct fails.
// Member names match exactly, else without regard to case. The zero
// value is ready; use one Fields per object read.
type Fields struct{ bad bool }

// Str returns the string v ("" for null).
func (f *Fields) Str(v []byte) string {
	if IsNull(v) {
		return ""
	}
	s, ok := String(v)
	if !ok {
		f.bad = true
	}
	return s
}

// OptStr returns the raw string v, nil for null.
func (f *Fields) OptStr(v []byte) []byte {
	if IsNull(v) {
		return nil
	}
	if !IsString(v) {
		f.bad = true
		return nil
	}
	return v
}

// Bool returns the boolean v (false for null).
func (f *Fields) Bool(v []byte) bool {
	switch string(v) {
	case "true":
		return true
	case "false", "null":
		return false
	}
	f.bad = true
	return false
}

// Array returns the elements of the array v (nil for null).
func (f *Fields) Array(v []byte) [][]byte {
	var out [][]byte
	if IsNull(v) {
		return nil
	}
	if !Elements(v, func(e []byte) bool {
		out = append(out, e)
		return true
	}) {
		f.bad = true
	}
	return out
}

// Object calls set for each member of raw (which must be valid JSON)
// whose name is one of names; it reports false when raw is neither an
// object nor null, or a member read so far had the wrong type.
func (f *Fields) Object(raw []byte, names []string, set func(name string, v []byte)) bool {
	raw = bytes.TrimSpace(raw)
	if IsNull(raw) {
		return true
	}
	if !Members(raw, func(name, v []byte) bool {
		if n := MatchName(name, names...); n != "" {
			set(n, v)
		}
		return true
	}) {
		return false
	}
	return !f.bad
}

// StringBytes returns the decoded JSON string q: its own bytes (a slice
// of q) when it has no escapes, else a decoded copy.
func StringBytes(q []byte) []byte {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	b, _ := AppendString(nil, q)
	return b
}
