package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Schema is a compiled JSON Schema that validates values and explains
// failures in one line. Validation is google/jsonschema-go's (draft 2020-12,
// the default dialect of MCP 2025-11-25, and draft-07, which older servers
// write): unlike a library that compiles its metaschemas when the program
// starts, it compiles nothing until a schema is used (issue 13); its package
// initialisation (reflection over its Schema type, 0.75–1 ms) still runs
// at every start, measured in README's Performance.
//
// CompileSchema's schemas also assert the formats an elicitation form may
// name (email, uri, date, date-time: MCP 2025-11-25, client/elicitation,
// "Supported Schema Types"), on the form's root and its properties (a
// requested schema is a flat object of primitive fields); the library
// itself treats format as an annotation only.
type Schema struct {
	root         *jsonschema.Schema
	resolved     *jsonschema.Resolved
	assertFormat bool
	// depth is how deep in the explanation of a failure this schema, a
	// part of another's, is checked (see maxExplainDepth).
	depth int
	// plainRefs is set when the document's only $refs are to its $defs
	// or definitions: a part of it can then be checked alone (see part).
	plainRefs bool
	// at is where in the value being explained the value this part
	// checks is, for the locations a reason put together names.
	at []string
	// patternSize is the size of the largest regular expression of the
	// schema's patterns, in instructions (see maxPatternWork).
	patternSize int
}

// maxPatternWork bounds the work of matching a schema's patterns against
// a value, counted as the size of the largest pattern (instructions of
// its compiled program) times the length of the longest string in the
// value: Go's regular expressions take time proportional to that product,
// and a server's schema can ask for a megabyte pattern against its own
// megabyte default (an elicitation form), an hour of work that nothing
// could interrupt. A value over the bound is not checked (a
// *PatternWorkError); at worst a few seconds' work (about 9 ns a unit:
// (?:a|aa)*b against a's), and real patterns against real strings are
// far below it (a 200-instruction pattern against a 100 KB string is a
// tenth of it).
const maxPatternWork = 1 << 28

// PatternWorkError reports a value that is not checked against a schema
// because matching its patterns would take too long (see maxPatternWork).
type PatternWorkError struct {
	// PatternSize is the largest pattern's size in instructions.
	PatternSize int
	// StringLen is the length in bytes of the longest string of the value.
	StringLen int
}

func (e *PatternWorkError) Error() string {
	return fmt.Sprintf("matching the schema's pattern (%d instructions) against a string of %d bytes would take too long", e.PatternSize, e.StringLen)
}

// largestPattern returns the size in instructions of the largest
// compiled pattern of s and its subschemas (pattern, and the keys of
// patternProperties); 0 when there is none.
func largestPattern(s *jsonschema.Schema) int {
	if s == nil {
		return 0
	}
	size := patternSize(s.Pattern)
	for k := range s.PatternProperties {
		size = max(size, patternSize(k))
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.Defs, s.Definitions, s.DependentSchemas} {
		for _, c := range m {
			size = max(size, largestPattern(c))
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray, s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range list {
			size = max(size, largestPattern(c))
		}
	}
	for _, c := range []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems, s.AdditionalProperties,
		s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema} {
		size = max(size, largestPattern(c))
	}
	return size
}

