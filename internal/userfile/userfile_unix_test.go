//go:build unix

package userfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

func mkfifo(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// noReader says nobody has the pipe name open for reading (an open for
// writing without waiting fails with ENXIO then).
func noReader(name string) func() bool {
	return func() bool {
		f, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			f.Close()
		}
		return errors.Is(err, syscall.ENXIO)
	}
}

func TestReadFIFOWithWriter(t *testing.T) {
	name := mkfifo(t)
	go func() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString("from the pipe")
		f.Close()
	}()
	b, err := Read(context.Background(), name, 100, func(string) {})
	if err != nil || string(b) != "from the pipe" {
		t.Errorf("Read = %q, %v", b, err)
	}
}

func TestReadFIFOBounded(t *testing.T) {
	name := mkfifo(t)
	go func() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString("0123456789")
		f.Close()
	}()
	var tooLarge *TooLargeError
	if _, err := Read(context.Background(), name, 4, nil); !errors.As(err, &tooLarge) {
		t.Errorf("Read: %v", err)
	}
}

// A named pipe nobody writes: the wait ends with the context — before
// the open, while the open waits (once told), and while the read waits —
// and leaves no reader behind.
func TestReadFIFOAbandoned(t *testing.T) {
	name := mkfifo(t)
	until := func(what string, ctx context.Context, onWait func(string), open bool) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			var err error
			if open {
				var f *os.File
				if f, err = Open(ctx, name, onWait); f != nil {
					f.Close()
				}
			} else {
				_, err = Read(ctx, name, 100, onWait)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), name+": the named pipe was not written: context canceled") {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: did not return", what)
		}
		testwait.For(t, what+": the reader gone", noReader(name))
	}
	for _, open := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		until("cancelled before", ctx, nil, open)

		ctx, cancel = context.WithCancel(context.Background())
		var told []string
		until("cancelled while the open waits", ctx, func(p string) { told = append(told, p); cancel() }, open)
		if len(told) != 1 || told[0] != name {
			t.Errorf("onWait told %q, want once %s", told, name)
		}
	}

	// Cancelled while the read waits: the writer opened and writes
	// nothing.
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	go func() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0) // waits for the reader
		cancel()                                    // the reader has opened the pipe
		if err == nil {
			<-held // (the writer's close would end the read)
			f.Close()
		}
	}()
	until("cancelled while the read waits", ctx, nil, false)
	close(held)
}
