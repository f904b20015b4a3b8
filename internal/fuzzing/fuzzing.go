// Package fuzzing is what the fuzz targets of several packages share: seed
// corpora taken from real traffic. Only tests import it.
package fuzzing

import (
	_ "embed"
	"strings"
)

// framesJSONL holds JSON-RPC frames, one a line: the message examples of
// the MCP specification (2026-07-28, compacted) followed by the handshake,
// server-to-client requests, error responses and batches of earlier
// revisions.
//
//go:embed frames.jsonl
var framesJSONL string

// oddFrames are frames that a careless or hostile peer sends: the test
// vectors of the trace format's byte-exact round trip and more.
var oddFrames = []string{
	`{ "jsonrpc" : "2.0", "id" : 1, "method" : "ping" }`,
	"{\"jsonrpc\":\"2.0\",\t\"id\":2,\r\"method\":\"x\"}",
	`{"method":"x","id":3,"jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":4,"result":{"t":"caf\u00e9 \ud83d\ude00"}}`,
	`{"jsonrpc":"2.0","id":5,"result":{"t":"café 😀 <b>&amp;</b>"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"a\u2028b\u2029c\"}}",
	`{"jsonrpc":"2.0","id":7,"result":{"n":1.0e+2,"m":-0.0,"big":123456789012345678901234567890}}`,
	`{"jsonrpc":"2.0","id":"7","result":{}}`,
	"\uFEFF{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}",
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"both"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
	`{"jsonrpc":"1.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":null,"result":1}`,
	`{"JSONRPC":"2.0","ID":1,"Method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`[{"jsonrpc":"2.0","id":8,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`,
	`[{"jsonrpc":"2.0","id":8,"result":{}},5,"x",null,[]]`,
	`[]`, `[[]]`, `{}`, `null`, `5`, `"just a string"`,
	`not json at all`,
	`{"jsonrpc":"2.0","id":9`,
	"\x1b[31mred\x1b[0m",
	"bad utf-8: \xff\xfe",
	"",
	`  {"jsonrpc":"2.0","id":10,"result":{}}  `,
}

// Frames returns the seed corpus of JSON-RPC frames.
func Frames() [][]byte {
	var out [][]byte
	for _, line := range strings.Split(strings.TrimSpace(framesJSONL), "\n") {
		out = append(out, []byte(line))
	}
	for _, f := range oddFrames {
		out = append(out, []byte(f))
	}
	return out
}

// PropertySchemas are JSON Schemas of single properties: the primitive
// schemas of form elicitation in the MCP specification (2026-07-28
// examples), and property schemas of tools' input schemas as mcpx's tests
// and real servers write them.
func PropertySchemas() []string {
	return []string{
		`{"type":"number","title":"Display Name","description":"Description text","minimum":0,"maximum":100,"default":50}`,
		`{"type":"string","title":"Display Name","description":"Description text","minLength":3,"maxLength":50,"format":"email","default":"user@example.com"}`,
		`{"type":"boolean","title":"Display Name","description":"Description text","default":false}`,
		`{"type":"array","title":"Color Selection","description":"Choose your favorite colors","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"#FF0000","title":"Red"},{"const":"#00FF00","title":"Green"},{"const":"#0000FF","title":"Blue"}]},"default":["#FF0000","#00FF00"]}`,
		`{"type":"string","title":"Color Selection","description":"Choose your favorite color","oneOf":[{"const":"#FF0000","title":"Red"},{"const":"#00FF00","title":"Green"},{"const":"#0000FF","title":"Blue"}],"default":"#FF0000"}`,
		`{"type":"array","title":"Color Selection","description":"Choose your favorite colors","minItems":1,"maxItems":2,"items":{"type":"string","enum":["Red","Green","Blue"]},"default":["Red","Green"]}`,
		`{"type":"string","title":"Color Selection","description":"Choose your favorite color","enum":["Red","Green","Blue"],"default":"Red"}`,
		`{"type":"integer","minimum":1}`,
		`{"type":["integer","null"]}`,
		`{"anyOf":[{"type":"number"},{"type":"string"}]}`,
		`{"oneOf":[{"type":"boolean"},{"type":"array"}]}`,
		`{"const":"v1"}`,
		`{"enum":[1,2,3]}`,
		`{"type":"object","properties":{"k":{"type":"string"}}}`,
		`{"type":"null"}`,
		`{"type":"string","x-mcp-header":"Region"}`,
		`{"description":"no type"}`,
		`{}`, `true`, `[]`, `{"type":7}`,
	}
}
