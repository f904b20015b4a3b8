package record_test

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/recordtest"
	"github.com/mcpx-dev/mcpx/transport"
)

// greeter is the server under test in the examples: what a server author
// would have in their own project.
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

func serve(s *mcp.Server) *httptest.Server {
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// A server author checks their server against a session recorded earlier
// (testdata/greeter.jsonl, made with mcpx ... --record or the Recorder),
// in an ordinary go test.
func ExampleVerify() {
	srv := serve(greeter("Hello"))
	defer srv.Close()

	tr, err := record.ReadFile("testdata/greeter.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: srv.URL})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	res, err := record.Verify(context.Background(), tr, conn, record.VerifyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Summary())
	// Output: 3 exchange(s) verified, 0 mismatch(es)
}

// When the server changes, the result says where.
func ExampleVerifyResult() {
	srv := serve(greeter("Howdy"))
	defer srv.Close()

	tr, _ := record.ReadFile("testdata/greeter.jsonl")
	conn, _ := transport.NewHTTP(transport.HTTPOptions{URL: srv.URL})
	defer conn.Close()
	res, _ := record.Verify(context.Background(), tr, conn, record.VerifyOptions{})
	for _, m := range res.Mismatches {
		fmt.Printf("%s: %s\n", m.Label(), m.Problem)
		for _, d := range m.Diffs {
			fmt.Printf("  %s: recorded %s, live %s\n", d.Path, d.Recorded, d.Live)
		}
	}
	fmt.Println(res.Summary())
	// Output:
	// tools/call "greet": the response differs
	//   $.result.content[0].text: recorded "Hello, Ada!", live "Howdy, Ada!"
	// 3 exchange(s) verified, 1 mismatch(es)
}

// A client author uses the recording as a mock server.
func ExampleReplayer() {
	ctx := context.Background()
	tr, _ := record.ReadFile("testdata/greeter.jsonl")
	rp, _ := record.NewReplayer(tr, record.ReplayOptions{})
	conn, _ := rp.ServePipe(ctx)
	defer conn.Close()

	sess, err := inspector.Connect(ctx, conn, inspector.Options{
		Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "example", Version: "1.0"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, _ := sess.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	fmt.Println(sess.Server().Implementation.Name, string(res))
	// Output: greeter {"content":[{"type":"text","text":"Hello, Ada!"}]}
}

var update = flag.Bool("update", false, "re-record testdata/greeter.jsonl")

// TestGreeterTrace keeps the examples' trace honest: recorded from the
// greeter (go test ./record -run TestGreeterTrace -update), and verified
// against it with the recordtest helper.
func TestGreeterTrace(t *testing.T) {
	t.Parallel()
	srv := serve(greeter("Hello"))
	defer srv.Close()
	if *update {
		rec, err := record.Create(context.Background(), "testdata/greeter.jsonl", record.RecorderOptions{Header: record.Header{Mcpx: "example", Transport: "http", Target: "http: greeter"}})
		if err != nil {
			t.Fatal(err)
		}
		conn, _ := transport.NewHTTP(transport.HTTPOptions{URL: srv.URL, Observer: rec.Observe})
		ctx := context.Background()
		sess, err := inspector.Connect(ctx, rec.Wrap(conn), inspector.Options{
			Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "example", Version: "1.0"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		sess.Call(ctx, "tools/list", nil)
		sess.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
		sess.Close()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	recordtest.Verify(t, "testdata/greeter.jsonl", conn, record.VerifyOptions{})
}
