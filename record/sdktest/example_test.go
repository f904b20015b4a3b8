package sdktest_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/sdktest"
	"github.com/mcpx-dev/mcpx/transport"
)

// greeter is the server of the examples: what a server author has in
// their own project.
func greeter(greeting string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "greet someone"},
		func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: greeting + ", " + in.Name + "!"}}}, nil, nil
		})
	return s
}

func greet(t *testing.T, tr mcp.Transport) string {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil || res.IsError {
		t.Fatalf("greet: %+v, %v", res, err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// 1. Record once, replay afterwards: the first run (no trace yet) talks
// to the server and records testdata/greeter.jsonl; later runs replay it
// without the server; MCPX_RECORD=update go test records it again.
func TestGreetRecordedOnce(t *testing.T) {
	tr := sdktest.ServerTransport(t, "testdata/greeter.jsonl", greeter("Hello"), sdktest.Options{})
	if got := greet(t, tr); got != "Hello, Ada!" {
		t.Errorf("greet = %q", got)
	}
}

// 2. A server author checks the server against the recording on every
// run: each difference fails the test, with its JSONPath and both values.
func TestGreeterMatchesTrace(t *testing.T) {
	sdktest.Verify(t, "testdata/greeter.jsonl", greeter("Hello"), sdktest.Options{})
}

// 3. A client author tests their client against the recorded server
// alone, failing on any request the recording does not have.
func TestClientAgainstReplay(t *testing.T) {
	tr := sdktest.Replay(t, "testdata/greeter.jsonl", sdktest.Options{
		Name:   "TestGreetRecordedOnce",
		Replay: record.ReplayOptions{Strict: true},
	})
	if got := greet(t, tr); got != "Hello, Ada!" {
		t.Errorf("greet = %q", got)
	}
}

// 4. A test that changed the server on purpose reads what verification
// finds rather than failing on it (as Verify does): Conn gives the
// functions of package record an in-memory connection to the server.
func ExampleConn() {
	ctx := context.Background()
	tr, err := record.ReadFile("testdata/greeter.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	server := greeter("Howdy") // was "Hello" when the trace was recorded
	res, err := record.Verify(ctx, tr, nil, record.VerifyOptions{
		Dial: func(ctx context.Context, _ int, _ record.SessionInfo) (transport.Conn, error) {
			return sdktest.Conn(ctx, server)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.Mismatches {
		for _, d := range m.Diffs {
			fmt.Printf("%s %s: recorded %s, live %s\n", m.Label(), d.Path, d.Recorded, d.Live)
		}
	}
	fmt.Println(res.Summary())
	// Output:
	// tools/call "greet" $.result.content[0].text: recorded "Hello, Ada!", live "Howdy, Ada!"
	// 2 exchange(s) verified, 1 mismatch(es)
}
