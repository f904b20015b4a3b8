package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
)

// DefaultMaxMessageSize is the maximum message size used when none is
// set: 256 MiB. A legitimate frame of 100 MiB passes with room to spare,
// while a peer that never ends a line or an event cannot make mcpx buffer
// without bound.
const DefaultMaxMessageSize int64 = 256 << 20

// ErrFrameTooLarge is matched (with errors.Is) by every error about a
// message longer than the maximum message size: a stdio line, an SSE
// event or line, an HTTP body, a trace line. The error is
// *FrameTooLargeError, which names the limit.
var ErrFrameTooLarge = errors.New("message exceeds the maximum message size")

// FrameTooLargeError reports a message that exceeds the maximum message
// size. It is detected while reading: no more than the limit plus a
// buffer's worth was held when reading stopped.
type FrameTooLargeError struct {
	// What names the message ("a line the server wrote on stdout", "an
	// SSE event", "the HTTP response body", "trace line 3").
	What string
	// Limit is the maximum message size in bytes.
	Limit int64
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("%s exceeds the maximum message size (%s)", e.What, FormatSize(e.Limit))
}

// Is makes errors.Is(err, ErrFrameTooLarge) true.
func (e *FrameTooLargeError) Is(target error) bool { return target == ErrFrameTooLarge }

// SkippedMessageError reports a message longer than the maximum message
// size that is being read past and dropped, the input going on after it.
// It matches ErrFrameTooLarge. Reading it holds no more than the limit:
// the message's first bytes (Prefix, at most skipPrefix of them), for
// showing what it was, and what a memberScanner reading all of it finds
// (its JSON-RPC id and method, wherever they are: see info) are all that
// is kept.
//
// A reader reports it as soon as the limit is passed, so that what waits
// for the message need not wait for its end (a line that never ends would
// never be reported); Whole is then false and Size what was read so far.
// Once the message ended, the reader reports it again with End set, Whole
// set and its whole Size (for the record of what was dropped). A message
// whose end was already in sight when the limit was passed is reported
// once, Whole, without End.
type SkippedMessageError struct {
	// What names the message, as for FrameTooLargeError.
	What string
	// Size is the message's length in bytes (without its delimiter), or
	// what was read of it so far when Whole is false.
	Size int64
	// Whole says Size is the message's whole length.
	Whole bool
	// End marks the second report of a message, at its end.
	End bool
	// Limit is the maximum message size in bytes.
	Limit int64
	// Prefix is the message's first bytes.
	Prefix []byte
	// Field, when set, is why an SSE event is dropped rather than its
	// size: an id, event or retry field longer than the parser takes
	// (Size is then the size of its data). It is what Unwrap returns.
	Field *SSEFieldTooLongError

	// found is what the reader found in the message (memberScanner) in
	// the Size bytes read of it when it reported e; nil: only Prefix
	// tells (see info).
	found *prefixInfo
}

func (e *SkippedMessageError) Error() string {
	if e.Field != nil {
		return fmt.Sprintf("%s was dropped: %v", e.What, e.Field)
	}
	if !e.Whole {
		return fmt.Sprintf("%s exceeds the maximum message size (%s)", e.What, FormatSize(e.Limit))
	}
	return fmt.Sprintf("%s (%s) exceeds the maximum message size (%s)", e.What, FormatSize(e.Size), FormatSize(e.Limit))
}

// Is makes errors.Is(err, ErrFrameTooLarge) true.
func (e *SkippedMessageError) Is(target error) bool { return target == ErrFrameTooLarge }

// Unwrap returns Field, when set.
func (e *SkippedMessageError) Unwrap() error {
	if e.Field == nil {
		return nil
	}
	return e.Field
}

// ended returns the report of e at the end of its message, size bytes
// long, in which scan found found.
func (e *SkippedMessageError) ended(size int64, found prefixInfo) *SkippedMessageError {
	return &SkippedMessageError{What: e.What, Size: size, Whole: true, End: true, Limit: e.Limit, Prefix: e.Prefix, Field: e.Field, found: &found}
}

// skipPrefix is how many first bytes of a skipped message are kept, to
// show what it was.
const skipPrefix = 4 << 10

// scan feeds what b holds to s.
func (b *frameBuffer) scan(s *memberScanner) {
	s.write(b.first)
	for i := range b.chunks {
		s.write(b.chunks[i].b)
	}
}

