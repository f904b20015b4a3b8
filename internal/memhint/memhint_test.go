package memhint

import (
	"testing"
)

var sink []byte

// Release collects after a burst of allocation, once, and not after
// small allocations.
func TestRelease(t *testing.T) {
	calls := 0
	old := free
	free = func() { calls++ }
	t.Cleanup(func() { free = old })
	Release() // whatever the test binary allocated before
	calls = 0
	for range 100 {
		sink = make([]byte, 1<<10)
		Release()
	}
	if calls != 0 {
		t.Errorf("collected %d times after small allocations", calls)
	}
	sink = make([]byte, Burst+1)
	sink = nil
	Release()
	Release()
	if calls != 1 {
		t.Errorf("collected %d times after a burst, want once", calls)
	}
}
