package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
	"github.com/mcpx-dev/mcpx/transport"
)

// FuzzToolHeaderParams reads x-mcp-header annotations from arbitrary tool
// input schemas and mirrors arbitrary arguments (spec 2026-07-28:
// server/tools, "x-mcp-header"): the annotations accepted name valid,
// case-insensitively unique headers on string, integer or boolean
// properties reachable through properties; the values mirrored belong to
// present, non-null arguments, booleans as true or false and integers
// within ±(2^53-1) in decimal, and every value survives the header
// encoding.
func FuzzToolHeaderParams(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"on":{"type":"boolean","x-mcp-header":"On"}}}`,
		`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":["string","null"],"x-mcp-header":"Deep"}}}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`,
		`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"Num"}}}`,
		`{"type":"object","items":{"x-mcp-header":"Hidden"}}`,
		`{"x-mcp-header":"Root"}`,
	}
	args := []string{`{"region":"eu west","n":9007199254740991,"on":true}`, `{"a":{"b":"Hello, 世界"}}`, `{"n":1e3,"region":null}`,
		`{"n":9007199254740992}`, `{"n":-1.5}`, `[]`, `{"a":{"b":{"c":1}}}`}
	for i, s := range schemas {
		f.Add([]byte(s), []byte(args[i%len(args)]))
	}
	for i, fr := range fuzzing.Frames()[:8] {
		f.Add(fr, []byte(args[i%len(args)]))
	}
	f.Fuzz(func(t *testing.T, schema, arguments []byte) {
		params, err := ToolHeaderParams(schema)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range params {
			if !transport.ValidHeaderName(p.Header) || seen[strings.ToLower(p.Header)] || len(p.Path) == 0 ||
				p.Type != "string" && p.Type != "integer" && p.Type != "boolean" {
				t.Fatalf("ToolHeaderParams(%s) accepted %+v", schema, p)
			}
			seen[strings.ToLower(p.Header)] = true
		}
		if !json.Valid(arguments) {
			return // arguments are always one member's JSON value
		}
		values, err := HeaderValues(params, arguments)
		if err != nil {
			return // arguments that are not JSON, or cannot be mirrored
		}
		var args any
		dec := json.NewDecoder(bytes.NewReader(arguments))
		dec.UseNumber()
		_ = dec.Decode(&args)
		for _, v := range values {
			var p HeaderParam
			for _, q := range params {
				if q.Header == v.Name {
					p = q
				}
			}
			arg, ok := lookupPath(args, p.Path)
			if !ok || arg == nil {
				t.Fatalf("HeaderValues mirrored %+v for an absent argument", v)
			}
			switch x := arg.(type) {
			case bool:
				if v.Value != strconv.FormatBool(x) {
					t.Fatalf("boolean %v mirrored as %q", x, v.Value)
				}
			case json.Number:
				// An integer is mirrored within range; other numbers as written.
				f, err := strconv.ParseFloat(string(x), 64)
				if err != nil || f == math.Trunc(f) && (math.Abs(f) > maxSafeInteger || v.Value != strconv.FormatInt(int64(f), 10)) {
					t.Fatalf("number %s mirrored as %q", x, v.Value)
				}
			case string:
				if v.Value != x {
					t.Fatalf("string %q mirrored as %q", x, v.Value)
				}
			}
			if dec, err := transport.DecodeHeaderValue(transport.EncodeHeaderValue(v.Value)); err != nil || dec != v.Value {
				t.Fatalf("value %q does not survive the header encoding", v.Value)
			}
		}
	})
}
