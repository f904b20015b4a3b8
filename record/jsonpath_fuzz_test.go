package record

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// pathSeeds are JSONPath expressions of the README, the tests and the
// spec's messages, and malformed ones.
var pathSeeds = []string{
	"$", "$.params.arguments", "$..timestamp", "$.result.tools[0].name", "$.result.content[*].text",
	"$['params']['_meta']", `$["a.b"]`, `$['it\'s']`, `$["x\"y"]`, "$..*", "$[*]", "$..[0]", "$..['k']",
	"$.params.name-with-dash", "$.a/b", " $.spaced ", "$.", "$..", "$[", "$['open", "$[01]", "$[-1]", "$.a[?(@.b)]", "$.a[0:2]", "a.b",
}

// FuzzJSONPath parses arbitrary expressions and applies them to arbitrary
// JSON documents: the values selected are JSON values of the document;
// redacting them (--redact) leaves valid JSON where the path selects only
// placeholders; removing them (--ignore) leaves nothing it selects but
// placeholders; and every concrete path of the document, as pathString
// writes it in a diff, parses back to a path that selects exactly it.
func FuzzJSONPath(f *testing.F) {
	frames := fuzzing.Frames()
	for i, expr := range pathSeeds {
		f.Add(expr, frames[i%len(frames)])
	}
	f.Add("$..a", []byte(`{"a":{"a":1},"b":[{"a":2}],"$":{"<&>":{"\u2028\n\"":[]}},"":0}`))
	f.Fuzz(func(t *testing.T, expr string, doc []byte) {
		p, err := ParsePath(expr)
		if err != nil {
			return
		}
		if p.String() != expr {
			t.Fatalf("ParsePath(%q).String() = %q", expr, p.String())
		}
		if !json.Valid(doc) {
			return
		}
		checkSpans(t, doc, findSpans(doc, p.match))
		checkRedaction(t, expr, doc)
		v, ok := decode(doc)
		if !ok {
			t.Fatalf("valid JSON %q does not decode", doc)
		}
		forEachPath(v, nil, func(path []elem, _ any) {
			checkPathString(t, path)
		})
		v, _ = decode(doc)
		out := removePaths(v, []*Path{p})
		if p.match(nil) {
			if out != ignoredValue {
				t.Fatalf("removing %s from %q left %v", expr, doc, out)
			}
			return
		}
		forEachPath(out, nil, func(path []elem, node any) {
			if p.match(path) && (path[len(path)-1].index < 0 || node != ignoredValue) {
				t.Fatalf("removing %s from %q left %s = %v", expr, doc, pathString(path), node)
			}
		})
	})
}

func checkSpans(t *testing.T, doc []byte, spans []span) {
	t.Helper()
	prev := 0
	for _, s := range spans {
		if s.start < prev || s.end < s.start || s.end > len(doc) || !json.Valid(doc[s.start:s.end]) {
			t.Fatalf("spans %v of %q: %v is not a value after %d", spans, doc, s, prev)
		}
		prev = s.end
	}
}

func checkRedaction(t *testing.T, expr string, doc []byte) {
	t.Helper()
	r, err := NewRedactor(RedactOptions{Paths: []string{expr}})
	if err != nil {
		t.Fatalf("NewRedactor(%q): %v", expr, err)
	}
	out := r.Frame(doc)
	if !json.Valid(out) {
		t.Fatalf("redacting %s in %q gave invalid JSON %q", expr, doc, out)
	}
	for _, s := range findSpans(out, r.matchFrame) {
		if !bytes.Equal(out[s.start:s.end], placeholderJSON) {
			t.Fatalf("redacting %s in %q gave %q, where %q is still selected", expr, doc, out, out[s.start:s.end])
		}
	}
}

// checkPathString checks that the path a diff shows selects exactly path.
func checkPathString(t *testing.T, path []elem) {
	t.Helper()
	s := pathString(path)
	q, err := ParsePath(s)
	if err != nil {
		t.Fatalf("pathString(%v) = %q does not parse: %v", path, s, err)
	}
	if len(q.segs) != len(path) || !q.match(path) {
		t.Fatalf("pathString(%v) = %q parses to %+v, which does not select it", path, s, q.segs)
	}
	for i, seg := range q.segs {
		if seg.descend || seg.kind == segWild {
			t.Fatalf("pathString(%v) = %q selects more than one path (%+v)", path, s, seg)
		}
		if seg.kind == segName && seg.name != path[i].key {
			t.Fatalf("pathString(%v) = %q names %q", path, s, seg.name)
		}
	}
}

// forEachPath calls fn for every node of a decoded document below the
// root, with its concrete path.
func forEachPath(v any, path []elem, fn func([]elem, any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := append(path[:len(path):len(path)], elem{key: k, index: -1})
			fn(p, c)
			forEachPath(c, p, fn)
		}
	case []any:
		for i, c := range x {
			p := append(path[:len(path):len(path)], elem{index: i})
			fn(p, c)
			forEachPath(c, p, fn)
		}
	}
}

// TestParsePathEscapes pins the RFC 9535 escapes of quoted names, which
// FuzzJSONPath found missing: a diff's path for a key with a line break
// or "<" did not select that key.
func TestParsePathEscapes(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		`$['a\nb']`:            "a\nb",
		`$["tab\there"]`:       "tab\there",
		`$['it\'s']`:           "it's",
		`$["say \"hi\""]`:      `say "hi"`,
		`$['back\\slash\/']`:   `back\slash/`,
		`$["\u003c\u00e9>"]`:   "<é>",
		`$['\ud83d\ude00']`:    "😀",
		`$["\b\f\r"]`:          "\b\f\r",
		`$['plain $ and [.]']`: "plain $ and [.]",
	} {
		p, err := ParsePath(expr)
		if err != nil {
			t.Errorf("ParsePath(%s): %v", expr, err)
			continue
		}
		if len(p.segs) != 1 || p.segs[0].name != want {
			t.Errorf("ParsePath(%s) = %+v, want the name %q", expr, p.segs, want)
		}
	}
	for _, expr := range []string{`$['\q']`, `$['\u12']`, `$['\ud83d']`, `$['\ude00\ud83d']`, `$['a\`, `$["a'`} {
		if _, err := ParsePath(expr); err == nil {
			t.Errorf("ParsePath(%s) accepted a malformed quoted name", expr)
		}
	}
}
