//go:build unix

package testservers

import (
	"os/exec"
	"syscall"
)

// newGroup starts cmd in its own process group, so that killGroup ends the
// server together with anything it spawned, and (on Linux) has it killed
// when the test process dies without stopping it.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// killGroup kills the process group newGroup made.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
