package record

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// The test binary doubles as the stdio servers the tests launch:
// RECORD_TEST_HELPER picks one.
func TestMain(m *testing.M) {
	switch os.Getenv("RECORD_TEST_HELPER") {
	case "":
		// Most tests wait for helper processes, servers and round trips.
		testwait.RaiseParallel(4)
		os.Exit(m.Run())
	case "sdk":
		srv := newTestServer(os.Getenv("RECORD_TEST_VARIANT"))
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "sdk helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "modern":
		if err := testservers.ServeStdio(testservers.NewModernServer(nil, nil), nil); err != nil {
			fmt.Fprintln(os.Stderr, "modern helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "echo-lines":
		runEchoLines()
		os.Exit(0)
	case "append":
		if err := runAppendHelper(); err != nil {
			fmt.Fprintln(os.Stderr, "append helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "exit3":
		fmt.Fprintln(os.Stderr, "exit3: giving up")
		os.Exit(3)
	case "exit3-at-eof":
		// exit3 once the client has closed its stdin: a server that
		// ends only after the client went.
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}
	fmt.Fprintln(os.Stderr, "unknown RECORD_TEST_HELPER")
	os.Exit(2)
}

// helper returns the options that launch this test binary as a helper.
func helper(mode string, env ...string) transport.StdioOptions {
	return transport.StdioOptions{
		Command: os.Args[0],
		Args:    []string{"-test.run=^$"},
		Env:     append([]string{"RECORD_TEST_HELPER=" + mode}, env...),
	}
}

// serverOddFrames are what the echo-lines helper writes before anything
// else: valid but unusual frames a proxy must not touch.
var serverOddFrames = []string{
	`{ "jsonrpc" : "2.0" , "method" : "notifications/message" , "params" : { "level" : "info" , "data" : "spaced out" } }`,
	`{"params":{"data":"caf\u00e9 \ud83d\ude00 \u003cb\u003e","level":"info"},"method":"notifications/message","jsonrpc":"2.0"}`,
	"{\"jsonrpc\":\"2.0\",\t\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"tab\"}}\r",
}

// runEchoLines writes serverOddFrames, then echoes every line it reads,
// byte for byte, and a line on stderr for each; with ECHO_LINES_BIG=N, a
// notifications/big it reads is answered with a notification N bytes
// long instead (a server line over a proxy's limit).
func runEchoLines() {
	big, _ := strconv.Atoi(os.Getenv("ECHO_LINES_BIG"))
	fmt.Fprintf(os.Stderr, "echo-lines: pid %d\n", os.Getpid())
	w := bufio.NewWriter(os.Stdout)
	for _, f := range serverOddFrames {
		w.WriteString(f + "\n")
	}
	w.Flush()
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if big > 0 && bytes.Contains(line, []byte(`"method":"notifications/big"`)) {
			pad := big - len(`{"jsonrpc":"2.0","method":"notifications/big","params":{"x":""}}`)
			fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","method":"notifications/big","params":{"x":"%s"}}`+"\n", strings.Repeat("x", max(pad, 0)))
		} else if len(line) > 0 {
			os.Stdout.Write(line)
			fmt.Fprintf(os.Stderr, "echo-lines: %d bytes\n", len(line))
		}
		if err != nil {
			return
		}
	}
}

// newTestServer is a Go SDK server with tools, resources, prompts,
// progress, logging and a server-to-client request. A variant differs as
// a regression would, for verify to find: "changed" answers echo
// differently, "fewer-progress" reports the last 2 steps of progress only,
// "renamed" calls the add tool sum, "log-text" prefixes the log tool's
// message with "log: ", and "session-text" (a volatile value, not a
// regression) appends a new session id to every echo.
func newTestServer(variant string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "record-test-server", Version: "1.0.0"}, nil)
	type echoArgs struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the message"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			prefix, suffix := "Echo: ", ""
			switch variant {
			case "changed":
				prefix = "Echo! "
			case "session-text":
				var b [16]byte
				rand.Read(b[:])
				b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
				suffix = fmt.Sprintf(" (session %x-%x-%x-%x-%x)", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
			}
			return textResult(prefix + in.Message + suffix), nil, nil
		})
	type addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	add := "add"
	if variant == "renamed" {
		add = "sum"
	}
	mcp.AddTool(s, &mcp.Tool{Name: add, Description: "add two numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return textResult(fmt.Sprint(in.A + in.B)), nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "whoami", Description: "says the session's id (its Mcp-Session-Id over HTTP)", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("you are session " + req.Session.ID()), nil
		})
	type logArgs struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "log the message, then answer"},
		func(ctx context.Context, req *mcp.CallToolRequest, in logArgs) (*mcp.CallToolResult, any, error) {
			msg := in.Message
			if variant == "log-text" {
				msg = "log: " + msg
			}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: msg}); err != nil {
				return nil, nil, err
			}
			return textResult("logged"), nil, nil
		})
	type progressArgs struct {
		Steps int `json:"steps"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "report progress, then answer"},
		func(ctx context.Context, req *mcp.CallToolRequest, in progressArgs) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				first := 1
				if variant == "fewer-progress" {
					first = max(1, in.Steps-1)
				}
				for i := first; i <= in.Steps; i++ {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
				}
			}
			return textResult(fmt.Sprintf("done after %d steps", in.Steps)), nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "roots", Description: "ask the client for its roots", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return textResult("roots: " + strings.Join(uris, ", ")), nil
		})
	s.AddTool(&mcp.Tool{Name: "now", Description: "the time, which changes every run", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "the time"}},
				StructuredContent: map[string]any{"at": time.Now().UTC().Format(time.RFC3339Nano)},
			}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://readme", MIMEType: "text/plain", Text: "Hello from the readme."}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Greet " + req.Params.Arguments["name"]}}}}, nil
		})
	return s
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// call is one request a test session makes.
type call struct {
	method, params string
	progress       bool
}

// sdkCalls exercise everything newTestServer has.
var sdkCalls = []call{
	{method: "tools/list", params: `{}`},
	{method: "tools/call", params: `{"name":"echo","arguments":{"message":"hello"}}`},
	{method: "tools/call", params: `{"name":"add","arguments":{"a":2,"b":3}}`},
	{method: "tools/call", params: `{"name":"progress","arguments":{"steps":3}}`, progress: true},
	{method: "tools/call", params: `{"name":"roots","arguments":{}}`},
	{method: "tools/call", params: `{"name":"now","arguments":{}}`},
	{method: "resources/list", params: `{}`},
	{method: "resources/read", params: `{"uri":"test://readme"}`},
	{method: "prompts/list", params: `{}`},
	{method: "prompts/get", params: `{"name":"greet","arguments":{"name":"Ada"}}`},
	{method: "ping"},
}

// sessionResult is what a test session saw: each result exactly as
// received, the progress updates and the server's requests.
type sessionResult struct {
	results        []string
	progress       []string
	serverRequests []string
}

// exercise opens a session on conn (declaring roots, which it answers),
// makes the calls, and closes the session.
func exercise(t *testing.T, conn transport.Conn, calls []call) sessionResult {
	t.Helper()
	return exerciseEra(t, conn, calls, &inspector.Legacy{
		ClientInfo:   inspector.Implementation{Name: "record-test", Version: "1.0"},
		Capabilities: json.RawMessage(`{"roots":{}}`),
	})
}

// exerciseEra is exercise with a lifecycle of choice. Besides roots, the
// session answers elicitation/create with {"name":"Ada"}.
func exerciseEra(t *testing.T, conn transport.Conn, calls []call, life inspector.Lifecycle) sessionResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var res sessionResult
	sess, err := inspector.Connect(ctx, conn, inspector.Options{
		Lifecycle: life,
		Handlers: map[string]inspector.RequestHandler{
			"roots/list": func(ctx context.Context, m *jsonrpc.Message) (any, error) {
				mu.Lock()
				res.serverRequests = append(res.serverRequests, m.Method)
				mu.Unlock()
				return json.RawMessage(`{"roots":[{"uri":"file:///tmp/project","name":"project"}]}`), nil
			},
			"elicitation/create": func(ctx context.Context, m *jsonrpc.Message) (any, error) {
				mu.Lock()
				res.serverRequests = append(res.serverRequests, m.Method)
				mu.Unlock()
				return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
			},
		},
		OnWarning: func(s string) { t.Logf("session warning: %s", s) },
		Timeout:   30 * time.Second,
	})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer sess.Close()
	res.results = append(res.results, string(sess.Server().Raw))
	for _, c := range calls {
		var opts []inspector.CallOption
		if c.progress {
			opts = append(opts, inspector.WithProgress(func(p inspector.Progress) {
				mu.Lock()
				res.progress = append(res.progress, fmt.Sprintf("%v/%v %s", p.Progress, *p.Total, p.Message))
				mu.Unlock()
			}))
		}
		var params any
		if c.params != "" {
			params = json.RawMessage(c.params)
		}
		out, err := sess.Call(ctx, c.method, params, opts...)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.params, err)
		}
		res.results = append(res.results, string(out))
	}
	mu.Lock()
	defer mu.Unlock()
	return res
}

// recordSession records a session with calls into a temporary trace file
// and reads it back. dial connects, sending transport events to obs.
func recordSession(t *testing.T, dial func(obs transport.Observer) transport.Conn, transportName string, calls []call) (*Trace, sessionResult) {
	t.Helper()
	return recordSessionWith(t, dial, transportName, calls, nil, RedactOptions{})
}

// recordSessionWith is recordSession with a lifecycle (nil: the handshake
// era, as exercise) and redaction options.
func recordSessionWith(t *testing.T, dial func(obs transport.Observer) transport.Conn, transportName string, calls []call, life inspector.Lifecycle, red RedactOptions) (*Trace, sessionResult) {
	t.Helper()
	name := t.TempDir() + "/trace.jsonl"
	rec, err := Create(context.Background(), name, RecorderOptions{Header: Header{Mcpx: "test", Transport: transportName, Target: "test"}, Redact: red})
	if err != nil {
		t.Fatal(err)
	}
	var res sessionResult
	if life == nil {
		res = exercise(t, rec.Wrap(dial(rec.Observe)), calls)
	} else {
		res = exerciseEra(t, rec.Wrap(dial(rec.Observe)), calls, life)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return tr, res
}

// stdioDialer launches o for recordSession.
func stdioDialer(t *testing.T, o transport.StdioOptions) func(transport.Observer) transport.Conn {
	return func(obs transport.Observer) transport.Conn {
		o.Observer = obs
		return startStdio(t, o)
	}
}

func startStdio(t *testing.T, o transport.StdioOptions) *transport.StdioConn {
	t.Helper()
	c, err := transport.StartStdio(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readAllLines(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
