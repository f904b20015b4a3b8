package recordtest_test

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/recordtest"
)

// A client under test gets the recorded answers, for as long as the test
// runs.
func TestReplay(t *testing.T) {
	conn := recordtest.Replay(t, "../testdata/greeter.jsonl", record.ReplayOptions{Strict: true})
	sess, err := inspector.Connect(t.Context(), conn, inspector.Options{
		Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "example", Version: "1.0"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Call(t.Context(), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Call(t.Context(), "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	if err != nil || !strings.Contains(string(res), "Hello, Ada!") {
		t.Errorf("tools/call = %s, %v", res, err)
	}
}

func TestReport(t *testing.T) {
	res := &record.VerifyResult{Exchanges: 2, Mismatches: []record.Mismatch{{
		Session: 1, Exchange: 2,
		Method: "tools/call", Request: []byte(`{"name":"e\u001b"}`), Problem: "the response differs",
		Diffs: []record.Difference{{Path: "$.result.x", Recorded: `"a"`, Live: "\"b\u202e\""}},
	}}}
	want := "✗ session 1, exchange 2 tools/call \"e\\x1b\": the response differs\n" +
		"    $.result.x\n      - recorded: \"a\"\n      + live:     \"\\\"b\\u202e\\\"\"\n" +
		"2 exchange(s) verified, 1 mismatch(es)"
	if got := recordtest.Report(res); got != want {
		t.Errorf("Report:\n%s\nwant\n%s", got, want)
	}
}
