//go:build linux || freebsd

package transport

import "syscall"

// setParentDeathSignal asks the kernel to SIGKILL the server if mcpx dies
// without running its shutdown (killed with SIGKILL, a crash in a goroutine).
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
