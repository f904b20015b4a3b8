package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Schema is a compiled JSON Schema that validates values and explains
// failures in one line. It asserts formats (email, uri, date, date-time and
// a few more): the elicitation spec lists them as part of the form contract.
//
// mcpx validates one thing with JSON Schema: the content of an elicitation
// answer against the server's requestedSchema (spec 2025-11-25:
// client/elicitation, "Requested Schema", a flat object of primitive
// properties). So the validator is mcpx's own, small, and costs nothing
// until a schema is compiled: a general-purpose library compiles its
// metaschemas when the program starts, which was a third of a fast
// one-shot command's CPU (issue 13). It covers the validation vocabulary of
// drafts 4 to 2020-12 — type, enum, const, the numeric, string, array and
// object keywords (contains and the dependencies included),
// allOf/anyOf/oneOf/not, if/then/else and local $refs — and ignores
// annotations and keywords it does not know, as JSON Schema says (the
// unevaluated* keywords among them). A $ref to another document is refused: mcpx never fetches a
// server's schema.
type Schema struct {
	root *node
}

// node is one compiled (sub)schema.
type node struct {
	always *bool // a boolean schema

	types    []string
	enum     []any
	hasConst bool
	konst    any

	minimum, maximum, exclMin, exclMax, multipleOf *big.Rat

	minLength, maxLength int // -1 when absent
	pattern              *regexp.Regexp
	patternSrc, format   string

	items                        *node   // items (2020-12) or additionalItems after a tuple
	prefixItems                  []*node // prefixItems, or items as an array (drafts 4-2019)
	minItems, maxItems           int
	uniqueItems                  bool
	properties                   map[string]*node
	patternProps                 []patternNode
	additional                   *node
	required                     []string
	minProperties, maxProperties int
	dependentRequired            map[string][]string
	dependentSchemas             map[string]*node
	propertyNames                *node
	contains                     *node
	minContains, maxContains     int

	allOf, anyOf, oneOf []*node
	not                 *node
	ifN, thenN, elseN   *node
	ref                 *node
}

type patternNode struct {
	re *regexp.Regexp
	n  *node
}

// CompileSchema compiles a JSON Schema document, asserting formats.
// $schema is not looked at: mcpx never goes to the network for a server's
// schema.
func CompileSchema(raw json.RawMessage) (*Schema, error) { return compileSchema(raw, true) }

// compileSchema compiles raw, asserting formats or leaving them the
// annotations JSON Schema 2020-12 makes them by default (what a tool's
// inputSchema gets: a server may accept what a format check would not).
func compileSchema(raw json.RawMessage, assertFormat bool) (*Schema, error) {
	var doc any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	if _, err := d.Token(); err == nil {
		return nil, errors.New("schema is not JSON: more than one value")
	}
	c := &compiler{root: doc, byPtr: map[string]*node{}, assertFormat: assertFormat}
	n, err := c.compile(doc, "")
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	return &Schema{root: n}, nil
}

type compiler struct {
	root         any
	byPtr        map[string]*node // compiled subschemas by JSON pointer, for $ref
	assertFormat bool
}

func (c *compiler) compile(v any, ptr string) (*node, error) {
	if n := c.byPtr[ptr]; n != nil {
		return n, nil
	}
	n := &node{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minProperties: -1, maxProperties: -1, minContains: -1, maxContains: -1}
	c.byPtr[ptr] = n
	switch s := v.(type) {
	case bool:
		n.always = &s
		return n, nil
	case map[string]any:
		return n, c.fill(n, s, ptr)
	default:
		return nil, fmt.Errorf("at %s: a schema must be an object or a boolean", ptrOrRoot(ptr))
	}
}

func ptrOrRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

