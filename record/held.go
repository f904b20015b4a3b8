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

// A held recording (RecorderOptions.Stable or Replace, UpdateTrace) is
// kept aside while the session runs, in a spool file beside the trace,
// and written whole, with the sessions it keeps from the old trace, when
// the recorder is closed: a session at a time (it is read back from the
// spool as a TraceFile), through a temporary file that takes the trace's
// place only once it is complete, so that an interrupted or failed
// recording leaves the old trace as it was.

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
	// The spool: readable by its owner only (os.CreateTemp), as the
	// trace is, and not a *.jsonl file (mcpx verify DIR takes those).
	spool, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".held-*")
	if err != nil {
		f.Abort()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	unspool := func() {
		spool.Close()
		os.Remove(spool.Name())
	}
	if _, err := newWriter(spool, h); err != nil {
		f.Abort()
		unspool()
		return nil, err
	}
	r.w = spool
	drop := ""
	if o.Replace {
		drop = o.Session.Name
	}
	r.close = func(wrote bool) error {
		// Called by Close with r.mu held.
		defer unspool()
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
		rec, err := ReadOptions{MaxMessageSize: 1 << 62}.Index(spool)
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

// isStable reports whether name holds a stable trace (by its header).
func isStable(name string) bool {
	h := headerOf(name)
	return h != nil && h.Stable
}

// IsTrace reports whether the file name is a trace: a file that no other
// output of a command (a report, a result) should replace. It is one when
// it begins with a trace's header, and also when its beginning names the
// trace format anywhere: a trace that a merge conflict (its markers come
// first), a formatter (the header laid out over lines) or an editor
// (blank lines before it) broke is still someone's trace, which verify
// refuses to read but nothing should overwrite. Only the first 64 KiB
// are read; a file that is no regular file (a FIFO, whose open would
// wait for a writer) is no trace.
func IsTrace(name string) bool {
	head := readHead(name)
	return head != nil && (headerIn(head) != nil || namesFormat(head))
}

// readHead returns the first 64 KiB of the file name (less when it is
// shorter), nil when it is no regular file or cannot be read.
func readHead(name string) []byte {
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil
	}
	return head[:n]
}

// namesFormat reports whether b holds the header's format member, however
// it is laid out ("format" : "mcpx-trace").
func namesFormat(b []byte) bool {
	key, value := []byte(`"format"`), []byte(`"`+Format+`"`)
	for {
		i := bytes.Index(b, key)
		if i < 0 {
			return false
		}
		b = bytes.TrimLeft(b[i+len(key):], " \t\r\n")
		if rest, ok := bytes.CutPrefix(b, []byte(":")); ok && bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), value) {
			return true
		}
	}
}

// headerOf returns the header of the trace in the file name, nil when it
// is no regular file or does not begin with a trace's header.
func headerOf(name string) *Header {
	head := readHead(name)
	if head == nil {
		return nil
	}
	return headerIn(head)
}

// headerIn returns the header that head, the beginning of a file (see
// readHead), begins with (after a byte order mark, which readers skip:
// see scan), nil when its first line is none or longer than head.
func headerIn(head []byte) *Header {
	line, _, ended := bytes.Cut(head, []byte("\n"))
	if !ended && len(head) == cap(head) {
		return nil
	}
	line = bytes.TrimPrefix(line, []byte("\uFEFF"))
	var h Header
	if json.Unmarshal(line, &h) != nil || h.Format != Format {
		return nil
	}
	return &h
}

// mergedSessions is a SessionSource of sessions in memory (an old
// trace's) followed by sessions of a trace file (a recording's), read
// when asked for, numbered from 1.
type mergedSessions struct {
	h   Header
	old []*Session
	rec *TraceFile
	ns  []int // the numbers of rec's sessions, in order
}

func (m *mergedSessions) TraceHeader() Header { return m.h }

func (m *mergedSessions) SessionNumbers() []int {
	ns := make([]int, len(m.old)+len(m.ns))
	for i := range ns {
		ns[i] = i + 1
	}
	return ns
}

func (m *mergedSessions) ReadSession(n int) (*Session, error) {
	var s *Session
	switch i := n - 1; {
	case i < 0 || i >= len(m.old)+len(m.ns):
		return nil, nil
	case i < len(m.old):
		s = m.old[i]
	default:
		var err error
		if s, err = m.rec.Session(m.ns[i-len(m.old)]); err != nil || s == nil {
			return nil, err
		}
	}
	c := *s
	c.N = n
	return &c, nil
}

// mergeTraces returns old's sessions (without those named drop when
// replace is set) followed by rec's that hold something, numbered anew
// from 1, under old's header with rec's ignores and normalizers added.
func mergeTraces(old *Trace, rec *TraceFile, replace bool, drop string) *mergedSessions {
	m := &mergedSessions{h: rec.Header, rec: rec}
	if old != nil {
		m.h = old.Header
		m.h.Ignore = union(old.Header.Ignore, rec.Header.Ignore)
		m.h.Normalize = unionNormalizers(old.Header.Normalize, rec.Header.Normalize)
		for _, s := range old.Sessions() {
			if replace && s.Info.Name == drop {
				continue
			}
			m.old = append(m.old, s)
		}
	}
	for _, x := range rec.Index {
		// (Every session of a recording begins with its session event.)
		if x.Events > 1 || x.Text != "" {
			m.ns = append(m.ns, x.N)
		}
	}
	return m
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
