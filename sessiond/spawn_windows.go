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

// redirectStderr makes f the process's standard error, as dup2 does on
// Unix, and closes the parent's pipe. The runtime writes a crash's
// report to the standard handle it asks Windows for at that moment:
// without this, that would be the pipe's handle, closed, and the report
// lost, or written to whatever object has since been given the same
// handle value (a socket to a command, the server's input).
func redirectStderr(f *os.File) error {
	if err := windows.SetStdHandle(windows.STD_ERROR_HANDLE, windows.Handle(f.Fd())); err != nil {
		return err
	}
	os.Stderr.Close()
	return nil
}

// detachStdout closes the parent's pipe.
func detachStdout() error {
	os.Stdout.Close()
	return nil
}
