package inspector

import (
	"context"
	"encoding/json"

	"github.com/mcpx-dev/mcpx/mcp"
)

// Task commands in both eras. The handshake era's tasks (spec 2025-11-25:
// basic/utilities/tasks) have tasks/get, tasks/result, tasks/cancel and
// tasks/list; the tasks extension of 2026-07-28 (SEP-2663) has tasks/get,
// which carries the result once there is one, and tasks/cancel, which only
// acknowledges, and no tasks/result or tasks/list (Session.List refuses
// tasks/list there with an *EraUnsupportedError).

// TaskReport is a task's state as a tasks command shows it.
type TaskReport struct {
	// Raw is the result as received.
	Raw json.RawMessage
	// Task is the task it describes, nil when Raw is not a task. A
	// handshake-era Task comes without result, error or input requests.
	Task *DetailedTask
}

// warnUndeclaredTasks warns, in 2026-07-28, about a server that does not
// declare the tasks extension before a request of it is sent anyway.
func (s *Session) warnUndeclaredTasks(m *Modern, what string) {
	if m != nil && !s.Server().Declares("extensions", mcp.TasksExtension) {
		s.warn("the server does not declare the %s extension; sending %s anyway", mcp.TasksExtension, what)
	}
}

// LookupTask asks for task id's state with tasks/get.
func (s *Session) LookupTask(ctx context.Context, id string) (*TaskReport, error) {
	m := s.modern()
	s.warnUndeclaredTasks(m, mcp.MethodTasksGet)
	raw, err := s.Call(ctx, mcp.MethodTasksGet, map[string]string{"taskId": id}, withSubject(id))
	if err != nil {
		return nil, err
	}
	return &TaskReport{Raw: raw, Task: parseTaskFor(m, raw)}, nil
}

// parseTaskFor decodes a task in the shape of the session's era, nil when
// raw is not one.
func parseTaskFor(m *Modern, raw json.RawMessage) *DetailedTask {
	if m != nil {
		t, err := ParseDetailedTask(raw)
		if err != nil {
			return nil
		}
		return t
	}
	var t Task
	if json.Unmarshal(raw, &t) != nil || t.TaskID == "" {
		return nil
	}
	return &DetailedTask{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL, PollIntervalMs: t.PollInterval}
}

// AwaitTask waits for task id to end and returns its result: tasks/result,
// which blocks until the task is terminal, in the handshake era; in the
// tasks extension, which has no tasks/result, by following the task with
// tasks/get and answering its input requests. An interrupt stops the
// waiting, not the task.
func (s *Session) AwaitTask(ctx context.Context, id string) (json.RawMessage, error) {
	m := s.modern()
	if m == nil {
		return s.TaskResult(ctx, id)
	}
	s.warnUndeclaredTasks(m, mcp.MethodTasksResult)
	return s.FollowTask(ctx, id)
}

// TaskCancellation is what RequestTaskCancel got.
type TaskCancellation struct {
	// Raw is the tasks/cancel result as received.
	Raw json.RawMessage
	// Acknowledged is true when the answer only acknowledges the request
	// (the tasks extension): the task ends later, and State asks for it.
	// False when the answer is the task itself (the handshake era).
	Acknowledged bool

	s    *Session
	id   string
	task *DetailedTask
}

// RequestTaskCancel asks the server to cancel task id with tasks/cancel.
func (s *Session) RequestTaskCancel(ctx context.Context, id string) (*TaskCancellation, error) {
	m := s.modern()
	s.warnUndeclaredTasks(m, mcp.MethodTasksCancel)
	raw, err := s.Call(ctx, mcp.MethodTasksCancel, map[string]string{"taskId": id}, withSubject(id))
	if err != nil {
		return nil, err
	}
	c := &TaskCancellation{Raw: raw, Acknowledged: m != nil, s: s, id: id}
	if m == nil {
		c.task = parseTaskFor(nil, raw)
	}
	return c, nil
}

// State returns the task's state after the cancellation: the answer itself
// in the handshake era (nil when it is not a task), a tasks/get in the
// tasks extension.
func (c *TaskCancellation) State(ctx context.Context) (*DetailedTask, error) {
	if !c.Acknowledged {
		return c.task, nil
	}
	return c.s.GetTaskExt(ctx, c.id)
}
