package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

func ping(id string) transport.Frame {
	return transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)}
}

// Recording to an existing trace adds a session after its last one; the
// first recording is never lost (defect 8).
func TestAppendAddsASession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	for i, id := range []string{"1", "2", "3"} {
		rec, err := Append(ctx, name, RecorderOptions{Header: Header{Transport: "stdio", Target: "stdio: run " + id}})
		if err != nil {
			t.Fatal(err)
		}
		rec.Frame(time.Now(), transport.Outgoing, ping(id))
		rec.Note("note " + id)
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		ss := tr.Sessions()
		if len(ss) != i+1 {
			t.Fatalf("after run %d: %d sessions", i+1, len(ss))
		}
		last := ss[i]
		if last.N != i+1 || last.Info.Target != "stdio: run "+id || len(last.Events) != 2 || string(last.Events[0].Data) != string(ping(id).Data) {
			t.Errorf("session %d: %+v", i+1, last)
		}
		if tr.Header.Target != "stdio: run 1" {
			t.Errorf("header changed: %+v", tr.Header)
		}
		for j := 1; j < len(tr.Events); j++ {
			if tr.Events[j].Time < tr.Events[j-1].Time {
				t.Errorf("event %d goes back in time", j)
			}
		}
	}
	// A recording that records nothing leaves the trace alone.
	before, _ := os.ReadFile(name)
	rec, err := Append(ctx, name, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	if after, _ := os.ReadFile(name); string(after) != string(before) {
		t.Error("an empty recording changed the trace")
	}
	// Other redaction settings, or a file that is no trace, are refused.
	var rm *RedactionMismatchError
	if _, err := Append(ctx, name, RecorderOptions{Redact: RedactOptions{Disabled: true}}); !errors.As(err, &rm) {
		t.Errorf("appending without redaction to a redacted trace: %v", err)
	}
	other := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(other, []byte("precious\n"), 0o644)
	if _, err := Append(ctx, other, RecorderOptions{}); !errors.Is(err, ErrNotTrace) {
		t.Errorf("appending to a file that is no trace: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "precious\n" {
		t.Errorf("the file was changed: %q", b)
	}
}

// A session added to a trace whose header has no creation time (edited
// by hand) or an absurd one goes on after its last event, not at a time
// that overflowed to near -292 years.
func TestAppendWithoutCreationTime(t *testing.T) {
	t.Parallel()
	for _, created := range []string{"", `,"created":"1700-01-01T00:00:00Z"`} {
		name := filepath.Join(t.TempDir(), "t.jsonl")
		trace := `{"format":"mcpx-trace","version":1,"minor":4,"transport":"stdio","redacted":true,"redactRules":3` + created + "}\n" +
			`{"t":5000,"s":1,"kind":"note","text":"x"}` + "\n"
		if err := os.WriteFile(name, []byte(trace), 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := Append(context.Background(), name, RecorderOptions{Header: Header{Transport: "stdio"}})
		if err != nil {
			t.Fatal(err)
		}
		rec.Frame(time.Now(), transport.Outgoing, ping("1"))
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tr.Events {
			if e.Time < 5*time.Millisecond || e.Time > time.Hour {
				t.Errorf("created %q: an event at %v, want one after the last (5ms), not long after", created, e.Time)
			}
		}
	}
}

// An older trace is rewritten as minor 2 before a session is added; a
// last line cut short is dropped; the header gains new ignores.
func TestAppendUpgradesAnOlderTrace(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "old.jsonl")
	old := `{"format":"mcpx-trace","version":1,"minor":1,"created":"2026-01-01T00:00:00Z","transport":"stdio","target":"stdio: x","redacted":true}` + "\n" +
		`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"t":2,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\n" +
		`{"t":3,"kind":"fra`
	os.WriteFile(name, []byte(old), 0o600)
	rec, err := Append(context.Background(), name, RecorderOptions{Header: Header{Ignore: []string{"$.params._meta"}}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Frame(time.Now(), transport.Outgoing, ping("2"))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.Minor != Minor || tr.Header.Target != "stdio: x" || len(tr.Header.Ignore) != 1 || len(tr.Warnings) != 0 {
		t.Errorf("header %+v, warnings %q", tr.Header, tr.Warnings)
	}
	ss := tr.Sessions()
	if len(ss) != 2 || len(ss[0].Events) != 2 || len(ss[1].Events) != 1 || ss[1].N != 2 {
		t.Fatalf("sessions %+v", ss)
	}
	b, _ := os.ReadFile(name)
	if !strings.Contains(string(b), "\n"+`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`+"\n") {
		t.Errorf("the old events were not kept verbatim:\n%s", b)
	}
}

// A proxy's sessions interleave in the file, each tagged with its number.
func TestStartSessionInterleaves(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := Create(context.Background(), name, RecorderOptions{Header: Header{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	a := rec.StartSession(SessionInfo{Transport: "http", Target: "http://u/mcp", Client: "127.0.0.1:1"}, "a")
	b := rec.StartSession(SessionInfo{Transport: "http", Target: "http://u/mcp?token=SECRET", Client: "127.0.0.1:2"}, "b")
	a.Frame(time.Now(), transport.Outgoing, ping("1"))
	b.Frame(time.Now(), transport.Outgoing, ping("1"))
	b.Observe(transport.Event{Kind: transport.EventStream, Text: "priming", Meta: &transport.Meta{EventID: "0"}, Retry: time.Second})
	a.Refusal([]byte(`1`), &transport.Meta{HTTPStatus: 400, ContentType: "text/plain"}, []byte("Bad Request: no session\n"))
	rec.Close()
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != 2 || ss[0].Info.Client != "127.0.0.1:1" || len(ss[0].Events) != 2 || len(ss[1].Events) != 2 {
		t.Fatalf("sessions %+v", ss)
	}
	if strings.Contains(ss[1].Info.Target, "SECRET") {
		t.Errorf("session target not redacted: %s", ss[1].Info.Target)
	}
	if e := ss[1].Events[1]; e.Kind != KindStream || e.Retry != time.Second {
		t.Errorf("stream event %+v", e)
	}
	if e := ss[0].Events[1]; e.Kind != KindHTTP || string(e.Re) != "1" || e.Text != "Bad Request: no session" || e.Meta.HTTPStatus != 400 {
		t.Errorf("refusal %+v", e)
	}
}

// The handshake a :record started mid-session begins with (defect 7):
// kept from the connection, written first, marked as a prelude.
func TestHandshakePrelude(t *testing.T) {
	t.Parallel()
	var hs Handshake
	now := time.Now()
	in := func(s string) { hs.Frame(now, transport.Incoming, transport.Frame{Data: []byte(s)}) }
	out := func(s string) { hs.Frame(now, transport.Outgoing, transport.Frame{Data: []byte(s)}) }
	out(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	in(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
	out(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	out(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	in(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	if got := hs.Frames(); len(got) != 3 {
		t.Fatalf("kept %d frames", len(got))
	}

	name := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := Create(context.Background(), name, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Prelude(hs.Frames())
	rec.Frame(now, transport.Outgoing, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)})
	rec.Frame(now, transport.Incoming, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)})
	rec.Close()
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Sessions()[0]
	if !s.Info.Prelude || len(s.Events) != 5 || !s.Events[0].Prelude || !s.Events[2].Prelude || s.Events[3].Prelude {
		t.Fatalf("session %+v", s)
	}
	// And it replays: the live client's handshake is answered.
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	if got := c.recv(); !strings.Contains(got, `"id":7`) || !strings.Contains(got, `"serverInfo"`) {
		t.Errorf("initialize answered %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
	c.expect(`{"jsonrpc":"2.0","id":8,"result":{"tools":[]}}`)
	if d := c.deviations(); len(d) != 0 {
		t.Errorf("deviations %q", d)
	}

	// A reconnection's initialize starts over.
	out(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	if got := hs.Frames(); len(got) != 1 || !strings.Contains(string(got[0].Frame.Data), "2025-06-18") {
		t.Errorf("after a new initialize: %d frames", len(got))
	}
}
