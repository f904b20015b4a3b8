package rawjson

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// Strings decode exactly as encoding/json decodes them, including what it
// repairs (invalid UTF-8, unpaired surrogates).
func TestDecodeStringMatchesEncodingJSON(t *testing.T) {
	quoted := []string{`""`, `"plain"`, `"\"\\\/\b\f\n\r\t"`, `"\u0041\u00e9\u4e2d"`, `"\ud83d\ude00"`,
		`"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\ud83d\u0041"`, "\"caf\xc3\xa9\"", "\"bad\xff\xfe\"", "\"trunc\xe2\x82\"",
		`"\u2028 <&>"`, "\"\x7f\u0085\""}
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "é", "😀", `\n`, `\"`, `\\`, `\u0000`, `\ud800`, `\udfff`, `\ud800\udc00`, "\xff", "\xc3", " ", `\/`}
	for range 5000 {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.Intn(20) {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		b.WriteByte('"')
		quoted = append(quoted, b.String())
	}
	for _, q := range quoted {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		got, ok := AppendString(nil, []byte(q))
		if !ok || string(got) != want {
			t.Fatalf("AppendString(%q) = %q, %v; want %q", q, got, ok, want)
		}
		if s, ok := String([]byte(q)); !ok || s != want {
			t.Fatalf("String(%q) = %q, %v; want %q", q, s, ok, want)
		}
		// Every piece ends at a character boundary.
		DecodeString([]byte(q), func(p []byte) bool {
			if !utf8.Valid(p) {
				t.Fatalf("%q: piece %q is not whole characters", q, p)
			}
			return true
		})
		for _, n := range []int{0, 1, 3, 5} {
			prefix, more := StringPrefix([]byte(q), n)
			cut := want
			if len(cut) > n {
				cut = cut[:n]
				for len(cut) > 0 && !utf8.RuneStart(want[len(cut)]) {
					cut = cut[:len(cut)-1]
				}
			}
			if prefix != cut || more != (len(want) > n) {
				t.Fatalf("StringPrefix(%q, %d) = %q, %v; want %q", q, n, prefix, more, cut)
			}
		}
	}
	for _, bad := range []string{``, `"`, `x`, `"\x"`, `"\u12"`, "\"\x01\""} {
		if _, ok := AppendString(nil, []byte(bad)); ok {
			t.Errorf("AppendString(%q) accepted it", bad)
		}
	}
}

func TestMembersAndElements(t *testing.T) {
	doc := []byte(` { "a" : [1, {"x":"}]"}, "s\"q"] , "b\u0031":{}, "c":null } `)
	var names, values []string
	if !Members(doc, func(n, v []byte) bool {
		names = append(names, Name(n))
		values = append(values, string(v))
		return true
	}) {
		t.Fatal("not an object")
	}
	if strings.Join(names, "|") != "a|b1|c" || strings.Join(values, "|") != `[1, {"x":"}]"}, "s\"q"]|{}|null` {
		t.Fatalf("members %q = %q", names, values)
	}
	var elems []string
	Elements([]byte(values[0]), func(v []byte) bool {
		elems = append(elems, string(v))
		return true
	})
	if strings.Join(elems, "|") != `1|{"x":"}]"}|"s\"q"` {
		t.Fatalf("elements = %q", elems)
	}
	if Members([]byte(`[1]`), func(_, _ []byte) bool { return true }) || Elements([]byte(`{}`), func([]byte) bool { return true }) {
		t.Error("wrong kind accepted")
	}
	if v := Member(doc, "b1"); string(v) != "{}" {
		t.Errorf("Member(b1) = %q", v)
	}
	if !NameIs([]byte(`"b\u0031"`), "b1") || NameIs([]byte(`"B1"`), "b1") {
		t.Error("NameIs")
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{`{ "a" : [1, 2] }`, 100, `{"a":[1,2]}`},
		{`{"a":"b c"}`, 6, `{"a":"…`},
		{`{"a":"é"}`, 7, `{"a":"…`},
		{`not json at all`, 8, `not json…`},
		{"caf\xc3\xa9 au lait", 4, `caf…`},
		{`"short"`, 10, `"short"`},
	}
	for _, tt := range tests {
		if got := Excerpt([]byte(tt.in), tt.max); got != tt.want {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	if got := string(AppendCompactPrefix(nil, []byte(`{"h":"<&>"}`), 100, true)); got != `{"h":"\u003c\u0026\u003e"}` {
		t.Errorf("AppendCompactPrefix with html = %s", got)
	}
}

func TestAppendMember(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1,"x":[1]}`},
		{` { "a" : 1 } `, `{ "a" : 1,"x":[1]}`},
		{`{}`, `{"x":[1]}`},
		{`{ }`, `{"x":[1]}`},
		{`{"x":2}`, `{"x":2}`},
		{`[1]`, `[1]`},
	} {
		if got := string(AppendMember([]byte(tt.in), "x", []byte(`[1]`))); got != tt.want {
			t.Errorf("AppendMember(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
