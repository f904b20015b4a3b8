//go:build unix

package repl

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A history file that is a FIFO is written through and not read: reading
// it waited for a writer, and the REPL never showed its prompt.
func TestHistoryFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	// Someone reads it (else opening it to write would wait, bounded).
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan *Editor, 1)
	go func() {
		ed, _ := NewEditor(Terminal{In: eofReader{}, Out: &screen{}}, EditorOptions{HistoryFile: path})
		done <- ed
	}()
	var ed *Editor
	select {
	case ed = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the editor did not start: it waits for the FIFO")
	}
	defer ed.Close()
	ed.AddHistory("ping")
	b := make([]byte, 16)
	n, _ := r.Read(b)
	if string(b[:n]) != "ping\n" {
		t.Errorf("the FIFO got %q", b[:n])
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
