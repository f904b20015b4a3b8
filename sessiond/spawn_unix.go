//go:build unix

package sessiond

import (
	"os"
	"syscall"
)

// detachedAttr starts the session process in a session of its own, away
// from the terminal's signals.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// terminate asks the session process to end as Ctrl-C would.
func terminate(p *os.Process) { _ = p.Signal(syscall.SIGTERM) }

// redirectStderr makes f the process's standard error (file descriptor
// 2), closing the parent's pipe.
func redirectStderr(f *os.File) error { return dup2(int(f.Fd()), 2) }

// detachStdout points standard output and input at the null device,
// closing the parent's pipe.
func detachStdout() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	if err := dup2(int(null.Fd()), 1); err != nil {
		return err
	}
	return dup2(int(null.Fd()), 0)
}
