package main

import (
	"encoding/json"
	"strings"
	"time"
)

// The hostile server ("testserver hostile") is a raw server whose every
// string a person may see is made to harm a terminal or its layout: ANSI
// and OSC sequences (a title change, an OSC 8 hyperlink, an OSC 52
// clipboard write), a C1 CSI, a bidirectional override and zero-width
// characters, a lone CR, backspaces, invalid UTF-8 (written as raw bytes,
// which json.Marshal would replace), wide and combining characters, a
// 10,000-character word, and names that read as others ("echo" with a
// zero-width space, a left-to-right mark or a zero-width joiner in it). The terminal tests look at where each reaches the
// screen; the names of tools and prompts also have spaces and quotes, for
// completion to round-trip.

// hostileBadBytes stands, in a string hostile sends, for bytes that are not
// UTF-8 (0xff, and 0x9b, a lone C1 CSI byte); send writes them raw.
const hostileBadBytes = "BADBYTES"

// hostileText is a text with every sort of harm, tag saying where it is.
func hostileText(tag string) string {
	return tag + ":" +
		"\x1b]0;PWNED-TITLE\x07" + // window title
		"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\" + // OSC 8 link
		"\x1b]52;c;cm0gLXJmIH4K\x07" + // clipboard write
		"\x1b[31mred\x1b[0m" +
		"\u009b2J" + // C1 CSI: clear the screen
		"\u202egnp.exe\u202c" + // bidi override
		"zero\u200bwidth\u200d" +
		"lone\rCR" + "back\b\bspace" +
		hostileBadBytes +
		"宽字符😀e\u0301" // wide and combining
}

// hostileWord is one 10,000-character word.
var hostileWord = strings.Repeat("w", 10000)

var hostileTools = []any{
	map[string]any{
		"name":        "echo",
		"title":       hostileText("tool title"),
		"description": hostileText("tool description"),
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"message": map[string]any{"type": "string", "description": hostileText("property description")}}},
	},
	map[string]any{
		"name":        "long",
		"description": "a word: " + hostileWord + " and after it",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "宽字符工具",
		"description": "名前は広い文字です、説明も広い文字で書かれています😀😀😀 e\u0301e\u0301e\u0301",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        `say "hi" it's`,
		"description": "a name with spaces and quotes",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "esc\x1b[2Jname\u202e",
		"description": "a name with an escape",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "ec\u200bho",
		"description": "a name with a zero-width space, which looks like echo",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		// A mark Hebrew and Arabic text needs, kept in the description.
		"name":        "ec\u200eho",
		"description": "a name with a left-to-right mark, which looks like echo: שלום\u200f!",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"ms\u200fg": map[string]any{"type": "string"}}},
	},
	map[string]any{
		// A joiner shows as nothing between letters; inside an emoji
		// it joins it into one picture, and is kept.
		"name":        "ec\u200dho",
		"description": "a name with a zero-width joiner, which looks like echo",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"ms\u200cg": map[string]any{"type": "string"}}},
	},
	map[string]any{
		"name":        "dev-👩\u200d💻",
		"description": "a name with an emoji of two joined",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "fail",
		"description": "fails with a hostile JSON-RPC error and data",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "iserror",
		"description": "answers with isError and hostile text",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "ask",
		"description": "asks a hostile form",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "sample",
		"description": "asks for a hostile sampling",
		"inputSchema": map[string]any{"type": "object"},
	},
	map[string]any{
		"name":        "roots",
		"description": "asks for roots",
		"inputSchema": map[string]any{"type": "object"},
	},
}

