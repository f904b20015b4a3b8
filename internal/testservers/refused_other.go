//go:build !unix

package testservers

import (
	"net"
	"testing"
)

// RefusedAddr returns a loopback address where connections are refused:
// a closed listener's (which a parallel test's listener may take again).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
