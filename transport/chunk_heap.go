//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package transport

// allocChunk returns an empty buffer of capacity size for a message being
// assembled. (Where memory can be mapped, chunks live outside the Go heap;
// see chunk_mmap.go.)
func allocChunk(size int) (buf []byte, mapped bool) { return make([]byte, 0, size), false }

// freeChunk releases a buffer from allocChunk.
func freeChunk([]byte, bool) {}
