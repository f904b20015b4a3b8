//go:build unix

package record

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// TestReadNamedPipe: a trace to read must be a regular file. A named pipe
// is refused at once, without opening it (which would wait for a writer
// for ever), by both readers, with an error that names it and says what
// it is.
func TestReadNamedPipe(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "f.jsonl")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, read := range []struct {
		what string
		read func() error
	}{
		{"ReadFile", func() error { _, err := ReadFile(name); return err }},
		{"OpenTrace", func() error { _, err := OpenTrace(name); return err }},
	} {
		done := make(chan error, 1)
		go func() { done <- read.read() }()
		var err error
		testwait.For(t, read.what+" of a named pipe to return", func() bool {
			select {
			case err = <-done:
				return true
			default:
				return false
			}
		})
		var nr *NotRegularError
		if want := name + " is not a regular file (a named pipe): give a trace file"; err == nil || err.Error() != want || !errors.As(err, &nr) {
			t.Errorf("%s: %v, want %q", read.what, err, want)
		}
		if strings.Contains(err.Error(), "directory") || errors.Is(err, syscall.EISDIR) {
			t.Errorf("%s: %v is about a directory", read.what, err)
		}
	}
}

// A trace that cannot be opened is said as one that does not exist is:
// its name and why, without the system call ("open t.jsonl: permission
// denied" before).
func TestUnreadableTraceNamesIt(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	name := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(name, []byte("{}\n"), 0o200); err != nil {
		t.Fatal(err)
	}
	_, err := OpenTrace(name)
	if err == nil || err.Error() != name+": permission denied" || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("OpenTrace = %v, want %q", err, name+": permission denied")
	}
}

// TestRecordFullDiskNamesIt: a trace whose header cannot be written (a
// full disk, here /dev/full) is an error naming the file, as every other
// failure to write a trace is ("writing the trace header: no space left
// on device" before, for Create and for Append to a file that is no trace
// yet).
func TestRecordFullDiskNamesIt(t *testing.T) {
	t.Parallel()
	if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Skip("no /dev/full")
	}
	want := "/dev/full: writing the trace header: no space left on device"
	for what, rec := range map[string]func() (*Recorder, error){
		"Create": func() (*Recorder, error) {
			return Create(context.Background(), "/dev/full", RecorderOptions{Overwrite: true})
		},
		"Append": func() (*Recorder, error) { return Append(context.Background(), "/dev/full", RecorderOptions{}) },
	} {
		r, err := rec()
		if err == nil {
			r.Close()
		}
		if err == nil || err.Error() != want || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s = %v, want %q (ENOSPC)", what, err, want)
		}
	}
}
