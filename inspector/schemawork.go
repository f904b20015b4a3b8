package inspector

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// CheckWorkError reports a value that is not checked against a schema
// because the check would not end in any reasonable time: the JSON Schema
// library checks a value against every subschema that applies to it, and
// follows every path to each, so a schema whose anyOf names the same
// definition twice, and whose definition applies it again to a property,
// has a value nested forty levels deep checked 2^40 times, work that
// nothing could interrupt (a server's outputSchema and its own
// structuredContent, say). Like *PatternWorkError, it is no failure of the
// value: the caller says the value went unchecked.
type CheckWorkError struct {
	// Limit is the number of schema applications mcpx allows for this
	// value (see checkBudget).
	Limit int
}

func (e *CheckWorkError) Error() string {
	return fmt.Sprintf("the schema applies to the value's parts more than %d times (its $refs, allOf, anyOf and oneOf repeat at every level), a check that would not end", e.Limit)
}

// checkBudget is how many schema applications the check of a value of
// nodes JSON values (objects, arrays and scalars, counted alike) may
// make: a fixed allowance, and a few dozen a value, which no schema
// written by a person nears (a property checked against its schema, a
// $ref and a branch or two of an anyOf), while the exponential ones pass
// it at once.
func checkBudget(nodes int) int { return 1_000_000 + 64*nodes }

// workCounter counts, without checking anything, the schema applications
// the JSON Schema library makes to check a value: every in-place
// subschema ($ref, $dynamicRef, allOf, anyOf, oneOf, not, if, then, else,
// dependentSchemas, draft-07's dependencies) of each schema that applies, and, for each part of
// the value, each schema that applies to it (properties,
// patternProperties, additionalProperties, unevaluatedProperties,
// propertyNames; prefixItems, items, additionalItems, contains,
// unevaluatedItems). It overcounts where the library would not go
// (every patternProperties schema is taken to apply to every member, and
// if's then and else both), never under, but for a $ref it cannot follow
// (to another document's $id), which is taken as applying nothing. It
// stops once the count passes the budget.
type workCounter struct {
	root    *jsonschema.Schema
	refs    map[string]*jsonschema.Schema // resolved $refs, nil for those not found
	anchors map[string]*jsonschema.Schema // $anchor and $dynamicAnchor names
	n       int
	budget  int
	depth   int
}

// maxWorkDepth bounds the counter's recursion: a $ref circle through an
// anchor, which refCircle does not follow, would otherwise recurse until
// the budget, a million frames deep.
const maxWorkDepth = 10000

// checkWork returns a *CheckWorkError when checking v against the schema
// would take more than checkBudget applications; nil when it would not.
func (s *Schema) checkWork(v any) error {
	budget := checkBudget(countNodes(v))
	c := &workCounter{root: s.root, budget: budget}
	if !c.apply(s.root, v) {
		return &CheckWorkError{Limit: budget}
	}
	return nil
}

// countNodes counts the JSON values of v, v included.
func countNodes(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 1
		for _, e := range x {
			n += countNodes(e)
		}
		return n
	case []any:
		n := 1
		for _, e := range x {
			n += countNodes(e)
		}
		return n
	}
	return 1
}

// apply counts the applications of s to v; false once over the budget.
func (c *workCounter) apply(s *jsonschema.Schema, v any) bool {
	if s == nil {
		return true
	}
	if c.n++; c.n > c.budget || c.depth >= maxWorkDepth {
		return false
	}
	c.depth++
	defer func() { c.depth-- }()
	if s.Ref != "" && !c.apply(c.resolve(s.Ref), v) {
		return false
	}
	if s.DynamicRef != "" && !c.apply(c.resolve(s.DynamicRef), v) {
		return false
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			if !c.apply(sub, v) {
				return false
			}
		}
	}
	for _, sub := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
		if !c.apply(sub, v) {
			return false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, deps := range []map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
			for _, sub := range deps {
				if !c.apply(sub, v) {
					return false
				}
			}
		}
		for k, e := range x {
			prop, named := s.Properties[k]
			if named && !c.apply(prop, e) {
				return false
			}
			for _, sub := range s.PatternProperties {
				if !c.apply(sub, e) {
					return false
				}
			}
			if !named && !c.apply(s.AdditionalProperties, e) {
				return false
			}
			if !c.apply(s.UnevaluatedProperties, e) || !c.apply(s.PropertyNames, k) {
				return false
			}
		}
	case []any:
		for i, e := range x {
			switch {
			case i < len(s.PrefixItems):
				if !c.apply(s.PrefixItems[i], e) {
					return false
				}
			case i < len(s.ItemsArray):
				if !c.apply(s.ItemsArray[i], e) {
					return false
				}
			case len(s.ItemsArray) > 0:
				if !c.apply(s.AdditionalItems, e) {
					return false
				}
			default:
				if !c.apply(s.Items, e) {
					return false
				}
			}
			if !c.apply(s.Contains, e) || !c.apply(s.UnevaluatedItems, e) {
				return false
			}
		}
	}
	return true
}

