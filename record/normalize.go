package record

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/transport"
)

// Normalizer replaces volatile values (session ids, timestamps, UUIDs) in
// the string values of messages, live and recorded alike, before replay
// or verify compares them, so that a value that changes on every run does
// not count as a difference. A trace's header stores the normalizers it
// was recorded with (minor 2). Either Builtin names one mcpx ships, or
// Pattern is an RE2 regular expression whose matches are replaced by
// Replace (which may refer to submatches as in regexp.Expand: $1).
type Normalizer struct {
	// Builtin names a normalizer mcpx ships: "uuid", "timestamp" (RFC
	// 3339) or "session-id" (the session ids the trace and the live
	// session saw).
	Builtin string `json:"builtin,omitempty"`
	// Pattern is the regular expression (RE2 syntax) whose matches are
	// replaced.
	Pattern string `json:"pattern,omitempty"`
	// Replace is what each match becomes.
	Replace string `json:"replace,omitempty"`
}

// Built-in normalizers.
const (
	BuiltinUUID      = "uuid"
	BuiltinTimestamp = "timestamp"
	BuiltinSessionID = "session-id"
)

var builtinPatterns = map[string]Normalizer{
	BuiltinUUID:      {Pattern: `(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`, Replace: "<uuid>"},
	BuiltinTimestamp: {Pattern: `\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})`, Replace: "<timestamp>"},
}

// String renders the normalizer as a person would write it.
func (n Normalizer) String() string {
	if n.Builtin != "" {
		return n.Builtin
	}
	return fmt.Sprintf("%s => %s", n.Pattern, n.Replace)
}

// Normalizers is a compiled list of normalizers.
type Normalizers struct {
	list []compiledNormalizer
}

type compiledNormalizer struct {
	re      *regexp.Regexp
	replace string
}

// CompileNormalizers compiles ns. sessionIDs are the values the
// "session-id" built-in replaces (ignored when ns does not name it).
func CompileNormalizers(ns []Normalizer, sessionIDs []string) (*Normalizers, error) {
	out := &Normalizers{}
	for _, n := range ns {
		switch {
		case n.Builtin == BuiltinSessionID:
			ids := make([]string, 0, len(sessionIDs))
			for _, id := range sessionIDs {
				if id != "" {
					ids = append(ids, regexp.QuoteMeta(id))
				}
			}
			if len(ids) == 0 {
				continue
			}
			// Longest first, so that one id that contains another wins.
			sort.Slice(ids, func(i, j int) bool { return len(ids[i]) > len(ids[j]) })
			out.list = append(out.list, compiledNormalizer{re: regexp.MustCompile(strings.Join(ids, "|")), replace: "<session-id>"})
			continue
		case n.Builtin != "":
			b, ok := builtinPatterns[n.Builtin]
			if !ok {
				return nil, fmt.Errorf("normalizer %q: no such built-in (there are %s, %s and %s)", n.Builtin, BuiltinUUID, BuiltinTimestamp, BuiltinSessionID)
			}
			n = b
		case n.Pattern == "":
			return nil, fmt.Errorf("normalizer %v: it has neither a pattern nor a built-in name", n)
		}
		re, err := regexp.Compile(n.Pattern)
		if err != nil {
			return nil, fmt.Errorf("normalizer pattern %q: %w", n.Pattern, err)
		}
		out.list = append(out.list, compiledNormalizer{re: re, replace: n.Replace})
	}
	return out, nil
}

// withTimestamps returns ns (which may be nil) with the timestamp
// built-in after its own normalizers.
func (ns *Normalizers) withTimestamps() *Normalizers {
	b := builtinPatterns[BuiltinTimestamp]
	out := &Normalizers{}
	if ns != nil {
		out.list = append(out.list, ns.list...)
	}
	out.list = append(out.list, compiledNormalizer{re: regexp.MustCompile(b.Pattern), replace: b.Replace})
	return out
}

// Empty reports whether ns holds no normalizers (server marks are
// replaced all the same, see serverMarks).
func (ns *Normalizers) Empty() bool { return ns == nil || len(ns.list) == 0 }

