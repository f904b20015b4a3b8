package record

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that ends its session without sending the request after which
// the recorded server sent something on its own (a resource update on
// the GET stream) is told that the replay never sent it, in either mode:
// the replay holds such output until the client sends that request, and
// the go-sdk client, which only lists the tools here, would otherwise
// just miss the update.
func TestReplayHTTPReportsHeldOutputNeverSent(t *testing.T) {
	t.Parallel()
	tr := httpTrace(t, append(slices.Clone(handshake),
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"toggle-subscriber-updates","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		`g {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://a"}}`,
	)...)
	for _, strict := range []bool{false, true} {
		var mu sync.Mutex
		var devs []string
		rp, err := NewReplayer(tr, ReplayOptions{Strict: strict, OnDeviation: func(d Deviation) {
			mu.Lock()
			if d.Failure {
				// (A warning in either mode, not a failure: see below.)
				d.Message = "failure: " + d.Message
			}
			devs = append(devs, d.Message)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(rp.Handler())
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		client := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		cs.Close() // DELETE: the session ends
		cancel()
		srv.Close()
		mu.Lock()
		got := strings.Join(devs, "\n")
		mu.Unlock()
		want := "before the replay sent 1 message(s) the recorded server sent on its own, first notification notifications/resources/updated: it waits for request tools/call"
		if !strings.Contains(got, want) || strings.Contains(got, "failure: the client ended the session before the replay sent") {
			t.Errorf("strict %v: deviations %q, want one that says %q and names the update", strict, got, want)
		}
	}
}

// A client that never opens the GET stream is told, when its session
// ends, that what the recorded server sent there never reached it.
func TestReplayHTTPReportsWhatTheGetStreamWouldHaveCarried(t *testing.T) {
	t.Parallel()
	tr := httpTrace(t, append(slices.Clone(handshake),
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`g {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	)...)
	// A warning in strict mode too, not a failure: a client MAY open a
	// GET stream (spec basic/transports), and this one does not.
	for _, strict := range []bool{false, true} {
		var mu sync.Mutex
		var devs []string
		rp, err := NewReplayer(tr, ReplayOptions{Strict: strict, OnDeviation: func(d Deviation) {
			mu.Lock()
			if d.Failure {
				d.Message = "failure: " + d.Message
			}
			devs = append(devs, d.Message)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(rp.Handler())
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		client := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		cs.Close()
		cancel()
		srv.Close()
		mu.Lock()
		got := strings.Join(devs, "\n")
		mu.Unlock()
		if want := "1 message(s) of the recorded server still waiting for a GET stream (none was open), first notification notifications/tools/list_changed"; !strings.Contains(got, want) || strings.Contains(got, "failure:") {
			t.Errorf("strict %v: deviations %q, want one that says %q, and no failure", strict, got, want)
		}
	}
}
