package transport

import (
	"bufio"
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

	frames   chan Frame
	readErr  error
	readDone chan struct{}

	closing   chan struct{}
	closeOnce sync.Once
}

// NewStream returns a Conn reading frames from r and writing them to w.
// A goroutine reads r until it ends; Close does not close r or w (they are
// usually the process's own stdin and stdout), so a Read blocked in r
// returns only when r ends or the process exits.
func NewStream(r io.Reader, w io.Writer) *StreamConn {
	c := &StreamConn{
		w:        w,
		frames:   make(chan Frame, 16),
		readDone: make(chan struct{}),
		closing:  make(chan struct{}),
	}
	go c.readLoop(r)
	return c
}

func (c *StreamConn) readLoop(r io.Reader) {
	defer close(c.readDone)
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte("\n"))
			select {
			case c.frames <- Frame{Data: line}:
			case <-c.closing:
				c.readErr = ErrClosed
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.readErr = io.EOF
			} else {
				c.readErr = fmt.Errorf("reading frames: %w", err)
			}
			return
		}
	}
}

// Read returns the next line. At the end of the input it returns io.EOF.
func (c *StreamConn) Read(ctx context.Context) (Frame, error) {
	select {
	case f := <-c.frames:
		return f, nil
	default:
	}
	select {
	case f := <-c.frames:
		return f, nil
	case <-c.readDone:
		select {
		case f := <-c.frames:
			return f, nil
		default:
		}
		return Frame{}, c.readErr
	case <-c.closing:
		return Frame{}, ErrClosed
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
}

// Write writes the frame and a newline in one call. Frames must not
// contain a newline.
func (c *StreamConn) Write(ctx context.Context, f Frame) error {
	if bytes.IndexByte(f.Data, '\n') >= 0 {
		return errors.New("frame contains a newline, which stdio framing forbids")
	}
	select {
	case <-c.closing:
		return ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := make([]byte, 0, len(f.Data)+1)
	buf = append(append(buf, f.Data...), '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.w.Write(buf); err != nil {
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
