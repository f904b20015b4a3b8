package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// A minor-2 trace: sessions that overlap in time, a prelude, stream
// metadata, an HTTP refusal tied to its request, and the header's ignores
// and normalizers, all read back as written, from memory and a session at
// a time from a file.
func TestTraceSessionsFormat(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	h := Header{Transport: "http", Target: "http: http://127.0.0.1:1/mcp", Redacted: true,
		Ignore:    []string{"tools/call:$.result._meta", "$.params._meta"},
		Normalize: []Normalizer{{Builtin: "uuid"}, {Pattern: `sess-[0-9]+`, Replace: "<sess>"}}}
	w, err := newWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	ev := []Event{
		{Session: 1, Kind: KindSession, Text: "http: POST from 127.0.0.1:5", SessionInfo: &SessionInfo{Transport: "http", Target: "http://127.0.0.1:1/mcp", Client: "127.0.0.1:5"}},
		{Session: 1, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)},
		{Session: 2, Kind: KindSession, Text: "repl", SessionInfo: &SessionInfo{Transport: "stdio", Target: "x", Prelude: true}},
		{Session: 2, Kind: KindFrame, Dir: ClientToServer, Prelude: true, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)},
		{Session: 1, Kind: KindStream, Text: "SSE post-1: priming event", Meta: &transport.Meta{StreamID: "post-1", EventID: "0"}, Retry: 1500 * time.Millisecond},
		{Session: 1, Kind: KindHTTP, Text: "Bad Request: no", Re: json.RawMessage(`"a"`), Meta: &transport.Meta{HTTPStatus: 400, ContentType: "text/plain"}},
		{Session: 2, Kind: KindFrame, Dir: ServerToClient, Prelude: true, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
	}
	for _, e := range ev {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for _, want := range []string{
		`"minor":4`, `"ignore":["tools/call:$.result._meta","$.params._meta"]`, `"normalize":[{"builtin":"uuid"},{"pattern":"sess-[0-9]+","replace":"<sess>"}]`,
	} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("header %s lacks %s", lines[0], want)
		}
	}
	for i, want := range []string{
		`{"t":0,"s":1,"kind":"session","text":"http: POST from 127.0.0.1:5","session":{"transport":"http","target":"http://127.0.0.1:1/mcp","client":"127.0.0.1:5"}}`,
		`{"t":0,"s":2,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize"},"prelude":true}`,
		`{"t":0,"s":1,"kind":"stream","text":"SSE post-1: priming event","meta":{"streamId":"post-1","eventId":"0"},"retry":1500}`,
		`{"t":0,"s":1,"kind":"http","text":"Bad Request: no","meta":{"httpStatus":400,"contentType":"text/plain"},"re":"a"}`,
	} {
		if n := []int{1, 4, 5, 6}[i]; lines[n] != want {
			t.Errorf("line %d:\n got %s\nwant %s", n+1, lines[n], want)
		}
	}

	check := func(t *testing.T, hdr Header, s1, s2 *Session) {
		t.Helper()
		if len(hdr.Ignore) != 2 || hdr.Ignore[0] != "tools/call:$.result._meta" || len(hdr.Normalize) != 2 || hdr.Normalize[1].Replace != "<sess>" {
			t.Errorf("header %+v", hdr)
		}
		if s1.N != 1 || s1.Info.Client != "127.0.0.1:5" || len(s1.Events) != 4 {
			t.Fatalf("session 1: %+v", s1)
		}
		if e := s1.Events[1]; e.Kind != KindStream || e.Retry != 1500*time.Millisecond || e.Meta.EventID != "0" {
			t.Errorf("stream event %+v", e)
		}
		if e := s1.Events[2]; e.Kind != KindHTTP || string(e.Re) != `"a"` || e.Meta.HTTPStatus != 400 {
			t.Errorf("http event %+v", e)
		}
		if s2.N != 2 || !s2.Info.Prelude || s2.Info.Transport != "stdio" || len(s2.Events) != 2 || !s2.Events[0].Prelude || !s2.Events[1].Prelude {
			t.Errorf("session 2: %+v", s2)
		}
	}
	tr, err := Read(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != 2 {
		t.Fatalf("%d sessions", len(ss))
	}
	check(t, tr.Header, ss[0], ss[1])

	// From a file, a session at a time; the last line cut short.
	name := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(name, append(bytes.Clone(b.Bytes()), `{"t":9,"s":2,"kind":"fra`...), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := OpenTrace(name)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	if len(tf.Index) != 2 || len(tf.Warnings) != 1 || tf.Index[0].Events != 5 || tf.Index[1].Text != "repl" {
		t.Fatalf("index %+v, warnings %q", tf.Index, tf.Warnings)
	}
	s1, err := tf.Session(1)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := tf.Session(2)
	if err != nil {
		t.Fatal(err)
	}
	check(t, tf.Header, s1, s2)
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []int
	for s, err := range (ReadOptions{}).Sessions(f) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.N)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("sessions %v", got)
	}
}

