package repl

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/tui"
)

// Node is one command of the grammar completion knows: its name, its
// subcommands and its flags. Path is the command's full name without the
// program ("tools call"), which selects how its arguments complete.
type Node struct {
	Name     string
	Path     string
	Children []*Node
	Flags    []Flag
}

// Flag is one flag of a command.
type Flag struct {
	Long  string // without dashes
	Short string // one letter, or ""
	Value bool   // takes a value
}

func (n *Node) child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (n *Node) flag(word string) (Flag, bool) {
	name, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	long := strings.HasPrefix(word, "--")
	for _, f := range n.Flags {
		if (long && f.Long == name) || (!long && f.Short != "" && f.Short == name) {
			return f, true
		}
	}
	return Flag{}, false
}

// Source is the live data completion draws on: what the server lists and
// its completion/complete (inspector.Catalog).
type Source interface {
	Tools(ctx context.Context) ([]inspector.ToolInfo, error)
	Prompts(ctx context.Context) ([]inspector.PromptInfo, error)
	Resources(ctx context.Context) ([]inspector.ResourceInfo, error)
	Templates(ctx context.Context) ([]inspector.ResourceInfo, error)
	CompleteValues(ctx context.Context, ref inspector.CompletionRef, arg, partial string, context map[string]string) ([]string, error)
}

// SkillSource is a Source that also lists skills (the Skills extension),
// for completing skill URIs; a Source without it completes none.
type SkillSource interface {
	Skills(ctx context.Context) ([]inspector.ResourceInfo, error)
}

// Completer completes mcpx commands for readline: command and flag names
// from the grammar; tool, prompt and resource names and URIs, template
// URIs, and key= argument names with their enum values from the live
// server; prompt-argument and template-variable values through the
// server's completion/complete.
type Completer struct {
	Root *Node
	// Source returns the data of the current session (nil: none).
	Source func() Source
	// Roots returns the roots offered to the server (:roots remove).
	Roots func() []string
	// Timeout bounds the server requests of one completion (default 2s):
	// the person is waiting with a key pressed.
	Timeout time.Duration
}

// Candidate is one completion of the word being typed.
type Candidate struct {
	Text string
	// NoSpace: the word is not finished (a key=, a URI prefix).
	NoSpace bool
}

// Do implements readline.AutoCompleter.
func (c *Completer) Do(line []rune, pos int) ([][]rune, int) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sugg, offset := c.Complete(ctx, string(line[:pos]))
	out := make([][]rune, len(sugg))
	for i, s := range sugg {
		out[i] = []rune(s)
	}
	return out, offset
}

// Complete returns what may follow text (the line up to the cursor), as
// suffixes to insert, and how many runes before the cursor the shown
// candidates start with.
func (c *Completer) Complete(ctx context.Context, text string) (suffixes []string, offset int) {
	words, part, ok := typing(text)
	if !ok {
		return nil, 0
	}
	cands := c.candidates(ctx, words, part.Value)
	seen := map[string]bool{}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Text < cands[j].Text })
	allValues := part.ValueStart >= 0
	for _, cand := range cands {
		if !strings.HasPrefix(cand.Text, part.Value) || seen[cand.Text] || UnsafeForTerminal(cand.Text) {
			continue
		}
		seen[cand.Text] = true
		s := escapeFor(cand.Text[len(part.Value):], part.Open, part.Value)
		if !cand.NoSpace {
			s += closer(part.Open) + " "
		}
		suffixes = append(suffixes, s)
		if k, _, ok := strings.Cut(part.Value, "="); !ok || !strings.HasPrefix(cand.Text, k+"=") {
			allValues = false
		}
	}
	start := part.Start
	if allValues {
		start = part.ValueStart // show values, not key=value
	}
	return suffixes, utf8.RuneCountInString(text[start:])
}

// UnsafeForTerminal reports whether s holds what tui.EscapeName shows as
// an escape in a name (tui.NameDisguised): a control character (C0, DEL,
// C1), a byte that is not UTF-8, a bidirectional control, an invisible
// character, a directional mark, a joiner outside an emoji: readline
// writes candidates and what it inserts to the terminal as they are, so a
// server's name with one would drive the terminal, or read as another
// name ("cl\u200bock", "cl\u200eock", "cl\u200dock" as "clock"). Such
// candidates are left out, here and by the shell completion
// (cmd/completion.go); the person can still type the name.
func UnsafeForTerminal(s string) bool { return tui.NameDisguised(s) }

