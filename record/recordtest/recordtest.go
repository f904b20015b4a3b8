// Package recordtest checks MCP servers and clients against recorded
// traces from `go test`. It is a thin layer over package record that
// reports through testing.TB and lives as long as the test (t.Context).
//
// A server author records a session once (mcpx tools call ... --record
// testdata/session.jsonl -- ./server, or the Recorder API), checks the
// trace in, and verifies the server against it on every run:
//
//	func TestServerMatchesTrace(t *testing.T) {
//		recordtest.VerifyStdio(t, "testdata/session.jsonl", transport.StdioOptions{Command: "./server"}, record.VerifyOptions{})
//	}
//
// A client author serves the recording as a mock server:
//
//	conn := recordtest.Replay(t, "testdata/session.jsonl", record.ReplayOptions{Strict: true})
package recordtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"

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
// conn and fails the test with a readable diff for everything that
// differs from the recording, every difference of every session (see
// record.Verify). The trace's first session is verified on conn, the
// others on connections opts.Dial opens. It closes conn and returns the
// result; the test stops (t.Fatalf) only when the trace cannot be read or
// a connection cannot be opened.
func Verify(t testing.TB, file string, conn transport.Conn, opts record.VerifyOptions) *record.VerifyResult {
	t.Helper()
	return verify(t, file, conn, opts)
}

func verify(t testing.TB, file string, conn transport.Conn, opts record.VerifyOptions) *record.VerifyResult {
	t.Helper()
	tf, err := record.OpenTrace(file)
	if err != nil {
		t.Fatalf("reading the trace: %v", err)
	}
	defer tf.Close()
	for _, w := range tf.Warnings {
		t.Logf("%s: %s", file, w)
	}
	if conn != nil {
		defer conn.Close()
	}
	res, err := record.VerifySessions(t.Context(), tf, conn, opts)
	if res != nil && !res.OK() {
		t.Errorf("the server does not match %s:\n%s", file, Report(res))
	}
	if err != nil {
		t.Fatalf("verifying against %s: %v", file, err)
	}
	return res
}

// VerifyStdio verifies the server described by server against the trace
// in file (see Verify), launching it anew for each session of the trace
// and shutting it down at the end of the session.
func VerifyStdio(t testing.TB, file string, server transport.StdioOptions, opts record.VerifyOptions) *record.VerifyResult {
	t.Helper()
	opts.Dial = func(context.Context, int, record.SessionInfo) (transport.Conn, error) {
		conn, err := transport.StartStdio(server)
		if err != nil {
			return nil, fmt.Errorf("starting the server: %w", err)
		}
		return conn, nil
	}
	return verify(t, file, nil, opts)
}

// Replay serves the server recorded in file for a client under test and
// returns the client's end of an in-memory connection. Without an
// OnDeviation of opts, each departure from the recording fails the test
// with t.Errorf when opts.Strict is set, and is logged otherwise. The
// replay ends with the test.
func Replay(t testing.TB, file string, opts record.ReplayOptions) transport.Conn {
	t.Helper()
	tr := Read(t, file)
	if opts.OnDeviation == nil {
		opts.OnDeviation = func(d record.Deviation) {
			if opts.Strict {
				t.Errorf("replay of %s: %s", file, d.Message)
			} else {
				t.Logf("replay of %s: %s", file, d.Message)
			}
		}
	}
	rp, err := record.NewReplayer(tr, opts)
	if err != nil {
		t.Fatalf("replaying %s: %v", file, err)
	}
	conn, done := rp.ServePipe(t.Context())
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	return conn
}

// Report is the plain-text account of a verification a test prints: each
// mismatch with its session and exchange and its differences, each with
// its path (and the message it is in, when it is not the response), then
// the summary. Values the server sent are quoted when they hold
// characters a log should not carry raw.
func Report(res *record.VerifyResult) string {
	var b strings.Builder
	for _, m := range res.Mismatches {
		fmt.Fprintf(&b, "✗ %s: %s\n", printable(m.Where(true)), printable(m.Problem))
		for _, d := range m.Diffs {
			at := d.Path
			if d.Message != "" {
				at = d.Message + " " + d.Path
			}
			fmt.Fprintf(&b, "    %s\n      - recorded: %s\n      + live:     %s\n", printable(at), orAbsent(d.Recorded), orAbsent(d.Live))
		}
		if m.MoreDiffs > 0 {
			fmt.Fprintf(&b, "    … and %d more difference(s)\n", m.MoreDiffs)
		}
	}
	b.WriteString(res.Summary())
	return b.String()
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return printable(v)
}

// printable returns s, or s quoted when it holds control or invisible
// characters.
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsGraphic(r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}
