package featuretest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv selects the Go SDK server the test binary runs when it is
// started as a child process (see TestMain).
const serverEnv = "MCPX_FEATURETEST_SERVER"

// runSDKServer serves the "sdk" test server on stdin/stdout: one tool per
// client feature, and a resource whose subscribers get updates.
func runSDKServer() error {
	var mu sync.Mutex
	subscribed := map[string]bool{}
	var server *mcp.Server
	server = mcp.NewServer(&mcp.Implementation{Name: "sdk-features", Version: "1.0.0"}, &mcp.ServerOptions{
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			subscribed[req.Params.URI] = true
			mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
			mu.Lock()
			delete(subscribed, req.Params.URI)
			mu.Unlock()
			fmt.Fprintln(os.Stderr, "unsubscribed", req.Params.URI)
			return nil
		},
	})
	server.AddResource(&mcp.Resource{URI: "test://counter", Name: "counter", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://counter", MIMEType: "text/plain", Text: "counter value " + time.Now().Format("150405.000")}}}, nil
		})
	// Subscribers of test://counter get an update every 100ms.
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			mu.Lock()
			on := subscribed["test://counter"]
			mu.Unlock()
			if on {
				_ = server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: "test://counter"})
			}
		}
	}()

	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	empty := json.RawMessage(`{"type":"object"}`)
	server.AddTool(&mcp.Tool{Name: "roots", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI+" ("+r.Name+")")
		}
		return text("roots: " + strings.Join(uris, ", ")), nil
	})
	server.AddTool(&mcp.Tool{Name: "sample", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			Messages:         []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "What is the capital of France?"}}},
			SystemPrompt:     "You are terse.",
			MaxTokens:        50,
			ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "claude"}}, SpeedPriority: 0.9},
		})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res.Content)
		return text("sampled by " + res.Model + ": " + string(b)), nil
	})
	server.AddTool(&mcp.Tool{Name: "sample-tools", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessageWithTools(ctx, &mcp.CreateMessageWithToolsParams{
			Messages:   []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "Weather in Paris?"}}}},
			MaxTokens:  100,
			Tools:      []*mcp.Tool{{Name: "get_weather", Description: "Get the weather", InputSchema: map[string]any{"type": "object"}}},
			ToolChoice: &mcp.ToolChoice{Mode: "auto"},
		})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res.Content)
		return text("stop " + res.StopReason + ": " + string(b)), nil
	})
	server.AddTool(&mcp.Tool{Name: "elicit", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message: "Who are you?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{
				"name":{"type":"string","minLength":2},
				"age":{"type":"integer","minimum":0,"maximum":150,"default":30},
				"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}],"default":"g"},
				"ok":{"type":"boolean","default":true}},"required":["name"]}`),
		})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res.Content)
		return text("action " + res.Action + " content " + string(b)), nil
	})
	server.AddTool(&mcp.Tool{Name: "elicit-url", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Mode: "url", Message: "Connect your account", URL: "https://example.com/connect", ElicitationID: "el-1",
		})
		if err != nil {
			return nil, err
		}
		if res.Action == "accept" {
			_ = req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: "el-1"})
		}
		return text("url elicitation: " + res.Action), nil
	})
	// slow runs until it is cancelled (or for a minute), and says on
	// stderr that it was: how a test sees that the server was told.
	server.AddTool(&mcp.Tool{Name: "slow", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "slow: started")
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "slow: cancelled by the client")
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return text("slow: done"), nil
		}
	})
	server.AddTool(&mcp.Tool{Name: "log", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for _, lvl := range []mcp.LoggingLevel{"debug", "error"} {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: lvl, Logger: "sdk", Data: "a " + string(lvl) + " line"})
		}
		// And one later, for --linger.
		go func() {
			time.Sleep(300 * time.Millisecond)
			_ = req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "warning", Logger: "sdk", Data: "a late line"})
		}()
		return text("logged"), nil
	})
	return server.Run(context.Background(), &mcp.StdioTransport{})
}
