package sessiond

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
)

// The session process reads its input line, then watches its standard
// input: its end before the session is open means mcpx connect went away
// (killed), and the session process must stop; after Ready it means
// nothing.
func TestReadInput(t *testing.T) {
	for _, ready := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			r, w := io.Pipe()
			go w.Write([]byte(`["connect","x"]` + "\n"))
			out := NewOutput(io.Discard)
			line, ctx, err := ReadInput(t.Context(), r, out, 1<<20)
			if err != nil || string(line) != `["connect","x"]` {
				t.Fatalf("ReadInput = %q, %v", line, err)
			}
			synctest.Wait()
			if ctx.Err() != nil {
				t.Fatal("the context ended while mcpx connect is there")
			}
			if ready {
				// What Ready does first.
				log, err := os.Create(filepath.Join(t.TempDir(), "log"))
				if err != nil {
					t.Fatal(err)
				}
				defer log.Close()
				out.mu.Lock()
				out.log = log
				out.mu.Unlock()
			}
			w.Close()
			synctest.Wait()
			switch cause := context.Cause(ctx); {
			case ready && cause != nil:
				t.Errorf("the open session's context ended: %v", cause)
			case !ready && !errors.Is(cause, ErrStarterGone):
				t.Errorf("the context's cause = %v, want ErrStarterGone", cause)
			}
		})
	}
	// A line longer than the limit, or none at all, is an error.
	for _, in := range []string{strings.Repeat("x", 10000) + "\n", "no newline"} {
		if _, _, err := ReadInput(t.Context(), strings.NewReader(in), NewOutput(io.Discard), 5000); err == nil {
			t.Errorf("ReadInput of %d bytes %q…: no error", len(in), in[:5])
		}
	}
}

// A long-lived session's log keeps what came last once it is full, the
// note of how the session ended with it: it stopped writing at its size
// limit, and a command naming the session once it had ended then pointed
// to a log that did not say how.
func TestLogKeepsItsEnd(t *testing.T) {
	defer func(m int64) { maxLog = m }(maxLog)
	maxLog = 1000
	path := filepath.Join(t.TempDir(), "t.log")
	log, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	out := NewOutput(io.Discard)
	out.log = log // what Ready does
	for range 200 {
		if _, err := io.WriteString(out, "server| chatter chatter chatter chatter\n"); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = io.WriteString(out, "server| "+strings.Repeat("x", 5000)+"\n") // longer than the log
	_, _ = io.WriteString(out, "mcpx: 12:00:00 "+endNote("t", "the connection to the server ended")+"\n")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1000+200 {
		t.Errorf("the log holds %d bytes, past its limit of 1000", len(b))
	}
	if !strings.Contains(string(b), "the log reached its size limit (1000 bytes) and started over") {
		t.Errorf("the log does not say it started over:\n%s", b)
	}
	if got := EndedIn(path, "t"); got != "the connection to the server ended" {
		t.Errorf("EndedIn = %q; the log:\n%s", got, b)
	}
}
