package repl

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readAll reads every command of script, taking buffered ones with
// Buffered when buffered is set; the last entry is the final error.
func readAll(script string, buffered bool) ([]string, int) {
	sc := NewScript(strings.NewReader(script))
	var out []string
	fromBuffer := 0
	for {
		if buffered {
			if text, ok := sc.Buffered(); ok {
				out = append(out, text)
				fromBuffer++
				continue
			}
		}
		text, err := sc.ReadCommand()
		if errors.Is(err, io.EOF) {
			return append(out, "EOF"), fromBuffer
		}
		if err != nil {
			return append(out, "error: "+err.Error()), fromBuffer
		}
		out = append(out, text)
	}
}

// TestScriptBuffered: commands taken from what was read already are the
// ones ReadCommand returns, line numbers included.
func TestScriptBuffered(t *testing.T) {
	for _, script := range []string{
		"ping\n\n# c\ncall x {\n  \"a\": 1\n}\r\ntools call echo 'message=two\nlines'\nlast",
		"a\nb\nc\n", "\ufeffa\n\ufeffb\n", "\ufeffcall x {\n1}\n", "call x {\n", "a\ncall x {\n\"b\"\n", "", "\n", "x 'open\n",
	} {
		want, _ := readAll(script, false)
		got, n := readAll(script, true)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-ReadCommand +Buffered):\n%s", script, diff)
		}
		if script == "a\nb\nc\n" && n != 2 {
			t.Errorf("%q: %d commands taken from the buffer, want 2 (after the first read)", script, n)
		}
	}
}

func FuzzScriptBuffered(f *testing.F) {
	f.Add("ping\ncall x {\n  \"a\": 1\n}\ntools call echo 'a\nb'\nlast")
	f.Fuzz(func(t *testing.T, script string) {
		want, _ := readAll(script, false)
		got, _ := readAll(script, true)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-ReadCommand +Buffered):\n%s", script, diff)
		}
	})
}