func (c *compiler) fill(n *node, s map[string]any, ptr string) error {
	bad := func(kw string) error { return fmt.Errorf("at %s: %s is invalid", ptrOrRoot(ptr+"/"+kw), kw) }
	sub := func(kw string) (*node, error) {
		v, ok := s[kw]
		if !ok {
			return nil, nil
		}
		return c.compile(v, ptr+"/"+escapePtr(kw))
	}
	list := func(kw string) ([]*node, error) {
		v, ok := s[kw]
		if !ok {
			return nil, nil
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, bad(kw)
		}
		out := make([]*node, len(arr))
		for i, x := range arr {
			var err error
			if out[i], err = c.compile(x, ptr+"/"+kw+"/"+strconv.Itoa(i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	rat := func(kw string) (*big.Rat, error) {
		v, ok := s[kw]
		if !ok {
			return nil, nil
		}
		num, ok := v.(json.Number)
		if !ok {
			return nil, bad(kw)
		}
		r, ok := new(big.Rat).SetString(num.String())
		if !ok {
			return nil, bad(kw)
		}
		return r, nil
	}
	count := func(kw string) (int, error) {
		v, ok := s[kw]
		if !ok {
			return -1, nil
		}
		num, ok := v.(json.Number)
		if !ok {
			return 0, bad(kw)
		}
		f, err := num.Float64()
		if err != nil || f < 0 || f != math.Trunc(f) {
			return 0, bad(kw)
		}
		return int(min(f, math.MaxInt32)), nil
	}
	var err error
	if ref, ok := s["$ref"]; ok {
		r, ok := ref.(string)
		if !ok {
			return bad("$ref")
		}
		if !strings.HasPrefix(r, "#") {
			return fmt.Errorf("at %s: mcpx does not fetch schema %s", ptrOrRoot(ptr), r)
		}
		target, p, err := c.resolve(r)
		if err != nil {
			return fmt.Errorf("at %s: %w", ptrOrRoot(ptr), err)
		}
		if n.ref, err = c.compile(target, p); err != nil {
			return err
		}
	}
	if t, ok := s["type"]; ok {
		switch t := t.(type) {
		case string:
			n.types = []string{t}
		case []any:
			for _, x := range t {
				name, ok := x.(string)
				if !ok {
					return bad("type")
				}
				n.types = append(n.types, name)
			}
		default:
			return bad("type")
		}
		for _, name := range n.types {
			if !slices.Contains([]string{"null", "boolean", "object", "array", "number", "string", "integer"}, name) {
				return bad("type")
			}
		}
	}
	if e, ok := s["enum"]; ok {
		arr, ok := e.([]any)
		if !ok {
			return bad("enum")
		}
		n.enum = arr
	}
	if k, ok := s["const"]; ok {
		n.hasConst, n.konst = true, k
	}
	if n.minimum, err = rat("minimum"); err != nil {
		return err
	}
	if n.maximum, err = rat("maximum"); err != nil {
		return err
	}
	// Draft 4 spells exclusive bounds as booleans beside minimum/maximum.
	for _, b := range []struct {
		kw    string
		bound **big.Rat
		excl  **big.Rat
	}{{"exclusiveMinimum", &n.minimum, &n.exclMin}, {"exclusiveMaximum", &n.maximum, &n.exclMax}} {
		switch v := s[b.kw].(type) {
		case nil:
		case bool:
			if v {
				*b.excl, *b.bound = *b.bound, nil
			}
		default:
			if *b.excl, err = rat(b.kw); err != nil {
				return err
			}
		}
	}
	if n.multipleOf, err = rat("multipleOf"); err != nil {
		return err
	}
	if n.multipleOf != nil && n.multipleOf.Sign() <= 0 {
		return bad("multipleOf")
	}
	if n.minLength, err = count("minLength"); err != nil {
		return err
	}
	if n.maxLength, err = count("maxLength"); err != nil {
		return err
	}
	if p, ok := s["pattern"]; ok {
		src, ok := p.(string)
		if !ok {
			return bad("pattern")
		}
		if n.pattern, err = regexp.Compile(src); err != nil {
			return fmt.Errorf("at %s: pattern %q is not a regular expression mcpx understands: %w", ptrOrRoot(ptr+"/pattern"), src, err)
		}
		n.patternSrc = src
	}
	if f, ok := s["format"].(string); ok && c.assertFormat {
		n.format = f
	}
	switch it := s["items"].(type) {
	case nil:
	case []any:
		if n.prefixItems, err = list("items"); err != nil {
			return err
		}
		if n.items, err = sub("additionalItems"); err != nil {
			return err
		}
	default:
		if n.items, err = sub("items"); err != nil {
			return err
		}
		_ = it
	}
	if _, ok := s["prefixItems"]; ok {
		if n.prefixItems, err = list("prefixItems"); err != nil {
			return err
		}
	}
	if n.minItems, err = count("minItems"); err != nil {
		return err
	}
	if n.maxItems, err = count("maxItems"); err != nil {
		return err
	}
	n.uniqueItems, _ = s["uniqueItems"].(bool)
	if p, ok := s["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return bad("properties")
		}
		n.properties = make(map[string]*node, len(props))
		for name, v := range props {
			if n.properties[name], err = c.compile(v, ptr+"/properties/"+escapePtr(name)); err != nil {
				return err
			}
		}
	}
	if p, ok := s["patternProperties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return bad("patternProperties")
		}
		for src, v := range props {
			re, err := regexp.Compile(src)
			if err != nil {
				return fmt.Errorf("at %s: pattern %q is not a regular expression mcpx understands: %w", ptrOrRoot(ptr+"/patternProperties"), src, err)
			}
			pn, err := c.compile(v, ptr+"/patternProperties/"+escapePtr(src))
			if err != nil {
				return err
			}
			n.patternProps = append(n.patternProps, patternNode{re, pn})
		}
	}
	if n.additional, err = sub("additionalProperties"); err != nil {
		return err
	}
	if r, ok := s["required"]; ok {
		arr, ok := r.([]any)
		if !ok {
			return bad("required")
		}
		for _, x := range arr {
			name, ok := x.(string)
			if !ok {
				return bad("required")
			}
			n.required = append(n.required, name)
		}
	}
	// dependencies (drafts 4 to 7) holds either kind; dependentRequired
	// and dependentSchemas (2019-09 on) one each.
	for _, kw := range []string{"dependencies", "dependentRequired", "dependentSchemas"} {
		v, ok := s[kw]
		if !ok {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return bad(kw)
		}
		for name, dep := range m {
			if list, ok := dep.([]any); ok && kw != "dependentSchemas" {
				var names []string
				for _, x := range list {
					str, ok := x.(string)
					if !ok {
						return bad(kw)
					}
					names = append(names, str)
				}
				if n.dependentRequired == nil {
					n.dependentRequired = map[string][]string{}
				}
				n.dependentRequired[name] = names
				continue
			}
			if kw == "dependentRequired" {
				return bad(kw)
			}
			sub, err := c.compile(dep, ptr+"/"+kw+"/"+escapePtr(name))
			if err != nil {
				return err
			}
			if n.dependentSchemas == nil {
				n.dependentSchemas = map[string]*node{}
			}
			n.dependentSchemas[name] = sub
		}
	}
	if n.propertyNames, err = sub("propertyNames"); err != nil {
		return err
	}
	if n.contains, err = sub("contains"); err != nil {
		return err
	}
	if n.minContains, err = count("minContains"); err != nil {
		return err
	}
	if n.maxContains, err = count("maxContains"); err != nil {
		return err
	}
	if n.minProperties, err = count("minProperties"); err != nil {
		return err
	}
	if n.maxProperties, err = count("maxProperties"); err != nil {
		return err
	}
	if n.allOf, err = list("allOf"); err != nil {
		return err
	}
	if n.anyOf, err = list("anyOf"); err != nil {
		return err
	}
	if n.oneOf, err = list("oneOf"); err != nil {
		return err
	}
	if n.not, err = sub("not"); err != nil {
		return err
	}
	if n.ifN, err = sub("if"); err != nil {
		return err
	}
	if n.thenN, err = sub("then"); err != nil {
		return err
	}
	if n.elseN, err = sub("else"); err != nil {
		return err
	}
	return nil
}

// resolve finds the subschema a local $ref ("#", "#/$defs/x") points to.
func (c *compiler) resolve(ref string) (any, string, error) {
	frag, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil {
		return nil, "", fmt.Errorf("$ref %q: %w", ref, err)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, "", fmt.Errorf("$ref %q: only JSON pointers within the schema are supported", ref)
	}
	v := c.root
	if frag == "" {
		return v, "", nil
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, "", fmt.Errorf("$ref %q points to nothing", ref)
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, "", fmt.Errorf("$ref %q points to nothing", ref)
			}
			v = x[i]
		default:
			return nil, "", fmt.Errorf("$ref %q points to nothing", ref)
		}
	}
	return v, frag, nil
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Validate checks raw against the schema. The error lists each failure as
// "at /path: reason".
func (s *Schema) Validate(raw json.RawMessage) error {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if _, err := d.Token(); err == nil {
		return errors.New("not JSON: more than one value")
	}
	var leaves []string
	s.root.validate(v, nil, &leaves, 0)
	if len(leaves) == 0 {
		return nil
	}
	return errors.New(strings.Join(leaves, "; "))
}

// problems returns each way raw fails the schema, one line each; err is
// for raw that is not JSON.
func (s *Schema) problems(raw json.RawMessage) ([]string, error) {
	err := s.Validate(raw)
	if err == nil {
		return nil, nil
	}
	if strings.HasPrefix(err.Error(), "not JSON: ") {
		return nil, err
	}
	var leaves []string
	s.root.validate(mustDecode(raw), nil, &leaves, 0)
	return leaves, nil
}

// mustDecode decodes raw, which Validate has found to be JSON.
func mustDecode(raw json.RawMessage) any {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	_ = d.Decode(&v)
	return v
}

// maxDepth bounds $ref recursion on a value (a schema that refers to
// itself without consuming the value).
const maxDepth = 200

// validate appends to leaves one message per failure of v (at loc).
func (n *node) validate(v any, loc []string, leaves *[]string, depth int) {
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if len(loc) == 0 {
			*leaves = append(*leaves, msg)
			return
		}
		*leaves = append(*leaves, "at /"+strings.Join(loc, "/")+": "+msg)
	}
	if depth > maxDepth {
		fail("schema recursion is too deep")
		return
	}
	if n.always != nil {
		if !*n.always {
			fail("false schema")
		}
		return
	}
	if n.ref != nil {
		n.ref.validate(v, loc, leaves, depth+1)
	}
	if len(n.types) > 0 && !typeMatches(v, n.types) {
		got := jsonTypeOf(v)
		if got == "integer" {
			got = "number"
		}
		var want []string
		for _, t := range []string{"null", "boolean", "number", "integer", "string", "array", "object"} {
			if slices.Contains(n.types, t) {
				want = append(want, t)
			}
		}
		fail("got %s, want %s", got, strings.Join(want, " or "))
		return
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqualValues(e, v) }) {
		fail("%s", enumMessage(n.enum))
	}
	if n.hasConst && !jsonEqualValues(n.konst, v) {
		switch n.konst.(type) {
		case []any, map[string]any:
			fail("'const' failed")
		default:
			fail("value must be %s", display(n.konst))
		}
	}
	switch x := v.(type) {
	case json.Number:
		n.validateNumber(x, fail)
	case string:
		n.validateString(x, fail)
	case []any:
		n.validateArray(x, loc, leaves, depth, fail)
	case map[string]any:
		n.validateObject(x, loc, leaves, depth, fail)
	}
	for _, sub := range n.allOf {
		sub.validate(v, loc, leaves, depth+1)
	}
	if len(n.anyOf) > 0 {
		var all []string
		matched := false
		for _, sub := range n.anyOf {
			var l []string
			sub.validate(v, loc, &l, depth+1)
			if len(l) == 0 {
				matched = true
				break
			}
			all = append(all, l...)
		}
		if !matched {
			*leaves = append(*leaves, all...)
		}
	}
	if len(n.oneOf) > 0 {
		var all []string
		var ok []int
		for i, sub := range n.oneOf {
			var l []string
			sub.validate(v, loc, &l, depth+1)
			if len(l) == 0 {
				ok = append(ok, i)
			}
			all = append(all, l...)
		}
		switch {
		case len(ok) == 0:
			*leaves = append(*leaves, all...)
		case len(ok) > 1:
			fail("'oneOf' failed, subschemas %d, %d matched", ok[0], ok[1])
		}
	}
	if n.not != nil {
		var l []string
		n.not.validate(v, loc, &l, depth+1)
		if len(l) == 0 {
			fail("'not' failed")
		}
	}
	if n.ifN != nil {
		var l []string
		n.ifN.validate(v, loc, &l, depth+1)
		if len(l) == 0 && n.thenN != nil {
			n.thenN.validate(v, loc, leaves, depth+1)
		} else if len(l) > 0 && n.elseN != nil {
			n.elseN.validate(v, loc, leaves, depth+1)
		}
	}
}

