// Package fuzzing is what the fuzz targets of several packages share: seed
// corpora taken from real traffic, and reference decoders that state what
// a parser must find. Only tests import it.
//
// The JSON-RPC frame decoders of inspector, record and transport each have
// a FuzzJSONRPCFrame target that compares them with Decode here, so that
// when they become one decoder the three targets become one.
package fuzzing

import (
	"bytes"
	_ "embed"
	"encoding/json"
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

// Message is what one element of a frame holds, decoded by Decode.
type Message struct {
	// Object is false when the element is not a JSON object, or one whose
	// members do not decode (a method that is not a string): such an
	// element is no message, and the fields below are zero.
	Object bool
	// ID is the id member as written (null kept), nil without one.
	ID json.RawMessage
	// Method is the method member; nil without one (or when it is null).
	Method *string
	// Result and Error are the members as written, nil when absent.
	Result, Error json.RawMessage
	// Raw is the element's text.
	Raw []byte
}

// Answers reports the id a response answers: its id unless absent or
// null.
func (m Message) Answers() (json.RawMessage, bool) {
	if !m.Object || m.Method != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil, false
	}
	return m.ID, true
}

// RequestID reports the id of a request: its id unless absent or null.
func (m Message) RequestID() (json.RawMessage, bool) {
	if !m.Object || m.Method == nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil, false
	}
	return m.ID, true
}

// Decode is the reference decoding of a JSON-RPC 2.0 frame (JSON-RPC 2.0,
// sections 4 to 6): valid is false when the frame (surrounding white space
// aside) is not JSON; a frame that is a JSON array is a batch whose every
// element is a message on its own, whatever its neighbours are; anything
// else is one message. Member names are matched the way encoding/json
// matches struct fields, which all of mcpx's decoders share.
func Decode(frame []byte) (msgs []Message, batch, valid bool) {
	t := bytes.TrimSpace(frame)
	if len(t) == 0 || !json.Valid(t) {
		return nil, false, false
	}
	if t[0] != '[' {
		return []Message{decodeOne(t)}, false, true
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(t, &elems); err != nil {
		panic("fuzzing: a valid JSON array does not decode: " + err.Error())
	}
	for _, e := range elems {
		msgs = append(msgs, decodeOne(e))
	}
	return msgs, true, true
}

func decodeOne(raw []byte) Message {
	m := Message{Raw: raw}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return m
	}
	var w struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return m
	}
	m.Object, m.ID, m.Method, m.Result, m.Error = true, w.ID, w.Method, w.Result, w.Error
	return m
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
