package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Path is a compiled JSONPath expression. mcpx implements a small,
// documented subset of RFC 9535, enough to name parts of JSON-RPC
// messages:
//
//	$              the whole message
//	.key  ['key']  ["key"]   a member of an object
//	[n]            element n of an array (from 0)
//	.*  [*]        every member or element
//	..key  ..*  ..[n]  ..['key']   descendants at any depth
//	[?@.name=='x']  the element of a list of named things (see below)
//
// Quoted names take the escapes of RFC 9535 (\n, \t, \", \', \\, \uXXXX
// and the other escapes of JSON), so a path that a diff prints selects
// what it names. Filters, slices and unions are not supported and are
// rejected with an error. Paths are matched against the whole JSON-RPC
// message, so a tool call's arguments are $.params.arguments and a
// result's field is $.result.field.
//
// The one filter is equality of a member with a string, and it selects
// only elements of the lists that verify compares by identity rather than
// by position (see namedList): tools and prompts by name, resources by
// uri, resource templates by uriTemplate. A difference in such a list is
// printed that way ($.result.tools[?@.name=="echo"].description), so it
// can be passed to --ignore as printed; an index ([0]) selects the
// element at that position in the recorded list.
//
// Why not an RFC 9535 library: a Path is a matcher of concrete paths, so
// that redaction (findSpans) and the diffs walk a frame's raw bytes once
// and replace values in place, keeping the peer's bytes and costing about
// the frame's size; a query library evaluates against a decoded document
// and would add a decode and a set of located paths per frame. The dot
// names also accept '-' and '/' after the first character ($.x-y,
// $.a/b), which pathString prints in diffs and people pass to --ignore;
// RFC 9535's shorthand does not, so a strict library would refuse paths
// that work today. The libraries evaluated (ohler55/ojg, speakeasy-api/
// jsonpath, PaesslerAG/jsonpath, spyzhov/ajson) either do not follow RFC
// 9535 where it matters here (ojg decodes surrogate pairs wrongly and
// matches slices and filters against any path) or evaluate on yaml.Node
// and bring YAML and OpenAPI modules into record, whose dependencies are
// to stay the standard library.
type Path struct {
	src  string
	segs []segment
}

type segKind int

const (
	segName segKind = iota
	segIndex
	segWild
	segFilter // [?@.name=='value']: name is the member, value the string
)

type segment struct {
	descend bool // ".." before the selector
	kind    segKind
	name    string
	value   string // for segFilter
	index   int
}

// elem is one step of a concrete path: an object key or an array index.
// An element of a list of named things (see namedList) also carries its
// identity: the member that names it and that member's value.
type elem struct {
	key   string
	index int // -1 for object members
	idKey string
	idVal string
}

// ErrBadPath is matched by the error of ParsePath for an expression it
// cannot compile, and so by the errors of everything that takes JSONPath
// expressions (ignores, redactions: ParseIgnore, NewReplayer, Verify,
// NewRecorder).
var ErrBadPath = errors.New("bad JSONPath")

// ParsePath compiles a JSONPath expression of the supported subset.
func ParsePath(s string) (*Path, error) {
	p := &Path{src: s}
	src := strings.TrimSpace(s)
	if !strings.HasPrefix(src, "$") {
		return nil, &matchingError{fmt.Sprintf("JSONPath %q must start with $ (e.g. $.result.tools[0].name or $..timestamp)", s), ErrBadPath}
	}
	i := 1
	fail := func(why string) (*Path, error) {
		return nil, &matchingError{fmt.Sprintf("JSONPath %q: %s at offset %d (supported: $, .key, ['key'], [n], [*], .*, ..key)", s, why, i), ErrBadPath}
	}
	for i < len(src) {
		var seg segment
		if strings.HasPrefix(src[i:], "..") {
			seg.descend = true
			i += 2
		} else if src[i] == '.' {
			i++
		} else if src[i] != '[' {
			return fail("expected . or [")
		}
		if i < len(src) && src[i] != '[' {
			// The dot forms: .name and .*
			if seg.descend || src[i-1] == '.' {
				if src[i] == '*' {
					seg.kind = segWild
					i++
					p.segs = append(p.segs, seg)
					continue
				}
				j := i
				for j < len(src) && !strings.ContainsRune(".[]*$ '\"", rune(src[j])) {
					j++
				}
				if j == i {
					return fail("expected a member name")
				}
				seg.kind, seg.name = segName, src[i:j]
				i = j
				p.segs = append(p.segs, seg)
				continue
			}
		}
		if i >= len(src) || src[i] != '[' {
			return fail("expected a member name, * or [")
		}
		i++
		switch {
		case i < len(src) && src[i] == '*':
			seg.kind = segWild
			i++
		case i < len(src) && src[i] == '?':
			name, value, end, why := filterSelector(src, i)
			if why != "" {
				i = end
				return fail(why)
			}
			seg.kind, seg.name, seg.value = segFilter, name, value
			i = end
		case i < len(src) && (src[i] == '\'' || src[i] == '"'):
			name, end, why := quotedName(src, i)
			if why != "" {
				i = end
				return fail(why)
			}
			seg.kind, seg.name = segName, name
			i = end
		default:
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(src[i:j])
			if err != nil {
				return fail("expected an index, * or a quoted name inside []")
			}
			seg.kind, seg.index = segIndex, n
			i = j
		}
		if i >= len(src) || src[i] != ']' {
			return fail("expected ]")
		}
		i++
		p.segs = append(p.segs, seg)
	}
	return p, nil
}

