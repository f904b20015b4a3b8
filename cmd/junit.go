package cmd

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/record"
)

// writeJUnit writes verify's result for trace as a JUnit XML report to
// name (mcpx verify --junit), atomically; runErr is why the verification
// stopped early, if it did.
func writeJUnit(ctx context.Context, name, trace string, res *record.VerifyResult, elapsed time.Duration, runErr error) error {
	var b bytes.Buffer
	if err := res.WriteJUnit(&b, record.JUnitOptions{Name: filepath.Base(trace), Time: elapsed, Err: runErr}); err != nil {
		return err
	}
	// Like the trace, the report holds what the session exchanged: its
	// owner's only.
	if err := outfile.WriteFile(ctx, name, b.Bytes(), outfile.Options{Perm: 0o600}); err != nil {
		return fmt.Errorf("--junit %s: %w", name, err)
	}
	return nil
}
