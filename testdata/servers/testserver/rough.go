package main

import (
	"encoding/base64"
	"encoding/json"
)

// The rough server ("testserver rough") is a raw server whose tools give
// the results a new user trips over: binary data where a client might
// dump it, JSON repeated as text, progress after the response, multi-line
// errors, and a nested input schema. It declares the tools capability
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
		"name":        "fail-lines",
		"description": "Fails with a JSON-RPC error whose message has several lines",
		"inputSchema": map[string]any{"type": "object"},
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
			},
			"required": []string{"required-1"},
		},
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
	case "late-progress":
		s.reply(m.ID, textResult("answered", false))
		if token != nil {
			s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": token, "progress": 1, "total": 1, "message": "too late"})})
		}
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "data": "after the late progress"})})
	case "fail-lines":
		s.replyError(m.ID, -32603, "the tool could not run:\n  step 1 failed\n  step 2 \x1b[31mnot tried\x1b[0m\n")
	default:
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		s.reply(m.ID, textResult(string(args), false))
	}
}
