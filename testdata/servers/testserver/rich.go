package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageSize is small so that every list the rich server has spans pages.
const pageSize = 3

// bigDefault is the size of the big tool's text: a single ~50 MiB line.
const bigDefault = 50 << 20

// bigMarker ends the big tool's text so a test can see it arrived whole.
const bigMarker = "END-OF-BIG"

// Changes of the rich server, the second argument of "testserver rich",
// that verify must notice (or, for changeSessionText, not notice once it
// normalizes the session id).
const (
	changeFewerProgress = "fewer-progress" // slow reports its last 2 steps only
	changeRenamed       = "renamed"        // log is called note
	changeLogText       = "log-text"       // log prefixes its message with "log: "
	changeSessionText   = "session-text"   // echo adds " (session <a new UUID>)"
)

func runRich(in *stdin, change string) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpx-testserver", Title: "mcpx test server", Version: "1.2.3"}, &mcp.ServerOptions{
		Instructions:      "Test server for mcpx.\nIts \x1b[31minstructions\x1b[0m hold control characters.",
		PageSize:          pageSize,
		CompletionHandler: complete,
	})
	addTools(s, change)
	addResources(s)
	addPrompts(s)
	ctx := context.Background()
	t := &mcp.IOTransport{Reader: in, Writer: os.Stdout, MaxLineLength: -1}
	// Log everything from the start: mcpx does not call logging/setLevel.
	ss, err := s.Connect(ctx, t, &mcp.ServerSessionOptions{State: &mcp.ServerSessionState{LogLevel: "debug"}})
	if err != nil {
		return err
	}
	return ss.Wait()
}

func obj(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// args decodes a call's raw arguments into v.
func args(req *mcp.CallToolRequest, v any) error {
	if len(req.Params.Arguments) == 0 {
		return nil
	}
	return json.Unmarshal(req.Params.Arguments, v)
}

func addTools(s *mcp.Server, change string) {
	session := ""
	if change == changeSessionText {
		var b [16]byte
		rand.Read(b[:])
		b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
		session = fmt.Sprintf(" (session %x-%x-%x-%x-%x)", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	}
	s.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Echoes the message back (\x1b[31mred\x1b[0m in the description)",
		InputSchema: obj(map[string]any{"message": map[string]any{"type": "string"}}, "message"),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Message string }
		if err := args(req, &a); err != nil {
			return nil, err
		}
		return text(a.Message + session), nil
	})

	// types returns its arguments exactly as received, so a test can check
	// how mcpx typed key=value pairs.
	s.AddTool(&mcp.Tool{
		Name:        "types",
		Description: "Returns its arguments as received, as structured content",
		InputSchema: obj(map[string]any{
			"s":     map[string]any{"type": "string"},
			"zip":   map[string]any{"type": "string", "description": "a string that looks like a number"},
			"n":     map[string]any{"type": "number"},
			"i":     map[string]any{"type": "integer"},
			"flag":  map[string]any{"type": "boolean"},
			"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"obj":   map[string]any{"type": "object"},
			"color": map[string]any{"type": "string", "enum": []string{"red", "green", "blue"}},
			"level": map[string]any{"enum": []int{1, 2, 3}},
			"maybe": map[string]any{"type": []string{"integer", "null"}},
		}),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := req.Params.Arguments
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
			StructuredContent: raw,
		}, nil
	})

	s.AddTool(&mcp.Tool{
		Name:        "slow",
		Description: "Takes steps×interval_ms milliseconds, reporting progress after each step",
		InputSchema: obj(map[string]any{
			"steps":       map[string]any{"type": "integer"},
			"interval_ms": map[string]any{"type": "integer"},
		}),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := struct {
			Steps      int `json:"steps"`
			IntervalMS int `json:"interval_ms"`
		}{5, 100}
		if err := args(req, &a); err != nil {
			return nil, err
		}
		token := req.Params.GetProgressToken()
		for i := 1; i <= a.Steps; i++ {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(a.IntervalMS) * time.Millisecond):
			}
			if token != nil && (change != changeFewerProgress || i > a.Steps-2) {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(i), Total: float64(a.Steps),
					Message: fmt.Sprintf("step %d of %d", i, a.Steps),
				})
			}
		}
		return text(fmt.Sprintf("done after %d steps", a.Steps)), nil
	})

	s.AddTool(&mcp.Tool{
		Name:        "sleep",
		Description: "Sleeps for ms milliseconds without reporting progress",
		InputSchema: obj(map[string]any{"ms": map[string]any{"type": "integer"}}, "ms"),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ MS int }
		if err := args(req, &a); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		}
		return text("slept"), nil
	})

	logTool := "log"
	if change == changeRenamed {
		// After media now, before sleep still: the second page of three
		// is [media, note, sleep], the others stay the same.
		logTool = "note"
	}
	s.AddTool(&mcp.Tool{
		Name:        logTool,
		Description: "Sends notifications/message at the given level, then returns",
		InputSchema: obj(map[string]any{
			"level":   map[string]any{"type": "string", "enum": []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}},
			"message": map[string]any{"type": "string"},
		}, "level", "message"),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Level, Message string }
		if err := args(req, &a); err != nil {
			return nil, err
		}
		if change == changeLogText {
			a.Message = "log: " + a.Message
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(a.Level), Logger: "testserver", Data: a.Message}); err != nil {
			return nil, err
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(a.Level), Data: map[string]any{"structured": true, "count": 2}}); err != nil {
			return nil, err
		}
		return text("logged"), nil
	})

	s.AddTool(&mcp.Tool{
		Name:        "media",
		Description: "Returns one content block of every kind, plus structured content",
		InputSchema: obj(map[string]any{}),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		size := int64(21)
		return &mcp.CallToolResult{
			Content: []mcp.Content{
				&mcp.TextContent{Text: "here is one of everything"},
				&mcp.ImageContent{Data: blob(120), MIMEType: "image/png"},
				&mcp.AudioContent{Data: blob(2048), MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "test://docs/readme", Name: "readme", MIMEType: "text/plain", Size: &size, Description: "The readme, by reference"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded/note", MIMEType: "text/plain", Text: "an embedded note"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded/blob", MIMEType: "application/octet-stream", Blob: blob(300)}},
			},
			StructuredContent: map[string]any{"temperature": 21.5, "unit": "C", "tags": []string{"warm", "dry"}},
		}, nil
	})

	s.AddTool(&mcp.Tool{
		Name:        "fail",
		Description: "Always fails with isError: true",
		InputSchema: obj(map[string]any{}),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("the tool failed on purpose: disk full")
		r.IsError = true
		return r, nil
	})

	s.AddTool(&mcp.Tool{
		Name:        "big",
		Description: "Returns a text of the given size (default 50 MiB) on a single line",
		InputSchema: obj(map[string]any{"bytes": map[string]any{"type": "integer"}}),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := struct{ Bytes int }{bigDefault}
		if err := args(req, &a); err != nil {
			return nil, err
		}
		n := max(a.Bytes-len(bigMarker), 0)
		return text(strings.Repeat("x", n) + bigMarker), nil
	})
}

