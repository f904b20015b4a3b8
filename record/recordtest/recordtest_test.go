package recordtest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/recordtest"
	"github.com/mcpx-dev/mcpx/transport"
)

// A client under test gets the recorded answers, for as long as the test
// runs.
func TestReplay(t *testing.T) {
	conn := recordtest.Replay(t, "../testdata/greeter.jsonl", record.ReplayOptions{Strict: true})
	sess, err := inspector.Connect(t.Context(), conn, inspector.Options{
		Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "example", Version: "1.0"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Call(t.Context(), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Call(t.Context(), "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	if err != nil || !strings.Contains(string(res), "Hello, Ada!") {
		t.Errorf("tools/call = %s, %v", res, err)
	}
}

func TestReport(t *testing.T) {
	res := &record.VerifyResult{Exchanges: 2, Mismatches: []record.Mismatch{{
		Session: 1, Exchange: 2,
		Method: "tools/call", Request: []byte(`{"name":"e\u001b"}`), Problem: "the response differs",
		Diffs: []record.Difference{{Path: "$.result.x", Recorded: `"a"`, Live: "\"b\u202e\""}},
	}}}
	want := "✗ session 1, exchange 2 tools/call \"e\\x1b\": the response differs\n" +
		"    $.result.x\n      - recorded: \"a\"\n      + live:     \"\\\"b\\u202e\\\"\"\n" +
		"2 exchange(s) verified, 1 mismatch(es)"
	if got := recordtest.Report(res); got != want {
		t.Errorf("Report:\n%s\nwant\n%s", got, want)
	}
}

// fakeTB records what a helper reports instead of failing the test.
type fakeTB struct {
	testing.TB
	errors, fatals []string
}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatals = append(f.fatals, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Verify reports every difference, an exchange the server refused (an
// HTTP 500) among them, instead of stopping at that one.
func TestVerifyReportsAllDifferences(t *testing.T) {
	greeter := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(greeter, &mcp.Tool{Name: "greet", Description: "greet someone"},
		func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Howdy, " + in.Name + "!"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return greeter }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			http.Error(w, "the tools are away", http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	tb := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		recordtest.Verify(tb, "../testdata/greeter.jsonl", conn, record.VerifyOptions{})
	}()
	<-done
	if len(tb.fatals) > 0 || len(tb.errors) != 1 {
		t.Fatalf("errors %q, fatals %q", tb.errors, tb.fatals)
	}
	for _, want := range []string{"tools/list: refused with HTTP 500", `tools/call "greet": the response differs`, `"Howdy, Ada!"`, "2 mismatch(es)"} {
		if !strings.Contains(tb.errors[0], want) {
			t.Errorf("the report lacks %q:\n%s", want, tb.errors[0])
		}
	}
}
