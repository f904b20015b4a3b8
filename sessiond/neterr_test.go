package sessiond

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// A stale socket is recognised by the error each system gives for it:
// Windows' Winsock codes are not the syscall package's ECONNREFUSED and
// EADDRINUSE there.
func TestSocketErrors(t *testing.T) {
	op := func(op string, errno syscall.Errno) error {
		return &net.OpError{Op: op, Net: "unix", Err: os.NewSyscallError(op, errno)}
	}
	for _, c := range []struct {
		goos          string
		err           error
		refused, used bool
	}{
		{"linux", op("dial", syscall.ECONNREFUSED), true, false},
		{"darwin", op("dial", syscall.ECONNREFUSED), true, false},
		{"windows", op("connectex", 10061), true, false},
		{"linux", op("connect", 10061), false, false},
		{"linux", op("bind", syscall.EADDRINUSE), false, true},
		{"windows", op("bind", 10048), false, true},
		{"windows", op("connectex", 10060), false, false}, // WSAETIMEDOUT
		{"linux", op("dial", syscall.ENOENT), false, false},
	} {
		if got := refusedOn(c.goos, c.err); got != c.refused {
			t.Errorf("%s: refused(%v) = %v", c.goos, c.err, got)
		}
		if got := addrInUseOn(c.goos, c.err); got != c.used {
			t.Errorf("%s: addrInUse(%v) = %v", c.goos, c.err, got)
		}
	}
}
