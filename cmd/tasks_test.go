package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/tui"
)

// A task the server failed or cancelled is the server's answer, as a
// JSON-RPC error is (exit 5); a task mcpx gave up waiting for is a
// timeout (exit 6).
func TestClassifyTasks(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("tools/call: %w", &inspector.TaskEndedError{TaskID: "t", Status: "failed"}), ExitServerError},
		{&inspector.TaskEndedError{TaskID: "t", Status: "cancelled"}, ExitServerError},
		{fmt.Errorf("tools/call: %w", &inspector.TaskTimeoutError{TaskID: "t", Status: "working"}), ExitTimeout},
	} {
		if code, _ := classify(tc.err); code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.err, code, tc.code)
		}
	}
}

// A task's times and hints are shown when the server gave them, never as
// empty words ("created , updated").
func TestRenderTasksLeavesOutWhatIsMissing(t *testing.T) {
	var b strings.Builder
	renderTasks(tui.NewPrinter(&b, false), []json.RawMessage{
		json.RawMessage(`{"taskId":"a","status":"cancelled"}`),
		json.RawMessage(`{"taskId":"b","status":"working","createdAt":"T1","ttl":null,"pollInterval":5}`),
	})
	want := "task a: cancelled\ntask b: working\n  created T1, poll every 5ms\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
