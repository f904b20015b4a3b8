package tui

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
)

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestDisplayWidth(t *testing.T) {
	for s, want := range map[string]int{
		"":               0,
		"echo":           4,
		"日本語":            6,
		"e\u0301t\u00e9": 3, // a combining accent takes no column
		"ｆｕｌｌ":           8,
		`\x1b[31m`:       8, // escaped, as printed
	} {
		if got := DisplayWidth(s); got != want {
			t.Errorf("DisplayWidth(%q) = %d, want %d", s, got, want)
		}
	}
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"description", 20, "description"},
		{"description", 6, "descr…"},
		{"日本語のツール", 5, "日本…"},
		{"日本語のツール", 6, "日本…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	} {
		if got := TruncateWidth(c.s, c.w); got != c.want {
			t.Errorf("TruncateWidth(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
		if got := DisplayWidth(TruncateWidth(c.s, c.w)); got > c.w {
			t.Errorf("TruncateWidth(%q, %d) takes %d columns", c.s, c.w, got)
		}
	}
}

// sameColumn fails unless each line of out (colour removed) has the
// text of cells, in turn, starting at the same display column.
func sameColumn(t *testing.T, out string, cells ...string) {
	t.Helper()
	plain := ansi.ReplaceAllString(out, "")
	lines := strings.Split(strings.TrimRight(plain, "\n"), "\n")
	if len(lines) != len(cells) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(cells), plain)
	}
	col := -1
	for i, line := range lines {
		at := strings.Index(line, cells[i])
		if at < 0 {
			t.Fatalf("line %q has no %q", line, cells[i])
		}
		if w := DisplayWidth(line[:at]); col < 0 {
			col = w
		} else if w != col {
			t.Fatalf("columns do not align (%q at %d, not %d):\n%s", cells[i], w, col, plain)
		}
	}
}

func TestTablesAlignInColourAndWideText(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"日本語","description":"wide name","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"echo","description":"plain","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"bad","description":"invalid header","inputSchema":{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}}`),
	}
	for _, colour := range []bool{false, true} {
		var b bytes.Buffer
		NewPrinter(&b, colour).Tools(tools)
		out, _, _ := strings.Cut(b.String(), "invalid x-mcp-header: ")
		if colour && !ansi.MatchString(out) {
			t.Fatalf("no colour in %q", out)
		}
		sameColumn(t, out, "wide name", "plain", "invalid header")
	}
}

func TestToolHelpAlignsInColour(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"where"},"days":{"type":"integer"}},"required":["city"]}`)
	var b bytes.Buffer
	NewPrinter(&b, true).ToolHelp(inspector.ToolInfo{Name: "weather", InputSchema: schema})
	_, table, ok := strings.Cut(b.String(), "Arguments:")
	if !ok {
		t.Fatalf("no argument table in %q", b.String())
	}
	table, _, _ = strings.Cut(strings.TrimPrefix(ansi.ReplaceAllString(table, ""), "\n"), "\n\n")
	lines := strings.Split(table, "\n")
	if len(lines) != 3 {
		t.Fatalf("table %q", table)
	}
	at := strings.Index(lines[0], "TYPE")
	if strings.Index(lines[1], "string") != at || strings.Index(lines[2], "integer") != at {
		t.Errorf("the TYPE column does not align:\n%s", table)
	}
}

