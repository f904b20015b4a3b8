package featuretest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/record"
)

// sessionsTrace writes one trace holding the sessions of traces, each a
// session of its own, as a proxy records a host that connects several
// times (the Inspector CLI opens one connection per command).
func sessionsTrace(t *testing.T, name string, traces ...string) {
	t.Helper()
	out := &record.Trace{}
	for i, file := range traces {
		tr, err := record.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			out.Header = tr.Header
			out.Header.Minor = record.Minor
		}
		n := i + 1
		out.Events = append(out.Events, record.Event{Kind: record.KindSession, Session: n, Text: tr.Header.Target,
			SessionInfo: &record.SessionInfo{Transport: tr.Header.Transport, Target: tr.Header.Target}})
		for _, e := range tr.Events {
			e.Session = n
			out.Events = append(out.Events, e)
		}
	}
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := out.WriteTo(f); err != nil {
		t.Fatal(err)
	}
}

// A trace of three sessions against server-everything over Streamable
// HTTP verifies against it: each session on a new MCP session of its own
// (sent over one, the second initialize is refused and the rest is not
// sent). A changed trace fails in the session that changed, named.
func TestVerifySessionsEverything(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	u := srv[len(srv)-1]
	dir := t.TempDir()
	var files []string
	for i, args := range [][]string{{"tools", "list"}, {"prompts", "get", "simple-prompt"}, {"resources", "read", "demo://resource/static/document/architecture.md"}} {
		file := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i+1))
		r := run(t, "", append(args, "--url", u, "--record", file)...)
		r.wantCode(t, 0)
		files = append(files, file)
	}
	trace := filepath.Join(dir, "sessions.jsonl")
	sessionsTrace(t, trace, files...)
	r := run(t, "", "verify", trace, "--url", u)
	r.wantCode(t, 0)
	wantContains(t, "stdout", r.stdout, " verified in 3 sessions, 0 mismatch(es)")

	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.jsonl")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), "This is a simple prompt", "This was a simple prompt", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	r = run(t, "", "verify", edited, "--url", u)
	r.wantCode(t, 7)
	// (Exchange 2 is the prompts/list that checked the prompt's arguments.)
	wantContains(t, "stdout", r.stdout, "✗ session 2, exchange 3 prompts/get \"simple-prompt\": the response differs", " verified in 3 sessions, 1 mismatch(es)")
}
