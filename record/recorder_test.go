package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

func TestCreateLeavesExistingFileUntilFirstEvent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "t.jsonl")
	os.WriteFile(name, []byte("precious\n"), 0o644)

	// Without Overwrite an existing file is refused.
	if _, err := Create(context.Background(), name, RecorderOptions{}); !errors.Is(err, ErrExists) {
		t.Fatalf("Create over an existing file: %v", err)
	}
	// Nothing recorded (the server never started): the old file stays.
	rec, err := Create(context.Background(), name, RecorderOptions{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "precious\n" {
		t.Fatalf("Create touched the file: %q", b)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "precious\n" {
		t.Fatalf("an empty recording replaced the file: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}

	// The first event replaces it with a whole trace at once.
	rec, err = Create(context.Background(), name, RecorderOptions{Header: Header{Target: "x"}, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	// Readable while still recording, as after a kill.
	tr, err := ReadFile(name)
	if err != nil || len(tr.Events) != 2 {
		t.Fatalf("mid-recording: %v, %+v", err, tr)
	}
	rec.Observe(transport.Event{Kind: transport.EventStderr, Text: "a stderr line"})
	rec.Note("a note")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rec.Note("after close: dropped")
	tr, err = ReadFile(name)
	if err != nil || len(tr.Events) != 4 || tr.Header.Target != "x" || tr.Events[0].Kind != KindSession {
		t.Fatalf("after close: %v, %+v", err, tr)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("trace mode %v, want 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Create(context.Background(), dir, RecorderOptions{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := Create(context.Background(), filepath.Join(dir, "no", "such", "dir", "t.jsonl"), RecorderOptions{}); err == nil {
		t.Error("a missing directory was accepted")
	}
	if _, err := Create(context.Background(), filepath.Join(dir, "t.jsonl"), RecorderOptions{Redact: RedactOptions{Paths: []string{"bad"}}}); err == nil {
		t.Error("a bad redaction path was accepted")
	}
}

func TestRecorderConcurrentAndTimesMonotonic(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	rec, err := NewRecorder(&buf, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"g":%d,"i":%d}}`, g, i))})
				rec.Observe(transport.Event{Kind: transport.EventStderr, Text: "line"})
			}
		}()
	}
	wg.Wait()
	rec.Close()
	tr, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 1+8*200*2 || tr.Events[0].Kind != KindSession {
		t.Fatalf("%d events", len(tr.Events))
	}
	for i := 1; i < len(tr.Events); i++ {
		if tr.Events[i].Time < tr.Events[i-1].Time {
			t.Fatalf("event %d goes back in time", i)
		}
	}
}

type safeBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func TestRecorderWrapRecordsBothWaysAndRedacts(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	rec, err := NewRecorder(&buf, RecorderOptions{
		Header: Header{Target: "http: https://h/mcp?token=abc"},
		Redact: RedactOptions{Secrets: []string{"s3cr3t-value"}, Paths: []string{"$.params.pin"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := transport.Pipe()
	conn := rec.Wrap(a)
	if u, ok := conn.(interface{ Unwrap() transport.Conn }); !ok || u.Unwrap() != a {
		t.Error("the recorder does not unwrap to the connection it wraps")
	}
	if d, ok := conn.(transport.Describer); !ok || d.Describe() != "in-memory pipe" {
		t.Error("the recorder hides the connection's description")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		f, _ := b.Read(ctx)
		b.Write(ctx, transport.Frame{Data: append([]byte(nil), f.Data...)})
	}()
	conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"login","params":{"pin":1234,"access_token":"tok","note":"s3cr3t-value"}}`)})
	conn.Read(ctx)
	rec.Observe(transport.Event{Kind: transport.EventHTTP, Text: "POST https://h/mcp (Authorization: Bearer s3cr3t-value)", Meta: &transport.Meta{URL: "https://h/mcp?access_token=zzz"}})
	conn.Close()
	rec.Close()
	out := buf.String()
	for _, secret := range []string{"1234", "tok\"", "s3cr3t-value", "token=abc", "zzz"} {
		if strings.Contains(out, secret) {
			t.Errorf("the trace holds %q:\n%s", secret, out)
		}
	}
	tr, err := Read(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Frames()) != 2 || tr.Frames()[0].Dir != ClientToServer || tr.Frames()[1].Dir != ServerToClient {
		t.Errorf("frames %+v", tr.Frames())
	}
	if !tr.Header.Redacted || len(tr.Header.Redact) != 1 || tr.Header.Redact[0] != "$.params.pin" {
		t.Errorf("header %+v", tr.Header)
	}
}

func TestRecorderNoRedact(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	rec, _ := NewRecorder(&buf, RecorderOptions{Redact: RedactOptions{Disabled: true, Paths: []string{"$.x"}}})
	rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(`{"access_token":"tok"}`)})
	rec.Close()
	tr, _ := Read(strings.NewReader(buf.String()))
	if tr.Header.Redacted || tr.Header.Redact != nil || string(tr.Frames()[0].Data) != `{"access_token":"tok"}` {
		t.Errorf("--no-redact: header %+v, frame %s", tr.Header, tr.Frames()[0].Data)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n++; f.n > 2 {
		return 0, fmt.Errorf("disk full")
	}
	return len(p), nil
}

func TestRecorderWriteErrors(t *testing.T) {
	t.Parallel()
	rec, err := NewRecorder(&failingWriter{}, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		rec.Note("note")
	}
	if err := rec.Flush(); err == nil || !strings.Contains(err.Error(), "writing the trace: disk full") {
		t.Errorf("Flush = %v", err)
	}
	if err := rec.Close(); err == nil {
		t.Error("Close hid the write error")
	}
}

// A wrapped connection whose server goes away while the client still reads
// it records where (a ServerEndedNote, for replay), once; one the client
// closes itself records nothing of the kind.
func TestRecorderNotesTheServerGoing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		what   string
		server string
		closed bool // the client closes the connection first
		want   int
	}{
		{"a server that exits", "exit3", false, 1},
		// A server that exits at once may be gone before the client
		// closes: this one ends only when the client has.
		{"a connection the client closed", "exit3-at-eof", true, 0},
	} {
		name := filepath.Join(t.TempDir(), "t.jsonl")
		rec, err := Create(context.Background(), name, RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := transport.StartStdio(helper(tc.server))
		if err != nil {
			t.Fatal(err)
		}
		c := rec.Wrap(conn)
		rec.Note("started") // the trace has an event whatever happens
		if tc.closed {
			c.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for range 2 {
			if _, err := c.Read(ctx); err == nil {
				t.Fatalf("%s: Read succeeded", tc.what)
			} else if ctx.Err() != nil {
				t.Fatalf("%s: Read: %v", tc.what, err)
			}
		}
		cancel()
		c.Close()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := serverEndedNotes(tr); n != tc.want {
			t.Errorf("%s: %d notes that the server closed the connection, want %d: %+v", tc.what, n, tc.want, tr.Events)
		}
		if tc.want > 0 && !strings.Contains(fmt.Sprint(tr.Events), ServerEndedNote+": server exited (exit status 3)") {
			t.Errorf("%s: the note does not say why: %+v", tc.what, tr.Events)
		}
	}
}

// A client that closes the connection while a request of its is still
// unanswered (it gave up) is noted, so that a replay knows the server
// stayed silent rather than went away; a session whose requests were all
// answered is not.
func TestRecorderNotesTheClientLeaving(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		what    string
		answers []string // what the server sends before the client closes
		want    string   // the note, "" for none
	}{
		{"one unanswered", []string{`{"jsonrpc":"2.0","id":1,"result":{}}`},
			ClientEndedNote + " with 1 request(s) unanswered (tools/call)"},
		{"all answered", []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `[{"jsonrpc":"2.0","id":"two","result":{}}]`}, ""},
	} {
		var buf bytes.Buffer
		rec, err := NewRecorder(&buf, RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		client, server := transport.Pipe()
		c := rec.Wrap(client)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		served := make(chan error, 1)
		go func() { // the server reads the two requests, then answers
			for range 2 {
				if _, err := server.Read(ctx); err != nil {
					served <- err
					return
				}
			}
			for _, a := range tc.answers {
				if err := server.Write(ctx, transport.Frame{Data: []byte(a)}); err != nil {
					served <- err
					return
				}
			}
			served <- nil
		}()
		for _, f := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
			`[{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{}},{"jsonrpc":"2.0","method":"notifications/progress"}]`,
		} {
			if err := c.Write(ctx, transport.Frame{Data: []byte(f)}); err != nil {
				t.Fatal(err)
			}
		}
		for range tc.answers {
			if _, err := c.Read(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		cancel()
		c.Close()
		server.Close()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		tr, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		var notes []string
		for _, e := range tr.Events {
			if e.Kind == KindNote {
				notes = append(notes, e.Text)
			}
		}
		if got := strings.Join(notes, "|"); got != tc.want {
			t.Errorf("%s: notes %q, want %q", tc.what, got, tc.want)
		}
	}
}

// A large frame is written verbatim without being copied into its event
// line, and the line is the one a small frame's would be: --record cost a
// large result's size once more. The trace reads back with the frame.
func TestRecorderBigFrameNotCopied(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 8<<20) + `"}]}}`)
	var out bytes.Buffer
	out.Grow(len(frame) + 4096)
	rec, err := NewRecorder(&out, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: frame})
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(frame))/4 {
		t.Errorf("recording a frame of %d bytes allocated %d", len(frame), n)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadOptions{}.Read(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, e := range tr.Events {
		if e.Kind == KindFrame {
			got = e.Data
		}
	}
	if !bytes.Equal(got, frame) {
		t.Errorf("the frame read back differs (%d bytes, want %d)", len(got), len(frame))
	}
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	last := lines[len(lines)-1]
	if !bytes.HasPrefix(last, []byte(`{"t":`)) || !bytes.Contains(last, []byte(`"kind":"frame","dir":"s2c","msg":{"jsonrpc"`)) || !bytes.HasSuffix(last, []byte(`"}]}}}`)) {
		t.Errorf("the frame's line: %.200s … %s", last, last[len(last)-40:])
	}
}
