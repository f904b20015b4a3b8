package memhint

import (
	"testing"
)

var sink []byte

// Release collects after work that allocated more than Burst, and not
// after work that allocated little, however much was allocated before.
func TestRelease(t *testing.T) {
	calls := 0
	old := free
	free = func() { calls++ }
	t.Cleanup(func() { free = old })
	for range 100 {
		m := Mark()
		sink = make([]byte, 1<<20)
		Release(m)
	}
	if calls != 0 {
		t.Errorf("collected %d times after work that allocated 1 MiB each", calls)
	}
	m := Mark()
	sink = make([]byte, Burst+1)
	sink = nil
	Release(m)
	if calls != 1 {
		t.Errorf("collected %d times after work that allocated a burst, want once", calls)
	}
}
