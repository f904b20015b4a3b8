//go:build unix

package cmd

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadJSONArgFIFOHonoursContext: @fifo without a writer waits in the
// open; the context ends the wait (before, only SIGKILL did).
func TestReadJSONArgFIFOHonoursContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "args.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := readJSONArg(ctx, "params", "@"+fifo, strings.NewReader(""), 1<<20)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read of a FIFO without a writer did not end with its context")
	}
}
