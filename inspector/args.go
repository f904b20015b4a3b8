package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/transport"
)

// ArgumentError reports a key=value argument that cannot be used.
type ArgumentError struct {
	Key, Value string
	Reason     string
	// Err is the typed cause behind Reason, when there is one (a
	// *NumberRangeError: a number the check cannot read).
	Err error
}

func (e *ArgumentError) Unwrap() error { return e.Err }

// Error quotes the argument bounded, its control characters escaped
// (transport.Excerpt): a value may be a pasted document, or hold a line
// break, and the message is one line.
func (e *ArgumentError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("argument %s: %s", transport.QuoteExcerpt(e.Value), e.Reason)
	}
	return fmt.Sprintf("argument %s: %s", transport.Excerpt(e.Key+"="+e.Value), e.Reason)
}

// BuildArguments turns key=value pairs into a JSON arguments object, typing
// each value by the property's JSON Schema in schema (a tool's inputSchema):
// a=2 is a number where the schema says number, zip=012 stays a string where
// it says string, arrays and objects take JSON. Without a schema for a key,
// the value is parsed as JSON with a fallback to a string. A key is a path
// (see parsePath): user.address.city=Paris builds the nested objects,
// tags[0]=x and tags[]=x array elements, typed by the nested schemas
// (through local $refs, "#/$defs/User", as the validation reads them); a
// key the schema has as it is, dots and all, stays one key. base is an
// optional JSON object (from --args) that pairs are merged into: a path
// goes into the objects and arrays base has. A pair that would replace
// what an earlier pair set inside it, or that goes through a value that
// is not an object (or array), is an *ArgumentError. Warnings name keys
// the schema does not know.
func BuildArguments(pairs []string, base json.RawMessage, schema json.RawMessage) (json.RawMessage, []string, error) {
	var props map[string]json.RawMessage
	var known bool
	if len(pairs) > 0 {
		// (Read only to type pairs: --args alone does not need it.)
		props, known = schemaProperties(schema)
	}
	return buildArguments(pairs, base, schema, props, known, false)
}

// buildArguments is BuildArguments with the top-level properties of
// schema already read (see schemaProperties), which it only reads: a
// session keeps them with its tools/list rather than decoding the schema
// for every call. The $refs of the properties are followed into schema.
// asWritten is for arguments that are not to be checked (--no-validate):
// a number beyond what the check can read (1e999) is then sent as the
// JSON number written rather than refused.
func buildArguments(pairs []string, base, schema json.RawMessage, props map[string]json.RawMessage, known, asWritten bool) (json.RawMessage, []string, error) {
	if _, plain := plainObject(base); plain && len(pairs) == 0 {
		// --args alone, as parsing and marshalling would write it.
		return bytes.Clone(base), nil, nil
	}
	if out, warnings, err, ok := buildTopLevel(pairs, base, schema, props, known, asWritten); ok {
		return out, warnings, err
	}
	return buildObject(pairs, base, schema, props, known, asWritten)
}

// buildObject is buildArguments the general way: base parsed, each pair
// set along its path, the object marshalled.
func buildObject(pairs []string, base, schema json.RawMessage, props map[string]json.RawMessage, known, asWritten bool) (json.RawMessage, []string, error) {
	obj, err := ParseObject(base)
	if err != nil {
		return nil, nil, fmt.Errorf("the base arguments must be a JSON object: %w", err)
	}
	var warnings []string
	type setting struct {
		steps []pathStep
		pair  string
	}
	var settings []setting
	setBy := func(steps []pathStep) string {
		for i := len(settings) - 1; i >= 0; i-- {
			if slices.Equal(settings[i].steps, steps) {
				return "set by " + settings[i].pair
			}
		}
		return ""
	}
	for _, pair := range pairs {
		key, value, ok := splitPair(pair)
		if !ok || key == "" {
			return nil, nil, pairError(pair)
		}
		steps := []pathStep{{name: key}}
		if _, literal := props[key]; !literal && !isPlainKey(key) {
			if steps, err = parsePath(key); err != nil {
				return nil, nil, &ArgumentError{Key: key, Value: value, Reason: "the key is not a path: " + err.Error()}
			}
		}
		prop, w := pathSchema(schema, props, known, steps)
		if w != "" {
			warnings = append(warnings, w)
		}
		v, err := typeValue(value, schema, prop, asWritten)
		if err != nil {
			return nil, nil, &ArgumentError{Key: key, Value: value, Reason: err.Error(), Err: err}
		}
		if !slices.ContainsFunc(steps, func(s pathStep) bool { return s.append }) {
			for _, earlier := range settings {
				if isPrefix(steps, earlier.steps) {
					return nil, nil, &ArgumentError{Key: key, Value: value,
						Reason: fmt.Sprintf("it would replace what %s set inside %s", transport.Excerpt(earlier.pair), formatPath(steps))}
				}
			}
		}
		first := steps[0].name
		child, done, err := setPath(obj.Get(first), steps[1:], v, steps[:1:1], setBy)
		if err != nil {
			var ce *conflictError
			if errors.As(err, &ce) {
				return nil, nil, &ArgumentError{Key: key, Value: value, Reason: ce.msg}
			}
			return nil, nil, &ArgumentError{Key: key, Value: value, Reason: err.Error()}
		}
		obj.Set(first, child)
		settings = append(settings, setting{steps: done, pair: key + "=" + value})
	}
	return obj.Marshal(), warnings, nil
}