// keepPrefix returns a copy of the first skipPrefix bytes (at most the
// limit) of what b holds followed by tail.
func (b *frameBuffer) keepPrefix(tail []byte) []byte {
	n := min(int64(skipPrefix), b.limit, b.n+int64(len(tail)))
	out := make([]byte, 0, n)
	out = append(out, b.first[:min(len(b.first), int(n))]...)
	for i := 0; i < len(b.chunks) && len(out) < int(n); i++ {
		c := b.chunks[i].b
		out = append(out, c[:min(len(c), int(n)-len(out))]...)
	}
	if len(out) < int(n) {
		out = append(out, tail[:int(n)-len(out)]...)
	}
	return out
}

// FormatSize renders a byte count exactly: in KiB, MiB or GiB when it is a
// whole number of them ("256 MiB"), else in bytes ("256000000 bytes").
func FormatSize(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// maxSize returns limit, or DefaultMaxMessageSize when it is not positive.
func maxSize(limit int64) int64 {
	if limit <= 0 {
		return DefaultMaxMessageSize
	}
	return limit
}

// frameBuffer collects one message read in pieces, refusing to hold more
// than a limit, and hands it out as one slice of exactly its length.
// Pieces go into a small first chunk, kept for the next message, then into
// chunks of growing size (up to maxChunk) that live outside the Go heap
// where the system allows (allocChunk): each is released as soon as it is
// copied out, so assembling a message of n bytes costs about n bytes, not
// the 2n of a buffer grown by doubling or of chunks left to the garbage
// collector. Reset (or Bytes) must be called before a frameBuffer holding
// data is dropped.
type frameBuffer struct {
	limit  int64
	first  []byte
	chunks []chunk
	n      int64
}

// chunk is a buffer from allocChunk.
type chunk struct {
	b      []byte
	mapped bool
}

const (
	firstChunk = 16 << 10
	maxChunk   = 1 << 20
)

// Len returns the number of bytes collected.
func (b *frameBuffer) Len() int64 { return b.n }

// fits reports whether n more bytes stay within the limit.
func (b *frameBuffer) fits(n int) bool { return b.n+int64(n) <= b.limit }

// Write appends p. It reports false, keeping nothing of p, when that would
// exceed the limit.
func (b *frameBuffer) Write(p []byte) bool {
	if !b.fits(len(p)) {
		return false
	}
	b.n += int64(len(p))
	if len(b.chunks) == 0 {
		// The first chunk grows as append grows it: most frames are
		// small, and a 16 KiB buffer for each was a fifth of what an
		// HTTP tool call allocated.
		m := min(len(p), firstChunk-len(b.first))
		b.first = append(b.first, p[:m]...)
		p = p[m:]
	}
	for len(p) > 0 {
		if k := len(b.chunks); k == 0 || len(b.chunks[k-1].b) == cap(b.chunks[k-1].b) {
			size := 4 * firstChunk
			if k > 0 {
				size = min(2*cap(b.chunks[k-1].b), maxChunk)
			}
			c, mapped := allocChunk(size)
			b.chunks = append(b.chunks, chunk{c, mapped})
		}
		c := &b.chunks[len(b.chunks)-1].b
		m := min(len(p), cap(*c)-len(*c))
		*c = append(*c, p[:m]...)
		p = p[m:]
	}
	return true
}

// Bytes returns what was collected, followed by tail, in a new slice of
// exactly that length, and empties b.
func (b *frameBuffer) Bytes(tail []byte) []byte {
	out := make([]byte, 0, b.n+int64(len(tail)))
	out = append(out, b.first...)
	for i := range b.chunks {
		out = append(out, b.chunks[i].b...)
		freeChunk(b.chunks[i].b, b.chunks[i].mapped)
		b.chunks[i] = chunk{}
	}
	out = append(out, tail...)
	b.chunks = b.chunks[:0]
	b.Reset()
	return out
}

// Reset empties b, releasing its chunks.
func (b *frameBuffer) Reset() {
	for i := range b.chunks {
		freeChunk(b.chunks[i].b, b.chunks[i].mapped)
		b.chunks[i] = chunk{}
	}
	b.chunks = b.chunks[:0]
	b.first = b.first[:0]
	b.n = 0
}

// LineReader reads newline-terminated lines (the framing of stdio and of
// trace files) of bounded length. Each line comes in a slice of its own of
// exactly its length, so a large line costs about twice its size while it
// is read and its size afterwards.
type LineReader struct {
	br    *bufio.Reader
	limit int64
	what  string
	buf   frameBuffer
	err   error // what ends the input, returned after the last line
	skip  bool  // a line over the limit is skipped (SkipLong)
	// dropping is the line over the limit being read past, reported
	// before its end; scan reads it as it goes.
	dropping *SkippedMessageError
	scan     memberScanner
}

// SkipLong makes ReadLine read past a line longer than the limit, holding
// none of it but its first bytes. It returns a *SkippedMessageError for
// it as soon as the limit is passed; when the line's end was not in
// sight then, the next call reads up to it, counting, and returns the
// line's second report (End set); the call after that returns the next
// line.
func (l *LineReader) SkipLong() { l.skip = true }

// NewLineReader reads lines from r; a line (without its newline) longer
// than limit bytes is an error. A limit of zero or less means
// DefaultMaxMessageSize. what names a line in that error ("a line the
// server wrote on stdout").
func NewLineReader(r io.Reader, limit int64, what string) *LineReader {
	limit = maxSize(limit)
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), limit: limit, what: what, buf: frameBuffer{limit: limit}}
}

