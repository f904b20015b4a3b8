//go:build unix && !linux

package transport

import "syscall"

// setParentDeathSignal is a no-op where the kernel offers no parent-death
// signal; mcpx's own shutdown paths end the server.
func setParentDeathSignal(*syscall.SysProcAttr) {}
