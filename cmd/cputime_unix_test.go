//go:build unix

package cmd

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used
// so far; benchmarks report it per operation, which a machine busy with
// other work disturbs less than the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
