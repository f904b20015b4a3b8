package inspector

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Tasks (spec 2025-11-25: basic/utilities/tasks, experimental). mcpx is a
// requestor (tools/call --task, `mcpx tasks ...`) and a receiver (the server
// may ask for sampling or elicitation as a task).

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Task is the state of one task as the receiver reports it.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is the retention in milliseconds; nil means unlimited.
	TTL          *int64 `json:"ttl"`
	PollInterval *int64 `json:"pollInterval,omitempty"`

	// problems is what UnmarshalJSON found amiss (see Problems).
	problems string
}

// Terminal reports whether the status is final.
func (t *Task) Terminal() bool { return TerminalStatus(t.Status) }

// TerminalStatus reports whether a task status is final
// (spec: "Task Status Lifecycle").
func TerminalStatus(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// --- receiver --------------------------------------------------------------

// TaskStore runs the task-augmented requests a server sends mcpx and answers
// tasks/get, tasks/result, tasks/list and tasks/cancel about them. Tasks
// live as long as the session, up to MaxTasks of them; their ids are
// random (128 bits), since a stdio session has no authorization context to
// bind them to.
type TaskStore struct {
	// PollInterval is suggested to the server; zero means one second.
	PollInterval time.Duration
	// Max is how many tasks the store keeps; zero means MaxTasks.
	Max int

	mu    sync.Mutex
	tasks map[string]*storedTask
	order []string
	ctx   context.Context
	stop  context.CancelFunc
	// work runs the tasks' handlers; Close waits for them.
	work workGroup
}

// MaxTasks is how many tasks a TaskStore keeps by default. A server may
// send any number of task-augmented requests, and each task's result is
// kept for tasks/result: beyond the bound the oldest ended task is
// forgotten (its ttl may have been unlimited; spec 2025-11-25:
// basic/utilities/tasks, "TTL and Resource Management": a receiver may
// override it), and a task-augmented request that finds every task still
// running is refused ("Resource Management": receivers should enforce
// limits on concurrent tasks). 200,000 task-augmented elicitations from a
// server took mcpx to 1 GB before.
const MaxTasks = 1024

// TooManyTasksError refuses a task-augmented request while the store
// holds its maximum of tasks and none of them has ended.
type TooManyTasksError struct {
	Max int
}

func (e *TooManyTasksError) Error() string {
	return fmt.Sprintf("mcpx keeps at most %d tasks and none of them has ended: wait for one to end, or cancel one (tasks/cancel)", e.Max)
}

type storedTask struct {
	Task
	method string
	result json.RawMessage
	err    *jsonrpc.Error
	done   chan struct{}
	cancel context.CancelCauseFunc
}

// NewTaskStore returns an empty store. Close cancels the work of every task.
func NewTaskStore() *TaskStore {
	ctx, stop := context.WithCancel(context.Background())
	return &TaskStore{tasks: map[string]*storedTask{}, ctx: ctx, stop: stop}
}

// Close cancels the work still running for tasks and waits for it to end.
func (t *TaskStore) Close() {
	t.stop()
	t.work.Wait()
}

func timestamp(tm time.Time) string { return tm.UTC().Format("2006-01-02T15:04:05.000Z") }

func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Wrap returns h extended with task augmentation: a request whose params
// carry "task" creates a task, runs h in the background and is answered at
// once with a CreateTaskResult; any other request goes straight to h
// (spec: "Creating Tasks").
func (t *TaskStore) Wrap(h Handler) Handler {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		obj, err := ParseObject(params)
		if err != nil || !obj.Has("task") || string(obj.Get("task")) == "null" {
			return h(ctx, method, params)
		}
		var meta struct {
			TTL *int64 `json:"ttl"`
		}
		if err := json.Unmarshal(obj.Get("task"), &meta); err != nil {
			return nil, invalidParams("%s: task must be an object with an optional integer ttl: %v", method, err)
		}
		st, err := t.create(method, meta.TTL)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		// The answer is the task as created, working (spec: "Task Status
		// Lifecycle"): taken before the work starts, which may end it
		// before this answer is sent.
		t.mu.Lock()
		snapshot := st.Task
		t.mu.Unlock()
		// The work outlives the request's handler but keeps what its
		// context carries (a person asked for it asks in the request's
		// turn, and holds the timeouts meanwhile: peer.HoldTimeouts); it
		// ends with the store.
		runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		stop := context.AfterFunc(t.ctx, func() { cancel(context.Cause(t.ctx)) })
		end := func(err error) { stop(); cancel(err) }
		st.cancel = end
		if !t.work.Go(func() {
			defer end(nil)
			res, err := h(runCtx, method, params)
			t.finish(st, res, err)
		}) {
			// The store is closing: the task ends before it starts.
			end(nil)
			t.finish(st, nil, context.Canceled)
		}
		return marshalRaw(map[string]any{"task": snapshot}), nil
	}
}

