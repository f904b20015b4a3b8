package transport

import (
	"context"
	"errors"
	"net"
	"path/filepath"
)

// pipeProblem is why a pipe:// URL cannot be used here.
const pipeProblem = "mcpx does not reach servers over named pipes (pipe://) yet"

// dialPipe is never called while pipeProblem is set: ParseEndpoint
// refuses the URL.
func dialPipe(context.Context, string) (net.Conn, error) {
	return nil, errors.New(pipeProblem)
}

// socketPath is the path of a unix:// URL as Windows names the socket
// (AF_UNIX, Windows 10 and later): unix:///C:/Users/me/s.sock is
// C:\Users\me\s.sock.
func socketPath(p string) string {
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	return filepath.FromSlash(p)
}
