package transport

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// lineReader splits a byte stream into frames, one per newline-terminated
// line (the stdio framing), in its own goroutine. A frame is the line
// exactly as read, without its newline; a last line without one is a
// frame too. A line longer than the maximum message size is read past,
// holding none of it but its first bytes (LineReader.SkipLong), and
// queued in its place as a *SkippedMessageError, which read turns into
// the loss of the request it answers when its id is found (see
// LossReporter), into the error answer of a request of the server's (see
// DropReporter), or into a note for the person (anything else); without
// a LossReporter listener, into the end of the stream with a
// *FrameTooLargeError: a caller that cannot fail one request must not
// wait forever for its answer.
type lineReader struct {
	frames  chan lineItem
	ahead   *readAhead    // bounds the bytes queued in frames
	done    chan struct{} // closed when the stream ended or failed
	err     error         // why it ended; set before done is closed
	closing <-chan struct{}

	mu        sync.Mutex
	onLost    func(id string, err error)                    // see LossReporter
	onDropped func(id jsonrpc.ID, method string, err error) // see DropReporter
	note      func(kind EventKind, text string)             // tells of a dropped message
	fatal     error                                         // set by read when a skipped line ended the stream
	// attributed: the line being dropped answers a request, which was
	// failed with it; its end needs no note (read's goroutine only).
	attributed bool
}

// lineItem is a queued line, or (skipped set) the line over the limit
// that was dropped in its place.
type lineItem struct {
	f       Frame
	skipped *SkippedMessageError
}

// startLineReader reads r until it ends or closing is closed. Lines may be
// limit bytes long (zero: DefaultMaxMessageSize); what names a line in the
// error about a longer one. end turns the error that ended the stream
// (io.EOF at its normal end) into the error Read reports after the last
// frame; a *FrameTooLargeError is reported as it is.
func startLineReader(r io.Reader, limit int64, what string, closing <-chan struct{}, end func(error) error) *lineReader {
	l := &lineReader{frames: make(chan lineItem, 16), ahead: newReadAhead(limit), done: make(chan struct{}), closing: closing}
	go func() {
		defer close(l.done)
		lr := NewLineReader(r, limit, what)
		lr.SkipLong()
		for {
			if !l.ahead.wait(closing) {
				l.err = ErrClosed
				return
			}
			line, _, err := lr.ReadLine()
			var sk *SkippedMessageError
			if errors.As(err, &sk) {
				select {
				case l.frames <- lineItem{skipped: sk}:
					continue
				case <-closing:
					l.err = ErrClosed
					return
				}
			}
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
			case l.frames <- lineItem{f: Frame{Data: line}}:
			case <-closing:
				l.err = ErrClosed
				return
			}
		}
	}()
	return l
}

// setOnLost registers the LossReporter listener.
func (l *lineReader) setOnLost(fn func(id string, err error)) {
	l.mu.Lock()
	l.onLost = fn
	l.mu.Unlock()
}

// setOnDropped registers the DropReporter listener.
func (l *lineReader) setOnDropped(fn func(id jsonrpc.ID, method string, err error)) {
	l.mu.Lock()
	l.onDropped = fn
	l.mu.Unlock()
}

// read returns the next frame; after the last one, the error that ended
// the stream, or ErrClosed once closing is closed. A line dropped for its
// size is reported as the type says (see lineReader), in its place among
// the frames.
func (l *lineReader) read(ctx context.Context) (Frame, error) {
	for {
		if l.fatal != nil {
			return Frame{}, l.fatal
		}
		it, err := l.next(ctx)
		if err != nil {
			return Frame{}, err
		}
		if it.skipped == nil {
			l.ahead.take(len(it.f.Data))
			return it.f, nil
		}
		l.mu.Lock()
		onLost, onDropped, note := l.onLost, l.onDropped, l.note
		l.mu.Unlock()
		sk := it.skipped
		if onLost == nil {
			l.fatal = &FrameTooLargeError{What: sk.What, Limit: sk.Limit}
			continue
		}
		sk.report(&l.attributed, note, onLost, onDropped)
	}
}

func (l *lineReader) next(ctx context.Context) (lineItem, error) {
	select {
	case it := <-l.frames:
		return it, nil
	default:
	}
	select {
	case it := <-l.frames:
		return it, nil
	case <-l.done:
		// Frames queued before the end come first.
		select {
		case it := <-l.frames:
			return it, nil
		default:
		}
		return lineItem{}, l.err
	case <-l.closing:
		return lineItem{}, ErrClosed
	case <-ctx.Done():
		return lineItem{}, ctx.Err()
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
