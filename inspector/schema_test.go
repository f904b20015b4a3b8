package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// referenceValidate validates with the general-purpose library mcpx used
// before its own validator (issue 13), formatting failures the way mcpx
// did, so that the two can be compared.
func referenceValidate(t *testing.T, schema, value string) (compiled bool, msg string) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mcpx:///schema.json", doc); err != nil {
		return false, ""
	}
	s, err := c.Compile("mcpx:///schema.json")
	if err != nil {
		return false, ""
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(value)))
	if err != nil {
		t.Fatal(err)
	}
	var ve *jsonschema.ValidationError
	if err := s.Validate(v); errors.As(err, &ve) {
		return true, strings.Join(referenceLeaves(ve), "; ")
	}
	return true, ""
}

func referenceLeaves(ve *jsonschema.ValidationError) []string {
	if len(ve.Causes) == 0 {
		msg := ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))
		if len(ve.InstanceLocation) == 0 {
			return []string{msg}
		}
		return []string{"at /" + strings.Join(ve.InstanceLocation, "/") + ": " + msg}
	}
	var out []string
	for _, c := range ve.Causes {
		out = append(out, referenceLeaves(c)...)
	}
	return out
}

// TestSchemaMatchesReference: mcpx's validator accepts and rejects what the
// library it replaced did, with the same messages, on the schemas of
// elicitation forms (spec 2025-11-25: client/elicitation, "Requested
// Schema") and the general keywords around them.
func TestSchemaMatchesReference(t *testing.T) {
	cases := schemaCases
	for _, c := range cases {
		compiled, want := referenceValidate(t, c.schema, c.value)
		s, err := CompileSchema(json.RawMessage(c.schema))
		if (err == nil) != compiled {
			t.Errorf("%s: compiled %v, the reference %v (%v)", c.schema, err == nil, compiled, err)
			continue
		}
		if err != nil {
			continue
		}
		got := ""
		if err := s.Validate(json.RawMessage(c.value)); err != nil {
			got = err.Error()
		}
		// The reference's order of properties is its map's: compare the
		// failures as a set.
		if sortedLeaves(got) != sortedLeaves(want) {
			t.Errorf("%.60s... against %s:\n  got  %q\n  want %q", c.schema, c.value, got, want)
		}
	}
}

func sortedLeaves(s string) string {
	l := strings.Split(s, "; ")
	slices.Sort(l)
	return strings.Join(l, "; ")
}

// noLoader refuses every external reference: the tests never fetch.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("tests do not fetch schema " + url)
}

// form is an elicitation form with every kind of field.
const form = `{"type":"object","properties":{
	"name":{"type":"string","minLength":2,"maxLength":5},
	"email":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"born":{"type":"string","format":"date"},
	"at":{"type":"string","format":"date-time"},
	"age":{"type":"integer","minimum":18,"maximum":150},
	"score":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":10,"multipleOf":0.5},
	"ok":{"type":"boolean"},
	"color":{"type":"string","enum":["red","green"]},
	"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":1,"maxItems":2,"uniqueItems":true},
	"multi":{"type":"array","items":{"anyOf":[{"const":"x"},{"const":"y"}]}},
	"code":{"type":"string","pattern":"^[A-Z]{3}$"}
},"required":["name","email"]}`

