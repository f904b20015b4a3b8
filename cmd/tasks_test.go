package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
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

// legacyTaskServer is a 2025-11-25 server over Streamable HTTP (JSON
// responses) that knows one task, which failed: tasks/get says so, and
// tasks/result returns the tool's result with isError, as the spec says a
// failed tool task does (basic/utilities/tasks, "Task Execution Errors").
func legacyTaskServer(t *testing.T) string {
	t.Helper()
	const task = `{"taskId":"t-1","status":"failed","statusMessage":"boom","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}`
	return fakeHTTPServer(t, func(w http.ResponseWriter, m fakeRequest) {
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"fake","version":"1"}}`
		case "tasks/get":
			result = task
		case "tasks/result":
			result = `{"content":[{"type":"text","text":"it broke"}],"isError":true,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, m.ID)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	})
}

// The result of a failed tool task has isError: tasks result prints it
// and exits 5, as tools call --task does with the same result (and as a
// failed task does in the 2026-07-28 era).
func TestTasksResultOfFailedTaskExits5(t *testing.T) {
	t.Parallel()
	u := legacyTaskServer(t)
	r := runMcpx(t, nil, "tasks", "result", "t-1", "--protocol-era", "legacy", "--url", u)
	if r.code != ExitServerError || !strings.Contains(r.stdout, "it broke") {
		t.Errorf("exit %d, want 5 with the result shown\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runMcpx(t, nil, "tasks", "result", "t-1", "--json", "--protocol-era", "legacy", "--url", u)
	if r.code != ExitServerError || !strings.Contains(r.stdout, `"isError": true`) || !strings.Contains(r.stderr, `"code":"tool_error"`) {
		t.Errorf("--json: exit %d, want 5 with the result as received\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// A task's ttl is sent in whole milliseconds: a --ttl under one would be
// sent as 0, asking the server to keep the task for no time at all.
func TestTaskTTLUnderAMillisecond(t *testing.T) {
	t.Parallel()
	r := runMcpx(t, nil, "tools", "call", "x", "--task", "--ttl", "500us", "--", "false")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--ttl is sent in whole milliseconds") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}
