package record_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

// A test records a session with its server into a trace for its
// testdata, in the stable form: recording the unchanged session again
// gives the same bytes, so the trace in the repository changes only when
// the session does. The URL of an HTTP server is in the trace's HTTP
// events; a test server listens on a port chosen at random, so the
// client names it by a fixed URL (a localhost one, which servers that
// check the Host header accept) and reaches it through an http.Client
// that dials the test server.
func ExampleCreate() {
	srv := serve(greeter("Hello"))
	defer srv.Close()
	dir, err := os.MkdirTemp("", "testdata")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "greeter.jsonl")

	recordSession := func() []byte {
		ctx := context.Background()
		rec, err := record.Create(ctx, file, record.RecorderOptions{
			Header:    record.Header{Transport: "http", Target: "greeter"},
			Stable:    true,
			Overwrite: true, // record the trace again
		})
		if err != nil {
			log.Fatal(err)
		}
		client := &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return new(net.Dialer).DialContext(ctx, network, srv.Listener.Addr().String())
			},
		}}
		conn, err := transport.NewHTTP(transport.HTTPOptions{URL: "http://localhost:8000/mcp", Client: client, Observer: rec.Observe})
		if err != nil {
			log.Fatal(err)
		}
		sess, err := inspector.Connect(ctx, rec.Wrap(conn), inspector.Options{
			Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "example", Version: "1.0"}},
		})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := sess.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}}); err != nil {
			log.Fatal(err)
		}
		sess.Close()
		// Close writes the trace; an error here is a trace not written.
		if err := rec.Close(); err != nil {
			log.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			log.Fatal(err)
		}
		return b
	}

	first, second := recordSession(), recordSession()
	fmt.Println("recorded twice, the same bytes:", bytes.Equal(first, second))
	tr, err := record.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range tr.Frames() {
		msgs, _ := e.Messages()
		if m := msgs[0]; m.Method != "" {
			fmt.Println(e.Dir, m.Method)
		} else {
			fmt.Println(e.Dir, string(m.Result))
		}
	}
	// Output:
	// recorded twice, the same bytes: true
	// c2s initialize
	// s2c {"capabilities":{"logging":{},"tools":{"listChanged":true}},"protocolVersion":"2025-11-25","serverInfo":{"name":"greeter","version":"1.0.0"}}
	// c2s notifications/initialized
	// c2s tools/call
	// s2c {"content":[{"text":"Hello, Ada!","type":"text"}]}
}

// A test harness of its own (record/sdktest is the official Go SDK's)
// asks the record mode what to do with a session: record it from the live
// server, or replay it from the trace. The mode is usually the one
// MCPX_RECORD names, record.EnvMode(record.ModeOnce), so that
// MCPX_RECORD=update go test ./... records every trace again.
func ExampleMode_Plan() {
	dir, err := os.MkdirTemp("", "testdata")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "greeter.jsonl") // not recorded yet

	for _, m := range []record.Mode{record.ModeOnce, record.ModeReplayOnly} {
		plan, err := m.Plan(file, "TestGreet")
		fmt.Printf("%s: record %v, error %v\n", m, plan.Record, err != nil)
	}
	plan, _ := record.ModeOnce.Plan("testdata/greeter.jsonl", "")
	fmt.Printf("once, recorded: record %v, replay session %d\n", plan.Record, plan.Session)
	// Output:
	// once: record true, error false
	// replay-only: record false, error true
	// once, recorded: record false, replay session 1
}
