// Package memhint hands memory back to the system after a large result in
// a process that lives on: the REPL and a held session.
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
)

// Burst is how many bytes allocated during one piece of work (a line of
// the REPL) make Release collect: far more than a line allocates unless
// it handled a large message. A rule on the allocations since the last
// collection instead fired every few thousand small calls of a long
// script, each time a full collection of a large catalog.
const Burst = 64 << 20

// free is debug.FreeOSMemory (a test counts its calls).
var free = debug.FreeOSMemory

// Mark returns the bytes allocated so far, for Release.
func Mark() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Release collects the garbage and returns the memory it frees to the
// system when more than Burst bytes were allocated since mark (Mark): at
// the end of a piece of work that handled a large message. Otherwise it
// costs a read of one runtime metric.
func Release(mark uint64) {
	if now := Mark(); now > mark && now-mark > Burst {
		free()
	}
}

// Free collects the garbage and returns the memory it frees to the system
// at once: a session, after it wrote a large line.
func Free() { free() }
