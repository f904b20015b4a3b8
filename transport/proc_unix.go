//go:build unix

package transport

import (
	"os"
	"syscall"
)

// procAttr puts the server in its own process group, so that a terminal's
// Ctrl-C reaches mcpx alone (mcpx then cancels and shuts the server down in
// order) and so that the server can be signalled together with its
// children.
func procAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(a)
	return a
}

// startTree returns the process group of the server p, just started with
// procAttr: its process id is the group's id.
func startTree(p *os.Process) (procTree, error) { return processGroup(p.Pid), nil }

// processGroup is a server's process group, by its id.
type processGroup int

func (g processGroup) terminate() { _ = syscall.Kill(-int(g), syscall.SIGTERM) }
func (g processGroup) kill()      { _ = syscall.Kill(-int(g), syscall.SIGKILL) }
func (g processGroup) release()   { g.kill() }