// create stores a new working task, first forgetting the oldest ended
// task when the store is full (see MaxTasks); it fails with a
// *TooManyTasksError when no task has ended.
func (t *TaskStore) create(method string, ttl *int64) (*storedTask, error) {
	now := timestamp(time.Now())
	poll := t.PollInterval
	if poll <= 0 {
		poll = time.Second
	}
	pi := poll.Milliseconds()
	st := &storedTask{
		Task: Task{
			TaskID: newTaskID(), Status: TaskWorking, CreatedAt: now, LastUpdatedAt: now,
			TTL: ttl, PollInterval: &pi,
		},
		method: method,
		done:   make(chan struct{}),
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	max := cmp.Or(t.Max, MaxTasks)
	if len(t.order) >= max && !t.forgetOldestEnded() {
		return nil, &TooManyTasksError{Max: max}
	}
	t.tasks[st.TaskID] = st
	t.order = append(t.order, st.TaskID)
	return st, nil
}

// forgetOldestEnded removes the oldest task in a terminal status and
// reports whether there was one. Called with t.mu held.
func (t *TaskStore) forgetOldestEnded() bool {
	for i, id := range t.order {
		if t.tasks[id].Terminal() {
			delete(t.tasks, id)
			t.order = append(t.order[:i], t.order[i+1:]...)
			return true
		}
	}
	return false
}

func (t *TaskStore) finish(st *storedTask, res json.RawMessage, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st.Status != TaskCancelled {
		if err != nil {
			st.Status = TaskFailed
			// The reason in mcpx's words: a *jsonrpc.Error's text
			// would call mcpx's own error a "server error".
			st.StatusMessage = err.Error()
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				st.StatusMessage = rpcErr.Message
			}
		} else {
			st.Status = TaskCompleted
		}
		st.LastUpdatedAt = timestamp(time.Now())
	}
	switch {
	case st.Status == TaskCancelled:
		st.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task was cancelled"}
	case err != nil:
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		st.err = rpcErr
	default:
		st.result = res
	}
	close(st.done)
}

// Handle answers tasks/get, tasks/result, tasks/list and tasks/cancel.
func (t *TaskStore) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		TaskID string  `json:"taskId"`
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams("%s params: %v", method, err)
		}
	}
	if method == mcp.MethodTasksList {
		if p.Cursor != nil && *p.Cursor != "" {
			return nil, invalidParams("tasks/list: unknown cursor %s", jsonrpc.QuoteClipped(*p.Cursor))
		}
		t.mu.Lock()
		list := make([]Task, 0, len(t.order))
		for _, id := range t.order {
			list = append(list, t.tasks[id].Task)
		}
		t.mu.Unlock()
		return marshalRaw(map[string]any{"tasks": list}), nil
	}
	t.mu.Lock()
	st := t.tasks[p.TaskID]
	t.mu.Unlock()
	if st == nil {
		return nil, invalidParams("%s: no task %s", method, jsonrpc.QuoteClipped(p.TaskID))
	}
	switch method {
	case mcp.MethodTasksGet:
		t.mu.Lock()
		defer t.mu.Unlock()
		return marshalRaw(st.Task), nil
	case mcp.MethodTasksCancel:
		t.mu.Lock()
		if TerminalStatus(st.Status) {
			status := st.Status
			t.mu.Unlock()
			return nil, invalidParams("Cannot cancel task: already in terminal status '%s'", status)
		}
		st.Status = TaskCancelled
		st.StatusMessage = "The task was cancelled by request."
		st.LastUpdatedAt = timestamp(time.Now())
		snapshot := st.Task
		cancel := st.cancel
		t.mu.Unlock()
		if cancel != nil {
			// The server withdrew the request the task answers: a
			// person asked for it is told so (Withdrawn).
			cancel(peer.ErrCancelled)
		}
		return marshalRaw(snapshot), nil
	case mcp.MethodTasksResult:
		// Block until the task is terminal (spec: "Result Retrieval").
		select {
		case <-st.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		t.mu.Lock()
		res, rpcErr := st.result, st.err
		t.mu.Unlock()
		if rpcErr != nil {
			return nil, rpcErr
		}
		return setMeta(res, RelatedTaskKey, marshalRaw(map[string]string{"taskId": st.TaskID}))
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + jsonrpc.Clip(method)}
}