// buildTopLevel is buildArguments for pairs alone whose keys are distinct
// top-level names (message=hi count=3), the way nearly every call is
// written: it writes the object as the general way's parse, set and
// marshal would, without them (they made a key=value call a tenth
// dearer than --args). ok is false for other input.
func buildTopLevel(pairs []string, base, schema json.RawMessage, props map[string]json.RawMessage, known, asWritten bool) (_ json.RawMessage, warnings []string, _ error, ok bool) {
	const maxPairs = 16
	if len(pairs) == 0 || len(pairs) > maxPairs || len(bytes.TrimSpace(base)) > 0 {
		return nil, nil, nil, false
	}
	var keys [maxPairs]string
	for i, pair := range pairs {
		key, _, found := splitPair(pair)
		if _, literal := props[key]; !found || key == "" || !literal && !isPlainKey(key) || slices.Contains(keys[:i], key) {
			return nil, nil, nil, false
		}
		keys[i] = key
	}
	out := []byte{'{'}
	for i, pair := range pairs {
		key, value, _ := splitPair(pair)
		prop, w := pathSchema(schema, props, known, []pathStep{{name: key}})
		if w != "" {
			warnings = append(warnings, w)
		}
		v, err := typeValue(value, schema, prop, asWritten)
		if err != nil {
			return nil, nil, &ArgumentError{Key: key, Value: value, Reason: err.Error(), Err: err}, true
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, key)
		out = append(out, ':')
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		out = append(out, v...)
	}
	return append(out, '}'), warnings, nil, true
}

// pathSchema walks root, a schema whose top-level properties are props
// (known when it declares them), along steps, following local $refs,
// returning the schema of the value at their end (nil when the schema
// does not say) and a warning when a member name is not among the
// properties an object schema declares.
func pathSchema(root json.RawMessage, props map[string]json.RawMessage, known bool, steps []pathStep) (json.RawMessage, string) {
	prop, has := props[steps[0].name]
	if !has {
		// Named by the root's patternProperties or additionalProperties,
		// or by the schema of its $ref or a branch of its allOf (an
		// inputSchema of {"$ref":"#/$defs/Args"}, or an allOf of two
		// object schemas).
		if r := deref(root, bytes.TrimSpace(root)); r != nil {
			prop = stepSchema(stepBranch(root, r, steps[0]), steps[0])
		}
	}
	if known && !has && prop == nil {
		return nil, unknownKeyWarning(fmt.Sprintf("the schema has no argument %q", steps[0].name), props)
	}
	for i, s := range steps[1:] {
		if prop = deref(root, prop); prop == nil {
			return nil, ""
		}
		prop = stepBranch(root, prop, s)
		if !s.isElem {
			if p, ok := schemaProperties(prop); ok {
				if _, has := p[s.name]; !has && extraMemberSchema(prop, s.name) == nil {
					return nil, unknownKeyWarning(fmt.Sprintf("the schema of %s has no property %q", formatPath(steps[:i+1]), s.name), p)
				}
			}
		}
		prop = stepSchema(prop, s)
	}
	return prop, ""
}

func unknownKeyWarning(w string, props map[string]json.RawMessage) string {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 0 {
		w += " (it has: " + strings.Join(names, ", ") + ")"
	}
	return w
}

// StringArguments builds an object of string values (prompt arguments are
// always strings: spec server/prompts, GetPromptRequest). A key is a name
// as written, not a path (a.b is the argument "a.b"); as in a tool's
// key=value, \= is an = in it and \\ a backslash.
func StringArguments(pairs []string) (json.RawMessage, error) {
	obj := &Object{vals: map[string]json.RawMessage{}}
	for _, pair := range pairs {
		key, value, err := StringPair(pair)
		if err != nil {
			return nil, err
		}
		v, _ := json.Marshal(value)
		obj.Set(key, v)
	}
	return obj.Marshal(), nil
}

