package inspector

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// schemaDecodeProblem says why the JSON Schema library did not decode raw
// (valid JSON) into a schema, in JSON's terms and naming the member by its
// JSON Pointer ("at /properties/n/maximum: 1e999 is out of the range of
// the numbers mcpx can check"), in place of encoding/json's Go terms ("json:
// cannot unmarshal number 1e999 into Go struct field
// .schemaWithoutMethods.properties.schemaWithoutMethods.maximum of type
// float64"), which name neither the property nor the schema's keywords
// plainly. Where the member cannot be found it says what it can.
func schemaDecodeProblem(raw json.RawMessage, err error) string {
	// A number float64 cannot hold fails the decode wherever it is.
	if ne := numberOutOfRange(raw); ne != nil {
		return ne.Error()
	}
	if m, ok := rawjson.MistypedOf(err); ok {
		// The path names the keywords, but neither property names nor
		// indexes: the member is the first with its name holding a value
		// of its kind.
		keyword := m.Path[strings.LastIndexByte(m.Path, '.')+1:]
		if at := findSchemaMember(raw, "", func(name string, v []byte) bool {
			return name == keyword && rawjson.Kind(v) == m.Got
		}); at != "" {
			return "at " + at + ": it is " + m.Got + ", not " + m.Want
		}
		if keyword != "" {
			return "a schema's " + strconv.Quote(keyword) + " is " + m.Got + ", not " + m.Want
		}
		return rawjson.DecodeProblem(err)
	}
	// The keywords the library decodes itself: type ('invalid value for
	// "type": "5"'), and those that take a non-negative integer ("not an
	// integer value", "cannot be unmarshaled into an int").
	var problem string
	if at := findSchemaMember(raw, "", func(name string, v []byte) bool {
		switch name {
		case "type":
			if k := rawjson.Kind(v); k != "a string" && k != "an array" {
				problem = "it is " + k + ", not a string or an array"
			}
			return problem != ""
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
			problem = integerProblem(v)
			return problem != ""
		}
		return false
	}); at != "" {
		return "at " + at + ": " + problem
	}
	return firstLineOf(err.Error())
}

// integerProblem says why v is not an integer the library takes for a
// keyword such as maxLength ("" when it is one).
func integerProblem(v []byte) string {
	if rawjson.Kind(v) != "a number" {
		return "it is " + rawjson.Kind(v) + ", not an integer"
	}
	f, err := strconv.ParseFloat(string(v), 64)
	switch {
	case err != nil || f != math.Trunc(f):
		return string(v) + " is not an integer"
	case f < math.MinInt32 || f > math.MaxInt32:
		return string(v) + " is out of the range of the integers mcpx can read (at most 2147483647)"
	}
	if _, err := strconv.ParseInt(string(v), 10, 64); err != nil && !strings.ContainsRune(string(v), '.') {
		return string(v) + " has an exponent, which mcpx cannot read as an integer"
	}
	return ""
}

// Keywords whose values are schemas (JSON Schema 2020-12, "Keywords for
// Applying Subschemas", and draft-07's definitions, dependencies and items
// as an array), by the shape that holds them.
var (
	schemaMapKeywords   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaListKeywords  = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaValueKeywords = []string{"items", "additionalItems", "contains", "additionalProperties", "propertyNames",
		"unevaluatedItems", "unevaluatedProperties", "not", "if", "then", "else", "contentSchema"}
)

// findSchemaMember returns the JSON Pointer (below at) of the first member
// of schema, or of a schema inside it, for which match holds, depth first
// in the document's order; "" when there is none. Only keywords are
// matched: property names and the values of const, enum or default are
// not.
func findSchemaMember(schema []byte, at string, match func(name string, v []byte) bool) string {
	found := ""
	rawjson.Members(schema, func(q, v []byte) bool {
		name := rawjson.Name(q)
		here := at + "/" + pointerToken(name)
		if match(name, v) {
			found = here
			return false
		}
		switch {
		case isObject(v) && slices.Contains(schemaMapKeywords, name):
			rawjson.Members(v, func(q, sub []byte) bool {
				found = findSchemaMember(sub, here+"/"+pointerToken(rawjson.Name(q)), match)
				return found == ""
			})
		case isArray(v) && slices.Contains(schemaListKeywords, name):
			i := 0
			rawjson.Elements(v, func(sub []byte) bool {
				found = findSchemaMember(sub, here+"/"+strconv.Itoa(i), match)
				i++
				return found == ""
			})
		case isObject(v) && slices.Contains(schemaValueKeywords, name):
			found = findSchemaMember(v, here, match)
		}
		return found == ""
	})
	return found
}

