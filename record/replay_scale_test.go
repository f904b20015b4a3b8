package record

import (
	"bytes"
	"fmt"
	"testing"
)

// A long session whose client sends many notifications, each followed
// by something the server sent on its own (a log line while no request
// was in flight): every message the client sends checks what the held
// output still waits for. Those checks look at a number of steps in
// proportion to the session, not to its square: eight times the
// messages, about eight times the steps looked at (a check scanning back
// to the session's start looked at 64 times as many: 40,000 messages,
// 0.2 s then, took over 10 s). Counted, not timed, so that a loaded
// machine cannot fail it.
func TestReplayLongSessionIsLinear(t *testing.T) {
	t.Parallel()
	run := func(n int) int {
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
		s := newEraSession(sc, &r.opts, "", nil)
		for i := range sc.steps {
			if outs := s.emit(i); len(outs) != 1 {
				t.Fatalf("step %d of %d: %d outputs, want the log line it caused", i, n, len(outs))
			}
		}
		return s.gateLooks
	}
	small, large := run(2500), run(20000)
	if small == 0 {
		t.Fatal("no steps looked at: the test no longer exercises the held output's checks")
	}
	if ratio := float64(large) / float64(small); ratio > 10 {
		t.Errorf("20,000 messages looked at %d steps, 2,500 at %d: %.0f times as many, not about 8", large, small, ratio)
	}
}

// A long recording and a client that sends, after each recorded request,
// one the recording lacks: each is answered with an error naming what the
// recording has instead (the next recorded request), and finding that
// looks at the recorded requests of the method asked for and on from the
// last unused request found, not through the whole recording (it did,
// for each such request: 20,000 of them in a 20,000-exchange recording
// looked at 800 million steps). Counted, not timed.
func TestReplayUnrecordedRequestsAreLinear(t *testing.T) {
	t.Parallel()
	run := func(n int) int {
		lines := make([]string, 0, 2*n)
		for i := range n {
			lines = append(lines,
				fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d"}}`, i+1, i),
				fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i+1))
		}
		r, err := NewReplayer(mkTrace(lines...), ReplayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := r.script(r.sigs[0].n)
		if err != nil {
			t.Fatal(err)
		}
		s := newEraSession(sc, &r.opts, "", nil)
		for i := range n {
			// The recorded request, then one the recording lacks: the
			// error names the next recorded request, further each time.
			if outs := s.handleMsg(parseMessage(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d"}}`, i+1, i))); len(outs) != 1 {
				t.Fatalf("recorded request %d of %d: %d outputs, want its response", i, n, len(outs))
			}
			if i == n-1 {
				break
			}
			outs := s.handleMsg(parseMessage(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"x%d","method":"resources/list"}`, i)))
			if len(outs) != 1 || !bytes.Contains(outs[0].frame, []byte("the next recorded request is tools/call")) {
				t.Fatalf("request %d of %d: %d outputs, want one, the error naming the next recorded request", i, n, len(outs))
			}
		}
		return s.unmatchedLooks
	}
	small, large := run(2500), run(20000)
	if small == 0 {
		t.Fatal("no steps looked at: the test no longer exercises unmatched")
	}
	if ratio := float64(large) / float64(small); ratio > 10 {
		t.Errorf("20,000 unrecorded requests of a 20,000-exchange recording looked at %d steps, 2,500 of 2,500 at %d: %.0f times as many, not about 8", large, small, ratio)
	}
}
