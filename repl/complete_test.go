package repl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/tui"
)

// testGrammar is a part of mcpx's command tree.
func testGrammar() *Node {
	n := func(name, path string, children ...*Node) *Node {
		return &Node{Name: name, Path: path, Children: children}
	}
	call := n("call", "tools call")
	call.Flags = []Flag{{Long: "args", Value: true}, {Long: "task"}}
	complete := n("complete", "complete")
	complete.Flags = []Flag{{Long: "prompt", Value: true}, {Long: "resource", Value: true}, {Long: "context", Value: true}}
	root := n("", "",
		n("tools", "tools", n("list", "tools list"), call, n("schema", "tools schema")),
		n("prompts", "prompts", n("list", "prompts list"), n("get", "prompts get")),
		n("resources", "resources", n("list", "resources list"), n("read", "resources read")),
		n("ping", "ping"), n("call", "call"), complete,
		n(":wire", ":wire"), n(":log", ":log"), n(":roots", ":roots"), n("help", "help"),
	)
	root.Flags = []Flag{{Long: "json"}, {Long: "wire"}, {Long: "verbose", Short: "v"}}
	return root
}

// fakeSource is a server with a few tools, prompts, resources and
// templates, and completions.
type fakeSource struct{}

func (fakeSource) Tools(context.Context) ([]inspector.ToolInfo, error) {
	return []inspector.ToolInfo{
		{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
		{Name: "get-sum", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)},
		{Name: "get-env"},
		{Name: "paint", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"color":{"type":"string","enum":["red","green","dark blue"]},
			"glossy":{"type":"boolean"},
			"size":{"oneOf":[{"const":1,"title":"S"},{"const":2,"title":"M"}]}}}`)},
	}, nil
}

func (fakeSource) Prompts(context.Context) ([]inspector.PromptInfo, error) {
	return []inspector.PromptInfo{
		{Name: "args-prompt", Args: []inspector.PromptArg{{Name: "city", Required: true}, {Name: "state"}}},
		{Name: "simple-prompt"},
	}, nil
}

func (fakeSource) Resources(context.Context) ([]inspector.ResourceInfo, error) {
	return []inspector.ResourceInfo{{URI: "demo://static/a.md"}, {URI: "demo://static/b.md"}}, nil
}

func (fakeSource) Templates(context.Context) ([]inspector.ResourceInfo, error) {
	return []inspector.ResourceInfo{{URI: "demo://dynamic/{id}"}, {URI: "test://users/{user}/files/{file}"}}, nil
}

func (fakeSource) CompleteValues(_ context.Context, ref inspector.CompletionRef, arg, partial string, ctx map[string]string) ([]string, error) {
	var all []string
	switch {
	case ref.Prompt == "args-prompt" && arg == "city":
		all = []string{"Paris", "Porto", "New York"}
	case ref.Prompt == "args-prompt" && arg == "state" && ctx["city"] == "New York":
		all = []string{"NY"}
	case ref.URI == "demo://dynamic/{id}" && arg == "id":
		all = []string{"1", "12", "2"}
	case ref.URI == "test://users/{user}/files/{file}" && arg == "user":
		all = []string{"ada", "alan"}
	case ref.URI == "test://users/{user}/files/{file}" && arg == "file" && ctx["user"] == "ada":
		all = []string{"notes.txt"}
	}
	var out []string
	for _, v := range all {
		if strings.HasPrefix(v, partial) {
			out = append(out, v)
		}
	}
	return out, nil
}

func TestComplete(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return fakeSource{} }, Roots: func() []string { return []string{"file:///tmp"} }}
	for _, tc := range []struct {
		line   string
		want   []string
		offset int
	}{
		{"", []string{":log ", ":roots ", ":wire ", "call ", "complete ", "help ", "ping ", "prompts ", "resources ", "tools "}, 0},
		{"to", []string{"ols "}, 2},
		{"tools ", []string{"call ", "list ", "schema "}, 0},
		{"tools call ", []string{"echo ", "get-env ", "get-sum ", "paint "}, 0},
		{"tools call ec", []string{"ho "}, 2},
		{"tools call get-", []string{"env ", "sum "}, 4},
		{"tools call --json get", []string{"-env ", "-sum "}, 3},
		{"tools call echo ", []string{"message="}, 0},
		{"tools call get-sum a=1 ", []string{"b="}, 0},
		{"tools call paint c", []string{"olor="}, 1},
		{"tools call paint color=", []string{"dark\\ blue ", "green ", "red "}, 0},
		{"tools call paint color=r", []string{"ed "}, 1},
		{"tools call paint 'color=d", []string{"ark blue' "}, 8},
		{"tools call paint glossy=", []string{"false ", "true "}, 0},
		{"tools call paint size=", []string{"1 ", "2 "}, 0},
		{"tools call echo --", []string{"args ", "json ", "task ", "verbose ", "wire "}, 2},
		{"tools schema e", []string{"cho "}, 1},
		{"prompts get a", []string{"rgs-prompt "}, 1},
		{"prompts get args-prompt ", []string{"city=", "state="}, 0},
		{"prompts get args-prompt city=P", []string{"aris ", "orto "}, 1},
		{"prompts get args-prompt city=N", []string{"ew\\ York "}, 1},
		{"prompts get args-prompt city='New York' state=", []string{"NY "}, 0},
		{"resources read demo://s", []string{"tatic/a.md ", "tatic/b.md "}, 8},
		{"resources read demo://d", []string{"ynamic/"}, 8},
		{"resources read demo://dynamic/", []string{"1 ", "12 ", "2 "}, 15},
		{"resources read demo://dynamic/1", []string{" ", "2 "}, 16},
		{"resources read test://users/a", []string{"da", "lan"}, 14},
		{"resources read test://users/ada/", []string{"files/"}, 17},
		{"resources read test://users/ada/files/", []string{"notes.txt "}, 23},
		// resources read TEMPLATE key=value: the template once a brace is
		// typed, then its variables not given yet, their values with the
		// others as context.
		{"resources read demo://dynamic/{", []string{"id} "}, 16},
		{"resources read demo://dynamic/{id} ", []string{"id="}, 0},
		{"resources read demo://dynamic/{id} id=1", []string{" ", "2 "}, 1},
		{"resources read test://users/{user}/files/{file} user=ada ", []string{"file="}, 0},
		{"resources read test://users/{user}/files/{file} user=ada file=", []string{"notes.txt "}, 0},
		{"complete --prompt a", []string{"rgs-prompt "}, 1},
		{"complete --prompt args-prompt ", []string{"city=", "state="}, 0},
		{"complete --prompt args-prompt city=Po", []string{"rto "}, 2},
		{"complete --resource ", []string{"demo://dynamic/{id} ", "test://users/{user}/files/{file} "}, 0},
		{"complete --resource demo://dynamic/{id} ", []string{"id="}, 0},
		{"call tools/c", []string{"all "}, 7},
		{":wire ", []string{"off ", "on "}, 0},
		{":log e", []string{"mergency ", "rror "}, 1},
		{":roots remove ", []string{"file:///tmp "}, 0},
		{"help t", []string{"ools "}, 1},
		// help's later words: the subcommands of the command named, then
		// what that command takes first (help tools call NAME describes
		// the tool).
		{"help tools ", []string{"call ", "list ", "schema "}, 0},
		{"help tools c", []string{"all "}, 1},
		{"help tools call e", []string{"cho "}, 1},
		{"help tools call echo ", nil, 0},
		{"help ping ", nil, 0},
		{"help nosuch ", nil, 0},
		// Nothing to complete inside JSON.
		{"call tools/call {\"na", nil, 0},
	} {
		got, offset := c.Complete(context.Background(), tc.line)
		if diff := cmp.Diff(tc.want, got); diff != "" || offset != tc.offset {
			t.Errorf("Complete(%q) offset %d (want %d), suffixes (-want +got):\n%s", tc.line, offset, tc.offset, diff)
		}
	}
}

// Without a session only the grammar completes.
func TestCompleteWithoutSource(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return nil }}
	if got, _ := c.Complete(context.Background(), "tools call e"); got != nil {
		t.Errorf("got %q", got)
	}
	if got, _ := c.Complete(context.Background(), "pi"); !cmp.Equal(got, []string{"ng "}) {
		t.Errorf("got %q", got)
	}
}

// Template variables are the ones RFC 6570 (through uritemplate) names:
// each once, in order, and none for a template that is not one.
func TestTemplateVars(t *testing.T) {
	c := &Completer{}
	for tmpl, want := range map[string][]string{
		"x://{a}/{a}{?b,a}{&c*}":  {"a=", "b=", "c="},
		"x://{+path}{#f}{;p:3}":   {"path=", "f=", "p="},
		"x://{{a}}":               nil,
		"x://{a b}/{c}":           nil,
		"x://{unterminated":       nil,
		"plain://no/variables":    nil,
		"x://{a%20b}{.ext}{/seg}": {"a%20b=", "ext=", "seg="},
	} {
		var got []string
		for _, cand := range c.templateVars(context.Background(), fakeSource{}, tmpl, nil, "") {
			got = append(got, cand.Text)
		}
		if !cmp.Equal(got, want) {
			t.Errorf("templateVars(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

// spacedSource suggests template values that a URI holds encoded.
type spacedSource struct{ fakeSource }

func (spacedSource) Templates(context.Context) ([]inspector.ResourceInfo, error) {
	return []inspector.ResourceInfo{{URI: "x://greet/{name}"}, {URI: "x://files/{+path}"}}, nil
}

func (spacedSource) CompleteValues(_ context.Context, _ inspector.CompletionRef, _, partial string, _ map[string]string) ([]string, error) {
	var out []string
	for _, v := range []string{"Ada Lovelace", "a/b é"} {
		if strings.HasPrefix(v, partial) {
			out = append(out, v)
		}
	}
	return out, nil
}

// A value completed into a URI is encoded as RFC 6570 expands it, as
// resources read TEMPLATE key=value makes the URI; what was typed is
// decoded before the server is asked. A value completed as key=value is
// left as it is (the expansion encodes it).
func TestCompleteTemplateValuesEncoded(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return spacedSource{} }}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"resources read x://greet/", []string{"Ada%20Lovelace ", "a%2Fb%20%C3%A9 "}},
		{"resources read x://greet/Ada%20L", []string{"ovelace "}},
		{"resources read x://files/", []string{"Ada%20Lovelace ", "a/b%20%C3%A9 "}},
		{"resources read x://greet/{name} name=A", []string{"da\\ Lovelace "}},
	} {
		got, _ := c.Complete(context.Background(), tc.line)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Complete(%q) (-want +got):\n%s", tc.line, diff)
		}
	}
}

// stallingSource is a server that does not answer tools/list: the person
// pressing Tab is not kept waiting past the completer's timeout.
type stallingSource struct{ fakeSource }

func (stallingSource) Tools(ctx context.Context) ([]inspector.ToolInfo, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCompleterDoGivesUpAtItsTimeout(t *testing.T) {
	for _, tc := range []struct {
		timeout, want time.Duration
	}{
		{0, 2 * time.Second}, // the default
		{300 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(tc.want.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &Completer{Root: testGrammar(), Source: func() Source { return stallingSource{} }, Timeout: tc.timeout}
				start := time.Now()
				line := []rune("tools call ")
				got, _ := c.Do(line, len(line))
				if d := time.Since(start); d != tc.want {
					t.Errorf("Do returned after %s, want %s", d, tc.want)
				}
				if len(got) != 0 {
					t.Errorf("candidates %q from a server that never answered", got)
				}
			})
		})
	}
}

// evilSource is a server whose names, argument names and values carry
// terminal control characters.
type evilSource struct{ fakeSource }

func (evilSource) Tools(context.Context) ([]inspector.ToolInfo, error) {
	return []inspector.ToolInfo{
		{Name: "cl\x1b[2J\x1b[Hear"},
		{Name: "clock"},
		{Name: "ev\u202eil"},
		{Name: "cl\u200bock"}, // reads as clock
		{Name: "cl\u200eock"}, // so does this, with a left-to-right mark
		{Name: "paint", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"a\u001b[1mb":{"type":"string"},
			"color":{"type":"string","enum":["x\u001b[32my","plain","c\u0085d"]}}}`)},
	}, nil
}

