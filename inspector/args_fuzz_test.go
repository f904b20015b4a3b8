package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzBuildArguments types an arbitrary key=value argument by an arbitrary
// property schema (and by none): it either fails with an *ArgumentError or
// returns a valid JSON object holding the key, whose value has one of the
// JSON types the schema allows (an integer written without fraction or
// exponent), a string value being exactly what was typed; without a type
// the value is the JSON typed, or else the text as a string. Without a
// schema, a key with path syntax either fails with an *ArgumentError or
// leads, written back, to the same path (see checkPath).
func FuzzBuildArguments(f *testing.F) {
	values := []string{"2", "-2.5e3", ".5", "007", "1e3", "3.0", "012", "true", "FALSE", "null", `["x", "y"]`,
		`{"k": {"v": 1}}`, "", "a=b", "NaN", "Inf", "0x1p4", "1e400", "+5", " 1", "9007199254740993", "héllo\xff"}
	for i, prop := range fuzzing.PropertySchemas() {
		f.Add("k", values[i%len(values)], []byte(prop))
	}
	f.Fuzz(func(t *testing.T, key, value string, prop []byte) {
		pair := key + "=" + value
		k, v, split := splitPair(pair)
		if !split {
			// The key's last backslash made the = plain: no pair.
			var ae *ArgumentError
			if _, _, err := BuildArguments([]string{pair}, nil, nil); !errors.As(err, &ae) {
				t.Fatalf("BuildArguments(%q) = %v, want an *ArgumentError", pair, err)
			}
			return
		}
		schema := []byte(`{"type":"object","properties":{` + string(mustJSON(k)) + `:` + string(prop) + `}}`)
		for _, s := range [][]byte{schema, nil} {
			out, _, err := BuildArguments([]string{pair}, nil, s)
			props, _ := schemaProperties(s)
			if _, named := props[k]; !named && !isPlainKey(k) {
				// Without the schema naming it, the key is a path.
				checkPath(t, pair, k, out, err)
				continue
			}
			if err != nil {
				var ae *ArgumentError
				if !errors.As(err, &ae) {
					t.Fatalf("BuildArguments(%q) failed with %T %v, want an *ArgumentError", pair, err, err)
				}
				if k != "" && s == nil {
					t.Fatalf("BuildArguments(%q) without a schema failed: %v", pair, err)
				}
				continue
			}
			obj, err := ParseObject(out)
			if err != nil || !json.Valid(out) {
				t.Fatalf("BuildArguments(%q) = %q, not a JSON object: %v", pair, out, err)
			}
			// A key that is not UTF-8 is written with U+FFFD, as JSON must.
			var wantKey string
			_ = json.Unmarshal(mustJSON(k), &wantKey)
			got := obj.Get(wantKey)
			if got == nil || len(obj.Keys()) != 1 {
				t.Fatalf("BuildArguments(%q) = %s, want one member %q", pair, out, wantKey)
			}
			var types []string
			if s != nil {
				if p, ok := schemaProperties(s); ok {
					types = typingTypes(s, p[k])
				}
			}
			checkTyped(t, pair, v, got, types)
		}
	})
}

// checkPath checks BuildArguments's answer for a key that is a path: an
// *ArgumentError exactly when parsePath refuses it, else an object in
// which the path leads to a value.
func checkPath(t *testing.T, pair, key string, out json.RawMessage, err error) {
	t.Helper()
	steps, perr := parsePath(key)
	if perr != nil || err != nil {
		var ae *ArgumentError
		if perr == nil || !errors.As(err, &ae) {
			t.Fatalf("BuildArguments(%q) = %s, %v; parsePath: %v", pair, out, err, perr)
		}
		return
	}
	if again, err := parsePath(formatPath(steps)); err != nil || !slices.Equal(again, steps) {
		t.Fatalf("path %q written back as %q reads as %v (%v), not %v", key, formatPath(steps), again, err, steps)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("BuildArguments(%q) = %q: %v", pair, out, err)
	}
	for _, s := range steps {
		switch c := v.(type) {
		case map[string]any:
			if s.isElem {
				t.Fatalf("BuildArguments(%q) = %s: an object where %v wants an array", pair, out, s)
			}
			// A name that is not UTF-8 is written with U+FFFD, as JSON must.
			var name string
			_ = json.Unmarshal(mustJSON(s.name), &name)
			v = c[name]
		case []any:
			if !s.isElem || len(c) != 1 {
				t.Fatalf("BuildArguments(%q) = %s: an array where %v wants one element", pair, out, s)
			}
			v = c[0]
		default:
			t.Fatalf("BuildArguments(%q) = %s: no container for step %v", pair, out, s)
		}
	}
}

func checkTyped(t *testing.T, pair, value string, got json.RawMessage, types []string) {
	t.Helper()
	typ := jsonType(got)
	if len(types) == 0 {
		trimmed := strings.TrimSpace(value)
		if trimmed != "" && json.Valid([]byte(value)) {
			var b bytes.Buffer
			_ = json.Compact(&b, []byte(value))
			if !bytes.Equal(got, b.Bytes()) {
				t.Fatalf("BuildArguments(%q): value %s, want the JSON typed", pair, got)
			}
		} else {
			checkString(t, pair, value, got)
		}
		return
	}
	allowed := slices.Contains(types, typ)
	if typ == "number" && slices.Contains(types, "integer") && !slices.Contains(types, "number") {
		allowed = !bytes.ContainsAny(got, ".eE")
	}
	if !allowed {
		t.Fatalf("BuildArguments(%q): value %s is a %s, the schema allows %v", pair, got, typ, types)
	}
	if typ == "string" {
		checkString(t, pair, value, got)
	}
}

func checkString(t *testing.T, pair, value string, got json.RawMessage) {
	t.Helper()
	var s string
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatalf("BuildArguments(%q): value %s is not a string", pair, got)
	}
	if utf8.ValidString(value) && s != value {
		t.Fatalf("BuildArguments(%q): string %q, want %q", pair, s, value)
	}
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
