//go:build !windows

package transport

import (
	"context"
	"errors"
	"net"
)

// pipeProblem is why a pipe:// URL cannot be used here: named pipes are
// Windows's.
const pipeProblem = "named pipes (pipe://) are Windows-only"

// dialPipe is never called where pipeProblem is set: ParseEndpoint
// refuses the URL.
func dialPipe(context.Context, string) (net.Conn, error) {
	return nil, errors.New(pipeProblem)
}

// socketPath is the path of a unix:// URL as the system names the
// socket: as written.
func socketPath(p string) string { return p }
