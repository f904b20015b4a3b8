package record

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// timerServer is a go-sdk server whose "start" tool adds a tool a moment
// later, unless "stop" comes first: the tools/list_changed it then sends
// on the GET stream, outside any request, comes on the server's own time,
// as server-everything's resource updates do.
func timerServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "timer-server", Version: "1.0.0"}, nil)
	var mu sync.Mutex
	var timer *time.Timer
	mcp.AddTool(s, &mcp.Tool{Name: "start", Description: "adds a tool in a moment"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			timer = time.AfterFunc(300*time.Millisecond, func() {
				mcp.AddTool(s, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return textResult("late"), nil, nil
				})
			})
			return textResult("started"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stop", Description: "stops the timer"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return textResult("stopped"), nil, nil
		})
	return s
}

// Verify waits for what the recorded server sent outside any request
// before the client's next frame, as the recorded client did: a go-sdk
// client that got the timer's tools/list_changed before it stopped the
// timer is verified against the same server without a difference, where
// a verify that sent "stop" at once found the notification missing.
func TestVerifyWaitsForWhatCameOutsideAnyRequest(t *testing.T) {
	t.Parallel()
	serve := func() *httptest.Server {
		srv := timerServer()
		return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	}
	up := serve()
	defer up.Close()
	proxyURL, readTrace := startHTTPProxy(t, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxyURL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "start", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed came")
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "stop", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	live := serve()
	defer live.Close()
	res := verifyAgainst(t, tr, newHTTPConn(t, live.URL), VerifyOptions{Timeout: 10 * time.Second})
	if !res.OK() {
		t.Errorf("verify: %s: %+v", res.Summary(), res.Mismatches)
	}
}
