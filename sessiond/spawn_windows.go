//go:build windows

package sessiond

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// detachedAttr starts the session process with a console of its own that
// has no window, and in a process group of its own: away from the
// terminal's console, so that its Ctrl-C and its closing do not reach
// the session. Not DETACHED_PROCESS, which leaves the process without any
// console: Windows then gives each console program it starts (the
// server, node behind npx.cmd, cmd.exe) a new console window of its own,
// which pops up on the desktop for as long as the session lasts. The
// server inherits the hidden console instead.
func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP}
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