// StringPair splits one key=value pair of a prompt's arguments as
// StringArguments does (\= is an = in the key, \\ a backslash), so that
// completing a prompt argument (completion/complete's argument and
// context) names it as prompts/get does. The error is an *ArgumentError.
func StringPair(pair string) (key, value string, err error) {
	key, value, ok := splitPair(pair)
	if !ok || key == "" {
		return "", "", pairError(pair)
	}
	return strings.NewReplacer(`\\`, `\`, `\=`, `=`).Replace(key), value, nil
}

// schemaProperties returns the properties of an object schema; known is
// false when the schema does not describe its properties.
func schemaProperties(schema json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(schema) == 0 {
		return nil, false
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || s.Properties == nil {
		return nil, false
	}
	return s.Properties, true
}

// schemaTypes collects the JSON types a property schema allows, looking
// through "type" (a string or a list), "enum", "const", "anyOf" and "oneOf",
// and, where those say nothing, "allOf" (what all of its schemas allow).
// Nil means the schema does not say. It follows no $ref: see
// schemaTypesIn.
func schemaTypes(prop json.RawMessage) []string { return schemaTypesIn(nil, prop) }

// schemaTypesIn is schemaTypes that also follows the local $refs of prop
// (and of its anyOf and oneOf) into root, the schema prop is part of, as
// the validation of the arguments does: a property {"$ref":"#/$defs/Zip"}
// is typed as Zip is. A schema with types of its own is read by them.
func schemaTypesIn(root, prop json.RawMessage) []string {
	var seen []string
	types := appendTypes(nil, root, prop, &seen)
	slices.Sort(types)
	return slices.Compact(types)
}

// appendTypes appends the types prop allows (see schemaTypesIn) to types.
// seen holds the $refs followed so far, each followed once: a second time
// would add no type, and a circle of them ends.
func appendTypes(types []string, root, prop json.RawMessage, seen *[]string) []string {
	if len(prop) == 0 {
		return types
	}
	var s struct {
		Type  json.RawMessage   `json:"type"`
		Enum  []json.RawMessage `json:"enum"`
		Const json.RawMessage   `json:"const"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
		AllOf []json.RawMessage `json:"allOf"`
		Ref   json.RawMessage   `json:"$ref"`
	}
	if json.Unmarshal(prop, &s) != nil {
		return types
	}
	own := len(types)
	if len(s.Type) > 0 {
		var one string
		if json.Unmarshal(s.Type, &one) == nil {
			types = append(types, one)
		} else {
			var many []string
			if json.Unmarshal(s.Type, &many) == nil {
				types = append(types, many...)
			}
		}
	}
	for _, v := range append(s.Enum, s.Const) {
		if t := jsonType(v); t != "" {
			types = append(types, t)
		}
	}
	for _, sub := range append(s.AnyOf, s.OneOf...) {
		types = appendTypes(types, root, sub, seen)
	}
	if ref, ok := rawjson.String(s.Ref); ok && len(types) == own && root != nil && !slices.Contains(*seen, ref) {
		*seen = append(*seen, ref)
		types = appendTypes(types, root, resolveRef(root, ref), seen)
	}
	if len(types) == own && len(s.AllOf) > 0 {
		// As pydantic v1 writes a described reference: {"allOf":
		// [{"$ref":"#/definitions/Color"}], "description": "..."}.
		var all []string
		said := false
		for _, sub := range s.AllOf {
			t := appendTypes(nil, root, sub, seen)
			switch {
			case len(t) == 0: // (it allows any type)
			case !said:
				all, said = t, true
			default:
				all = intersectTypes(all, t)
			}
		}
		types = append(types, all...)
	}
	return types
}

// intersectTypes returns the types both a and b allow (an integer is a
// number).
func intersectTypes(a, b []string) []string {
	var out []string
	for _, t := range a {
		if slices.Contains(b, t) || t == "integer" && slices.Contains(b, "number") {
			out = append(out, t)
		} else if t == "number" && slices.Contains(b, "integer") {
			out = append(out, "integer")
		}
	}
	return out
}

