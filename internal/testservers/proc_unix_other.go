//go:build unix && !linux

package testservers

import "syscall"

// dieWithParent does nothing where the kernel has no parent-death signal.
func dieWithParent(*syscall.SysProcAttr) {}
