package transport

import (
	"context"
	"errors"
	"io"
)

// lineReader splits a byte stream into frames, one per newline-terminated
// line (the stdio framing), in its own goroutine. A frame is the line
// exactly as read, without its newline; a last line without one is a
// frame too. A line longer than the maximum message size ends the stream
// with a *FrameTooLargeError.
type lineReader struct {
	frames  chan Frame
	ahead   *readAhead    // bounds the bytes queued in frames
	done    chan struct{} // closed when the stream ended or failed
	err     error         // why it ended; set before done is closed
	closing <-chan struct{}
}

// startLineReader reads r until it ends or closing is closed. Lines may be
// limit bytes long (zero: DefaultMaxMessageSize); what names a line in the
// error about a longer one. end turns the error that ended the stream
// (io.EOF at its normal end) into the error Read reports after the last
// frame; a *FrameTooLargeError is reported as it is.
func startLineReader(r io.Reader, limit int64, what string, closing <-chan struct{}, end func(error) error) *lineReader {
	l := &lineReader{frames: make(chan Frame, 16), ahead: newReadAhead(limit), done: make(chan struct{}), closing: closing}
	go func() {
		defer close(l.done)
		lr := NewLineReader(r, limit, what)
		for {
			if !l.ahead.wait(closing) {
				l.err = ErrClosed
				return
			}
			line, _, err := lr.ReadLine()
			if err != nil {
				select {
				case <-closing:
					l.err = ErrClosed
					return
				default:
				}
				var tl *FrameTooLargeError
				if errors.As(err, &tl) {
					l.err = err
				} else {
					l.err = end(err)
				}
				return
			}
			l.ahead.add(len(line))
			select {
			case l.frames <- Frame{Data: line}:
			case <-closing:
				l.err = ErrClosed
				return
			}
		}
	}()
	return l
}

// read returns the next frame; after the last one, the error that ended
// the stream, or ErrClosed once closing is closed.
func (l *lineReader) read(ctx context.Context) (Frame, error) {
	f, err := l.next(ctx)
	if err == nil {
		l.ahead.take(len(f.Data))
	}
	return f, err
}

func (l *lineReader) next(ctx context.Context) (Frame, error) {
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

// writeLine writes data and the newline that ends a frame: in one write
// when data is small, else in two, so that a large frame is not copied.
func writeLine(w io.Writer, data []byte) (int, error) {
	if len(data) < 64<<10 {
		buf := make([]byte, 0, len(data)+1)
		return w.Write(append(append(buf, data...), '\n'))
	}
	n, err := w.Write(data)
	if err != nil {
		return n, err
	}
	m, err := w.Write([]byte{'\n'})
	return n + m, err
}

// errNewline is returned for a frame that stdio framing cannot carry.
var errNewline = errors.New("frame contains a newline, which stdio framing forbids")
