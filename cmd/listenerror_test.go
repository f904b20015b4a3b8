package cmd

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// --listen's advice for an address in use or not of this machine is
// given for the error each system reports: Windows' are Winsock's codes.
func TestListenErrorAdvice(t *testing.T) {
	t.Parallel()
	op := func(errno syscall.Errno) error {
		return &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError("bind", errno)}
	}
	for _, c := range []struct {
		goos string
		err  error
		want string
	}{
		{"linux", op(syscall.EADDRINUSE), "the address is in use"},
		{"windows", op(10048), "the address is in use"},
		{"windows", op(10049), "no network interface of this machine has that address"},
		{"darwin", op(syscall.EADDRNOTAVAIL), "no network interface of this machine has that address"},
		{"linux", op(10048), "listen tcp: bind: errno 10048"},
	} {
		e := &listenError{addr: "127.0.0.1:8080", err: c.err}
		if got := e.message(c.goos); !strings.HasPrefix(got, "--listen 127.0.0.1:8080: "+c.want) {
			t.Errorf("%s, %v: %q", c.goos, c.err, got)
		}
	}
}
