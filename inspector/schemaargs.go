package inspector

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// schemaArgsFast is SchemaArgs in one structural pass over the schema, for
// the schemas servers write: a tools table of thousands of tools describes
// every one, and the decodes by encoding/json that SchemaArgs, schemaTypes
// and schemaChoices make were most of its cost (issue 13). ok is false for
// anything out of the ordinary — a member named with escapes or in another
// case, a duplicate, a keyword of an unexpected type — where the result
// could differ from encoding/json's: schemaArgsSlow decides those.
func schemaArgsFast(schema json.RawMessage) (args []ArgInfo, ok bool) {
	if !json.Valid(schema) {
		return nil, false
	}
	var props, required []byte
	if !plainMembers(schema, func(name string, v []byte) bool {
		switch name {
		case "properties":
			if props != nil || !isObject(v) {
				return false
			}
			props = v
		case "required":
			if required != nil || !isArray(v) {
				return false
			}
			required = v
		case "$ref", "allOf":
			// Arguments described elsewhere (an inputSchema that is
			// a $ref, or an allOf of object schemas): schemaArgsSlow
			// reads them.
			return false
		}
		return true
	}, "properties", "required", "$ref", "allOf") {
		return nil, false
	}
	var req []string
	if required != nil && !eachElement(required, func(e []byte) bool {
		s, ok := plainString(e)
		req = append(req, s)
		return ok
	}) {
		return nil, false
	}
	if props == nil {
		return nil, true
	}
	type prop struct {
		name string
		raw  []byte
	}
	var list []prop
	seen := map[string]bool{}
	fine := true
	rawjson.Members(props, func(q, v []byte) bool {
		name, ok := plainString(q)
		if !ok || seen[name] {
			fine = false
			return false
		}
		seen[name] = true
		list = append(list, prop{name, v})
		return true
	})
	if !fine {
		return nil, false
	}
	if len(list) == 0 {
		return nil, true
	}
	for _, p := range list {
		d, ok := describeProp(p.raw)
		if !ok {
			return nil, false
		}
		args = append(args, ArgInfo{
			Name:        p.name,
			Type:        strings.Join(d.types, "|"),
			Default:     d.def,
			Enum:        d.choices,
			Description: d.description,
			Required:    slices.Contains(req, p.name),
		})
	}
	return args, true
}

// propDesc is what SchemaArgs reads from one property schema.
type propDesc struct {
	types, choices []string
	def            json.RawMessage
	description    string
}

// describeProp reads a property schema as schemaTypes, schemaChoices and
// SchemaArgs's own decode would; ok is false where it cannot be sure.
func describeProp(raw []byte) (d propDesc, ok bool) {
	if !isObject(raw) {
		return d, false
	}
	var typ, enum, konst, anyOf, oneOf []byte
	if !plainMembers(raw, func(name string, v []byte) bool {
		switch name {
		case "type":
			typ = v
			return rawjson.IsString(v) || isArray(v)
		case "enum":
			enum = v
			return isArray(v)
		case "const":
			konst = v
		case "anyOf":
			anyOf = v
			return isArray(v)
		case "oneOf":
			oneOf = v
			return isArray(v)
		case "default":
			d.def = v
		case "$ref", "allOf":
			// The schemas it points to describe it: schemaArgsSlow
			// follows them.
			return false
		case "description":
			if !rawjson.IsString(v) {
				return false
			}
			var ok bool
			d.description, ok = rawjson.String(v)
			return ok
		}
		return true
	}, "type", "enum", "const", "anyOf", "oneOf", "default", "description", "items", "$ref", "allOf") {
		return d, false
	}
	var types []string
	switch {
	case typ == nil:
	case rawjson.IsString(typ):
		s, ok := rawjson.String(typ)
		if !ok {
			return d, false
		}
		types = append(types, s)
	default:
		if !eachElement(typ, func(e []byte) bool {
			s, ok := rawjson.String(e)
			types = append(types, s)
			return ok && rawjson.IsString(e)
		}) {
			return d, false
		}
	}
	var values [][]byte
	if enum != nil {
		rawjson.Elements(enum, func(e []byte) bool { values = append(values, e); return true })
	}
	if konst != nil {
		values = append(values, konst)
	}
	for _, v := range values {
		if t := jsonType(v); t != "" {
			types = append(types, t)
		}
	}
	addChoice := func(v []byte) bool {
		switch {
		case rawjson.IsNull(v):
			d.choices = append(d.choices, "")
		case rawjson.IsString(v):
			s, ok := rawjson.String(v)
			if !ok {
				return false
			}
			d.choices = append(d.choices, s)
		default:
			if t := jsonType(v); t == "number" || t == "boolean" {
				d.choices = append(d.choices, string(v))
			}
		}
		return true
	}
	for _, v := range values {
		if !addChoice(v) {
			return d, false
		}
	}
	// Types look through anyOf then oneOf, choices through oneOf then
	// anyOf, as schemaTypes and schemaChoices do.
	var subs [][]propDesc
	for _, list := range [][]byte{anyOf, oneOf} {
		var ds []propDesc
		if list != nil && !eachElement(list, func(e []byte) bool {
			sd, ok := describeProp(e)
			ds = append(ds, sd)
			return ok
		}) {
			return d, false
		}
		subs = append(subs, ds)
	}
	for _, ds := range subs {
		for _, sd := range ds {
			types = append(types, sd.types...)
		}
	}
	for _, ds := range [][]propDesc{subs[1], subs[0]} {
		for _, sd := range ds {
			d.choices = append(d.choices, sd.choices...)
		}
	}
	slices.Sort(types)
	d.types = slices.Compact(types)
	return d, true
}

// plainMembers calls fn for each member of the object data whose name is
// one of names; it reports false — and SchemaArgs takes the slow path —
// when a member name has escapes, matches one of names only without
// regard to case (encoding/json would take it), repeats one of them, or fn
// says so.
func plainMembers(data []byte, fn func(name string, v []byte) bool, names ...string) bool {
	seen := map[string]bool{}
	ok := true
	isObj := rawjson.Members(data, func(q, v []byte) bool {
		if bytes.IndexByte(q, '\\') >= 0 {
			ok = false
			return false
		}
		name := string(q[1 : len(q)-1])
		for _, n := range names {
			if name == n {
				if seen[n] || !fn(n, v) {
					ok = false
					return false
				}
				seen[n] = true
				return true
			}
			if strings.EqualFold(name, n) {
				ok = false
				return false
			}
		}
		return true
	})
	return isObj && ok
}

// eachElement calls fn for each element of the array data until fn
// returns false; it reports whether data is an array and fn took them all.
func eachElement(data []byte, fn func(e []byte) bool) bool {
	all := true
	return rawjson.Elements(data, func(e []byte) bool {
		all = fn(e)
		return all
	}) && all
}

// plainString decodes a JSON string without escapes (or invalid UTF-8,
// which encoding/json would replace).
func plainString(q []byte) (string, bool) {
	if !rawjson.IsString(q) || bytes.IndexByte(q, '\\') >= 0 || !utf8.Valid(q) {
		return "", false
	}
	return string(q[1 : len(q)-1]), true
}

func isObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }
func isArray(v []byte) bool  { return len(v) > 0 && v[0] == '[' }
