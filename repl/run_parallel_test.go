package repl

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// spawner runs lines "sleep-MS NAME" and "fail-N NAME" in the background,
// each writing "NAME" to output of its own; lines starting with ":" and
// "wait" run in order. It counts lines in flight.
type spawner struct {
	mu        sync.Mutex
	out       strings.Builder
	inFlight  atomic.Int32
	maxFlight atomic.Int32
	// release, when set, holds every background line until closed.
	release chan struct{}
	started chan string
}

func (s *spawner) spawn(words []string) (func(context.Context) Result, func()) {
	if strings.HasPrefix(words[0], ":") || words[0] == "wait" {
		return nil, nil
	}
	var buf strings.Builder
	run := func(ctx context.Context) Result {
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for {
			m := s.maxFlight.Load()
			if n <= m || s.maxFlight.CompareAndSwap(m, n) {
				break
			}
		}
		if s.started != nil {
			s.started <- words[len(words)-1]
		}
		if s.release != nil {
			select {
			case <-s.release:
			case <-ctx.Done():
				return Result{Code: ExitInterrupted}
			}
		}
		// KIND-N[-MS]: sleep N ms, or fail with status N after MS ms.
		parts := strings.Split(words[0], "-")
		n2, _ := strconv.Atoi(parts[1])
		code := 0
		switch parts[0] {
		case "sleep":
			time.Sleep(time.Duration(n2) * time.Millisecond)
		case "fail":
			code = n2
			if len(parts) > 2 {
				ms, _ := strconv.Atoi(parts[2])
				time.Sleep(time.Duration(ms) * time.Millisecond)
			}
		}
		fmt.Fprintf(&buf, "%s\n", words[len(words)-1])
		return Result{Code: code}
	}
	flush := func() {
		s.mu.Lock()
		s.out.WriteString(buf.String())
		s.mu.Unlock()
	}
	return run, flush
}

func (s *spawner) exec(_ context.Context, words []string) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.out, "(%s)\n", strings.Join(words, " "))
	if words[0] == ":fail" {
		return Result{Code: 7}
	}
	return Result{}
}

func runParallel(t *testing.T, sp *spawner, parallel int, keepGoing bool, script string) (int, string) {
	t.Helper()
	sc := NewScript(strings.NewReader(script))
	r := &Runner{Read: sc.ReadCommand, Exec: sp.exec, Spawn: sp.spawn, Parallel: parallel, KeepGoing: keepGoing,
		Report: func(err error, usage bool) int {
			sp.mu.Lock()
			fmt.Fprintf(&sp.out, "error: %v\n", err)
			sp.mu.Unlock()
			return 2
		}}
	done := make(chan int, 1)
	go func() { done <- r.Run(context.Background()) }()
	select {
	case code := <-done:
		return code, sp.out.String()
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not end")
	}
	return 0, ""
}

// TestParallelOutputInLineOrder: lines that finish in the reverse of their
// order are printed in their order.
func TestParallelOutputInLineOrder(t *testing.T) {
	sp := &spawner{}
	code, out := runParallel(t, sp, 4, false, "sleep-60 a\nsleep-40 b\nsleep-20 c\nsleep-0 d\n:json on\nsleep-0 e\n")
	if want := "a\nb\nc\nd\n(:json on)\ne\n"; out != want || code != 0 {
		t.Errorf("exit %d, output\n%s\nwant\n%s", code, out, want)
	}
	if m := sp.maxFlight.Load(); m > 4 {
		t.Errorf("%d lines in flight at most, want 4 at most (--parallel 4)", m)
	}
}

