package cmd

import (
	"io"
	"sync"
	"time"
)

// batchOut holds what a script's lines write to a standard output that is
// not a terminal and writes it in batches: when the REPL is about to wait
// for more of the script, before anything goes to standard error (so that
// the two keep their order where they meet), when batchSize bytes are
// held, at most batchDelay after the first byte is held (a slow command's
// echo and the notifications that arrive meanwhile still show promptly),
// and at the end. C's stdio buffers such an output the same way. Each
// write is a system call, and the first one after mcpx was idle wakes the
// Go runtime's monitor thread, which then polls every 20 µs while mcpx
// works. With the stdio transport's raw pipe I/O (transport/pipe_linux.go),
// which keeps the server's pipes from waking it, this took a quarter off a
// REPL tool call's CPU (issue 13); either alone saves little, as the
// other's system calls still wake the monitor.
type batchOut struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	timer  *time.Timer
	armed  bool // the timer will flush
	closed bool
}

const (
	batchSize  = 64 << 10
	batchDelay = 50 * time.Millisecond
)

func newBatchOut(w io.Writer) *batchOut {
	b := &batchOut{w: w}
	b.timer = time.AfterFunc(time.Hour, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.armed = false
		_ = b.flushLocked() // a failed write is the output writer's to report
	})
	b.timer.Stop()
	return b
}

func (b *batchOut) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.w.Write(p)
	}
	if len(b.buf)+len(p) > batchSize {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) >= batchSize {
			return b.w.Write(p)
		}
	}
	b.buf = append(b.buf, p...)
	if !b.armed {
		b.armed = true
		b.timer.Reset(batchDelay)
	}
	return len(p), nil
}

// Flush writes what is held.
func (b *batchOut) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *batchOut) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// Close writes what is held; later writes go straight through.
func (b *batchOut) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.timer.Stop()
	return b.flushLocked()
}

// flushingWriter writes to w after flushing out: standard error's writes
// come after what standard output held before them.
type flushingWriter struct {
	w   io.Writer
	out *batchOut
}

func (f flushingWriter) Write(p []byte) (int, error) {
	_ = f.out.Flush()
	return f.w.Write(p)
}