// stepBranch returns the schema among schema and the branches of its
// anyOf, oneOf and allOf (each through its $ref) that describes where
// step s leads: for a member, the first that names it (by its
// properties, patternProperties or additionalProperties), as in an allOf
// of two object schemas, each with properties of its own; else schema
// itself when it has properties (for a member) or items (for an
// element), else the first branch that has them, as in a nullable object
// (Optional[User] is anyOf [User, null]); schema when none has.
func stepBranch(root, schema json.RawMessage, s pathStep) json.RawMessage {
	describes := func(b json.RawMessage) bool {
		if s.isElem {
			return stepSchema(b, s) != nil
		}
		_, ok := schemaProperties(b)
		return ok || extraMemberSchema(b, s.name) != nil
	}
	names := func(b json.RawMessage) bool { return !s.isElem && stepSchema(b, s) != nil }
	if names(schema) {
		return schema
	}
	var u struct {
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
		AllOf []json.RawMessage `json:"allOf"`
	}
	if json.Unmarshal(schema, &u) != nil {
		return schema
	}
	var branches []json.RawMessage
	for _, b := range slices.Concat(u.AnyOf, u.OneOf, u.AllOf) {
		if b = deref(root, b); b != nil {
			branches = append(branches, b)
		}
	}
	if i := slices.IndexFunc(branches, names); i >= 0 {
		return branches[i]
	}
	if describes(schema) {
		return schema
	}
	if i := slices.IndexFunc(branches, describes); i >= 0 {
		return branches[i]
	}
	return schema
}

// maxRefChain bounds a chain of $refs that point to $refs: past it, the
// chain is taken for a circle.
const maxRefChain = 32

// deref returns the schema that schema stands for: the target of its
// local $ref (see resolveRef), through a chain of them; schema itself
// when it has none; nil when a $ref leads nowhere, out of root (another
// document, an anchor) or round in a circle.
func deref(root, schema json.RawMessage) json.RawMessage {
	for range maxRefChain {
		if !bytes.Contains(schema, []byte(`"$ref"`)) {
			return schema
		}
		ref, ok := rawjson.String(rawjson.Member(schema, "$ref"))
		if !ok {
			return schema
		}
		if schema = resolveRef(root, ref); schema == nil {
			return nil
		}
	}
	return nil
}

