package record

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/transport"
)

// recordTo records calls against the stdio helper (variant "" or
// "changed") into name with o.
func recordTo(t *testing.T, name string, o RecorderOptions, variant string, calls []call, appendTo bool) {
	t.Helper()
	o.Header.Transport, o.Header.Target = "stdio", "helper"
	var rec *Recorder
	var err error
	if appendTo {
		rec, err = Append(context.Background(), name, o)
	} else {
		rec, err = Create(context.Background(), name, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	opts := helper("sdk", "RECORD_TEST_VARIANT="+variant)
	opts.Observer = rec.Observe
	exercise(t, rec.Wrap(startStdio(t, opts)), calls)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

func sessionNames(t *testing.T, name string) []string {
	t.Helper()
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range tr.Sessions() {
		out = append(out, s.Info.Name)
	}
	return out
}

var echoCall = []call{{method: "tools/call", params: `{"name":"echo","arguments":{"message":"hi"}}`}}

// The recorder writes stable traces: recording again gives the same
// file; a named session is added (Append) or takes the place of its old
// recording (Replace), other sessions kept.
func TestStableRecorder(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	o := RecorderOptions{Stable: true, Session: SessionInfo{Name: "first"}, Header: Header{Ignore: []string{"$.result._meta"}}}
	recordTo(t, a, o, "", echoCall, false)
	o.Overwrite = true
	recordTo(t, b, o, "", echoCall, false)
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) || !bytes.Contains(ab, []byte(`"stable":true`)) || !bytes.Contains(ab, []byte(`"name":"first"`)) {
		t.Fatalf("two stable recordings:\n%s\n---\n%s", ab, bb)
	}
	if fi, _ := os.Stat(a); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}

	// Append adds a session, and the trace stays stable.
	recordTo(t, a, RecorderOptions{Session: SessionInfo{Name: "second"}}, "", echoCall, true)
	if got := sessionNames(t, a); strings.Join(got, ",") != "first,second" {
		t.Fatalf("sessions %q", got)
	}
	two, _ := os.ReadFile(a)
	if !bytes.HasPrefix(two, ab[:bytes.IndexByte(ab, '\n')]) || bytes.Contains(two, []byte(`"t":`)) {
		t.Errorf("the trace appended to is no longer stable:\n%s", two)
	}
	// Replace records "first" again, from a changed server, in place of
	// its old recording; "second" is kept.
	recordTo(t, a, RecorderOptions{Replace: true, Session: SessionInfo{Name: "first"}}, "changed", echoCall, true)
	if got := sessionNames(t, a); strings.Join(got, ",") != "second,first" {
		t.Fatalf("sessions after Replace %q", got)
	}
	three, _ := os.ReadFile(a)
	if bytes.Count(three, []byte("Echo! hi")) != 1 || bytes.Count(three, []byte("Echo: hi")) != 1 {
		t.Errorf("after Replace:\n%s", three)
	}
}

func TestModePlan(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.jsonl")
	file := filepath.Join(dir, "t.jsonl")
	recordTo(t, file, RecorderOptions{Stable: true, Session: SessionInfo{Name: "a"}}, "", echoCall, false)
	for _, tc := range []struct {
		mode       Mode
		file, name string
		want       Plan
		err        bool
	}{
		{ModeReplayOnly, missing, "a", Plan{}, true},
		{ModeReplayOnly, file, "a", Plan{Exists: true, Session: 1}, false},
		{ModeReplayOnly, file, "b", Plan{}, true},
		{ModeReplayOnly, file, "", Plan{Exists: true, Session: 1}, false},
		{ModeOnce, missing, "a", Plan{Record: true}, false},
		{ModeOnce, file, "a", Plan{Exists: true, Session: 1}, false},
		{ModeOnce, file, "b", Plan{}, true},
		{ModeUpdate, missing, "a", Plan{Record: true}, false},
		{ModeUpdate, file, "a", Plan{Record: true, Exists: true, Session: 1}, false},
		{ModeUpdate, file, "b", Plan{Record: true, Exists: true}, false},
		{ModeNew, missing, "a", Plan{Record: true}, false},
		{ModeNew, file, "a", Plan{Exists: true, Session: 1}, false},
		{ModeNew, file, "b", Plan{Record: true, Exists: true}, false},
	} {
		got, err := tc.mode.Plan(tc.file, tc.name)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s.Plan(%s, %q) = %+v, %v; want %+v (error %v)", tc.mode, filepath.Base(tc.file), tc.name, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrNotRecorded) {
			t.Errorf("%s.Plan(%s, %q): %v does not match ErrNotRecorded", tc.mode, filepath.Base(tc.file), tc.name, err)
		}
	}
	// A session to replay from a trace whose header cannot be used: an
	// error naming the file and the setting (to record one, none).
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"format":"mcpx-trace","version":1,"minor":3,"redacted":true,"normalize":[{"pattern":"(","replace":"x"}]}
{"t":0,"s":1,"kind":"session","session":{"transport":"stdio","target":"x","name":"a"}}
{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"t":2,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}
`), 0o644)
	for _, m := range []Mode{ModeReplayOnly, ModeOnce, ModeNew} {
		_, err := m.Plan(bad, "a")
		var he *HeaderError
		if !errors.As(err, &he) || he.Member != "normalize" || !strings.HasPrefix(err.Error(), bad+": the normalizers of its header (line 1): ") {
			t.Errorf("%s.Plan(bad.jsonl) = %v, want a *HeaderError naming the file", m, err)
		}
	}
	if p, err := ModeNew.Plan(bad, "b"); err != nil || !p.Record {
		t.Errorf("new.Plan(bad.jsonl, b) = %+v, %v; want it recorded", p, err)
	}
	if _, err := ParseMode("sometimes"); !errors.Is(err, ErrBadMode) {
		t.Errorf("ParseMode: %v", err)
	}
	t.Setenv(ModeEnv, "update")
	if m, err := EnvMode(ModeOnce); m != ModeUpdate || err != nil {
		t.Errorf("EnvMode = %v, %v", m, err)
	}
	t.Setenv(ModeEnv, "bogus")
	if _, err := EnvMode(ModeOnce); err == nil || !strings.Contains(err.Error(), ModeEnv) {
		t.Errorf("EnvMode with a bad value: %v", err)
	}
}

// UpdateTrace records a trace again from the live server, keeping its
// header's settings, and leaves it alone when the server cannot be
// reached.
func TestUpdateTrace(t *testing.T) {
	name := filepath.Join(t.TempDir(), "t.jsonl")
	recordTo(t, name, RecorderOptions{Header: Header{Ignore: []string{"$.result._meta"}, Normalize: []Normalizer{{Builtin: BuiltinUUID}}},
		Redact: RedactOptions{Paths: []string{"$.params.arguments.secret"}}, Session: SessionInfo{Name: "s"}}, "", echoCall, false)
	before, _ := os.ReadFile(name)

	dial := func(variant string) func(context.Context, int, SessionInfo, transport.Observer) (transport.Conn, error) {
		return func(_ context.Context, _ int, _ SessionInfo, obs transport.Observer) (transport.Conn, error) {
			o := helper("sdk", "RECORD_TEST_VARIANT="+variant)
			o.Observer = obs
			return transport.StartStdio(o)
		}
	}
	failing := func(context.Context, int, SessionInfo, transport.Observer) (transport.Conn, error) {
		return nil, errors.New("no server today")
	}
	if _, err := UpdateTrace(context.Background(), name, UpdateOptions{Dial: failing}); err == nil {
		t.Fatal("UpdateTrace without a server succeeded")
	}
	if same, _ := os.ReadFile(name); !bytes.Equal(same, before) {
		t.Fatal("a failed update changed the trace")
	}

	// A server that ends before it answers, or never answers, is no new
	// recording: the update is refused and the trace kept.
	exits := func(_ context.Context, _ int, _ SessionInfo, obs transport.Observer) (transport.Conn, error) {
		o := helper("exit3")
		o.Observer = obs
		return transport.StartStdio(o)
	}
	silent := func(context.Context, int, SessionInfo, transport.Observer) (transport.Conn, error) {
		client, server := transport.Pipe()
		go func() {
			for {
				if _, err := server.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		return client, nil
	}
	for _, tc := range []struct {
		what string
		dial func(context.Context, int, SessionInfo, transport.Observer) (transport.Conn, error)
		is   error
	}{
		{"a server that exits", exits, transport.ErrClosed},
		{"a server that never answers", silent, peer.ErrTimeout},
	} {
		_, err := UpdateTrace(context.Background(), name, UpdateOptions{Dial: tc.dial, Verify: VerifyOptions{Timeout: 300 * time.Millisecond}})
		var lost *LostError
		if !errors.As(err, &lost) || lost.Exchange != 1 || !strings.Contains(err.Error(), "kept") {
			t.Errorf("%s: UpdateTrace: %v, want a *LostError at exchange 1 saying the trace was kept", tc.what, err)
		}
		if tc.is == peer.ErrTimeout && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v does not match %v", tc.what, err, tc.is)
		}
		if same, _ := os.ReadFile(name); !bytes.Equal(same, before) {
			t.Fatalf("%s: the update replaced the trace", tc.what)
		}
	}

	// A server that answers as recorded leaves the trace as it was (a
	// trace under version control changes only when the server did),
	// unless Always asks for it to be written again.
	res, err := UpdateTrace(context.Background(), name, UpdateOptions{Dial: dial(""), Mcpx: "test"})
	if err != nil || !res.OK() || !res.Kept {
		t.Fatalf("update against the server recorded: %v, %+v", err, res)
	}
	if same, _ := os.ReadFile(name); !bytes.Equal(same, before) {
		t.Fatalf("an update that found no difference rewrote the trace:\n%s", same)
	}
	res, err = UpdateTrace(context.Background(), name, UpdateOptions{Dial: dial(""), Mcpx: "test-always", Always: true})
	if err != nil || !res.OK() || res.Kept {
		t.Fatalf("update with Always: %v, %+v", err, res)
	}
	if again, _ := os.ReadFile(name); !bytes.Contains(again, []byte(`"mcpx":"test-always"`)) {
		t.Fatalf("Always did not write the trace again:\n%s", again)
	}

	res, err = UpdateTrace(context.Background(), name, UpdateOptions{Dial: dial("changed"), Mcpx: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() {
		t.Errorf("the update found no change: %+v", res)
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	h := tr.Header
	if strings.Join(h.Ignore, ",") != "$.result._meta" || len(h.Normalize) != 1 || strings.Join(h.Redact, ",") != "$.params.arguments.secret" || !h.Redacted {
		t.Errorf("the header's settings were not kept: %+v", h)
	}
	if s := tr.Sessions(); len(s) != 1 || s[0].Info.Name != "s" {
		t.Errorf("sessions %+v", s)
	}
	after, _ := os.ReadFile(name)
	if !bytes.Contains(after, []byte("Echo! hi")) || bytes.Contains(after, []byte("Echo: hi")) {
		t.Errorf("the trace was not recorded again:\n%s", after)
	}
	// It now verifies against the changed server.
	res, err = VerifySessions(context.Background(), tr, startStdio(t, helper("sdk", "RECORD_TEST_VARIANT=changed")), VerifyOptions{})
	if err != nil || !res.OK() {
		t.Errorf("verify after update: %v %+v", err, res)
	}
}

// A trace another process records a session into while UpdateTrace runs
// is left as that process left it: the update fails with ErrChanged.
// Before, the update replaced the trace with its new recording, and the
// other process's session was lost without a word.
func TestUpdateTraceKeepsWhatAnotherProcessRecorded(t *testing.T) {
	name := filepath.Join(t.TempDir(), "t.jsonl")
	recordTo(t, name, RecorderOptions{Session: SessionInfo{Name: "s"}}, "", echoCall, false)
	dial := func(_ context.Context, _ int, _ SessionInfo, obs transport.Observer) (transport.Conn, error) {
		// Meanwhile, another recording adds a session to the trace.
		recordTo(t, name, RecorderOptions{Session: SessionInfo{Name: "other"}}, "", echoCall, true)
		o := helper("sdk", "RECORD_TEST_VARIANT=changed")
		o.Observer = obs
		return transport.StartStdio(o)
	}
	_, err := UpdateTrace(context.Background(), name, UpdateOptions{Dial: dial, Mcpx: "test"})
	if !errors.Is(err, ErrChanged) || !strings.HasPrefix(err.Error(), name+" was changed by another process") {
		t.Fatalf("UpdateTrace = %v, want ErrChanged naming the trace", err)
	}
	if got := sessionNames(t, name); strings.Join(got, ",") != "s,other" {
		t.Errorf("sessions %q, want the old one and the other process's", got)
	}
	if raw, _ := os.ReadFile(name); bytes.Contains(raw, []byte("Echo! hi")) {
		t.Error("the trace holds the update's recording")
	}
	entries, _ := os.ReadDir(filepath.Dir(name))
	for _, e := range entries {
		if e.Name() != "t.jsonl" {
			t.Errorf("%s left beside the trace", e.Name())
		}
	}
}

// A trace of a newer minor version than this package writes is read, and
// a session appended to it as it is, but it is not written again: adding
// ignores to its header, adding a session to it when it is stable, or
// recording it again would drop what the newer version added (its
// header's members, members of its events) and say an older minor. Each
// is a *MinorError naming both versions, and the file stays as it was.
// Before, each rewrote it as minor 4 without those members.
func TestNewerMinorIsNotWrittenAgain(t *testing.T) {
	future := func(stable string) string {
		return `{"format":"mcpx-trace","version":1,"minor":9,` + stable + `"transport":"stdio","target":"helper","redacted":true,"redactRules":3,"future":{"x":1}}` + "\n" +
			`{"s":1,"kind":"session","session":{"transport":"stdio","target":"helper","name":"s"},"future":true}` + "\n" +
			`{"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
			`{"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\n" +
			`{"s":1,"kind":"hologram","text":"a kind of 1.9"}` + "\n"
	}
	dir := t.TempDir()
	for _, c := range []struct {
		what   string
		stable string
		write  func(name string) error
	}{
		{"a session appended with a new ignore", "", func(name string) error {
			_, err := Append(context.Background(), name, RecorderOptions{Header: Header{Ignore: []string{"$.result._meta"}}})
			return err
		}},
		{"a session appended to a stable trace", `"stable":true,`, func(name string) error {
			rec, err := Append(context.Background(), name, RecorderOptions{Header: Header{Transport: "stdio", Target: "helper"}})
			if err != nil {
				return err
			}
			rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
			return rec.Close()
		}},
		{"a held recording", "", func(name string) error {
			_, err := Append(context.Background(), name, RecorderOptions{Stable: true})
			return err
		}},
		{"an update", "", func(name string) error {
			_, err := UpdateTrace(context.Background(), name, UpdateOptions{
				Dial: func(context.Context, int, SessionInfo, transport.Observer) (transport.Conn, error) {
					return nil, errors.New("not reached")
				}})
			return err
		}},
	} {
		name := filepath.Join(dir, strings.ReplaceAll(c.what, " ", "-")+".jsonl")
		if err := os.WriteFile(name, []byte(future(c.stable)), 0o600); err != nil {
			t.Fatal(err)
		}
		err := c.write(name)
		var me *MinorError
		if !errors.As(err, &me) || me.Got != 9 || !strings.Contains(err.Error(), "format 1.9, newer than this mcpx writes (1.4)") {
			t.Errorf("%s: %v, want a *MinorError naming 1.9 and 1.4", c.what, err)
		}
		if raw, _ := os.ReadFile(name); string(raw) != future(c.stable) {
			t.Errorf("%s: the trace was changed:\n%s", c.what, raw)
		}
	}

	// A session appended as it is keeps the trace's header and events.
	name := filepath.Join(dir, "plain.jsonl")
	os.WriteFile(name, []byte(future("")), 0o600)
	recordTo(t, name, RecorderOptions{Session: SessionInfo{Name: "new"}}, "", echoCall, true)
	raw, _ := os.ReadFile(name)
	if !bytes.HasPrefix(raw, []byte(future(""))) {
		t.Errorf("appending changed what the trace held:\n%s", raw)
	}
	if got := sessionNames(t, name); strings.Join(got, ",") != "s,new" {
		t.Errorf("sessions %q", got)
	}
}