// filterSelector reads the filter starting at src[i] ('?'): @.name or
// @['name'], ==, and a quoted string. It returns the member name, the
// string and the offset after it, or why it is malformed and where.
func filterSelector(src string, i int) (name, value string, end int, why string) {
	const want = "a filter of the form ?@.name=='value'"
	i++ // ?
	for i < len(src) && src[i] == ' ' {
		i++
	}
	if !strings.HasPrefix(src[i:], "@") {
		return "", "", i, want
	}
	i++
	switch {
	case strings.HasPrefix(src[i:], "."):
		j := i + 1
		for j < len(src) && !strings.ContainsRune(".[]*$ '\"=!<>()", rune(src[j])) {
			j++
		}
		if j == i+1 {
			return "", "", j, want
		}
		name, i = src[i+1:j], j
	case strings.HasPrefix(src[i:], "['") || strings.HasPrefix(src[i:], `["`):
		n, e, w := quotedName(src, i+1)
		if w != "" {
			return "", "", e, w
		}
		if e >= len(src) || src[e] != ']' {
			return "", "", e, want
		}
		name, i = n, e+1
	default:
		return "", "", i, want
	}
	for i < len(src) && src[i] == ' ' {
		i++
	}
	if !strings.HasPrefix(src[i:], "==") {
		return "", "", i, want + " (only == with a string is supported)"
	}
	i += 2
	for i < len(src) && src[i] == ' ' {
		i++
	}
	if i >= len(src) || src[i] != '\'' && src[i] != '"' {
		return "", "", i, want + " (only == with a string is supported)"
	}
	value, i, why = quotedName(src, i)
	if why != "" {
		return "", "", i, why
	}
	for i < len(src) && src[i] == ' ' {
		i++
	}
	return name, value, i, ""
}

// quotedName reads the quoted member name starting at src[i] with the
// escapes of RFC 9535 section 2.3.1.1 (those of JSON, plus \' ). It
// returns the name and the offset after the closing quote, or why it is
// malformed and where.
func quotedName(src string, i int) (name string, end int, why string) {
	q := src[i]
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		c := src[j]
		switch {
		case c == q:
			return b.String(), j + 1, ""
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		if j+1 >= len(src) {
			break
		}
		j++
		switch e := src[j]; e {
		case '\'', '"', '/', '\\':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, n := hexRune(src[j+1:])
			if n == 0 {
				return "", j, "invalid \\u escape in a quoted name"
			}
			if utf16.IsSurrogate(r) {
				// A surrogate pair: \uD83D\uDE00.
				if !strings.HasPrefix(src[j+1+n:], "\\u") {
					return "", j, "unpaired surrogate in a quoted name"
				}
				lo, m := hexRune(src[j+3+n:])
				if r = utf16.DecodeRune(r, lo); m == 0 || r == utf8.RuneError {
					return "", j, "unpaired surrogate in a quoted name"
				}
				n += 2 + m
			}
			b.WriteRune(r)
			j += n
		default:
			return "", j, fmt.Sprintf("invalid escape \\%c in a quoted name", e)
		}
	}
	return "", len(src), "unterminated quoted name"
}

// hexRune decodes the four hex digits at the start of s; n is 0 when there
// are not four.
func hexRune(s string) (r rune, n int) {
	if len(s) < 4 {
		return 0, 0
	}
	v, err := strconv.ParseUint(s[:4], 16, 32)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}

// MustParsePath is ParsePath for expressions known to be valid; it panics
// on an error.
func MustParsePath(s string) *Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