func (n *node) validateNumber(x json.Number, fail func(string, ...any)) {
	r, ok := new(big.Rat).SetString(x.String())
	if !ok {
		return
	}
	f := func(r *big.Rat) float64 { v, _ := r.Float64(); return v }
	if n.minimum != nil && r.Cmp(n.minimum) < 0 {
		fail("minimum: got %v, want %v", f(r), f(n.minimum))
	}
	if n.maximum != nil && r.Cmp(n.maximum) > 0 {
		fail("maximum: got %v, want %v", f(r), f(n.maximum))
	}
	if n.exclMin != nil && r.Cmp(n.exclMin) <= 0 {
		fail("exclusiveMinimum: got %v, want %v", f(r), f(n.exclMin))
	}
	if n.exclMax != nil && r.Cmp(n.exclMax) >= 0 {
		fail("exclusiveMaximum: got %v, want %v", f(r), f(n.exclMax))
	}
	if n.multipleOf != nil {
		if q := new(big.Rat).Quo(r, n.multipleOf); !q.IsInt() {
			fail("multipleOf: got %v, want %v", f(r), f(n.multipleOf))
		}
	}
}

func (n *node) validateString(x string, fail func(string, ...any)) {
	length := utf8.RuneCountInString(x)
	if n.minLength >= 0 && length < n.minLength {
		fail("minLength: got %d, want %d", length, n.minLength)
	}
	if n.maxLength >= 0 && length > n.maxLength {
		fail("maxLength: got %d, want %d", length, n.maxLength)
	}
	if n.pattern != nil && !n.pattern.MatchString(x) {
		fail("%s does not match pattern %s", quote(x), quote(n.patternSrc))
	}
	if check := formats[n.format]; check != nil {
		if err := check(x); err != nil {
			fail("%s is not valid %s: %v", quote(x), n.format, err)
		}
	}
}

