package cmd

import (
	"context"
	"path/filepath"
	"reflect"
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

// The functions under which a session runs take its description by
// pointer: a connDesc is some 800 bytes, and a copy of it in each of
// their frames (with the frame that built it) took a one-shot HTTP
// command's main goroutine past 16 KiB of stack, which then grew to
// 32 KiB (issue 13).
func TestSessionFramesHoldNoDescription(t *testing.T) {
	ptr := reflect.TypeFor[*connDesc]()
	for name, fn := range map[string]any{
		"env.session":       (*env).session,
		"connector.connect": (*connector).connect,
		"connector.open":    (*connector).open,
		"lifecycle":         lifecycle,
		"newFeatures":       newFeatures,
	} {
		ft := reflect.TypeOf(fn)
		found := false
		for i := range ft.NumIn() {
			switch ft.In(i) {
			case ptr:
				found = true
			case ptr.Elem():
				t.Errorf("%s takes a connDesc by value", name)
			}
		}
		if !found {
			t.Errorf("%s takes no *connDesc", name)
		}
	}
}
