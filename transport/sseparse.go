package transport

import (
	"bufio"
	"bytes"
	"io"
	"math"
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
// retry; a blank line dispatches the event. Lines have no length limit
// short of memory, so a frame of any size arrives whole.
type sseReader struct {
	sc *bufio.Scanner

	lastID string        // the last event id string (set when an event is dispatched)
	idBuf  string        // the last event id buffer (set by each id field)
	retry  time.Duration // the reconnection time the server asked for, 0 if none
	first  bool          // no line read yet (a leading BOM is skipped)

	// The event being assembled.
	typ     string
	data    []byte
	hasData bool
	idSet   bool
}

// newSSEReader reads events from r; lastID is the last event id already
// seen on the logical stream (when resuming it), "" for a new stream.
func newSSEReader(r io.Reader, lastID string) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), math.MaxInt)
	sc.Split(splitSSELines)
	return &sseReader{sc: sc, first: true, lastID: lastID, idBuf: lastID}
}

// LastEventID returns the stream's last event id, for Last-Event-ID.
func (p *sseReader) LastEventID() string { return p.lastID }

// Retry returns the reconnection delay the server set with a retry field,
// or 0 when it set none.
func (p *sseReader) Retry() time.Duration { return p.retry }

// Next returns the next event. Blocks that dispatch nothing (comments, a
// lone retry field, an event with no data field) are consumed silently but
// still update LastEventID and Retry. At the end of the stream it returns
// io.EOF (or the read error); an unterminated last event is discarded, as
// the standard says.
func (p *sseReader) Next() (sseEvent, error) {
	for p.sc.Scan() {
		line := p.sc.Bytes()
		if p.first {
			p.first = false
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) == 0 {
			ev, ok := p.dispatch()
			if ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			p.typ = string(value)
		case "data":
			if p.hasData {
				p.data = append(p.data, '\n')
			}
			p.data = append(p.data, value...)
			p.hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				p.idBuf = string(value)
				p.idSet = true
			}
		case "retry":
			if n, err := strconv.ParseUint(string(value), 10, 31); err == nil && isDigits(value) {
				p.retry = time.Duration(n) * time.Millisecond
			}
		}
	}
	if err := p.sc.Err(); err != nil {
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// dispatch finishes the event being assembled at a blank line. Only then
// does the id become the stream's last event id: an event torn by a broken
// connection must not be skipped when resuming.
func (p *sseReader) dispatch() (sseEvent, bool) {
	p.lastID = p.idBuf
	defer func() {
		p.typ, p.data, p.hasData, p.idSet = "", nil, false, false
	}()
	if !p.hasData {
		return sseEvent{}, false
	}
	typ := p.typ
	if typ == "" {
		typ = "message"
	}
	return sseEvent{Type: typ, Data: p.data, ID: p.lastID, HasID: p.idSet}, true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// splitSSELines is a bufio.SplitFunc for SSE line endings: CRLF, LF or a
// lone CR.
func splitSSELines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A CR: it may be the first half of CRLF.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // need more data to see what follows the CR
	}
	if atEOF {
		// An unterminated last line is not a complete line; return it so the
		// reader sees it, but it never dispatches an event on its own.
		return len(data), data, nil
	}
	return 0, nil, nil
}
