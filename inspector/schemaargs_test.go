package inspector

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var schemaArgsSeeds = []string{
	`{"type":"object","properties":{"message":{"type":"string","description":"what to echo"},"count":{"type":"integer","minimum":0}},"required":["message"]}`,
	`{"type":"object","properties":{"a":{"type":["number","null"],"default":1},"b":{"enum":["x","y",null,3,true,{"o":1}]},"c":{"const":"k"}}}`,
	`{"properties":{"size":{"oneOf":[{"const":"s","title":"Small"},{"const":"l"}],"anyOf":[{"type":"string"},{"enum":[1,2]}]}}}`,
	`{"properties":{"x":{"type":"array","items":{"type":"string","enum":["a","b"]}},"y":{"description":"caf\u00e9","default":{"k":[1, 2]}}}}`,
	`{"properties":{}}`, `{}`, `[]`, `null`, `{"properties":null}`, `{"properties":{"a":true}}`,
	`{"Properties":{"a":{}}}`, `{"properties":{"a":{},"a":{"type":"string"}}}`, `{"properties":{"a\u0062":{}}}`,
	`{"properties":{"a":{"Type":"string"}}}`, `{"properties":{"a":{"type":5}}}`, `{"properties":{"a":{"type":["string",1]}}}`,
	`{"properties":{"a":{"enum":"x"}}}`, `{"properties":{"a":{"anyOf":[true,{"type":"string"}]}}}`, `{"properties":{"a":{"description":5}}}`,
	`{"properties":{"a":{"type":null}}}`, `{"properties":{"a":{}}, "required":["a",1]}`, `{"properties":{"a":{}}, "required":"a"}`,
	`{"properties":{"b":{},"a":{}},"required":["b","b"]}`, `{"properties":{"a":{"enum":["\ud800","\u00e9\n"]}}}`,
	`{"properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string","enum":["x"],"description":"d"}}}`,
	`{"properties":{"a":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"null"}]}},"$defs":{"A":{"type":"string"}}}`,
	`{"properties":{"a":{"allOf":[{"type":"number"},{"type":"integer","enum":[1]}]}}}`,
}

// TestSchemaArgsFastMatchesSlow: the one-pass SchemaArgs answers exactly as
// the encoding/json one wherever it answers at all.
func TestSchemaArgsFastMatchesSlow(t *testing.T) {
	answered := 0
	for _, s := range schemaArgsSeeds {
		fast, ok := schemaArgsFast(json.RawMessage(s))
		if !ok {
			continue
		}
		answered++
		if diff := cmp.Diff(schemaArgsSlow(json.RawMessage(s)), fast); diff != "" {
			t.Errorf("%s: fast and slow differ (-slow +fast):\n%s", s, diff)
		}
	}
	if answered < 5 {
		t.Errorf("the fast path answered %d of the seeds; it should answer the ordinary ones", answered)
	}
}

func FuzzSchemaArgs(f *testing.F) {
	for _, s := range schemaArgsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := schemaArgsFast(json.RawMessage(s))
		if !ok {
			return
		}
		if diff := cmp.Diff(schemaArgsSlow(json.RawMessage(s)), fast); diff != "" {
			t.Errorf("%s: fast and slow differ (-slow +fast):\n%s", s, diff)
		}
	})
}
