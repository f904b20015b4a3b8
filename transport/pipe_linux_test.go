package transport

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// The raw pipe I/O behaves as the file's: bytes through whole, EOF when
// the other end closes, a write deadline that ends a blocked write, a
// close that ends a blocked read.
func TestPipeIO(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	pr, pw := newPipeIO(r), newPipeIO(w)
	if _, ok := pr.(*pipeIO); !ok {
		t.Fatalf("newPipeIO(os.Pipe's reader) = %T, want raw I/O", pr)
	}

	// More than a pipe holds: the writer waits in the poller for the
	// reader.
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10)
	done := make(chan error, 1)
	go func() {
		_, err := pw.Write(data)
		w.Close()
		done <- err
	}()
	got, err := io.ReadAll(pr)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, len(data))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A write to a full pipe nobody reads ends at its deadline.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	w2.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := newPipeIO(w2).Write(data); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a full pipe: %v, want the deadline", err)
	}

	// Closing the file ends a read that waits.
	read := make(chan error, 1)
	go func() {
		_, err := newPipeIO(r2).Read(make([]byte, 1<<20)) // what the full pipe holds
		if err == nil {
			_, err = newPipeIO(r2).Read(make([]byte, 1))
		}
		read <- err
	}()
	time.AfterFunc(50*time.Millisecond, func() { r2.Close() })
	select {
	case err := <-read:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("read from a closed pipe: %v, want os.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read of a closed pipe still waits")
	}
}

// A descriptor the runtime does not poll keeps the file's own I/O: a raw
// read of it would block the thread.
func TestPipeIOBlockingFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rw := newPipeIO(f); rw != io.ReadWriter(f) {
		t.Fatalf("newPipeIO(a regular file) = %T, want the file", rw)
	}
}