// String returns the expression as written.
func (p *Path) String() string { return p.src }

// ParsePaths compiles several expressions.
func ParsePaths(exprs []string) ([]*Path, error) {
	var out []*Path
	for _, e := range exprs {
		p, err := ParsePath(e)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (s segment) matches(e elem) bool {
	switch s.kind {
	case segWild:
		return true
	case segName:
		return e.index < 0 && e.key == s.name
	case segIndex:
		return e.index >= 0 && e.index == s.index
	case segFilter:
		return e.index >= 0 && e.idKey == s.name && e.idVal == s.value
	}
	return false
}

// match reports whether the concrete path is selected by p.
func (p *Path) match(path []elem) bool { return matchSegs(p.segs, path) }

func matchSegs(segs []segment, path []elem) bool {
	if len(segs) == 0 {
		return len(path) == 0
	}
	s := segs[0]
	if !s.descend {
		return len(path) > 0 && s.matches(path[0]) && matchSegs(segs[1:], path[1:])
	}
	for k := range path {
		if s.matches(path[k]) && matchSegs(segs[1:], path[k+1:]) {
			return true
		}
	}
	return false
}

func anyMatch(paths []*Path, path []elem) bool {
	for _, p := range paths {
		if p.match(path) {
			return true
		}
	}
	return false
}

// removePaths removes from a decoded JSON value (as produced by
// json.Unmarshal into any) every node that one of paths selects: object
// members are deleted, array elements replaced by the string "<ignored>"
// so that the other elements keep their indexes. It returns the new value
// (the root itself is replaced when $ is selected).
func removePaths(v any, paths []*Path) any { return removePathsUnder(v, nil, paths) }

// removePathsUnder is removePaths for a value found at path in the whole
// message (paths are matched from the message's root).
func removePathsUnder(v any, at []elem, paths []*Path) any {
	if len(paths) == 0 {
		return v
	}
	if anyMatch(paths, at) {
		return ignoredValue
	}
	path := append([]elem(nil), at...)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				path = append(path, elem{key: k, index: -1})
				if anyMatch(paths, path) {
					delete(x, k)
				} else {
					walk(c)
				}
				path = path[:len(path)-1]
			}
		case []any:
			key := namedList(path)
			for i, c := range x {
				path = append(path, elem{index: i})
				if key != "" {
					if o, ok := c.(map[string]any); ok {
						if id, ok := o[key].(string); ok {
							path[len(path)-1].idKey, path[len(path)-1].idVal = key, id
						}
					}
				}
				if anyMatch(paths, path) {
					x[i] = ignoredValue
				} else {
					walk(c)
				}
				path = path[:len(path)-1]
			}
		}
	}
	walk(v)
	return v
}

// ignoredValue replaces array elements removed by --ignore.
const ignoredValue = "<ignored>"

// pathString renders a concrete path as JSONPath, for diffs.
func pathString(path []elem) string {
	var b strings.Builder
	b.WriteString("$")
	for _, e := range path {
		if e.index >= 0 && e.idKey != "" {
			fmt.Fprintf(&b, "[?@.%s==%s]", e.idKey, quoteName(e.idVal))
			continue
		}
		if e.index >= 0 {
			fmt.Fprintf(&b, "[%d]", e.index)
			continue
		}
		if isPlainName(e.key) {
			b.WriteString(".")
			b.WriteString(e.key)
			continue
		}
		b.WriteString("[")
		b.WriteString(quoteName(e.key))
		b.WriteString("]")
	}
	return b.String()
}

// quoteName quotes a name or string for a path. A JSON string is an RFC
// 9535 string literal; HTML escaping is not wanted (ParsePath reads \u003c
// back, but people read the diff).
func quoteName(s string) string {
	var q bytes.Buffer
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimSuffix(q.Bytes(), []byte("\n")))
}

// namedList returns the member that identifies the elements of the list
// at path, when it is a list of named things in a result: tools and
// prompts by name, resources by uri, resource templates by uriTemplate
// (spec: server/tools, server/prompts, server/resources). Verify compares
// such lists by identity, so that a renamed or reordered entry is one
// difference rather than one per position.
func namedList(path []elem) string {
	if len(path) != 2 || path[0].index >= 0 || path[0].key != "result" || path[1].index >= 0 {
		return ""
	}
	switch path[1].key {
	case "tools", "prompts":
		return "name"
	case "resources":
		return "uri"
	case "resourceTemplates":
		return "uriTemplate"
	}
	return ""
}

func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '/')
		if !ok {
			return false
		}
	}
	return true
}
