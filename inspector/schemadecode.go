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