func (n *node) validateArray(x []any, loc []string, leaves *[]string, depth int, fail func(string, ...any)) {
	if n.minItems >= 0 && len(x) < n.minItems {
		fail("minItems: got %d, want %d", len(x), n.minItems)
	}
	if n.maxItems >= 0 && len(x) > n.maxItems {
		fail("maxItems: got %d, want %d", len(x), n.maxItems)
	}
	if n.uniqueItems {
	dup:
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				if jsonEqualValues(x[i], x[j]) {
					fail("items at %d and %d are equal", i, j)
					break dup
				}
			}
		}
	}
	if n.contains != nil {
		var matched []int
		var misses []string // why the others did not match
		for i, item := range x {
			var l []string
			n.contains.validate(item, append(slices.Clip(loc), strconv.Itoa(i)), &l, depth+1)
			if len(l) == 0 {
				matched = append(matched, i)
			}
			misses = append(misses, l...)
		}
		want := 1
		if n.minContains >= 0 {
			want = n.minContains
		}
		switch {
		case len(matched) < want && len(misses) > 0:
			*leaves = append(*leaves, misses...)
		case len(matched) < want && len(matched) == 0:
			fail("min %d items required to match contains schema, but none matched", want)
		case len(matched) < want:
			fail("min %d items required to match contains schema, but matched %d items at %s", want, len(matched), joinInts(matched))
		case n.maxContains >= 0 && len(matched) > n.maxContains:
			fail("max %d items required to match contains schema, but matched %d items at %s", n.maxContains, len(matched), joinInts(matched))
		}
	}
	for i, item := range x {
		sub := n.items
		if i < len(n.prefixItems) {
			sub = n.prefixItems[i]
		}
		if sub != nil {
			sub.validate(item, append(slices.Clip(loc), strconv.Itoa(i)), leaves, depth+1)
		}
	}
}