// --- requestor -------------------------------------------------------------

// TaskRun configures CallAsTask.
type TaskRun struct {
	// TTL is the requested retention; zero requests none in particular.
	TTL time.Duration
	// OnStatus is told the task's state when it is created and whenever
	// its status or status message changes.
	OnStatus func(Task)
	// OnNote receives remarks for the person (a server that ignored the
	// task, cancellation results).
	OnNote func(string)
	// MinPoll bounds the poll interval from below when the server suggests
	// none or a tiny one; zero means 100ms.
	MinPoll time.Duration
	// Progress, when set, asks for progress (a progressToken), which the
	// server may send for the task's whole lifetime (spec 2025-11-25:
	// basic/utilities/tasks, "Task Progress Notifications"): each update
	// comes to it, on the read loop, and resets the timeout as a status
	// change does.
	Progress func(Progress)
}

// TaskCancelledError reports that the person interrupted a task and mcpx
// sent tasks/cancel. It wraps the context's error.
type TaskCancelledError struct {
	TaskID string
	Err    error
}

func (e *TaskCancelledError) Error() string {
	return fmt.Sprintf("task %s cancelled (tasks/cancel sent)", e.TaskID)
}

func (e *TaskCancelledError) Unwrap() error { return e.Err }

// CallAsTask sends a task-augmented request, polls tasks/get honouring the
// suggested pollInterval, calls tasks/result when the task is terminal or
// needs input (the server delivers its own requests on that call), and
// returns the underlying request's result. When ctx ends, the task is
// cancelled with tasks/cancel — not notifications/cancelled, which does
// not apply to tasks (spec 2025-11-25: basic/utilities/tasks,
// "Cancelling Tasks"). A server that answers with a plain result instead
// of a CreateTaskResult (it does not support tasks) has its result returned
// as it is.
func (s *Session) CallAsTask(ctx context.Context, method string, params json.RawMessage, run TaskRun) (json.RawMessage, error) {
	task := map[string]any{}
	if run.TTL > 0 {
		task["ttl"] = run.TTL.Milliseconds()
	}
	obj, err := ParseObject(params)
	if err != nil {
		return nil, fmt.Errorf("%s: params must be a JSON object: %w", method, err)
	}
	obj.Set("task", marshalRaw(task))
	var opts []CallOption
	var progressAt atomic.Int64 // when progress last came, in Unix nanoseconds
	if run.Progress != nil && s.legacyOf() != nil {
		// Once the CreateTaskResult has answered the request, the task's
		// progress can come only on the stream for server-initiated
		// messages (Streamable HTTP's GET), which a session that holds it
		// until the server may call back (Options.ServerStreamOnDemand)
		// would otherwise leave closed. A server that offers none is
		// noted by the transport; the call goes on without it.
		if err := s.listen(ctx); err != nil && run.OnNote != nil {
			run.OnNote(fmt.Sprintf("%s: the task's progress may not arrive: %v", method, err))
		}
	}
	if run.Progress != nil {
		var ids []jsonrpc.ID // (one unless the request was sent again)
		// No update reaches run.Progress once this returns: one the read
		// loop took just before the end is dropped.
		var mu sync.Mutex
		ended := false
		opts = append(opts, OnRequestID(func(id jsonrpc.ID) { ids = append(ids, id) }),
			WithTaskProgress(func(p Progress) {
				mu.Lock()
				defer mu.Unlock()
				if !ended {
					progressAt.Store(time.Now().UnixNano())
					run.Progress(p)
				}
			}))
		defer func() {
			for _, id := range ids {
				s.EndTaskProgress(id)
			}
			mu.Lock()
			ended = true
			mu.Unlock()
		}()
	}
	raw, err := s.Call(ctx, method, obj.Marshal(), opts...)
	if err != nil {
		return nil, err
	}
	created := rawjson.Member(raw, "task")
	if !isObject(created) {
		if run.OnNote != nil {
			run.OnNote(method + ": the server answered directly instead of creating a task")
		}
		return raw, nil
	}
	// A result with a task object is a CreateTaskResult, even a broken
	// one: it is not the request's own result, and must not be shown as
	// that (spec 2025-11-25: basic/utilities/tasks, "Creating Tasks").
	var cur Task
	if err := json.Unmarshal(created, &cur); err != nil {
		return nil, violationf("%s: the server created a task that is not a Task: %s", method, rawjson.DecodeProblem(err))
	}
	if cur.TaskID == "" {
		return nil, violationf("%s: the server created a task without a taskId", method)
	}
	report := func(t Task) {
		if run.OnStatus != nil {
			run.OnStatus(t)
		}
	}
	report(cur)
	minPoll := run.MinPoll
	if minPoll <= 0 {
		minPoll = 100 * time.Millisecond
	}
	poll := s.newTaskPoll(ctx, cur)
	poll.progressAt = &progressAt
	for !cur.Terminal() && cur.Status != TaskInputRequired {
		if te := poll.expired(); te != nil {
			_ = s.cancelTask(cur.TaskID, nil, run)
			te.Cancelled = true
			return nil, fmt.Errorf("%s: %w", method, te)
		}
		timer := time.NewTimer(poll.wait(cur.PollInterval, minPoll))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, s.cancelTask(cur.TaskID, ctx.Err(), run)
		case <-s.Done():
			timer.Stop()
			return nil, fmt.Errorf("%s: %w", method, s.Err())
		case <-timer.C:
		}
		// Polls run detached from ctx: an interrupt cancels the task with
		// tasks/cancel, never a poll with notifications/cancelled.
		var next *Task
		err := s.detached(ctx, func(dctx context.Context) (err error) {
			next, err = s.GetTask(dctx, cur.TaskID)
			return err
		})
		if ctx.Err() != nil {
			return nil, s.cancelTask(cur.TaskID, ctx.Err(), run)
		}
		if err != nil {
			return nil, err
		}
		poll.observe(next)
		if next.Status != cur.Status || next.StatusMessage != cur.StatusMessage {
			report(*next)
		}
		cur = *next
	}
	// tasks/result blocks until the task is terminal; while it waits, the
	// server may send its requests (input_required). It runs detached so
	// that an interrupt cancels the task, not just this request, and within
	// what remains of the maximum time, which bounds the whole task: at the
	// bound the task is given up on and cancelled as while polling (not
	// only the request, which would leave the task running).
	rctx, stop := poll.untilMax(ctx)
	defer stop()
	var res json.RawMessage
	err = s.detached(rctx, func(dctx context.Context) (err error) {
		res, err = s.TaskResult(dctx, cur.TaskID)
		return err
	})
	if ctx.Err() != nil {
		return nil, s.cancelTask(cur.TaskID, ctx.Err(), run)
	}
	if err != nil && rctx.Err() != nil {
		te := &TaskTimeoutError{TaskID: cur.TaskID, Status: poll.lastStatus(), After: poll.max, Max: true}
		_ = s.cancelTask(cur.TaskID, nil, run)
		te.Cancelled = true
		return nil, fmt.Errorf("%s: %w", method, te)
	}
	if err == nil && !cur.Terminal() && run.OnStatus != nil {
		if final, gerr := s.GetTask(ctx, cur.TaskID); gerr == nil && final.Status != cur.Status {
			report(*final)
		}
	}
	return res, err
}

