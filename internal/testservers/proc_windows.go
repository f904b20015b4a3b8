package testservers

import "os/exec"

// newGroup does nothing on Windows: node runs directly (no launcher), so
// killing the process ends the server.
func newGroup(*exec.Cmd) {}

// killGroup kills the server process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
