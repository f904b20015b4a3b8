package transport

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeTree records the shutdown steps and makes the server exit at one of
// them.
type fakeTree struct {
	steps  []string
	exitAt string // the step after which the server has exited; "" never
	exited chan struct{}
}

func (f *fakeTree) step(name string) {
	f.steps = append(f.steps, name)
	if name == f.exitAt {
		close(f.exited)
	}
}

func (f *fakeTree) follow()    { f.step("follow") }
func (f *fakeTree) terminate() { f.step("terminate") }
func (f *fakeTree) kill()      { f.step("kill") }
func (f *fakeTree) release()   { f.step("release") }
func (f *fakeTree) exiting()   {}

// The shutdown sequence is the same on every platform; only the meaning
// of the steps differs (signals to a process group, a job object).
func TestShutdownTreeSequence(t *testing.T) {
	tests := []struct {
		exitAt string
		want   []string
		wantOK bool
	}{
		{"close-input", []string{"follow", "close-input", "release"}, true},
		{"terminate", []string{"follow", "close-input", "follow", "terminate", "release"}, true},
		{"kill", []string{"follow", "close-input", "follow", "terminate", "follow", "kill", "release"}, true},
		// Even a server that survives being killed gets its tree released.
		{"", []string{"follow", "close-input", "follow", "terminate", "follow", "kill", "release"}, false},
	}
	for _, tt := range tests {
		t.Run("exit at "+tt.exitAt, func(t *testing.T) {
			t.Parallel()
			tree := &fakeTree{exitAt: tt.exitAt, exited: make(chan struct{})}
			// Waits before the step the server exits at time out at once;
			// the others would hang the test if they were not cut short by
			// the exit.
			wait := func(after string) time.Duration {
				i := slices.Index(tt.want, after)
				if j := slices.Index(tt.want, tt.exitAt); tt.exitAt != "" && i >= j {
					return time.Minute
				}
				return time.Millisecond
			}
			g := shutdownGraces{close: wait("close-input"), term: wait("terminate"), kill: wait("kill")}
			start := time.Now()
			ok := shutdownTree(tree, tree.exited, func() { tree.step("close-input") }, g)
			if ok != tt.wantOK {
				t.Errorf("shutdownTree = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, tree.steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("shutdownTree took %v: it kept waiting after the server exited", d)
			}
		})
	}
}
