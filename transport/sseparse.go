package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	// Type is the event type ("message" when the stream named none).
	Type string
	// Data is the event's data, its lines joined with "\n", exactly as sent
	// apart from the field syntax. Empty for priming events.
	Data []byte
	// ID is the stream's last event id after this event (it persists across
	// events that carry no id field, as the SSE standard says).
	ID string
	// HasID is true when this event itself carried an id field.
	HasID bool
}

// sseReader parses a text/event-stream body following the WHATWG HTML
// standard, "Interpreting an event stream": lines end in CRLF, LF or CR;
// lines starting with ':' are comments; fields are event, data, id and
// retry; a blank line dispatches the event.
//
// It reads through a fixed buffer and never holds a line whole: data
// field values go straight into the event being assembled, which is
// handed out in a slice of exactly its size. An event's data may be up
// to the maximum message size; a longer one ends the stream with a *FrameTooLargeError once the limit is
// passed. An event, id or retry value longer than maxSSEField (4 KiB)
// ends it with a *SSEFieldTooLongError. (With skipEvents, either drops
// its event instead, and the stream goes on.) Comments and unknown fields are
// skipped whatever their length.
type sseReader struct {
	r     io.Reader
	buf   []byte
	start int   // buf[start:end] is read but not yet parsed
	end   int   //
	rerr  error // the read error (io.EOF at the end), once there is one
	limit int64
	// maxField is the longest id, event or retry value taken:
	// maxSSEField. FuzzSSEReader sets less, so that short inputs reach
	// the limit: inputs of 4 KiB made each new one the fuzzer found
	// take the minimizer its whole time (60 s by default), in which
	// nothing was fuzzed.
	maxField int64

	lastID   string        // the last event id string (set when an event is dispatched)
	idBuf    string        // the last event id buffer (set by each id field)
	retry    time.Duration // the reconnection time the server asked for
	retrySet bool          // a retry field set it (0 is a value: reconnect at once)
	first    bool          // no line read yet (a leading BOM is skipped)
	afterCR  bool          // the last line ended with CR: an LF right after belongs to it

	// The line being parsed.
	lineLen int64  // bytes of the line so far
	name    []byte // its field name so far (only the first maxFieldName+1 bytes)
	state   int    // where in the line the parser is (lineName...)
	field   int    // the field, once its name ended (fieldData...)
	value   []byte // the value of an event, id or retry field

	// The event being assembled.
	typ     string
	data    frameBuffer
	hasData bool
	idSet   bool

	// skipLong: an event whose data is over the limit is read past (see
	// skipEvents); over is the one being read past, report what Next is
	// to return next.
	skipLong bool
	over     *SkippedMessageError
	report   *SkippedMessageError
	scan     memberScanner // reads the data of over as it goes
	// badField, in skipLong mode, is the id, event or retry field too
	// long for which the event being assembled is dropped at its end;
	// dropping is set while the rest of that field's line is read past.
	badField *SSEFieldTooLongError
	dropping bool
}

// skipEvents makes Next read past an event whose data is longer than the
// limit, holding none of it but its first bytes, and return a
// *SkippedMessageError for it as soon as the limit is passed, and another
// (End set, its whole size) at its end, in its place; the stream goes
// on, and the event counts as dispatched (its id becomes the last event
// id: resuming must not send it again).
//
// An id, event or retry field too long (see fieldCap) drops its event
// too, instead of ending the stream: the rest of its line is read past
// and its event's data still collected (within the limit), so that the
// one *SkippedMessageError (Field set) returned at the event's end has
// the data's first bytes, which say which request a dropped response
// answered. A field line that goes on past the limit is reported at
// once, as data over the limit is (then again at the event's end). Such
// an event's id does not become the last event id when the id is what
// is too long: the last one is kept.
func (p *sseReader) skipEvents() { p.skipLong = true }

// fieldCap is the longest id, event or retry value taken: maxSSEField,
// or the maximum message size when that is smaller.
func (p *sseReader) fieldCap() int64 { return min(p.maxField, p.limit) }

// dropField starts reading past the rest of the line of a field too
// long, in skipLong mode: its event is dropped at its end.
func (p *sseReader) dropField() {
	if p.badField == nil {
		p.badField = &SSEFieldTooLongError{Field: string(p.name), Limit: p.fieldCap(), MessageSize: p.limit < p.maxField}
	}
	p.field, p.state, p.dropping = fieldOther, lineSkip, true
	p.value = p.value[:0]
	p.dropLong()
}

