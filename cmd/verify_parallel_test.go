package cmd

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// parallelTraces writes traces to verify against u into a new directory:
// ones the server matches, ones it answers differently, and, when lost
// is set, one whose request the server never answers (the run stops
// there) with more after it. flags are the recording's (--stable). It
// returns the directory and the files in
// order.
func parallelTraces(t *testing.T, u string, lost bool, flags ...string) (string, []string) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	if r := runMcpx(t, nil, append([]string{"tools", "call", "echo", "message=hi", "--url", u, "--record", rec}, flags...)...); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	differ := func(s string) []byte {
		b := bytes.Replace(raw, []byte(`"text":"Echo: hi"`), []byte(`"text":"Echo: `+s+`"`), 1)
		if bytes.Equal(b, raw) {
			t.Fatalf("no answer to edit in the trace:\n%s", raw)
		}
		return b
	}
	traces := []struct {
		name string
		data []byte
	}{
		{"a.jsonl", raw}, {"b.jsonl", differ("ho")}, {"c.jsonl", raw}, {"d.jsonl", differ("hu")},
		{"e.jsonl", raw}, {"f.jsonl", differ("ha")},
	}
	if lost {
		never := bytes.Replace(raw, []byte(`"message":"hi"`), []byte(`"message":"never"`), 1)
		traces = append(traces[:4], append([]struct {
			name string
			data []byte
		}{{"d2.jsonl", never}}, traces[4:]...)...)
	}
	dir := t.TempDir()
	var files []string
	for _, tr := range traces {
		f := filepath.Join(dir, tr.name)
		if err := os.WriteFile(f, tr.data, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return dir, files
}

// neverAnswers wraps a server so that it never answers a tools/call of
// echo with the message "never": its POST gets an empty 200, and the
// trace cannot be verified (exit 4).
func neverAnswers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err == nil && bytes.Contains(body, []byte(`"message":"never"`)) {
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		h.ServeHTTP(w, r)
	})
}

// runCombined runs mcpx with stdout and stderr one stream, as on a
// terminal, so that the order of their lines is compared too; config is
// its configuration directory (what a run says of its token store names
// it).
func runCombined(t *testing.T, config string, args ...string) (int, string) {
	t.Helper()
	ios, out, _ := NewTestIOStreams(map[string]string{"MCPX_CONFIG_DIR": config})
	ios.ErrOut = out
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := Run(ctx, args, ios)
	return code, out.String()
}

// junitTimes are the times of a JUnit report, which differ from run to
// run.
var junitTimes = regexp.MustCompile(` time="[0-9.]+"`)

// verify --parallel N prints what verifying the traces one at a time
// prints, byte for byte and in the order of the files: the reports, the
// total, the --json document and the --junit report (but for its times),
// the exit code; a trace that cannot be verified (its server never
// answers) stops the run there, and the traces after it, run already
// beside it, are not reported.
func TestVerifyParallelPrintsWhatOneAtATimePrints(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, neverAnswers)
	config := t.TempDir()
	for _, lost := range []bool{false, true} {
		_, files := parallelTraces(t, u, lost)
		for _, mode := range [][]string{nil, {"--json"}} {
			var want struct {
				code         int
				out, report  string
				stdout, errs string
			}
			for _, n := range []string{"1", "4"} {
				report := filepath.Join(t.TempDir(), "report.xml")
				args := append(append([]string{"verify"}, files...), mode...)
				args = append(args, "--parallel", n, "--junit", report, "--url", u)
				code, out := runCombined(t, config, args...)
				r := runMcpx(t, map[string]string{"MCPX_CONFIG_DIR": config}, args...)
				raw, err := os.ReadFile(report)
				if err != nil {
					t.Fatal(err)
				}
				rep := junitTimes.ReplaceAllString(string(raw), "")
				if n == "1" {
					want.code, want.out, want.report, want.stdout, want.errs = code, out, rep, r.stdout, r.stderr
					continue
				}
				name := strings.Join(append([]string{"lost", map[bool]string{true: "yes", false: "no"}[lost]}, mode...), " ")
				if code != want.code || r.code != want.code {
					t.Errorf("%s: --parallel 4 exit %d (and %d), --parallel 1 exit %d", name, code, r.code, want.code)
				}
				if out != want.out {
					t.Errorf("%s: --parallel 4 printed\n%s\n--parallel 1\n%s", name, out, want.out)
				}
				if r.stdout != want.stdout || r.stderr != want.errs {
					t.Errorf("%s: --parallel 4 stdout\n%s\nstderr\n%s\n--parallel 1 stdout\n%s\nstderr\n%s", name, r.stdout, r.stderr, want.stdout, want.errs)
				}
				if rep != want.report {
					t.Errorf("%s: --parallel 4 report\n%s\n--parallel 1\n%s", name, rep, want.report)
				}
			}
			// The run says what it should, not just the same twice.
			switch {
			case lost && want.code != ExitConnect:
				t.Errorf("exit %d with a trace whose server never answers, want %d", want.code, ExitConnect)
			case !lost && want.code != ExitMismatch:
				t.Errorf("exit %d with traces that differ, want %d", want.code, ExitMismatch)
			}
			if mode != nil {
				continue
			}
			for _, w := range []string{"== " + files[0], "== " + files[3]} {
				if !strings.Contains(want.out, w) {
					t.Errorf("no %q in\n%s", w, want.out)
				}
			}
			if lost {
				if strings.Contains(want.out, "e.jsonl") || !strings.Contains(want.out, "7 trace(s): 2 verified, 2 with differences (") ||
					!strings.Contains(want.out, "1 could not be verified, 2 not run") {
					t.Errorf("a run that stops at d2.jsonl:\n%s", want.out)
				}
			} else if !strings.Contains(want.out, "6 trace(s): 3 verified, 3 with differences") {
				t.Errorf("the total:\n%s", want.out)
			}
		}
	}
}

