package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/httptoken"
)

// Tool parameters mirrored into HTTP headers (spec 2026-07-28:
// server/tools, "x-mcp-header", and basic/transports/streamable-http,
// "Custom Headers from Tool Parameters").

// xHeaderKey is the JSON Schema extension keyword that designates a
// parameter to mirror.
const xHeaderKey = "x-mcp-header"

// maxSafeInteger bounds integer values that may be mirrored: the range a
// JavaScript number holds exactly.
const maxSafeInteger = 1<<53 - 1

// HeaderParam is one x-mcp-header annotation of a tool's input schema.
type HeaderParam struct {
	// Header is the annotation's value: the header is Mcp-Param-{Header}.
	Header string
	// Path is the chain of property names from the arguments object to the
	// annotated parameter.
	Path []string
	// Type is the parameter's primitive type: string, integer or boolean.
	Type string
}

// ToolHeaderParams finds and checks the x-mcp-header annotations of a tool
// input schema. Annotations must name a valid, case-insensitively unique
// header, sit on a string, integer or boolean property, and be reachable
// from the root through "properties" alone (never through items,
// composition, conditionals or $ref). The error says what is wrong.
func ToolHeaderParams(inputSchema json.RawMessage) ([]HeaderParam, error) {
	if len(bytes.TrimSpace(inputSchema)) == 0 {
		return nil, nil
	}
	// Most schemas have no annotation: a schema that cannot spell the
	// keyword, even with escapes, is not decoded (a list of thousands of
	// tools checks every one).
	if !bytes.Contains(inputSchema, []byte(xHeaderKey)) && bytes.IndexByte(inputSchema, '\\') < 0 && json.Valid(inputSchema) {
		return nil, nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(inputSchema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %w", err)
	}
	w := &headerWalk{seen: map[string]string{}}
	w.schema(root, nil, true, "")
	if w.err != nil {
		return nil, w.err
	}
	return w.params, nil
}

type headerWalk struct {
	params []HeaderParam
	seen   map[string]string // lower-cased header -> location
	err    error
}

func (w *headerWalk) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

// Keywords whose values are subschemas (or maps or arrays of them); an
// annotation inside any of them is not statically reachable.
var (
	schemaMapKeywords   = []string{"$defs", "definitions", "patternProperties", "dependentSchemas"}
	schemaValueKeywords = []string{"items", "additionalItems", "prefixItems", "contains", "additionalProperties",
		"unevaluatedItems", "unevaluatedProperties", "propertyNames", "not", "if", "then", "else", "allOf", "anyOf", "oneOf"}
)

// schema walks one subschema at location loc; reachable says whether it is
// reachable from the root through "properties" only, path is its property
// path then.
func (w *headerWalk) schema(node any, path []string, reachable bool, loc string) {
	obj, ok := node.(map[string]any)
	if !ok {
		return
	}
	if v, has := obj[xHeaderKey]; has {
		w.annotation(obj, v, path, reachable, loc)
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		names := sortedKeys(props)
		for _, name := range names {
			w.schema(props[name], append(append([]string(nil), path...), name), reachable, loc+"/properties/"+name)
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := obj[k].(map[string]any); ok {
			for _, name := range sortedKeys(m) {
				w.schema(m[name], nil, false, loc+"/"+k+"/"+name)
			}
		}
	}
	for _, k := range schemaValueKeywords {
		switch v := obj[k].(type) {
		case map[string]any:
			w.schema(v, nil, false, loc+"/"+k)
		case []any:
			for i, sub := range v {
				w.schema(sub, nil, false, fmt.Sprintf("%s/%s/%d", loc, k, i))
			}
		}
	}
}

func (w *headerWalk) annotation(obj map[string]any, v any, path []string, reachable bool, loc string) {
	where := "/" + strings.TrimPrefix(loc, "/")
	if !reachable || len(path) == 0 {
		w.fail("%s at %s is not reachable from the schema root through properties alone", xHeaderKey, where)
		return
	}
	name, ok := v.(string)
	switch {
	case !ok:
		w.fail("%s at %s must be a string", xHeaderKey, where)
		return
	case name == "":
		w.fail("%s at %s is empty", xHeaderKey, where)
		return
	case !httptoken.Valid(name):
		w.fail("%s %q at %s is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~ only)", xHeaderKey, name, where)
		return
	}
	if prev, dup := w.seen[strings.ToLower(name)]; dup {
		w.fail("%s %q at %s repeats the one at %s (names are compared case-insensitively)", xHeaderKey, name, where, prev)
		return
	}
	w.seen[strings.ToLower(name)] = where
	typ, err := primitiveType(obj["type"])
	if err != nil {
		w.fail("%s %q at %s: %v", xHeaderKey, name, where, err)
		return
	}
	w.params = append(w.params, HeaderParam{Header: name, Path: path, Type: typ})
}

// primitiveType returns the one primitive type (string, integer, boolean)
// a "type" keyword allows besides null.
func primitiveType(t any) (string, error) {
	var types []string
	switch v := t.(type) {
	case string:
		types = []string{v}
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && s != "null" {
				types = append(types, s)
			}
		}
	case nil:
		return "", fmt.Errorf("the property declares no type; only string, integer and boolean may be mirrored")
	}
	if len(types) != 1 {
		return "", fmt.Errorf("the property must have exactly one of the types string, integer, boolean")
	}
	switch types[0] {
	case "string", "integer", "boolean":
		return types[0], nil
	case "number":
		return "", fmt.Errorf("type number may not be mirrored (only string, integer, boolean)")
	}
	return "", fmt.Errorf("type %s may not be mirrored (only string, integer, boolean)", types[0])
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// HeaderValues extracts the values to mirror from a call's arguments. A
// parameter absent from the arguments, or null, gets no header. Values
// are converted as the spec says: strings as they are, integers in
// decimal, booleans as true or false.
func HeaderValues(params []HeaderParam, arguments json.RawMessage) ([]RouteParam, error) {
	if len(params) == 0 || len(bytes.TrimSpace(arguments)) == 0 {
		return nil, nil
	}
	var args any
	dec := json.NewDecoder(bytes.NewReader(arguments))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	var out []RouteParam
	for _, p := range params {
		v, ok := lookupPath(args, p.Path)
		if !ok || v == nil {
			continue
		}
		s, err := headerString(v, p)
		if err != nil {
			return nil, err
		}
		out = append(out, RouteParam{Name: p.Header, Value: s})
	}
	return out, nil
}

func lookupPath(v any, path []string) (any, bool) {
	for _, k := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func headerString(v any, p HeaderParam) (string, error) {
	where := strings.Join(p.Path, ".")
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if i > maxSafeInteger || i < -maxSafeInteger {
				return "", fmt.Errorf("argument %s=%s is outside the integer range that may be mirrored into Mcp-Param-%s (±2^53-1)", where, x, p.Header)
			}
			return strconv.FormatInt(i, 10), nil
		}
		f, err := x.Float64()
		if err == nil && !math.IsInf(f, 0) && f != math.Trunc(f) {
			return x.String(), nil
		}
		if err != nil || math.IsInf(f, 0) || math.Abs(f) > maxSafeInteger {
			// Float64 fails for numbers beyond float64 (1e400).
			return "", fmt.Errorf("argument %s=%s is outside the integer range that may be mirrored into Mcp-Param-%s (±2^53-1)", where, x, p.Header)
		}
		return strconv.FormatInt(int64(f), 10), nil
	}
	return "", fmt.Errorf("argument %s is an object or array; Mcp-Param-%s can only carry a string, integer or boolean", where, p.Header)
}