func (s *rawServer) hostile(m rawMsg) {
	switch m.Method {
	case "initialize":
		s.reply(m.ID, map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{"tools": map[string]any{}, "logging": map[string]any{},
				"prompts": map[string]any{}, "resources": map[string]any{}, "completions": map[string]any{}},
			"serverInfo":   map[string]any{"name": hostileText("server name"), "version": hostileText("version"), "title": hostileText("server title")},
			"instructions": hostileText("instructions") + "\n" + hostileWord,
		})
	case "ping":
		s.reply(m.ID, map[string]any{})
	case "logging/setLevel":
		// What a watch shows: news of every kind, each hostile.
		s.reply(m.ID, map[string]any{})
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{
			"level": "info", "logger": hostileText("logger"), "data": hostileText("watched log") + " " + hostileWord})})
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/resources/updated", Params: mustJSON(map[string]any{"uri": "file:///" + hostileText("updated")})})
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/tools/list_changed"})
		s.send(rawMsg{JSONRPC: "2.0", Method: hostileText("notifications/custom"), Params: mustJSON(map[string]any{"k": hostileText("custom")})})
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": hostileText("token"), "progress": 1, "message": hostileText("stray progress")})})
	case "tools/list":
		s.reply(m.ID, map[string]any{"tools": hostileTools})
	case "prompts/list":
		s.reply(m.ID, map[string]any{"prompts": []any{
			map[string]any{"name": "greet", "title": hostileText("prompt title"), "description": hostileText("prompt description"),
				"arguments": []any{map[string]any{"name": "who", "description": hostileText("argument description"), "required": true}}},
			map[string]any{"name": "two words", "description": "a prompt named with a space", "arguments": []any{
				map[string]any{"name": "it's", "description": "an argument with a quote"}}},
		}})
	case "prompts/get":
		s.reply(m.ID, map[string]any{"description": hostileText("got description"), "messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": hostileText("prompt message")}}}})
	case "resources/list":
		s.reply(m.ID, map[string]any{"resources": []any{
			map[string]any{"uri": "file:///a%20b/\x1b]0;T\x07x.txt", "name": hostileText("resource name"), "title": hostileText("resource title"),
				"description": hostileText("resource description"), "mimeType": "text/plain\x1b[2J"},
			map[string]any{"uri": "file:///long/" + hostileWord, "name": "long", "mimeType": "text/plain"},
			map[string]any{"uri": "file:///宽/字符.txt", "name": "宽字符", "mimeType": "text/plain"},
		}})
	case "resources/templates/list":
		s.reply(m.ID, map[string]any{"resourceTemplates": []any{
			map[string]any{"uriTemplate": "file:///{path}\x1b[2J", "name": hostileText("template name"), "description": hostileText("template description"), "mimeType": "text/plain\u009b"},
		}})
	case "resources/read":
		s.reply(m.ID, map[string]any{"contents": []any{
			map[string]any{"uri": "file:///x", "mimeType": "text/plain", "text": hostileText("resource text")}}})
	case "completion/complete":
		s.reply(m.ID, map[string]any{"completion": map[string]any{"values": []string{
			hostileText("value"), "two words", `it's "quoted"`, "宽字符", hostileWord}, "hasMore": false}})
	case "tools/call":
		s.hostileCall(m)
	default:
		s.replyError(m.ID, -32601, "method not found: "+m.Method)
	}
}

func (s *rawServer) hostileCall(m rawMsg) {
	var p struct {
		Name string `json:"name"`
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.Meta.ProgressToken != nil {
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{
			"progressToken": p.Meta.ProgressToken, "progress": 1, "total": 2, "message": hostileText("progress") + " " + hostileWord})})
	}
	s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{
		"level": "warning", "logger": hostileText("logger"), "data": hostileText("log") + " " + hostileWord})})
	s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{
		"level": "info", "data": map[string]any{"structured": hostileText("log data")}})})
	switch p.Name {
	case "fail":
		e, _ := json.Marshal(map[string]any{"code": -32000, "message": hostileText("error message"), "data": map[string]any{"detail": hostileText("error data")}})
		s.send(rawMsg{JSONRPC: "2.0", ID: m.ID, Error: e})
	case "iserror":
		s.reply(m.ID, textResult(hostileText("isError text"), true))
	case "ask":
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"ask-1"`), Method: "elicitation/create", Params: mustJSON(map[string]any{
			"message": hostileText("form message"),
			"requestedSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name": map[string]any{"type": "string", "title": hostileText("field title"), "description": hostileText("field description"),
						"default": hostileText("default") + " " + hostileWord},
					"pick": map[string]any{"type": "string", "title": "pick", "enum": []string{"a", "b"}, "enumNames": []string{hostileText("label a"), "b"}},
					"many": map[string]any{"type": "array", "title": "many", "items": map[string]any{
						"anyOf": []any{map[string]any{"const": "x", "title": hostileText("label x")}, map[string]any{"const": "y", "title": "y"}}}},
				},
				"required": []string{"name"},
			},
		})})
		r, ok := s.awaitFrame(func(r rawMsg) bool { return r.Method == "" && string(r.ID) == `"ask-1"` }, time.Minute)
		if !ok {
			s.reply(m.ID, textResult("the form was not answered", true))
			return
		}
		s.reply(m.ID, textResult("got "+string(r.Result)+string(r.Error), false))
	case "sample":
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"sample-1"`), Method: "sampling/createMessage", Params: mustJSON(map[string]any{
			"messages":     []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": hostileText("sampling text")}}},
			"systemPrompt": hostileText("system prompt"),
			"maxTokens":    20,
		})})
		r, ok := s.awaitFrame(func(r rawMsg) bool { return r.Method == "" && string(r.ID) == `"sample-1"` }, time.Minute)
		if !ok {
			s.reply(m.ID, textResult("the sampling request was not answered", true))
			return
		}
		s.reply(m.ID, textResult("got "+string(r.Result)+string(r.Error), false))
	case "roots":
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"roots-1"`), Method: "roots/list"})
		r, ok := s.awaitFrame(func(r rawMsg) bool { return r.Method == "" && string(r.ID) == `"roots-1"` }, time.Minute)
		if !ok {
			s.reply(m.ID, textResult("the roots request was not answered", true))
			return
		}
		s.reply(m.ID, textResult("got "+string(r.Result)+string(r.Error), false))
	default:
		s.reply(m.ID, map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": "called " + p.Name + "\n" + hostileText("result text") + "\n" + hostileWord}},
			"structuredContent": map[string]any{"k": hostileText("structured")},
		})
	}
}
