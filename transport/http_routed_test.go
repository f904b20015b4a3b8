package transport_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// A frame with a Route travels in the stateless style of 2026-07-28: its
// route mirrored into headers, no session id even when the server sends one,
// a JSON-RPC error with a 4xx status delivered as the answer, a stream that
// ends early reported as a lost request (after the frames it carried), and
// cancellation by closing the stream.
func TestRoutedFrames(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	var methods []string
	cancelled := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		methods = append(methods, r.Method)
		mu.Unlock()
		s := string(body)
		switch {
		case strings.Contains(s, `"id":1`):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "should-be-ignored")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}}`)
		case strings.Contains(s, `"id":2`):
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Mcp-Session-Id", "should-be-ignored")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":2,\"progress\":1}}\n\n")
			// ...and the stream ends without the response.
		case strings.Contains(s, `"id":3`):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				close(cancelled)
			case <-time.After(10 * time.Second):
			}
		case strings.Contains(s, `"id":4`):
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "plain refusal")
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeAuto})
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan string, 4)
	conn.OnRequestLost(func(id string, err error) { lost <- id + ": " + err.Error() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	route := func(method string) *transport.Route {
		return &transport.Route{ProtocolVersion: "2026-07-28", Method: method, Name: "x y", Params: []transport.RouteParam{{Name: "Region", Value: "é"}}}
	}

	// 1: the 400's JSON-RPC error is the answer.
	if err := conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`), Route: route("tools/call")}); err != nil {
		t.Fatalf("write 1: %v", err)
	}
	f, err := conn.Read(ctx)
	if err != nil || !strings.Contains(string(f.Data), "-32022") || f.Meta == nil || f.Meta.HTTPStatus != 400 {
		t.Fatalf("read 1: %s %+v %v", f.Data, f.Meta, err)
	}
	if conn.Transport() != transport.ModeStreamable {
		t.Errorf("the transport was not settled by a modern answer: %q", conn.Transport())
	}

	// 2: the stream ends early; the notification it carried comes first,
	// then the loss.
	if err := conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`), Route: route("tools/call")}); err != nil {
		t.Fatalf("write 2: %v", err)
	}
	readDone := make(chan transport.Frame, 1)
	go func() {
		f, _ := conn.Read(ctx)
		readDone <- f
	}()
	select {
	case f := <-readDone:
		if !strings.Contains(string(f.Data), "notifications/progress") {
			t.Fatalf("read 2: %s", f.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no frame")
	}
	// The loss is reported from Read, so a reader must be waiting.
	go func() { conn.Read(ctx) }()
	select {
	case l := <-lost:
		if !strings.HasPrefix(l, "2: ") || !strings.Contains(l, "response stream lost") {
			t.Errorf("lost: %s", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loss was not reported")
	}

	// 3: cancelled by closing its stream.
	if err := conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`), Route: route("tools/call")}); err != nil {
		t.Fatalf("write 3: %v", err)
	}
	if !conn.CancelRequest("3") {
		t.Error("CancelRequest did not know request 3")
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not see the stream closed")
	}
	if conn.CancelRequest("99") {
		t.Error("CancelRequest claimed an unknown request")
	}

	// 4: a 4xx without a JSON-RPC answer is an HTTP error.
	err = conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}`), Route: route("tools/call")})
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != 400 {
		t.Fatalf("write 4: %v", err)
	}

	conn.Close()
	mu.Lock()
	defer mu.Unlock()
	for i, h := range seen {
		if h.Get("Mcp-Session-Id") != "" {
			t.Errorf("request %d carried a session id", i+1)
		}
		if h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Protocol-Version") != "2026-07-28" ||
			h.Get("Mcp-Name") != "x y" || h.Get("Mcp-Param-Region") != "=?base64?w6k=?=" {
			t.Errorf("request %d headers: %v", i+1, h)
		}
	}
	for _, m := range methods {
		if m != http.MethodPost {
			t.Errorf("a stateless connection sent %s (no GET stream, no DELETE)", m)
		}
	}
	if conn.SessionID() != "" {
		t.Errorf("session id %q adopted", conn.SessionID())
	}
}
