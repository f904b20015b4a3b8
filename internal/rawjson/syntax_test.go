package rawjson

import "testing"

// A text that is not JSON is said where it breaks: line, column, and the
// line up to that character, so a person can find it in a long argument.
func TestFindSyntaxProblem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1,}`, `invalid character '}' looking for beginning of object key string, at line 1, column 8: {"a":1,}`},
		{`{"a": tru}`, `invalid character '}' in literal true (expecting 'e'), at line 1, column 10: {"a": tru}`},
		{"{\"a\":\n1,\n\"b\": [1,2", `it ends before its JSON does, at line 3, column 9: "b": [1,2`},
		{"{\"a\":1}\n  \n", ""},
		{`{'a':1}`, `invalid character '\'' looking for beginning of object key string, at line 1, column 2: {'`},
		{`{"a":1} {"b":2}`, `invalid character '{' after top-level value, at line 1, column 9: {"a":1} {`},
		{`{"é":"ü",` + "\n" + `"long":"` + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + `" x}`,
			`invalid character 'x' after object key:value pair, at line 2, column 61: …xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" x`},
		{`{"a":"x\u00"}`, `invalid character '"' in \u hexadecimal character escape, at line 1, column 12: {"a":"x\u00"`},
		{``, `it is empty`},
		{" \n ", `it is empty`},
	} {
		p := FindSyntaxProblem([]byte(tc.in))
		got := ""
		if p != nil {
			got = p.String()
		}
		if got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
