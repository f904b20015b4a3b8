//go:build unix

package testservers

import (
	"os/exec"
	"syscall"
)

// newGroup starts cmd in its own process group, so that killGroup ends the
// server together with anything it spawned.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group newGroup made.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
