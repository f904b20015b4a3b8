//go:build !linux

package e2e

import (
	"fmt"
	"os"
)

// ptySupported tells the scripts' [pty] condition that ttyrun works here.
const ptySupported = false

// ttyMain is ttyrun, which needs Linux's pseudo-terminals.
func ttyMain() {
	fmt.Fprintln(os.Stderr, "ttyrun: not supported on this system (scripts guard it with [pty])")
	os.Exit(2)
}