// String applies every normalizer to s, in order, after the server
// marks (serverMarks).
func (ns *Normalizers) String(s string) string {
	s = serverMarks(s)
	if ns == nil {
		return s
	}
	for _, n := range ns.list {
		s = n.re.ReplaceAllString(s, n.replace)
	}
	return s
}

// Value applies the normalizers to every string (member names excepted)
// in a decoded JSON value, in place where it can, and returns the result.
func (ns *Normalizers) Value(v any) any {
	switch x := v.(type) {
	case string:
		if s := ns.String(x); s != x {
			return s
		}
	case map[string]any:
		for k, e := range x {
			if n, changed := ns.value(e); changed {
				x[k] = n
			}
		}
	case []any:
		for i, e := range x {
			if n, changed := ns.value(e); changed {
				x[i] = n
			}
		}
	}
	return v
}

// value is Value, and whether it replaced v (a string): a container is
// changed in place, and an unchanged string is not stored again (nor
// boxed again, which allocates).
func (ns *Normalizers) value(v any) (any, bool) {
	if s, ok := v.(string); ok {
		if n := ns.String(s); n != s {
			return n, true
		}
		return v, false
	}
	return ns.Value(v), false
}

// serverMarkRE matches the value of a stdio server's mark (see
// transport.ServerMarkPrefix), which is new for every server mcpx starts.
// It is compiled on first use: every mcpx command links this package, and
// only those that compare or show what a server sent meet a mark.
var serverMarkRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(transport.ServerMarkPrefix) + `[A-Z2-7]{26}`)
})

// serverMarks replaces in s the values of stdio servers' marks with
// "<server-mark>": always, whatever the normalizers, since a server that
// shows its environment (a get-env tool) would otherwise differ from its
// recording on every run. The prefix is looked for first: most strings
// have none.
func serverMarks(s string) string {
	if !strings.Contains(s, transport.ServerMarkPrefix) {
		return s
	}
	return serverMarkRE().ReplaceAllString(s, "<server-mark>")
}

// Ignore is one thing replay and verify leave out when they compare
// messages: a JSONPath, perhaps scoped to one method.
type Ignore struct {
	// Method, when set, limits Path to the messages of one method (for a
	// response, the method of the request it answers).
	Method string
	// Path selects what is left out.
	Path *Path
}

// ParseIgnore parses an ignore expression: a JSONPath ($.params._meta),
// or METHOD:JSONPATH (tools/call:$.result._meta) to apply it to one
// method's messages only.
func ParseIgnore(expr string) (Ignore, error) {
	s := strings.TrimSpace(expr)
	var method string
	if !strings.HasPrefix(s, "$") {
		if i := strings.Index(s, ":$"); i > 0 {
			method, s = s[:i], s[i+1:]
		}
	}
	p, err := ParsePath(s)
	if err != nil {
		if method == "" && !strings.HasPrefix(s, "$") {
			return Ignore{}, fmt.Errorf("%w (or METHOD:JSONPATH, e.g. tools/call:$.result._meta)", err)
		}
		return Ignore{}, err
	}
	return Ignore{Method: method, Path: p}, nil
}

// ParseIgnores parses each expression (see ParseIgnore).
func ParseIgnores(exprs []string) ([]Ignore, error) {
	out := make([]Ignore, 0, len(exprs))
	for _, e := range exprs {
		ig, err := ParseIgnore(e)
		if err != nil {
			return nil, err
		}
		out = append(out, ig)
	}
	return out, nil
}

// String renders the expression.
func (i Ignore) String() string {
	if i.Method == "" {
		return i.Path.String()
	}
	return i.Method + ":" + i.Path.String()
}

// pathsFor returns the paths of ignores that apply to method's messages.
func pathsFor(ignores []Ignore, method string) []*Path {
	out := make([]*Path, 0, len(ignores))
	for _, ig := range ignores {
		if ig.Method == "" || ig.Method == method {
			out = append(out, ig.Path)
		}
	}
	return out
}
