package record

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"iter"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/transport"
)

// Session is one session of a trace (minor 2): one client's connection to
// the server, from its first frame to its last. A trace recorded before
// sessions existed is one session.
type Session struct {
	// N numbers the session within its trace, from 1.
	N int
	// Info describes the session; for a trace without session events,
	// what its header says.
	Info SessionInfo
	// Text is the session event's description ("stdio: node server.js").
	Text string
	// Events are the session's events in the order they happened, without
	// the session event itself.
	Events []Event
}

// Frames returns the session's frame events, in order.
func (s *Session) Frames() []Event {
	var out []Event
	for _, e := range s.Events {
		if e.Kind == KindFrame {
			out = append(out, e)
		}
	}
	return out
}

// headerInfo is the SessionInfo of a session that has no session event.
func headerInfo(h Header) SessionInfo {
	return SessionInfo{Transport: h.Transport, Target: h.Target}
}

// Sessions splits the trace into its sessions, in the order of their
// numbers. Every trace has at least one session, perhaps empty.
func (t *Trace) Sessions() []*Session {
	byN := map[int]*Session{}
	var out []*Session
	get := func(n int) *Session {
		s := byN[n]
		if s == nil {
			s = &Session{N: n, Info: headerInfo(t.Header)}
			byN[n] = s
			out = append(out, s)
		}
		return s
	}
	for _, e := range t.Events {
		s := get(max(e.Session, 1))
		if e.Kind == KindSession && e.SessionInfo != nil {
			s.Info, s.Text = *e.SessionInfo, e.Text
			continue
		}
		s.Events = append(s.Events, e)
	}
	if len(out) == 0 {
		get(1)
	}
	slices.SortStableFunc(out, func(a, b *Session) int { return a.N - b.N })
	return out
}

// Session returns session n of the trace, or nil when it has none.
func (t *Trace) Session(n int) *Session {
	for _, s := range t.Sessions() {
		if s.N == n {
			return s
		}
	}
	return nil
}

// SessionIndex locates one session in a trace file, so that it can be
// read without reading the others (TraceFile.Session).
type SessionIndex struct {
	// N is the session's number.
	N int
	// Info and Text describe the session (see Session).
	Info SessionInfo
	Text string
	// Start and End are the byte offsets of the session's first line and
	// just past its last one; lines of other sessions may lie between
	// when sessions overlapped in time.
	Start, End int64
	// Events counts the session's events (its session event included);
	// Bytes the length of their lines.
	Events int
	Bytes  int64
}

// TraceFile is a trace read a session at a time: opening it reads the
// header and indexes the sessions (one pass that holds one line at a
// time), and Session reads one session's lines again. A replay or a
// verification of a large trace thus holds the largest session, not the
// file.
type TraceFile struct {
	// Header is the trace's header.
	Header Header
	// Warnings lists what the reader tolerated (see Trace.Warnings).
	Warnings []string
	// Index lists the sessions in the order of their numbers.
	Index []SessionIndex
	// Sum is the SHA-256 of the bytes Index read, the whole file as it
	// was then, when ReadOptions.Sum asked for it (zero otherwise): a
	// program that opens the trace again later (verify of several traces
	// checks each before it verifies any) tells by it whether the trace
	// is still the one it checked.
	Sum [sha256.Size]byte

	r     io.ReaderAt
	close func() error
	opts  ReadOptions
	// For appending: where the events begin and end, the offset of a
	// last line cut short (-1 if none), whether the last line lacks its
	// newline, and the time of the latest event.
	bodyStart, end, cut int64
	unended             bool
	last                time.Duration
	// long lists the lines of largeLine bytes or more, in file order,
	// which a session's reading reads at once (see lines).
	long []longLine
}

// longLine is where a long line of a trace file is: its offset and its
// length without the newline that ends it.
type longLine struct{ off, n int64 }

