//go:build unix

package cmd

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestInterruptCancelsWhateverTheGuess interrupts a command waiting for a
// server that never answers. The interrupt cancels it however the
// arguments looked beforehand: --version (mcpx's own flag, not tools
// call's) as --protocol-version's value makes onlyPrints guess that
// nothing runs, and the command is still watched. (--help as the value is
// refused: it is a flag of every command, so the value was left out.)
func TestInterruptCancelsWhateverTheGuess(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"tools", "call", "echo", "--protocol-version", "--version", "--", "sleep", "60"},
		{"tools", "call", "echo", "--args", "{}", "--", "sleep", "60"},
	} {
		t.Run(strings.Join(args[3:5], " "), func(t *testing.T) {
			t.Parallel()
			ios, _, stderr := NewTestIOStreams(nil)
			sigs := make(chan os.Signal, 1)
			ios.Signals = sigs
			sigs <- os.Interrupt // held until the command watches
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			code := make(chan int, 1)
			go func() { code <- Run(ctx, args, ios) }()
			select {
			case c := <-code:
				if c != ExitInterrupted {
					t.Errorf("exit %d, want %d (interrupted); stderr: %s", c, ExitInterrupted, stderr)
				}
			case <-time.After(20 * time.Second):
				cancel()
				<-code
				t.Fatalf("the interrupt did not end the run; stderr: %s", stderr)
			}
		})
	}
}