func TestTableFitsWidth(t *testing.T) {
	long := strings.Repeat("word ", 40)
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"short","description":"` + long + `","inputSchema":{"type":"object","properties":{"alpha":{"type":"string"},"beta":{"type":"number"},"gamma":{"type":"boolean"},"delta":{"type":"array"}}}}`),
		json.RawMessage(`{"name":"a-rather-long-tool-name-indeed","description":"short","inputSchema":{"type":"object"}}`),
	}
	for _, w := range []int{40, 80, 120} {
		var b bytes.Buffer
		NewPrinter(&b, true).WithWidth(w).Tools(tools)
		out := ansi.ReplaceAllString(b.String(), "")
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if DisplayWidth(line) > w {
				t.Errorf("width %d: line of %d columns: %q", w, DisplayWidth(line), line)
			}
		}
		if !strings.Contains(out, "…") {
			t.Errorf("width %d: nothing cut: %q", w, out)
		}
		if !regexp.MustCompile(`(?m)^a-rather-long-tool-name-indeed( |$)`).MatchString(out) {
			t.Errorf("width %d: the name is not whole: %q", w, out)
		}
		if w > 40 {
			sameColumn(t, b.String(), "wo", "short")
		}
	}
	// No width: whole lines.
	var b bytes.Buffer
	NewPrinter(&b, false).Tools(tools)
	if strings.Contains(b.String(), "…") || !strings.Contains(b.String(), strings.TrimSpace(long)) {
		t.Errorf("without a width the lines are cut: %q", b.String())
	}
}

// Names are identifiers: at any width they stay whole, so that two names
// that begin alike are never cut to the same prefix; the columns after
// them give way, down to nothing, and a name wider than the terminal is
// broken across lines, its continuation indented.
func TestTableKeepsNamesWhole(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"trigger-sampling-request","description":"Trigger a Request from the Server for LLM Sampling","inputSchema":{"type":"object","properties":{"prompt":{"type":"string"},"maxTokens":{"type":"number"}},"required":["prompt"]}}`),
		json.RawMessage(`{"name":"trigger-sampling-request-async","description":"Trigger an async Request from the Server for LLM Sampling","inputSchema":{"type":"object","properties":{"prompt":{"type":"string"}}}}`),
		json.RawMessage(`{"name":"echo","description":"Echoes back the input string","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`),
	}
	render := func(w int, items []json.RawMessage) []string {
		var b bytes.Buffer
		NewPrinter(&b, true).WithWidth(w).Tools(items)
		out := ansi.ReplaceAllString(b.String(), "")
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		for _, l := range lines {
			if DisplayWidth(l) > w {
				t.Errorf("width %d: line of %d columns: %q", w, DisplayWidth(l), l)
			}
		}
		return lines
	}
	for _, w := range []int{32, 40, 60, 80} {
		lines := render(w, tools)
		if len(lines) != 3 {
			t.Fatalf("width %d: %d lines, want one a tool:\n%s", w, len(lines), strings.Join(lines, "\n"))
		}
		for i, name := range []string{"trigger-sampling-request", "trigger-sampling-request-async", "echo"} {
			if got := strings.Fields(lines[i])[0]; got != name {
				t.Errorf("width %d: row %d begins %q, want the whole name %q:\n%s", w, i, got, name, strings.Join(lines, "\n"))
			}
		}
		if w >= 80 && !strings.Contains(lines[2], "message:string") {
			t.Errorf("width %d: the arguments are left out: %q", w, lines[2])
		}
	}
	// Narrower than the name: broken across lines after its separators,
	// nothing left out of it, and the row's other cells on a line of
	// their own.
	lines := render(12, tools[1:2])
	want := []string{"trigger-", "  sampling-", "  request-", "  async", "   prompt:s…"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("width 12:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// One name wider than the terminal (a server's 10,000-character one)
	// does not take the other columns' room from every row: it is
	// broken across the whole width, its row's other cells follow on a
	// line of their own, and the other rows are laid out as without it.
	huge := strings.Repeat("w", 10000)
	with := append([]json.RawMessage{json.RawMessage(`{"name":"` + huge + `","description":"the huge one","inputSchema":{"type":"object"}}`)}, tools...)
	lines = render(80, with)
	nameLines := 1 + (10000-80+77)/78
	if len(lines) < nameLines+1 || lines[0] != strings.Repeat("w", 80) || lines[1] != "  "+strings.Repeat("w", 78) {
		t.Fatalf("width 80: the huge name is not broken across the width:\n%s", strings.Join(lines, "\n"))
	}
	if got := lines[nameLines]; strings.TrimSpace(got) != "the huge one" || !strings.HasPrefix(got, " ") {
		t.Errorf("width 80: the huge name's description is not on a line of its own: %q", got)
	}
	if got, want := strings.Join(lines[nameLines+1:], "\n"), strings.Join(render(80, tools), "\n"); got != want {
		t.Errorf("width 80: the rows after the huge name are not as without it:\n%s\nwant\n%s", got, want)
	}
	// A wide character is never split, even in a column narrower than two.
	lines = render(3, []json.RawMessage{json.RawMessage(`{"name":"日本","inputSchema":{"type":"object"}}`)})
	if strings.Join(lines, "|") != "日|本" {
		t.Errorf("width 3: %q", lines)
	}
}

// An emoji a terminal draws as one picture takes the two columns it
// draws: a sequence joined by zero-width joiners, one with a skin tone,
// a flag (two regional indicators), a narrow symbol made an emoji by
// U+FE0F. Measured as the sum of their parts (8 columns for 👩‍👩‍👧‍👦),
// a table's columns after one did not line up, and a line wrapped short.
// Cutting one keeps it whole.
func TestDisplayWidthOfEmojiSequences(t *testing.T) {
	for s, want := range map[string]int{
		"👩\u200d💻":               2,
		"👩\u200d👩\u200d👧\u200d👦": 2,
		"👩\u200d❤\ufe0f\u200d👨":  2,
		"👍🏽":                     2,
		"🇫🇷":                     2,
		"🇫🇷🇩🇪":                   4,
		"❤\ufe0f":                2,
		"❤":                      1,
		"a\u200db":               2, // a joiner between letters joins nothing
		"👩\u200d":                2,
		"x👩\u200d💻y":             4,
		"\x1b[1m👩\u200d💻\x1b[0m": 2,
		// A joiner joins two pictographs (UAX #29, GB11), not two wide
		// letters: 名‍前 is drawn as the two characters it is.
		"名\u200d前":       4,
		"👩\u200d前":       4,
		"名\u200d👩":       4,
		"👩🏽\u200d💻":      2,
		"🏳\ufe0f\u200d🌈": 2,
		// A keycap: a digit, # or * made an emoji by U+FE0F and
		// enclosed by U+20E3.
		"1\ufe0f\u20e3":   2,
		"#\ufe0f\u20e3":   2,
		"*\ufe0f\u20e3x":  3,
		"a1\ufe0f\u20e3b": 4,
		"1\u20e3":         1, // not an emoji without U+FE0F
		"x\ufe0f\u20e3":   1, // x is no keycap
	} {
		got := textWidth(s)
		if !strings.Contains(s, "\x1b") && DisplayWidth(s) != got {
			t.Errorf("DisplayWidth(%q) = %d, textWidth %d", s, DisplayWidth(s), got)
		}
		if got != want {
			t.Errorf("textWidth(%q) = %d, want %d", s, got, want)
		}
	}
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"ab👩\u200d💻cd", 4, "ab👩\u200d💻"},
		{"ab👩\u200d💻cd", 3, "ab"},
		{"🇫🇷🇩🇪", 3, "🇫🇷"},
		{"❤\ufe0fx", 1, ""},
		{"a1\ufe0f\u20e3b", 2, "a"},
		{"a1\ufe0f\u20e3b", 3, "a1\ufe0f\u20e3"},
	} {
		if got := prefixWidth(c.s, c.w); got != c.want {
			t.Errorf("prefixWidth(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
		if got := prefixText(c.s, c.w); got != c.want {
			t.Errorf("prefixText(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
	if got, want := WrapText("say 👩\u200d👩\u200d👧\u200d👦 hi", 9), "say 👩\u200d👩\u200d👧\u200d👦 hi"; got != want {
		t.Errorf("WrapText = %q, want %q", got, want)
	}
	if got, want := firstChar("👩\u200d💻!"), "👩\u200d💻"; got != want {
		t.Errorf("firstChar = %q, want %q", got, want)
	}
}
