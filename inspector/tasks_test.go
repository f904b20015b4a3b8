package inspector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/transport"
)

func TestTaskStoreReceiver(t *testing.T) {
	store := NewTaskStore()
	defer store.Close()
	release := make(chan struct{})
	withdrawn := make(chan bool, 10)
	h := store.Wrap(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		select {
		case <-release:
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`), nil
		case <-ctx.Done():
			withdrawn <- Withdrawn(ctx)
			return nil, ctx.Err()
		}
	})
	ctx := testCtx(t)

	// Without "task" the handler answers directly.
	close(release)
	raw, err := h(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[]}`))
	if err != nil || !strings.Contains(string(raw), `"text":"hi"`) {
		t.Fatalf("plain request: %s %v", raw, err)
	}
	release = make(chan struct{})

	raw, err = h(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[],"task":{"ttl":60000}}`))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ Task Task }
	if err := json.Unmarshal(raw, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != TaskWorking {
		t.Fatalf("CreateTaskResult: %s %v", raw, err)
	}
	id := created.Task.TaskID
	if len(id) != 32 || created.Task.TTL == nil || *created.Task.TTL != 60000 || created.Task.CreatedAt == "" || created.Task.PollInterval == nil {
		t.Errorf("task fields: %s", raw)
	}

	get := func() Task {
		raw, err := store.Handle(ctx, "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var tk Task
		_ = json.Unmarshal(raw, &tk)
		return tk
	}
	if s := get().Status; s != TaskWorking {
		t.Errorf("status %s, want working", s)
	}

	// tasks/result blocks until the task is done.
	result := make(chan json.RawMessage, 1)
	go func() {
		raw, err := store.Handle(ctx, "tasks/result", json.RawMessage(`{"taskId":"`+id+`"}`))
		if err != nil {
			t.Error(err)
		}
		result <- raw
	}()
	select {
	case <-result:
		t.Fatal("tasks/result returned before the task finished")
	default:
	}
	close(release)
	select {
	case raw := <-result:
		if !strings.Contains(string(raw), `"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}}`) || !strings.Contains(string(raw), `"text":"hi"`) {
			t.Errorf("tasks/result: %s", raw)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("tasks/result did not return")
	}
	if s := get().Status; s != TaskCompleted {
		t.Errorf("status %s, want completed", s)
	}

	var rpcErr *jsonrpc.Error
	if _, err := store.Handle(ctx, "tasks/cancel", json.RawMessage(`{"taskId":"`+id+`"}`)); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("cancelling a completed task: want -32602, got %v", err)
	}
	if _, err := store.Handle(ctx, "tasks/get", json.RawMessage(`{"taskId":"nope"}`)); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown task: want -32602, got %v", err)
	}

	// Cancelling a running task stops its handler and keeps it cancelled.
	release = make(chan struct{})
	raw, _ = h(ctx, "elicitation/create", json.RawMessage(`{"task":{}}`))
	_ = json.Unmarshal(raw, &created)
	id2 := created.Task.TaskID
	if created.Task.TTL != nil {
		t.Errorf("no ttl requested: want null, got %d", *created.Task.TTL)
	}
	raw, err = store.Handle(ctx, "tasks/cancel", json.RawMessage(`{"taskId":"`+id2+`"}`))
	if err != nil || !strings.Contains(string(raw), `"status":"cancelled"`) {
		t.Fatalf("tasks/cancel: %s %v", raw, err)
	}
	if _, err := store.Handle(ctx, "tasks/result", json.RawMessage(`{"taskId":"`+id2+`"}`)); err == nil {
		t.Error("the result of a cancelled task must be an error")
	}
	// A person asked for it is told the server withdrew it.
	select {
	case w := <-withdrawn:
		if !w {
			t.Error("tasks/cancel: Withdrawn is false in the task's handler")
		}
	case <-time.After(wait):
		t.Fatal("tasks/cancel did not end the task's handler")
	}

	raw, err = store.Handle(ctx, "tasks/list", nil)
	if err != nil || strings.Count(string(raw), `"taskId"`) != 2 {
		t.Errorf("tasks/list: %s %v", raw, err)
	}
}

