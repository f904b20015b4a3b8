package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// A request run detached from its caller's context outlives the caller
// (an interrupt returns at once), but not the session: Close ends it and
// returns once it has ended.
func TestSessionCloseWaitsForDetachedRequests(t *testing.T) {
	t.Parallel()
	s, srv, _ := newTestSession(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var ended atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- s.detached(ctx, func(dctx context.Context) error {
			defer ended.Store(true)
			_, err := s.Call(dctx, "tasks/get", nil)
			return err
		})
	}()
	srv.nextRequest("tasks/get") // never answered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("detached returned %v, want the caller's cancellation", err)
		}
	case <-time.After(wait):
		t.Fatal("detached did not return when its caller's context ended")
	}
	if ended.Load() {
		t.Fatal("the detached request ended with its caller's context")
	}
	s.Close()
	if !ended.Load() {
		t.Error("Close returned while the detached request was still running")
	}
	if err := s.detached(context.Background(), func(context.Context) error { return nil }); err == nil {
		t.Error("a closed session ran a detached request")
	}
}

// A task's handler runs in the background, owned by the store: Close
// cancels it and returns once it has returned.
func TestTaskStoreCloseWaitsForHandlers(t *testing.T) {
	t.Parallel()
	ts := NewTaskStore()
	started, stopping, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := ts.Wrap(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		close(stopping)
		<-release // a handler that takes a moment to stop
		return nil, ctx.Err()
	})
	if _, err := h(context.Background(), "sampling/createMessage", json.RawMessage(`{"task":{}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the task's handler did not start")
	}
	closed := make(chan struct{})
	go func() {
		ts.Close()
		close(closed)
	}()
	select {
	case <-stopping:
	case <-time.After(wait):
		t.Fatal("Close did not cancel the task's handler")
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a task's handler was still running")
	default:
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(wait):
		t.Fatal("Close did not return once the handler had")
	}
	// After Close, a task ends before it starts.
	res, err := h(context.Background(), "sampling/createMessage", json.RawMessage(`{"task":{}}`))
	if err != nil || len(res) == 0 {
		t.Errorf("a task after Close: %s, %v", res, err)
	}
}
