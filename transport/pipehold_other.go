//go:build !linux

package transport

import (
	"os"
	"time"
)

// endPipeHolders does nothing outside Linux: the processes that hold a
// pipe are found through /proc (pipehold_linux.go). On Windows the job
// object holds every process of the server's tree already.
func endPipeHolders(time.Duration, ...*os.File) {}
