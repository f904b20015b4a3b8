package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// checkSharedTrace reads the trace in name, which recorders tagged with
// tags recorded into at once (each session's frames carry ids "TAG-…"),
// and checks that every line is a whole event, that no two sessions
// share a number, and that each session holds the frames of one recorder
// only. It returns how many sessions each tag has.
func checkSharedTrace(t *testing.T, name string, tags ...string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("the trace does not end with a newline")
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Errorf("line %d is not a whole event: %.120s", i+1, line)
		}
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) > 0 {
		t.Errorf("warnings: %q", tr.Warnings)
	}
	per := map[string]int{}
	seen := map[int]bool{}
	for _, s := range tr.Sessions() {
		if seen[s.N] {
			t.Errorf("two sessions numbered %d", s.N)
		}
		seen[s.N] = true
		owner := ""
		for _, e := range s.Events {
			if e.Kind != KindFrame {
				continue
			}
			var m struct{ ID string }
			_ = json.Unmarshal(e.Data, &m)
			tag, _, _ := strings.Cut(m.ID, "-")
			if owner == "" {
				owner = tag
			} else if tag != owner {
				t.Errorf("session %d holds frames of %s and of %s", s.N, owner, tag)
				break
			}
		}
		per[owner]++
	}
	for _, tag := range tags {
		if per[tag] == 0 {
			t.Errorf("no session of %s in the trace", tag)
		}
	}
	return per
}

func taggedPing(tag string, i int) transport.Frame {
	return ping(strconv.Quote(tag + "-" + strconv.Itoa(i)))
}

// Two recorders appending to one trace at once, both opened before
// either wrote (each then read the same last session number), number
// their sessions apart, whether the trace existed or they both started it.
func TestAppendConcurrentRecorders(t *testing.T) {
	t.Parallel()
	for _, existing := range []bool{true, false} {
		t.Run(fmt.Sprintf("existing=%v", existing), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			name := filepath.Join(t.TempDir(), "t.jsonl")
			if existing {
				rec, err := Append(ctx, name, RecorderOptions{Header: Header{Transport: "stdio", Target: "first"}})
				if err != nil {
					t.Fatal(err)
				}
				rec.Frame(time.Now(), transport.Outgoing, taggedPing("z", 0))
				if err := rec.Close(); err != nil {
					t.Fatal(err)
				}
			}
			var recs []*Recorder
			for _, tag := range []string{"a", "b"} {
				rec, err := Append(ctx, name, RecorderOptions{Header: Header{Transport: "stdio", Target: tag}})
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, rec)
			}
			for i := range 10 {
				for j, tag := range []string{"a", "b"} {
					recs[j].Frame(time.Now(), transport.Outgoing, taggedPing(tag, i))
					if i == 5 {
						// A second session of each (as a proxy starts one
						// per connection).
						recs[j].StartSession(SessionInfo{Transport: "stdio"}, tag+" again").Frame(time.Now(), transport.Incoming, taggedPing(tag, 100))
					}
					if err := recs[j].Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, rec := range recs {
				if err := rec.Close(); err != nil {
					t.Fatal(err)
				}
			}
			per := checkSharedTrace(t, name, "a", "b")
			if per["a"] != 2 || per["b"] != 2 {
				t.Errorf("sessions per recorder: %v, want 2 each", per)
			}
			if _, err := os.Stat(name + ".lock"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the lock file was left behind: %v", err)
			}
		})
	}
}

// Two processes recording into one trace at once give their sessions
// numbers of their own, and write whole lines. Each helper opens the
// trace, says so, and records only once both have opened it: both read
// the same last session number, as two commands started together do.
func TestAppendConcurrentProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	tags := []string{"p", "q"}
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
		err   bytes.Buffer
	}
	var procs []*proc
	for _, tag := range tags {
		p := &proc{cmd: exec.CommandContext(ctx, os.Args[0], "-test.run=^$")}
		p.cmd.Env = append(os.Environ(), "RECORD_TEST_HELPER=append", "RECORD_TEST_TRACE="+name, "RECORD_TEST_TAG="+tag)
		p.cmd.Stderr = &p.err
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		stdout, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		p.out = bufio.NewReader(stdout)
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	for _, p := range procs {
		// Bounded by ctx: the helpers are killed when it ends.
		if line, err := p.out.ReadString('\n'); line != "opened\n" {
			t.Fatalf("helper: %q, %v; stderr: %s", line, err, &p.err)
		}
	}
	for _, p := range procs {
		if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("helper: %v; stderr: %s", err, &p.err)
		}
	}
	per := checkSharedTrace(t, name, tags...)
	if per["p"] != 3 || per["q"] != 3 {
		t.Errorf("sessions per process: %v, want 3 each", per)
	}
}

