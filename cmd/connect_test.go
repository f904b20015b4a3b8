package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The connector dials with the caller's context: a run interrupted before
// the server starts does not start it (here a missing program, which
// would fail to start: exit 4) and is an interruption.
func TestConnectDialsWithTheCallersContext(t *testing.T) {
	t.Parallel()
	ios, _, errOut := NewTestIOStreams(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code := Run(ctx, []string{"ping", "--", filepath.Join(t.TempDir(), "no-such-server")}, ios)
	if code != ExitInterrupted || strings.Contains(errOut.String(), "cannot start server") {
		t.Errorf("exit %d, %s", code, errOut.String())
	}
}
