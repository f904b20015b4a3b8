package cmd

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/record"
)

// writeJUnit writes verify's result for one trace or several as a JUnit
// XML report to name (mcpx verify --junit), atomically.
func writeJUnit(ctx context.Context, name string, elapsed time.Duration, runs ...record.JUnitRun) error {
	var b bytes.Buffer
	report := ""
	if len(runs) == 1 {
		report = runs[0].Options.Name
	}
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
