package testwait

import (
	"flag"
	"runtime"
	"strconv"
)

// RaiseParallel makes go test run up to perCPU parallel tests per CPU at
// once in this package, instead of its default of one per CPU, unless
// -test.parallel was given. It is for packages whose parallel tests spend
// their time waiting for child processes, servers and timeouts, not
// computing (the end-to-end scripts): with one test per CPU they would
// mostly wait in turn. Under the race detector, where the same tests
// compute several times as much, the factor is halved. Call it from
// TestMain, before m.Run.
func RaiseParallel(perCPU int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			given = true
		}
	})
	if given {
		return
	}
	if raceEnabled {
		perCPU = max(perCPU/2, 1)
	}
	_ = flag.Set("test.parallel", strconv.Itoa(perCPU*runtime.GOMAXPROCS(0)))
}

// raceEnabled is set when built with -race (race.go).
var raceEnabled bool
