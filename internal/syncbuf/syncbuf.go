// Package syncbuf holds the one concurrency-safe byte buffer that mcpx's
// test streams (cmd.NewTestIOStreams) and the test helpers
// (internal/testwait) share: a program writes to it from several
// goroutines while a test reads it, which a bytes.Buffer does not allow.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent use by writers and readers.
// The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