// typing splits text (the line up to the cursor) into the words before
// the one being typed and that word (a new, empty one after a blank). ok
// is false where nothing can be appended to the word: inside unquoted
// JSON (taken verbatim), after a final backslash (inside double quotes
// too: it would escape what follows), and in a comment.
func typing(text string) (words []string, part Token, ok bool) {
	sc := Scan(text)
	part = Token{Start: len(text), End: len(text), ValueStart: -1}
	for _, t := range sc.Tokens {
		words = append(words, t.Value)
	}
	if !sc.Trailing && len(sc.Tokens) > 0 {
		part = sc.Tokens[len(sc.Tokens)-1]
		words = words[:len(words)-1]
	}
	switch {
	case sc.Comment, part.Open == OpenJSON, part.Open == OpenEscape:
		return nil, part, false
	case part.Open == OpenDouble:
		// Backslashes pair up from the left; an odd run leaves one.
		if n := len(text) - len(strings.TrimRight(text, `\`)); n%2 == 1 {
			return nil, part, false
		}
	}
	return words, part, true
}

// candidates lists what the word being typed (partial) may become.
func (c *Completer) candidates(ctx context.Context, words []string, partial string) []Candidate {
	node := c.Root
	var pos []string
	flagVals := map[string]string{}
	flagged := "" // the last word is a flag waiting for its value
	for i := 0; i < len(words); i++ {
		w := words[i]
		flagged = ""
		if len(w) > 1 && strings.HasPrefix(w, "-") {
			f, ok := node.flag(w)
			if !ok {
				f, _ = c.Root.flag(w)
			}
			if _, v, has := strings.Cut(w, "="); has {
				flagVals[f.Long] = v
			} else if f.Value {
				if i+1 < len(words) {
					flagVals[f.Long] = words[i+1]
					i++
				} else {
					flagged = f.Long
				}
			}
			continue
		}
		if len(pos) == 0 {
			if ch := node.child(w); ch != nil {
				node = ch
				continue
			}
		}
		pos = append(pos, w)
	}
	if flagged != "" {
		return c.flagValue(ctx, node.Path, flagged)
	}
	if strings.HasPrefix(partial, "-") {
		return flagNames(node, c.Root)
	}
	if len(pos) == 0 && len(node.Children) > 0 {
		var out []Candidate
		for _, ch := range node.Children {
			out = append(out, Candidate{Text: ch.Name})
		}
		return out
	}
	return c.args(ctx, node, pos, partial, flagVals)
}

func flagNames(nodes ...*Node) []Candidate {
	var out []Candidate
	for _, n := range nodes {
		for _, f := range n.Flags {
			out = append(out, Candidate{Text: "--" + f.Long})
		}
	}
	return out
}

func (c *Completer) source() Source {
	if c.Source == nil {
		return nil
	}
	return c.Source()
}

func (c *Completer) flagValue(ctx context.Context, path, flag string) []Candidate {
	src := c.source()
	switch {
	case path == "complete" && flag == "prompt" && src != nil:
		return c.promptNames(ctx, src)
	case path == "complete" && flag == "resource" && src != nil:
		ts, _ := src.Templates(ctx)
		var out []Candidate
		for _, t := range ts {
			out = append(out, Candidate{Text: t.URI})
		}
		return out
	case flag == "color":
		return words("auto", "always", "never")
	}
	return nil
}

func words(ws ...string) []Candidate {
	out := make([]Candidate, len(ws))
	for i, w := range ws {
		out[i] = Candidate{Text: w}
	}
	return out
}

// Methods a person may send with `call` and `notify`, and notifications
// a server may send (for :wait).
var (
	requestMethods = []string{
		"completion/complete", "initialize", "logging/setLevel", "ping",
		"prompts/get", "prompts/list", "resources/directory/read", "resources/list",
		"resources/read", "resources/subscribe", "resources/templates/list",
		"resources/unsubscribe", "server/discover", "skills/get", "skills/list",
		"subscriptions/listen", "tasks/cancel", "tasks/get",
		"tasks/list", "tasks/result", "tools/call", "tools/list",
	}
	clientNotifications = []string{
		"notifications/cancelled", "notifications/initialized", "notifications/progress",
		"notifications/roots/list_changed", "notifications/tasks/status",
	}
	serverNotifications = []string{
		"notifications/cancelled", "notifications/elicitation/complete", "notifications/message",
		"notifications/progress", "notifications/prompts/list_changed",
		"notifications/resources/list_changed", "notifications/resources/updated",
		"notifications/subscriptions/acknowledged", "notifications/tasks/status",
		"notifications/tools/list_changed",
	}
)

// args completes the positional arguments of the command at node.
func (c *Completer) args(ctx context.Context, node *Node, pos []string, partial string, flags map[string]string) []Candidate {
	src := c.source()
	n := len(pos)
	switch node.Path {
	case "help":
		// help COMMAND...: the commands, then the subcommands of the one
		// named, then what the command named takes first (help tools call
		// NAME describes the tool).
		at := c.Root
		for _, p := range pos {
			if at = at.child(p); at == nil {
				return nil
			}
		}
		if n > 0 && len(at.Children) == 0 {
			return c.args(ctx, at, nil, partial, flags)
		}
		var out []Candidate
		for _, ch := range at.Children {
			if !strings.HasPrefix(ch.Name, ":") {
				out = append(out, Candidate{Text: ch.Name})
			}
		}
		return out
	case ":wire", ":json":
		if n == 0 {
			return words("on", "off")
		}
	case ":record":
		if n == 0 {
			return words("off")
		}
	case ":log":
		if n == 0 {
			return words(inspector.LogLevels...)
		}
	case ":wait":
		if n == 0 {
			return words(serverNotifications...)
		}
	case ":roots":
		if n == 0 {
			return words("add", "remove")
		}
		if n == 1 && pos[0] == "remove" && c.Roots != nil {
			return words(c.Roots()...)
		}
	case "call":
		if n == 0 {
			return words(requestMethods...)
		}
	case "notify":
		if n == 0 {
			return words(clientNotifications...)
		}
	}
	if src == nil {
		return nil
	}
	switch node.Path {
	case "tools call":
		if n == 0 {
			return c.toolNames(ctx, src)
		}
		return c.toolArgs(ctx, src, pos[0], pos[1:], partial)
	case "tools schema":
		if n == 0 {
			return c.toolNames(ctx, src)
		}
	case "prompts get":
		if n == 0 {
			return c.promptNames(ctx, src)
		}
		return c.promptArgs(ctx, src, pos[0], pos[1:], partial)
	case "resources read":
		if n == 0 {
			return append(c.uris(ctx, src, partial), c.templates(ctx, src, partial)...)
		}
		// resources read TEMPLATE key=value ...
		return c.templateVars(ctx, src, pos[0], pos[1:], partial)
	case "resources subscribe", "resources unsubscribe":
		if n == 0 {
			return c.uris(ctx, src, partial)
		}
	case "resources dir":
		if n == 0 {
			return c.skillDirs(ctx, src)
		}
	case "skills get", "skills pull", "skills check":
		if n == 0 {
			return c.skillURIs(ctx, src)
		}
	case "complete":
		if n == 0 {
			if p := flags["prompt"]; p != "" {
				return c.promptArgs(ctx, src, p, nil, partial)
			}
			if t := flags["resource"]; t != "" {
				return c.templateVars(ctx, src, t, nil, partial)
			}
		}
	}
	return nil
}

func (c *Completer) toolNames(ctx context.Context, src Source) []Candidate {
	tools, _ := src.Tools(ctx)
	var out []Candidate
	for _, t := range tools {
		out = append(out, Candidate{Text: t.Name})
	}
	return out
}

func (c *Completer) promptNames(ctx context.Context, src Source) []Candidate {
	ps, _ := src.Prompts(ctx)
	var out []Candidate
	for _, p := range ps {
		out = append(out, Candidate{Text: p.Name})
	}
	return out
}

// given returns the keys of key=value words.
func given(pairs []string) map[string]string {
	m := map[string]string{}
	for _, p := range pairs {
		if k, v, ok := strings.Cut(p, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

// toolArgs completes key= names from the tool's input schema, and values
// where the schema lists them (enum, const, boolean).
func (c *Completer) toolArgs(ctx context.Context, src Source, name string, pairs []string, partial string) []Candidate {
	tools, _ := src.Tools(ctx)
	var args []inspector.ArgInfo
	for _, t := range tools {
		if t.Name == name {
			args = t.Args()
		}
	}
	have := given(pairs)
	key, _, typingValue := strings.Cut(partial, "=")
	var out []Candidate
	for _, a := range args {
		if !typingValue {
			if _, ok := have[a.Name]; !ok {
				out = append(out, Candidate{Text: a.Name + "=", NoSpace: true})
			}
			continue
		}
		if a.Name != key {
			continue
		}
		values := a.Enum
		if len(values) == 0 && strings.Contains(a.Type, "boolean") {
			values = []string{"true", "false"}
		}
		for _, v := range values {
			out = append(out, Candidate{Text: a.Name + "=" + v})
		}
	}
	return out
}

// promptArgs completes a prompt's argument names, and their values
// through completion/complete with the other arguments as context.
func (c *Completer) promptArgs(ctx context.Context, src Source, name string, pairs []string, partial string) []Candidate {
	prompts, _ := src.Prompts(ctx)
	var args []inspector.PromptArg
	for _, p := range prompts {
		if p.Name == name {
			args = p.Args
		}
	}
	have := given(pairs)
	key, value, typingValue := strings.Cut(partial, "=")
	if !typingValue {
		var out []Candidate
		for _, a := range args {
			if _, ok := have[a.Name]; !ok {
				out = append(out, Candidate{Text: a.Name + "=", NoSpace: true})
			}
		}
		return out
	}
	values, _ := src.CompleteValues(ctx, inspector.CompletionRef{Prompt: name}, key, value, have)
	var out []Candidate
	for _, v := range values {
		out = append(out, Candidate{Text: key + "=" + v})
	}
	return out
}

// templateVars completes the variables of a resource template (complete
// --resource T, resources read T key=value ...): the names not given yet
// in pairs, then values through completion/complete, with those given as
// its context. A value is completed as it is: the expansion encodes it.
func (c *Completer) templateVars(ctx context.Context, src Source, tmpl string, pairs []string, partial string) []Candidate {
	have := given(pairs)
	key, value, typingValue := strings.Cut(partial, "=")
	if !typingValue {
		t, err := uritemplate.New(tmpl)
		if err != nil {
			return nil // a server's mistake: no variables to complete
		}
		var out []Candidate
		for _, v := range t.Varnames() {
			if _, ok := have[v]; !ok {
				out = append(out, Candidate{Text: v + "=", NoSpace: true})
			}
		}
		return out
	}
	values, _ := src.CompleteValues(ctx, inspector.CompletionRef{URI: tmpl}, key, value, have)
	var out []Candidate
	for _, v := range values {
		out = append(out, Candidate{Text: key + "=" + v})
	}
	return out
}

// uris completes resource URIs and URIs built from templates: a
// template's literal start, then its variables' values through
// completion/complete.
func (c *Completer) uris(ctx context.Context, src Source, partial string) []Candidate {
	var out []Candidate
	res, _ := src.Resources(ctx)
	for _, r := range res {
		out = append(out, Candidate{Text: r.URI})
	}
	ts, _ := src.Templates(ctx)
	for _, t := range ts {
		out = append(out, c.templateURI(ctx, src, t.URI, partial)...)
	}
	return out
}

// skillURIs completes the URIs of the skills the server lists.
func (c *Completer) skillURIs(ctx context.Context, src Source) []Candidate {
	ss, ok := src.(SkillSource)
	if !ok {
		return nil
	}
	skills, _ := ss.Skills(ctx)
	var out []Candidate
	for _, s := range skills {
		out = append(out, Candidate{Text: s.URI})
	}
	return out
}

// skillDirs completes the directories of the skills the server lists
// (their SKILL.md URIs without /SKILL.md, as resources/directory/read
// names them).
func (c *Completer) skillDirs(ctx context.Context, src Source) []Candidate {
	var out []Candidate
	for _, s := range c.skillURIs(ctx, src) {
		if dir, ok := strings.CutSuffix(s.Text, "/SKILL.md"); ok {
			out = append(out, Candidate{Text: dir})
		}
	}
	return out
}

// templates completes the resource templates themselves, once a brace
// is typed (resources read TEMPLATE key=value ...); before that, the
// URIs made from them (uris).
func (c *Completer) templates(ctx context.Context, src Source, partial string) []Candidate {
	if !strings.Contains(partial, "{") {
		return nil
	}
	ts, _ := src.Templates(ctx)
	var out []Candidate
	for _, t := range ts {
		out = append(out, Candidate{Text: t.URI})
	}
	return out
}

// templatePart is a literal run of a URI template, or one expression.
type templatePart struct {
	literal string
	op      byte // the expression's operator (0 for a simple {var})
	vars    []string
}

// parseTemplate splits an RFC 6570 URI template into literals and
// expressions, for completing a URI typed against it. A template that
// uritemplate rejects (a server's mistake) has nothing to complete: nil.
//
// uritemplate validates the template and names its variables, but keeps
// its literals and operators to itself, and completion of a partially
// typed URI needs them (Match only takes a whole URI). Once uritemplate
// has accepted the template the split is only the braces: RFC 6570
// literals cannot hold '{' or '}' (section 2.1), and expressions do not
// nest.
func parseTemplate(t string) []templatePart {
	if _, err := uritemplate.New(t); err != nil {
		return nil
	}
	var parts []templatePart
	for t != "" {
		literal, rest, ok := strings.Cut(t, "{")
		if literal != "" {
			parts = append(parts, templatePart{literal: literal})
		}
		if !ok {
			break
		}
		expr, rest, _ := strings.Cut(rest, "}")
		e, err := uritemplate.New("{" + expr + "}")
		if err != nil || expr == "" {
			return nil // cannot happen: the expression of a valid template
		}
		var op byte
		if strings.IndexByte("+#./;?&", expr[0]) >= 0 {
			op = expr[0]
		}
		parts = append(parts, templatePart{op: op, vars: e.Varnames()})
		t = rest
	}
	return parts
}

// templateURI completes partial against one template: while partial is
// still inside a literal, the literal up to the next variable; inside a
// simple variable, the values the server suggests for it. A value is in
// the URI as RFC 6570 expands it (inspector.TemplateValue: "a b" is a%20b
// in {var}), as resources read TEMPLATE key=value makes it; the server
// is asked with the values decoded, and a suggestion that does not extend
// what was typed is left out.
func (c *Completer) templateURI(ctx context.Context, src Source, tmpl, partial string) []Candidate {
	parts := parseTemplate(tmpl)
	done := ""
	rest := partial
	vals := map[string]string{}
	for i, p := range parts {
		if p.vars == nil {
			switch {
			case strings.HasPrefix(rest, p.literal):
				done += p.literal
				rest = rest[len(p.literal):]
				continue
			case strings.HasPrefix(p.literal, rest):
				return []Candidate{{Text: done + p.literal, NoSpace: i < len(parts)-1}}
			}
			return nil
		}
		if (p.op != 0 && p.op != '+' && p.op != '/') || len(p.vars) != 1 {
			return nil // only simple expressions are completed
		}
		// The variable runs to the next literal's first character.
		end := len(rest)
		if i+1 < len(parts) && parts[i+1].literal != "" {
			if k := strings.IndexByte(rest, parts[i+1].literal[0]); k >= 0 {
				end = k
			}
		}
		lead := ""
		if p.op == '/' {
			lead = "/"
			if !strings.HasPrefix(rest, "/") {
				if rest == "" {
					return []Candidate{{Text: done + "/", NoSpace: true}}
				}
				return nil
			}
		}
		if end < len(rest) {
			vals[p.vars[0]] = pctDecode(strings.TrimPrefix(rest[:end], lead))
			done += rest[:end]
			rest = rest[end:]
			continue
		}
		values, _ := src.CompleteValues(ctx, inspector.CompletionRef{URI: tmpl}, p.vars[0], pctDecode(strings.TrimPrefix(rest, lead)), vals)
		more := slices.ContainsFunc(parts[i+1:], func(q templatePart) bool { return q.literal != "" || q.vars != nil })
		var out []Candidate
		for _, v := range values {
			text := done + lead + inspector.TemplateValue(v, p.op == '+')
			if strings.HasPrefix(text, partial) {
				out = append(out, Candidate{Text: text, NoSpace: more})
			}
		}
		return out
	}
	return nil
}

// pctDecode decodes the pct-encoded triplets of s, a value typed in a
// URI; a % that starts none stays.
func pctDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
