//go:build unix || windows

package transport

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// EverythingHTTP is server-everything in both HTTP modes for
// TestEverythingHTTP (in transport_test), started by TestMain as the tests
// begin: that test cannot run in parallel, and so would hold up every
// parallel test while node starts.
var EverythingHTTP *testservers.Early

// The test binary doubles as the stdio server: when helperEnv is set,
// TestMain runs the named behaviour instead of the tests. This gives the
// tests a real child process with exactly the misbehaviour they need.
// The modes are in helper_test.go (Unix) and helper_windows_test.go.
const helperEnv = "MCPX_TRANSPORT_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	// Most parallel tests wait for helper processes and sockets.
	testwait.RaiseParallel(4)
	EverythingHTTP = testservers.EverythingEarly("streamableHttp", "sse")
	code := m.Run()
	EverythingHTTP.Stop()
	os.Exit(code)
}

// helperOptions returns options that run this test binary as a helper.
func helperOptions(t *testing.T, mode string, extraEnv ...string) StdioOptions {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return StdioOptions{
		Command: exe,
		// A race-enabled binary otherwise sleeps a second before exiting.
		Env: append([]string{helperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}, extraEnv...),
	}
}

// startHelper starts a helper and closes it when the test ends.
func startHelper(t *testing.T, opts StdioOptions) *StdioConn {
	t.Helper()
	c, err := StartStdio(opts)
	if err != nil {
		t.Fatalf("StartStdio: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readFrame reads one frame, failing the test if none arrives in time.
func readFrame(t *testing.T, c Conn) Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return f
}

// readEnd reads until Read fails and returns that error; frames before it
// are returned too.
func readEnd(t *testing.T, c Conn) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var frames []string
	for {
		f, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("no end of stream within the bound; got %q so far", frames)
			}
			return frames, err
		}
		frames = append(frames, string(f.Data))
	}
}
