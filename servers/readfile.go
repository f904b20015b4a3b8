package servers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
func readFile(name string) ([]byte, error) {
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
	// What was opened may not be what was looked at.
	if fi, err = f.Stat(); err != nil {
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
