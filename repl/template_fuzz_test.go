package repl

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpx-dev/mcpx/inspector"
)

// templateSeeds are resource templates from the MCP specification's
// examples and from servers (RFC 6570 levels 1 to 4), and malformed ones.
var templateSeeds = []string{
	"file:///{path}", "demo://dynamic/{id}", "test://users/{user}/files/{file}", "repo://{owner}/{repo}/issues{?state,page}",
	"db://{+table}{/id}{#frag}", "x://{a,b}/{c*}/{d:3}{.ext}{;p}{&q}", "plain://no/variables", "open://{unterminated", "{}", "}{", "{{a}}", "",
}

// FuzzURITemplate checks the resource-template handling of completion on
// arbitrary templates and partial URIs: a template uritemplate rejects
// completes nothing; an accepted one splits (parseTemplate) into its
// literals and {...} expressions, with the variables uritemplate names
// (RFC 6570 varnames); and every URI completion (templateURI) starts with
// what was typed, when the server's completions extend the value typed.
func FuzzURITemplate(f *testing.F) {
	for i, s := range templateSeeds {
		f.Add(s, []string{"", "demo://dyn", "test://users/ad", "repo://o/r/issues?", "db://t/", "x://"}[i%6])
	}
	f.Fuzz(func(t *testing.T, tmpl, partial string) {
		parts := parseTemplate(tmpl)
		c := &Completer{}
		vars := c.templateVars(context.Background(), extendingSource{}, tmpl, nil, "")
		parsed, err := uritemplate.New(tmpl)
		if err != nil {
			if parts != nil || vars != nil {
				t.Fatalf("template %q, rejected by uritemplate (%v), completes as %+v and %+v", tmpl, err, parts, vars)
			}
			return
		}
		var literals strings.Builder
		var names []string
		expressions := 0
		for _, p := range parts {
			if p.vars == nil && p.op == 0 {
				if strings.ContainsAny(p.literal, "{}") {
					t.Fatalf("parseTemplate(%q) = %+v: the literal %q holds a brace", tmpl, parts, p.literal)
				}
				literals.WriteString(p.literal)
				continue
			}
			expressions++
			if p.op != 0 && strings.IndexByte("+#./;?&", p.op) < 0 {
				t.Fatalf("parseTemplate(%q): operator %q", tmpl, p.op)
			}
			for _, v := range p.vars {
				if !varname.MatchString(v) {
					t.Fatalf("parseTemplate(%q): variable %q", tmpl, v)
				}
				if !slices.Contains(names, v) {
					names = append(names, v)
				}
			}
		}
		if want := expression.ReplaceAllString(tmpl, ""); literals.String() != want || expressions != strings.Count(tmpl, "{") {
			t.Fatalf("parseTemplate(%q) = %+v: literals %q (want %q), %d expressions", tmpl, parts, literals.String(), want, expressions)
		}
		if !slices.Equal(names, parsed.Varnames()) || len(vars) != len(names) {
			t.Fatalf("template %q: variables %q, offered %+v; uritemplate names %q", tmpl, names, vars, parsed.Varnames())
		}
		for _, cand := range c.templateURI(context.Background(), extendingSource{}, tmpl, partial) {
			if !strings.HasPrefix(cand.Text, partial) {
				t.Fatalf("templateURI(%q, %q) offers %q", tmpl, partial, cand.Text)
			}
		}
		// Variable names are filtered by Complete; values must extend
		// what was typed.
		for _, cand := range c.templateVars(context.Background(), extendingSource{}, tmpl, nil, partial) {
			if strings.Contains(partial, "=") && !strings.HasPrefix(cand.Text, partial) {
				t.Fatalf("templateVars(%q, %q) offers %q", tmpl, partial, cand.Text)
			}
		}
	})
}

// expression is one {...} expression of a template.
var expression = regexp.MustCompile(`\{[^{}]*\}`)

// varname is RFC 6570's varname (section 2.3).
var varname = regexp.MustCompile(`^([A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(\.([A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$`)

// extendingSource completes any value by extending what was typed.
type extendingSource struct{ fakeSource }

func (extendingSource) CompleteValues(_ context.Context, _ inspector.CompletionRef, _, partial string, _ map[string]string) ([]string, error) {
	return []string{partial + "x", partial + "/y"}, nil
}
