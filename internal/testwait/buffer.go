package testwait

import (
	"bytes"
	"sync"
)

// Buffer collects output that one goroutine writes (a program under test,
// a terminal's screen) while the test reads it, as For polls: a
// bytes.Buffer is not safe for that. The zero value is ready to use.
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
