package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestToolHeaderParams(t *testing.T) {
	valid := []string{
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":["integer","null"],"x-mcp-header":"B"}}}`,
		`{"type":"object","properties":{"o":{"type":"object","properties":{"c":{"type":"boolean","x-mcp-header":"C"}}}}}`,
		`{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, // a property named so
		`{"type":"object","properties":{"d":{"type":"string","default":{"x-mcp-header":"data"}}}}`,
		`{"type":"object"}`,
	}
	for _, s := range valid {
		if _, err := ToolHeaderParams(json.RawMessage(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	invalid := map[string]string{
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`:                                                                "is empty",
		`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`:                                                               "type number",
		`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`:                                                               "type object",
		`{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`:                                                                               "declares no type",
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`:                                                       "not a valid header name",
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`:                      "repeats",
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}}}}`: "not reachable",
		`{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`:                                                   "not reachable",
		`{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}`:                                                                    "not reachable",
		`{"type":"object","x-mcp-header":"Root"}`:                                                                                                 "not reachable",
	}
	for s, want := range invalid {
		_, err := ToolHeaderParams(json.RawMessage(s))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", s, err, want)
		}
	}
	params, _ := ToolHeaderParams(json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer","x-mcp-header":"I"},"s":{"type":"string","x-mcp-header":"S"}}}`))
	if _, err := HeaderValues(params, json.RawMessage(`{"i":9007199254740993}`)); err == nil {
		t.Error("an unsafe integer was mirrored")
	}
	got, err := HeaderValues(params, json.RawMessage(`{"i":42.0,"s":null}`))
	if err != nil || len(got) != 1 || got[0].Value != "42" {
		t.Errorf("%+v %v", got, err)
	}
}
