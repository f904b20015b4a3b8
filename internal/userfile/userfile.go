// Package userfile reads files the user names (a CA bundle, a key, a
// token, an answer file, a script), bounded in size and by a context.
//
// os.ReadFile of such a path made mcpx hang when it named a FIFO nobody
// writes: the open of a named pipe waits for a writer, and the read for
// the writer's data, and neither can be interrupted, so mcpx was deaf to
// Ctrl-C and SIGTERM. Here, what is not a regular file is opened and read
// on a goroutine of its own that the context abandons, and a path to
// something endless (/dev/zero) ends at a bound instead of filling memory.
package userfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// TooLargeError is the error (wrapped in an *fs.PathError) for a file
// that holds more than the caller reads: reading it whole would take
// memory without bound.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	if e.Limit >= 1<<20 && e.Limit%(1<<20) == 0 {
		return fmt.Sprintf("is larger than %d MiB", e.Limit>>20)
	}
	return fmt.Sprintf("is larger than %d bytes", e.Limit)
}

// ErrDirectory is the error (wrapped in an *fs.PathError) for a path that
// names a directory, which Read refuses before opening it.
var ErrDirectory = errors.New("is a directory")

// WaitNote is how long the open of a named pipe waits for its writer
// before the caller's onWait is told (so that the person knows why mcpx
// does nothing, and that Ctrl-C stops it).
const WaitNote = time.Second

// Read reads the file name whole, at most limit bytes (more is a
// *TooLargeError). A regular file is read as os.ReadFile does; a
// directory is refused (ErrDirectory). Anything else — a named pipe, a
// terminal, /dev/stdin — is opened and read on a goroutine that ctx
// abandons, so that the wait for a pipe's writer ends with Ctrl-C (the
// error then wraps ctx.Err()). onWait, when not nil, is told the name once
// the open of a named pipe has waited WaitNote for its writer.
func Read(ctx context.Context, name string, limit int64, onWait func(name string)) ([]byte, error) {
	fi, err := os.Stat(name)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		pe.Op = "open" // as os.ReadFile says it: "open NAME: no such file or directory"
	}
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrDirectory}
	case fi.Mode().IsRegular():
		if fi.Size() > limit {
			return nil, &fs.PathError{Op: "read", Path: name, Err: &TooLargeError{limit}}
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readAll(name, f, limit)
	}
	return waitFor(ctx, name, fi, onWait, func(f *os.File) ([]byte, error) {
		defer f.Close()
		return readAll(name, f, limit)
	})
}

// Open opens the file name for reading, as os.Open does, except that the
// open of a named pipe, which waits for the pipe's writer, ends with ctx
// (the error then wraps ctx.Err()); onWait is told as for Read. Reading
// the file is the caller's: closing it ends a read of a pipe.
func Open(ctx context.Context, name string, onWait func(name string)) (*os.File, error) {
	fi, err := os.Stat(name)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(name)
	}
	var kept *os.File
	_, err = waitFor(ctx, name, fi, onWait, func(f *os.File) ([]byte, error) {
		kept = f
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return kept, nil
}

// waitFor opens name (which fi describes) and calls use with the file, on
// a goroutine of its own that ctx abandons: a file already open is closed
// (which ends a read), and an open of a named pipe still waiting for a
// writer is released by opening the pipe for writing and closing it at
// once (unblockFIFO). A file opened after ctx ended is closed.
func waitFor(ctx context.Context, name string, fi fs.FileInfo, onWait func(string), use func(*os.File) ([]byte, error)) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, interrupted(name, fi, err)
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	var (
		mu        sync.Mutex
		opened    *os.File
		abandoned bool
	)
	go func() {
		f, err := os.Open(name)
		if err != nil {
			done <- result{err: err}
			return
		}
		mu.Lock()
		if abandoned {
			mu.Unlock()
			f.Close()
			return
		}
		opened = f
		mu.Unlock()
		b, err := use(f)
		done <- result{b, err}
	}()
	note := time.NewTimer(WaitNote)
	defer note.Stop()
	for {
		select {
		case r := <-done:
			return r.b, r.err
		case <-note.C:
			mu.Lock()
			waiting := opened == nil
			mu.Unlock()
			if waiting && onWait != nil && fi.Mode()&fs.ModeNamedPipe != 0 {
				onWait(name)
			}
		case <-ctx.Done():
			select {
			case r := <-done: // (done as ctx ended: the result stands)
				return r.b, r.err
			default:
			}
			mu.Lock()
			abandoned = true
			f := opened
			mu.Unlock()
			if f != nil {
				f.Close()
			} else if fi.Mode()&fs.ModeNamedPipe != 0 {
				unblockFIFO(name)
			}
			return nil, interrupted(name, fi, ctx.Err())
		}
	}
}

func interrupted(name string, fi fs.FileInfo, err error) error {
	if fi.Mode()&fs.ModeNamedPipe != 0 {
		return &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("the named pipe was not written: %w", err)}
	}
	return &fs.PathError{Op: "read", Path: name, Err: err}
}

// readAll reads f, opened as name, whole and up to limit bytes.
func readAll(name string, f *os.File, limit int64) ([]byte, error) {
	var b bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < limit {
		b.Grow(int(fi.Size()) + bytes.MinRead) // one allocation when the size is right
	}
	_, err := b.ReadFrom(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if int64(b.Len()) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: &TooLargeError{limit}}
	}
	return b.Bytes(), nil
}