// fakeTaskServer answers a task-augmented tools/call over a pipe: the task
// is working for two polls, then completed. It records the methods it saw.
type fakeTaskServer struct {
	mu      sync.Mutex
	methods []string
	polls   int
	hold    bool   // never complete (for cancellation)
	stall   bool   // never answer tasks/get (an interrupt during a poll)
	tools   string // the tools/list result ({} when empty)
	// plainError answers a call without a task with an isError result
	// (as the official TypeScript SDK does for a tool that requires one).
	plainError bool
	// progress sends progress for the task's token before each answer
	// to tasks/get, and before the answer to a ping (after the task).
	progress bool
	token    json.RawMessage
}

func (f *fakeTaskServer) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methods...)
}

func (f *fakeTaskServer) serve(conn transport.Conn) {
	ctx := context.Background()
	task := func(status string) string {
		return `{"taskId":"t-1","status":"` + status + `","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":10}`
	}
	for {
		fr, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(fr.Data, &m)
		f.mu.Lock()
		f.methods = append(f.methods, m.Method)
		f.mu.Unlock()
		if m.ID == nil {
			continue
		}
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"fake","version":"1"}}`
		case "tools/call":
			if !strings.Contains(string(m.Params), `"task":{"ttl":5000}`) {
				result = `{"content":[{"type":"text","text":"no task param"}]}`
				if f.plainError {
					result = `{"content":[{"type":"text","text":"MCP error -32601: Tool slow requires task augmentation"}],"isError":true}`
				}
				break
			}
			var p struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			f.token = p.Meta.Token
			result = `{"task":` + task(TaskWorking) + `}`
		case "tasks/get":
			if f.stall {
				continue
			}
			f.mu.Lock()
			f.polls++
			if f.progress && f.token != nil {
				_ = conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` +
					string(f.token) + `,"progress":` + strconv.Itoa(f.polls) + `}}`)})
			}
			status := TaskWorking
			if f.polls >= 2 && !f.hold {
				status = TaskCompleted
			}
			f.mu.Unlock()
			result = task(status)
		case "tasks/result":
			result = `{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`
		case "tasks/cancel":
			result = task(TaskCancelled)
		case "tools/list":
			result = cmp.Or(f.tools, `{}`)
		case "ping":
			if f.progress && f.token != nil {
				// Late: the task is over.
				_ = conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` +
					string(f.token) + `,"progress":99}}`)})
			}
			result = `{}`
		default:
			result = `{}`
		}
		_ = conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)})
	}
}

// connectTaskServer connects a session (opts) to srv, which it serves
// over a pipe whose client end wrap, when set, decorates; the session
// closes with the test.
func connectTaskServer(t *testing.T, srv *fakeTaskServer, opts Options, wrap func(transport.Conn) transport.Conn) *Session {
	t.Helper()
	a, b := transport.Pipe()
	go srv.serve(b)
	var conn transport.Conn = a
	if wrap != nil {
		conn = wrap(a)
	}
	s, err := Connect(testCtx(t), conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestCallAsTask(t *testing.T) {
	srv := &fakeTaskServer{}
	s := connectTaskServer(t, srv, Options{}, nil)
	ctx := testCtx(t)
	var statuses []string
	raw, err := s.CallAsTask(ctx, "tools/call", json.RawMessage(`{"name":"slow"}`), TaskRun{
		TTL:      5 * time.Second,
		MinPoll:  time.Millisecond,
		OnStatus: func(t Task) { statuses = append(statuses, t.Status) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"text":"done"`) {
		t.Errorf("result %s", raw)
	}
	if strings.Join(statuses, ",") != "working,completed" {
		t.Errorf("status changes %v", statuses)
	}
	if got := strings.Join(srv.seen(), ","); got != "initialize,notifications/initialized,tools/call,tasks/get,tasks/get,tasks/result" {
		t.Errorf("methods %s", got)
	}
}