// Limit returns the maximum line length in bytes.
func (l *LineReader) Limit() int64 { return l.limit }

// ReadLine returns the next line without its newline (a carriage return
// before it is kept). ended is false for a last line the input ended
// without a newline (or a read error interrupted). After the last line it
// returns io.EOF, or the read error. A line longer than the limit returns
// a *FrameTooLargeError as soon as the limit is passed, without reading
// the rest; every later call returns it too (but see SkipLong).
func (l *LineReader) ReadLine() (line []byte, ended bool, err error) {
	if l.dropping != nil {
		return l.dropRest()
	}
	if l.err != nil {
		return nil, false, l.err
	}
	for {
		frag, err := l.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !l.buf.Write(frag) {
				if l.skip {
					return l.skipLine(frag, false)
				}
				return nil, false, l.tooLarge()
			}
			continue
		}
		if err == nil {
			frag = frag[:len(frag)-1]
		} else if len(frag) == 0 && l.buf.Len() == 0 {
			l.err = err
			return nil, false, err
		} else {
			l.err = err // after this last line
		}
		if !l.buf.fits(len(frag)) {
			if l.skip {
				return l.skipLine(frag, err == nil)
			}
			return nil, false, l.tooLarge()
		}
		return l.buf.Bytes(frag), err == nil, nil
	}
}

// skipLine starts dropping the line being read, over the limit: what was
// collected and frag, its next piece (ended when it ended the line).
func (l *LineReader) skipLine(frag []byte, ended bool) ([]byte, bool, error) {
	e := &SkippedMessageError{What: l.what, Limit: l.limit, Prefix: l.buf.keepPrefix(frag), Size: l.buf.Len() + int64(len(frag))}
	l.scan = memberScanner{}
	l.buf.scan(&l.scan)
	l.scan.write(frag)
	found := l.scan.info()
	e.found = &found
	l.buf.Reset()
	if ended || l.err != nil {
		e.Whole = true
		return nil, ended, e
	}
	l.dropping = e
	return nil, false, e
}

// dropRest reads the rest of the line being dropped through the bufio
// buffer, counting it, never holding it, and returns its second report.
func (l *LineReader) dropRest() ([]byte, bool, error) {
	e := l.dropping
	l.dropping = nil
	size, ended := e.Size, false
	for !ended && l.err == nil {
		frag, err := l.br.ReadSlice('\n')
		switch {
		case err == nil:
			frag = frag[:len(frag)-1]
			ended = true
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			l.err = err // after this line
		}
		size += int64(len(frag))
		l.scan.write(frag)
	}
	found := l.scan.info()
	l.scan = memberScanner{}
	return nil, ended, e.ended(size, found)
}

func (l *LineReader) tooLarge() error {
	l.err = &FrameTooLargeError{What: l.what, Limit: l.limit}
	l.buf.Reset()
	return l.err
}

// declaredUpfront is the largest declared body length ReadBody allocates
// before the body arrives; a longer one grows as its bytes come.
const declaredUpfront = 1 << 20

