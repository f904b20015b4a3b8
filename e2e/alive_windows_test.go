package e2e

import "golang.org/x/sys/windows"

// alive reports whether pid is a process that has not exited yet.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		// No such process (ERROR_INVALID_PARAMETER), or one we may not
		// look at, which is not the server mcpx started.
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}