func TestCallAsTaskCancel(t *testing.T) {
	srv := &fakeTaskServer{hold: true}
	s := connectTaskServer(t, srv, Options{}, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	var last Task
	done := make(chan error, 1)
	go func() {
		_, err := s.CallAsTask(ctx, "tools/call", json.RawMessage(`{"name":"slow"}`), TaskRun{
			TTL: 5 * time.Second, MinPoll: time.Millisecond,
			OnStatus: func(t Task) {
				last = t
				if t.Status == TaskWorking {
					cancel() // the person presses Ctrl-C
				}
			},
		})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("CallAsTask did not end after cancellation")
	}
	var tc *TaskCancelledError
	if !errors.As(err, &tc) || !errors.Is(err, context.Canceled) {
		t.Fatalf("want a TaskCancelledError wrapping context.Canceled, got %v", err)
	}
	if last.Status != TaskCancelled {
		t.Errorf("last status %s, want cancelled", last.Status)
	}
	seen := srv.seen()
	if !contains(seen, "tasks/cancel") || contains(seen, "notifications/cancelled") {
		t.Errorf("want tasks/cancel and no notifications/cancelled, got %v", seen)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// An interrupt while a tasks/get is in flight cancels the task, and sends
// no notifications/cancelled for the poll.
func TestCallAsTaskCancelDuringPoll(t *testing.T) {
	srv := &fakeTaskServer{stall: true}
	s := connectTaskServer(t, srv, Options{}, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.CallAsTask(ctx, "tools/call", json.RawMessage(`{"name":"slow"}`), TaskRun{TTL: 5 * time.Second, MinPoll: time.Millisecond})
		done <- err
	}()
	deadline := time.After(5 * time.Second)
	for !contains(srv.seen(), "tasks/get") {
		select {
		case <-deadline:
			t.Fatal("no poll")
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("CallAsTask did not end")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
	seen := srv.seen()
	if !contains(seen, "tasks/cancel") || contains(seen, "notifications/cancelled") {
		t.Errorf("want tasks/cancel and no notifications/cancelled, got %v", seen)
	}
}

// A task begins working (spec 2025-11-25: basic/utilities/tasks, "Task
// Status Lifecycle"), and the CreateTaskResult says so even when the work
// has ended before it is sent: here the store is closing, so the task
// fails before it starts (as an instant policy's answer could end it
// first); tasks/get tells the end.
func TestTaskStoreCreatedWorking(t *testing.T) {
	store := NewTaskStore()
	h := store.Wrap(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"cancel"}`), nil
	})
	store.Close()
	raw, err := h(testCtx(t), "elicitation/create", json.RawMessage(`{"task":{}}`))
	var created struct{ Task Task }
	if err != nil || json.Unmarshal(raw, &created) != nil {
		t.Fatalf("CreateTaskResult: %s %v", raw, err)
	}
	if created.Task.Status != TaskWorking || created.Task.StatusMessage != "" {
		t.Errorf("CreateTaskResult %s: want the task as created, working", raw)
	}
	raw, err = store.Handle(testCtx(t), "tasks/get", json.RawMessage(`{"taskId":"`+created.Task.TaskID+`"}`))
	if err != nil || !strings.Contains(string(raw), `"status":"failed"`) {
		t.Errorf("tasks/get: %s %v", raw, err)
	}
}

// A task whose request mcpx could not answer fails with the reason as its
// statusMessage (spec 2025-11-25: basic/utilities/tasks, "Task Execution
// Errors"), in mcpx's words: not as a "server error", which is how mcpx
// describes the errors servers send it, and tasks/result returns the
// JSON-RPC error itself.
func TestTaskStoreFailedStatusMessage(t *testing.T) {
	store := NewTaskStore()
	defer store.Close()
	h := store.Wrap(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		return nil, invalidParams("the content file does not match the requested schema")
	})
	ctx := testCtx(t)
	raw, _ := h(ctx, "elicitation/create", json.RawMessage(`{"task":{}}`))
	var created struct{ Task Task }
	_ = json.Unmarshal(raw, &created)
	id := json.RawMessage(`{"taskId":"` + created.Task.TaskID + `"}`)
	var rpcErr *jsonrpc.Error
	if _, err := store.Handle(ctx, "tasks/result", id); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("tasks/result: want the handler's -32602, got %v", err)
	}
	raw, err := store.Handle(ctx, "tasks/get", id)
	var got Task
	if err != nil || json.Unmarshal(raw, &got) != nil || got.Status != TaskFailed ||
		got.StatusMessage != "the content file does not match the requested schema" {
		t.Errorf("tasks/get: %s %v", raw, err)
	}
}

// A tool that declares execution.taskSupport "forbidden" is called as a
// task only when asked, and the note says what the tool declared: the
// spec says a client must not (basic/utilities/tasks, "Tool-Level
// Negotiation"), not that the tool is silent about it.
func TestRunToolTaskForbidden(t *testing.T) {
	srv := &fakeTaskServer{tools: `{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]}`}
	s := connectTaskServer(t, srv, Options{}, nil)
	ctx := testCtx(t)
	var notes []string
	if _, err := s.RunTool(ctx, ToolCall{Name: "slow", Task: true, TTL: 5 * time.Second,
		OnNote: func(n string) { notes = append(notes, n) }}); err != nil {
		t.Fatal(err)
	}
	want := `tool "slow" declares execution.taskSupport "forbidden" (the spec says a client must not call it as a task); sending a task-augmented call anyway`
	if len(notes) == 0 || notes[0] != want {
		t.Errorf("notes %q, want first %q", notes, want)
	}
}

// A tool that requires a task, called without one, answered with an
// isError result rather than the -32601 the spec requires (the official
// TypeScript SDK's way): the result comes back as the tool's error, marked
// as needing a task, and a note names the departure.
func TestRunToolTaskRequiredAnsweredIsError(t *testing.T) {
	srv := &fakeTaskServer{plainError: true, tools: `{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`}
	s := connectTaskServer(t, srv, Options{}, nil)
	ctx := testCtx(t)
	var notes []string
	res, err := s.RunTool(ctx, ToolCall{Name: "slow", OnNote: func(n string) { notes = append(notes, n) }})
	var tre *ToolResultError
	if !errors.Is(err, ErrTaskRequired) || !errors.As(err, &tre) || !ToolResultIsError(res) {
		t.Fatalf("RunTool = %s, %v", res, err)
	}
	want := `tool "slow" requires a task, and the server answered the call without one with an isError result where the spec requires a -32601 (Method not found) error (basic/utilities/tasks, "Tool-Level Negotiation")`
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want %q", notes, want)
	}
}

// A request answered as a task runs after its handler returned, with what
// the handler's context carries (its place among the server's requests;
// the hold on the timeouts while a person answers: peer.HoldTimeouts),
// and ends when the store closes.
func TestTaskStoreWorkKeepsTheRequestsContext(t *testing.T) {
	store := NewTaskStore()
	arrival := make(chan uint64, 1)
	ended := make(chan error, 1)
	h := store.Wrap(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		arrival <- Arrival(ctx)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithCancel(peer.WithArrival(testCtx(t), 7))
	if _, err := h(ctx, "elicitation/create", json.RawMessage(`{"task":{}}`)); err != nil {
		t.Fatal(err)
	}
	cancel() // the handler has returned: its context ends
	if n := <-arrival; n != 7 {
		t.Errorf("the task's work is the server's request number %d, want 7", n)
	}
	select {
	case err := <-ended:
		t.Fatalf("the task's work ended with its request's handler: %v", err)
	default:
	}
	store.Close()
	select {
	case <-ended:
	case <-time.After(wait):
		t.Fatal("the task's work did not end with the store")
	}
}

// A task-augmented call asks for progress, which the server may send for
// the task's whole lifetime, not only until the CreateTaskResult (spec
// 2025-11-25: basic/utilities/tasks, "Task Progress Notifications");
// progress after the task ended is late.
func TestCallAsTaskProgress(t *testing.T) {
	srv := &fakeTaskServer{progress: true}
	ctx := testCtx(t)
	var mu sync.Mutex
	var warnings []string
	late := make(chan Progress, 1)
	s := connectTaskServer(t, srv, Options{OnWarning: func(w string) {
		mu.Lock()
		warnings = append(warnings, w)
		mu.Unlock()
	}, OnLateProgress: func(_ jsonrpc.ID, p Progress) { late <- p }}, nil)
	var got []float64
	res, err := s.RunTool(ctx, ToolCall{Name: "slow", Task: true, TTL: 5 * time.Second,
		Progress: func(p Progress) { got = append(got, p.Progress) }})
	if err != nil || !strings.Contains(string(res), "done") {
		t.Fatalf("RunTool: %s %v", res, err)
	}
	if srv.token == nil {
		t.Fatal("the task-augmented tools/call carried no progressToken")
	}
	if !slices.Equal(got, []float64{1, 2}) {
		t.Errorf("progress %v, want [1 2] (one before each poll's answer)", got)
	}
	if _, err := s.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-late:
		if p.Progress != 99 {
			t.Errorf("late progress %v", p)
		}
	case <-time.After(wait):
		t.Error("the progress after the task ended was not reported as late")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, w := range warnings {
		if strings.Contains(w, "progress") {
			t.Errorf("warning: %s", w)
		}
	}
}

// A server that does not support tasks answers a task-augmented call as a
// plain one (CallAsTask returns its result as it is): until then the
// call is an ordinary pending request, whose progress resets its idle
// timeout as a plain call's does.
func TestCallAsTaskProgressWhilePendingResetsTimeout(t *testing.T) {
	// In a bubble: the server's pauses and the idle timeout are on one
	// fake clock, so the progress comes well within it however busy the
	// machine (a real 60 ms pause against 300 ms failed under load).
	synctest.Test(t, func(t *testing.T) {
		a, b := transport.Pipe()
		go func() {
			ctx := context.Background()
			for {
				fr, err := b.Read(ctx)
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
				if m.ID == nil {
					continue
				}
				result := `{}`
				switch m.Method {
				case "initialize":
					result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`
				case "tools/call":
					// Longer than the idle timeout, with progress well within it.
					for i := 1; i <= 8; i++ {
						time.Sleep(60 * time.Millisecond)
						_ = b.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` +
							string(m.Params.Meta.Token) + `,"progress":` + strconv.Itoa(i) + `}}`)})
					}
					result = `{"content":[{"type":"text","text":"done"}]}`
				}
				_ = b.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)})
			}
		}()
		ctx := testCtx(t)
		s, err := Connect(ctx, a, Options{Timeout: 300 * time.Millisecond, OnWarning: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.RunTool(ctx, ToolCall{Name: "slow", Task: true, Progress: func(Progress) {}})
		if err != nil || !strings.Contains(string(res), "done") {
			t.Fatalf("RunTool: %s %v", res, err)
		}
	})
}

// streamConn is a connection whose stream for server-initiated messages
// is opened on demand (as Streamable HTTP's GET), counting the openings.
type streamConn struct {
	transport.Conn
	opened atomic.Int32
}

func (c *streamConn) HoldServerStream()                      {}
func (c *streamConn) OpenServerStream(context.Context) error { c.opened.Add(1); return nil }

// A task's progress after the CreateTaskResult can come only on the stream
// for server-initiated messages: a task-augmented call that asks for
// progress opens it, even when the session holds it until the server may
// call back (nothing declared here that it could).
func TestCallAsTaskProgressOpensTheServerStream(t *testing.T) {
	var conn *streamConn
	s := connectTaskServer(t, &fakeTaskServer{}, Options{ServerStreamOnDemand: true},
		func(c transport.Conn) transport.Conn { conn = &streamConn{Conn: c}; return conn })
	ctx := testCtx(t)
	// A plain request does not open it: nothing could call back.
	if _, err := s.Call(ctx, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if n := conn.opened.Load(); n != 0 {
		t.Fatalf("the stream was opened %d times before the task", n)
	}
	if _, err := s.RunTool(ctx, ToolCall{Name: "slow", Task: true, TTL: 5 * time.Second, Progress: func(Progress) {}}); err != nil {
		t.Fatal(err)
	}
	if n := conn.opened.Load(); n != 1 {
		t.Errorf("the stream was opened %d times for a task asking for progress, want 1", n)
	}
}

// A server's task-augmented requests cannot fill mcpx's memory: the store
// keeps Max tasks, forgetting the oldest ended one for a new one, and
// refuses a new task while none has ended (spec 2025-11-25:
// basic/utilities/tasks, "Resource Management").
func TestTaskStoreBounded(t *testing.T) {
	store := NewTaskStore()
	store.Max = 3
	defer store.Close()
	release := map[string]chan struct{}{}
	var mu sync.Mutex
	h := store.Wrap(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		var p struct{ Message string }
		_ = json.Unmarshal(params, &p)
		mu.Lock()
		ch := release[p.Message]
		mu.Unlock()
		select {
		case <-ch:
			return json.RawMessage(`{"action":"decline"}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	ctx := testCtx(t)
	create := func(name string) (string, error) {
		mu.Lock()
		release[name] = make(chan struct{})
		mu.Unlock()
		raw, err := h(ctx, "elicitation/create", json.RawMessage(`{"message":"`+name+`","task":{}}`))
		if err != nil {
			return "", err
		}
		var created struct{ Task Task }
		if err := json.Unmarshal(raw, &created); err != nil {
			t.Fatal(err)
		}
		return created.Task.TaskID, nil
	}
	status := func(id string) string {
		raw, err := store.Handle(ctx, "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
		if err != nil {
			return err.Error()
		}
		var tk Task
		_ = json.Unmarshal(raw, &tk)
		return tk.Status
	}
	ids := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		id, err := create(name)
		if err != nil {
			t.Fatalf("task %s: %v", name, err)
		}
		ids[name] = id
	}
	_, err := create("d")
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || !strings.Contains(rpcErr.Message, "at most 3 tasks and none of them has ended") {
		t.Fatalf("a 4th task while 3 run: want -32603 saying so, got %v", err)
	}
	// b ends: the next task takes its place; a and c run on.
	close(release["b"])
	if _, err := store.Handle(ctx, "tasks/result", json.RawMessage(`{"taskId":"`+ids["b"]+`"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := create("e"); err != nil {
		t.Fatalf("a task after one ended: %v", err)
	}
	if s := status(ids["b"]); !strings.Contains(s, "no task") {
		t.Errorf("the ended task b: %s, want it forgotten", s)
	}
	if s, s2 := status(ids["a"]), status(ids["c"]); s != TaskWorking || s2 != TaskWorking {
		t.Errorf("running tasks a and c: %s, %s; want both working", s, s2)
	}
	raw, err := store.Handle(ctx, "tasks/list", nil)
	var list struct{ Tasks []Task }
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list.Tasks) != 3 {
		t.Errorf("tasks/list: %s %v; want 3 tasks", raw, err)
	}
}
