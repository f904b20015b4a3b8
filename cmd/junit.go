package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/record"
)

// writeJUnit writes verify's result for one trace or several as a JUnit
// XML report to name (mcpx verify --junit), atomically. report names the
// whole report (<testsuites name>): the trace's file name when one trace
// is verified, "" for several ("mcpx verify", see record.WriteJUnitRuns),
// whatever number of them ran before the run stopped; named after the
// first trace when the run stopped there, the report of a run of many
// looked like one of that trace alone.
//
// An interrupted run (Ctrl-C, a CI job cancelled) writes it still, with
// what was verified and the trace interrupted as an error: otherwise no
// report, or an older run's, passing, stayed in its place. ctx no longer
// bounds the write then; a few seconds do (a FIFO nobody reads).
func writeJUnit(ctx context.Context, name, report string, elapsed time.Duration, runs ...record.JUnitRun) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
	}
	for i := range runs {
		if errors.Is(runs[i].Options.Err, context.Canceled) {
			runs[i].Options.Err = errInterrupted
		}
	}
	var b bytes.Buffer
	if err := record.WriteJUnitRuns(&b, report, elapsed, runs...); err != nil {
		return err
	}
	// Like the trace, the report holds what the session exchanged: its
	// owner's only.
	if err := outfile.WriteFile(ctx, name, b.Bytes(), outfile.Options{Perm: 0o600}); err != nil {
		return fmt.Errorf("--junit %s: %w", name, err)
	}
	return nil
}

// errInterrupted is how a report names a verification the run's
// interruption stopped (what mcpx prints for it too).
var errInterrupted = errors.New("interrupted")