// A trace written before sessions existed is one session, described by
// its header, and a copy of it stays as it was.
func TestTraceOldIsOneSession(t *testing.T) {
	t.Parallel()
	old := `{"format":"mcpx-trace","version":1,"minor":1,"created":"2026-01-01T00:00:00Z","transport":"stdio","target":"stdio: x","redacted":true}` + "\n" +
		`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"t":2,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\n"
	tr, err := Read(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != 1 || ss[0].N != 1 || ss[0].Info.Target != "stdio: x" || len(ss[0].Events) != 2 {
		t.Fatalf("sessions %+v", ss)
	}
	var b bytes.Buffer
	if _, err := tr.WriteTo(&b); err != nil || b.String() != old {
		t.Errorf("copy:\n%s(%v)", b.String(), err)
	}
	tf, err := (ReadOptions{}).Index(strings.NewReader(old))
	if err != nil || len(tf.Index) != 1 || tf.Index[0].Events != 2 {
		t.Fatalf("index %+v %v", tf, err)
	}
	s, err := tf.Session(1)
	if err != nil || len(s.Events) != 2 {
		t.Fatalf("session %+v %v", s, err)
	}
}

func TestParseIgnoreAndNormalizers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"$.params._meta":                  "|$.params._meta",
		"tools/call:$.result._meta":       "tools/call|$.result._meta",
		" notifications/message:$..data ": "notifications/message|$..data",
	} {
		ig, err := ParseIgnore(in)
		if err != nil || ig.Method+"|"+ig.Path.String() != want {
			t.Errorf("ParseIgnore(%q) = %+v, %v; want %s", in, ig, err, want)
		}
	}
	for _, bad := range []string{"tools/call", "x:$[?(@)]", ""} {
		if _, err := ParseIgnore(bad); err == nil {
			t.Errorf("ParseIgnore(%q) accepted", bad)
		}
	}
	ns, err := CompileNormalizers([]Normalizer{{Builtin: BuiltinUUID}, {Builtin: BuiltinTimestamp}, {Builtin: BuiltinSessionID}, {Pattern: `n=(\d+)`, Replace: "n=#"}},
		[]string{"abc123"})
	if err != nil {
		t.Fatal(err)
	}
	got := ns.String("id 123e4567-E89B-12d3-a456-426614174000 at 2026-11-01T10:00:00.5Z in abc123, n=42")
	if want := "id <uuid> at <timestamp> in <session-id>, n=#"; got != want {
		t.Errorf("normalized %q, want %q", got, want)
	}
	if _, err := CompileNormalizers([]Normalizer{{Builtin: "nope"}}, nil); err == nil {
		t.Error("an unknown built-in was accepted")
	}
	if _, err := CompileNormalizers([]Normalizer{{Pattern: "("}}, nil); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

// readAtRecorder is a trace file that remembers the largest single read
// made of it.
type readAtRecorder struct {
	r       *bytes.Reader
	largest int
}

func (r *readAtRecorder) ReadAt(p []byte, off int64) (int, error) {
	r.largest = max(r.largest, len(p))
	return r.r.ReadAt(p, off)
}

// A long line (largeLine bytes or more) of a session is read at once,
// into a slice of its size, rather than assembled and copied (twice its
// size while it was): sessions read a session at a time, interleaved with
// another session's lines and long lines, are what Read reads; and a
// long line the file no longer has where the index found it is an error,
// not another line.
func TestTraceFileLongLines(t *testing.T) {
	// Lines of 256 KiB are long here (not 16 MiB: the race detector took
	// seconds over them), still longer than any one read of a
	// LineReader. Not parallel: the parallel tests run after it.
	defer func(n int) { largeLine = n }(largeLine)
	largeLine = 256 << 10
	big := func(c string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"` + strings.Repeat(c, largeLine) + `"}]}}`)
	}
	var b bytes.Buffer
	w, err := newWriter(&b, Header{Transport: "stdio", Target: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ev := []Event{
		{Session: 1, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)},
		{Session: 2, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)},
		{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: big("a")},
		{Session: 2, Kind: KindFrame, Dir: ServerToClient, Data: big("b")},
		{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: big("c")},
		{Session: 1, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)},
		{Session: 2, Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message"}`)},
	}
	for _, e := range ev {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Read(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	f := &readAtRecorder{r: bytes.NewReader(b.Bytes())}
	tf, err := ReadOptions{}.Index(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(tf.long) != 3 {
		t.Fatalf("the index found %d long lines, want 3", len(tf.long))
	}
	for _, n := range []int{1, 2} {
		f.largest = 0
		s, err := tf.Session(n)
		if err != nil {
			t.Fatal(err)
		}
		var got, streamed []Event
		for _, e := range want.Events {
			if e.Session == n && e.Kind != KindSession {
				got = append(got, e)
			}
		}
		if len(s.Events) != len(got) {
			t.Fatalf("session %d: %d events, want %d", n, len(s.Events), len(got))
		}
		for i := range got {
			if !bytes.Equal(s.Events[i].Data, got[i].Data) || s.Events[i].Dir != got[i].Dir {
				t.Errorf("session %d event %d: %.60s, want %.60s", n, i, s.Events[i].Data, got[i].Data)
			}
		}
		if f.largest <= largeLine {
			t.Errorf("session %d: the largest read was %d bytes: its long lines were not read at once", n, f.largest)
		}
		for e, err := range tf.streamSession(tf.Index[n-1]) {
			if err != nil {
				t.Fatal(err)
			}
			streamed = append(streamed, e)
		}
		if len(streamed) != len(got) || !bytes.Equal(streamed[len(streamed)-1].Data, got[len(got)-1].Data) {
			t.Errorf("session %d streamed %d events, want %d", n, len(streamed), len(got))
		}
	}
	// The file changed under the index: a long line moved.
	changed := bytes.Replace(b.Bytes(), []byte(`"notifications/cancelled"`), []byte(`"x"`), 1)
	changed = append([]byte(`{"t":0,"s":1,"kind":"note","text":"moved"}`+"\n"), changed...)
	tf.r = bytes.NewReader(changed)
	if _, err := tf.Session(1); err == nil {
		t.Error("a session read from a changed file: no error")
	}
}

// With ReadOptions.Sum, Index gives the SHA-256 of every byte of the
// trace it read, a last line cut short included, so that a trace opened
// again is known to be the one read; without it, none.
func TestTraceFileSumIsOfTheBytesRead(t *testing.T) {
	t.Parallel()
	trace := `{"format":"mcpx-trace","version":1,"minor":1,"created":"2026-01-01T00:00:00Z","transport":"stdio","target":"stdio: x","redacted":true}` + "\n" +
		`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"t":2,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\n" +
		`{"t":3,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"meth`
	for _, text := range []string{trace, strings.Replace(trace, `"id":1,"result"`, `"id":1,"result" `, 1)} {
		tf, err := ReadOptions{Sum: true}.Index(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if tf.Sum != sha256.Sum256([]byte(text)) {
			t.Errorf("sum %x, want the SHA-256 of the trace's bytes, %x", tf.Sum, sha256.Sum256([]byte(text)))
		}
	}
	tf, err := ReadOptions{}.Index(strings.NewReader(trace))
	if err != nil || tf.Sum != [sha256.Size]byte{} {
		t.Errorf("sum %x without Sum (%v)", tf.Sum, err)
	}
}

// Closing a trace file twice is no error (a deferred Close after an
// explicit one), and reading it after is one.
func TestTraceFileCloseIdempotent(t *testing.T) {
	t.Parallel()
	tf, err := OpenTrace("testdata/greeter.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := tf.Close(); err != nil {
			t.Errorf("Close %d: %v", i+1, err)
		}
	}
	if _, err := tf.Session(1); err == nil {
		t.Error("a session was read from a closed trace file")
	}
}

// A trace file changed since it was indexed, in a way that leaves every
// line of it an event (cut short after a line, a line of the session
// blanked), is an error to the reading of a session, whole or streamed
// (an export passes over each session twice), not a session with fewer
// events than the index counted.
func TestTraceFileChangedSinceIndexed(t *testing.T) {
	t.Parallel()
	trace := `{"format":"mcpx-trace","version":1,"minor":2,"created":"2026-01-01T00:00:00Z","transport":"stdio","target":"stdio: x","redacted":true}` + "\n" +
		`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"t":2,"s":2,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"t":3,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\n" +
		`{"t":4,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/list"}}` + "\n" +
		`{"t":5,"s":2,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\n"
	last := `{"t":4,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/list"}}` + "\n"
	for name, changed := range map[string]string{
		"cut after a line": trace[:strings.Index(trace, last)],
		"a line blanked":   strings.Replace(trace, last, strings.Repeat(" ", len(last)-1)+"\n", 1),
	} {
		tf, err := ReadOptions{}.Index(strings.NewReader(trace))
		if err != nil {
			t.Fatal(err)
		}
		tf.r = strings.NewReader(changed)
		if s, err := tf.Session(1); err == nil {
			t.Errorf("%s: session 1 read whole with %d events and no error", name, len(s.Events))
		}
		_, events, err := SessionEvents(tf, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var serr error
		for _, err := range events {
			if err != nil {
				serr = err
				break
			}
			n++
		}
		if serr == nil {
			t.Errorf("%s: session 1 streamed with %d events and no error", name, n)
		}
		// Session 2, whose lines did not change, still reads.
		if s, err := tf.Session(2); name == "a line blanked" && (err != nil || len(s.Events) != 2) {
			t.Errorf("%s: session 2: %v", name, err)
		}
	}
}
