package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
)

func TestWrapText(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"fits", "Fields: a, b", 40, "Fields: a, b"},
		{"no terminal", "Fields: a long line that would wrap", 0, "Fields: a long line that would wrap"},
		{"at words", "Fields: name *, check, firstLine", 20, "Fields: name *,\n  check, firstLine"},
		{"keeps its indent", "    one two three four", 14, "    one two\n      three\n      four"},
		{"each line", "aa bb cc\ndd ee", 5, "aa bb\n  cc\ndd ee"},
		{"a long word is cut", "x abcdefghij", 6, "x\n  abcd\n  efgh\n  ij"},
		{"a URL stays whole", "URL:  https://example.com/a/long/path", 20, "URL:\n  https://example.com/a/long/path"},
		{"wide characters", "名前 電子メール", 9, "名前\n  電子メ\n  ール"},
		{"a wide character is never split", "ab名前", 3, "ab\n 名\n 前"},
		{"colour takes no column", "\x1b[1mab\x1b[0m cd", 5, "\x1b[1mab\x1b[0m cd"},
		{"colour is never split", "\x1b[1mabcdef\x1b[0m", 4, "\x1b[1mabcd\n  ef\x1b[0m"},
		{"spaces at the end", "ab cd   ", 4, "ab\n  cd"},
		{"narrower than the indent", "       abc", 2, "       \nab\n c"},
		// A tab takes the columns to the next tab stop (every 8), as on
		// the terminal, not one.
		{"tabs", "name\tsize\tdate of it", 18, "name    size\n  date of it"},
		{"a tab that fits", "a\tb", 20, "a\tb"},
		// A command in backquotes, which a person copies, is kept on
		// one line when it fits on one of its own.
		{"a command stays whole", "mcpx: run `mcpx auth login --url https://h.example/mcp` in a terminal first", 50,
			"mcpx: run\n  `mcpx auth login --url https://h.example/mcp` in\n  a terminal first"},
		{"with what closes it", "see (run `mcpx servers -v`), then", 24, "see (run\n  `mcpx servers -v`),\n  then"},
		{"a command that fits after words", "x (`mcpx servers`) y", 19, "x (`mcpx servers`)\n  y"},
		{"a command too wide is broken at words", "run `mcpx auth login --url URL` now", 16, "run `mcpx auth\n  login --url\n  URL` now"},
		{"a lone backquote", "a ` b c d", 5, "a ` b\n  c d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WrapText(tc.in, tc.width)
			if got != tc.want {
				t.Errorf("WrapText(%q, %d) =\n%q\nwant\n%q", tc.in, tc.width, got, tc.want)
			}
			if tc.width <= 0 {
				return
			}
			for l := range strings.SplitSeq(got, "\n") {
				if w := textWidth(expandTabs(l)); w > tc.width && !strings.Contains(l, "://") && strings.TrimSpace(l) != "" {
					t.Errorf("line %q takes %d columns, more than %d", l, w, tc.width)
				}
			}
		})
	}
}

// On a terminal 40 columns wide, the form's list of fields and the
// sampling request's instructions are broken at words, never mid-word.
func TestQuestionsWrapToTheTerminal(t *testing.T) {
	const width = 40
	check := func(t *testing.T, out string, want ...string) {
		t.Helper()
		for l := range strings.SplitSeq(out, "\n") {
			if DisplayWidth(l) > width && !strings.HasPrefix(l, "[a]nswer") { // (a prompt, with the echo of its answer)
				t.Errorf("line %q is wider than %d columns", l, width)
			}
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}
	t.Run("form", func(t *testing.T) {
		p, err := inspector.ParseElicitPolicy("prompt")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		pr := NewPrompter(strings.NewReader("d\n"), &out, true)
		pr.SetWidth(func() int { return width })
		e, err := inspector.NewElicitor(context.Background(), p, NewPerson(pr, nil))
		if err != nil {
			t.Fatal(err)
		}
		(&inspector.ClientFeatures{Elicitor: e}).Capabilities()
		if _, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"Please provide inputs for the following fields:","requestedSchema":`+richSchema+`}`)); err != nil {
			t.Fatal(err)
		}
		check(t, out.String(), "Fields: Name (name) *, email *, age,\n  ratio,", "Please provide inputs for the following\n  fields:")
	})
	t.Run("sampling", func(t *testing.T) {
		p, err := inspector.ParseSamplingPolicy("prompt")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		pr := NewPrompter(strings.NewReader("\n"), &out, true)
		pr.SetWidth(func() int { return width })
		s, err := inspector.NewSampler(context.Background(), p, NewPerson(pr, nil))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
		check(t, out.String(), "Type the assistant's reply; end it with\n  an empty line. An empty reply\n  declines;")
	})
	t.Run("not a terminal", func(t *testing.T) {
		s, out := sampler(t, "prompt", "\n")
		_, _ = s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
		if !strings.Contains(out.String(), "Type the assistant's reply; end it with an empty line. An empty reply declines;") {
			t.Errorf("without a width the text must be as it is:\n%s", out)
		}
	})
}
