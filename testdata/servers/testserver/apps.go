package main

import (
	"encoding/json"
	"os"
)

// The apps mode: echo with an MCP Apps view (extension
// io.modelcontextprotocol/ui), for the tests of tools call --ui that need
// no browser (what mcpx says about a view before it is shown).

const appsViewURI = "ui://testserver/view"

var appsEchoTool = map[string]any{
	"name":        "echo",
	"description": "Echoes the message back, in a view",
	"inputSchema": echoTool["inputSchema"],
	"_meta":       map[string]any{"ui": map[string]any{"resourceUri": appsViewURI}},
}

// appsView answers resources/read of the view: a small HTML document,
// with $TEST_VIEW_META (raw JSON) as the content's _meta when set.
func (s *rawServer) appsView(m rawMsg) {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.URI != appsViewURI {
		s.replyError(m.ID, -32002, "resource not found: "+p.URI)
		return
	}
	c := map[string]any{
		"uri":      appsViewURI,
		"mimeType": "text/html;profile=mcp-app",
		"text":     "<!DOCTYPE html><html><body><p>echo view</p></body></html>",
	}
	if meta := os.Getenv("TEST_VIEW_META"); meta != "" {
		c["_meta"] = json.RawMessage(meta)
	}
	s.reply(m.ID, map[string]any{"contents": []any{c}})
}
