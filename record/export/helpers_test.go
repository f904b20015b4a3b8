package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

// Secrets the recordings below are given; no export may hold them.
const (
	secretQuery  = "query-secret-4711"
	secretBearer = "bearer-secret-0815"
	secretArg    = "argument-secret-1234"
)

const (
	initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"export-test","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	echoCall    = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","password":"` + secretArg + `"}}}`
	noSuch      = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nosuch","arguments":{}}}`
)

// roundTrip sends a request and reads frames until its response.
func roundTrip(ctx context.Context, t *testing.T, c transport.Conn, frame string, id string) string {
	t.Helper()
	if err := c.Write(ctx, transport.Frame{Data: []byte(frame)}); err != nil {
		t.Fatalf("sending %s: %v", frame, err)
	}
	if id == "" {
		return ""
	}
	for {
		f, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for the response to %s: %v", frame, err)
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(f.Data, &m) == nil && string(m.ID) == id && !bytes.Contains(f.Data, []byte(`"method"`)) {
			return string(f.Data)
		}
	}
}

// echoServer is a Go SDK server with an echo tool whose arguments may
// carry a password.
func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "export-test-server", Version: "1.0.0"}, nil)
	type args struct {
		Message  string `json:"message"`
		Password string `json:"password,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the message"},
		func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	return s
}

// recordHTTP records a session of mcpx's transport with a Go SDK server
// over Streamable HTTP (SSE responses, or JSON ones with jsonResponse):
// initialize, tools/call echo (with a password argument), a method the
// server does not have, and the session's end. The URL carries an api_key
// and the requests a bearer token.
func recordHTTP(t *testing.T, jsonResponse bool) *record.Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := testservers.Streamable(t, echoServer(), &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}, nil)
	u += "?api_key=" + secretQuery
	var buf bytes.Buffer
	rec, err := record.NewRecorder(&buf, record.RecorderOptions{
		Header: record.Header{Mcpx: "test", Transport: "http", Target: "http: " + u},
		Redact: record.RedactOptions{Secrets: []string{secretBearer}},
	})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Mode: transport.ModeStreamable,
		Authorizer: transport.BearerToken(secretBearer), Observer: rec.Observe})
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Wrap(hc)
	roundTrip(ctx, t, c, initialize, "1")
	roundTrip(ctx, t, c, initialized, "")
	roundTrip(ctx, t, c, echoCall, "2")
	roundTrip(ctx, t, c, noSuch, "3")
	if err := c.Close(); err != nil {
		t.Logf("closing: %v", err)
	}
	return finish(t, rec, &buf)
}

// finish closes a recorder and reads its trace back.
func finish(t *testing.T, rec *record.Recorder, buf *bytes.Buffer) *record.Trace {
	t.Helper()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := record.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("reading the trace back: %v\n%s", err, buf.String())
	}
	return tr
}

// recordProxyRefusal records, through mcpx's HTTP proxy, an initialize
// that the upstream refuses with a 400 text/plain, then one it accepts
// with a JSON body.
func recordProxyRefusal(t *testing.T) *record.Trace {
	t.Helper()
	n := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if n++; n == 1 {
			http.Error(w, "bad request: the <b>first</b> try is refused", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "sess-1")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"up","version":"1"}}}`)
	}))
	t.Cleanup(up.Close)
	var buf bytes.Buffer
	rec, err := record.NewRecorder(&buf, record.RecorderOptions{Header: record.Header{Transport: "http", Target: up.URL}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := record.NewHTTPProxy(record.HTTPProxyOptions{Upstream: up.URL + "/mcp", Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, ps.URL+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := ps.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ps.Close()
	return finish(t, rec, &buf)
}

// stdioTrace records frames as a stdio session would carry them: a
// handshake, a server request and its answer, a notification from each
// side, a JSON-RPC error, a tool error, a request never answered, and a
// line that is no JSON.
func stdioTrace(t *testing.T, frames ...string) *record.Trace {
	t.Helper()
	var buf bytes.Buffer
	rec, err := record.NewRecorder(&buf, record.RecorderOptions{Header: record.Header{Transport: "stdio", Target: "stdio: node server.js"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, f := range frames {
		dir := transport.Outgoing
		if strings.HasPrefix(f, "< ") {
			dir = transport.Incoming
		}
		rec.Frame(now.Add(time.Duration(i)*time.Millisecond), dir, transport.Frame{Data: []byte(f[2:])})
	}
	return finish(t, rec, &buf)
}

// stdioFrames is a stdio session: "> " frames the client sent, "< " the
// server's.
var stdioFrames = []string{
	"> " + initialize,
	`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
	"> " + initialized,
	`< {"jsonrpc":"2.0","id":"r1","method":"roots/list"}`,
	`> {"jsonrpc":"2.0","id":"r1","result":{"roots":[]}}`,
	`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`,
	"> " + noSuch,
	`< {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown tool \"nosuch\""}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fail","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"disk full"}],"isError":true}}`,
	`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
	`< this is not JSON`,
}
