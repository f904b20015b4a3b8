package repl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"ping", []string{"ping"}},
		{"  tools   call echo  message=hi ", []string{"tools", "call", "echo", "message=hi"}},
		{`tools call echo 'message=hello there'`, []string{"tools", "call", "echo", "message=hello there"}},
		{`tools call echo message='hello there'`, []string{"tools", "call", "echo", "message=hello there"}},
		{`tools call echo message="say \"hi\" \$HOME \\ \x"`, []string{"tools", "call", "echo", `message=say "hi" $HOME \ \x`}},
		{`a\ b c\'d`, []string{"a b", "c'd"}},
		{`'it'\''s'`, []string{"it's"}},
		{`''`, []string{""}},
		{`a''b`, []string{"ab"}},
		{"a \\\nb", []string{"a", "b"}},
		// \<newline> is removed, as a shell does: between words it adds
		// no word, so an indented or empty next line is just more blanks.
		{"tools call get-sum \\\n  a=1 \\\n  b=2", []string{"tools", "call", "get-sum", "a=1", "b=2"}},
		{"ping \\\n", []string{"ping"}},
		{"a\\\nb \\\n\tc", []string{"ab", "c"}},
		{"ping # a comment", []string{"ping"}},
		{"# only a comment", nil},
		{"a#b", []string{"a#b"}},
		{"ping\n# comment\ninfo", []string{"ping", "info"}},
		// Unquoted JSON is one word, verbatim.
		{`call tools/call {"name": "echo", "arguments": {"message": "a } b"}}`, []string{"call", "tools/call", `{"name": "echo", "arguments": {"message": "a } b"}}`}},
		{"call x {\n  \"a\": [1, 2]\n}", []string{"call", "x", "{\n  \"a\": [1, 2]\n}"}},
		{`call x [1, "]", {"k": "\"}"}]`, []string{"call", "x", `[1, "]", {"k": "\"}"}]`}},
		{`tools call x obj={"a": 1} tags=["x", "y"]`, []string{"tools", "call", "x", `obj={"a": 1}`, `tags=["x", "y"]`}},
		{`tools call x --args={"a": 1}`, []string{"tools", "call", "x", `--args={"a": 1}`}},
		// Braces elsewhere are plain characters.
		{`complete --resource test://greet/{name} name=x`, []string{"complete", "--resource", "test://greet/{name}", "name=x"}},
		{`a=b={c d`, []string{"a=b={c", "d"}},
	} {
		got, err := Split(tc.line)
		if err != nil {
			t.Errorf("Split(%q): %v", tc.line, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Split(%q) (-want +got):\n%s", tc.line, diff)
		}
	}
}

func TestSplitIncomplete(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Open
	}{
		{`echo 'abc`, OpenSingle},
		{`echo "abc`, OpenDouble},
		{`call x {"a": [1,`, OpenJSON},
		{`call x {"a": "}`, OpenJSON},
		{`echo abc\`, OpenEscape},
		{`call x {"a": 1}`, Closed},
		{`echo 'abc' `, Closed},
	} {
		sc := Scan(tc.line)
		if got := sc.Incomplete(); got != tc.want {
			t.Errorf("Scan(%q).Incomplete() = %v, want %v", tc.line, got, tc.want)
		}
		if _, err := Split(tc.line); (err != nil) != (tc.want != Closed) {
			t.Errorf("Split(%q) error = %v", tc.line, err)
		}
	}
}

func TestScanOffsets(t *testing.T) {
	sc := Scan(`tools call echo message="hel`)
	if sc.Trailing {
		t.Fatal("Trailing: the line ends inside a word")
	}
	last := sc.Last()
	if last.Value != "message=hel" || last.Open != OpenDouble || last.Start != 16 || last.ValueStart != 24 {
		t.Errorf("last token = %+v", *last)
	}
	sc = Scan("tools call ")
	if !sc.Trailing || len(sc.Tokens) != 2 {
		t.Errorf("Scan(%q) = %+v", "tools call ", sc)
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "two words", "it's", `a"b`, `back\slash`, "#hash", "{json}", "tab\there"} {
		got, err := Split(Quote(s))
		if err != nil || len(got) != 1 || got[0] != s {
			t.Errorf("Split(Quote(%q)) = %q, %v", s, got, err)
		}
	}
}

func TestEscapeFor(t *testing.T) {
	for _, tc := range []struct {
		typed, add string
		want       string
	}{
		{`message=a`, "b c", "message=ab c"},
		{`'message=a`, "b 'c'", "message=ab 'c'"},
		{`"message=a`, `b "$c"\`, `message=ab "$c"\`},
		{``, "#x {y}", "#x {y}"},
	} {
		sc := Scan(tc.typed)
		open, typed := Closed, ""
		if l := sc.Last(); l != nil {
			open, typed = l.Open, l.Value
		}
		line := tc.typed + escapeFor(tc.add, open, typed) + closer(open)
		got, err := Split(line)
		if err != nil || len(got) != 1 || got[0] != tc.want {
			t.Errorf("%q + escapeFor(%q) = %q: split %q, %v; want %q", tc.typed, tc.add, line, got, err, tc.want)
		}
	}
}