// runAppendHelper is a process of TestAppendConcurrentProcesses: it
// appends three sessions of frames to the trace, flushing often so that
// its writes interleave with the other process's.
func runAppendHelper() error {
	name, tag := os.Getenv("RECORD_TEST_TRACE"), os.Getenv("RECORD_TEST_TAG")
	rec, err := Append(context.Background(), name, RecorderOptions{Header: Header{Transport: "stdio", Target: tag}})
	if err != nil {
		return err
	}
	fmt.Println("opened")
	if line, err := bufio.NewReader(os.Stdin).ReadString('\n'); line != "go\n" {
		return fmt.Errorf("read %q, %v", line, err)
	}
	var wg sync.WaitGroup
	sessions := []func(time.Time, transport.Direction, transport.Frame){rec.Frame}
	for i := range 2 {
		sessions = append(sessions, rec.StartSession(SessionInfo{Transport: "stdio"}, fmt.Sprintf("%s %d", tag, i)).Frame)
	}
	for k, frame := range sessions {
		wg.Go(func() {
			for i := range 300 {
				frame(time.Now(), transport.Outgoing, taggedPing(tag, k*1000+i))
				if i%10 == 0 {
					_ = rec.Flush()
				}
			}
		})
	}
	wg.Wait()
	return rec.Close()
}

// A recording whose trace another process replaced (--force) fails with
// ErrReplaced instead of writing into the file no longer there.
func TestAppendTraceReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := Append(ctx, name, RecorderOptions{Header: Header{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Frame(time.Now(), transport.Outgoing, taggedPing("a", 1))
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	other, err := Create(ctx, name, RecorderOptions{Header: Header{Transport: "stdio"}, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	other.Frame(time.Now(), transport.Outgoing, taggedPing("b", 1))
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	rec.Frame(time.Now(), transport.Outgoing, taggedPing("a", 2))
	if err := rec.Close(); !errors.Is(err, ErrReplaced) {
		t.Fatalf("Close: %v, want ErrReplaced", err)
	}
	checkSharedTrace(t, name, "b")
}

// A lock another process holds and never lets go of ends the wait when
// the context does, with an error naming the trace and its lock file.
func TestAppendLockedTrace(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := Append(t.Context(), name, RecorderOptions{Header: Header{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Note("one")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	held := newTraceLock(name)
	if err := held.lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer held.close()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = Append(ctx, name, RecorderOptions{Header: Header{Transport: "stdio"}})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), name+".lock") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Append: %v, want ErrLocked naming the lock file, on one line", err)
	}
	cctx, ccancel := context.WithCancel(t.Context())
	ccancel()
	if _, err := Append(cctx, name, RecorderOptions{Header: Header{Transport: "stdio"}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with its context cancelled: %v", err)
	}
}

// The session number of an event line is found where the writer puts it.
func TestSessionSpan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		n    int
	}{
		{`{"t":12,"s":3,"kind":"note"}`, 3},
		{`{"s":14,"kind":"frame"}`, 14},
		{`{"t":12,"kind":"note"}`, 0},
		{`{"format":"mcpx-trace"}`, 0},
		{`{"t":,"s":3}`, 0},
		{``, 0},
	} {
		if n := sessionOfLine([]byte(c.line)); n != c.n {
			t.Errorf("%s: %d, want %d", c.line, n, c.n)
		}
	}
	d := &diskState{top: 7, numbers: map[int]int{}}
	if got := string(d.renumber([]byte(`{"t":1,"s":2,"kind":"session","text":"x"}`))); got != `{"t":1,"s":8,"kind":"session","text":"x"}` {
		t.Errorf("session event: %s", got)
	}
	if got := string(d.renumber([]byte(`{"t":2,"s":2,"kind":"note"}`))); got != `{"t":2,"s":8,"kind":"note"}` {
		t.Errorf("its event: %s", got)
	}
}

// Create without Overwrite does not replace a trace that another process
// started after it was called: its recording fails with ErrExists, and
// the other trace is left as it is.
func TestCreateRefusesATraceStartedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := Create(ctx, name, RecorderOptions{Header: Header{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Append(ctx, name, RecorderOptions{Header: Header{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	other.Frame(time.Now(), transport.Outgoing, taggedPing("b", 1))
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(name)
	rec.Frame(time.Now(), transport.Outgoing, taggedPing("a", 1))
	if err := rec.Close(); !errors.Is(err, ErrExists) {
		t.Fatalf("Close: %v, want ErrExists", err)
	}
	if after, _ := os.ReadFile(name); !bytes.Equal(before, after) {
		t.Errorf("the trace changed:\n%s", after)
	}
	entries, _ := os.ReadDir(filepath.Dir(name))
	if len(entries) != 1 {
		t.Errorf("files left beside the trace: %v", entries)
	}
}
