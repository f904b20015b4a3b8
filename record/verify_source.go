package record

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"slices"

	"github.com/mcpx-dev/mcpx/transport"
)

// sessionEvents returns how session n of src was recorded and its events
// (without the session event), in order. A TraceFile's session is read a
// line at a time as the events are consumed, so that verify holds what is
// in flight rather than the session; other sources give the session they
// read.
func sessionEvents(src SessionSource, n int) (SessionInfo, iter.Seq2[Event, error]) {
	switch s := src.(type) {
	case *TraceFile:
		i := slices.IndexFunc(s.Index, func(x SessionIndex) bool { return x.N == n })
		if i < 0 {
			return headerInfo(s.Header), func(func(Event, error) bool) {}
		}
		return s.Index[i].Info, s.streamSession(s.Index[i])
	case *Trace:
		info := headerInfo(s.Header)
		for _, e := range s.Events {
			if max(e.Session, 1) == n && e.Kind == KindSession && e.SessionInfo != nil {
				info = *e.SessionInfo
				break
			}
		}
		return info, func(yield func(Event, error) bool) {
			for _, e := range s.Events {
				if max(e.Session, 1) != n || e.Kind == KindSession {
					continue
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
	sess, err := src.ReadSession(n)
	if err != nil || sess == nil {
		return headerInfo(src.TraceHeader()), func(yield func(Event, error) bool) {
			if err != nil {
				yield(Event{}, err)
			}
		}
	}
	return sess.Info, func(yield func(Event, error) bool) {
		for _, e := range sess.Events {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// SessionEvents returns session n of src without its events (its
// number, Info and Text; nil when src has none) and a sequence of its
// events, in order, that can be ranged over more than once. A
// TraceFile's session is read a line at a time as the events are
// consumed, each range reading it again, so that a program that passes
// over a large session (an export) holds what it keeps of the events,
// not the session; other sources give the session they read.
func SessionEvents(src SessionSource, n int) (*Session, iter.Seq2[Event, error], error) {
	if f, ok := src.(*TraceFile); ok {
		i := slices.IndexFunc(f.Index, func(x SessionIndex) bool { return x.N == n })
		if i < 0 {
			return nil, nil, nil
		}
		x := f.Index[i]
		return &Session{N: n, Info: x.Info, Text: x.Text}, f.streamSession(x), nil
	}
	sess, err := src.ReadSession(n)
	if err != nil || sess == nil {
		return nil, nil, err
	}
	head := *sess
	head.Events = nil
	return &head, func(yield func(Event, error) bool) {
		for _, e := range sess.Events {
			if !yield(e, nil) {
				return
			}
		}
	}, nil
}

// streamSession yields the events of the indexed session x one line at a
// time (TraceFile.Session holds them all). A session of a file changed
// since it was indexed ends in an error where the change shows: a line
// that is no event, or fewer events than the index counted.
func (f *TraceFile) streamSession(x SessionIndex) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for pe, err := range f.placedSession(x) {
			if !yield(pe.Event, err) {
				return
			}
		}
	}
}

// lineRef is where an event is in a trace file: the offset and length of
// its bytes, and their FNV-64a hash, by which a program that reads them
// again (replay, which holds where the recorded server's frames are
// rather than the frames) tells the trace changed since.
type lineRef struct {
	off, n int64
	sum    uint64
}

// placedEvent is an event and where it is in the trace file (a zero at
// for an event not read from a file).
type placedEvent struct {
	Event
	at lineRef
}

// eventLimit is the length of the longest event a session's reading
// reads: the longest message, with room for its envelope.
func (f *TraceFile) eventLimit() int64 {
	limit := f.opts.MaxMessageSize
	if limit <= 0 {
		limit = transport.DefaultMaxMessageSize
	}
	return limit + min(limit, lineSlack)
}

// placedSession is streamSession, with where each event is.
func (f *TraceFile) placedSession(x SessionIndex) iter.Seq2[placedEvent, error] {
	return func(yield func(placedEvent, error) bool) {
		if x.End <= x.Start {
			return
		}
		limit := f.eventLimit()
		read, at := f.linesAt(x.Start, x.End, limit)
		ev := &eventLines{read: read, at: at, stable: f.Header.Stable, limit: limit}
		found := 0 // the session's events read, its session event included
		for {
			line, _, err := ev.next()
			if errors.Is(err, io.EOF) && found != x.Events {
				// The lines that are there are events, but not all
				// the session's were found: the file was cut short or
				// rewritten since it was indexed (an export reads
				// each session twice, a diff three times).
				err = fmt.Errorf("%d of its %d events found: the trace changed since it was indexed", found, x.Events)
			}
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(placedEvent{}, fmt.Errorf("reading session %d: %w", x.N, err))
				return
			}
			if len(bytes.TrimSpace(line)) == 0 || lineSession(line) != x.N {
				continue
			}
			e, err := parseEvent(line)
			if err != nil {
				// Indexed lines parsed before: the file changed since.
				yield(placedEvent{}, fmt.Errorf("reading session %d: %w", x.N, err))
				return
			}
			found++
			if e.Kind == KindSession {
				continue
			}
			if !yield(placedEvent{e, lineRef{off: ev.off, n: int64(len(line)), sum: lineSum(line)}}, nil) {
				return
			}
		}
	}
}

func lineSum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// readEvent reads again the event at ref, which placedSession read
// before: an error when the file no longer holds it there.
func (f *TraceFile) readEvent(ref lineRef) (Event, error) {
	if ref.n > f.eventLimit() {
		return Event{}, fmt.Errorf("reading the event of %d bytes at %d of the trace: %w", ref.n, ref.off, errTraceChanged)
	}
	buf := make([]byte, ref.n)
	if n, err := f.r.ReadAt(buf, ref.off); int64(n) != ref.n {
		if err == nil || errors.Is(err, io.EOF) {
			err = errTraceChanged
		}
		return Event{}, fmt.Errorf("reading the event of %d bytes at %d of the trace: %w", ref.n, ref.off, err)
	}
	if lineSum(buf) != ref.sum {
		return Event{}, fmt.Errorf("reading the event of %d bytes at %d of the trace: %w", ref.n, ref.off, errTraceChanged)
	}
	e, err := parseEvent(buf)
	if err != nil {
		return Event{}, fmt.Errorf("reading the event of %d bytes at %d of the trace: %w", ref.n, ref.off, err)
	}
	return e, nil
}

// errTraceChanged says a trace file no longer holds what was read of it.
var errTraceChanged = errors.New("the trace changed since it was read (it must stay as it is while it is used)")
