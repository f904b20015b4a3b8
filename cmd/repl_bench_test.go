package cmd

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// BenchmarkREPLLines measures what one line typed in the REPL costs: a
// script of b.N lines runs in one REPL session (in-process, reading the
// script from stdin) against an in-process server over Streamable HTTP,
// so ns/op is the time of one line, from reading it to its result. Issue
// 13 found most of a line's CPU outside the protocol (the command tree
// rebuilt for each line); this keeps that cost visible.
//
//	go test ./cmd -run '^$' -bench REPLLines -benchtime 2000x
func BenchmarkREPLLines(b *testing.B) {
	u := testservers.Streamable(b, testservers.NewServer(), nil, nil)
	for _, tc := range []struct{ name, line string }{
		{"ping", "ping"},
		{"tools-call", "tools call echo message=hi"},
		{"tools-call-args", `tools call echo --args '{"message":"hi"}'`},
		{"help", "help"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ios, _, _ := NewTestIOStreams(nil)
			ios.In = strings.NewReader(strings.Repeat(tc.line+"\n", b.N))
			ios.Out, ios.ErrOut = io.Discard, io.Discard
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			if code := Run(context.Background(), []string{"repl", "--url", u}, ios); code != 0 {
				b.Fatalf("mcpx repl exit %d", code)
			}
			if cpu := processCPU() - cpu; cpu > 0 {
				// The server's share is in it too: it runs in-process.
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			}
		})
	}
}