func (n *node) validateObject(x map[string]any, loc []string, leaves *[]string, depth int, fail func(string, ...any)) {
	if n.minProperties >= 0 && len(x) < n.minProperties {
		fail("minProperties: got %d, want %d", len(x), n.minProperties)
	}
	if n.maxProperties >= 0 && len(x) > n.maxProperties {
		fail("maxProperties: got %d, want %d", len(x), n.maxProperties)
	}
	var missing []string
	for _, r := range n.required {
		if _, ok := x[r]; !ok {
			missing = append(missing, r)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		fail("missing property %s", quote(missing[0]))
	default:
		quoted := make([]string, len(missing))
		for i, m := range missing {
			quoted[i] = quote(m)
		}
		fail("missing properties %s", strings.Join(quoted, ", "))
	}
	names := make([]string, 0, len(x))
	for name := range x {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if deps, ok := n.dependentRequired[name]; ok {
			var missing []string
			for _, d := range deps {
				if _, has := x[d]; !has {
					missing = append(missing, quote(d))
				}
			}
			if len(missing) > 0 {
				fail("properties %s required, if %s exists", strings.Join(missing, ", "), quote(name))
			}
		}
		if sub, ok := n.dependentSchemas[name]; ok {
			sub.validate(x, loc, leaves, depth+1)
		}
		if n.propertyNames != nil {
			// A name is judged where the object is.
			n.propertyNames.validate(name, loc, leaves, depth+1)
		}
	}
	var extra []string
	for _, name := range names {
		at := append(slices.Clip(loc), escapePtr(name))
		known := false
		if p := n.properties[name]; p != nil {
			known = true
			p.validate(x[name], at, leaves, depth+1)
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(name) {
				known = true
				pp.n.validate(x[name], at, leaves, depth+1)
			}
		}
		if !known && n.additional != nil {
			if n.additional.always != nil && !*n.additional.always {
				extra = append(extra, quote(name))
				continue
			}
			n.additional.validate(x[name], at, leaves, depth+1)
		}
	}
	if len(extra) > 0 {
		fail("additional properties %s not allowed", strings.Join(extra, ", "))
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// typeMatches reports whether v is of one of the JSON Schema types.
func typeMatches(v any, types []string) bool {
	t := jsonTypeOf(v)
	for _, want := range types {
		if want == t || want == "number" && t == "integer" {
			return true
		}
	}
	return false
}

// jsonTypeOf names v's JSON Schema type; a number without a fraction is
// an integer (1.0 too, as JSON Schema says).
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if r, ok := new(big.Rat).SetString(x.String()); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// jsonEqualValues compares two decoded JSON values; numbers by value.
func jsonEqualValues(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, ok1 := new(big.Rat).SetString(x.String())
		ry, ok2 := new(big.Rat).SetString(y.String())
		return ok1 && ok2 && rx.Cmp(ry) == 0
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, jsonEqualValues)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqualValues(v, w) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func enumMessage(want []any) string {
	var shown []string
	for _, v := range want {
		switch v.(type) {
		case []any, map[string]any:
			return "'enum' failed"
		}
		shown = append(shown, display(v))
	}
	if len(shown) == 1 {
		return "value must be " + shown[0]
	}
	return "value must be one of " + strings.Join(shown, ", ")
}

// quote shows a string from the server or the person in single quotes,
// with control characters escaped.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

// display shows a primitive JSON value.
func display(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case nil:
		return "<nil>"
	case []any, map[string]any:
		return "value"
	default:
		return fmt.Sprint(x)
	}
}

// formats asserts the formats a form may carry (spec 2025-11-25:
// client/elicitation, "Requested Schema": email, uri, date, date-time) and
// a few common others; an unknown format is an annotation only.
var formats = map[string]func(string) error{
	"email":     checkEmail,
	"uri":       checkURI,
	"date":      checkDate,
	"date-time": checkDateTime,
	"time":      checkTime,
	"ipv4":      checkIPv4,
	"ipv6":      checkIPv6,
	"uuid":      checkUUID,
}

func checkEmail(s string) error {
	if len(s) > 254 {
		return errors.New("more than 255 characters long")
	}
	// A quoted local part may hold an @: the domain is after the last one.
	i := strings.LastIndex(s, "@")
	if i < 0 {
		return errors.New("missing @")
	}
	local, domain := s[:i], s[i+1:]
	if len(local) > 64 {
		return errors.New("local part more than 64 characters long")
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		if strings.ContainsAny(local[1:len(local)-1], `\"`) {
			return errors.New("backslash and quote are not allowed within quoted local part")
		}
	} else {
		switch {
		case strings.HasPrefix(local, "."):
			return errors.New("starts with dot")
		case strings.HasSuffix(local, "."):
			return errors.New("ends with dot")
		case strings.Contains(local, ".."):
			return errors.New("consecutive dots")
		}
		for _, r := range local {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".!#$%&'*+-/=?^_`{|}~", r)) {
				return fmt.Errorf("invalid character %q", r)
			}
		}
	}
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		lit := domain[1 : len(domain)-1]
		if ip, ok := strings.CutPrefix(lit, "IPv6:"); ok {
			if err := checkIPv6(ip); err != nil {
				return fmt.Errorf("invalid ipv6 address: %v", err)
			}
			return nil
		}
		if err := checkIPv4(lit); err != nil {
			return fmt.Errorf("invalid ipv4 address: %v", err)
		}
		return nil
	}
	if err := checkHostname(domain); err != nil {
		return fmt.Errorf("invalid domain: %v", err)
	}
	return nil
}