// verify --update --parallel N records each trace again as --parallel 1
// does, prints what it prints, and ends with a line for all: how many
// were recorded again, how many left as they were.
func TestVerifyUpdateParallel(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	// Stable traces: one the live server matches is left as it was.
	src, files := parallelTraces(t, u, false, "--stable")
	config := t.TempDir()
	var want struct {
		code  int
		out   string
		files map[string]string
	}
	for _, n := range []string{"1", "4"} {
		dir := t.TempDir()
		var args []string
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), raw, 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, filepath.Join(dir, filepath.Base(f)))
		}
		code, out := runCombined(t, config, append(append([]string{"verify"}, args...), "--update", "--stable", "--parallel", n, "--url", u)...)
		out = strings.ReplaceAll(out, dir, src)
		got := map[string]string{}
		for _, f := range args {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got[filepath.Base(f)] = string(raw)
		}
		if n == "1" {
			want.code, want.out, want.files = code, out, got
			continue
		}
		if code != want.code || out != want.out {
			t.Errorf("--parallel 4: exit %d\n%s\n--parallel 1: exit %d\n%s", code, out, want.code, want.out)
		}
		for name, s := range got {
			if s != want.files[name] {
				t.Errorf("%s as --parallel 4 wrote it:\n%s\nas --parallel 1 did:\n%s", name, s, want.files[name])
			}
		}
	}
	if want.code != 0 || !strings.HasSuffix(want.out, "✓ 6 trace(s): 3 recorded again, 3 left as they were\n") {
		t.Errorf("exit %d\n%s", want.code, want.out)
	}
}

// --parallel takes a number of traces, 1 or more.
func TestVerifyParallelMustBePositive(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"0", "-2"} {
		r := runMcpx(t, nil, "verify", "t.jsonl", "--parallel", n, "--url", "http://127.0.0.1:9/mcp")
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--parallel "+n+": give the number of traces to verify at once, 1 or more") ||
			strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("--parallel %s: exit %d, stderr %q", n, r.code, r.stderr)
		}
	}
}

// What a trace's output keeps until its turn beyond orderedKeepInMemory
// goes to a temporary file, and comes back whole, in order, the two
// streams interleaved as they were written; the file is removed.
func TestOrderedOutputSpills(t *testing.T) {
	t.Parallel()
	var out, errOut, both bytes.Buffer
	o := newOrderedOutput(io.MultiWriter(&out, &both), io.MultiWriter(&errOut, &both))
	var want, wantOut, wantErr bytes.Buffer
	line := bytes.Repeat([]byte("x"), 1000)
	for i := range 3 * orderedKeepInMemory / len(line) {
		s := []byte(strings.Repeat(string(rune('a'+i%26)), 3) + string(line) + "\n")
		toErr := i%3 == 0
		if _, err := (orderedStream{o, toErr}).Write(s); err != nil {
			t.Fatal(err)
		}
		want.Write(s)
		if toErr {
			wantErr.Write(s)
		} else {
			wantOut.Write(s)
		}
	}
	if o.spill == nil || o.size > orderedKeepInMemory {
		t.Fatalf("kept %d bytes in memory, spill %v", o.size, o.spill)
	}
	spill := o.spill.Name()
	if both.Len() != 0 {
		t.Fatal("written before its turn")
	}
	o.release()
	if !bytes.Equal(both.Bytes(), want.Bytes()) || !bytes.Equal(out.Bytes(), wantOut.Bytes()) || !bytes.Equal(errOut.Bytes(), wantErr.Bytes()) {
		t.Errorf("released %d bytes (%d, %d), want %d (%d, %d)", both.Len(), out.Len(), errOut.Len(), want.Len(), wantOut.Len(), wantErr.Len())
	}
	if _, err := os.Stat(spill); !os.IsNotExist(err) {
		t.Errorf("the spill file is still there: %v", err)
	}
	if _, err := (orderedStream{o, false}).Write([]byte("after\n")); err != nil || !strings.HasSuffix(out.String(), "after\n") {
		t.Errorf("a write after its turn is not written through: %v", err)
	}
}

// A JUnit report of several traces is named after the run, "mcpx
// verify", also when the run stops at the first trace. Before, such a
// report held one trace's suites and was named after it, like a report
// of that trace alone.
func TestVerifyJUnitOfSeveralIsNamedAfterTheRun(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, neverAnswers)
	_, files := parallelTraces(t, u, true)
	report := filepath.Join(t.TempDir(), "report.xml")
	r := runMcpx(t, nil, "verify", files[4], files[0], "--junit", report, "--url", u)
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if r.code != ExitConnect || !strings.Contains(string(raw), `<testsuites name="mcpx verify" `) {
		t.Errorf("exit %d, report:\n%s", r.code, raw)
	}
}