// ReadBody reads a whole HTTP body of at most limit bytes (zero or less:
// DefaultMaxMessageSize) into a slice of exactly its length. length is the
// body's declared length (Content-Length), -1 when unknown: a declared
// length over the limit is refused before anything is read. A known
// length up to 1 MiB is read into one allocation; a longer one is not
// taken on trust: the slice grows (doubling, to the declared length) as
// the bytes arrive, so that a peer declaring a large Content-Length and
// sending a byte makes mcpx hold about what it sent, not what it
// declared. A body over the limit returns a *FrameTooLargeError naming
// what as soon as the limit is passed. On a read error it returns what
// arrived with the error.
func ReadBody(r io.Reader, length, limit int64, what string) ([]byte, error) {
	limit = maxSize(limit)
	if length > limit {
		return nil, &FrameTooLargeError{What: what, Limit: limit}
	}
	if length >= 0 {
		buf := make([]byte, 0, min(length, declaredUpfront))
		for int64(len(buf)) < length {
			if len(buf) == cap(buf) {
				buf = append(make([]byte, 0, min(2*int64(cap(buf)), length)), buf...)
			}
			n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				err = io.ErrUnexpectedEOF // as one io.ReadFull of the whole would say
			}
			if err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	b := frameBuffer{limit: limit}
	defer b.Reset()
	tooLarge, err := b.readFrom(r)
	if tooLarge {
		return nil, &FrameTooLargeError{What: what, Limit: limit}
	}
	return b.Bytes(nil), err
}

// readFrom reads r to its end (io.EOF, which is not returned) or its
// first error into b, straight into b's buffers. A body of unknown length
// was read through a 32 KiB scratch array, a heap allocation of its own
// (it escapes through r.Read), and copied from there: each byte was
// written twice before Bytes copied it out, and each such body allocated
// 40 KiB to read 4 (issue 13). It reports tooLarge as soon as more than
// the limit arrived.
func (b *frameBuffer) readFrom(r io.Reader) (tooLarge bool, err error) {
	for {
		buf := b.spare()
		// One byte past the limit is enough to know it is passed.
		if room := b.limit - b.n + 1; int64(len(buf)) > room {
			buf = buf[:room]
		}
		n, err := r.Read(buf)
		b.extend(n)
		if b.n > b.limit {
			return true, nil
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// spare returns the room left in b's last buffer, after making some: a
// first buffer of firstChunk bytes (reads fill it as they come: growing it
// as Write does would copy and touch more memory, not less), then chunks
// as Write adds them.
func (b *frameBuffer) spare() []byte {
	if len(b.chunks) == 0 {
		if len(b.first) < cap(b.first) {
			return b.first[len(b.first):cap(b.first)]
		}
		if cap(b.first) == 0 {
			b.first = make([]byte, 0, firstChunk)
			return b.first
		}
	}
	k := len(b.chunks)
	if k == 0 || len(b.chunks[k-1].b) == cap(b.chunks[k-1].b) {
		size := 4 * firstChunk
		if k > 0 {
			size = min(2*cap(b.chunks[k-1].b), maxChunk)
		}
		c, mapped := allocChunk(size)
		b.chunks = append(b.chunks, chunk{c, mapped})
	}
	last := b.chunks[len(b.chunks)-1].b
	return last[len(last):cap(last)]
}

// extend takes the first n bytes of the room spare returned as written.
func (b *frameBuffer) extend(n int) {
	b.n += int64(n)
	if len(b.chunks) == 0 {
		b.first = b.first[:len(b.first)+n]
		return
	}
	last := &b.chunks[len(b.chunks)-1].b
	*last = (*last)[:len(*last)+n]
}

// readAhead bounds the bytes of frames read ahead of the one consuming
// them (a connection's queue of incoming frames): the producer waits while
// the queue holds max bytes or more, so a peer sending large frames faster
// than they are handled cannot make the queue hold more than about twice
// the maximum message size.
type readAhead struct {
	max    int64
	queued atomic.Int64
	freed  chan struct{}
}

func newReadAhead(max int64) *readAhead {
	return &readAhead{max: maxSize(max), freed: make(chan struct{}, 1)}
}

// wait blocks while max bytes or more are queued; it reports false when
// done is closed first.
func (r *readAhead) wait(done <-chan struct{}) bool {
	for r.queued.Load() >= r.max {
		select {
		case <-r.freed:
		case <-done:
			return false
		}
	}
	return true
}

// add counts a frame of n bytes as queued.
func (r *readAhead) add(n int) { r.queued.Add(int64(n)) }

// take counts a frame of n bytes as consumed.
func (r *readAhead) take(n int) {
	r.queued.Add(-int64(n))
	select {
	case r.freed <- struct{}{}:
	default:
	}
}
