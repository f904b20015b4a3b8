//go:build !linux

package transport

import (
	"os"
	"time"
)

// watchTerminalStops watches nothing outside Linux (termstop_linux.go):
// there a server stopped for using the terminal waits for the request's
// timeout.
func watchTerminalStops(int, func(string)) (unwatch func()) { return func() {} }

// waitPipeEmpty is never called outside Linux: nothing stops a watch.
func waitPipeEmpty(*os.File, time.Duration, <-chan struct{}) {}
