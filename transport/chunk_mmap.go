//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package transport

import "syscall"

// allocChunk returns an empty buffer of capacity size for a message being
// assembled, mapped outside the Go heap so that freeChunk gives it back
// to the system at once: while a message is copied out of its chunks, the
// chunks already copied no longer count, and reading a message of n bytes
// peaks at about n bytes rather than 2n. It falls back to the heap when
// the system refuses.
func allocChunk(size int) (buf []byte, mapped bool) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, 0, size), false
	}
	return b[:0], true
}

// freeChunk releases a buffer from allocChunk; b must not be used after.
func freeChunk(b []byte, mapped bool) {
	if mapped {
		_ = syscall.Munmap(b[:cap(b)])
	}
}
