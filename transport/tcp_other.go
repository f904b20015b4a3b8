//go:build !linux

package transport

import (
	"context"
	"net"
)

// dialTCP dials as http.DefaultTransport does: raw system calls are for
// Linux (tcp_linux.go).
func dialTCP(ctx context.Context, network, addr string) (net.Conn, error) {
	return defaultDialer.DialContext(ctx, network, addr)
}
