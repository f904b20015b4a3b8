//go:build unix

package userfile

import (
	"os"
	"syscall"
)

// unblockFIFO releases an open of the named pipe name that waits for a
// writer: it opens the pipe for writing without waiting (which succeeds,
// the waiting open being a reader) and closes it, and the reader then
// reads the end of the pipe.
func unblockFIFO(name string) {
	if f, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
