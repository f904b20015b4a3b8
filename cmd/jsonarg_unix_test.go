//go:build unix

package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadJSONArgFIFOHonoursContext: @fifo without a writer waits in the
// open; the context ends the wait (before, only SIGKILL did).
func TestReadJSONArgFIFOHonoursContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "args.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	readEndsWithContext(t, func(ctx context.Context) error {
		_, err := readJSONArg(ctx, "params", "@"+fifo, strings.NewReader(""), 1<<20)
		return err
	})
}