// dropLong starts reading past the event being assembled, as overflow
// does, once the line of a field too long passed the limit: its end may
// be far, or never come.
func (p *sseReader) dropLong() {
	if p.over == nil && p.lineLen > p.limit {
		p.overflow(nil)
		p.over.Field = p.badField
		p.report.Field = p.badField
	}
}

// overflow starts reading past the event being assembled: its data so
// far, then b, did not fit.
func (p *sseReader) overflow(b []byte) {
	p.over = &SkippedMessageError{What: "an SSE event", Limit: p.limit, Prefix: p.data.keepPrefix(b), Size: p.data.Len() + int64(len(b))}
	p.scan = memberScanner{}
	p.data.scan(&p.scan)
	p.scan.write(b)
	found := p.scan.info()
	p.over.found = &found
	p.data.Reset()
	first := *p.over
	p.report = &first
}

// Parser states within a line.
const (
	lineName  = iota // reading the field name
	lineSpace        // right after the colon: one space is dropped
	lineValue        // reading the value
	lineSkip         // a comment or an unknown field: skipped
)

// Fields.
const (
	fieldOther = iota
	fieldData
	fieldEvent
	fieldID
	fieldRetry
)

// maxFieldName is longer than any field name the parser knows.
const maxFieldName = 8

// maxSSEField bounds the value of an id, event or retry field, which has
// no business being large: an event id goes back to the server as the
// Last-Event-ID header, an event type is a word, a retry a number of
// milliseconds. Held to the maximum message size, an endless id line
// grew by appending to some 4.5 times that size.
const maxSSEField = 4 << 10

// maxEmptyReads is how many reads in a row may return no bytes and no
// error before the stream ends with io.ErrNoProgress (bufio's figure).
const maxEmptyReads = 100

// SSEFieldTooLongError reports an SSE id, event or retry field longer than
// the parser takes (4 KiB, or the maximum message size when that is
// smaller). It matches ErrFrameTooLarge, so that a stream is not resumed
// only to be sent the same line again.
type SSEFieldTooLongError struct {
	// Field is "id", "event" or "retry".
	Field string
	// Limit is the longest value taken, in bytes.
	Limit int64
	// MessageSize is set when Limit is the maximum message size, smaller
	// than a field's own cap: a larger maximum takes the field.
	MessageSize bool
}

func (e *SSEFieldTooLongError) Error() string {
	if e.MessageSize {
		return fmt.Sprintf("an SSE %s field is longer than the maximum message size (%s)", e.Field, FormatSize(e.Limit))
	}
	return fmt.Sprintf("an SSE %s field is longer than %s, the most mcpx takes for one", e.Field, FormatSize(e.Limit))
}

// Is makes errors.Is(err, ErrFrameTooLarge) true.
func (e *SSEFieldTooLongError) Is(target error) bool { return target == ErrFrameTooLarge }

// newSSEReader reads events from r with events of up to
// DefaultMaxMessageSize bytes; lastID is the last event id already seen on
// the logical stream (when resuming it), "" for a new stream.
func newSSEReader(r io.Reader, lastID string) *sseReader {
	return newSSEReaderLimit(r, lastID, 0)
}

// newSSEReaderLimit is newSSEReader with events of up to limit bytes
// (zero: DefaultMaxMessageSize).
func newSSEReaderLimit(r io.Reader, lastID string, limit int64) *sseReader {
	limit = maxSize(limit)
	return &sseReader{r: r, buf: make([]byte, firstSSERead), limit: limit, maxField: maxSSEField, first: true, lastID: lastID, idBuf: lastID,
		data: frameBuffer{limit: limit}}
}

// LastEventID returns the stream's last event id, for Last-Event-ID.
func (p *sseReader) LastEventID() string { return p.lastID }

// Retry returns the reconnection delay the server set with a retry field,
// and whether it set one: "retry: 0" asks to reconnect at once, which is
// not the same as asking nothing.
func (p *sseReader) Retry() (time.Duration, bool) { return p.retry, p.retrySet }

// maxRetryField is the reconnection time a retry field of more digits
// than fit 31 bits stands for: the standard takes any run of digits, so
// such a value asks for a very long wait (about 24.8 days), which is
// not the same as asking nothing.
const maxRetryField = (1<<31 - 1) * time.Millisecond

