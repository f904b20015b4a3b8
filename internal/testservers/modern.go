package testservers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ModernVersions restricts a Go SDK server to the stateless revision.
var ModernVersions = []string{"2026-07-28"}

// LegacyVersions restricts a Go SDK server to the handshake revisions.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Recorder counts what a test server saw happen, for tests to check.
type Recorder struct {
	mu        sync.Mutex
	cancelled map[string]int
	headers   map[string]string
}

// Cancelled reports how many calls of tool name ended by cancellation.
func (r *Recorder) Cancelled(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled[name]
}

func (r *Recorder) cancel(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelled == nil {
		r.cancelled = map[string]int{}
	}
	r.cancelled[name]++
}

// Header returns the last value of an HTTP header a tool call carried.
func (r *Recorder) Header(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headers[strings.ToLower(name)]
}

func (r *Recorder) sawHeaders(req *mcp.CallToolRequest) {
	if req.Extra == nil || req.Extra.Header == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.headers == nil {
		r.headers = map[string]string{}
	}
	for k, v := range req.Extra.Header {
		if strings.HasPrefix(strings.ToLower(k), "mcp-") && len(v) > 0 {
			r.headers[strings.ToLower(k)] = v[0]
		}
	}
}

// NewModernServer returns a Go SDK server for the 2026-07-28 tests. It is
// dual-era unless versions narrows it (ModernVersions, LegacyVersions).
// Its multi-round features use input requests (SEP-2322), which the SDK
// turns into server-to-client requests for handshake-era clients:
//   - echo(message), add(a, b)
//   - confirm: asks for a name (elicitation) with request state, then
//     greets it; "state ok" shows the state came back unchanged
//   - survey: two rounds: an elicitation, then a sampling request
//   - where: asks for the client's roots
//   - region(region, priority, query): region and priority are mirrored
//     into Mcp-Param-Region and Mcp-Param-Priority (x-mcp-header); the tool
//     returns the headers it saw
//   - slow: blocks until cancelled (rec counts the cancellations)
//   - resource test://doc, and test://secret whose read asks for a code
//   - prompt greet(name) and prompt vip, which asks who is asking
func NewModernServer(rec *Recorder, versions []string) *mcp.Server {
	if rec == nil {
		rec = &Recorder{}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "modern-test-server", Version: "2.0.0"}, &mcp.ServerOptions{
		Instructions:              "A server for mcpx's 2026-07-28 tests.",
		SupportedProtocolVersions: versions,
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "-done"}}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the message"},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoArgs) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + in.Message), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add two numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in AddArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	empty := map[string]any{"type": "object"}
	nameSchema := &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"},
	}}
	s.AddTool(&mcp.Tool{Name: "confirm", Description: "asks for a name, then greets it", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			resp, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": nameSchema}, RequestState: "state-1 <&>"}, nil
			}
			if resp.Action != "accept" {
				return text("no name: " + resp.Action), nil
			}
			state := "state lost"
			if req.Params.RequestState == "state-1 <&>" {
				state = "state ok"
			}
			return text(fmt.Sprintf("Hello, %v (%s)", resp.Content["name"], state)), nil
		})
	s.AddTool(&mcp.Tool{Name: "survey", Description: "two rounds: a question, then a completion", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in := req.Params.InputResponses
			color, ok := in["color"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"color": &mcp.ElicitParams{Message: "Favourite colour?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"color": map[string]any{"type": "string", "default": "blue"}}}}},
					RequestState: "round-1"}, nil
			}
			poem, ok := in["poem"].(*mcp.CreateMessageWithToolsResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					"color": &mcp.ElicitParams{Message: "Favourite colour (again)?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"color": map[string]any{"type": "string", "default": "blue"}}}},
					"poem": &mcp.CreateMessageParams{MaxTokens: 20, Messages: []*mcp.SamplingMessage{{Role: "user",
						Content: &mcp.TextContent{Text: fmt.Sprintf("A poem about %v", color.Content["color"])}}}}},
					RequestState: "round-2"}, nil
			}
			var reply string
			for _, c := range poem.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					reply += t.Text
				}
			}
			return text(fmt.Sprintf("colour %v, poem %q", color.Content["color"], reply)), nil
		})
	s.AddTool(&mcp.Tool{Name: "where", Description: "lists the client's roots", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			roots, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil
			}
			var uris []string
			for _, r := range roots.Roots {
				uris = append(uris, r.URI)
			}
			return text("roots: " + strings.Join(uris, ", ")), nil
		})
	s.AddTool(&mcp.Tool{Name: "region", Description: "routed by region", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region":   map[string]any{"type": "string", "x-mcp-header": "Region"},
			"priority": map[string]any{"type": "integer", "x-mcp-header": "Priority"},
			"query":    map[string]any{"type": "string"},
		},
		"required": []string{"region"},
	}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rec.sawHeaders(req)
		var got []string
		if req.Extra != nil {
			for _, h := range []string{"Mcp-Method", "Mcp-Name", "Mcp-Param-Region", "Mcp-Param-Priority"} {
				if v := req.Extra.Header.Get(h); v != "" {
					got = append(got, h+"="+v)
				}
			}
		}
		return text("headers: " + strings.Join(got, " ")), nil
	})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "blocks until cancelled", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				rec.cancel("slow")
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				// Bounded, so a test whose cancellation never arrives ends.
				return text("slow: never cancelled"), nil
			}
		})
	s.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://doc", MIMEType: "text/plain", Text: "the document"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://secret", Name: "secret", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			code, ok := req.Params.InputResponses["code"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.ReadResourceResult{InputRequests: mcp.InputRequestMap{"code": &mcp.ElicitParams{Message: "Access code?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"code": map[string]any{"type": "string", "default": "1234"}}}}}}, nil
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://secret", MIMEType: "text/plain",
				Text: fmt.Sprintf("secret unlocked with %v", code.Content["code"])}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item " + req.Params.URI}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"]}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "vip"},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			who, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"who": nameSchema}}, nil
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Welcome, %v", who.Content["name"])}}}}, nil
		})
	return s
}

