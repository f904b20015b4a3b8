//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkEverythingTenCalls measures what a session saves (issue 16):
// ten tool calls to server-everything as ten one-shot commands, each
// starting the server, against ten commands through a session opened
// once with mcpx connect. One op is the ten calls.
//
//	MCPX_NPM_CACHE=… go test ./e2e -run '^$' -bench EverythingTenCalls
func BenchmarkEverythingTenCalls(b *testing.B) {
	node, everything, err := npmPeers()
	if err != nil {
		b.Skip(err)
	}
	mcpx := func(b *testing.B, rt string, args ...string) {
		b.Helper()
		cmd := exec.Command(filepath.Join(binDir, "mcpx"), args...)
		cmd.Env = append(os.Environ(), "NODE="+node, "EVERYTHING="+everything, "XDG_RUNTIME_DIR="+rt)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("mcpx %v: %v\n%s", args, err, out)
		}
	}
	call := []string{"tools", "call", "get-sum", "a=2", "b=3"}
	b.Run("one-shot", func(b *testing.B) {
		for b.Loop() {
			for range 10 {
				mcpx(b, "", append(call, "--", "everything", "stdio")...)
			}
		}
	})
	b.Run("session", func(b *testing.B) {
		rt := b.TempDir()
		mcpx(b, rt, "connect", "bench", "--", "everything", "stdio")
		defer mcpx(b, rt, "disconnect", "bench")
		at := append([]string{"@bench"}, call...)
		for b.Loop() {
			for range 10 {
				mcpx(b, rt, at...)
			}
		}
	})
}
