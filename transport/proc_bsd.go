//go:build unix && !linux && !freebsd

package transport

import "syscall"

// setParentDeathSignal is a no-op where the kernel offers no parent-death
// signal (macOS, OpenBSD, NetBSD): if mcpx is killed without running its
// shutdown, the server only sees end-of-file on its stdin. README.md says
// so.
func setParentDeathSignal(*syscall.SysProcAttr) {}