// TestParallelLimit: no more lines in flight than Parallel, and all of
// them at once when allowed.
func TestParallelLimit(t *testing.T) {
	sp := &spawner{release: make(chan struct{}), started: make(chan string, 16)}
	var script strings.Builder
	for i := range 10 {
		fmt.Fprintf(&script, "sleep-0 l%d\n", i)
	}
	done := make(chan string, 1)
	go func() { _, out := runParallel(t, sp, 3, false, script.String()); done <- out }()
	for range 3 {
		select {
		case <-sp.started:
		case <-time.After(5 * time.Second):
			t.Fatal("three lines should be in flight")
		}
	}
	select {
	case l := <-sp.started:
		t.Fatalf("a fourth line (%s) started with --parallel 3", l)
	case <-time.After(50 * time.Millisecond):
	}
	close(sp.release)
	out := <-done
	if strings.Count(out, "\n") != 10 || !strings.HasPrefix(out, "l0\nl1\nl2\n") || !strings.HasSuffix(out, "l9\n") {
		t.Errorf("output:\n%s", out)
	}
	if m := sp.maxFlight.Load(); m != 3 {
		t.Errorf("%d in flight at most, want 3", m)
	}
}

// TestBackgroundAmpersand: without Parallel, a line ending in & runs
// without waiting; wait and the REPL's own commands wait for it; the
// exit status is the first failure's in line order, and later lines
// already in flight still print.
func TestBackgroundAmpersand(t *testing.T) {
	sp := &spawner{}
	code, out := runParallel(t, sp, 1, false, "sleep-50 a &\nsleep-0 b &\nwait\nfail-5-100 c &\nsleep-0 d &\nwait\nsleep-0 never\n")
	if want := "a\nb\n(wait)\nc\nd\n"; out != want || code != 5 {
		t.Errorf("exit %d, output\n%s\nwant exit 5 and\n%s", code, out, want)
	}

	// The first failure in line order is the status, even when a later
	// line fails first; --keep-going runs on.
	for _, keepGoing := range []bool{false, true} {
		sp = &spawner{}
		code, out = runParallel(t, sp, 4, keepGoing, "fail-4-80 x\nfail-5 y\n")
		if code != 4 || out != "x\ny\n" {
			t.Errorf("keep going %v: exit %d, output\n%s\nwant exit 4 (the first line's)", keepGoing, code, out)
		}
	}
	sp = &spawner{}
	code, out = runParallel(t, sp, 4, true, "fail-3 x\nsleep-0 y\n:fail\nsleep-0 z\n")
	if want := "x\ny\n(:fail)\nz\n"; out != want || code != 3 {
		t.Errorf("exit %d, output\n%s\nwant exit 3 and\n%s", code, out, want)
	}

	// & on a command that runs in order, or alone, is refused.
	sp = &spawner{}
	code, out = runParallel(t, sp, 1, false, ":json on &\n")
	if code != 2 || !strings.Contains(out, ":json runs in order") {
		t.Errorf("exit %d, output %s", code, out)
	}
	// A quoted & is an argument.
	sp = &spawner{}
	code, out = runParallel(t, sp, 1, false, ":say '&'\n")
	if code != 0 || out != "(:say &)\n" {
		t.Errorf("exit %d, output %s", code, out)
	}
}

// TestBackgroundInterrupt: an interrupt cancels the lines in flight, and
// Run waits for them.
func TestBackgroundInterrupt(t *testing.T) {
	sp := &spawner{release: make(chan struct{}), started: make(chan string, 4)}
	pr, pw := io.Pipe()
	defer pw.Close()
	sc := NewScript(pr)
	r := &Runner{Read: sc.ReadCommand, Exec: sp.exec, Spawn: sp.spawn, Parallel: 4, Report: func(error, bool) int { return 2 }}
	done := make(chan int, 1)
	go func() { done <- r.Run(context.Background()) }()
	go fmt.Fprint(pw, "sleep-0 a\nsleep-0 b\n")
	for range 2 {
		<-sp.started
	}
	r.Interrupt()
	pw.Close()
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("exit %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end after the interrupt")
	}
	if n := sp.inFlight.Load(); n != 0 {
		t.Errorf("%d lines still in flight after Run", n)
	}
}