func checkHostname(s string) error {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return errors.New("more than 253 characters long")
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("label must be 1 to 63 characters long")
		}
		if label[0] == '-' {
			return errors.New("label starts with hyphen")
		}
		if label[len(label)-1] == '-' {
			return errors.New("label ends with hyphen")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("invalid character %q", r)
			}
		}
	}
	return nil
}

func checkURI(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	// url.Parse does not check an IPv6 host.
	if host := u.Hostname(); strings.Contains(host, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
			return errors.New("ipv6 address not enclosed in brackets")
		}
		if err := checkIPv6(host); err != nil {
			return fmt.Errorf("invalid ipv6 address: %v", err)
		}
	}
	if !u.IsAbs() {
		return errors.New("relative url")
	}
	return nil
}

func checkDate(s string) error {
	_, err := time.Parse("2006-01-02", s)
	return err
}

func checkDateTime(s string) error {
	if len(s) < 20 {
		return errors.New("less than 20 characters long")
	}
	if s[10] != 't' && s[10] != 'T' {
		return errors.New("11th character must be t or T")
	}
	if err := checkDate(s[:10]); err != nil {
		return fmt.Errorf("invalid date element: %v", err)
	}
	if err := checkTime(s[11:]); err != nil {
		return fmt.Errorf("invalid time element: %v", err)
	}
	return nil
}

