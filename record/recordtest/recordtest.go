// Package recordtest checks MCP servers and clients against recorded
// traces from `go test`. It is a thin layer over package record that
// reports through *testing.T.
//
// A server author records a session once (mcpx tools call ... --record
// testdata/session.jsonl -- ./server, or the Recorder API), checks the
// trace in, and verifies the server against it on every run:
//
//	func TestServerMatchesTrace(t *testing.T) {
//		recordtest.VerifyStdio(t, "testdata/session.jsonl", transport.StdioOptions{Command: "./server"})
//	}
package recordtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

// Read reads a trace, failing the test when it cannot.
func Read(t testing.TB, file string) *record.Trace {
	t.Helper()
	tr, err := record.ReadFile(file)
	if err != nil {
		t.Fatalf("reading the trace: %v", err)
	}
	for _, w := range tr.Warnings {
		t.Logf("%s: %s", file, w)
	}
	return tr
}

// Verify re-sends the client side of the trace in file to the server on
// conn and fails the test with a readable diff for every response that
// differs from the recorded one. It closes conn and returns the result.
func Verify(t testing.TB, file string, conn transport.Conn, opts record.VerifyOptions) *record.VerifyResult {
	t.Helper()
	tr := Read(t, file)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := record.Verify(ctx, tr, conn, opts)
	if err != nil {
		t.Fatalf("verifying against %s: %v", file, err)
	}
	if !res.OK() {
		var b strings.Builder
		res.WriteReport(&b, false)
		t.Errorf("the server does not match %s:\n%s", file, b.String())
	}
	return res
}

// VerifyStdio launches the server described by server and verifies it
// against the trace in file (see Verify). The server is shut down at the
// end.
func VerifyStdio(t testing.TB, file string, server transport.StdioOptions, opts ...record.VerifyOptions) *record.VerifyResult {
	t.Helper()
	conn, err := transport.StartStdio(server)
	if err != nil {
		t.Fatalf("starting the server: %v", err)
	}
	var o record.VerifyOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return Verify(t, file, conn, o)
}

// Replay serves the server recorded in file for a client under test and
// returns the client's end of an in-memory connection. Each departure from
// the recording is reported with t.Errorf when strict is true, logged
// otherwise. The replay ends with the test.
func Replay(t testing.TB, file string, strict bool) transport.Conn {
	t.Helper()
	tr := Read(t, file)
	rp, err := record.NewReplayer(tr, record.ReplayOptions{
		Strict: strict,
		OnDeviation: func(d record.Deviation) {
			if strict {
				t.Errorf("replay of %s: %s", file, d.Message)
			} else {
				t.Logf("replay of %s: %s", file, d.Message)
			}
		},
	})
	if err != nil {
		t.Fatalf("replaying %s: %v", file, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn, done := rp.ServePipe(ctx)
	t.Cleanup(func() {
		conn.Close()
		<-done
		cancel()
	})
	return conn
}
