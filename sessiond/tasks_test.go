package sessiond

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// taskServer is a handshake-era (2025-11-25) server written by hand (the
// Go SDK has no tasks) whose tools/call runs as a task. Before answering
// each tasks/get it sends progress for the call's token, which stays valid
// after the CreateTaskResult (spec 2025-11-25: basic/utilities/tasks,
// "Task Progress Notifications"); the task completes at poll polls (0:
// never, until tasks/cancel). Before answering a ping it sends progress 99
// for the token, late once the task is over.
type taskServer struct {
	polls int
	quiet bool // no progress at all

	mu      sync.Mutex
	methods []string
	// cancel is told when tasks/cancel comes.
	cancel chan struct{}
}

func newTaskServer(polls int) *taskServer {
	return &taskServer{polls: polls, cancel: make(chan struct{}, 1)}
}

func (f *taskServer) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.methods)
}

func (f *taskServer) serve(conn transport.Conn) {
	ctx := context.Background()
	task := func(status string) string {
		return `{"taskId":"t-1","status":"` + status + `","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":10}`
	}
	var token json.RawMessage
	polls := 0
	progress := func(n int) {
		if token != nil && !f.quiet {
			_ = conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` +
				string(token) + `,"progress":` + strconv.Itoa(n) + `}}`)})
		}
	}
	for {
		fr, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(fr.Data, &m)
		f.mu.Lock()
		f.methods = append(f.methods, m.Method)
		f.mu.Unlock()
		if m.ID == nil {
			continue
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"tasks","version":"1"}}`
		case "tools/call":
			token = m.Params.Meta.Token
			result = `{"task":` + task(inspector.TaskWorking) + `}`
		case "tasks/get":
			polls++
			progress(polls)
			status := inspector.TaskWorking
			if polls == f.polls {
				status = inspector.TaskCompleted
			}
			result = task(status)
		case "tasks/result":
			result = `{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`
		case "tasks/cancel":
			result = task(inspector.TaskCancelled)
			f.cancel <- struct{}{}
		case "ping":
			progress(99)
		}
		_ = conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)})
	}
}

// startTaskHeld holds a session with srv.
func startTaskHeld(t *testing.T, srv *taskServer) *held {
	t.Helper()
	a, b := transport.Pipe()
	go srv.serve(b)
	t.Cleanup(func() { a.Close() })
	return startHeldConn(t, Options{}, nil, a, &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "daemon", Version: "1"}})
}

// A task's progress reaches the attached command for the task's whole
// life, as over a connection of its own, not only until the
// CreateTaskResult answered the request: each update resets the command's
// timeout, which the task outlives here (a poll every 100ms, five of
// them, a timeout of 300ms). Once the task is over, its token is too.
func TestTaskProgressReachesTheCommand(t *testing.T) {
	srv := newTaskServer(5)
	h := startTaskHeld(t, srv)
	late := make(chan inspector.Progress, 10)
	s := h.command(t, inspector.Options{Timeout: 300 * time.Millisecond, OnWarning: func(string) {},
		OnLateProgress: func(_ jsonrpc.ID, p inspector.Progress) { late <- p }})
	var got []float64
	res, err := s.RunTool(t.Context(), inspector.ToolCall{Name: "job", Task: true, OnNote: func(string) {},
		Progress: func(p inspector.Progress) { got = append(got, p.Progress) }})
	if err != nil || !strings.Contains(string(res), "done") {
		t.Fatalf("RunTool: %s %v (progress %v; the server saw %v)", res, err, got, srv.seen())
	}
	if !slices.Equal(got, []float64{1, 2, 3, 4, 5}) {
		t.Errorf("progress %v, want [1 2 3 4 5] (one before each poll's answer)", got)
	}
	// The session has forgotten the token: progress after the task ended
	// is not passed on (it would come before the ping's answer).
	if _, err := s.Ping(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-late:
		t.Errorf("progress after the task ended was passed on: %+v", p)
	default:
	}
}

// A command that gives up on a task through the session — interrupted, or
// at its timeout — cancels it with tasks/cancel, as over a connection of
// its own (spec 2025-11-25: basic/utilities/tasks, "Cancelling Tasks").
func TestTaskGivenUpIsCancelled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{{"interrupted", 0}, {"timeout", 200 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTaskServer(0)
			srv.quiet = true
			h := startTaskHeld(t, srv)
			s := h.command(t, inspector.Options{Timeout: tc.timeout, OnWarning: func(string) {}})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			known := make(chan inspector.Task, 10)
			go func() {
				_, err := s.RunTool(ctx, inspector.ToolCall{Name: "job", Task: true, OnNote: func(string) {},
					OnTaskStatus: func(t inspector.Task) { known <- t }})
				done <- err
			}()
			receive(t, known, "the task's id")
			if tc.timeout == 0 {
				cancel()
			}
			receive(t, srv.cancel, "tasks/cancel")
			err := receive(t, done, "the call to end")
			var ce *inspector.TaskCancelledError
			var te *inspector.TaskTimeoutError
			switch {
			case tc.timeout == 0 && !errors.As(err, &ce):
				t.Errorf("err = %v, want a TaskCancelledError", err)
			case tc.timeout > 0 && (!errors.As(err, &te) || !te.Cancelled):
				t.Errorf("err = %v, want a TaskTimeoutError, cancelled", err)
			}
		})
	}
}

// The progress of a task whose command detached while it ran ends with the
// command: nothing is left to pass it to.
func TestTaskOfADetachedCommandEnds(t *testing.T) {
	srv := newTaskServer(0)
	h := startTaskHeld(t, srv)
	s := h.command(t, inspector.Options{OnWarning: func(string) {}})
	res, err := s.Call(t.Context(), "tools/call", json.RawMessage(`{"name":"job","task":{}}`),
		inspector.WithTaskProgress(func(inspector.Progress) {}))
	if err != nil || !strings.Contains(string(res), `"taskId":"t-1"`) {
		t.Fatalf("tools/call: %s %v", res, err)
	}
	h.d.mu.Lock()
	_, followed := h.d.tasks["t-1"]
	h.d.mu.Unlock()
	if !followed {
		t.Fatal("the task's progress is not passed on")
	}
	s.Close()
	for note := receive(t, h.notes, "a note"); !strings.HasPrefix(note, "detached"); note = receive(t, h.notes, "a note") {
	}
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if len(h.d.tasks) != 0 {
		t.Errorf("tasks followed after the command detached: %v", h.d.tasks)
	}
}