func (evilSource) Prompts(context.Context) ([]inspector.PromptInfo, error) {
	return []inspector.PromptInfo{{Name: "p\x1b[31mx"}, {Name: "plain", Args: []inspector.PromptArg{{Name: "q"}}}}, nil
}

func (evilSource) Resources(context.Context) ([]inspector.ResourceInfo, error) {
	return []inspector.ResourceInfo{{URI: "file:///x\x1b[31my"}, {URI: "file:///ok"}}, nil
}

func (evilSource) CompleteValues(context.Context, inspector.CompletionRef, string, string, map[string]string) ([]string, error) {
	return []string{"\x07bell", "fine"}, nil
}

// Candidates carrying terminal controls (C0, DEL, C1, bidirectional),
// invisible characters or directional marks are left out, as the shell
// completion leaves them out: readline writes candidates to the terminal
// as they are, and "cl\u200bock" or "cl\u200eock" would be listed, and
// inserted, as "clock".
func TestCompleteLeavesOutControlCharacters(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return evilSource{} }}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"tools call ", []string{"clock ", "paint "}},
		{"tools call c", []string{"lock "}},
		{"tools call paint ", []string{"color="}},
		{"tools call paint color=", []string{"plain "}},
		{"prompts get ", []string{"plain "}},
		{"resources read file:///", []string{"ok "}},
		{"prompts get plain q=", []string{"fine "}},
	} {
		got, _ := c.Complete(context.Background(), tc.line)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Complete(%q) (-want +got):\n%s", tc.line, diff)
		}
	}
}

