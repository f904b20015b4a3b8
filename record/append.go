package record

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// a stable one, the recording is held in memory and the whole trace
// written again when the recorder is closed (see RecorderOptions).
func Append(ctx context.Context, name string, o RecorderOptions) (*Recorder, error) {
	if o.Stable || o.Replace || isStable(name) {
		return createHeld(ctx, name, o, true)
	}
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		o.Overwrite = true
		return Create(ctx, name, o)
	}
	r, h, err := prepare(o)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tf, err := ReadOptions{MaxMessageSize: 1 << 62}.Index(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	old := tf.Header
	if old.Redacted != h.Redacted || !sameSet(old.Redact, h.Redact) {
		return nil, fmt.Errorf("%s: %w", name, &RedactionMismatchError{Trace: old.Redacted, TracePaths: old.Redact, Want: h.Redacted, WantPaths: h.Redact})
	}
	merged := old
	merged.Ignore = union(old.Ignore, h.Ignore)
	merged.Normalize = unionNormalizers(old.Normalize, h.Normalize)
	rewrite := old.Minor < Minor || len(merged.Ignore) != len(old.Ignore) || len(merged.Normalize) != len(old.Normalize)

	for _, x := range tf.Index {
		r.base = max(r.base, x.N)
	}
	// Times continue the trace's: as if the recording had gone on since
	// the header's time, and never before its last event.
	r.offset = max(tf.last, time.Since(old.Created))
	end := tf.end
	if tf.cut >= 0 {
		end = tf.cut
	}

	if rewrite {
		out, err := outfile.Create(ctx, name, outfile.Options{Perm: 0o600})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		merged.Minor = Minor
		if _, err := newWriterAs(out, merged); err != nil {
			out.Abort()
			return nil, err
		}
		if err := copyEvents(out, f, tf.bodyStart, end); err != nil {
			out.Abort()
			return nil, fmt.Errorf("%s: copying the trace: %w", name, err)
		}
		r.w = out
		r.publish = func() error {
			if err := out.Publish(); err != nil {
				return fmt.Errorf("replacing %s with the new trace: %w", name, err)
			}
			return nil
		}
		r.close = func(wrote bool) error {
			if !wrote {
				out.Abort()
				return nil
			}
			return out.Close()
		}
		return r, nil
	}

	if end < fi.Size() {
		if err := os.Truncate(name, end); err != nil {
			return nil, fmt.Errorf("%s: dropping the line cut short: %w", name, err)
		}
	}
	out, err := outfile.Append(ctx, name, outfile.Options{Perm: 0o600})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var w io.Writer = out
	if tf.unended {
		// The last line has no newline: give it one before the next.
		w = &prefixWriter{w: out, prefix: []byte("\n")}
	}
	r.w = w
	r.close = func(bool) error { return out.Close() }
	return r, nil
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

// prefixWriter writes prefix before the first write.
type prefixWriter struct {
	w      io.Writer
	prefix []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if p.prefix != nil {
		if _, err := p.w.Write(p.prefix); err != nil {
			return 0, err
		}
		p.prefix = nil
	}
	return p.w.Write(b)
}
