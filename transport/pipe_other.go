//go:build !unix

package transport

import (
	"io"
	"os"
)

// newPipeIO returns f: raw system calls are for Unix pipes (pipe_unix.go).
func newPipeIO(f *os.File) io.ReadWriter { return f }
