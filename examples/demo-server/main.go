// Command demo-server is a small MCP server to try mcpx with, no Node needed:
//
//	go build -o mcpx .
//	./mcpx tools list -- go run ./examples/demo-server
//	./mcpx tools call add a=2 b=3 -- go run ./examples/demo-server
//
// It has three tools (echo, add, countdown), a resource, a resource
// template, a prompt, and argument completion. It is written with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk) and speaks MCP
// over stdio.
package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Message string `json:"message" jsonschema:"the text to send back"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type sum struct {
	Sum float64 `json:"sum"`
}

type countdownArgs struct {
	From int `json:"from" jsonschema:"where to count down from (seconds)"`
}

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "mcpx-demo", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions:      "A demo server for trying mcpx.",
		CompletionHandler: complete,
	})

	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Send a message back"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})

	// add has structured output: the SDK derives its output schema from sum.
	mcp.AddTool(server, &mcp.Tool{Name: "add", Description: "Add two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, sum, error) {
			return nil, sum{Sum: in.A + in.B}, nil
		})

	// countdown is slow on purpose and reports progress once a second.
	mcp.AddTool(server, &mcp.Tool{Name: "countdown", Description: "Count down, reporting progress each second"},
		func(ctx context.Context, req *mcp.CallToolRequest, in countdownArgs) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= in.From; i++ {
				select {
				case <-ctx.Done(): // mcpx sends notifications/cancelled on Ctrl-C
					return nil, nil, ctx.Err()
				case <-time.After(time.Second):
				}
				if token := req.Params.GetProgressToken(); token != nil {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: float64(in.From),
						Message: fmt.Sprintf("%d left", in.From-i),
					})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "liftoff!"}}}, nil, nil
		})

	server.AddResource(&mcp.Resource{URI: "demo://readme", Name: "readme", MIMEType: "text/markdown"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: "demo://readme", MIMEType: "text/markdown", Text: "# Demo\n\nThis resource came from the demo server.\n"},
			}}, nil
		})

	server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "demo://greeting/{name}", Name: "greeting"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			name := strings.TrimPrefix(req.Params.URI, "demo://greeting/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "Hello, " + name + "!"},
			}}, nil
		})

	server.AddPrompt(&mcp.Prompt{
		Name:        "haiku",
		Description: "Ask for a haiku",
		Arguments:   []*mcp.PromptArgument{{Name: "topic", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Write a haiku about " + req.Params.Arguments["topic"] + "."}},
		}}, nil
	})

	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// topics are the completions offered for the haiku prompt's topic.
var topics = []string{"autumn", "mountains", "the moon", "the sea", "spring rain"}

// complete offers topics for the haiku prompt that start with what was typed.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	values := []string{}
	if req.Params.Ref.Type == "ref/prompt" && req.Params.Ref.Name == "haiku" {
		for _, t := range topics {
			if strings.HasPrefix(t, req.Params.Argument.Value) {
				values = append(values, t)
			}
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