// resolve finds the schema a local $ref or $dynamicRef names: a JSON
// Pointer into the document ("#/$defs/node"), or an anchor ("#node");
// nil for any other.
func (c *workCounter) resolve(ref string) *jsonschema.Schema {
	if t, ok := c.refs[ref]; ok {
		return t
	}
	var t *jsonschema.Schema
	if frag, ok := strings.CutPrefix(ref, "#"); ok {
		if f, err := url.PathUnescape(frag); err == nil {
			switch {
			case f == "":
				t = c.root
			case f[0] == '/':
				t = pointerSchema(c.root, strings.Split(f[1:], "/"))
			default:
				if c.anchors == nil {
					c.anchors = map[string]*jsonschema.Schema{}
					collectAnchors(c.root, c.anchors)
				}
				t = c.anchors[f]
			}
		}
	}
	if c.refs == nil {
		c.refs = map[string]*jsonschema.Schema{}
	}
	c.refs[ref] = t
	return t
}

// pointerSchema follows the tokens of a JSON Pointer from s through the
// keywords that hold schemas; nil when they lead to none.
func pointerSchema(s *jsonschema.Schema, tokens []string) *jsonschema.Schema {
	for i := 0; i < len(tokens) && s != nil; i++ {
		tok := strings.ReplaceAll(strings.ReplaceAll(tokens[i], "~1", "/"), "~0", "~")
		var maps = map[string]map[string]*jsonschema.Schema{
			"$defs": s.Defs, "definitions": s.Definitions, "properties": s.Properties,
			"patternProperties": s.PatternProperties, "dependentSchemas": s.DependentSchemas,
			"dependencies": s.DependencySchemas,
		}
		var lists = map[string][]*jsonschema.Schema{
			"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems,
		}
		var single = map[string]*jsonschema.Schema{
			"not": s.Not, "if": s.If, "then": s.Then, "else": s.Else, "additionalProperties": s.AdditionalProperties,
			"unevaluatedProperties": s.UnevaluatedProperties, "propertyNames": s.PropertyNames, "contains": s.Contains,
			"unevaluatedItems": s.UnevaluatedItems, "additionalItems": s.AdditionalItems, "contentSchema": s.ContentSchema,
		}
		switch {
		case maps[tok] != nil && i+1 < len(tokens):
			i++
			s = maps[tok][strings.ReplaceAll(strings.ReplaceAll(tokens[i], "~1", "/"), "~0", "~")]
		case lists[tok] != nil && i+1 < len(tokens):
			i++
			n, err := strconv.Atoi(tokens[i])
			if err != nil || n < 0 || n >= len(lists[tok]) {
				return nil
			}
			s = lists[tok][n]
		case tok == "items":
			if s.Items != nil {
				s = s.Items
			} else if i+1 < len(tokens) {
				i++
				n, err := strconv.Atoi(tokens[i])
				if err != nil || n < 0 || n >= len(s.ItemsArray) {
					return nil
				}
				s = s.ItemsArray[n]
			} else {
				return nil
			}
		case single[tok] != nil:
			s = single[tok]
		default:
			return nil
		}
	}
	return s
}

// collectAnchors maps the $anchor and $dynamicAnchor names of s and its
// subschemas to their schemas (the first of a name wins).
func collectAnchors(s *jsonschema.Schema, into map[string]*jsonschema.Schema) {
	if s == nil {
		return
	}
	for _, a := range []string{s.Anchor, s.DynamicAnchor} {
		if _, ok := into[a]; a != "" && !ok {
			into[a] = s
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Definitions, s.Properties, s.PatternProperties, s.DependentSchemas, s.DependencySchemas} {
		for _, sub := range m {
			collectAnchors(sub, into)
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems, s.ItemsArray} {
		for _, sub := range list {
			collectAnchors(sub, into)
		}
	}
	for _, sub := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else, s.Items, s.AdditionalItems, s.AdditionalProperties,
		s.UnevaluatedProperties, s.PropertyNames, s.Contains, s.UnevaluatedItems, s.ContentSchema} {
		collectAnchors(sub, into)
	}
}