// ServeStdio serves srv on stdin and stdout until stdin closes.
func ServeStdio(srv *mcp.Server, in io.Reader) error {
	if in == nil {
		in = os.Stdin
	}
	ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(in), Writer: os.Stdout}, nil)
	if err != nil {
		return err
	}
	return ss.Wait()
}

// Modern serves srv over stateless Streamable HTTP (the only HTTP shape of
// 2026-07-28) on 127.0.0.1 and returns its URL.
func Modern(t testing.TB, srv *mcp.Server) string {
	t.Helper()
	// Closing a request's response stream cancels it (spec 2026-07-28:
	// basic/transports/streamable-http, "Cancellation"); the SDK does that
	// for tool calls only when asked to.
	return Streamable(t, srv, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}, nil)
}

// ChangeEcho replaces srv's echo tool with one that answers "Echo! "
// instead of "Echo: ", as a regression would: verify must notice.
func ChangeEcho(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo the message"},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoArgs) (*mcp.CallToolResult, any, error) {
			return text("Echo! " + in.Message), nil, nil
		})
}

// ServeModern serves srv as Modern does, outside a test: on 127.0.0.1, at
// path /mcp. It returns the URL and a function that stops the server.
func ServeModern(srv *mcp.Server) (url string, stop func(), err error) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(l)
	return "http://" + l.Addr().String() + "/mcp", func() { hs.Close() }, nil
}

// ChangeTools adds then removes a tool, so list subscribers get
// notifications/tools/list_changed, every interval until ctx ends.
func ChangeTools(ctx context.Context, srv *mcp.Server, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		name := fmt.Sprintf("temp-%d", i)
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("temp"), nil })
		srv.RemoveTools(name)
	}
}
