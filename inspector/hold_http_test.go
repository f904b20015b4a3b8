package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// pipeListener is a net.Listener whose connections are net.Pipe ends, so
// that an HTTP server and client talk without the operating system and a
// test can run in a synctest bubble, on the fake clock.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.closed) }); return nil }

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// connectPipeHTTP serves h over an in-memory network and connects a
// session to it over Streamable HTTP, as the command line does for a tool
// call (the GET stream on demand).
func connectPipeHTTP(t *testing.T, h http.Handler, opts Options) *Session {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	tr := &http.Transport{DialContext: l.dial}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		<-done
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := transport.DialHTTP(ctx, transport.HTTPOptions{URL: "http://127.0.0.1:1/mcp", Client: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	opts.ServerStreamOnDemand = true
	s, err := Connect(ctx, conn, opts)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sdkJSONServer is an official-SDK server that answers each POST with
// application/json, so that a tool call's POST stays open until the tool
// is done, and sends what the tool asks the client on the GET stream.
func sdkJSONServer(tool func(ctx context.Context, ss *sdk.ServerSession) (string, error)) http.Handler {
	server := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		text, err := tool(ctx, req.Session)
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
	})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{JSONResponse: true})
}

// A tool call whose POST is answered with JSON (so it stays open until
// the tool is done) waits for a person who takes longer than the idle
// timeout over the form the tool asks for on the GET stream: the timeout
// of the request's write is held like that of its read.
func TestIdleTimeoutWaitsForThePersonDuringTheWrite(t *testing.T) {
	const timeout, answering = time.Second, 10 * time.Second
	for _, kind := range []string{"form", "sampling"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				person := &scriptedPerson{
					form:  ElicitResult{Action: ActionAccept, Content: json.RawMessage(`{"name":"Ada"}`)},
					reply: SamplingReply{Text: "Paris."},
					onQuestion: func(ctx context.Context) {
						select {
						case <-time.After(answering):
						case <-ctx.Done():
						}
					},
				}
				h := sdkJSONServer(func(ctx context.Context, ss *sdk.ServerSession) (string, error) {
					if kind == "sampling" {
						res, err := ss.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
							Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Capital of France?"}}}})
						if err != nil {
							return "", err
						}
						return res.Content.(*sdk.TextContent).Text, nil
					}
					res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "Who are you?",
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
					if err != nil {
						return "", err
					}
					return fmt.Sprint(res.Action, " ", res.Content["name"]), nil
				})
				f := &ClientFeatures{Elicitor: elicitor(t, "prompt", person), Sampler: sampler(t, "prompt", person)}
				s := connectPipeHTTP(t, h, Options{
					Lifecycle: &Legacy{Capabilities: f.Capabilities()}, Handlers: f.Handlers(),
					Timeout: timeout, MaxTimeout: time.Hour,
				})
				start := time.Now()
				res, err := s.Call(t.Context(), mcp.MethodToolsCall, map[string]any{"name": "ask"})
				if err != nil {
					t.Fatalf("the tool call, %s after it was sent, with the question answered in %s: %v", time.Since(start), answering, err)
				}
				if want := map[string]string{"form": "accept Ada", "sampling": "Paris."}[kind]; !strings.Contains(string(res), want) {
					t.Errorf("result %s, want %q", res, want)
				}
			})
		})
	}
}

// The hard cap still bounds a request whose write waits on a person.
func TestMaxTimeoutBoundsTheWriteWhileThePersonAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		person := &scriptedPerson{form: ElicitResult{Action: ActionDecline},
			onQuestion: func(ctx context.Context) { <-ctx.Done() }}
		h := sdkJSONServer(func(ctx context.Context, ss *sdk.ServerSession) (string, error) {
			_, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "Who are you?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			return "", err
		})
		f := &ClientFeatures{Elicitor: elicitor(t, "prompt", person)}
		s := connectPipeHTTP(t, h, Options{Lifecycle: &Legacy{Capabilities: f.Capabilities()}, Handlers: f.Handlers(),
			Timeout: time.Second, MaxTimeout: 5 * time.Second})
		start := time.Now()
		_, err := s.Call(t.Context(), mcp.MethodToolsCall, map[string]any{"name": "ask"})
		var te *TimeoutError
		if !errors.As(err, &te) || !te.Max || time.Since(start) != 5*time.Second {
			t.Fatalf("err = %v after %s, want the 5s cap", err, time.Since(start))
		}
	})
}
