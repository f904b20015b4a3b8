package record

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/transport"
)

// sdkRuns is how many times the go-sdk acceptance tests make their two
// concurrent calls: issue 14 asks for 100 passes out of 100 (about a
// second each under -race).
var sdkRuns = flag.Int("sdk-runs", 100, "how many times the go-sdk replay acceptance tests run their concurrent calls")

// pairServer is a go-sdk server whose "pair" tool answers only once two
// calls are in flight: a recording of two concurrent calls through it
// holds both requests before either response (c2s a, c2s b, s2c a, s2c b,
// in some order).
func pairServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "pair-server", Version: "1.0.0"}, nil)
	var mu sync.Mutex
	arrived := 0
	both := make(chan struct{})
	type pairArgs struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "pair", Description: "answers when two calls are in flight"},
		func(ctx context.Context, req *mcp.CallToolRequest, in pairArgs) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			if arrived++; arrived == 2 {
				close(both)
			}
			mu.Unlock()
			if tok := req.Params.GetProgressToken(); tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "working on " + in.Name})
			}
			select {
			case <-both:
			case <-time.After(10 * time.Second):
				return nil, nil, fmt.Errorf("the other call never came")
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return textResult("paired " + in.Name), nil, nil
		})
	return s
}

// callPair makes two concurrent CallTools on cs and checks each got its
// own answer.
func callPair(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, name := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pair", Arguments: map[string]any{"name": name}})
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("CallTool %s: %w", name, err)
			case res.IsError || len(res.Content) != 1:
				errs[i] = fmt.Errorf("CallTool %s: %+v", name, res)
			default:
				if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "paired "+name {
					errs[i] = fmt.Errorf("CallTool %s answered %+v", name, res.Content[0])
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// recordPair records the official go-sdk client making two concurrent
// tool calls to pairServer, through the recording HTTP proxy.
func recordPair(t *testing.T) *Trace {
	t.Helper()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return pairServer() }, nil))
	defer up.Close()
	proxyURL, readTrace := startHTTPProxy(t, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-recorder", Version: "1.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxyURL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	callPair(t, ctx, cs)
	cs.Close()
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	// The recording holds both calls before either answer.
	var order []string
	for _, e := range tr.Frames() {
		msgs, _ := parseFrame(e.Data)
		for _, m := range msgs {
			if m.Method == "tools/call" || m.IsResponse() && strings.Contains(string(m.Result), "paired") {
				order = append(order, string(e.Dir))
			}
		}
	}
	if strings.Join(order, " ") != "c2s c2s s2c s2c" {
		t.Fatalf("the recording is not of two concurrent calls: %v", order)
	}
	return tr
}

// The official go-sdk client, making two concurrent tool calls, gets each
// its own answer from a replay of such a session, over stdio (defect 1).
func TestSDKConcurrentCallsReplayStdio(t *testing.T) {
	t.Parallel()
	tr := recordPair(t)
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for run := range *sdkRuns {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		// The replay's end of two pipes, the client's the other.
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		conn := transport.NewStream(sr, sw)
		done := make(chan error, 1)
		go func() { done <- rp.Serve(ctx, conn) }()
		client := mcp.NewClient(&mcp.Implementation{Name: "another-client", Version: "2.0"}, nil)
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		callPair(t, ctx, cs)
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("run %d: strict replay: %v", run, err)
		}
		conn.Close()
		cancel()
		if t.Failed() {
			return
		}
	}
}

// The same over Streamable HTTP: each POST gets its own answer, never a
// JSON array (defect 1).
func TestSDKConcurrentCallsReplayHTTP(t *testing.T) {
	t.Parallel()
	tr := recordPair(t)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	for run := range *sdkRuns {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		client := mcp.NewClient(&mcp.Implementation{Name: "another-client", Version: "2.0"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		callPair(t, ctx, cs)
		cs.Close()
		cancel()
		if t.Failed() {
			return
		}
	}
}

// The official go-sdk client lists tools, resources and prompts from a
// replay of an mcpx recording, strictly, whether mcpx sent those requests
// with params {} or none (issue 14, defect 5: absent params and {} are the
// same request), over stdio and over Streamable HTTP.
func TestSDKListsFromAnMcpxRecording(t *testing.T) {
	t.Parallel()
	for _, params := range []string{`{}`, ``} {
		calls := []call{{method: "tools/list", params: params}, {method: "resources/list", params: params}, {method: "prompts/list", params: params}}
		tr, _ := recordSession(t, stdioDialer(t, helper("sdk")), "stdio", calls)
		list := func(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
			t.Helper()
			if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) == 0 {
				t.Errorf("params %q: ListTools: %v", params, err)
			}
			if res, err := cs.ListResources(ctx, nil); err != nil || len(res.Resources) != 1 {
				t.Errorf("params %q: ListResources: %v", params, err)
			}
			if res, err := cs.ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 1 {
				t.Errorf("params %q: ListPrompts: %v", params, err)
			}
		}
		name := "params {}"
		if params == "" {
			name = "no params"
		}
		t.Run(name+"/stdio", func(t *testing.T) {
			rp, err := NewReplayer(tr, ReplayOptions{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			conn := transport.NewStream(sr, sw)
			done := make(chan error, 1)
			go func() {
				err := rp.Serve(ctx, conn)
				conn.Close()
				sw.Close() // a strict replay that fails ends the client's wait
				done <- err
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "another-client", Version: "2.0"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
			if err != nil {
				t.Fatalf("connect: %v (replay: %v)", err, <-done)
			}
			list(t, ctx, cs)
			cs.Close()
			if err := <-done; err != nil {
				t.Errorf("params %q: strict replay: %v", params, err)
			}
		})
		t.Run(name+"/http", func(t *testing.T) {
			var mu sync.Mutex
			var devs []string
			rp, err := NewReplayer(tr, ReplayOptions{Strict: true, OnDeviation: func(d Deviation) {
				if d.Failure {
					mu.Lock()
					devs = append(devs, d.Message)
					mu.Unlock()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(rp.Handler())
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "another-client", Version: "2.0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			list(t, ctx, cs)
			cs.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(devs) > 0 {
				t.Errorf("params %q: strict replay: %q", params, devs)
			}
		})
	}
}
