package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// StreamConn is a Conn over an existing byte stream pair speaking
// newline-delimited frames: the other side of the stdio transport. mcpx
// uses it where it stands in for a server on its own stdin and stdout
// (mcpx replay, the stdio recording proxy). Frames are the lines exactly
// as read, without the newline; Write adds one.
type StreamConn struct {
	w       io.Writer
	writeMu sync.Mutex

	lines *lineReader

	closing   chan struct{}
	closeOnce sync.Once
}

// NewStream returns a Conn reading frames from r and writing them to w,
// with lines of up to DefaultMaxMessageSize bytes (see NewStreamLimit).
func NewStream(r io.Reader, w io.Writer) *StreamConn { return NewStreamLimit(r, w, 0) }

// NewStreamLimit returns a Conn reading frames from r and writing them to
// w. A line longer than maxMessageSize bytes (zero: DefaultMaxMessageSize)
// ends the input with a *FrameTooLargeError. A goroutine reads r until it
// ends; Close does not close r or w (they are usually the process's own
// stdin and stdout), so a Read blocked in r returns only when r ends or
// the process exits.
func NewStreamLimit(r io.Reader, w io.Writer, maxMessageSize int64) *StreamConn {
	c := &StreamConn{w: w, closing: make(chan struct{})}
	c.lines = startLineReader(r, maxMessageSize, "a line on standard input", c.closing, func(err error) error {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("reading frames: %w", err)
	})
	return c
}

// Read returns the next line. At the end of the input it returns io.EOF.
func (c *StreamConn) Read(ctx context.Context) (Frame, error) { return c.lines.read(ctx) }

// Write writes the frame and a newline in one call. Frames must not
// contain a newline.
func (c *StreamConn) Write(ctx context.Context, f Frame) error {
	if bytes.IndexByte(f.Data, '\n') >= 0 {
		return errNewline
	}
	select {
	case <-c.closing:
		return ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := writeLine(c.w, f.Data); err != nil {
		return fmt.Errorf("writing a frame: %w", err)
	}
	return nil
}

// Close stops reading and writing. It is idempotent.
func (c *StreamConn) Close() error {
	c.closeOnce.Do(func() { close(c.closing) })
	return nil
}

// Describe says what the connection is.
func (c *StreamConn) Describe() string { return "stdio (standard input and output)" }
