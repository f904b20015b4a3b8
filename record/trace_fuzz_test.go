package record

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
	"github.com/mcpx-dev/mcpx/transport"
)

// traceSeeds are whole traces: the example trace of the package, one
// written by Writer with every kind of event, and hand-edited or damaged
// ones.
func traceSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	if b, err := os.ReadFile(filepath.Join("testdata", "greeter.jsonl")); err == nil {
		seeds = append(seeds, b)
	}
	var buf bytes.Buffer
	w, err := newWriter(&buf, Header{Mcpx: "fuzz", Transport: "http", Target: "http://127.0.0.1:1/mcp", Redact: []string{"$..secret"}})
	if err != nil {
		f.Fatal(err)
	}
	for i, fr := range fuzzing.Frames() {
		e := Event{Time: time.Duration(i) * time.Millisecond, Kind: KindFrame, Dir: ClientToServer, Data: fr}
		if i%2 == 1 {
			e.Dir, e.Meta = ServerToClient, &transport.Meta{HTTPMethod: "POST", HTTPStatus: 200, StreamID: "post-1", EventID: "e1"}
		}
		if i%5 == 0 {
			e.Route = &transport.Route{ProtocolVersion: "2026-07-28", Method: "tools/call", Name: "get_weather",
				Params: []transport.RouteParam{{Name: "Region", Value: "eu west"}}}
		}
		if err := w.Write(e); err != nil {
			f.Fatal(err)
		}
	}
	for _, e := range []Event{
		{Kind: KindStderr, Dir: ServerToClient, Text: "listening\x1b[0m \u2028"},
		{Kind: KindNote, Text: "session re-initialized"},
		{Kind: KindHTTP, Text: "POST http://127.0.0.1:1/mcp", Meta: &transport.Meta{HTTPMethod: "POST", URL: "http://127.0.0.1:1/mcp"}},
	} {
		if err := w.Write(e); err != nil {
			f.Fatal(err)
		}
	}
	seeds = append(seeds, buf.Bytes())
	head := `{"format":"mcpx-trace","version":1,"minor":1,"created":"2026-01-02T03:04:05Z","redacted":true}` + "\n"
	for _, s := range []string{
		head + `{"t":1,"kind":"frame","dir":"c2s","msg":{"a": 1},"raw":"{\"a\": 1}"}` + "\n",
		head + `{"t":2,"kind":"frame","dir":"s2c","b64":"/w=="}` + "\n" + `{"t":3,"kind":"fra`,
		head + `{"t":-4,"kind":"future","text":"x","extra":[1]}` + "\n",
		head + `{"t":5,"kind":"frame","dir":"up"}` + "\n",
		`{"format":"mcpx-trace","version":2}` + "\n",
		"\n\n",
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// FuzzTraceRead checks the trace reader on arbitrary files: it returns a
// trace or an error, never panics, and a trace it reads, written out again
// with WriteTo, reads back the same, without warnings.
func FuzzTraceRead(f *testing.F) {
	for _, s := range traceSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		var buf bytes.Buffer
		if _, err := tr.WriteTo(&buf); err != nil {
			t.Fatalf("WriteTo of a trace Read accepted: %v", err)
		}
		again, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("the trace written out again does not read: %v\n%s", err, buf.Bytes())
		}
		if len(again.Warnings) > 0 {
			t.Fatalf("the trace written out again reads with warnings %q", again.Warnings)
		}
		checkSameTrace(t, tr, again)
	})
}

// FuzzTraceWrite checks that a frame, text and route written by writer
// read back exactly: frames byte for byte whatever they hold, text with
// each byte that is not UTF-8 replaced by U+FFFD.
func FuzzTraceWrite(f *testing.F) {
	for i, fr := range fuzzing.Frames() {
		f.Add(fr, "text", "tools/call", "Region", "eu\x00west", int64(i))
	}
	f.Add([]byte("bad \xff utf-8"), "bad \xff text \u2029", "", "", "", int64(1)<<40)
	f.Fuzz(func(t *testing.T, data []byte, text, name, param, value string, micros int64) {
		micros = max(micros, 0) % (1 << 50)
		route := &transport.Route{Method: "tools/call", Name: name, Params: []transport.RouteParam{{Name: param, Value: value}}}
		events := []Event{
			{Time: time.Duration(micros) * time.Microsecond, Kind: KindFrame, Dir: ClientToServer, Data: data, Text: text, Route: route},
			{Kind: KindStderr, Dir: ServerToClient, Text: text},
		}
		var buf bytes.Buffer
		w, err := newWriter(&buf, Header{Target: text})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("Read: %v\n%s", err, buf.Bytes())
		}
		wantText := validUTF8PerByte(text)
		for i := range events {
			events[i].Text = wantText
		}
		events[0].Route = &transport.Route{Method: "tools/call", Name: validUTF8PerByte(name),
			Params: []transport.RouteParam{{Name: validUTF8PerByte(param), Value: validUTF8PerByte(value)}}}
		if tr.Header.Target != wantText || len(tr.Events) != len(events) {
			t.Fatalf("read back %+v, want %d events", tr, len(events))
		}
		checkSameEvents(t, events, tr.Events)
	})
}

// validUTF8PerByte replaces each byte of s that is not part of valid
// UTF-8 with U+FFFD, as the trace writer does with text.
func validUTF8PerByte(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func checkSameTrace(t *testing.T, a, b *Trace) {
	t.Helper()
	ha, hb := a.Header, b.Header
	ha.Minor = min(ha.Minor, Minor)
	if !ha.Created.Equal(hb.Created) {
		t.Fatalf("header created %v, read back %v", ha.Created, hb.Created)
	}
	ha.Created, hb.Created = time.Time{}, time.Time{}
	if !reflect.DeepEqual(ha, hb) {
		t.Fatalf("header %+v, read back %+v", ha, hb)
	}
	checkSameEvents(t, a.Events, b.Events)
}

func checkSameEvents(t *testing.T, want, got []Event) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d events, read back %d", len(want), len(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Meta != nil && *w.Meta == (transport.Meta{}) {
			w.Meta = nil // an empty meta is not written
		}
		if w.Kind != KindFrame {
			w.Route = nil // only frames have routes
		}
		if w.Time != g.Time || w.Kind != g.Kind || w.Dir != g.Dir || !bytes.Equal(w.Data, g.Data) || w.Text != g.Text ||
			!reflect.DeepEqual(w.Meta, g.Meta) || !reflect.DeepEqual(w.Route, g.Route) {
			t.Fatalf("event %d: %+v (data %q, route %+v), read back %+v (data %q, route %+v)", i, w, w.Data, w.Route, g, g.Data, g.Route)
		}
	}
}