// resolveRef returns the schema a local $ref names in root: "#" is root,
// "#/$defs/User" (or any JSON Pointer, URI-escaped) a schema inside it;
// nil for any other reference (mcpx never fetches one) or a pointer to
// nothing.
func resolveRef(root json.RawMessage, ref string) json.RawMessage {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok || root == nil {
		return nil
	}
	frag, err := url.PathUnescape(frag)
	if err != nil || frag != "" && frag[0] != '/' {
		return nil
	}
	v := bytes.TrimSpace(root)
	if frag == "" {
		return v
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch jsonType(v) {
		case "object":
			v = rawjson.Member(v, tok)
		case "array":
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || strings.TrimLeft(tok, "0123456789") != "" {
				return nil
			}
			var elem json.RawMessage
			rawjson.Elements(v, func(e []byte) bool {
				if i == 0 {
					elem = e
				}
				i--
				return i >= 0
			})
			v = elem
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}

func jsonType(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// typingTypes is schemaTypesIn without a type that is none of JSON
// Schema's ("strng"), which says nothing: the schema is invalid, the
// check of the call says so (and is skipped), and a value is read as if
// the type were not there rather than refused, which left no pair, even
// with --no-validate, to send it.
func typingTypes(root, prop json.RawMessage) []string {
	return slices.DeleteFunc(schemaTypesIn(root, prop), func(t string) bool { return !isSchemaType(t) })
}

// typeValue converts one value by its property schema, a part of root
// (asWritten: see buildArguments).
func typeValue(value string, root, prop json.RawMessage, asWritten bool) (json.RawMessage, error) {
	types := typingTypes(root, prop)
	if len(types) == 0 {
		if json.Valid([]byte(value)) && strings.TrimSpace(value) != "" {
			var b bytes.Buffer
			_ = json.Compact(&b, []byte(value))
			return b.Bytes(), nil
		}
		return json.Marshal(value)
	}
	// Prefer a non-string reading when the value parses as one of the
	// allowed types; fall back to a string when strings are allowed.
	// Where a string is allowed, another reading must be the value as
	// JSON writes it: a phone number (+33612345678) or an id with
	// leading zeros (007) under ["number","string"] is the string typed,
	// not a number rewritten (3.3612345678e+10, 7), and True stays True.
	stringToo := slices.Contains(types, "string")
	var firstErr error
	for _, t := range orderTypes(types) {
		if stringToo && t != "string" && !writtenAsJSON(value) {
			continue
		}
		v, err := asType(value, t, asWritten)
		if err == nil {
			return v, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	var ne *NumberRangeError
	if len(types) > 1 && !errors.As(firstErr, &ne) {
		return nil, fmt.Errorf("expected %s", strings.Join(types, " or "))
	}
	return nil, firstErr
}

// writtenAsJSON reports whether value is a JSON value as typed (JSON
// allows no leading +, leading zeros, hex or True).
func writtenAsJSON(value string) bool {
	return json.Valid([]byte(value))
}

// orderTypes tries specific types before "string", which accepts anything.
func orderTypes(types []string) []string {
	out := make([]string, 0, len(types))
	for _, t := range types {
		if t != "string" {
			out = append(out, t)
		}
	}
	if slices.Contains(types, "string") {
		out = append(out, "string")
	}
	return out
}

func asType(value, t string, asWritten bool) (json.RawMessage, error) {
	switch t {
	case "string":
		return json.Marshal(value)
	case "integer":
		if i, err := strconv.ParseInt(value, 10, 64); err == nil {
			return json.RawMessage(strconv.FormatInt(i, 10)), nil
		}
		f, err := strconv.ParseFloat(value, 64)
		if tooLarge(f, err) {
			return outOfRange(value, asWritten)
		}
		// Beyond int64, or with a fraction or an exponent (3.0, 1e3): the
		// exact value decides and is written in digits, never float64's
		// nearest (which turned 9223372036854775808 into
		// 9223372036854776000). ParseFloat vets the syntax.
		if err == nil && !math.IsInf(f, 0) {
			if r, ok := new(big.Rat).SetString(value); ok && r.IsInt() {
				return json.RawMessage(r.Num().String()), nil
			}
		}
		return nil, fmt.Errorf("expected an integer")
	case "number":
		f, err := strconv.ParseFloat(value, 64)
		if tooLarge(f, err) {
			return outOfRange(value, asWritten)
		}
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("expected a number")
		}
		if json.Valid([]byte(value)) {
			return json.RawMessage(value), nil
		}
		return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "boolean":
		switch strings.ToLower(value) {
		case "true":
			return json.RawMessage("true"), nil
		case "false":
			return json.RawMessage("false"), nil
		}
		return nil, fmt.Errorf("expected true or false")
	case "null":
		if value == "null" {
			return json.RawMessage("null"), nil
		}
		return nil, fmt.Errorf("expected null")
	case "array", "object":
		v := bytes.TrimSpace([]byte(value))
		if !json.Valid(v) || jsonType(v) != t {
			return nil, fmt.Errorf("expected a JSON %s, e.g. %s", t, map[string]string{"array": `'[1,2]'`, "object": `'{"k":"v"}'`}[t])
		}
		var b bytes.Buffer
		_ = json.Compact(&b, v)
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf("unsupported schema type %q", t)
}

// tooLarge reports a number ParseFloat read as f, err that is beyond
// float64's range (1e999): the schema check reads numbers as float64.
func tooLarge(f float64, err error) bool {
	return errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0)
}

// outOfRange types a number too large for float64. A JSON number is
// sent as written when asWritten, and is otherwise refused with a
// *NumberRangeError (the check could not read it; sending it unchecked is
// the caller's choice); anything else is refused with the same words, in
// place of "expected a number", which it is.
func outOfRange(value string, asWritten bool) (json.RawMessage, error) {
	if jsonType([]byte(value)) == "number" && json.Valid([]byte(value)) {
		if asWritten {
			return json.RawMessage(value), nil
		}
		return nil, &NumberRangeError{Number: value}
	}
	return nil, errors.New((&NumberRangeError{Number: value}).Error())
}

// Suggest returns the candidates closest to name (by edit distance, or
// sharing a prefix or substring), best first, at most n, each once. An
// empty candidate (a nameless tool in a server's list) is never one: the
// empty string is in every name. When one is a single edit away (get_sum
// for get-sum: the likely typo), those further away are left out: that
// get-summ shares "get" with get-env says nothing, and listed beside the
// typo's fix it was noise.
func Suggest(name string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	var out []scored
	lname := strings.ToLower(name)
	if lname == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range candidates {
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(c)
		d := editDistance(lname, lc)
		limit := max(2, len(name)/3)
		switch {
		case strings.Contains(lc, lname) || strings.Contains(lname, lc):
			// A part of the name (get-ann for get-annotated-message) is as
			// near as a typo.
			d = min(d, 1)
		case strings.HasPrefix(lc, lname[:min(len(lname), 3)]):
			d = min(d, limit)
		}
		if d <= limit {
			out = append(out, scored{c, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].d < out[j].d })
	var names []string
	for i := 0; i < len(out) && i < n && (out[0].d > 1 || out[i].d == out[0].d); i++ {
		names = append(names, out[i].s)
	}
	return names
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
