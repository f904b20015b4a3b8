package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// The splicer writes a text as encoding/json writes a Go string of its
// bytes, with and without HTML escaping: control characters, quotes,
// invalid UTF-8 (also cut where a chunk of another writer would end),
// U+2028 and U+2029, markup.
func TestSplicerEscapesAsEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", "\"\\/\b\f\n\r\t\x00\x01\x1f\x7f", "<script>&amp;</script>", "\u2028\u2029é€😀",
		"\xff\xfe", "a\xe2\x82", "\xe2\x82\xac\xe2\x82", "\x82\x83", "\xf0\x9f\x98", "\xed\xa0\x80", "x\xc3"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("a\"\\<>&\n\x00\x7f\xc3\xa9\xe2\x80\xa8\xa9\xf0\x9f\x98\x80\xff")
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	for _, html := range []bool{false, true} {
		sp := newSplicer(html)
		for _, in := range inputs {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			enc.Encode(in)
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			sp.writeString(w, sp.text([]byte(in)))
			w.Flush()
			if got.String() != strings.TrimSuffix(want.String(), "\n") {
				t.Errorf("html %v, %q: wrote %s, encoding/json %s", html, in, got.String(), want.String())
			}
		}
	}
}

// Placeholders in a document are replaced by their texts, whatever the
// document's indentation; other strings, even ones that begin like a
// placeholder, are left alone.
func TestSplicerSplices(t *testing.T) {
	sp := newSplicer(false)
	a, b := sp.text([]byte("first \"big\" text")), sp.base64([]byte{0xff, 0, 1})
	doc := struct {
		A    *text   `json:"a"`
		List []*text `json:"list"`
		S    string  `json:"s"`
		Odd  string  `json:"odd"`
	}{A: a, List: []*text{b, a}, S: "\x00not a placeholder", Odd: sp.prefix + "99"}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := sp.encode(w, doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	var got struct {
		A    string
		List []string
		S    string
		Odd  string
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	if got.A != a.String() || len(got.List) != 2 || got.List[0] != "/wAB" || got.List[1] != a.String() || got.S != doc.S || got.Odd != doc.Odd {
		t.Errorf("got %+v from\n%s", got, out.Bytes())
	}
}
