package record

import (
	"bytes"
	"errors"
	"fmt"
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
// time (see TraceFile.Session, which reads them all).
func (f *TraceFile) streamSession(x SessionIndex) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if x.End <= x.Start {
			return
		}
		limit := f.opts.MaxMessageSize
		if limit <= 0 {
			limit = transport.DefaultMaxMessageSize
		}
		ev := &eventLines{read: f.lines(x.Start, x.End, limit+min(limit, lineSlack)), stable: f.Header.Stable, limit: limit + min(limit, lineSlack)}
		for {
			line, _, err := ev.next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Event{}, fmt.Errorf("reading session %d: %w", x.N, err))
				return
			}
			if len(bytes.TrimSpace(line)) == 0 || lineSession(line) != x.N {
				continue
			}
			e, err := parseEvent(line)
			if err != nil {
				// Indexed lines parsed before: the file changed since.
				yield(Event{}, fmt.Errorf("reading session %d: %w", x.N, err))
				return
			}
			if e.Kind == KindSession {
				continue
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}
