//go:build linux && race

package transport

import (
	"sync"
	"syscall"
)

// For the race detector, package syscall's Read and Write stand for what
// the kernel passes from a write to the read that gets it (a release
// before each write, an acquire after each read, on one object of its
// own): net's connections and os's files have it, and so must the raw
// reads and writes (rawRead, rawWrite), or a test's HTTP handler that
// reads what the test set before its request is reported as a race. Only
// syscall can touch that object, so in race builds a raw write is preceded
// by an empty write to /dev/null and a raw read followed by an empty read
// of it: each annotates as syscall does.
var devNull = sync.OnceValue(func() int {
	fd, err := syscall.Open("/dev/null", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
})

// ioRelease, before a raw write, makes what the writer did visible to
// the goroutines that read afterwards.
func ioRelease() {
	if fd := devNull(); fd >= 0 {
		_, _ = syscall.Write(fd, nil)
	}
}

// ioAcquire, after a raw read, sees what writers did before their writes.
func ioAcquire() {
	if fd := devNull(); fd >= 0 {
		_, _ = syscall.Read(fd, nil)
	}
}
