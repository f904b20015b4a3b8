//go:build unix

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// alive reports whether pid is a live process (a zombie has ended: it only
// waits to be reaped by whoever inherited it). A zombie whose other
// threads are still exiting is alive: a killed Go program's main thread
// becomes a zombie first, and its files — a session's listening socket —
// are closed by the last thread that exits (a client that connected
// meanwhile got "connection reset" instead of "refused").
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		// Without /proc, trust kill; with it, the process just went away.
		_, noProc := os.Stat("/proc/self/stat")
		return noProc != nil
	}
	// The state follows the parenthesised command name; the number of
	// threads is the 18th field after it (proc(5): num_threads).
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return true
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 18 || string(f[0]) != "Z" {
		return true
	}
	return string(f[17]) != "1"
}