// checkTime accepts RFC 3339's full-time: hh:mm:ss, a fraction, and Z or
// an offset; a leap second (:60) only at 23:59 UTC.
func checkTime(s string) error {
	if len(s) < 9 {
		return errors.New("less than 9 characters long")
	}
	if s[2] != ':' || s[5] != ':' {
		return errors.New("missing colon in correct place")
	}
	two := func(t string) (int, bool) {
		if t[0] < '0' || t[0] > '9' || t[1] < '0' || t[1] > '9' {
			return 0, false
		}
		return int(t[0]-'0')*10 + int(t[1]-'0'), true
	}
	h, ok1 := two(s[0:2])
	m, ok2 := two(s[3:5])
	sec, ok3 := two(s[6:8])
	if !ok1 || !ok2 || !ok3 {
		return errors.New("invalid hour/min/sec")
	}
	if h > 23 || m > 59 || sec > 60 {
		return errors.New("hour/min/sec out of range")
	}
	rest := s[8:]
	if strings.HasPrefix(rest, ".") {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return errors.New("no digits in second fraction")
		}
		rest = rest[i:]
	}
	offset := 0
	if rest != "Z" && rest != "z" {
		if len(rest) != 6 {
			return errors.New("offset must be 6 characters long")
		}
		if rest[0] != '+' && rest[0] != '-' {
			return errors.New("offset must begin with plus/minus")
		}
		if rest[3] != ':' {
			return errors.New("missing colon in offset in correct place")
		}
		oh, ok1 := two(rest[1:3])
		om, ok2 := two(rest[4:6])
		if !ok1 || !ok2 {
			return errors.New("invalid hour/min in offset")
		}
		if oh > 23 || om > 59 {
			return errors.New("hour/min in offset out of range")
		}
		offset = oh*60 + om
		if rest[0] == '+' {
			offset = -offset
		}
	}
	if sec == 60 {
		utc := ((h*60+m+offset)%(24*60) + 24*60) % (24 * 60)
		if utc != 23*60+59 {
			return errors.New("invalid leap second")
		}
	}
	return nil
}

func checkIPv4(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return errors.New("not an IPv4 address")
	}
	return nil
}

func checkIPv6(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return errors.New("not an IPv6 address")
	}
	return nil
}

func checkUUID(s string) error {
	if len(s) != 36 {
		return errors.New("not 36 characters")
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return fmt.Errorf("no hyphen at %d", i)
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return fmt.Errorf("invalid hex digit %q", r)
			}
		}
	}
	return nil
}
