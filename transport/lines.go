package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
)

// lineReader splits a byte stream into frames, one per newline-terminated
// line (the stdio framing), in its own goroutine and with no size limit
// short of memory. A frame is the line exactly as read, without its
// newline; a last line without one is a frame too.
type lineReader struct {
	frames  chan Frame
	done    chan struct{} // closed when the stream ended or failed
	err     error         // why it ended; set before done is closed
	closing <-chan struct{}
}

// startLineReader reads r until it ends or closing is closed. end turns the
// error that ended the stream (io.EOF at its normal end) into the error
// Read reports after the last frame.
func startLineReader(r io.Reader, closing <-chan struct{}, end func(error) error) *lineReader {
	l := &lineReader{frames: make(chan Frame, 16), done: make(chan struct{}), closing: closing}
	go func() {
		defer close(l.done)
		br := bufio.NewReaderSize(r, 64*1024)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				select {
				case l.frames <- Frame{Data: bytes.TrimSuffix(line, []byte("\n"))}:
				case <-closing:
					l.err = ErrClosed
					return
				}
			}
			if err != nil {
				l.err = end(err)
				return
			}
		}
	}()
	return l
}

// read returns the next frame; after the last one, the error that ended
// the stream, or ErrClosed once closing is closed.
func (l *lineReader) read(ctx context.Context) (Frame, error) {
	select {
	case f := <-l.frames:
		return f, nil
	default:
	}
	select {
	case f := <-l.frames:
		return f, nil
	case <-l.done:
		// Frames queued before the end come first.
		select {
		case f := <-l.frames:
			return f, nil
		default:
		}
		return Frame{}, l.err
	case <-l.closing:
		return Frame{}, ErrClosed
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
}

// frameLine returns f's bytes followed by the newline that ends a frame.
func frameLine(f Frame) []byte {
	buf := make([]byte, 0, len(f.Data)+1)
	return append(append(buf, f.Data...), '\n')
}

// errNewline is returned for a frame that stdio framing cannot carry.
var errNewline = errors.New("frame contains a newline, which stdio framing forbids")
