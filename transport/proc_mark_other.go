//go:build !linux

package transport

// serverMark returns "" outside Linux: no mark is put in a server's
// environment, because nothing there would look for it (a process's
// environment is read through /proc on Linux alone; on Windows the job
// object holds every descendant already).
func serverMark([]string) string { return "" }