var schemaCases = []struct{ schema, value string }{
	{form, `{"name":"Ada","email":"ada@example.com"}`},
	{form, `{}`},
	{form, `{"name":"A","email":"not an email"}`},
	{form, `{"name":"Adalovelace","email":"a@b"}`},
	{form, `{"name":"Ada","email":"a@b.co","age":3}`},
	{form, `{"name":"Ada","email":"a@b.co","age":200}`},
	{form, `{"name":"Ada","email":"a@b.co","age":18.5}`},
	{form, `{"name":"Ada","email":"a@b.co","age":"18"}`},
	{form, `{"name":"Ada","email":"a@b.co","age":20.0}`},
	{form, `{"name":"Ada","email":"a@b.co","score":0}`},
	{form, `{"name":"Ada","email":"a@b.co","score":10}`},
	{form, `{"name":"Ada","email":"a@b.co","score":2.25}`},
	{form, `{"name":"Ada","email":"a@b.co","score":2.5}`},
	{form, `{"name":"Ada","email":"a@b.co","ok":"yes"}`},
	{form, `{"name":"Ada","email":"a@b.co","color":"blue"}`},
	{form, `{"name":"Ada","email":"a@b.co","size":"m"}`},
	{form, `{"name":"Ada","email":"a@b.co","size":"s"}`},
	{form, `{"name":"Ada","email":"a@b.co","tags":[]}`},
	{form, `{"name":"Ada","email":"a@b.co","tags":["a","a"]}`},
	{form, `{"name":"Ada","email":"a@b.co","tags":["a","b","c"]}`},
	{form, `{"name":"Ada","email":"a@b.co","tags":["d"]}`},
	{form, `{"name":"Ada","email":"a@b.co","multi":["x","z"]}`},
	{form, `{"name":"Ada","email":"a@b.co","code":"abc"}`},
	{form, `{"name":"Ada","email":"a@b.co","code":"ABC"}`},
	{form, `{"name":"Ada","email":"a@b.co","site":"https://example.com/x"}`},
	{form, `{"name":"Ada","email":"a@b.co","site":"/relative"}`},
	{form, `{"name":"Ada","email":"a@b.co","born":"2024-02-30"}`},
	{form, `{"name":"Ada","email":"a@b.co","born":"2024-02-29"}`},
	{form, `{"name":"Ada","email":"a@b.co","at":"2024-02-29T12:00:00Z"}`},
	{form, `{"name":"Ada","email":"a@b.co","at":"2024-02-29T12:00:00+02:00"}`},
	{form, `{"name":"Ada","email":"a@b.co","at":"2024-02-29 12:00"}`},
	{form, `{"name":"Ada","email":"a@b.co","at":"2024-02-29T25:00:00Z"}`},
	{form, `{"name":"Ada","email":"a@b.co","extra":1}`},
	{form, `[]`},
	{`{"type":"object","additionalProperties":false,"properties":{"a":{}}}`, `{"a":1,"b":2}`},
	{`{"type":"object","required":["a","b"]}`, `{}`},
	{`{"type":["string","null"]}`, `null`},
	{`{"type":["string","null"]}`, `1`},
	{`{"const":{"a":1}}`, `{"a":2}`},
	{`{"const":"x"}`, `"y"`},
	{`{"enum":[1,2]}`, `3`},
	{`{"enum":[1,2]}`, `2.0`},
	{`{"not":{"type":"string"}}`, `"s"`},
	{`{"allOf":[{"minimum":1},{"maximum":3}]}`, `5`},
	{`{"oneOf":[{"minimum":1},{"maximum":3}]}`, `2`},
	{`{"if":{"minimum":10},"then":{"multipleOf":2},"else":{"maximum":0}}`, `11`},
	{`{"if":{"minimum":10},"then":{"multipleOf":2},"else":{"maximum":0}}`, `5`},
	{`{"$defs":{"p":{"type":"integer"}},"type":"object","properties":{"n":{"$ref":"#/$defs/p"}}}`, `{"n":"x"}`},
	{`{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"number"}}`, `["a",1,"b"]`},
	{`{"type":"object","patternProperties":{"^x-":{"type":"string"}}}`, `{"x-a":1}`},
	{`{"type":"object","minProperties":2}`, `{"a":1}`},
	{`{"type":"string","format":"email"}`, `".a@b.co"`},
	{`{"type":"string","format":"email"}`, `"a..b@b.co"`},
	{`{"type":"string","format":"email"}`, `"a@-b.co"`},
	{`{"type":"string","format":"email"}`, `"a@[127.0.0.1]"`},
	{`{"type":"string","format":"email"}`, `"\"a@b\"@b.co"`},
	{`{"type":"string","format":"date-time"}`, `"2024-02-29T23:59:60Z"`},
	{`{"type":"string","format":"date-time"}`, `"2024-02-29T12:59:60Z"`},
	{`{"type":"string","format":"date-time"}`, `"2024-02-29T12:00:00.5+01:00"`},
	{`{"type":"string","format":"date-time"}`, `"2024-02-29x12:00:00.5+01:00"`},
	{`{"type":"string","format":"date-time"}`, `"2024-02-29T12:00:00+0100"`},
	{`{"type":"string","format":"uri"}`, `"http://[::1"`},
	{`{"dependentRequired":{"a":["b","c"]}}`, `{"a":1,"c":2}`},
	{`{"dependencies":{"a":["b"],"c":{"required":["d"]}}}`, `{"a":1,"c":2}`},
	{`{"dependentSchemas":{"a":{"properties":{"b":{"type":"string"}}}}}`, `{"a":1,"b":2}`},
	{`{"propertyNames":{"maxLength":2}}`, `{"abc":1}`},
	{`{"contains":{"type":"string"}}`, `[1,2]`},
	{`{"contains":{"type":"string"},"minContains":2}`, `[1,"a"]`},
	{`{"contains":{"type":"string"},"maxContains":1}`, `["a","b"]`},
	{`{"contains":{"type":"string"},"minContains":0}`, `[1]`},
	{`false`, `1`},
	{`true`, `1`},
	{`{"type":"string","maxLength":3}`, `"héllo"`},
}

// FuzzSchemaAgreesWithReference: mcpx's validator accepts exactly the
// values the library it replaced accepts, for the schemas above.
func FuzzSchemaAgreesWithReference(f *testing.F) {
	for i, c := range schemaCases {
		f.Add(i, c.value)
	}
	f.Fuzz(func(t *testing.T, i int, value string) {
		if !json.Valid([]byte(value)) || i < 0 {
			return
		}
		c := schemaCases[i%len(schemaCases)]
		compiled, want := referenceValidate(t, c.schema, value)
		s, err := CompileSchema(json.RawMessage(c.schema))
		if !compiled || err != nil {
			return
		}
		got := s.Validate(json.RawMessage(value))
		if (got == nil) != (want == "") {
			t.Errorf("%s against %s: got %v, the reference %q", c.schema, value, got, want)
		}
	})
}
