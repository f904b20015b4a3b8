package rawjson

import (
	"bytes"
	"testing"
)

// skipStringByteWise is skipString as it was first written: a byte at a
// time to the first quote or backslash.
func skipStringByteWise(data []byte, i int) int {
	for i++; i < len(data); {
		j := bytes.IndexAny(data[i:], `"\`)
		if j < 0 {
			return len(data)
		}
		i += j
		if data[i] == '"' {
			return i + 1
		}
		i += 2
	}
	return len(data)
}

// FuzzSkipString: skipString ends every string, valid or not, where the
// byte-wise reading ends it.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"esc\"aped" x`, `"a\\"b"`, `"\\\\\\"`, `"unterminated\`, `"\u0041\n\"\"" "next"`, `"`} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, at int) {
		if at < 0 || at >= len(data) {
			at = bytes.IndexByte(data, '"')
			if at < 0 {
				return
			}
		}
		if got, want := SkipString(data, at), skipStringByteWise(data, at); got != want {
			t.Fatalf("SkipString(%q, %d) = %d, want %d", data, at, got, want)
		}
	})
}

// A string of many escapes with its quote far away costs one pass.
func BenchmarkSkipStringEscapes(b *testing.B) {
	data := append(append([]byte{'"'}, bytes.Repeat([]byte(`\n`), 1<<20)...), '"')
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if SkipString(data, 0) != len(data) {
			b.Fatal("wrong end")
		}
	}
}
