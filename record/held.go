package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/transport"
)

// A held recording (RecorderOptions.Stable or Replace) is kept in memory
// while the session runs and written whole, with the sessions it keeps
// from the old trace, when the recorder is closed: through a temporary
// file that takes the trace's place only once it is complete, so that an
// interrupted or failed recording leaves the old trace as it was.

// createHeld makes a recorder that holds its recording for name. With
// appendTo, the recording is added to the trace the file holds when the
// recorder is closed (read then, so that recordings of one process that
// overlap in time each add their sessions); without, it replaces the file:
// the file was (base, not nil) as base describes it, which it must still
// be then (UpdateTrace: another process may have recorded into it
// meanwhile; ErrChanged), or (base nil) it must not be a trace by then
// unless o.Overwrite is set (ErrExists).
func createHeld(ctx context.Context, name string, o RecorderOptions, appendTo bool, base fs.FileInfo) (*Recorder, error) {
	r, h, err := prepare(o)
	if err != nil {
		return nil, err
	}
	check := func() (*Trace, error) {
		if !appendTo {
			return nil, nil
		}
		old, err := readOld(name)
		if err != nil || old == nil {
			return nil, err
		}
		if err := checkRewrite(old.Header); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if oh := old.Header; oh.Redacted != h.Redacted || !sameSet(oh.Redact, h.Redact) {
			return nil, fmt.Errorf("%s: %w", name, &RedactionMismatchError{Trace: oh.Redacted, TracePaths: oh.Redact, Want: h.Redacted, WantPaths: h.Redact})
		}
		red, err := reRedactor(old.Header, h)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if red != nil {
			rr := red.reRedaction()
			for i, e := range old.Events {
				old.Events[i] = rr.event(e)
			}
			old.Header.RedactRules = h.RedactRules
		}
		return old, nil
	}
	if old, err := check(); err != nil {
		return nil, err
	} else if old != nil {
		for _, n := range old.SessionNumbers() {
			r.base = max(r.base, n)
		}
	}
	f, err := outfile.Create(ctx, name, outfile.Options{Perm: 0o600})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var buf bytes.Buffer
	if _, err := newWriter(&buf, h); err != nil {
		f.Abort()
		return nil, err
	}
	r.w = &buf
	drop := ""
	if o.Replace {
		drop = o.Session.Name
	}
	r.close = func(wrote bool) error {
		// Called by Close with r.mu held.
		if !wrote || r.err != nil {
			f.Abort()
			return nil
		}
		defer lockFile(name)()
		// Holding the trace's lock against other processes too: they
		// neither write into the trace read here, nor replace it.
		lk := newTraceLock(name)
		defer lk.close()
		if err := lk.lock(context.Background()); err != nil {
			f.Abort()
			return err
		}
		if !appendTo {
			cur, err := os.Stat(name)
			switch {
			case base != nil && (err != nil || !os.SameFile(cur, base) || cur.Size() != base.Size() || !cur.ModTime().Equal(base.ModTime())):
				f.Abort()
				return fmt.Errorf("%s %w", name, ErrChanged)
			case base == nil && !o.Overwrite && err == nil && cur.Mode().IsRegular() && cur.Size() > 0:
				f.Abort()
				return fmt.Errorf("%s: %w", name, ErrExists)
			}
		}
		old, err := check()
		if err != nil {
			f.Abort()
			return err
		}
		rec, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			f.Abort()
			return fmt.Errorf("%s: reading the recording back: %w", name, err)
		}
		src := mergeTraces(old, rec, o.Replace, drop)
		if o.Stable || old != nil && old.Header.Stable {
			err = WriteStable(f, src)
		} else {
			err = writeSessions(f, src)
		}
		if err != nil {
			f.Abort()
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	return r, nil
}

// heldFiles serializes the writing of held recordings to each file
// within the process: each reads the trace, adds its sessions and puts
// the result in place.
var heldFiles sync.Map // absolute file name -> *sync.Mutex

func lockFile(name string) (unlock func()) {
	if abs, err := filepath.Abs(name); err == nil {
		name = abs
	}
	mu, _ := heldFiles.LoadOrStore(name, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// readOld reads the trace in name for a held recording to add to: nil
// when there is none (no file, an empty one, or not a regular file).
func readOld(name string) (*Trace, error) {
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case !fi.Mode().IsRegular() || fi.Size() == 0:
		return nil, nil
	}
	return ReadOptions{MaxMessageSize: 1 << 62}.ReadFile(name)
}

// isStable reports whether name holds a stable trace (by its header). A
// file that is no regular file (a FIFO, whose open would wait for a
// writer) holds none.
func isStable(name string) bool {
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	line, _, err := transport.NewLineReader(f, 64<<10, "").ReadLine()
	if err != nil {
		return false
	}
	var h Header
	return json.Unmarshal(line, &h) == nil && h.Format == Format && h.Stable
}

// sessionList is a SessionSource of sessions in memory.
type sessionList struct {
	h  Header
	ss []*Session
}

func (l *sessionList) TraceHeader() Header { return l.h }

func (l *sessionList) SessionNumbers() []int {
	ns := make([]int, len(l.ss))
	for i, s := range l.ss {
		ns[i] = s.N
	}
	return ns
}

func (l *sessionList) ReadSession(n int) (*Session, error) {
	for _, s := range l.ss {
		if s.N == n {
			return s, nil
		}
	}
	return nil, nil
}

// mergeTraces returns old's sessions (without those named drop when
// replace is set) followed by rec's, numbered anew from 1, under old's
// header with rec's ignores and normalizers added.
func mergeTraces(old, rec *Trace, replace bool, drop string) *sessionList {
	l := &sessionList{h: rec.Header}
	var ss []*Session
	if old != nil {
		l.h = old.Header
		l.h.Ignore = union(old.Header.Ignore, rec.Header.Ignore)
		l.h.Normalize = unionNormalizers(old.Header.Normalize, rec.Header.Normalize)
		for _, s := range old.Sessions() {
			if replace && s.Info.Name == drop {
				continue
			}
			ss = append(ss, s)
		}
	}
	for _, s := range rec.Sessions() {
		if len(s.Events) > 0 || s.Text != "" {
			ss = append(ss, s)
		}
	}
	for i, s := range ss {
		c := *s
		c.N = i + 1
		l.ss = append(l.ss, &c)
	}
	return l
}

// writeSessions writes the sessions of src one after the other, as an
// ordinary trace (minor 2) with the times they were recorded with.
func writeSessions(w io.Writer, src SessionSource) error {
	h := src.TraceHeader()
	h.Minor = Minor
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	tw, err := newWriterAs(w, h)
	if err != nil {
		return err
	}
	for i, n := range src.SessionNumbers() {
		s, err := src.ReadSession(n)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		var t time.Duration
		if len(s.Events) > 0 {
			t = s.Events[0].Time
		}
		info := s.Info
		if err := tw.Write(Event{Time: t, Session: i + 1, Kind: KindSession, Text: s.Text, SessionInfo: &info}); err != nil {
			return err
		}
		for _, e := range s.Events {
			e.Session = i + 1
			if err := tw.Write(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Wrap returns c decorated so that every frame read or written is
// recorded in the session, and its end noted (see Recorder.Wrap). Closing
// the returned Conn closes c.
func (s *SessionRecorder) Wrap(c transport.Conn) transport.Conn {
	return &recConn{Conn: c, r: s}
}

// Discard makes Close leave the trace file as it was, whatever was
// recorded: a test that failed does not replace its trace. It applies to
// held recordings (RecorderOptions.Stable or Replace); a recording
// written as it goes is in place already.
func (r *Recorder) Discard() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.discarded = true
}