// skillSource is fakeSource with skills (SkillSource).
type skillSource struct{ fakeSource }

func (skillSource) Skills(context.Context) ([]inspector.ResourceInfo, error) {
	return []inspector.ResourceInfo{{URI: "skill://git-workflow/SKILL.md", Name: "git-workflow"}, {URI: "skill://acme/billing/refunds/SKILL.md", Name: "refunds"}}, nil
}

// TestCompleteSkills: skills get, check and pull complete the URIs of the
// listed skills, resources dir their directories; a Source without
// skills completes none.
func TestCompleteSkills(t *testing.T) {
	n := func(name, path string) *Node { return &Node{Name: name, Path: path} }
	root := &Node{Children: []*Node{
		{Name: "skills", Path: "skills", Children: []*Node{n("get", "skills get"), n("pull", "skills pull"), n("check", "skills check")}},
		{Name: "resources", Path: "resources", Children: []*Node{n("dir", "resources dir")}},
	}}
	with := &Completer{Root: root, Source: func() Source { return skillSource{} }}
	without := &Completer{Root: root, Source: func() Source { return fakeSource{} }}
	for _, tc := range []struct {
		c      *Completer
		line   string
		want   []string
		offset int
	}{
		{with, "skills get skill://a", []string{"cme/billing/refunds/SKILL.md "}, 9},
		{with, "skills pull ", []string{"skill://acme/billing/refunds/SKILL.md ", "skill://git-workflow/SKILL.md "}, 0},
		{with, "skills check skill://g", []string{"it-workflow/SKILL.md "}, 9},
		{with, "resources dir skill://", []string{"acme/billing/refunds ", "git-workflow "}, 8},
		{without, "skills get ", nil, 0},
		{without, "resources dir ", nil, 0},
	} {
		got, offset := tc.c.Complete(context.Background(), tc.line)
		if diff := cmp.Diff(tc.want, got); diff != "" || offset != tc.offset {
			t.Errorf("Complete(%q) offset %d (want %d), suffixes (-want +got):\n%s", tc.line, offset, tc.offset, diff)
		}
	}
}

// UnsafeForTerminal leaves out a candidate holding any character
// tui.EscapeName would show as an escape in a name, and no other.
func TestUnsafeForTerminalIsWhatEscapeNameEscapes(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		escaped := tui.EscapeName(s) != s
		if UnsafeForTerminal(s) != escaped {
			t.Errorf("U+%04X: unsafe %v, escaped %v", r, UnsafeForTerminal(s), escaped)
		}
	}
	// A joiner is escaped between letters ("ec\u200dho" reads as "echo")
	// and kept inside an emoji, whose name completes.
	for s, unsafe := range map[string]bool{"ec\u200dho": true, "ec\u200cho": true, "dev-👩\u200d💻": false, "👩\u200d": true, "a\xffb": true} {
		if UnsafeForTerminal(s) != unsafe || unsafe != (tui.EscapeName(s) != s) {
			t.Errorf("UnsafeForTerminal(%q) = %v, want %v (EscapeName %q)", s, UnsafeForTerminal(s), unsafe, tui.EscapeName(s))
		}
	}
}