// pointerToken escapes a member name for a JSON Pointer (RFC 6901).
func pointerToken(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// refCircle finds a local $ref that leads back to a schema it starts from
// without going into the value: through $refs and the keywords that apply
// a schema to the value itself (allOf, anyOf, oneOf, not, if, then, else,
// dependentSchemas; JSON Schema 2020-12, "Keywords for Applying
// Subschemas in Place"; and draft-07's dependencies, which the library
// applies in a draft-07 schema), as {"$defs":{"A":{"$ref":"#/$defs/A"}}} or
// {"$defs":{"T":{"anyOf":[{"$ref":"#/$defs/T"}]}}}. The validation library
// follows such a circle until the program dies of it (a stack overflow,
// which no recover catches), so a schema with one is refused. It returns
// the JSON Pointer of the schema the circle comes back to ("" for the
// root), and whether there is one. raw is the whole document, valid
// JSON; its $refs are read as typing reads them (resolveRef).
func refCircle(raw []byte) (string, bool) {
	const (
		unseen = iota
		open
		done
	)
	state := map[int]int{} // by the offset of the schema in raw
	offset := func(v []byte) int { return cap(raw) - cap(v) }
	var circle string
	found := false
	// inPlace follows the in-place subschemas of v (at its pointer).
	var inPlace func(v []byte, at string) bool
	inPlace = func(v []byte, at string) bool {
		if !isObject(v) {
			return true
		}
		o := offset(v)
		switch state[o] {
		case open:
			circle, found = at, true
			return false
		case done:
			return true
		}
		state[o] = open
		rawjson.Members(v, func(q, m []byte) bool {
			name := rawjson.Name(q)
			here := at + "/" + pointerToken(name)
			switch name {
			case "allOf", "anyOf", "oneOf":
				i, fine := 0, true
				rawjson.Elements(m, func(e []byte) bool {
					fine = inPlace(e, here+"/"+strconv.Itoa(i))
					i++
					return fine
				})
				return fine
			case "not", "if", "then", "else":
				return inPlace(m, here)
			case "dependentSchemas", "dependencies":
				// (draft-07's dependencies: those whose value is a
				// schema apply it in place, as dependentSchemas does.)
				fine := true
				rawjson.Members(m, func(q, e []byte) bool {
					fine = inPlace(e, here+"/"+pointerToken(rawjson.Name(q)))
					return fine
				})
				return fine
			case "$ref":
				ref, isString := rawjson.String(m)
				if !isString {
					return true
				}
				target := resolveRef(raw, ref)
				if target == nil {
					return true
				}
				// (A JSON Pointer's target is named by it.)
				return inPlace(target, strings.TrimPrefix(ref, "#"))
			}
			return true
		})
		if found {
			return false
		}
		state[o] = done
		return true
	}
	// Every schema of the document starts a search.
	var each func(v []byte, at string) bool
	each = func(v []byte, at string) bool {
		if !inPlace(v, at) {
			return false
		}
		fine := true
		rawjson.Members(v, func(q, m []byte) bool {
			name := rawjson.Name(q)
			here := at + "/" + pointerToken(name)
			switch {
			case isObject(m) && slices.Contains(schemaMapKeywords, name):
				rawjson.Members(m, func(q, sub []byte) bool {
					fine = each(sub, here+"/"+pointerToken(rawjson.Name(q)))
					return fine
				})
			case isArray(m) && slices.Contains(schemaListKeywords, name):
				i := 0
				rawjson.Elements(m, func(sub []byte) bool {
					fine = each(sub, here+"/"+strconv.Itoa(i))
					i++
					return fine
				})
			case isObject(m) && slices.Contains(schemaValueKeywords, name):
				fine = each(m, here)
			}
			return fine
		})
		return fine
	}
	each(rawjson.Trim(raw), "")
	return circle, found
}

// refsToDefsOnly reports whether every $ref of the document raw (valid
// JSON) is to one of its $defs or definitions ("#/$defs/User"), and it
// names no other base ($id below its root, $dynamicRef, $recursiveRef).
// Any object's members are looked at, values (const, enum) too: a false
// answer only costs a message detail.
func refsToDefsOnly(raw []byte) bool {
	fine := true
	var walk func(v []byte, root bool)
	walk = func(v []byte, root bool) {
		switch {
		case isObject(v):
			rawjson.Members(v, func(q, m []byte) bool {
				switch rawjson.Name(q) {
				case "$ref":
					ref, _ := rawjson.String(m)
					fine = strings.HasPrefix(ref, "#/$defs/") || strings.HasPrefix(ref, "#/definitions/")
				case "$id":
					fine = root
				case "$dynamicRef", "$recursiveRef":
					fine = false
				}
				if fine {
					walk(m, false)
				}
				return fine
			})
		case isArray(v):
			rawjson.Elements(v, func(e []byte) bool {
				walk(e, false)
				return fine
			})
		}
	}
	walk(rawjson.Trim(raw), true)
	return fine
}

// maxInPlace bounds the subschemas one value is checked against in place
// (inPlaceWide).
const maxInPlace = 10000

// inPlaceWide reports a schema of raw whose in-place subschemas ($ref,
// allOf, anyOf, oneOf, not, if, then, else, dependentSchemas, draft-07's
// dependencies), followed
// through every $ref, number more than maxInPlace: the JSON Schema library
// checks a value against each of them, so a chain of forty $defs each
// an anyOf of two $refs to the next has a value checked 2^40 times, which
// never ends. It returns the JSON Pointer of the first such schema
// ("" for the root). raw is valid JSON without a $ref circle (refCircle).
func inPlaceWide(raw []byte) (string, bool) {
	count := map[int]int{} // by the offset of the schema in raw
	offset := func(v []byte) int { return cap(raw) - cap(v) }
	// size counts v and its in-place subschemas, at most maxInPlace+1.
	var size func(v []byte) int
	size = func(v []byte) int {
		if !isObject(v) {
			return 1
		}
		o := offset(v)
		if n, ok := count[o]; ok {
			return n
		}
		n := 1
		add := func(sub []byte) bool {
			n = min(n+size(sub), maxInPlace+1)
			return n <= maxInPlace
		}
		rawjson.Members(v, func(q, m []byte) bool {
			switch rawjson.Name(q) {
			case "allOf", "anyOf", "oneOf":
				rawjson.Elements(m, add)
			case "not", "if", "then", "else":
				add(m)
			case "dependentSchemas", "dependencies":
				rawjson.Members(m, func(_, e []byte) bool { return add(e) })
			case "$ref":
				if ref, ok := rawjson.String(m); ok {
					if target := resolveRef(raw, ref); target != nil {
						add(target)
					}
				}
			}
			return n <= maxInPlace
		})
		count[o] = n
		return n
	}
	var at string
	wide := false
	var each func(v []byte, here string)
	each = func(v []byte, here string) {
		if wide || !isObject(v) {
			return
		}
		if size(v) > maxInPlace {
			at, wide = here, true
			return
		}
		rawjson.Members(v, func(q, m []byte) bool {
			name := rawjson.Name(q)
			sub := here + "/" + pointerToken(name)
			switch {
			case isObject(m) && slices.Contains(schemaMapKeywords, name):
				rawjson.Members(m, func(q, s []byte) bool {
					each(s, sub+"/"+pointerToken(rawjson.Name(q)))
					return !wide
				})
			case isArray(m) && slices.Contains(schemaListKeywords, name):
				i := 0
				rawjson.Elements(m, func(s []byte) bool {
					each(s, sub+"/"+strconv.Itoa(i))
					i++
					return !wide
				})
			case isObject(m) && slices.Contains(schemaValueKeywords, name):
				each(m, sub)
			}
			return !wide
		})
	}
	each(rawjson.Trim(raw), "")
	return at, wide
}
