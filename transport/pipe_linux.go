package transport

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// pipeIO reads and writes a pipe the Go runtime polls (os.Pipe's, which
// are non-blocking) with raw system calls, waiting in the poller as
// os.File does. A system call made the usual way tells the runtime it may
// block, and the first one after the process was idle wakes the runtime's
// monitor thread, which then polls every 20 µs while mcpx works: a fifth
// of a REPL tool call's CPU (issue 13; the REPL's own writes to stdout are
// batched for the same reason, cmd/batchout.go; HTTP's connections are
// read and written the same way, tcp_linux.go). A read or a write of a
// non-blocking descriptor cannot block, so it needs none of that.
// Deadlines (SetWriteDeadline) and Close work as on the file.
type pipeIO struct {
	f  *os.File
	rc syscall.RawConn
}

// newPipeIO returns f's raw reader and writer, or f itself when f is not
// a non-blocking descriptor the runtime polls.
func newPipeIO(f *os.File) io.ReadWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblocking := false
	if cerr := rc.Control(func(fd uintptr) {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = e == 0 && fl&syscall.O_NONBLOCK != 0
	}); cerr != nil || !nonblocking {
		return f
	}
	return &pipeIO{f: f, rc: rc}
}

func (p *pipeIO) Read(b []byte) (int, error) {
	n, errno, err := rawRead(p.rc, b)
	switch {
	case err != nil:
		return 0, p.fileError("read", err)
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: errno}
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

func (p *pipeIO) Write(b []byte) (int, error) {
	n, errno, err := rawWrite(p.rc, b)
	switch {
	case err != nil:
		return n, p.fileError("write", err)
	case errno != 0:
		return n, &os.PathError{Op: "write", Path: p.f.Name(), Err: errno}
	}
	return n, nil
}

// rawRead reads b from a non-blocking descriptor with one raw system call
// (retried on EINTR), waiting in the poller while there is nothing to
// read: err is the poller's (closed, deadline), errno the call's. n is 0
// at the end of the stream.
func rawRead(rc syscall.RawConn, b []byte) (n int, errno syscall.Errno, err error) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	err = rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			n, errno = int(r), e
			return true
		}
	})
	if err == nil && errno == 0 {
		ioAcquire()
	}
	return n, errno, err
}

// rawWrite writes all of b to a non-blocking descriptor with raw system
// calls, waiting in the poller while it is full; n is what was written.
func rawWrite(rc syscall.RawConn, b []byte) (n int, errno syscall.Errno, err error) {
	ioRelease()
	err = rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait in the poller
			default:
				errno = e
				return true
			}
		}
		return true
	})
	return n, errno, err
}

// fileError is err as the file's Read or Write says it: a closed file's
// is os.ErrClosed (the poller's own error for it is internal).
func (p *pipeIO) fileError(op string, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) && p.rc.Control(func(uintptr) {}) != nil {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: p.f.Name(), Err: err}
}
