package record

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"time"

	"github.com/mcpx-dev/mcpx/internal/outfile"
)

// Append records a new session at the end of the trace in the named file,
// or starts the trace as Create does when there is none (or the file is
// empty, or not a regular file). The session's number follows the
// trace's last; its times continue the trace's, which never go backwards.
//
// The trace must have been recorded with the same redaction (redacted or
// not, the same --redact paths): its header holds one for every session.
// The header's ignores and normalizers gain those of o.Header. A trace of
// an older minor version, or one whose header gains something, is
// rewritten first as Create would write it (through a temporary file that
// takes its place at the first event: nothing recorded, nothing changed).
// A last line cut short (a recording killed mid-write) is dropped, as
// readers drop it. A file that is not a trace is refused with an error
// matching ErrNotTrace. With o.Stable or o.Replace, or when the trace is
// a stable one, the recording is held aside (in a spool file beside the
// trace) and the whole trace written again, a session at a time, when the
// recorder is closed (see RecorderOptions).
//
// Several processes may append to one trace at once (see lock.go): each
// writes whole lines holding the trace's lock, and numbers a session, when
// its first line is written, after the highest session in the file then,
// so that sessions recorded at once interleave, numbered apart. Two that
// both find no trace start one: the first to record an event puts it in
// place, the other adds its sessions to it. A recording whose file another
// process replaced meanwhile (--force, a held recording) fails with
// ErrReplaced. ctx bounds the wait for the lock (see ErrLocked).
func Append(ctx context.Context, name string, o RecorderOptions) (*Recorder, error) {
	if o.Stable || o.Replace || isStable(name) {
		return createHeld(ctx, name, o, true, nil)
	}
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		o.Overwrite = true
		return create(ctx, name, o, appendExisting)
	}
	r, h, err := prepare(o)
	if err != nil {
		return nil, err
	}
	// The trace is read, and a line cut short dropped, holding its lock:
	// no other process is writing a line then.
	lk := newTraceLock(name)
	if err := lk.lock(ctx); err != nil {
		lk.close()
		return nil, err
	}
	defer lk.unlock()
	at, err := readTarget(name, h)
	if errors.Is(err, fs.ErrNotExist) || err == nil && at.fi.Size() == 0 {
		// Removed (or emptied) meanwhile.
		if at != nil {
			at.f.Close()
		}
		lk.close()
		o.Overwrite = true
		return create(ctx, name, o, appendExisting)
	}
	if err != nil {
		lk.close()
		return nil, err
	}
	defer at.f.Close()
	tf := at.tf
	old := tf.Header
	r.base = at.top
	// Times continue the trace's: as if the recording had gone on since
	// the header's time, and never before its last event. A header
	// without a time (edited by hand; a stable trace has none), or one
	// so old that the time since it is out of a Duration's range, counts
	// from the last event: time.Since saturates there, and the events'
	// times overflowed to near -292 years.
	r.offset = tf.last
	if since := time.Since(old.Created); !old.Created.IsZero() && since < math.MaxInt64/2 {
		r.offset = max(tf.last, since)
	}

	if at.rewrite {
		out, err := outfile.Create(ctx, name, outfile.Options{Perm: 0o600})
		if err == nil {
			err = rewriteInto(out, at)
		}
		var ofi fs.FileInfo
		if err == nil {
			ofi, err = out.Stat()
		}
		if err != nil {
			if out != nil {
				out.Abort()
			}
			lk.close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.w = out
		r.disk = &diskState{name: name, lock: lk, file: out, scanned: ofi.Size(), top: at.top}
		published := false
		r.publish = func() error {
			// Under the lock: the trace must be as it was copied.
			cur, err := os.Stat(name)
			if err != nil || !os.SameFile(cur, at.fi) || cur.Size() != at.fi.Size() || !cur.ModTime().Equal(at.fi.ModTime()) {
				out.Abort()
				return fmt.Errorf("%s: another process recorded into it while this session was recorded into a copy of it in the current format; it was left as it was, without this session (record the session again)", name)
			}
			if err := out.Publish(); err != nil {
				out.Abort()
				return fmt.Errorf("replacing %s with the new trace: %w", name, err)
			}
			published = true
			return nil
		}
		r.close = func(wrote bool) error {
			defer r.closeLock()
			if !wrote || !published {
				out.Abort()
				return nil
			}
			return out.Close()
		}
		return r, nil
	}

	if at.end < at.fi.Size() {
		if err := os.Truncate(name, at.end); err != nil {
			lk.close()
			return nil, fmt.Errorf("%s: dropping the line cut short: %w", name, err)
		}
	}
	out, err := outfile.Append(ctx, name, outfile.Options{Perm: 0o600})
	if err != nil {
		lk.close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.w = out
	r.disk = &diskState{name: name, lock: lk, file: out, scanned: at.end, top: at.top, unended: tf.unended}
	r.close = func(bool) error {
		defer r.closeLock()
		return out.Close()
	}
	return r, nil
}

// appendTarget is what Append reads of the trace it adds a session to,
// holding its lock.
type appendTarget struct {
	f       *os.File // the trace, open for reading
	fi      fs.FileInfo
	tf      *TraceFile
	merged  Header    // its header with the recording's ignores and normalizers
	redact  *Redactor // the newer rules its events are redacted by again, if any (see reRedactor)
	rewrite bool      // the header changes: the trace is rewritten
	top     int       // its highest session number
	end     int64     // where its events end (a last line cut short left out)
}

// readTarget reads the index of the trace in name for a recording whose
// header is h.
func readTarget(name string, h Header) (*appendTarget, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	at := &appendTarget{f: f}
	if at.fi, err = f.Stat(); err == nil {
		at.tf, err = ReadOptions{MaxMessageSize: 1 << 62}.Index(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	old := at.tf.Header
	if old.Redacted != h.Redacted || !sameSet(old.Redact, h.Redact) {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, &RedactionMismatchError{Trace: old.Redacted, TracePaths: old.Redact, Want: h.Redacted, WantPaths: h.Redact})
	}
	if at.redact, err = reRedactor(old, h); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	at.merged = old
	at.merged.Ignore = union(old.Ignore, h.Ignore)
	at.merged.Normalize = unionNormalizers(old.Normalize, h.Normalize)
	at.merged.RedactRules = h.RedactRules
	at.rewrite = old.Minor < Minor || len(at.merged.Ignore) != len(old.Ignore) || len(at.merged.Normalize) != len(old.Normalize) || at.redact != nil
	if at.rewrite {
		if err := checkRewrite(old); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, x := range at.tf.Index {
		at.top = max(at.top, x.N)
	}
	at.end = at.tf.end
	if at.tf.cut >= 0 {
		at.end = at.tf.cut
	}
	return at, nil
}

// rewriteInto writes the trace at holds, under its merged header in the
// current format, to out.
func rewriteInto(out io.Writer, at *appendTarget) error {
	h := at.merged
	h.Minor = Minor
	w, err := newWriterAs(out, h)
	if err != nil {
		return err
	}
	if at.redact != nil {
		err = redactEvents(w, at.f, at.end, at.redact)
	} else {
		err = copyEvents(out, at.f, at.tf.bodyStart, at.end)
	}
	if err != nil {
		return fmt.Errorf("copying the trace: %w", err)
	}
	return nil
}

// reRedactor returns the redactor that brings the events of the trace
// whose header is old to the redaction rules of a recording whose header
// is h, before the recording is added to it: nil when they have the same
// rules, or are not redacted. Rules only grow (what rules 1 redact,
// rules 2 do, and rules 3), so the old events become what the newer
// rules would have recorded (as far as they can: a value older rules
// replaced cannot be learned by rules 3), and the trace keeps one set of
// rules, in its header, that replay and verify apply to live traffic. A trace of newer rules than h
// is refused: its sessions would be redacted unlike this one.
func reRedactor(old, h Header) (*Redactor, error) {
	was, now := old.redactRules(), h.redactRules()
	switch {
	case was == now:
		return nil, nil
	case was > now:
		return nil, &HeaderError{Member: "redactRules", Err: &RulesError{Rules: was}}
	}
	return NewRedactor(RedactOptions{Paths: h.Redact, Rules: now})
}

// redactEvents writes the events of the trace in r, up to end, to w,
// each redacted by red (see reRedactor). A line that does not parse is
// copied as it is.
func redactEvents(w *writer, r io.ReaderAt, end int64, red *Redactor) error {
	rr := red.reRedaction()
	return ReadOptions{MaxMessageSize: 1 << 62}.scan(io.NewSectionReader(r, 0, end), func(Header, int64) {}, func(_ int, _ int64, line []byte, _ bool, e *Event, perr error) error {
		if perr != nil {
			return w.writeLine(line)
		}
		return w.Write(rr.event(*e))
	})
}

// join makes the recorder, whose new trace another process put in place
// first, add its sessions to that trace instead. It is called by the
// writer goroutine, holding the lock.
func (r *Recorder) join(name string, h Header) (*outfile.File, error) {
	at, err := readTarget(name, h)
	if err != nil {
		return nil, err
	}
	defer at.f.Close()
	if at.rewrite {
		return nil, fmt.Errorf("%s: another process started the trace at the same time, with another header (other ignores or normalizers); record the session again to add it", name)
	}
	if at.end < at.fi.Size() {
		if err := os.Truncate(name, at.end); err != nil {
			return nil, fmt.Errorf("%s: dropping the line cut short: %w", name, err)
		}
	}
	out, err := outfile.Append(context.Background(), name, outfile.Options{Perm: 0o600})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.w = out
	d := r.disk
	d.file, d.scanned, d.top, d.unended = out, at.end, at.top, at.tf.unended
	return out, nil
}

// RedactionMismatchError reports a trace that cannot take a session
// recorded with other redaction settings: its header holds one for all.
type RedactionMismatchError struct {
	Trace      bool
	TracePaths []string
	Want       bool
	WantPaths  []string
}

func (e *RedactionMismatchError) Error() string {
	desc := func(on bool, paths []string) string {
		switch {
		case !on:
			return "without redaction"
		case len(paths) == 0:
			return "with the default redaction"
		}
		return fmt.Sprintf("redacting also %q", paths)
	}
	return fmt.Sprintf("the trace was recorded %s, this session would be %s; record it to another file or replace the trace",
		desc(e.Trace, e.TracePaths), desc(e.Want, e.WantPaths))
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func unionNormalizers(a, b []Normalizer) []Normalizer {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// copyEvents copies the bytes of r from start to end to w.
func copyEvents(w io.Writer, r io.ReaderAt, start, end int64) error {
	if end <= start {
		return nil
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := io.Copy(bw, io.NewSectionReader(r, start, end-start)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	// A last line without its newline gets one.
	var last [1]byte
	if _, err := r.ReadAt(last[:], end-1); err == nil && last[0] != '\n' {
		_, err = w.Write([]byte("\n"))
		return err
	}
	return nil
}
