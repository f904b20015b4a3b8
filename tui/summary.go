package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// SummarizeRequest describes a server-to-client request on one line: what
// the server asks for, in a few words (the full params are on --wire).
func SummarizeRequest(method string, params json.RawMessage) string {
	task := ""
	if obj, err := inspector.ParseObject(params); err == nil && obj.Has("task") {
		task = " (as a task)"
	}
	switch method {
	case mcp.MethodSamplingCreateMessage:
		var req inspector.SamplingRequest
		if json.Unmarshal(params, &req) != nil {
			break
		}
		parts := []string{plural(len(req.Messages), "message")}
		if n := len(req.Messages); n > 0 {
			blocks := inspector.ContentBlocks(req.Messages[n-1].Content)
			if len(blocks) > 0 {
				parts = append(parts, "last: "+quoteBlock(blocks[0]))
			}
		}
		if req.MaxTokens != nil {
			parts = append(parts, fmt.Sprintf("max %d tokens", *req.MaxTokens))
		}
		if len(req.Tools) > 0 {
			parts = append(parts, plural(len(req.Tools), "tool"))
		}
		return strings.Join(parts, ", ") + task
	case mcp.MethodElicitationCreate:
		var req inspector.ElicitRequest
		if json.Unmarshal(params, &req) != nil {
			break
		}
		if req.Mode == "url" {
			// (Cut: the question, or the policy's note, shows it whole.)
			return fmt.Sprintf("url %s, %s%s", EscapeLine(rawjson.Shorten(req.URL, maxShownURL)), quoteShort(req.Message, 60), task)
		}
		form, err := inspector.ParseForm(req.RequestedSchema)
		if err != nil {
			// (Not a form mcpx can ask: the answer says why.)
			return fmt.Sprintf("form, %s%s", quoteShort(req.Message, 60), task)
		}
		return fmt.Sprintf("form with %s, %s%s", plural(len(form.Fields), "field"), quoteShort(req.Message, 60), task)
	case mcp.MethodRootsList, mcp.MethodPing:
		return ""
	case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel:
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(params, &p)
		return "task " + EscapeLine(p.TaskID)
	}
	if len(params) == 0 || string(params) == "{}" {
		return ""
	}
	return EscapeLine(compactString(params))
}

// How much of a URL a server request's summary shows, and of the error
// message of mcpx's answer, in bytes.
const (
	maxShownURL    = 256
	maxAnswerShown = 4 << 10
)

// SummarizeAnswer describes mcpx's answer to a server request on one line.
func SummarizeAnswer(method string, result json.RawMessage, rpcErr *jsonrpc.Error) string {
	if rpcErr != nil {
		// (mcpx's own messages quote what the server sent, of any
		// length: cut as a server's error message is, jsonrpc.Error.)
		msg := rpcErr.Message
		if len(msg) > maxAnswerShown {
			msg = rawjson.Shorten(msg, maxAnswerShown) + fmt.Sprintf(" (%d bytes in all)", len(rpcErr.Message))
		}
		return fmt.Sprintf("error %d: %s", rpcErr.Code, EscapeLine(msg))
	}
	if obj, err := inspector.ParseObject(result); err == nil && obj.Has("task") {
		var c struct {
			Task inspector.Task `json:"task"`
		}
		if json.Unmarshal(result, &c) == nil {
			return "created " + DescribeTask(c.Task)
		}
	}
	switch method {
	case mcp.MethodRootsList:
		var r struct {
			Roots []inspector.Root `json:"roots"`
		}
		if json.Unmarshal(result, &r) == nil {
			var uris []string
			for _, x := range r.Roots {
				uris = append(uris, EscapeLine(x.URI))
			}
			if len(uris) == 0 {
				return "no roots"
			}
			return plural(len(uris), "root") + ": " + strings.Join(uris, ", ")
		}
	case mcp.MethodSamplingCreateMessage, mcp.MethodTasksResult:
		var r struct {
			Role       string          `json:"role"`
			Model      string          `json:"model"`
			StopReason string          `json:"stopReason"`
			Content    json.RawMessage `json:"content"`
			Action     string          `json:"action"`
		}
		if json.Unmarshal(result, &r) != nil {
			break
		}
		if r.Action != "" {
			return summarizeElicitResult(result)
		}
		if r.Model != "" || r.Role != "" {
			var parts []string
			for _, b := range inspector.ContentBlocks(r.Content) {
				parts = append(parts, quoteBlock(b))
			}
			s := EscapeLine(r.Role) + " " + strings.Join(parts, " ")
			if r.Model != "" {
				s += " (model " + EscapeLine(r.Model)
				if r.StopReason != "" {
					s += ", " + EscapeLine(r.StopReason)
				}
				s += ")"
			}
			return s
		}
	case mcp.MethodElicitationCreate:
		return summarizeElicitResult(result)
	case mcp.MethodTasksGet, mcp.MethodTasksCancel:
		var t inspector.Task
		if json.Unmarshal(result, &t) == nil && t.TaskID != "" {
			return DescribeTask(t)
		}
	case mcp.MethodTasksList:
		var l struct {
			Tasks []inspector.Task `json:"tasks"`
		}
		if json.Unmarshal(result, &l) == nil {
			return plural(len(l.Tasks), "task")
		}
	}
	if len(result) == 0 || string(result) == "{}" {
		return "ok"
	}
	return EscapeLine(compactString(result))
}

func summarizeElicitResult(result json.RawMessage) string {
	var r struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil {
		return EscapeLine(compactString(result))
	}
	s := EscapeLine(r.Action)
	if len(r.Content) > 0 && string(r.Content) != "null" {
		s += " " + EscapeLine(compactString(r.Content))
	}
	return s
}

// DescribeTask renders a task's state on one line, escaped for the terminal.
func DescribeTask(t inspector.Task) string { return EscapeLine(t.String()) }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// quoteBlock is quoteShort for a sampling content block: a text block's
// own text, which quoteShort escapes (describeBlock's text is escaped
// already, and quoted again it showed \x1b as \\x1b), else what
// describeBlock says of it.
func quoteBlock(raw json.RawMessage) string {
	var c struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &c) == nil && c.Type == "text" {
		return quoteShort(c.Text, 60)
	}
	return quoteShort(describeBlock(raw), 60)
}

// quoteShort quotes s on one line, shortened to about max runes.
func quoteShort(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > max {
		s = string(r[:max]) + "…"
	}
	return EscapeLine(fmt.Sprintf("%q", s))
}
