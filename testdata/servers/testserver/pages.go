package main

import (
	"encoding/json"
)

// The pages servers ("testserver pages-error", "pages-empty",
// "pages-loop") are raw servers whose tools/list is paginated, two tools a
// page, and goes wrong after the first page:
//
//	pages-error  page 3 (cursor "p3") is a JSON-RPC error (-32603)
//	pages-empty  page 2 (cursor "p2") ends with nextCursor "", which the
//	             server takes for no cursor at all: it answers it with the
//	             first page again, as servers that mean "" as the end do
//	pages-loop   page 2 (cursor "again") gives the cursor "again" again
//
// echo is on the first page; tools/call echo answers with its message,
// and of another tool with its arguments as JSON text.

// pageTool is a tool with a number argument, for key=value typing.
func pageTool(name string) map[string]any {
	return map[string]any{
		"name":        name,
		"description": "Tool " + name + " of a paginated list",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}},
	}
}

// pagesList answers tools/list for the pages servers.
func (s *rawServer) pagesList(m rawMsg) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(m.Params, &p)
	cursor := ""
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	page := func(next any, tools ...any) {
		res := map[string]any{"tools": tools}
		if next != nil {
			res["nextCursor"] = next
		}
		s.reply(m.ID, res)
	}
	switch {
	case cursor == "": // the first page, and "" taken for it
		next := "p2"
		if s.mode == "pages-loop" {
			next = "again"
		}
		page(next, echoTool, pageTool("add"))
	case s.mode == "pages-error" && cursor == "p2":
		page("p3", pageTool("third"), pageTool("fourth"))
	case s.mode == "pages-error" && cursor == "p3":
		s.replyError(m.ID, -32603, "the page store is unavailable")
	case s.mode == "pages-empty" && cursor == "p2":
		page("", pageTool("third"))
	case s.mode == "pages-loop" && cursor == "again":
		page("again", pageTool("third"))
	default:
		s.replyError(m.ID, -32602, "invalid cursor")
	}
}

// pagesCall answers tools/call of a tool other than echo with its
// arguments, as sent.
func (s *rawServer) pagesCall(m rawMsg) {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.reply(m.ID, textResult(string(p.Arguments), false))
}
