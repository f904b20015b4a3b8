package testwait_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

func TestMain(m *testing.M) {
	testwait.RaiseParallel(4)
	os.Exit(m.Run())
}

func TestRaiseParallel(t *testing.T) {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.parallel") {
			t.Skip("-test.parallel given: RaiseParallel leaves it")
		}
	}
	want := 4 * runtime.GOMAXPROCS(0)
	if raceEnabled {
		want = 2 * runtime.GOMAXPROCS(0)
	}
	if got := flag.Lookup("test.parallel").Value.String(); got != strconv.Itoa(want) {
		t.Errorf("-test.parallel is %s, want %d", got, want)
	}
}
