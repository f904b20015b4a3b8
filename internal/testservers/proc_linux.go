package testservers

import "syscall"

// dieWithParent has the kernel kill the server when the test process
// dies (a fuzz worker killed by its coordinator, a test binary killed at
// its timeout), so that no server outlives the tests that started it.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