// patternSize returns the number of instructions of pattern's compiled
// program, 0 for none (or one that does not compile, which the library
// reports).
func patternSize(pattern string) int {
	if pattern == "" {
		return 0
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	return len(prog.Inst)
}

// longestString returns the length of the longest string in v, a
// decoded JSON value, object keys included.
func longestString(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := 0
		for _, e := range x {
			n = max(n, longestString(e))
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range x {
			n = max(n, len(k), longestString(e))
		}
		return n
	}
	return 0
}

// maxSchemaNesting bounds the nesting of a schema mcpx compiles, in
// levels of JSON: the JSON Schema library decodes each subschema again
// for every level above it, so a server's schema 4,000 levels deep (80 KB)
// took seconds of CPU to compile, for each call and each form. A schema a
// person fills or a tool takes is a few dozen levels deep at most.
const maxSchemaNesting = 128

// CompileSchema compiles a JSON Schema document. A $schema naming a
// dialect the library does not know is dropped rather than fetched (the
// schema is then read as 2020-12): mcpx never goes to the network for a
// server's schema.
func CompileSchema(raw json.RawMessage) (*Schema, error) { return compileSchema(raw, true) }

// compileSchema compiles raw, asserting formats or leaving them the
// annotations JSON Schema 2020-12 makes them by default (what a tool's
// inputSchema gets: a server may accept what a format check would not).
func compileSchema(raw json.RawMessage, assertFormat bool) (*Schema, error) {
	if !json.Valid(raw) {
		var v any
		return nil, fmt.Errorf("schema is not JSON: %w", json.Unmarshal(raw, &v))
	}
	if rawjson.NestedBeyond(raw, maxSchemaNesting) {
		return nil, fmt.Errorf("invalid schema: it is nested deeper than the %d levels of JSON mcpx checks", maxSchemaNesting)
	}
	root := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, root); err != nil {
		return nil, fmt.Errorf("invalid schema: %s", schemaDecodeProblem(raw, err))
	}
	if at, found := refCircle(raw); found {
		where := "the root"
		if at != "" {
			where = at
		}
		return nil, fmt.Errorf("invalid schema: at %s: a $ref leads back here without going into the value, a circle the check would follow forever", where)
	}
	if at, wide := inPlaceWide(raw); wide {
		where := "the root"
		if at != "" {
			where = at
		}
		return nil, fmt.Errorf("invalid schema: at %s: its $refs, allOf, anyOf and oneOf have a value checked against more than %d schemas in place, more than mcpx checks", where, maxInPlace)
	}
	switch root.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
	default:
		root.Schema = ""
	}
	if err := checkTypeNames(root, "root"); err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	resolved, err := root.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote})
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %s", firstLineOf(err.Error()))
	}
	return &Schema{root: root, resolved: resolved, assertFormat: assertFormat, plainRefs: refsToDefsOnly(raw), patternSize: largestPattern(root)}, nil
}

// isSchemaType reports whether t is one of JSON Schema's seven type names.
func isSchemaType(t string) bool {
	switch t {
	case "null", "boolean", "object", "array", "number", "string", "integer":
		return true
	}
	return false
}