// detached runs fn with a context that ctx's cancellation does not reach,
// returning early (with ctx's error) when ctx ends; fn's request then
// finishes, or ends with the session, whose Close waits for it.
func (s *Session) detached(ctx context.Context, fn func(context.Context) error) error {
	done := make(chan error, 1)
	if !s.detachedWork.Go(func() { done <- fn(context.WithoutCancel(ctx)) }) {
		return fmt.Errorf("%w: the session is closing", transport.ErrClosed)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cancelTask sends tasks/cancel on behalf of an interrupted CallAsTask.
func (s *Session) cancelTask(id string, cause error, run TaskRun) error {
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t, err := s.CancelTask(cctx, id)
	switch {
	case err != nil && run.OnNote != nil:
		run.OnNote(fmt.Sprintf("tasks/cancel %s: %v", id, err))
	case err == nil && run.OnStatus != nil:
		run.OnStatus(*t)
	}
	return &TaskCancelledError{TaskID: id, Err: cause}
}

// GetTask calls tasks/get.
func (s *Session) GetTask(ctx context.Context, id string) (*Task, error) {
	raw, err := s.Call(ctx, mcp.MethodTasksGet, map[string]string{"taskId": id})
	if err != nil {
		return nil, err
	}
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, violationf("tasks/get: the result is not a Task: %s", rawjson.DecodeProblem(err))
	}
	return &t, nil
}

// TaskResult calls tasks/result, which blocks until the task is terminal:
// no idle timeout applies, only the session's hard cap.
func (s *Session) TaskResult(ctx context.Context, id string) (json.RawMessage, error) {
	res, err := s.Call(ctx, mcp.MethodTasksResult, map[string]string{"taskId": id}, WithTimeout(-1, s.opts.MaxTimeout), withSubject(id))
	if err == nil && !relatesTo(res, id) {
		// The result as it came is still returned.
		s.departOnce(ctx, "related-task "+id, "tasks/result %s: the result has no _meta %q naming the task (spec basic/utilities/tasks: tasks/result MUST include it)", id, RelatedTaskKey)
	}
	return res, err
}

// relatesTo reports whether a result's _meta ties it to task id
// (spec 2025-11-25: basic/utilities/tasks, "Related Task Metadata").
func relatesTo(res json.RawMessage, id string) bool {
	var rt struct {
		TaskID string `json:"taskId"`
	}
	raw := relatedTask(res)
	return raw != nil && json.Unmarshal(raw, &rt) == nil && rt.TaskID == id
}

// CancelTask calls tasks/cancel.
func (s *Session) CancelTask(ctx context.Context, id string) (*Task, error) {
	raw, err := s.Call(ctx, mcp.MethodTasksCancel, map[string]string{"taskId": id}, withSubject(id))
	if err != nil {
		return nil, err
	}
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, violationf("tasks/cancel: the result is not a Task: %s", rawjson.DecodeProblem(err))
	}
	return &t, nil
}

