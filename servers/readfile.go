package servers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mcpx-dev/mcpx/internal/userfile"
)

// maxFileSize bounds every file the package reads: definition files,
// envFiles, ${file:PATH}, mcpx's own file and the trust store. The
// largest of them in practice, Claude Code's ~/.claude.json (which also
// keeps per-project history), stays well below it.
const maxFileSize = 128 << 20

// ErrNotRegular is the error (wrapped in an *fs.PathError) for a path
// that is not a regular file: a named pipe would block the read forever
// and a device such as /dev/zero never ends, and a repository can ship a
// project file as a symbolic link to either.
var ErrNotRegular = errors.New("is not a regular file")

// ErrTooLarge is the error (wrapped in an *fs.PathError) for a file
// larger than the package reads (128 MiB): reading it whole would take
// memory without bound.
var ErrTooLarge = fmt.Errorf("is larger than %d MiB", maxFileSize>>20)

// readFile reads the regular file name whole, as os.ReadFile does but
// bounded: anything else (a directory, a FIFO, a device, whatever a link
// points to) is refused before it is opened, and more than maxFileSize
// bytes is an error.
func readFile(name string) ([]byte, error) { return readBounded(name) }

// readValueFile is readFile for the files whose content becomes values
// when a server is started (envFile, ${file:PATH}): a named pipe is read
// too, since secret managers hand out .env files so (1Password mounts
// one as a FIFO that it fills once the read is authorized). A device is
// still refused. Definition files are read while listing, where waiting
// on a pipe nobody writes would hang mcpx, and git cannot hold a FIFO.
//
// The wait for a pipe's writer ends with ctx (Ctrl-C): opening a FIFO
// waits for a writer, and reading it for the writer's data, neither of
// which could be interrupted (mcpx hung on a pipe nobody wrote, deaf to
// Ctrl-C), see userfile.Read. When the writer has not opened the pipe
// within a second, env.OnWait is told.
func readValueFile(ctx context.Context, env *Env, name string) ([]byte, error) {
	if _, ok := env.fs().(osFS); !ok {
		return env.fs().ReadFile(name)
	}
	fi, err := os.Stat(name)
	if err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
		b, err := userfile.Read(ctx, name, maxFileSize, env.OnWait)
		var tooLarge *userfile.TooLargeError
		if errors.As(err, &tooLarge) {
			err = &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
		}
		return b, err
	}
	return readBounded(name)
}

func readBounded(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := regular(name, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(name, f)
}

// readOpen reads the file f opened as name, whole and bounded.
func readOpen(name string, f *os.File) ([]byte, error) {
	// What was opened may not be what was looked at.
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(name, fi); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(int(fi.Size()) + bytes.MinRead) // one allocation when the size is right
	_, err = b.ReadFrom(io.LimitReader(f, maxFileSize+1))
	data := b.Bytes()
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if len(data) > maxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	return data, nil
}

func regular(name string, fi fs.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		if fi.Size() > maxFileSize {
			return &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
		}
		return nil
	case fi.IsDir():
		return &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
}
