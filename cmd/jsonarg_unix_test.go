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
	readEndsWithContext(t, func(ctx context.Context) error {
		_, err := readJSONArg(ctx, "params", "@"+fifo, argSource{stdin: strings.NewReader(""), limit: 1 << 20})
		return err
	})
}

// TestReadJSONArgFIFOSaysItWaits: @fifo is read as every file the user
// names is (userfile.Read): after a second without a writer the person is
// told (onWait), and the context ends the wait.
func TestReadJSONArgFIFOSaysItWaits(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "args.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	told := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := readJSONArg(ctx, "params", "@"+fifo, argSource{stdin: strings.NewReader(""), limit: 1 << 20, onWait: func(name string) { told <- name }})
		done <- err
	}()
	select {
	case name := <-told:
		if name != fifo {
			t.Errorf("told of %q, want %q", name, fifo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait for the pipe's writer was never told")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want one that wraps context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end with its context")
	}
}
