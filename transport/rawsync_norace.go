//go:build linux && !race

package transport

// ioRelease and ioAcquire annotate raw reads and writes for the race
// detector (rawsync_race.go); without it they do nothing.
func ioRelease() {}
func ioAcquire() {}
