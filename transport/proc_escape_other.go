//go:build unix && !linux

package transport

import "syscall"

// escapees is empty outside Linux: without /proc (macOS, the BSDs' is
// optional and differs) mcpx does not look for the server's descendants
// that left its process group. README.md says so.
type escapees struct{}

func newEscapees(int, string) *escapees { return &escapees{} }

func (*escapees) follow(int)            {}
func (*escapees) sweep(int)             {}
func (*escapees) exiting()              {}
func (*escapees) refollow(int)          {}
func (*escapees) signal(syscall.Signal) {}

// ownMark returns "": there is no mark outside Linux.
func ownMark(string) string { return "" }