// Open opens the named trace file and indexes its sessions (see
// TraceFile). Errors name the file.
func (o ReadOptions) Open(name string) (*TraceFile, error) {
	f, err := openTraceFile(name)
	if err != nil {
		return nil, err
	}
	tf, err := o.Index(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tf.close = sync.OnceValue(f.Close)
	return tf, nil
}

// OpenTrace opens the named trace file with the default options (see
// ReadOptions.Open).
func OpenTrace(name string) (*TraceFile, error) { return ReadOptions{}.Open(name) }

// largeLine is the length from which a trace line is long: after one,
// Index hands the memory it read lines into back to the system, and a
// session's reading reads each at once (see Index, TraceFile.lines). A
// variable for tests to lower.
var largeLine = 16 << 20

// Index reads the trace in r once, checking every line as Read does, and
// returns it indexed for reading a session at a time. r must stay
// readable while the TraceFile is used. After a line of 16 MiB or more it
// hands the memory it read lines into back to the system
// (debug.FreeOSMemory), for the sessions' reading to have it.
func (o ReadOptions) Index(r io.ReaderAt) (*TraceFile, error) {
	if r == nil {
		return nil, nilArgument("ReadOptions.Index", "the reader")
	}
	tf := &TraceFile{r: r, opts: o, cut: -1}
	byN := map[int]int{} // session number -> position in tf.Index
	var src io.Reader = io.NewSectionReader(r, 0, 1<<62)
	var sum hash.Hash
	if o.Sum {
		sum = sha256.New()
		src = io.TeeReader(src, sum)
	}
	longest := 0
	err := o.scan(src, func(h Header, body int64) { tf.Header, tf.bodyStart, tf.end = h, body, body }, func(n int, off int64, line []byte, ended bool, e *Event, perr error) error {
		longest = max(longest, len(line))
		switch {
		case perr == nil:
			if len(line) >= largeLine && ended && !tf.Header.Stable {
				tf.long = append(tf.long, longLine{off, int64(len(line))})
			}
			tf.end, tf.unended = off+int64(len(line)), !ended
			if ended {
				tf.end++
			}
			tf.last = max(tf.last, e.Time)
		case !ended:
			tf.Warnings = append(tf.Warnings, fmt.Sprintf("line %d is cut short (the recording ended abruptly); ignored it", n))
			tf.cut = off
			return nil
		default:
			return lineError(n, perr)
		}
		sn := max(e.Session, 1)
		i, ok := byN[sn]
		if !ok {
			i = len(tf.Index)
			byN[sn] = i
			tf.Index = append(tf.Index, SessionIndex{N: sn, Info: headerInfo(tf.Header), Start: off})
		}
		x := &tf.Index[i]
		if e.Kind == KindSession && e.SessionInfo != nil {
			x.Info, x.Text = *e.SessionInfo, e.Text
		}
		x.End = off + int64(len(line)) + 1
		x.Events++
		x.Bytes += int64(len(line)) + 1
		return nil
	})
	if longest >= largeLine {
		// The lines were read whole (to check them) and let go, but their
		// memory stays the process's until collected and handed back, and
		// the reading that follows (a session's events) did not get it:
		// a 100 MiB frame took another 100 MiB, and verify peaked at 3.3
		// times the frame (2.2 now: the trace's frame and the live one).
		debug.FreeOSMemory()
	}
	if err != nil {
		return nil, err
	}
	if sum != nil {
		sum.Sum(tf.Sum[:0])
	}
	if len(tf.Index) == 0 {
		tf.Index = []SessionIndex{{N: 1, Info: headerInfo(tf.Header)}}
	}
	slices.SortStableFunc(tf.Index, func(a, b SessionIndex) int { return a.N - b.N })
	tf.Warnings = newerMinor(tf.Header, tf.Warnings)
	return tf, nil
}

// mistypedHeader says which member of a header line (one whose format
// is "mcpx-trace") has a value of the wrong JSON type, when that is why
// decoding it failed with err; nil otherwise.
func mistypedHeader(line []byte, err error) *HeaderError {
	var format string
	if err == nil || json.Unmarshal(rawjson.Member(line, "format"), &format) != nil || format != Format {
		return nil
	}
	if m, ok := rawjson.MistypedOf(err); ok && m.Path != "" {
		top, _, nested := strings.Cut(m.Path, ".")
		if v := rawjson.Member(line, top); !nested && rawjson.Kind(v) == "an array" && m.Got != "an array" {
			// An element of the array has the wrong type.
			return &HeaderError{Member: m.Path, Err: fmt.Errorf("holds %s where %s belongs", m.Got, m.Want), Mistyped: true}
		}
		return &HeaderError{Member: m.Path, Err: fmt.Errorf("is %s, not %s", m.Got, m.Want), Mistyped: true}
	}
	// The one member decoded by a method of its own: a time.
	if v := rawjson.Member(line, "created"); v != nil {
		var t time.Time
		if rawjson.Kind(v) != "a string" {
			return &HeaderError{Member: "created", Err: fmt.Errorf("is %s, not a string", rawjson.Kind(v)), Mistyped: true}
		}
		if json.Unmarshal(v, &t) != nil {
			return &HeaderError{Member: "created", Err: fmt.Errorf("is %s, not an RFC 3339 time", rawjson.Excerpt(v, 60)), Mistyped: true}
		}
	}
	return nil
}

// scan reads a trace's lines: the header (given to header) and then each
// event line with its number, offset and parsed event (or the error
// parsing it). Lines are parsed fully; a callback error ends the scan.
func (o ReadOptions) scan(r io.Reader, header func(h Header, bodyStart int64), fn func(n int, off int64, line []byte, ended bool, e *Event, perr error) error) error {
	limit := o.MaxMessageSize
	if limit <= 0 {
		limit = transport.DefaultMaxMessageSize
	}
	lr := transport.NewLineReader(r, limit+min(limit, lineSlack), "")
	var off int64
	readLine := func(n int) ([]byte, bool, error) {
		line, ended, err := lr.ReadLine()
		if errors.Is(err, transport.ErrFrameTooLarge) {
			return nil, false, &transport.FrameTooLargeError{What: fmt.Sprintf("trace line %d", n), Limit: limit}
		}
		return line, ended, err
	}
	first, ended, err := readLine(1)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if len(bytes.TrimSpace(first)) == 0 {
		if len(first) == 0 && !ended {
			return fmt.Errorf("%w: the file is empty", ErrNotTrace)
		}
		// Blank lines first (a hand edit, a merge resolved by hand):
		// the header is not where readers and writers look for it.
		for n := 2; ended; n++ {
			var line []byte
			if line, ended, err = readLine(n); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if len(bytes.TrimSpace(line)) > 0 {
				return fmt.Errorf("%w: it begins with blank lines, but its header must be its first line: remove the %d blank line(s) before line %d", ErrNotTrace, n-1, n)
			}
		}
		return fmt.Errorf("%w: the file holds only blank lines", ErrNotTrace)
	}
	var h Header
	// A byte order mark before the header is skipped: an editor that
	// saves UTF-8 with one (Windows Notepad did) leaves the trace a trace.
	line := bytes.TrimPrefix(first, []byte("\uFEFF"))
	if err := json.Unmarshal(line, &h); err != nil || h.Format != Format {
		if he := mistypedHeader(line, err); he != nil {
			return he
		}
		if m := conflictMarker(line); m != "" {
			return fmt.Errorf("%w: line 1 %w", ErrNotTrace, conflictProblem(m))
		}
		if bytes.HasPrefix(line, []byte("version https://git-lfs.github.com/spec/")) {
			// A repository that keeps *.jsonl in Git LFS, checked out
			// without it (a CI job without git lfs pull).
			return fmt.Errorf("%w: it is a Git LFS pointer, not the trace it stands for: fetch the trace (git lfs pull)", ErrNotTrace)
		}
		if bytes.HasPrefix(line, []byte{0xFF, 0xFE}) || bytes.HasPrefix(line, []byte{0xFE, 0xFF}) {
			// Saved by Windows PowerShell's Out-File (or >), whose
			// default is UTF-16.
			return fmt.Errorf("%w: it is UTF-16 text (it begins with a UTF-16 byte order mark), but a trace is UTF-8: convert it back to UTF-8 (iconv -f UTF-16 -t UTF-8), or record the trace again", ErrNotTrace)
		}
		if t := bytes.TrimSpace(line); ended && len(t) > 0 && t[0] == '{' && laidOut(t) && notJSON(t).(*lineProblem).unended {
			// A header that goes on over the next lines: the whole file
			// was reformatted (jq ., an editor's "format document").
			return fmt.Errorf("%w: its header goes on over the next lines, but a trace holds each event on one line: the file was reformatted; put each event back on one line, as jq -c . does, or record the trace again", ErrNotTrace)
		}
		return fmt.Errorf("%w: its first line is not an %q header", ErrNotTrace, Format)
	}
	if h.Version != Version {
		return &VersionError{Got: h.Version}
	}
	off += int64(len(first))
	if ended {
		off++
	}
	header(h, off)
	phys := 1 // physical lines read
	ev := &eventLines{stable: h.Stable, limit: limit + min(limit, lineSlack), read: func() ([]byte, bool, error) {
		phys++
		return readLine(phys)
	}}
	for {
		n := phys + 1 // the event's first line
		if ev.haveAhead {
			n = phys
		}
		data, ended, err := ev.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		at := off
		off += int64(len(data))
		if ended {
			off++
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		e, perr := parseEvent(data)
		if perr != nil && ended {
			n, perr = explainLine(n, data, h.Stable, ev, phys, perr)
		}
		if err := fn(n, at, data, ended, &e, perr); err != nil {
			return err
		}
	}
}

// explainLine says better why the event data, from line n of a trace,
// does not parse (perr) when a hand or a tool made it so, returning the
// line to name: a git merge conflict marker, at the event's first line or
// just after it (in a stable trace, inside an event laid out over several
// lines: the event before it stops there, line phys is the marker), in
// a trace that is not stable, an event laid out over several lines, and
// the header of a trace joined to this one; else perr, with what to do.
func explainLine(n int, data []byte, stable bool, ev *eventLines, phys int, perr error) (int, error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if m := conflictMarker(first); m != "" {
		return n, conflictProblem(m)
	}
	if ev.haveAhead && ev.aheadErr == nil {
		if m := conflictMarker(ev.ahead); m != "" {
			return phys, conflictProblem(m)
		}
	}
	var lp *lineProblem
	if !stable && errors.As(perr, &lp) && lp.unended && laidOut(data) {
		return n, unendedProblem
	}
	if string(rawjson.Member(data, "format")) == `"`+Format+`"` {
		return n, &lineProblem{msg: "is the header of another trace: a trace has one header, first (traces joined with cat, or merged by git's union driver, are not one trace); keep the traces as separate files, or record the trace again"}
	}
	// Else an edit broke the line (mcpx writes whole events): what to do
	// is the same whatever broke.
	return n, fmt.Errorf("%w: correct the line, or record the trace again", perr)
}

// laidOut tells a line a formatter ended (after "{", "[", "," or ":",
// where pretty-printed JSON breaks its lines) from one cut short anywhere
// (a crash mid-write).
func laidOut(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r")
	return len(t) > 0 && bytes.IndexByte([]byte("{[,:"), t[len(t)-1]) >= 0
}

// Session reads session n (nil and no error when the trace has none).
func (f *TraceFile) Session(n int) (*Session, error) {
	i := slices.IndexFunc(f.Index, func(x SessionIndex) bool { return x.N == n })
	if i < 0 {
		return nil, nil
	}
	x := f.Index[i]
	s := &Session{N: n, Info: x.Info, Text: x.Text, Events: make([]Event, 0, x.Events)}
	for e, err := range f.streamSession(x) {
		if err != nil {
			return nil, err
		}
		s.Events = append(s.Events, e)
	}
	return s, nil
}

// lines returns a reader of the lines of the file from start to end (a
// session's), as transport.LineReader.ReadLine reads them, except that a
// long line the index found there (f.long) is read at once, into a slice
// of its size. A LineReader assembles a line of unknown length in chunks
// and then copies it into a slice of its own, which takes up to twice the
// line's size, all of it at once when the slice reuses memory the process
// had used (Go clears that memory up front, while the chunks are still
// held): replaying a trace with a 100 MiB frame peaked at 2.2 times the
// frame.
func (f *TraceFile) lines(start, end, limit int64) func() ([]byte, bool, error) {
	read, _ := f.linesAt(start, end, limit)
	return read
}

// linesAt is lines, and also returns where the line read last begins in
// the file (a LineReader keeps a line's carriage return, so each line
// takes its length and its newline).
func (f *TraceFile) linesAt(start, end, limit int64) (read func() ([]byte, bool, error), at func() int64) {
	i, _ := slices.BinarySearchFunc(f.long, start, func(l longLine, off int64) int { return cmp.Compare(l.off, off) })
	long := f.long[i:]
	pos := start
	var lr *transport.LineReader
	var next, cur int64 // where the LineReader's next line begins; the last line's start
	read = func() ([]byte, bool, error) {
		for {
			if lr == nil && len(long) > 0 && long[0].off == pos && pos < end {
				l := long[0]
				long = long[1:]
				buf := make([]byte, l.n+1)
				n, err := f.r.ReadAt(buf, l.off)
				if int64(n) != l.n+1 || buf[l.n] != '\n' || bytes.IndexByte(buf[:l.n], '\n') >= 0 {
					if err == nil || errors.Is(err, io.EOF) {
						err = errors.New("the trace changed since it was indexed")
					}
					return nil, false, fmt.Errorf("reading a line of %d bytes at %d: %w", l.n, l.off, err)
				}
				cur = l.off
				pos += l.n + 1
				return buf[:l.n:l.n], true, nil
			}
			if lr == nil {
				stop := end
				if len(long) > 0 && long[0].off < end {
					stop = long[0].off
				}
				if pos >= stop {
					return nil, false, io.EOF
				}
				lr = transport.NewLineReader(io.NewSectionReader(f.r, pos, stop-pos), limit, "")
				next = pos
				pos = stop
			}
			line, ended, err := lr.ReadLine()
			if errors.Is(err, io.EOF) && len(long) > 0 && long[0].off == pos && pos < end {
				lr = nil
				continue
			}
			cur = next
			next += int64(len(line))
			if ended {
				next++
			}
			return line, ended, err
		}
	}
	return read, func() int64 { return cur }
}

// lineSession returns the session number of an event line (1 when it has
// none), without decoding the rest of it.
func lineSession(line []byte) int {
	n := 1
	rawjson.Members(line, func(name, v []byte) bool {
		if rawjson.NameIs(name, "s") {
			var s int
			if json.Unmarshal(v, &s) == nil && s > 0 {
				n = s
			}
			return false
		}
		return true
	})
	return n
}

// Sessions yields the trace's sessions one at a time, in the order of
// their numbers.
func (f *TraceFile) Sessions() iter.Seq2[*Session, error] {
	return func(yield func(*Session, error) bool) {
		for _, x := range f.Index {
			s, err := f.Session(x.N)
			if !yield(s, err) || err != nil {
				return
			}
		}
	}
}

// Close closes the file Open opened. It is idempotent: a second Close
// returns what the first did.
func (f *TraceFile) Close() error {
	if f.close == nil {
		return nil
	}
	return f.close()
}

// Sessions yields the sessions of the trace in r one at a time. When r is
// a file (an io.ReaderAt and io.Seeker) it is indexed first and each
// session is read when it is yielded, so that only one is held; otherwise
// (a pipe) the whole trace is read first. The header comes with the first
// session; an error ends the sequence.
func (o ReadOptions) Sessions(r io.Reader) iter.Seq2[*Session, error] {
	return func(yield func(*Session, error) bool) {
		if ra, ok := r.(interface {
			io.ReaderAt
			io.Seeker
		}); ok {
			if _, err := ra.Seek(0, io.SeekCurrent); err == nil {
				tf, err := o.Index(ra)
				if err != nil {
					yield(nil, err)
					return
				}
				for s, err := range tf.Sessions() {
					if !yield(s, err) || err != nil {
						return
					}
				}
				return
			}
		}
		tr, err := o.Read(r)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, s := range tr.Sessions() {
			if !yield(s, nil) {
				return
			}
		}
	}
}

// Sessions are what replay and verify read: a Trace in memory and a
// TraceFile both are a SessionSource.
type SessionSource interface {
	// TraceHeader returns the trace's header.
	TraceHeader() Header
	// SessionNumbers lists the sessions, in order.
	SessionNumbers() []int
	// ReadSession returns session n, or nil when there is none.
	ReadSession(n int) (*Session, error)
}

// TraceHeader returns the header.
func (t *Trace) TraceHeader() Header { return t.Header }

// SessionNumbers lists the trace's session numbers.
func (t *Trace) SessionNumbers() []int {
	var ns []int
	for _, s := range t.Sessions() {
		ns = append(ns, s.N)
	}
	return ns
}

// ReadSession returns session n.
func (t *Trace) ReadSession(n int) (*Session, error) { return t.Session(n), nil }

// TraceHeader returns the header.
func (f *TraceFile) TraceHeader() Header { return f.Header }

// SessionNumbers lists the indexed session numbers.
func (f *TraceFile) SessionNumbers() []int {
	var ns []int
	for _, x := range f.Index {
		ns = append(ns, x.N)
	}
	return ns
}

// ReadSession returns session n (see Session).
func (f *TraceFile) ReadSession(n int) (*Session, error) { return f.Session(n) }
