package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// rawTCP is a TCP connection read and written with raw system calls, as
// pipeIO does the stdio server's pipes: net's own Read and Write tell the
// runtime they may block, which wakes its monitor thread after every idle
// moment — a fifth of the CPU of an HTTP REPL script's calls. Everything
// else (deadlines, Close, CloseWrite, ReadFrom) is the TCPConn's, and
// errors read as net's own.
type rawTCP struct {
	*net.TCPConn
	rc syscall.RawConn
}

// dialTCP dials as http.DefaultTransport does, and gives a TCP
// connection raw reads and writes (rawTCP).
func dialTCP(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := defaultDialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	return &rawTCP{TCPConn: tc, rc: rc}, nil
}

func (c *rawTCP) Read(b []byte) (int, error) {
	n, errno, err := rawRead(c.rc, b)
	switch {
	case err != nil || errno != 0:
		return 0, c.opError("read", errno, err)
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawTCP) Write(b []byte) (int, error) {
	n, errno, err := rawWrite(c.rc, b)
	if err != nil || errno != 0 {
		return n, c.opError("write", errno, err)
	}
	return n, nil
}

// opError is the error net's Read or Write would give: the system call's
// error as an os.SyscallError, or the poller's (net.ErrClosed,
// os.ErrDeadlineExceeded) without the raw connection's own wrapping.
func (c *rawTCP) opError(op string, errno syscall.Errno, err error) error {
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) {
			err = oe.Err
		}
	} else {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
