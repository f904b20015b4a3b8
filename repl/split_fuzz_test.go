package repl

import (
	"slices"
	"strings"
	"testing"
)

// splitSeeds are REPL lines as people type them (the README's and the
// tests' examples) and unfinished ones.
var splitSeeds = []string{
	"tools call echo message=hi",
	`tools call echo 'message=hello there'`,
	`tools call echo message="say \"hi\" \$HOME \\ \x"`,
	`a\ b c\'d`, `'it'\''s'`, `''`, "a \\\nb", "ping # a comment", "ping\n# comment\ninfo",
	`call tools/call {"name": "echo", "arguments": {"message": "a } b"}}`,
	"call x {\n  \"a\": [1, 2]\n}",
	`tools call x obj={"a": 1} tags=["x", "y"]`,
	`complete --resource test://greet/{name} name=x`,
	`a=b={c d`, `tools call echo message="hel`, `'open`, `{"a": [`, `trailing\`, "",
}

// FuzzSplit checks the REPL's line splitter: tokens lie in the line in
// order and only the last can be unfinished; Split fails exactly when the
// line is unfinished; words written with Quote split back to the same
// words; and a completion appended as Complete appends it (escapeFor, then
// closer) extends the word being typed by exactly the completion.
func FuzzSplit(f *testing.F) {
	for i, s := range splitSeeds {
		f.Add(s, []string{"b c", "x'y", `"$q"\`, "#x {y}", "[draft]", "", "{\"k\": 1}", "new\nline"}[i%8])
	}
	f.Fuzz(func(t *testing.T, line, add string) {
		sc := Scan(line)
		end := 0
		for i, tok := range sc.Tokens {
			if tok.Start < end || tok.End < tok.Start || tok.End > len(line) ||
				tok.ValueStart >= 0 && (tok.ValueStart <= tok.Start || tok.ValueStart > tok.End) {
				t.Fatalf("Scan(%q): token %d %+v out of place", line, i, tok)
			}
			if tok.Open != Closed && i != len(sc.Tokens)-1 {
				t.Fatalf("Scan(%q): token %d %+v is open but not last", line, i, tok)
			}
			end = tok.End
		}
		words, err := Split(line)
		if (err != nil) != (sc.Incomplete() != Closed) {
			t.Fatalf("Split(%q) error %v, but Incomplete() = %v", line, err, sc.Incomplete())
		}
		if err == nil {
			checkQuoteRoundTrip(t, words)
		}
		checkEscapeFor(t, line, add)
	})
}

func checkQuoteRoundTrip(t *testing.T, words []string) {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = Quote(w)
	}
	line := strings.Join(quoted, " ")
	again, err := Split(line)
	if err != nil || !slices.Equal(again, words) {
		t.Fatalf("words %q quoted as %q split into %q (%v)", words, line, again, err)
	}
}

// checkEscapeFor appends add to the word being typed at the end of line
// the way Complete does, and checks the word gained exactly add.
func checkEscapeFor(t *testing.T, line string, add string) {
	t.Helper()
	before, part, ok := typing(line)
	if !ok || part.Value+add == "" {
		return // Complete offers nothing there
	}
	typed := line + escapeFor(add, part.Open, part.Value) + closer(part.Open)
	got, err := Split(typed)
	want := append(before, part.Value+add)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%q completed with %q as %q splits into %q (%v), want %q", line, add, typed, got, err, want)
	}
}

// TestCompletionFuzzFindings pins what FuzzSplit found: a completion with
// a line break lost it (a backslash before a newline continues the line),
// one starting with [ or { after key= became a verbatim JSON word, and
// one appended after a final backslash inside double quotes was escaped
// by it (nothing is offered there now, nor in a comment).
func TestCompletionFuzzFindings(t *testing.T) {
	for _, tc := range []struct{ typed, add, want string }{
		{"note=a", "\nb", "note=a\nb"},
		{"tag=", "[my draft]", "tag=[my draft]"},
		{"k", "={x", "k={x"},
		{"", "{not json", "{not json"},
	} {
		_, part, ok := typing(tc.typed)
		if !ok {
			t.Fatalf("typing(%q) offers nothing", tc.typed)
		}
		line := tc.typed + escapeFor(tc.add, part.Open, part.Value) + closer(part.Open)
		if got, err := Split(line); err != nil || len(got) != 1 || got[0] != tc.want {
			t.Errorf("%q completed with %q as %q: %q, %v; want %q", tc.typed, tc.add, line, got, err, tc.want)
		}
	}
	for _, typed := range []string{`message="C:\`, `ping # a comm`} {
		if _, _, ok := typing(typed); ok {
			t.Errorf("typing(%q) offers completion", typed)
		}
	}
}
