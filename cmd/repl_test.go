package cmd

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

func TestReplExamples(t *testing.T) {
	t.Parallel()
	in := `  mcpx tools call echo message=hi -- node server.js
  mcpx tools call get-sum a=2 b=3 --json -- node server.js
  mcpx tools list --url http://127.0.0.1:3001/mcp
  mcpx ping`
	want := `  tools call echo message=hi
  tools call get-sum a=2 b=3 --json
  tools list
  ping`
	if got := replExamples(in); got != want {
		t.Errorf("replExamples:\n%s\nwant:\n%s", got, want)
	}
}

func TestHistoryPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MCPX_HISTORY_FILE": "/x/h", "XDG_STATE_HOME": "/s", "HOME": "/home/a"}, "/x/h"},
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/home/a"}, "/s/mcpx/history"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/a"}, "/home/a/.local/state/mcpx/history"},
		{map[string]string{"HOME": "/home/a"}, "/home/a/.local/state/mcpx/history"},
		{map[string]string{}, ""},
	} {
		ios, _, _ := NewTestIOStreams(tc.env)
		if got := historyPath(ios); got != tc.want {
			t.Errorf("historyPath(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestNoteQueue(t *testing.T) {
	t.Parallel()
	q := newNoteQueue()
	q.add(&jsonrpc.Message{Method: "notifications/message"})
	q.add(&jsonrpc.Message{Method: "notifications/resources/updated", Params: []byte(`{"uri":"a"}`)})
	q.add(&jsonrpc.Message{Method: "notifications/resources/updated", Params: []byte(`{"uri":"b"}`)})
	ctx := context.Background()

	// The oldest match is taken, once; globs work.
	m, err := q.take(ctx, "notifications/resources/*", nil)
	if err != nil || string(m.Params) != `{"uri":"a"}` {
		t.Fatalf("took %v, %v", m, err)
	}
	m, _ = q.take(ctx, "notifications/resources/updated", nil)
	if string(m.Params) != `{"uri":"b"}` {
		t.Fatalf("took %s", m.Params)
	}

	// Waiting for one that has not come yet.
	got := make(chan *jsonrpc.Message, 1)
	go func() {
		m, _ := q.take(ctx, "notifications/tools/list_changed", nil)
		got <- m
	}()
	q.add(&jsonrpc.Message{Method: "notifications/tools/list_changed"})
	select {
	case m := <-got:
		if m == nil || m.Method != "notifications/tools/list_changed" {
			t.Fatalf("took %v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("take did not see the notification")
	}

	// Bounded by ctx, or by the end of the session.
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := q.take(tctx, "nothing", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("take without a match: %v", err)
	}
	gone := make(chan struct{})
	close(gone)
	if _, err := q.take(ctx, "nothing", gone); !errors.Is(err, inspector.ErrServerGone) {
		t.Errorf("take after the end: %v", err)
	}
	// The message left is still there; clear drops it.
	q.clear()
	tctx, cancel = context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := q.take(tctx, "notifications/message", nil); err == nil {
		t.Error("clear kept a notification")
	}
}

func TestExitStatusIsSilent(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	g := &globalOptions{io: &IOStreams{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}}
	if code := g.report(&exitStatus{code: 5}); code != 5 || errOut.String() != "" {
		t.Errorf("report(exitStatus 5) = %d, printed %q", code, errOut.String())
	}
}
