// Package testwait is the one way tests wait for something another
// goroutine or process does and that they cannot be told about: it polls a
// condition until it holds or a bound passes, then fails the test saying
// what never happened. A wait that can be a channel receive should be one;
// this is for state that can only be looked at (a file, a buffer, a
// process table).
//
// The bound only matters when something is broken, so it is generous (a
// loaded machine running -race is slow), and the poll starts fast and backs
// off, so a condition that holds soon costs about nothing. Inside a
// testing/synctest bubble the polling sleeps on the fake clock, so the wait
// is instant and the bound is fake time too.
package testwait

import (
	"testing"
	"time"
)

// Bound is how long For waits before it fails the test.
const Bound = 30 * time.Second

// maxInterval caps the backoff between two looks at the condition.
const maxInterval = 20 * time.Millisecond

// For polls cond until it returns true, and fails tb (FailNow) when that
// has not happened within Bound. what completes "timed out waiting for"
// in the failure message.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	Within(tb, Bound, what, cond)
}

// Within is For with a bound of its own, for a test whose point is that
// something happens within d.
func Within(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Poll(d, cond) {
		tb.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// Poll polls cond until it returns true or bound has passed, and reports
// whether it did: for callers that fail their own way (a testscript
// command, a test that goes on to report more). cond is always called at
// least once, and once more at the bound.
func Poll(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	interval := time.Millisecond
	for !cond() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(interval, left))
		interval = min(2*interval, maxInterval)
	}
	return true
}
