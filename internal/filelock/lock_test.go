package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A second Lock of the same file (another process's, as the lock is per
// open file) waits for the first, says so once, gives up after max with
// a BusyError naming the lock file, takes the lock once the first lets
// go, and the last holder removes the lock file.
func TestLockWaitsAndRemoves(t *testing.T) {
	target := filepath.Join(t.TempDir(), "f.json")
	first := New(target)
	if err := first.Lock(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	second := New(target)
	defer second.Close()
	waits := 0
	second.OnWait = func() { waits++ }
	err := second.Lock(t.Context(), 100*time.Millisecond)
	var be *BusyError
	if !errors.As(err, &be) || be.Err != nil || be.Path != target+".lock" || !strings.Contains(err.Error(), target+".lock") {
		t.Fatalf("err = %v; want a BusyError naming %s.lock", err, target)
	}
	if waits != 1 {
		t.Errorf("OnWait called %d times, want 1", waits)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := second.Lock(ctx, time.Minute); !errors.As(err, &be) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want a BusyError with the context's error", err)
	}

	first.Close()
	if err := second.Lock(t.Context(), time.Minute); err != nil {
		t.Fatalf("after the first let go: %v", err)
	}
	second.Close()
	if _, err := os.Stat(target + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left: %v", err)
	}
}

// Acquire and its release, over and over, leave no lock file behind.
func TestAcquireRelease(t *testing.T) {
	target := filepath.Join(t.TempDir(), "f.json")
	for range 3 {
		release, err := Acquire(t.Context(), target, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(target + ".lock"); err != nil {
			t.Errorf("no lock file while held: %v", err)
		}
		release()
	}
	if _, err := os.Stat(target + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left: %v", err)
	}
}
