package record

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/mcpx-dev/mcpx/internal/outfile"
)

// diskState is what a recorder streaming to a regular file knows of that
// file, which other processes may be recording into too (see lock.go).
// Only the recorder's writer goroutine (and Close, after it) uses it.
type diskState struct {
	name string
	lock *traceLock
	file *outfile.File // the file written: os.SameFile tells if name still leads to it
	// scanned is how much of the file was read or written by this
	// recorder; top the highest session number seen in it; unended that
	// its last line (at scanned) has no newline yet.
	scanned int64
	top     int
	unended bool
	// numbers maps the recorder's own session numbers to those its
	// sessions were given in the file (they differ when another process
	// started sessions since the file was opened).
	numbers map[int]int
}

// writeBatch writes lines (whole events) to the trace holding its lock:
// it puts a new trace in place first (publish), reads what the other
// processes wrote since, and numbers the sessions the lines start after
// the highest in the file.
func (r *Recorder) writeBatch(batch []queued) error {
	d := r.disk
	if err := d.lock.lock(context.Background()); err != nil {
		return err
	}
	defer d.lock.unlock()
	if !r.published && r.publish != nil {
		r.published = true
		if err := r.publish(); err != nil {
			return err
		}
	}
	if err := d.catchUp(); err != nil {
		return err
	}
	if d.unended {
		// The last line has no newline: give it one before the next.
		if _, err := r.w.Write([]byte("\n")); err != nil {
			return fmt.Errorf("writing the trace: %w", err)
		}
		d.scanned++
		d.unended = false
	}
	for _, q := range batch {
		q.line = d.renumber(q.line)
		if err := q.write(r.w); err != nil {
			return fmt.Errorf("writing the trace: %w", err)
		}
		d.scanned += int64(q.size())
	}
	return nil
}

// catchUp makes sure name still leads to the file written, and reads the
// session numbers of the lines added to it since it was last written.
func (d *diskState) catchUp() error {
	have, err := d.file.Stat()
	if err != nil {
		return fmt.Errorf("writing the trace: %w", err)
	}
	cur, err := os.Stat(d.name)
	if err != nil || !os.SameFile(have, cur) {
		return fmt.Errorf("%s: %w", d.name, ErrReplaced)
	}
	switch size := have.Size(); {
	case size > d.scanned:
		return d.scan(size)
	case size < d.scanned:
		// A line cut short was dropped (Append): what is left ends with
		// a whole line.
		d.scanned, d.unended = size, false
	}
	return nil
}

// scan reads the lines from d.scanned to size, noting the highest session
// number. Only the start of each line is kept in memory.
func (d *diskState) scan(size int64) error {
	f, err := os.Open(d.name)
	if err != nil {
		return fmt.Errorf("reading the trace: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(f, d.scanned, size-d.scanned), 64<<10)
	atStart := !d.unended
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if atStart {
				d.top = max(d.top, sessionOfLine(chunk))
			}
			atStart = chunk[len(chunk)-1] == '\n'
		}
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("reading the trace: %w", err)
		}
	}
	d.scanned, d.unended = size, !atStart
	return nil
}

// renumber gives the line the session number its session has in the
// file; a session event takes the next one.
func (d *diskState) renumber(line []byte) []byte {
	i, j := sessionSpan(line)
	if i < 0 {
		return line
	}
	own, err := strconv.Atoi(string(line[i:j]))
	if err != nil {
		return line
	}
	n, ok := d.numbers[own]
	if bytes.HasPrefix(line[j:], []byte(`,"kind":"session"`)) || !ok {
		n = max(d.top+1, own)
		if d.numbers == nil {
			d.numbers = map[int]int{}
		}
		d.numbers[own] = n
	}
	d.top = max(d.top, n)
	if n == own {
		return line
	}
	out := make([]byte, 0, len(line)+4)
	out = append(out, line[:i]...)
	out = strconv.AppendInt(out, int64(n), 10)
	return append(out, line[j:]...)
}

// sessionSpan returns where the digits of the session number of an event
// line are: events are written {"t":T,"s":S,... (writer.appendEvent),
// stable ones {"s":S,...; -1, -1 when the line is not laid out so.
func sessionSpan(line []byte) (int, int) {
	i := 0
	if bytes.HasPrefix(line, []byte(`{"t":`)) {
		i = len(`{"t":`)
		for i < len(line) && (line[i] >= '0' && line[i] <= '9' || line[i] == '-') {
			i++
		}
		if i == len(`{"t":`) || i >= len(line) || line[i] != ',' {
			return -1, -1
		}
	} else if len(line) == 0 || line[0] != '{' {
		return -1, -1
	}
	i++
	if !bytes.HasPrefix(line[i:], []byte(`"s":`)) {
		return -1, -1
	}
	i += len(`"s":`)
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i {
		return -1, -1
	}
	return i, j
}

// sessionOfLine returns the session number of an event line, 0 when it has
// none.
func sessionOfLine(line []byte) int {
	i, j := sessionSpan(line)
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(string(line[i:j]))
	if err != nil {
		return 0
	}
	return n
}
