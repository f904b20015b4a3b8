//go:build windows

package sessiond

import (
	"os"
	"syscall"
)

// Process creation flags (winbase.h).
const (
	detachedProcess       = 0x00000008
	createNewProcessGroup = 0x00000200
)

// detachedAttr starts the session process without a console and in a
// process group of its own, away from the console's Ctrl-C.
func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: detachedProcess | createNewProcessGroup}
}

// terminate ends the session process (Windows has no SIGTERM to send).
func terminate(p *os.Process) { _ = p.Kill() }

// redirectStderr closes the parent's pipe; the process's own writes to
// standard error go nowhere from then on (the session's output goes to
// the log through Output).
func redirectStderr(*os.File) error {
	os.Stderr.Close()
	return nil
}

// detachStdout closes the parent's pipe.
func detachStdout() error {
	os.Stdout.Close()
	return nil
}
