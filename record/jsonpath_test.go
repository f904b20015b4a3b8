package record

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func path(keys ...any) []elem {
	var p []elem
	for _, k := range keys {
		switch x := k.(type) {
		case string:
			p = append(p, elem{key: x, index: -1})
		case int:
			p = append(p, elem{index: x})
		}
	}
	return p
}

func TestParsePathAndMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr  string
		path  []elem
		match bool
	}{
		{"$", nil, true},
		{"$", path("a"), false},
		{"$.result", path("result"), true},
		{"$.result.tools[0].name", path("result", "tools", 0, "name"), true},
		{"$.result.tools[0].name", path("result", "tools", 1, "name"), false},
		{"$.result.tools[*].name", path("result", "tools", 5, "name"), true},
		{"$.result.*", path("result", "x"), true},
		{"$.result.*", path("result", "x", "y"), false},
		{"$['result']['odd key']", path("result", "odd key"), true},
		{`$["result"]["a.b"]`, path("result", "a.b"), true},
		{`$['it\'s']`, path("it's"), true},
		{"$..timestamp", path("timestamp"), true},
		{"$..timestamp", path("result", "items", 3, "timestamp"), true},
		{"$..timestamp", path("result", "timestamp", "x"), false},
		{"$..[0]", path("a", 0), true},
		{"$..['x y']", path("a", "x y"), true},
		{"$.params..token", path("params", "a", "token"), true},
		{"$.params..token", path("result", "a", "token"), false},
		{"$..*", path("a", "b"), true},
		{"$.params._meta.progressToken", path("params", "_meta", "progressToken"), true},
		{"$[*]", path(0), true},
		{"$[*]", path("k"), true},
		{"$.a[1]", path("a", "1"), false}, // an index never matches a key
		// Dot names take '-' and '/' after the first character (RFC 9535's
		// shorthand does not): diffs print them so, and --ignore takes them.
		{"$.params.name-with-dash", path("params", "name-with-dash"), true},
		{"$.result.a/b", path("result", "a/b"), true},
		{"$.result.x-y", path("result", "x"), false},
		// The one filter selects an element of a named list by identity.
		{`$.result.tools[?@.name=="echo"].description`, append(path("result", "tools"), elem{index: 3, idKey: "name", idVal: "echo"}, elem{key: "description", index: -1}), true},
		{`$.result.tools[?@.name=='echo']`, append(path("result", "tools"), elem{index: 3, idKey: "name", idVal: "other"}), false},
		{`$.result.tools[?@['name'] == 'echo']`, append(path("result", "tools"), elem{index: 3, idKey: "name", idVal: "echo"}), true},
		{`$.result.tools[?@.name=="echo"]`, path("result", "tools", 3), false}, // no identity: an ordinary list
		{`$.result.tools[3]`, append(path("result", "tools"), elem{index: 3, idKey: "name", idVal: "echo"}), true},
	} {
		p, err := ParsePath(tc.expr)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tc.expr, err)
			continue
		}
		if got := p.match(tc.path); got != tc.match {
			t.Errorf("%s vs %s: match %v, want %v", tc.expr, pathString(tc.path), got, tc.match)
		}
	}
}

func TestParsePathErrors(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"result.x":         "must start with $",
		"":                 "must start with $",
		"$.":               "expected a member name",
		"$.a[":             "expected an index",
		"$.a[1":            "expected ]",
		"$.a['x":           "unterminated quoted name",
		"$.a[?(@.x)]":      "a filter of the form",
		"$.a[?@.x==1]":     "only == with a string",
		"$.a[?@.x>'a']":    "only == with a string",
		"$.a[1:2]":         "expected ]",
		"$a":               "expected . or [",
		"$.tools[-1].name": "expected an index",
	} {
		_, err := ParsePath(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePath(%q) = %v, want an error containing %q", expr, err, want)
		}
		if err != nil && !strings.Contains(err.Error(), "supported:") && !strings.Contains(err.Error(), "must start with $") {
			t.Errorf("ParsePath(%q) error does not say what is supported: %v", expr, err)
		}
	}
}

func TestRemovePaths(t *testing.T) {
	t.Parallel()
	v, _ := decode([]byte(`{"result":{"a":1,"list":[{"t":"x","k":1},{"t":"y","k":2}],"deep":{"t":3}},"id":1}`))
	got := removePaths(v, []*Path{MustParsePath("$.result.list[0]"), MustParsePath("$..t"), MustParsePath("$.id")})
	b := encodeValue(got)
	want := `{"result":{"a":1,"deep":{},"list":["<ignored>",{"k":2}]}}`
	if b != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	if removePaths(v, []*Path{MustParsePath("$")}) != ignoredValue {
		t.Error("$ did not replace the whole value")
	}
}

func TestPathString(t *testing.T) {
	t.Parallel()
	if s := pathString(path("result", "tools", 3, "name", "odd key", "x-y")); s != `$.result.tools[3].name["odd key"].x-y` {
		t.Errorf("pathString = %s", s)
	}
	// An element of a named list is printed by identity, and the path
	// printed selects it again (--ignore takes it as printed).
	p := append(path("result", "tools"), elem{index: 1, idKey: "name", idVal: `a "b"`}, elem{key: "description", index: -1})
	s := pathString(p)
	if s != `$.result.tools[?@.name=="a \"b\""].description` {
		t.Errorf("pathString = %s", s)
	}
	if !MustParsePath(s).match(p) {
		t.Errorf("%s does not select itself", s)
	}
}

// An expression that is no JSONPath is an error matching ErrBadPath
// wherever one is given, its text naming it.
func TestBadPathMatchesErrBadPath(t *testing.T) {
	t.Parallel()
	tr, err := ReadFile("testdata/greeter.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"ParsePath":   func() error { _, err := ParsePath("result.tools"); return err },
		"ParsePaths":  func() error { _, err := ParsePaths([]string{"$.ok", "$.a["}); return err },
		"ParseIgnore": func() error { _, err := ParseIgnore("tools/call:$$"); return err },
		"NewRecorder": func() error {
			_, err := NewRecorder(io.Discard, RecorderOptions{Redact: RedactOptions{Paths: []string{"token"}}})
			return err
		},
		"NewReplayer": func() error { _, err := NewReplayer(tr, ReplayOptions{Ignore: []string{"$.a..["}}); return err },
		"Verify": func() error {
			_, err := Verify(t.Context(), tr, nil, VerifyOptions{Ignore: []string{"$$$"}})
			return err
		},
	} {
		if err := call(); !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), "JSONPath") {
			t.Errorf("%s: %v, want an error matching ErrBadPath", name, err)
		}
	}
}

// A replay pinned to a session the trace does not hold is refused with an
// error matching ErrNotRecorded.
func TestReplaySessionNotRecorded(t *testing.T) {
	t.Parallel()
	tr, err := ReadFile("testdata/greeter.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewReplayer(tr, ReplayOptions{Session: 9})
	if !errors.Is(err, ErrNotRecorded) || err.Error() != "the trace has no session 9 (it has 1, numbered from 1)" {
		t.Errorf("session 9 of a trace of 1: %v", err)
	}
}
