package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"time"
)

// The rough server ("testserver rough") is a raw server whose tools give
// the results a new user trips over: binary data where a client might
// dump it, JSON repeated as text, progress after the response, multi-line
// errors, and a nested input schema (with local $refs). It declares the tools capability
// only (and logging).

var roughTools = []any{
	map[string]any{
		"name":        "picture",
		"description": "An image, also in structured content, and a video block of an unknown type",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "late-progress",
		"description": "Answers, then sends a progress notification for the answered request, then a log message",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "loud",
		"description": "Sends a log message of about bytes bytes (for --max-message-size), then answers",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"bytes": map[string]any{"type": "integer"}}},
	},
	map[string]any{
		"name":        "ask",
		"description": "Asks for a name (elicitation/create), sends progress and a log message while the form is open, and answers with what it got",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "later",
		"description": "Answers, then sends a log message on its own: at once, or once the file $TEST_LATER_TRIGGER exists (TRIGGER.sent then says it was sent)",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "sample",
		"description": "Asks for an LLM completion (sampling/createMessage) and answers with what it got, or the error",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "stubborn",
		"description": "Sends progress until cancelled, then three more progress notifications and a log message; never answers",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "fail-lines",
		"description": "Fails with a JSON-RPC error whose message has several lines",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "weather",
		"description": "Declares an outputSchema; its structured content does not match it (temp a string), unless good=true",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"good": map[string]any{"type": "boolean"}}},
		"outputSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"temp": map[string]any{"type": "number"}, "sky": map[string]any{"type": "string"}},
			"required":   []string{"temp", "sky"},
		},
	},
	map[string]any{
		"name":        "profile",
		"description": "Returns its arguments as text; a nested schema",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"user": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"name": map[string]any{"type": "string"},
						"age":  map[string]any{"type": "integer"},
						"address": map[string]any{
							"type": "object",
							"properties": map[string]any{
								"city": map[string]any{"type": "string"},
								"zip":  map[string]any{"type": "string"},
							},
						},
					},
				},
				"tags":       map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"points":     map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "number"}}}},
				"file.name":  map[string]any{"type": "string", "description": "a key with a dot in it"},
				"mode":       map[string]any{"type": "string", "enum": []string{"fast", "slow"}},
				"count":      map[string]any{"type": "integer"},
				"required-1": map[string]any{"type": "string"},
				"owner":      map[string]any{"$ref": "#/$defs/Person"},
				"backup":     map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/Person"}, map[string]any{"type": "null"}}},
				"color":      map[string]any{"$ref": "#/$defs/Color"},
				"limit":      map[string]any{"anyOf": []any{map[string]any{"type": "integer", "maximum": 10}, map[string]any{"type": "null"}}},
				"size":       map[string]any{"oneOf": []any{map[string]any{"const": "s", "title": "Small"}, map[string]any{"const": "l", "title": "Large"}}},
				"zone":       map[string]any{"allOf": []any{map[string]any{"$ref": "#/$defs/Zone"}}, "description": "as pydantic v1 writes a described reference"},
			},
			"required": []string{"required-1"},
			"$defs": map[string]any{
				"Person": map[string]any{"type": "object", "description": "someone to name", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
				"Color":  map[string]any{"type": "string", "enum": []string{"red", "green"}, "description": "a pen colour"},
				"Zone":   map[string]any{"type": "string"},
			},
		},
	},
	map[string]any{
		"name":        "oddities",
		"description": "Returns a text with annotations and _meta, an image whose MIME type has a control character, audio whose data is not base64, and members the spec does not define, written byte for byte (a number beyond float64, a \"<\")",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "huge",
		"description": "Returns its arguments as text; its inputSchema has a maximum beyond the range of float64",
		"inputSchema": json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","maximum":1e999}}}`),
	},
	map[string]any{
		"name":        "circle",
		"description": "Returns its arguments as text; its inputSchema has a $ref that leads back to itself",
		"inputSchema": json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"$ref":"#/$defs/A"}}}`),
	},
}

// roughImage is 4 KiB of "image" data.
var roughImage = base64.StdEncoding.EncodeToString(blob(4096))

func (s *rawServer) roughCall(m rawMsg, name string, args json.RawMessage, token json.RawMessage) {
	switch name {
	case "picture":
		s.reply(m.ID, map[string]any{
			"content": []any{
				map[string]any{"type": "text", "text": "a picture:"},
				map[string]any{"type": "image", "data": roughImage, "mimeType": "image/png"},
				map[string]any{"type": "video", "data": roughImage, "mimeType": "video/mp4"},
			},
			"structuredContent": map[string]any{"caption": "a test pattern", "image": map[string]any{"data": roughImage, "mimeType": "image/png"}},
		})
	case "oddities":
		// Written as it is: json.Marshal would escape the "<".
		s.writeLine(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[` +
			`{"type":"text","text":"note","annotations":{"audience":["user"],"priority":0.5},"_meta":{"x-trace":"t1"}},` +
			`{"type":"image","data":"AAEC","mimeType":"image/png\u001b[2J"},` +
			`{"type":"audio","data":"not*b64","mimeType":"audio/wav"}],` +
			`"count":12345678901234567890,"tag":"<b>"}}`)
	case "weather":
		var a struct {
			Good bool `json:"good"`
		}
		_ = json.Unmarshal(args, &a)
		weather := map[string]any{"temp": "mild", "sky": "clear"}
		if a.Good {
			weather["temp"] = 18.5
		}
		s.reply(m.ID, map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": string(mustJSON(weather))}},
			"structuredContent": weather,
		})
	case "late-progress":
		s.reply(m.ID, textResult("answered", false))
		if token != nil {
			s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": token, "progress": 1, "total": 1, "message": "too late"})})
		}
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "data": "after the late progress"})})
	case "loud":
		var a struct {
			Bytes int `json:"bytes"`
		}
		_ = json.Unmarshal(args, &a)
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "data": strings.Repeat("x", max(a.Bytes, 0))})})
		s.reply(m.ID, textResult("sent", false))
	case "ask":
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"ask-1"`), Method: "elicitation/create", Params: mustJSON(map[string]any{
			"message": "Who are you?",
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{"name": map[string]any{"type": "string", "title": "Your name"}},
				"required":   []string{"name"},
			},
		})})
		// With $TEST_ASK_TRIGGER, the news waits until that file exists
		// (the test creates it once the form is on the screen) and
		// TRIGGER.sent says it was sent.
		trigger := os.Getenv("TEST_ASK_TRIGGER")
		if trigger != "" && !waitForFile(trigger, time.Minute) {
			return
		}
		if token != nil {
			s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": token, "progress": 1, "total": 2, "message": "waiting for the form"})})
		}
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "data": "news during the form"})})
		if trigger != "" {
			_ = os.WriteFile(trigger+".sent", nil, 0o600)
		}
		r, ok := s.awaitFrame(func(r rawMsg) bool { return r.Method == "" && string(r.ID) == `"ask-1"` }, time.Minute)
		if !ok {
			s.reply(m.ID, textResult("the form was not answered", true))
			return
		}
		s.reply(m.ID, textResult("got "+string(r.Result), false))
	case "later":
		s.reply(m.ID, textResult("news will follow", false))
		go func() {
			trigger := os.Getenv("TEST_LATER_TRIGGER")
			if trigger != "" && !waitForFile(trigger, time.Minute) {
				return
			}
			s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "data": "news between commands"})})
			if trigger != "" {
				_ = os.WriteFile(trigger+".sent", nil, 0o600)
			}
		}()
	case "sample":
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"sample-1"`), Method: "sampling/createMessage", Params: mustJSON(map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Capital of France?"}}},
			"maxTokens": 20,
		})})
		r, ok := s.awaitFrame(func(r rawMsg) bool { return r.Method == "" && string(r.ID) == `"sample-1"` }, time.Minute)
		switch {
		case !ok:
			s.reply(m.ID, textResult("the sampling request was not answered", true))
		case r.Error != nil:
			s.reply(m.ID, textResult("refused "+string(r.Error), false))
		default:
			s.reply(m.ID, textResult("got "+string(r.Result), false))
		}
	case "stubborn":
		if token != nil {
			s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": token, "progress": 1, "message": "working"})})
		}
		cancelled := func(r rawMsg) bool {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			return r.Method == "notifications/cancelled" && json.Unmarshal(r.Params, &p) == nil && string(p.RequestID) == string(m.ID)
		}
		if _, ok := s.awaitFrame(cancelled, time.Minute); !ok {
			return
		}
		for i := 2; i <= 4 && token != nil; i++ {
			s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": token, "progress": i, "message": "still working after the cancel"})})
		}
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "data": "stubborn: done after the cancel"})})
	case "fail-lines":
		s.replyError(m.ID, -32603, "the tool could not run:\n  step 1 failed\n  step 2 \x1b[31mnot tried\x1b[0m\n")
	default:
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		s.reply(m.ID, textResult(string(args), false))
	}
}

// awaitFrame waits (at most timeout) for a message from the client that
// match accepts, reading past anything else.
func (s *rawServer) awaitFrame(match func(rawMsg) bool, timeout time.Duration) (rawMsg, bool) {
	deadline := time.After(timeout)
	for {
		select {
		case f, open := <-s.frames:
			if !open {
				return rawMsg{}, false
			}
			for _, r := range f.msgs {
				if match(r) {
					return r, true
				}
			}
		case <-deadline:
			return rawMsg{}, false
		}
	}
}

// waitForFile polls, bounded, until the file name exists.
func waitForFile(name string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return true
		}
	}
	return false
}
