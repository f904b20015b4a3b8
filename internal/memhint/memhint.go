// Package memhint hands memory back to the system after a burst of
// allocation in a process that lives on: the REPL and a held session.
//
// Go's garbage collector sets its next goal from the heap live at the last
// collection. A collection that ran while a large result was live (a
// 100 MiB tool result, its frame, its decoded text) let the heap grow to
// twice that before the next one: three such results in a row peaked a
// REPL at 2.7 times the size of one and a session at 3.6 times, and the
// memory stayed with the process long after. A one-shot command exits
// instead, and needs none of this.
package memhint

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Burst is how many bytes allocated since the last Release make it
// collect: far more than a command or a line of the REPL allocates
// unless it handled a large message.
const Burst = 64 << 20

var (
	// lastAllocs is the allocation count when Release last looked.
	lastAllocs atomic.Uint64
	// free is debug.FreeOSMemory (a test counts its calls).
	free = debug.FreeOSMemory
)

// Release collects the garbage and returns the memory it frees to the
// system when more than Burst bytes were allocated since it last did or
// was last called: after a command or a line that handled a large
// message. Otherwise it costs a read of one runtime metric. It is safe
// for concurrent use; of concurrent calls after one burst, one collects.
func Release() {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	now := s[0].Value.Uint64()
	last := lastAllocs.Load()
	if now-last < Burst || !lastAllocs.CompareAndSwap(last, now) {
		return
	}
	free()
}
