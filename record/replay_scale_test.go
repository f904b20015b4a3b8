package record

import (
	"fmt"
	"testing"
	"time"
)

// A long session whose client sends many notifications, each followed
// by something the server sent on its own (a log line while no request
// was in flight): every message the client sends checks what the held
// output still waits for. Those checks cost time in proportion to the
// session, not to its square: eight times the messages take about eight
// times as long (a check scanning back to the session's start took 64
// times: 40,000 messages, 0.2 s then, took over 10 s).
func TestReplayLongSessionIsLinear(t *testing.T) {
	t.Parallel()
	run := func(n int) time.Duration {
		lines := make([]string, 0, 2*n)
		for i := range n {
			lines = append(lines,
				fmt.Sprintf(`> {"jsonrpc":"2.0","method":"notifications/x","params":{"n":%d}}`, i),
				fmt.Sprintf(`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`, i))
		}
		r, err := NewReplayer(mkTrace(lines...), ReplayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := r.script(r.sigs[0].n)
		if err != nil {
			t.Fatal(err)
		}
		best := time.Duration(1<<63 - 1)
		for range 3 {
			s := newEraSession(sc, &r.opts, "", nil)
			start := time.Now()
			for i := range sc.steps {
				if outs := s.emit(i); len(outs) != 1 {
					t.Fatalf("step %d of %d: %d outputs, want the log line it caused", i, n, len(outs))
				}
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := run(2500), run(20000)
	if ratio := float64(large) / float64(small); ratio > 24 {
		t.Errorf("20,000 messages took %v, 2,500 took %v: %.0f times as long, not about 8", large, small, ratio)
	}
}
