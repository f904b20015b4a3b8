package record

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// A held recording (--stable, record modes, verify --update) is kept in
// a spool file beside the trace while it runs, not in memory, and the
// spool is gone once the trace is written. Before, the whole recording
// was held in a buffer, then read back whole and written: verify --update
// of a 42 MB trace of 100,000 calls peaked at 403 MB (165 MB now).
func TestHeldRecordingIsSpooled(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "t.jsonl")
	rec, err := Append(context.Background(), name, RecorderOptions{Stable: true, Header: Header{Transport: "stdio", Target: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 1<<20) + `"}}`
	rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: []byte(big)})
	rec.Flush()
	spools, _ := filepath.Glob(filepath.Join(dir, ".t.jsonl.held-*"))
	if len(spools) != 1 {
		t.Fatalf("spool files %q, want one beside the trace", spools)
	}
	if fi, err := os.Stat(spools[0]); err != nil || fi.Size() < 1<<20 {
		t.Errorf("the spool holds %v bytes (%v), want the recording", fi.Size(), err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "t.jsonl" {
		t.Errorf("left in the directory: %v", entries)
	}
	tr, err := ReadFile(name)
	if err != nil || len(tr.Frames()) != 2 || !tr.Header.Stable {
		t.Fatalf("the trace: %v %+v", err, tr)
	}
}

// countingSource records, when each session is read, how much of the
// output was written by then.
type countingSource struct {
	SessionSource
	out   *bytes.Buffer
	reads map[int][]int
}

func (c *countingSource) ReadSession(n int) (*Session, error) {
	c.reads[n] = append(c.reads[n], c.out.Len())
	return c.SessionSource.ReadSession(n)
}

// WriteStable holds one session at a time: it reads each once to number
// the placeholders, then again when it writes it, after the sessions
// before it are written. Before, it held every session of the trace.
func TestWriteStableReadsASessionAtATime(t *testing.T) {
	big := strings.Repeat("y", 64<<10)
	var events []Event
	for s := 1; s <= 3; s++ {
		events = append(events,
			Event{Session: s, Kind: KindSession, SessionInfo: &SessionInfo{Transport: "stdio", Target: fmt.Sprint("server ", s)}},
			Event{Session: s, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + big + `"}}`)})
	}
	tr := &Trace{Header: Header{Format: Format, Version: Version, Minor: Minor}, Events: events}
	var b bytes.Buffer
	src := &countingSource{SessionSource: tr, out: &b, reads: map[int][]int{}}
	if err := WriteStable(&b, src); err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 3; s++ {
		r := src.reads[s]
		if len(r) != 2 || r[1] < (s-1)*len(big) {
			t.Errorf("session %d read when %v bytes were written; want twice, the second after sessions 1..%d (%d bytes or more)", s, r, s-1, (s-1)*len(big))
		}
	}
	if want := stableBytes(t, tr); !bytes.Equal(b.Bytes(), want) {
		t.Error("the output differs from WriteStable's of the trace itself")
	}
}

// A stable trace an editor saved with a byte order mark (Windows Notepad
// did) is still known as one where only its header is read: appending a
// session to it keeps it stable, rather than adding lines with times
// (which, without the header's creation time, were near -292 years), and
// an output flag naming it is refused as for any trace.
func TestHeaderAfterByteOrderMark(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	stable := "\uFEFF" + `{"format":"mcpx-trace","version":1,"minor":4,"transport":"stdio","redacted":true,"redactRules":3,"stable":true}` + "\n"
	if err := os.WriteFile(name, []byte(stable), 0o600); err != nil {
		t.Fatal(err)
	}
	if !IsTrace(name) || !isStable(name) {
		t.Errorf("IsTrace = %v, isStable = %v for a stable trace after a byte order mark, want true", IsTrace(name), isStable(name))
	}
}
