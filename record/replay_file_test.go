package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// writeTraceFile writes tr to a file and opens it as replay does.
func writeTraceFile(t *testing.T, tr *Trace) (string, *TraceFile) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tf, err := OpenTrace(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tf.Close() })
	return name, tf
}

// bigResponses is a session of n tools/call exchanges, each answered with
// about size bytes, and a batch of two answered as one.
func bigResponses(n, size int) (*Trace, []string, []string) {
	var lines, reqs, resps []string
	body := strings.Repeat("x", size)
	for i := 1; i <= n; i++ {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"n":%d}}}`, i, i)
		resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d %s"}]}}`, i, i, body)
		lines, reqs, resps = append(lines, "> "+req, "< "+resp), append(reqs, req), append(resps, resp)
	}
	req := `[{"jsonrpc":"2.0","id":"a","method":"tools/list"},{"jsonrpc":"2.0","id":"b","method":"prompts/list"}]`
	resp := `[{"jsonrpc":"2.0","id":"a","result":{"tools":[]}},{"jsonrpc":"2.0","id":"b","result":{"prompts":[]}}]`
	lines, reqs, resps = append(lines, "> "+req, "< "+resp), append(reqs, req), append(resps, resp)
	return mkTrace(lines...), reqs, resps
}

// bigRequests is a session of n tools/call requests of about size bytes
// each, answered briefly.
func bigRequests(n, size int) (*Trace, []string, []string) {
	var lines, reqs, resps []string
	arg := strings.Repeat("y", size)
	for i := 1; i <= n; i++ {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"n":%d,"s":"%s"}}}`, i, i, arg)
		resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i)
		lines, reqs, resps = append(lines, "> "+req, "< "+resp), append(reqs, req), append(resps, resp)
	}
	return mkTrace(lines...), reqs, resps
}

// Replaying a trace file holds where the recorded frames are, not the
// frames: each is read again when it is sent or compared, and a client
// message's matching key is held as its digest. Counted in bytes held,
// not timed: the replay of a 6 MB session held it all (the lines, and
// the messages decoded from them) before, and its keys.
func TestReplayOfATraceFileHoldsWhereFramesAre(t *testing.T) {
	t.Run("responses", func(t *testing.T) { testReplayHolds(t, bigResponses) })
	t.Run("requests", func(t *testing.T) { testReplayHolds(t, bigRequests) })
}

func testReplayHolds(t *testing.T, session func(n, size int) (*Trace, []string, []string)) {
	tr, reqs, resps := session(400, 16<<10)
	name, tf := writeTraceFile(t, tr)
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rp, err := NewReplayerSource(tf, ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := rp.script(1)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if held > fi.Size()/8 {
		t.Errorf("a replay of a %d-byte trace holds %d bytes; want at most an eighth of it", fi.Size(), held)
	}
	runtime.KeepAlive(sc)

	// What it sends is what it sent when it held the frames.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, done := rp.ServePipe(ctx)
	for i, req := range reqs {
		if err := conn.Write(ctx, transport.Frame{Data: []byte(req)}); err != nil {
			t.Fatal(err)
		}
		f, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(f.Data) != resps[i] {
			t.Fatalf("request %d answered with\n%.200s\nwant\n%.200s", i, f.Data, resps[i])
		}
	}
	conn.Close()
	if err := <-done; err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// A trace file changed while it is replayed ends the replay with an
// error that says so, rather than with another frame than the recorded
// one (or garbage where the file now holds other bytes).
func TestReplayOfAChangedTraceFileFails(t *testing.T) {
	t.Parallel()
	tr, reqs, _ := bigResponses(3, 100)
	name, tf := writeTraceFile(t, tr)
	rp, err := NewReplayerSource(tf, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// The same length, other bytes: the offsets still fit.
	if err := os.WriteFile(name, []byte(strings.Replace(string(b), `"1 xxx`, `"1 yyy`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, done := rp.ServePipe(ctx)
	defer conn.Close()
	if err := conn.Write(ctx, transport.Frame{Data: []byte(reqs[0])}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errTraceChanged) {
			t.Fatalf("replay ended with %v; want that the trace changed", err)
		}
	case <-ctx.Done():
		t.Fatal("the replay of a changed trace went on")
	}
}

// A stable trace lays a frame out on several lines: the frame read again
// is the one read first (its canonical JSON, compact), a batch's members
// too.
func TestReplayOfAStableTraceFile(t *testing.T) {
	t.Parallel()
	tr, reqs, resps := bigResponses(5, 200)
	name := filepath.Join(t.TempDir(), "stable.jsonl")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteStable(f, tr); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); !strings.Contains(string(b), "\n  ") {
		t.Fatalf("the stable trace lays no frame out on lines of its own:\n%s", b)
	}
	tf, err := OpenTrace(name)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	rp, err := NewReplayerSource(tf, ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, done := rp.ServePipe(ctx)
	for i, req := range reqs {
		if err := conn.Write(ctx, transport.Frame{Data: []byte(req)}); err != nil {
			t.Fatal(err)
		}
		got, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := canonicalJSON([]byte(resps[i])); canonicalJSON(got.Data) != want || string(got.Data) != compactJSON(t, got.Data) {
			t.Fatalf("request %d answered with\n%s\nwant\n%s", i, got.Data, resps[i])
		}
	}
	conn.Close()
	if err := <-done; err != nil {
		t.Fatalf("replay: %v", err)
	}
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A recorded client message that cannot be read again (the trace changed
// since) ends the replay with that error, and no deviation is reported
// that was made of what could not be read: the error's listing of the
// recorded requests of the method showed an empty one for it.
func TestReplayOfAChangedTraceFileReportsNoDeviationOfWhatItCouldNotRead(t *testing.T) {
	t.Parallel()
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			tr, _, _ := bigRequests(3, 100)
			name, tf := writeTraceFile(t, tr)
			var devs []string
			rp, err := NewReplayerSource(tf, ReplayOptions{Strict: strict, OnDeviation: func(d Deviation) { devs = append(devs, d.Message) }})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			// The same length, other bytes: the offsets still fit.
			if err := os.WriteFile(name, []byte(strings.Replace(string(b), `"n":2,"s":"yyy`, `"n":2,"s":"zzz`, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			conn, done := rp.ServePipe(ctx)
			defer conn.Close()
			// Unrecorded: its error lists the recorded tools/call requests,
			// read again.
			if err := conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope"}}`)}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, errTraceChanged) {
					t.Fatalf("replay ended with %v; want that the trace changed", err)
				}
			case <-ctx.Done():
				t.Fatal("the replay of a changed trace went on")
			}
			if len(devs) > 0 {
				t.Errorf("deviations reported of a trace that could not be read: %q", devs)
			}
		})
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// A batch of n requests answered with a batch of n responses: each of
// the 2n members is read again from the file where it is used, and
// reading the whole batch again for each read n times the batch (a batch
// of 3,000 replayed in 53 s, not 0.3). Counted in bytes read, not timed.
func TestReplayOfALargeBatchReadsItOnce(t *testing.T) {
	t.Parallel()
	const n = 300
	var reqs, resps []string
	for i := range n {
		reqs = append(reqs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{"n":%d}}}`, i+1, i))
		resps = append(resps, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d %s"}]}}`, i+1, i, strings.Repeat("x", 500)))
	}
	req, resp := "["+strings.Join(reqs, ",")+"]", "["+strings.Join(resps, ",")+"]"
	name, _ := writeTraceFile(t, mkTrace("> "+req, "< "+resp))
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingReaderAt{r: f}
	tf, err := ReadOptions{}.Index(cr)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplayerSource(tf, ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, done := rp.ServePipe(ctx)
	before := cr.n.Load()
	if err := conn.Write(ctx, transport.Frame{Data: []byte(req)}); err != nil {
		t.Fatal(err)
	}
	got, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if canonicalJSON(got.Data) != canonicalJSON([]byte(resp)) {
		t.Fatalf("the batch answered with\n%.300s\nwant\n%.300s", got.Data, resp)
	}
	read := cr.n.Load() - before
	conn.Close()
	if err := <-done; err != nil {
		t.Fatalf("replay: %v", err)
	}
	if read > 4*fi.Size() {
		t.Errorf("answering a batch of %d read %d bytes of a %d-byte trace; want at most 4 times the trace", n, read, fi.Size())
	}
}
