package testwait_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// fakeTB records a failure instead of failing the test, and stops the
// goroutine as FailNow does.
type fakeTB struct {
	testing.TB
	msg string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

// run calls fn with a fakeTB and returns what it failed with, "" if it
// did not.
func run(fn func(tb testing.TB)) (msg string) {
	tb := &fakeTB{}
	defer func() {
		if r := recover(); r != nil && r != any(tb) {
			panic(r)
		}
		msg = tb.msg
	}()
	fn(tb)
	return ""
}

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var n atomic.Int32
		go func() {
			time.Sleep(time.Second)
			n.Store(1)
		}()
		if msg := run(func(tb testing.TB) { testwait.For(tb, "the flag", func() bool { return n.Load() == 1 }) }); msg != "" {
			t.Fatalf("For failed: %s", msg)
		}
		// The poll backs off to at most 20ms, so it notices soon.
		if d := time.Since(start); d < time.Second || d > time.Second+25*time.Millisecond {
			t.Errorf("For returned after %s, want just after 1s", d)
		}
	})
}

func TestForFailsAtTheBoundNamingWhat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		msg := run(func(tb testing.TB) {
			testwait.For(tb, "the server to start", func() bool { calls++; return false })
		})
		if want := "timed out after 30s waiting for the server to start"; msg != want {
			t.Errorf("failure %q, want %q", msg, want)
		}
		if d := time.Since(start); d != testwait.Bound {
			t.Errorf("For gave up after %s, want exactly %s", d, testwait.Bound)
		}
		// It polled all along, not only at the start and the end.
		if calls < int(testwait.Bound/(20*time.Millisecond)) {
			t.Errorf("cond called %d times", calls)
		}
	})
}

func TestWithinUsesItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		msg := run(func(tb testing.TB) { testwait.Within(tb, 300*time.Millisecond, "x", func() bool { return false }) })
		if !strings.HasPrefix(msg, "timed out after 300ms waiting for x") {
			t.Errorf("failure %q", msg)
		}
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Errorf("gave up after %s", d)
		}
	})
}

func TestPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if !testwait.Poll(0, func() bool { return true }) {
			t.Error("Poll(0) of a true condition is false: it must look once")
		}
		if testwait.Poll(time.Second, func() bool { return false }) {
			t.Error("Poll of a false condition is true")
		}
		n := 0
		if !testwait.Poll(time.Second, func() bool { n++; return n == 3 }) {
			t.Error("Poll gave up on a condition that became true")
		}
	})
}
