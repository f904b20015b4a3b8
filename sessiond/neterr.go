package sessiond

import (
	"errors"
	"runtime"
	"syscall"
)

// Winsock's codes for the errors below (winerror.h). On Windows the
// syscall package's ECONNREFUSED and EADDRINUSE are numbers Go invents,
// which no socket call returns and which errors.Is does not match with
// these, so a stale socket there would never be recognised: mcpx connect
// NAME would fail for good after a session process was killed.
const (
	wsaEADDRINUSE   syscall.Errno = 10048
	wsaECONNREFUSED syscall.Errno = 10061
)

// refused reports whether err is a refused connection: a socket file
// nobody listens on any more.
func refused(err error) bool { return refusedOn(runtime.GOOS, err) }

func refusedOn(goos string, err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || goos == "windows" && errors.Is(err, wsaECONNREFUSED)
}

// addrInUse reports whether err is a listen on a socket file that is
// there already.
func addrInUse(err error) bool { return addrInUseOn(runtime.GOOS, err) }

func addrInUseOn(goos string, err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || goos == "windows" && errors.Is(err, wsaEADDRINUSE)
}
