package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// TestREPLParallelLineKeepsItsOrder: a line run at once with others
// prints, when its turn comes, what it wrote to stdout and stderr in the
// order it wrote it — its progress before its result, as when the lines
// run one by one — on a stdout and stderr that are one stream (2>&1).
func TestREPLParallelLineKeepsItsOrder(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "progress", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "work", Description: "progress, then a result", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "worked"}}}, nil
		})
	u := testservers.Streamable(t, s, nil, nil)
	for _, args := range [][]string{{"repl"}, {"repl", "--parallel", "2"}} {
		ios, out, _ := NewTestIOStreams(nil)
		ios.ErrOut = out
		ios.In = strings.NewReader("tools call work\ntools call work &\nwait\n")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code := Run(ctx, append(args, "--url", u), ios)
		cancel()
		got := out.String()
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", args, code, got)
		}
		for i, line := range []string{"tools call work\n", "tools call work &\n"} {
			echo := strings.Index(got, "mcpx> "+line)
			if echo < 0 {
				t.Fatalf("%s: no echo of line %d:\n%s", args, i+1, got)
			}
			rest := got[echo+len("mcpx> "+line):]
			if next := strings.Index(rest, "mcpx> "); next >= 0 {
				rest = rest[:next]
			}
			p, r := strings.Index(rest, "progress: 1/2"), strings.Index(rest, "worked")
			if p < 0 || r < 0 || p > r {
				t.Errorf("%s: line %d printed %q; want its progress, then its result", args, i+1, rest)
			}
		}
	}
}
