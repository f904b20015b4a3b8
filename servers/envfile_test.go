package servers

import (
	"maps"
	"sort"
	"strings"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{name: "empty", in: "", want: map[string]string{}},
		{name: "plain", in: "A=1\nB = two words \n\n# comment\n  # indented comment\nC=", want: map[string]string{"A": "1", "B": "two words", "C": ""}},
		{name: "export and CRLF", in: "\uFEFFexport A=1\r\nexport  B=2\r\n", want: map[string]string{"A": "1", "B": "2"}},
		{name: "inline comments", in: "A=1 # one\nB=a#b\nC=x\t# tab", want: map[string]string{"A": "1", "B": "a#b", "C": "x"}},
		{name: "double quotes", in: `A="a\nb\t\"c\" \\ \x"` + "\nB=\"# not a comment\" # comment", want: map[string]string{"A": "a\nb\t\"c\" \\ \\x", "B": "# not a comment"}},
		{name: "single quotes", in: `A='raw \n $HOME'`, want: map[string]string{"A": `raw \n $HOME`}},
		{name: "multi-line", in: "A=\"line 1\nline 2\"\nB='x\ny'\nC=3", want: map[string]string{"A": "line 1\nline 2", "B": "x\ny", "C": "3"}},
		{name: "equals in value", in: "URL=postgres://u:p@h/db?sslmode=require", want: map[string]string{"URL": "postgres://u:p@h/db?sslmode=require"}},
		{name: "later wins", in: "A=1\nA=2", want: map[string]string{"A": "2"}},
		{name: "no equals", in: "A=1\nJUSTAWORD\n", err: "line 2: expected NAME=VALUE"},
		{name: "empty name", in: "=x", err: "line 1"},
		{name: "export of a comment", in: "A=1\nexport #B=2", err: `line 2: "#B" is not a variable name`},
		{name: "unterminated", in: "A=1\nB=\"open\nC=2\n", err: "line 2: the quote \" is not closed"},
		{name: "junk after quote", in: "A=\"x\" y", err: "line 1: unexpected \"y\""},
		{name: "line numbers after a multi-line value", in: "A=\"1\n2\n3\"\nB", err: "line 4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEnvFile([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			diff(t, tt.want, got)
		})
	}
}

// writeEnvFile writes vars in the double-quoted form ParseEnvFile reads.
func writeEnvFile(vars map[string]string) string {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written back\n")
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	for _, k := range keys {
		b.WriteString(k + `="` + r.Replace(vars[k]) + "\"\n")
	}
	return b.String()
}

// ParseEnvFile never panics, and what it reads, written back quoted,
// reads the same.
func FuzzParseEnvFile(f *testing.F) {
	for _, s := range []string{
		"A=1\nB=2", "export A='x'", `A="a\nb"`, "A=\"1\n2\"", "# c\n\nA=1 # c", "A=", "=", "A", "\"A\"=1", "A='", `A="\`, "A=\"x\"y",
		"\uFEFFA=1", "A=1\r\n", "export =1", "A=\"\\\n\"",
		"export #0=", // found by fuzzing: read as a variable "#0", which no file can set
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		vars, err := ParseEnvFile([]byte(in))
		if err != nil {
			return
		}
		again, err := ParseEnvFile([]byte(writeEnvFile(vars)))
		if err != nil {
			t.Fatalf("%q read as %q, written back as %q: %v", in, vars, writeEnvFile(vars), err)
		}
		if !maps.Equal(vars, again) {
			t.Fatalf("%q read as %q, written back and read as %q", in, vars, again)
		}
	})
}