// checkTypeNames refuses a "type" that names no JSON Schema type: the
// library checks no schema against its metaschema, and a misspelt type
// would otherwise pass every value without a word.
func checkTypeNames(s *jsonschema.Schema, at string) error {
	if s == nil {
		return nil
	}
	for _, t := range append([]string{s.Type}, s.Types...) {
		if t != "" && !isSchemaType(t) {
			return fmt.Errorf("at %s: type %q is not a JSON Schema type", at, t)
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.Defs, s.Definitions, s.DependentSchemas} {
		for k, c := range m {
			if err := checkTypeNames(c, at+"/"+k); err != nil {
				return err
			}
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray, s.AllOf, s.AnyOf, s.OneOf} {
		for i, c := range list {
			if err := checkTypeNames(c, at+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	for _, c := range []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems, s.AdditionalProperties,
		s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema} {
		if err := checkTypeNames(c, at); err != nil {
			return err
		}
	}
	return nil
}

// refuseRemote refuses every external reference.
func refuseRemote(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("mcpx does not fetch schema %s", u)
}

// NumberRangeError reports a number that is valid JSON but beyond the
// range of float64 (1e999), in a value to check: the validator reads
// numbers as float64, so the value cannot be checked. The value itself
// may still be sent as it is, which is the caller's choice.
type NumberRangeError struct {
	// At is where the number is, as "/a/1/b" ("" for the value itself).
	At string
	// Number is the number as written.
	Number string
}

func (e *NumberRangeError) Error() string {
	msg := e.Number + " is out of the range of the numbers mcpx can check (about ±1.8e308)"
	if e.At == "" {
		return msg
	}
	return "at " + e.At + ": " + msg
}

// Validate checks raw against the schema. The error lists each failure as
// "at /path: reason".
func (s *Schema) Validate(raw json.RawMessage) error {
	problems, err := s.problems(raw)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// problems returns each way raw fails the schema, one line each; err is
// for raw that is not JSON. The library stops at the first failure; the
// root's missing required properties are said beside it, so that a call
// missing an argument and getting another wrong hears of both.
func (s *Schema) problems(raw json.RawMessage) ([]string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		if ne := numberOutOfRange(raw); ne != nil {
			return nil, ne
		}
		return nil, fmt.Errorf("cannot be checked: %w", err)
	}
	if s.patternSize > 0 {
		if n := longestString(v); s.patternSize*n > maxPatternWork {
			return nil, &PatternWorkError{PatternSize: s.patternSize, StringLen: n}
		}
	}
	if err := s.checkWork(v); err != nil {
		return nil, err
	}
	if err := s.resolved.Validate(v); err != nil {
		first := s.explain(err, v)
		var out []string
		if obj, ok := v.(map[string]any); ok && len(s.root.Required) > 0 {
			if req := describe(s.root, "required:", obj); !strings.HasPrefix(req, "required") && req != first {
				out = append(out, req)
			}
		}
		return append(out, first), nil
	}
	if s.assertFormat {
		return formatProblems(s.root, v), nil
	}
	return nil, nil
}

// numberOutOfRange finds a number of raw (valid JSON) that float64 cannot
// hold, which is why json.Unmarshal refused raw; nil when there is none.
// Members are visited in the order of their names.
func numberOutOfRange(raw json.RawMessage) *NumberRangeError {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var find func(v any, at string) *NumberRangeError
	find = func(v any, at string) *NumberRangeError {
		switch v := v.(type) {
		case json.Number:
			if _, err := v.Float64(); err != nil {
				return &NumberRangeError{At: at, Number: v.String()}
			}
		case []any:
			for i, e := range v {
				if ne := find(e, at+"/"+strconv.Itoa(i)); ne != nil {
					return ne
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if ne := find(v[k], at+"/"+k); ne != nil {
					return ne
				}
			}
		}
		return nil
	}
	return find(v, "")
}

// explain turns one of the library's errors ("validating root: validating
// /properties/a: type: ...") into "at /a: got string, want integer": the
// instance's location and a reason said from the failing schema and value.
func (s *Schema) explain(err error, instance any) string {
	loc, reason := s.explainAt(err, instance)
	if len(loc) == 0 {
		return reason
	}
	return "at /" + strings.Join(loc, "/") + ": " + reason
}

// explainAt is explain with the location apart (nil where it is the
// instance itself or is not known).
func (s *Schema) explainAt(err error, instance any) ([]string, string) {
	msg := err.Error()
	var (
		node           *jsonschema.Schema
		loc, base      []string
		known          bool
		def, rel, prev = "", []string(nil), []string(nil)
		itemsAt        []string // where the chain went into items and on
		intoItems      bool
	)
	// The chain names each schema entered, outermost first; a $ref's target
	// is named from its $defs, and stands at the location of the schema
	// that referred to it.
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		p, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		msg = after
		var d string
		node, rel, known, d = locate(s.root, p)
		if d != "" && (d != def || len(rel) == 0) {
			// (A $ref entered a definition, or entered the same one
			// again deeper in the value.)
			base = prev
		}
		def = d
		loc = append(slices.Clip(base), rel...)
		if d == "" {
			loc = rel
		}
		prev = loc
		if !known && node == nil && s.plainRefs {
			// Into additionalProperties or patternProperties: which
			// member, the path does not say; explainMember finds it.
			if value, ok := valueAt(instance, loc); ok {
				if name, at, reason, ok := s.explainMember(p, value, loc); ok {
					return slices.Concat(loc, []string{name}, at), reason
				}
			}
		}
		if !known && node != nil && strings.HasPrefix(msg, "validating ") {
			// Into an array's items, and on: which item, the path does
			// not say; explainItem finds it, where a part of the
			// document can be checked alone.
			if s.plainRefs {
				break
			}
			if !intoItems {
				itemsAt, intoItems = slices.Clip(loc), true
			}
		}
	}
	if intoItems {
		return itemsAt, "an item does not match the schema of its items: " + firstLineOf(msg)
	}
	if !known && node != nil {
		// An array item failed: find which with the item schema alone.
		if arr, ok := valueAt(instance, loc); ok {
			if i, at, reason, ok := s.explainItem(node, arr, loc); ok {
				return slices.Concat(loc, []string{strconv.Itoa(i)}, at), reason
			}
		}
	}
	value, found := any(nil), false
	if known {
		value, found = valueAt(instance, loc)
	}
	reason := msg
	if node != nil && found {
		if at, r, ok := s.explainChoice(node, msg, value, loc); ok {
			loc, reason = slices.Concat(loc, at), r
		} else {
			reason = describe(node, msg, value)
		}
	}
	if !known {
		return nil, reason
	}
	return loc, reason
}

// explainItem finds the first item of arr that fails items (checked
// alone, see part) and explains its failure (where in the item, and why).
func (s *Schema) explainItem(items *jsonschema.Schema, arr any, loc []string) (int, []string, string, bool) {
	list, ok := arr.([]any)
	if !ok {
		return 0, nil, "", false
	}
	sub, ok := s.part(items)
	if !ok {
		return 0, nil, "", false
	}
	for i, v := range list {
		if err := sub.resolved.Validate(v); err != nil {
			sub.at = slices.Concat(s.at, loc, []string{strconv.Itoa(i)})
			at, reason := sub.explainAt(err, v)
			return i, at, reason, true
		}
	}
	return 0, nil, "", false
}

// explainMember finds, when path (a schema path of the library's) ends in
// an additionalProperties or patternProperties/PATTERN, the first member
// (by name) of value, the object there, that it applies to and that fails
// it (checked alone, see part), and explains its failure: the library
// names the schema, never the member ("type: 123 has type "integer",
// want "string"" for env.HOME of a map of strings).
func (s *Schema) explainMember(path string, value any, loc []string) (string, []string, string, bool) {
	obj, ok := value.(map[string]any)
	if !ok {
		return "", nil, "", false
	}
	var parentPath, pattern string
	if before, ok := strings.CutSuffix(path, "/additionalProperties"); ok {
		parentPath = before
	} else if i := strings.LastIndex(path, "/patternProperties/"); i >= 0 {
		parentPath, pattern = path[:i], path[i+len("/patternProperties/"):]
	} else {
		return "", nil, "", false
	}
	parent, _, _, _ := locate(s.root, parentPath)
	if parent == nil {
		return "", nil, "", false
	}
	sub := parent.AdditionalProperties
	if pattern != "" {
		// (The library writes the pattern as a JSON Pointer token.)
		if _, ok := parent.PatternProperties[pattern]; !ok {
			pattern = strings.ReplaceAll(strings.ReplaceAll(pattern, "~1", "/"), "~0", "~")
		}
		sub = parent.PatternProperties[pattern]
	}
	if sub == nil {
		return "", nil, "", false
	}
	matches := func(pattern, name string) bool {
		re, err := regexp.Compile(pattern)
		return err == nil && re.MatchString(name)
	}
	applies := func(name string) bool {
		if pattern != "" {
			return matches(pattern, name)
		}
		if _, declared := parent.Properties[name]; declared {
			return false
		}
		for p := range parent.PatternProperties {
			if matches(p, name) {
				return false
			}
		}
		return true
	}
	part, ok := s.part(sub)
	if !ok {
		return "", nil, "", false
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if !applies(name) {
			continue
		}
		if err := part.resolved.Validate(obj[name]); err != nil {
			part.at = slices.Concat(s.at, loc, []string{name})
			at, reason := part.explainAt(err, obj[name])
			return name, at, reason, true
		}
	}
	return "", nil, "", false
}

// part returns sub, a schema of s's document, as a schema of its own whose
// $refs to the document's $defs (or definitions) still resolve, to check
// a value against it alone. ok is false where that cannot be done the
// same: a $ref of the document to anything but its $defs ("#" itself, or
// "#/properties/a", would be read in the part, or not at all; a $ref to
// the part's root could even make a circle), or past maxExplainDepth.
func (s *Schema) part(sub *jsonschema.Schema) (*Schema, bool) {
	if !s.plainRefs || s.depth >= maxExplainDepth {
		return nil, false
	}
	wrapper := &jsonschema.Schema{Schema: s.root.Schema, Defs: s.root.Defs, Definitions: s.root.Definitions,
		AllOf: []*jsonschema.Schema{sub}}
	root := wrapper.CloneSchemas()
	resolved, err := root.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote})
	if err != nil {
		return nil, false
	}
	return &Schema{root: root, resolved: resolved, depth: s.depth + 1, plainRefs: true}, true
}

// maxExplainDepth bounds how deep explain goes into the alternatives of
// an anyOf or oneOf (and array items) to say why a value fails them: a
// schema that refers to itself would otherwise take it round forever.
const maxExplainDepth = 8

// explainChoice says why value fails the anyOf or oneOf of node that msg
// (the library's message, several lines naming "<anonymous schema>"s)
// reports, in one line: each alternative is checked alone (see part),
// and the reasons are put
// together. Where all fail on their type, "got boolean, want string or
// integer"; where the alternatives of the value's type fail otherwise,
// theirs ("must be <= 10 but found 12", for anyOf [{"type":"integer",
// "maximum":10}, {"type":"null"}]); consts, "value must be one of 's',
// 'l'". at is a location inside value, when one alternative's reason
// alone is given. ok is false for other keywords, and where the
// alternatives cannot be checked alone. loc is where value is, for the
// locations inside it that reasons put together name.
func (s *Schema) explainChoice(node *jsonschema.Schema, msg string, value any, loc []string) (at []string, reason string, ok bool) {
	keyword, _, _ := strings.Cut(msg, ":")
	list := map[string][]*jsonschema.Schema{"anyOf": node.AnyOf, "oneOf": node.OneOf}[keyword]
	if len(list) == 0 {
		return nil, "", false
	}
	type failure struct {
		at     []string
		reason string
		form   *jsonschema.Schema
	}
	var fails []failure
	var passes []int
	for i, b := range list {
		sub, ok := s.part(b)
		if !ok {
			return nil, "", false
		}
		sub.at = slices.Concat(s.at, loc)
		verr := sub.resolved.Validate(value)
		if verr == nil {
			passes = append(passes, i)
			continue
		}
		at, reason := sub.explainAt(verr, value)
		fails = append(fails, failure{at, reason, b})
	}
	if keyword == "oneOf" && len(passes) > 1 {
		forms := make([]string, len(passes))
		for j, i := range passes {
			forms[j] = formName(list[i], i)
		}
		return nil, fmt.Sprintf("matches %d of the forms its oneOf allows (%s), where it must match exactly one",
			len(passes), strings.Join(forms, ", ")), true
	}
	if len(passes) > 0 || len(fails) == 0 {
		return nil, "", false
	}
	// A mismatch of type says only that the value is not of that form:
	// the forms of its type say more.
	var wants []string
	var others []failure
	for _, f := range fails {
		if want, ok := strings.CutPrefix(f.reason, "got "+jsonTypeName(value)+", want "); ok && len(f.at) == 0 {
			wants = append(wants, want)
		} else if types := valueTypes(f.form); len(f.at) == 0 && strings.HasPrefix(f.reason, "value must be ") && !slices.Contains(types, jsonTypeName(value)) {
			// Values none of which is of the value's type.
			wants = append(wants, strings.Join(types, " or "))
		} else {
			others = append(others, f)
		}
	}
	switch {
	case len(others) == 0:
		var distinct []string
		for _, w := range wants {
			if !slices.Contains(distinct, w) {
				distinct = append(distinct, w)
			}
		}
		return nil, "got " + jsonTypeName(value) + ", want " + strings.Join(distinct, " or "), true
	case len(others) == 1:
		return others[0].at, others[0].reason, true
	}
	// Alternatives that are values (titled enums: oneOf of consts).
	var values []string
	for _, f := range others {
		v, ok := strings.CutPrefix(f.reason, "value must be ")
		if !ok || len(f.at) > 0 {
			values = nil
			break
		}
		values = append(values, strings.TrimPrefix(v, "one of "))
	}
	if values != nil {
		return nil, "value must be one of " + strings.Join(values, ", "), true
	}
	reasons := make([]string, len(others))
	for i, f := range others {
		reasons[i] = f.reason
		if len(f.at) > 0 {
			reasons[i] = "at /" + strings.Join(slices.Concat(s.at, loc, f.at), "/") + ": " + f.reason
		}
	}
	return nil, "matches none of the forms its " + keyword + " allows: " + strings.Join(reasons, ", or "), true
}

// valueTypes returns the types of the values form's enum and const allow.
func valueTypes(form *jsonschema.Schema) []string {
	vals := slices.Clone(form.Enum)
	if form.Const != nil {
		vals = append(vals, *form.Const)
	}
	var types []string
	for _, v := range vals {
		if t := jsonTypeName(v); !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return types
}

// formName names the i-th alternative of an anyOf or oneOf for a
// message: by its title, its type, its const or the last part of its $ref.
func formName(b *jsonschema.Schema, i int) string {
	switch {
	case b.Title != "":
		return quoteValue(b.Title)
	case b.Type != "":
		return b.Type
	case len(b.Types) > 0:
		return strings.Join(b.Types, " or ")
	case b.Const != nil:
		return quoteValue(*b.Const)
	case b.Ref != "":
		return b.Ref[strings.LastIndexByte(b.Ref, '/')+1:]
	}
	return "the one at " + strconv.Itoa(i)
}

// locate follows a schema path of the library's ("root", "/properties/a/
// items") from root: the schema it names and the instance location it
// stands for; known is false where the path does not say (an additional
// property, a $ref's target), and for an array item, whose item schema is
// then returned with the array's location.
func locate(root *jsonschema.Schema, path string) (node *jsonschema.Schema, loc []string, known bool, def string) {
	node, known = root, true
	rest := strings.TrimPrefix(path, "/")
	if path == "root" || path == "" {
		rest = ""
	}
	next := func() string {
		seg, after, _ := strings.Cut(rest, "/")
		rest = after
		return seg
	}
	for rest != "" && node != nil {
		switch seg := next(); seg {
		case "properties", "$defs", "definitions":
			m := node.Properties
			if seg == "$defs" {
				m = node.Defs
			} else if seg == "definitions" {
				m = node.Definitions
			}
			// Names are not escaped: take the longest that fits.
			name := ""
			for k := range m {
				if (rest == k || strings.HasPrefix(rest, k+"/")) && len(k) >= len(name) {
					name = k
				}
			}
			if _, ok := m[name]; !ok || seg != "properties" && (def != "" || len(loc) > 0) {
				return nil, loc, false, def
			}
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, name), "/")
			node = m[name]
			if seg == "properties" {
				loc = append(loc, name)
			} else {
				def = seg + "/" + name
			}
		case "prefixItems":
			i, err := strconv.Atoi(next())
			if err != nil || i < 0 || i >= len(node.PrefixItems) {
				return nil, loc, false, def
			}
			node, loc = node.PrefixItems[i], append(loc, strconv.Itoa(i))
		case "allOf", "anyOf", "oneOf":
			list := map[string][]*jsonschema.Schema{"allOf": node.AllOf, "anyOf": node.AnyOf, "oneOf": node.OneOf}[seg]
			i, err := strconv.Atoi(next())
			if err != nil || i < 0 || i >= len(list) {
				return nil, loc, false, def
			}
			node = list[i]
		case "not":
			node = node.Not
		case "if":
			node = node.If
		case "then":
			node = node.Then
		case "else":
			node = node.Else
		case "items":
			if node.Items == nil {
				return nil, loc, false, def
			}
			return node.Items, loc, false, def
		default:
			// additionalProperties, $defs, ...: the instance
			// location is not in the path.
			return nil, loc, false, def
		}
	}
	return node, loc, known && node != nil, def
}

// valueAt returns the value at loc (object members only).
func valueAt(v any, loc []string) (any, bool) {
	for _, k := range loc {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// describe says why value fails node, from the keyword that failed (the
// start of the library's message); other keywords keep the library's words.
func describe(node *jsonschema.Schema, msg string, value any) string {
	keyword, _, _ := strings.Cut(msg, ":")
	switch keyword {
	case "type":
		want := node.Type
		if want == "" {
			want = strings.Join(node.Types, " or ")
		}
		return "got " + jsonTypeName(value) + ", want " + want
	case "required":
		obj, _ := value.(map[string]any)
		var missing []string
		for _, r := range node.Required {
			if _, ok := obj[r]; !ok && !slices.Contains(missing, r) {
				missing = append(missing, r)
			}
		}
		switch len(missing) {
		case 0:
		case 1:
			return "missing property " + quoteValue(missing[0])
		default:
			q := make([]string, len(missing))
			for i, m := range missing {
				q[i] = quoteValue(m)
			}
			return "missing properties " + strings.Join(q, ", ")
		}
	case "enum":
		q := make([]string, len(node.Enum))
		for i, e := range node.Enum {
			q[i] = quoteValue(e)
		}
		return "value must be one of " + strings.Join(q, ", ")
	case "const":
		if node.Const != nil {
			return "value must be " + quoteValue(*node.Const)
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		bound, op := map[string]*float64{"minimum": node.Minimum, "maximum": node.Maximum,
			"exclusiveMinimum": node.ExclusiveMinimum, "exclusiveMaximum": node.ExclusiveMaximum}[keyword],
			map[string]string{"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[keyword]
		if bound != nil {
			return fmt.Sprintf("must be %s %s but found %s", op, formatNumber(*bound), quoteValue(value))
		}
	case "minLength", "maxLength":
		bound, op := node.MinLength, ">="
		if keyword == "maxLength" {
			bound, op = node.MaxLength, "<="
		}
		if str, ok := value.(string); ok && bound != nil {
			return fmt.Sprintf("length must be %s %d, but got %d", op, *bound, len([]rune(str)))
		}
	case "minItems", "maxItems":
		bound, op := node.MinItems, "at least"
		if keyword == "maxItems" {
			bound, op = node.MaxItems, "at most"
		}
		if arr, ok := value.([]any); ok && bound != nil {
			return fmt.Sprintf("must have %s %d items, but has %d", op, *bound, len(arr))
		}
	case "pattern":
		return fmt.Sprintf("%s does not match pattern %s", quoteValue(value), quoteValue(node.Pattern))
	case "anyOf", "oneOf":
		// (Where explainChoice cannot say more.)
		if strings.HasPrefix(msg, "oneOf: validated against both") {
			return "matches more than one of the forms its oneOf allows, where it must match exactly one"
		}
		return "matches none of the forms its " + keyword + " allows"
	case "not":
		return "matches the schema its \"not\" gives, which it must not"
	}
	if rest, ok := strings.CutPrefix(msg, "unexpected additional properties "); ok {
		var names []string
		for _, f := range strings.Fields(strings.Trim(rest, "[]")) {
			if n, err := strconv.Unquote(f); err == nil {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			slices.Sort(names)
			q := make([]string, len(names))
			for i, n := range names {
				q[i] = quoteValue(n)
			}
			return "additional properties " + strings.Join(q, ", ") + " not allowed"
		}
	}
	return msg
}

// jsonTypeName names a decoded JSON value's type as JSON Schema does
// (every number a number: a type mismatch is never about integers alone
// but for a fraction, which is a number).
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// quoteValue writes a value for a message: strings in single quotes, other
// values as JSON.
func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	if f, ok := v.(float64); ok {
		return formatNumber(f)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// formatProblems checks the formats an elicitation form may name, on the
// schema's root and on each of its properties, in name order.
func formatProblems(root *jsonschema.Schema, v any) []string {
	var out []string
	if p := formatProblem(root.Format, v); p != "" {
		out = append(out, p)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return out
	}
	names := make([]string, 0, len(root.Properties))
	for name := range root.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		val, present := obj[name]
		if !present || root.Properties[name] == nil {
			continue
		}
		if p := formatProblem(root.Properties[name].Format, val); p != "" {
			out = append(out, "at /"+name+": "+p)
		}
	}
	return out
}

// formatProblem checks one string against a format the elicitation schema
// names (other formats, and values that are not strings, pass).
func formatProblem(format string, v any) string {
	s, ok := v.(string)
	if !ok || format == "" {
		return ""
	}
	var err error
	switch format {
	case "email":
		var a *mail.Address
		if a, err = mail.ParseAddress(s); err == nil && (a.Name != "" || a.Address != s) {
			err = errors.New("not a bare address")
		}
	case "uri":
		var u *url.URL
		if u, err = url.Parse(s); err == nil && !u.IsAbs() {
			err = errors.New("no scheme")
		}
	case "date":
		_, err = time.Parse(time.DateOnly, s)
	case "date-time":
		_, err = time.Parse(time.RFC3339, s)
	default:
		return ""
	}
	if err != nil {
		return fmt.Sprintf("'%s' is not a valid %s", s, format)
	}
	return ""
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