// String describes the task's state on one line: "task ID: status — message".
func (t Task) String() string {
	s := "task " + t.TaskID + ": " + cmp.Or(t.Status, "(no status)")
	if t.StatusMessage != "" {
		s += " — " + t.StatusMessage
	}
	return s
}

// ToolTaskSupport returns a tool's execution.taskSupport from tools/list
// ("required", "optional", "forbidden" or "" when absent or unknown).
func (s *Session) ToolTaskSupport(ctx context.Context, name string) string {
	it, err := s.listedTool(ctx, name)
	if err != nil {
		return ""
	}
	var t struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	if it != nil && json.Unmarshal(it, &t) == nil {
		return strings.TrimSpace(t.Execution.TaskSupport)
	}
	return ""
}

// ToolNeedsTask reports whether err is the refusal of a plain call to a
// tool that requires task execution (spec 2025-11-25: basic/utilities/tasks,
// "Tool-Level Negotiation": -32601, or -32600 "task augmentation required").
func (s *Session) ToolNeedsTask(ctx context.Context, name string, err error) bool {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || ctx.Err() != nil {
		return false
	}
	if rpcErr.Code != jsonrpc.CodeMethodNotFound && rpcErr.Code != jsonrpc.CodeInvalidRequest {
		return false
	}
	return s.ToolTaskSupport(ctx, name) == "required"
}
