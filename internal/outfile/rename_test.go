package outfile

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// A rename Windows refuses while another process has the target open is
// tried again until that process lets go of it; any other failure is
// reported at once, and a refusal that lasts is reported after the wait.
func TestRetryRename(t *testing.T) {
	refusal := func(errno syscall.Errno) error {
		return &os.LinkError{Op: "rename", Old: "a", New: "b", Err: errno}
	}
	for _, errno := range []syscall.Errno{5, 32} { // ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION
		calls := 0
		rename := func(string, string) error {
			if calls++; calls < 3 {
				return refusal(errno)
			}
			return nil
		}
		if err := retryRename(rename, sharingRefusal, time.Minute, "a", "b"); err != nil || calls != 3 {
			t.Errorf("errno %d: %v after %d calls", errno, err, calls)
		}
	}

	calls := 0
	other := refusal(syscall.ENOENT)
	rename := func(string, string) error { calls++; return other }
	if err := retryRename(rename, sharingRefusal, time.Minute, "a", "b"); !errors.Is(err, other) || calls != 1 {
		t.Errorf("another error: %v after %d calls", err, calls)
	}

	calls = 0
	rename = func(string, string) error { calls++; return refusal(32) }
	if err := retryRename(rename, sharingRefusal, 0, "a", "b"); !sharingRefusal(err) || calls != 1 {
		t.Errorf("lasting refusal: %v after %d calls", err, calls)
	}
}