// blob returns n deterministic bytes covering every byte value, including
// NUL, newline and ESC.
func blob(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func addResources(s *mcp.Server) {
	textRes := func(uri, body string) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{URI: "test://docs/readme", Name: "readme", MIMEType: "text/plain", Description: "A text resource"},
		textRes("test://docs/readme", "Hello from the readme.\nSecond line.\n"))
	s.AddResource(&mcp.Resource{URI: "test://docs/a", Name: "doc-a", MIMEType: "text/plain"}, textRes("test://docs/a", "document a"))
	s.AddResource(&mcp.Resource{URI: "test://docs/b", Name: "doc-b", MIMEType: "text/plain"}, textRes("test://docs/b", "document b"))
	s.AddResource(&mcp.Resource{URI: "test://data/blob.bin", Name: "blob", MIMEType: "application/octet-stream", Description: "A binary resource"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://data/blob.bin", MIMEType: "application/octet-stream", Blob: blob(300)}}}, nil
		})

	echoURI := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		body := "you read " + uri
		if name, ok := strings.CutPrefix(uri, "test://greet/"); ok {
			body = "Hello, " + name + "!"
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: body}}}, nil
	}
	for _, t := range []*mcp.ResourceTemplate{
		{URITemplate: "test://greet/{name}", Name: "greeting", Description: "A greeting for name"},
		{URITemplate: "test://files/{path}", Name: "file"},
		{URITemplate: "test://colors/{color}", Name: "color", Description: "A colour (completable)"},
		{URITemplate: "test://users/{id}/profile", Name: "profile"},
	} {
		s.AddResourceTemplate(t, echoURI)
	}
}

func addPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: "Greets someone",
		Arguments:   []*mcp.PromptArgument{{Name: "name", Required: true}, {Name: "style"}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name, style := req.Params.Arguments["name"], req.Params.Arguments["style"]
		if style == "" {
			style = "plain"
		}
		return &mcp.GetPromptResult{
			Description: "A " + style + " greeting",
			Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Please greet %s in a %s style.", name, style)}},
				{Role: "assistant", Content: &mcp.TextContent{Text: "Hello, " + name + "!"}},
			},
		}, nil
	})
	s.AddPrompt(&mcp.Prompt{
		Name:      "code-review",
		Arguments: []*mcp.PromptArgument{{Name: "language", Required: true}, {Name: "code"}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{
			Text: "Review this " + req.Params.Arguments["language"] + " code: " + req.Params.Arguments["code"]}}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Arguments: []*mcp.PromptArgument{{Name: "text", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize: " + req.Params.Arguments["text"]}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "plain", Description: "A prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Just a plain prompt."}}}}, nil
		})
}

// complete completes the code-review prompt's arguments and the colour
// template's variable, using the context for code-review's code.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var all []string
	switch {
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "code-review" && p.Argument.Name == "language":
		all = []string{"go", "golang", "javascript", "python", "rust"}
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "code-review" && p.Argument.Name == "code":
		lang := ""
		if p.Context != nil {
			lang = p.Context.Arguments["language"]
		}
		all = map[string][]string{"go": {"fmt.Println(1)", "func main() {}"}, "python": {"print(1)"}}[lang]
	case p.Ref.Type == "ref/resource" && p.Ref.URI == "test://colors/{color}" && p.Argument.Name == "color":
		all = []string{"red", "green", "blue", "grey"}
	}
	values := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, p.Argument.Value) {
			values = append(values, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
