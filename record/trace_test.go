package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// oddFrames are frames a peer may legitimately (or not) send, which a
// trace must give back byte for byte.
var oddFrames = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{ "jsonrpc" : "2.0", "id" : 1, "method" : "ping" }`,               // extra whitespace
	"{\"jsonrpc\":\"2.0\",\t\"id\":2,\r\"method\":\"x\"}",              // tabs, CR
	`{"method":"x","id":3,"jsonrpc":"2.0"}`,                            // key order
	`{"jsonrpc":"2.0","id":4,"result":{"t":"caf\u00e9 \ud83d\ude00"}}`, // unicode escapes
	`{"jsonrpc":"2.0","id":5,"result":{"t":"café 😀 <b>&amp;</b>"}}`,    // raw unicode and HTML
	"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"a\u2028b\u2029c\"}}",
	`{"jsonrpc":"2.0","id":7,"result":{"n":1.0e+2,"m":-0.0,"big":123456789012345678901234567890}}`,
	`[{"jsonrpc":"2.0","id":8,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`,
	`not json at all`,
	`{"jsonrpc":"2.0","id":9`, // truncated JSON
	"\x1b[31mred\x1b[0m",      // control characters
	"bad utf-8: \xff\xfe",     // not UTF-8
	"",                        // an empty line
	`"just a string"`,
	`  {"jsonrpc":"2.0","id":10,"result":{}}  `, // leading and trailing space
}

func TestTraceRoundTripIsByteExact(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, err := newWriter(&buf, Header{Mcpx: "test", Transport: "stdio", Target: "stdio: x"})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range oddFrames {
		dir := ClientToServer
		if i%2 == 1 {
			dir = ServerToClient
		}
		if err := w.Write(Event{Time: time.Duration(i) * time.Millisecond, Kind: KindFrame, Dir: dir, Data: []byte(f)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Write(Event{Kind: KindStderr, Dir: ServerToClient, Text: "stderr \x1b[1m <line> & \u2028"})
	w.Write(Event{Kind: KindHTTP, Text: "POST /mcp", Meta: &transport.Meta{HTTPMethod: "POST", HTTPStatus: 200, SessionID: "abc", StreamID: "post-1", EventID: "7"}})
	w.Write(Event{Kind: KindNote, Text: "session re-initialized"})

	// Every line is one JSON object.
	for i, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if !strings.HasPrefix(line, "{") || !strings.HasSuffix(line, "}") {
			t.Errorf("line %d is not a JSON object: %s", i+1, line)
		}
	}
	tr, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.Format != Format || tr.Header.Version != Version || tr.Header.Mcpx != "test" || tr.Header.Target != "stdio: x" {
		t.Errorf("header = %+v", tr.Header)
	}
	if len(tr.Events) != len(oddFrames)+3 {
		t.Fatalf("read %d events, want %d", len(tr.Events), len(oddFrames)+3)
	}
	for i, f := range oddFrames {
		e := tr.Events[i]
		if string(e.Data) != f {
			t.Errorf("frame %d: got %q, want %q", i, e.Data, f)
		}
		if e.Time != time.Duration(i)*time.Millisecond || e.Kind != KindFrame {
			t.Errorf("frame %d: time %v kind %q", i, e.Time, e.Kind)
		}
	}
	if e := tr.Events[len(oddFrames)]; e.Text != "stderr \x1b[1m <line> & \u2028" || e.Kind != KindStderr || e.Dir != ServerToClient {
		t.Errorf("stderr event = %+v", e)
	}
	if e := tr.Events[len(oddFrames)+1]; e.Meta == nil || *e.Meta != (transport.Meta{HTTPMethod: "POST", HTTPStatus: 200, SessionID: "abc", StreamID: "post-1", EventID: "7"}) {
		t.Errorf("http event meta = %+v", e.Meta)
	}
	// Compact JSON frames are stored as JSON (readable with jq), others
	// as strings.
	if !strings.Contains(buf.String(), `"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}`) {
		t.Error("a compact frame is not stored as JSON")
	}
	if !strings.Contains(buf.String(), `"msg":{"jsonrpc":"2.0","id":1,"method":"ping"},"raw":"{ \"jsonrpc\" : \"2.0\"`) {
		t.Error("a frame with whitespace is not stored as JSON plus its exact text")
	}

	// Writing the trace again gives the same file.
	var again bytes.Buffer
	if _, err := tr.WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() {
		t.Errorf("rewriting the trace changed it:\n%s\nvs\n%s", again.String(), buf.String())
	}
}

// countingWriter counts Write calls.
type countingWriter struct {
	bytes.Buffer
	calls int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.calls++
	return c.Buffer.Write(p)
}

func TestWriterOneWritePerEvent(t *testing.T) {
	t.Parallel()
	cw := &countingWriter{}
	w, err := newWriter(cw, Header{})
	if err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":1,"result":{"t":"` + strings.Repeat("x", 3<<20) + `"}}`
	for _, f := range []string{`{"a":1}`, big, "not json"} {
		before := cw.calls
		if err := w.Write(Event{Kind: KindFrame, Dir: ClientToServer, Data: []byte(f)}); err != nil {
			t.Fatal(err)
		}
		if cw.calls != before+1 {
			t.Errorf("event took %d writes, want 1", cw.calls-before)
		}
	}
	tr, err := Read(&cw.Buffer)
	if err != nil || len(tr.Events) != 3 || string(tr.Events[1].Data) != big {
		t.Fatalf("reading back: %v, %d events", err, len(tr.Events))
	}
}

func TestReadTornLastLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, _ := newWriter(&buf, Header{})
	w.Write(Event{Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	w.Write(Event{Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
	whole := buf.Bytes()
	// Cut the last line in the middle, as a kill during a write would.
	torn := whole[:len(whole)-10]
	tr, err := Read(bytes.NewReader(torn))
	if err != nil {
		t.Fatalf("a torn last line must be tolerated: %v", err)
	}
	if len(tr.Events) != 1 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "line 3 is cut short") {
		t.Errorf("events %d, warnings %q", len(tr.Events), tr.Warnings)
	}
	// A last line complete but for its newline is fine.
	tr, err = Read(bytes.NewReader(whole[:len(whole)-1]))
	if err != nil || len(tr.Events) != 2 || len(tr.Warnings) != 0 {
		t.Errorf("without the final newline: %v, %d events, %q", err, len(tr.Events), tr.Warnings)
	}
}

// TestReadByteOrderMarkAndCRLF: a trace saved by an editor that adds a
// byte order mark, with the CRLF line ends of a Windows checkout, is read
// whole, from memory and from a file (where sessions are found by offset).
func TestReadByteOrderMarkAndCRLF(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, _ := newWriter(&buf, Header{})
	w.Write(Event{Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	w.Write(Event{Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
	edited := "\uFEFF" + strings.ReplaceAll(buf.String(), "\n", "\r\n")
	tr, err := Read(strings.NewReader(edited))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 2 || len(tr.Warnings) != 0 {
		t.Fatalf("read: %v, %d events, %q", err, len(tr.Events), tr.Warnings)
	}
	name := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(name, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	tf, err := OpenTrace(name)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	s, err := tf.Session(1)
	if err != nil || s == nil || len(s.Events) != 2 || string(s.Events[1].Data) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("opened: %v, %+v", err, s)
	}
}

func TestReadRejects(t *testing.T) {
	t.Parallel()
	header := `{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","redacted":true}` + "\n"
	for name, tc := range map[string]struct {
		in   string
		want string
		is   error
	}{
		"empty":        {"", "the file is empty", ErrNotTrace},
		"not a trace":  {`{"hello":"world"}` + "\n", `not an "mcpx-trace" header`, ErrNotTrace},
		"not json":     {"hello\n", "not an mcpx trace", ErrNotTrace},
		"newer":        {`{"format":"mcpx-trace","version":2}` + "\n", "version 2 is newer than this mcpx understands (version 1); upgrade mcpx", nil},
		"zero version": {`{"format":"mcpx-trace"}` + "\n", "version 0 is not a valid version", nil},
		"bad middle":   {header + "garbage\n" + `{"t":1,"kind":"note","text":"x"}` + "\n", "trace line 2 is not valid JSON (at byte 1: \"garbage\")", nil},
		"bad dir":      {header + `{"t":1,"kind":"frame","dir":"up","msg":{}}` + "\n", `trace line 2: frame with direction "up"`, nil},
		"no kind":      {header + `{"t":1}` + "\n", "trace line 2: event without a kind", nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
	var ve *VersionError
	if _, err := Read(strings.NewReader(`{"format":"mcpx-trace","version":9}` + "\n")); !errors.As(err, &ve) || ve.Got != 9 {
		t.Errorf("want a *VersionError, got %v", err)
	}
}

// TestReadEventProblems: an event line that does not decode is said in
// JSON's terms, naming the line and the member, never with Go's types or
// encoding/json's own words.
func TestReadEventProblems(t *testing.T) {
	t.Parallel()
	header := `{"format":"mcpx-trace","version":1,"minor":2,"redacted":true}` + "\n"
	for _, tc := range []struct{ line, want string }{
		{`{"t":"abc","s":1,"kind":"frame","dir":"c2s","msg":{}}`, `trace line 2: its "t" is a string, not a whole number of microseconds`},
		{`{"t":1.5,"s":1,"kind":"note","text":"x"}`, `trace line 2: its "t" is 1.5, not a whole number of microseconds`},
		{`{"t":1e400,"s":1,"kind":"note","text":"x"}`, `trace line 2: its "t" is 1e400, not a whole number of microseconds`},
		{`{"t":1,"s":"1","kind":"note","text":"x"}`, `trace line 2: its "s" is a string, not a session number (a whole number from 1)`},
		{`{"t":1,"s":-1,"kind":"note","text":"x"}`, `trace line 2: its "s" is -1, not a session number (a whole number from 1)`},
		{`{"t":1,"s":1,"kind":5}`, `trace line 2: its "kind" is a number, not a string`},
		{`{"t":1,"s":1,"kind":"note","text":7}`, `trace line 2: its "text" is a number, not a string`},
		{`{"t":1,"s":1,"kind":"frame","dir":["c2s"],"msg":{}}`, `trace line 2: its "dir" is an array, not a string`},
		{`{"t":1,"s":1,"kind":"frame","dir":"c2s","raw":5}`, `trace line 2: its "raw" is a number, not a string`},
		{`{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{},"prelude":"yes"}`, `trace line 2: its "prelude" is a string, not true or false`},
		{`{"t":1,"s":1,"kind":"stream","retry":"x"}`, `trace line 2: its "retry" is a string, not a whole number of milliseconds`},
		{`{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","method":"x"},"meta":{"httpStatus":"200"}}`, `trace line 2: its "meta.httpStatus" is a string, not an integer`},
		{`{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","method":"x"},"route":[1]}`, `trace line 2: its "route" is an array, not an object`},
		{`{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{},"route":{"params":[{"name":1}]}}`, `trace line 2: its "route.params.name" is a number, not a string`},
		{`{"t":1,"s":1,"kind":"session","session":"x"}`, `trace line 2: its "session" is a string, not an object`},
		{`{"t":1,"s":1,"kind":"view","dir":"h2v","msg":{},"view":{"id":3}}`, `trace line 2: its "view.id" is a number, not a string`},
		{`[1,2]`, `trace line 2 is an array, not an object (a trace event)`},
		{`{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{broken`, `trace line 2 is not valid JSON (at byte 48: "broken")`},
		{`{"t":1,"s":1,"kind":"note" "text":"x"}`, `trace line 2 is not valid JSON (at byte 28: "\"text\":\"x\"}")`},
		{`{"t":1,"s":1,"kind":"frame","dir":"c2s","b64":"%%%"}`, `trace line 2: its "b64" is not base64 (at byte 0 of its value)`},
	} {
		// An event that does not decode was edited: the error says what
		// to do about it too.
		want := tc.want + ": correct the line, or record the trace again"
		_, err := Read(strings.NewReader(header + tc.line + "\n"))
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", tc.line, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "json:") || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "record.")) {
			t.Errorf("%s: %v speaks Go", tc.line, err)
		}
	}
	// A stable trace whose last event is cut short mid-frame.
	stable := `{"format":"mcpx-trace","version":1,"minor":3,"stable":true,"redacted":true}` + "\n" +
		`{"s":1,"kind":"frame","dir":"s2c","msg":{` + "\n" + `    "id": 1,` + "\n"
	if _, err := Read(strings.NewReader(stable)); err == nil || err.Error() != "trace line 2 is not valid JSON (it is cut short: its JSON does not end): correct the line, or record the trace again" {
		t.Errorf("cut stable trace: %v", err)
	}
}

// TestReadHandDamage: a trace a repository or a hand damaged is said to
// be so, at the line to look at, with what to do: a git merge conflict
// (whose markers fall inside a stable trace's event laid out on several
// lines, where the event before the marker is cut short by it), a file
// a formatter laid out on several lines, as a stable trace is not, a
// Git LFS pointer checked out in its place, a file saved as UTF-16, two
// traces joined into one file, blank lines before the header (not an
// empty file).
func TestReadHandDamage(t *testing.T) {
	t.Parallel()
	header := `{"format":"mcpx-trace","version":1,"minor":2,"redacted":true}` + "\n"
	note := `{"t":1,"s":1,"kind":"note","text":"x"}` + "\n"
	stable := `{"format":"mcpx-trace","version":1,"minor":3,"stable":true,"redacted":true}` + "\n"
	const conflict = `is a git merge conflict marker (%q): resolve the conflict by keeping one side's trace whole (git checkout --ours or --theirs), or record the trace again`
	const laidOut = `(its JSON goes on over the next lines, but a trace holds each event on one line: the file was reformatted; put each event back on one line, as jq -c . does, or record the trace again)`
	for name, tc := range map[string]struct {
		in, want string
		notTrace bool
	}{
		"conflict at the header": {"<<<<<<< HEAD\n" + header + note + "=======\n" + header + note + ">>>>>>> other\n",
			"not an mcpx trace: line 1 " + fmt.Sprintf(conflict, "<<<<<<< HEAD"), true},
		"conflict between events": {header + note + "<<<<<<< HEAD\n" + note + "=======\n" + note + ">>>>>>> other\n",
			"trace line 3 " + fmt.Sprintf(conflict, "<<<<<<< HEAD"), false},
		"diff3 marker, CRLF": {header + note + "||||||| base\r\n" + note, "trace line 3 " + fmt.Sprintf(conflict, "||||||| base"), false},
		"conflict inside a laid-out event": {stable + `{"s":1,"kind":"frame","dir":"s2c","msg":{` + "\n" + `    "id": 1,` + "\n" +
			"<<<<<<< HEAD\n" + `    "result": {}` + "\n" + "=======\n" + `    "result": {"x": 1}` + "\n" + ">>>>>>> other\n" + "  }}\n",
			"trace line 4 " + fmt.Sprintf(conflict, "<<<<<<< HEAD"), false},
		"reformatted header": {"{\n  \"format\": \"mcpx-trace\",\n  \"version\": 1\n}\n",
			"not an mcpx trace: its header goes on over the next lines, but a trace holds each event on one line: the file was reformatted; put each event back on one line, as jq -c . does, or record the trace again", true},
		"Git LFS pointer": {"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n",
			"not an mcpx trace: it is a Git LFS pointer, not the trace it stands for: fetch the trace (git lfs pull)", true},
		"UTF-16": {"\xff\xfe{\x00\"\x00f\x00\n\x00",
			"not an mcpx trace: it is UTF-16 text (it begins with a UTF-16 byte order mark), but a trace is UTF-8: convert it back to UTF-8 (iconv -f UTF-16 -t UTF-8), or record the trace again", true},
		"traces joined": {header + note + header + note,
			"trace line 3 is the header of another trace: a trace has one header, first (traces joined with cat, or merged by git's union driver, are not one trace); keep the traces as separate files, or record the trace again", false},
		"blank lines first": {"\n  \n" + header + note,
			"not an mcpx trace: it begins with blank lines, but its header must be its first line: remove the 2 blank line(s) before line 3", true},
		"only blank lines":  {"\n \n", "not an mcpx trace: the file holds only blank lines", true},
		"reformatted event": {header + "{\n  \"t\": 1,\n  \"kind\": \"note\"\n}\n", "trace line 2 is not valid JSON " + laidOut, false},
		// Cut short mid-file, not where a formatter breaks a line: said so.
		"cut short mid-file": {header + `{"t":1,"s":1,"kind":"note","te` + "\n" + note, "trace line 2 is not valid JSON (it is cut short: its JSON does not end): correct the line, or record the trace again", false},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error:\n got %v\nwant %s", err, tc.want)
			}
			if errors.Is(err, ErrNotTrace) != tc.notTrace {
				t.Errorf("errors.Is(err, ErrNotTrace) = %v, want %v", !tc.notTrace, tc.notTrace)
			}
			// Indexing a file for sessions (verify, replay, append) says the same.
			_, err = ReadOptions{}.Index(strings.NewReader(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("Index: error:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestHeaderCheck: a header setting that cannot be used (an ignore, a
// normalizer or a redaction path that does not parse) is found by
// Header.Check, before anything uses it, with the setting named.
func TestHeaderCheck(t *testing.T) {
	t.Parallel()
	good := Header{Format: Format, Version: Version, Redacted: true, Ignore: []string{"tools/call:$.result._meta"},
		Normalize: []Normalizer{{Builtin: BuiltinUUID}, {Pattern: "id-[0-9]+", Replace: "<id>"}}, Redact: []string{"$.params.arguments.secret"}}
	if err := good.Check(); err != nil {
		t.Errorf("good header: %v", err)
	}
	for _, tc := range []struct {
		h      Header
		member string
		want   string
	}{
		{Header{Normalize: []Normalizer{{Pattern: "(", Replace: "x"}}}, "normalize", `the normalizers of its header (line 1): normalizer pattern "(": error parsing regexp: missing closing ): ` + "`(`" + `; correct or remove it there`},
		{Header{Normalize: []Normalizer{{Builtin: "bogus"}}}, "normalize", `the normalizers of its header (line 1): normalizer "bogus": no such built-in`},
		{Header{Ignore: []string{"$.a[?@.x]"}}, "ignore", `the ignores of its header (line 1): JSONPath "$.a[?@.x]": `},
		{Header{Redacted: true, Redact: []string{"not a path"}}, "redact", `the redaction paths of its header (line 1): JSONPath "not a path" must start with $`},
	} {
		err := tc.h.Check()
		var he *HeaderError
		if !errors.As(err, &he) || he.Member != tc.member || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want a *HeaderError about %q: %s", tc.h, err, tc.member, tc.want)
		}
	}
}

// A header member with a value of the wrong JSON type is named, with the
// type it has and the one it should have, by both readers; the error
// still matches ErrNotTrace. A line that is no header stays one.
func TestMistypedHeader(t *testing.T) {
	t.Parallel()
	const head = `{"format":"mcpx-trace","version":1,"minor":3,"redacted":true`
	const body = "\n" + `{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}` + "\n"
	dir := t.TempDir()
	for i, tc := range []struct {
		header, member, want string
	}{
		{head + `,"normalize":"x"}`, "normalize", `its header (line 1): "normalize" is a string, not an array; correct it there`},
		{head + `,"normalize":{"builtin":"uuid"}}`, "normalize", `"normalize" is an object, not an array`},
		{head + `,"normalize":[{"pattern":1,"replace":"x"}]}`, "normalize.pattern", `"normalize.pattern" is a number, not a string`},
		{head + `,"normalize":[1]}`, "normalize", `"normalize" holds a number where an object belongs`},
		{head + `,"ignore":"$.a"}`, "ignore", `"ignore" is a string, not an array`},
		{head + `,"redact":[true]}`, "redact", `"redact" holds a boolean where a string belongs`},
		{`{"format":"mcpx-trace","version":"1"}`, "version", `"version" is a string, not an integer`},
		{head + `,"stable":1}`, "stable", `"stable" is a number, not a boolean`},
		{`{"created":5,"format":"mcpx-trace","version":1}`, "created", `"created" is a number, not a string`},
		{head + `,"created":"yesterday"}`, "created", `"created" is "yesterday", not an RFC 3339 time`},
	} {
		name := filepath.Join(dir, fmt.Sprintf("t%d.jsonl", i))
		os.WriteFile(name, []byte(tc.header+body), 0o644)
		_, rerr := ReadFile(name)
		tf, oerr := OpenTrace(name)
		if oerr == nil {
			tf.Close()
		}
		for _, err := range []error{rerr, oerr} {
			var he *HeaderError
			if !errors.As(err, &he) || !he.Mistyped || he.Member != tc.member || !strings.HasPrefix(err.Error(), name+": ") ||
				!strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrNotTrace) {
				t.Errorf("%s: %v, want a *HeaderError about %q saying %s", tc.header, err, tc.member, tc.want)
			}
		}
	}
	for _, line := range []string{`{"format":"other","version":"1"}`, `{"version":"1"}`, `["mcpx-trace"]`} {
		name := filepath.Join(dir, "other.jsonl")
		os.WriteFile(name, []byte(line+body), 0o644)
		_, err := ReadFile(name)
		var he *HeaderError
		if errors.As(err, &he) || !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), `its first line is not an "mcpx-trace" header`) {
			t.Errorf("%s: %v, want no header", line, err)
		}
	}
}

func TestReadFileNamesTheFile(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(name, []byte("nope\n"), 0o644)
	_, err := ReadFile(name)
	if err == nil || !strings.HasPrefix(err.Error(), name+": ") {
		t.Errorf("error %v does not name the file", err)
	}
	// A directory is said to be one, by both readers.
	dir := t.TempDir()
	_, err = ReadFile(dir)
	if want := dir + " is not a regular file (a directory): give a trace file"; err == nil || err.Error() != want || !errors.Is(err, syscall.EISDIR) {
		t.Errorf("ReadFile(dir): %v, want %q", err, want)
	}
	if _, err := OpenTrace(dir); err == nil || !errors.Is(err, syscall.EISDIR) {
		t.Errorf("OpenTrace(dir): %v", err)
	}
}

// A trace of a newer minor version is read, with a warning, first among
// them, that what that version added is ignored; reading one of this
// package's minor, or an older one, warns of nothing. Before, a newer
// one was read without a word, and a replay or a verification could
// differ from the newer version's.
func TestNewerMinorIsWarnedOf(t *testing.T) {
	trace := func(minor int) string {
		return fmt.Sprintf(`{"format":"mcpx-trace","version":1,"minor":%d,"transport":"stdio","target":"helper","redacted":true}`, minor) + "\n" +
			`{"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
			`{"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"res`
	}
	want := fmt.Sprintf("the trace is of format 1.%d, newer than this reader's 1.%d: what 1.%d added is ignored", Minor+5, Minor, Minor+5)
	for _, minor := range []int{Minor + 5, Minor, 2} {
		tr, err := Read(strings.NewReader(trace(minor)))
		if err != nil {
			t.Fatal(err)
		}
		tf, err := ReadOptions{}.Index(strings.NewReader(trace(minor)))
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]string{tr.Warnings, tf.Warnings} {
			if minor > Minor && (len(got) != 2 || got[0] != want || !strings.Contains(got[1], "cut short")) {
				t.Errorf("minor %d: warnings %q, want %q first, then the line cut short", minor, got, want)
			}
			if minor <= Minor && (len(got) != 1 || !strings.Contains(got[0], "cut short")) {
				t.Errorf("minor %d: warnings %q, want only the line cut short", minor, got)
			}
		}
	}
}

// IsTrace tells a trace by its header, also one a merge conflict, blank
// lines or a formatter broke: not a JSON file of another format, an empty
// file, a directory or a missing file.
func TestIsTrace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{write("t.jsonl", `{"format":"mcpx-trace","version":1}`+"\n"), true},
		{write("conflict.jsonl", "<<<<<<< HEAD\n"+`{"format":"mcpx-trace","version":1}`+"\n=======\n"), true},
		{write("blank-first.jsonl", "\n\n"+`{"format":"mcpx-trace","version":1}`+"\n"), true},
		{write("formatted.json", "{\n  \"format\": \"mcpx-trace\",\n  \"version\": 1\n}\n"), true},
		{write("other.json", `{"format":"other"}`+"\n"), false},
		{write("empty", ""), false},
		{write("report.xml", "<testsuites/>\n"), false},
		{dir, false},
		{filepath.Join(dir, "missing"), false},
	} {
		if got := IsTrace(tc.name); got != tc.want {
			t.Errorf("IsTrace(%s) = %v", filepath.Base(tc.name), got)
		}
	}
}

// Stream gives the events Read reads, in order, with the same warnings
// (a last line cut short, a newer minor), and the errors naming the line;
// StreamFile names the file, and returns what the callback returns as it
// is.
func TestStreamIsRead(t *testing.T) {
	t.Parallel()
	in := `{"format":"mcpx-trace","version":1,"minor":9,"redacted":true}` + "\n" +
		`{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"t":2,"s":2,"kind":"note","text":"x"}` + "\n" +
		`{"t":3,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"res`
	whole, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var h Header
	var events []Event
	warnings, err := ReadOptions{}.Stream(strings.NewReader(in), func(hd Header) { h = hd }, func(e *Event) error {
		events = append(events, *e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if h.Minor != 9 || len(events) != len(whole.Events) || !slices.Equal(warnings, whole.Warnings) || len(warnings) != 2 {
		t.Fatalf("Stream: header minor %d, %d events, warnings %q; Read: %d events, warnings %q", h.Minor, len(events), warnings, len(whole.Events), whole.Warnings)
	}
	for i := range events {
		if string(events[i].Data) != string(whole.Events[i].Data) || events[i].Session != whole.Events[i].Session {
			t.Errorf("event %d: %s, Read's %s", i, events[i].Data, whole.Events[i].Data)
		}
	}
	broken := strings.Replace(in, `"kind":"note"`, `kind:"note"`, 1)
	if _, err := (ReadOptions{}).Stream(strings.NewReader(broken), nil, func(*Event) error { return nil }); err == nil || !strings.HasPrefix(err.Error(), "trace line 3 is not valid JSON") {
		t.Errorf("broken line: %v", err)
	}
	name := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(name, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (ReadOptions{}).StreamFile(name, nil, func(*Event) error { return nil }); err == nil || !strings.HasPrefix(err.Error(), name+": trace line 3 ") {
		t.Errorf("StreamFile: %v", err)
	}
	stop := errors.New("enough")
	if _, err := (ReadOptions{}).StreamFile(name, nil, func(*Event) error { return stop }); err != stop {
		t.Errorf("StreamFile with a callback that stops: %v, want its error as it is", err)
	}
}

// A TraceStream read again gives the events its first read gave, though
// the trace was recorded to meanwhile (an event more, and a line cut
// short the first time made whole) or replaced by another trace: trace
// show goes over a trace twice, and its second pass must see the trace
// its first one did (which requests are never answered, by entry).
func TestTraceStreamRereadsTheSameEvents(t *testing.T) {
	t.Parallel()
	header := `{"format":"mcpx-trace","version":1,"minor":3,"redacted":true}` + "\n"
	req := `{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}` + "\n"
	resp := `{"t":2,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}` + "\n"
	name := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(name, []byte(header+req+resp[:20]), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ReadOptions{}.OpenStream(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read := func() (methods []string, warnings []string) {
		t.Helper()
		w, err := s.Stream(nil, func(e *Event) error {
			msgs, _ := e.Messages()
			methods = append(methods, msgs[0].Method)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return methods, w
	}
	first, w := read()
	if len(first) != 1 || len(w) != 1 {
		t.Fatalf("first read: %q, warnings %q; want the request, and the response cut short", first, w)
	}
	// The recording goes on: the response is whole, and more follows.
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(resp[20:] + req); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if again, w2 := read(); !slices.Equal(again, first) || !slices.Equal(w2, w) {
		t.Errorf("read again after the trace grew: %q, warnings %q; want %q, %q", again, w2, first, w)
	}
	if runtime.GOOS == "windows" {
		return // (a file open is not renamed over there)
	}
	// Another trace renamed over it.
	other := filepath.Join(t.TempDir(), "u.jsonl")
	if err := os.WriteFile(other, []byte(header+resp+resp+resp), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, name); err != nil {
		t.Fatal(err)
	}
	if again, _ := read(); !slices.Equal(again, first) {
		t.Errorf("read again after the trace was replaced: %q, want %q", again, first)
	}
}

// A nil trace, reader, writer or connection is an error that matches
// ErrNilArgument and names what was nil, not a panic (one in a goroutine
// of Serve would end the test binary of the program that made the
// mistake).
func TestNilArgumentsAreErrors(t *testing.T) {
	t.Parallel()
	tr, err := ReadFile("testdata/greeter.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nilTrace *Trace
	var nilFile *TraceFile
	for name, call := range map[string]func() error{
		"Read":               func() error { _, err := Read(nil); return err },
		"ReadOptions.Index":  func() error { _, err := ReadOptions{}.Index(nil); return err },
		"NewRecorder":        func() error { _, err := NewRecorder(nil, RecorderOptions{}); return err },
		"NewReplayer":        func() error { _, err := NewReplayer(nil, ReplayOptions{}); return err },
		"NewReplayerSource":  func() error { _, err := NewReplayerSource(nilFile, ReplayOptions{}); return err },
		"Replayer.Serve":     func() error { return rp.Serve(t.Context(), nil) },
		"Verify":             func() error { _, err := Verify(t.Context(), nil, nil, VerifyOptions{}); return err },
		"VerifySessions":     func() error { _, err := VerifySessions(t.Context(), nil, nil, VerifyOptions{}); return err },
		"DiffTraces":         func() error { _, err := DiffTraces(tr, nilTrace, DiffOptions{}); return err },
		"WriteStable writer": func() error { return WriteStable(nil, tr) },
		"WriteStable trace":  func() error { return WriteStable(io.Discard, nil) },
	} {
		err := call()
		if !errors.Is(err, ErrNilArgument) || !strings.HasPrefix(err.Error(), "record.") || !strings.HasSuffix(err.Error(), " is nil") {
			t.Errorf("%s with nil: %v, want an error matching ErrNilArgument that names what is nil", name, err)
		}
	}
}