// Next returns the next event. Blocks that dispatch nothing (comments, a
// lone retry field, an event with no data field) are consumed silently but
// still update LastEventID and Retry. At the end of the stream it returns
// io.EOF (or the read error); an unterminated last event is discarded, as
// the standard says. After a *FrameTooLargeError it returns that error.
func (p *sseReader) Next() (sseEvent, error) {
	for {
		if r := p.report; r != nil {
			p.report = nil
			return sseEvent{}, r
		}
		if p.start == p.end {
			if p.rerr != nil {
				if p.lineLen > 0 && errors.Is(p.rerr, io.EOF) {
					// An unterminated last line still counts as a line (it
					// never dispatches an event on its own).
					if err := p.endLine(); err != nil {
						return sseEvent{}, err
					}
				}
				// The event being assembled is torn: it is discarded.
				p.data.Reset()
				p.over, p.badField = nil, nil
				return sseEvent{}, p.rerr
			}
			p.fill()
			continue
		}
		b := p.buf[p.start:p.end]
		if p.afterCR {
			p.afterCR = false
			if b[0] == '\n' {
				p.start++
				continue
			}
		}
		// The line ends at the first LF or CR.
		i := bytes.IndexByte(b, '\n')
		head := b
		if i >= 0 {
			head = b[:i]
		}
		if j := bytes.IndexByte(head, '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			p.start = p.end
			if err := p.feed(b); err != nil {
				return sseEvent{}, err
			}
			continue
		}
		p.afterCR = b[i] == '\r'
		p.start += i + 1
		if err := p.feed(b[:i]); err != nil {
			return sseEvent{}, err
		}
		if p.lineLen == 0 {
			if p.over != nil {
				p.lastID = p.idBuf
				p.report = p.over.ended(p.over.Size, p.scan.info())
				p.scan = memberScanner{}
				p.typ, p.hasData, p.idSet, p.over, p.badField = "", false, false, nil, nil
				continue
			}
			if p.badField != nil {
				p.lastID = p.idBuf
				var scan memberScanner
				p.data.scan(&scan)
				found := scan.info()
				p.report = &SkippedMessageError{What: "an SSE event", Limit: p.limit, Field: p.badField,
					Whole: true, Size: p.data.Len(), Prefix: p.data.keepPrefix(nil), found: &found}
				p.data.Reset()
				p.typ, p.hasData, p.idSet, p.badField = "", false, false, nil
				continue
			}
			if ev, ok := p.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := p.endLine(); err != nil {
			return sseEvent{}, err
		}
	}
}

// The read buffer starts small, for the one short event most streams
// carry (a response to one request: a buffer of 32 KiB for each was most
// of what an HTTP tool call allocated), and doubles up to maxSSERead while
// reads fill it.
const (
	firstSSERead = 2 << 10
	maxSSERead   = 32 << 10
)

// fill reads more of the stream into the empty buffer; a leading BOM is
// dropped. A read error is kept for when the buffer is parsed.
func (p *sseReader) fill() {
	if p.end == len(p.buf) && len(p.buf) < maxSSERead {
		p.buf = make([]byte, 2*len(p.buf))
	}
	p.start, p.end = 0, 0
	// A reader that keeps returning nothing and no error would hold this
	// loop for ever: as bufio does, it ends after maxEmptyReads.
	for empty := 0; p.end == 0 && p.rerr == nil; empty++ {
		if empty == maxEmptyReads {
			p.rerr = io.ErrNoProgress
			break
		}
		n, err := p.r.Read(p.buf)
		p.end = n
		if err != nil {
			p.rerr = err
		}
	}
	if p.first && p.end > 0 {
		// The BOM may arrive split across reads.
		for empty := 0; p.end < 3 && p.rerr == nil && bytes.HasPrefix([]byte("\xef\xbb\xbf"), p.buf[:p.end]); empty++ {
			if empty == maxEmptyReads {
				p.rerr = io.ErrNoProgress
				break
			}
			n, err := p.r.Read(p.buf[p.end:])
			p.end += n
			if n > 0 {
				empty = -1
			}
			if err != nil {
				p.rerr = err
			}
		}
		p.first = false
		if bytes.HasPrefix(p.buf[:p.end], []byte("\xef\xbb\xbf")) {
			p.start = 3
		}
	}
}

// feed parses a piece of the current line (without its line ending).
func (p *sseReader) feed(b []byte) error {
	for len(b) > 0 {
		switch p.state {
		case lineName:
			if p.lineLen == 0 && b[0] == ':' {
				p.state = lineSkip // a comment
				p.lineLen += int64(len(b))
				return nil
			}
			i := bytes.IndexByte(b, ':')
			part := b
			if i >= 0 {
				part = b[:i]
			}
			if len(p.name) <= maxFieldName {
				p.name = append(p.name, part[:min(len(part), maxFieldName+1-len(p.name))]...)
			}
			p.lineLen += int64(len(part))
			if i < 0 {
				return nil
			}
			p.lineLen++
			b = b[i+1:]
			p.state = lineSpace
			if err := p.beginValue(); err != nil {
				return err
			}
		case lineSpace:
			p.state = lineValue
			if b[0] == ' ' {
				p.lineLen++
				b = b[1:]
			}
		case lineValue:
			p.lineLen += int64(len(b))
			switch p.field {
			case fieldData:
				switch {
				case p.over != nil:
					p.over.Size += int64(len(b))
					p.scan.write(b)
				case !p.data.Write(b):
					if !p.skipLong {
						return p.tooLarge("an SSE event")
					}
					p.overflow(b)
				}
			case fieldEvent, fieldID, fieldRetry:
				switch n := int64(len(p.value) + len(b)); {
				case n > p.fieldCap() && p.skipLong:
					p.dropField()
					return nil
				case n > p.limit:
					return p.tooLarge("an SSE line")
				case n > p.maxField:
					return p.fieldTooLong()
				}
				p.value = append(p.value, b...)
			}
			return nil
		case lineSkip:
			p.lineLen += int64(len(b))
			if p.dropping {
				p.dropLong()
			}
			return nil
		}
	}
	return nil
}

func (p *sseReader) tooLarge(what string) error {
	err := &FrameTooLargeError{What: what, Limit: p.limit}
	p.rerr, p.start, p.end = err, 0, 0
	p.lineLen, p.value = 0, nil
	p.data.Reset()
	return err
}

func (p *sseReader) fieldTooLong() error {
	err := &SSEFieldTooLongError{Field: string(p.name), Limit: p.maxField}
	p.rerr, p.start, p.end = err, 0, 0
	p.lineLen, p.value = 0, nil
	p.data.Reset()
	return err
}

// beginValue is called when the field name of a line ended: it picks the
// field, and for a data field adds the LF that joins it to earlier ones.
func (p *sseReader) beginValue() error {
	switch string(p.name) {
	case "data":
		p.field = fieldData
		switch {
		case !p.hasData:
		case p.over != nil:
			p.over.Size++
			p.scan.write([]byte("\n"))
		case !p.data.Write([]byte("\n")):
			if !p.skipLong {
				return p.tooLarge("an SSE event")
			}
			p.overflow([]byte("\n"))
		}
		p.hasData = true
	case "event":
		p.field = fieldEvent
	case "id":
		p.field = fieldID
	case "retry":
		p.field = fieldRetry
	default:
		p.field = fieldOther
		p.state = lineSkip
	}
	return nil
}

// endLine processes the field of a line that ended (not a blank one).
func (p *sseReader) endLine() error {
	if p.state == lineName {
		// A line without a colon: the whole line is the field name, the
		// value is empty.
		if err := p.beginValue(); err != nil {
			return err
		}
	}
	value := p.value
	switch p.field {
	case fieldEvent:
		p.typ = string(value)
	case fieldID:
		if bytes.IndexByte(value, 0) < 0 {
			p.idBuf = string(value)
			p.idSet = true
		}
	case fieldRetry:
		if isDigits(value) {
			// Only digits: the standard sets the reconnection time to
			// that many milliseconds, however many there are.
			p.retry, p.retrySet = maxRetryField, true
			if n, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				p.retry = time.Duration(n) * time.Millisecond
			}
		}
	}
	p.lineLen, p.name, p.state, p.field, p.dropping = 0, p.name[:0], lineName, fieldOther, false
	if cap(p.value) > 4<<10 {
		p.value = nil
	} else {
		p.value = p.value[:0]
	}
	return nil
}

// dispatch finishes the event being assembled at a blank line. Only then
// does the id become the stream's last event id: an event torn by a broken
// connection must not be skipped when resuming.
func (p *sseReader) dispatch() (sseEvent, bool) {
	p.lastID = p.idBuf
	defer func() {
		p.typ, p.hasData, p.idSet = "", false, false
		p.data.Reset()
	}()
	if !p.hasData {
		return sseEvent{}, false
	}
	typ := p.typ
	if typ == "" {
		typ = "message"
	}
	var data []byte
	if p.data.Len() > 0 {
		data = p.data.Bytes(nil)
	}
	return sseEvent{Type: typ, Data: data, ID: p.lastID, HasID: p.idSet}, true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
