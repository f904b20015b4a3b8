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
