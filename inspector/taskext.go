package inspector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// Tasks as the io.modelcontextprotocol/tasks extension of 2026-07-28
// (SEP-2663). The server decides to answer a request with a task handle
// (resultType "task"); the client polls tasks/get, which carries the
// result once the task completes (there is no tasks/result), answers the
// task's input requests with tasks/update, and cancels it with
// tasks/cancel. There is no tasks/list.

// DetailedTask is a task as tasks/get reports it in the extension: the
// task's state, plus its result, error or pending input requests.
type DetailedTask struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt,omitempty"`
	LastUpdatedAt  string `json:"lastUpdatedAt,omitempty"`
	TTLMs          *int64 `json:"ttlMs,omitempty"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
	// Result is the original request's result, once completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the protocol error that failed the task.
	Error *jsonrpc.Error `json:"error,omitempty"`
	// InputRequests are the requests the task waits on (input_required).
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`

	// problems is what UnmarshalJSON found amiss (see Task.Problems).
	problems string
}

// Task returns the state part.
func (t *DetailedTask) Task() Task {
	return Task{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTL: t.TTLMs, PollInterval: t.PollIntervalMs,
		problems: t.problems}
}

// ParseDetailedTask decodes a CreateTaskResult or a tasks/get result.
func ParseDetailedTask(raw json.RawMessage) (*DetailedTask, error) {
	var t DetailedTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, violationf("not a task: %s", rawjson.DecodeProblem(err))
	}
	if t.TaskID == "" {
		return nil, violation(errors.New("not a task: no taskId"))
	}
	if t.Error != nil && t.Error.Name == "" {
		t.Error.Name = mcp.CodeName(t.Error.Code)
	}
	return &t, nil
}

// GetTaskExt calls tasks/get of the tasks extension.
func (s *Session) GetTaskExt(ctx context.Context, id string) (*DetailedTask, error) {
	raw, err := s.Call(ctx, mcp.MethodTasksGet, map[string]string{"taskId": id})
	if err != nil {
		return nil, err
	}
	t, err := ParseDetailedTask(raw)
	if err != nil {
		return nil, fmt.Errorf("tasks/get: %w", err)
	}
	return t, nil
}

// minTaskPoll bounds polling from below when a server suggests no interval
// or a tiny one.
const minTaskPoll = 50 * time.Millisecond

// awaitTask follows a task handle to its end: it polls tasks/get honouring
// pollIntervalMs, answers input requests with tasks/update, and returns the
// inlined result (or the task's error). When ctx ends the task is
// cancelled with tasks/cancel, whose polls run detached from ctx.
func (m *Modern) awaitTask(ctx context.Context, s *Session, req *Request, res json.RawMessage) (json.RawMessage, error) {
	return m.followTask(ctx, s, req, res, true)
}

// followTask is awaitTask; cancel says whether an interrupt cancels the
// task (it does for the request that created it, not for a task someone
// only waits on).
func (m *Modern) followTask(ctx context.Context, s *Session, req *Request, res json.RawMessage, cancel bool) (json.RawMessage, error) {
	stop := func(id string, cause error) error {
		if cancel {
			return m.cancelTaskExt(s, id, cause)
		}
		return fmt.Errorf("%s: %w", req.Label(), cause)
	}
	cur, err := ParseDetailedTask(res)
	if err != nil {
		return nil, fmt.Errorf("%s: the server answered resultType \"task\" but %w", req.Label(), err)
	}
	show := func(t *DetailedTask) { m.note(s, t.Task().String()) }
	show(cur)
	poll := s.newTaskPoll(ctx, cur.Task())
	answered := map[string]bool{}
	for !TerminalStatus(cur.Status) {
		if cur.Status == TaskInputRequired && len(cur.InputRequests) > 0 {
			pending := map[string]json.RawMessage{}
			for k, v := range cur.InputRequests {
				if !answered[k] {
					pending[k] = v
				}
			}
			if len(pending) > 0 {
				m.note(s, fmt.Sprintf("%s: task %s needs input: %d request(s)", req.Label(), cur.TaskID, len(pending)))
				responses, failed, err := s.answerInputs(ctx, pending)
				if err != nil {
					if ctx.Err() != nil {
						return nil, stop(cur.TaskID, ctx.Err())
					}
					return nil, fmt.Errorf("%s: %w", req.Label(), err)
				}
				for k := range pending {
					answered[k] = true
				}
				// A person may have taken their time to answer.
				poll.progressed()
				if len(failed) > 0 && len(responses.Keys()) == 0 {
					m.note(s, fmt.Sprintf("%s: mcpx could not answer task %s's input requests; cancelling it", req.Label(), cur.TaskID))
					return nil, m.cancelTaskExt(s, cur.TaskID, fmt.Errorf("%s: task %s needs input mcpx could not give", req.Label(), cur.TaskID))
				}
				if len(responses.Keys()) > 0 {
					params := map[string]any{"taskId": cur.TaskID, "inputResponses": responses.Marshal()}
					if err := s.detached(ctx, func(dctx context.Context) error {
						_, err := s.Call(dctx, mcp.MethodTasksUpdate, params)
						return err
					}); err != nil {
						if ctx.Err() != nil {
							return nil, stop(cur.TaskID, ctx.Err())
						}
						return nil, fmt.Errorf("%s: tasks/update %s: %w", req.Label(), cur.TaskID, err)
					}
				}
			}
		}
		if te := poll.expired(); te != nil {
			if cancel {
				_ = m.cancelTaskExt(s, cur.TaskID, nil)
				te.Cancelled = true
			}
			return nil, fmt.Errorf("%s: %w", req.Label(), te)
		}
		timer := time.NewTimer(poll.wait(cur.PollIntervalMs, minTaskPoll))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, stop(cur.TaskID, ctx.Err())
		case <-s.Done():
			timer.Stop()
			return nil, fmt.Errorf("%s: %w", req.Label(), s.Err())
		case <-timer.C:
		}
		var next *DetailedTask
		err := s.detached(ctx, func(dctx context.Context) (err error) {
			next, err = s.GetTaskExt(dctx, cur.TaskID)
			return err
		})
		if ctx.Err() != nil {
			return nil, stop(cur.TaskID, ctx.Err())
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.Label(), err)
		}
		t := next.Task()
		poll.observe(&t)
		next.TaskID = t.TaskID
		if next.Status != cur.Status || next.StatusMessage != cur.StatusMessage {
			show(next)
		}
		cur = next
	}
	switch cur.Status {
	case TaskCompleted:
		if len(cur.Result) == 0 {
			return nil, violationf("%s: task %s completed without a result", req.Label(), cur.TaskID)
		}
		return cur.Result, nil
	}
	te := &TaskEndedError{TaskID: cur.TaskID, Status: cur.Status, Message: cur.StatusMessage}
	if cur.Status == TaskFailed && cur.Error != nil {
		te.Err = cur.Error
	}
	return nil, fmt.Errorf("%s: %w", req.Label(), te)
}

// TaskEndedError reports a task of the tasks extension that the server
// ended without a result: failed (with the protocol error it carries, if
// any), or cancelled (not by mcpx). It is the server's answer, as a
// JSON-RPC error is.
type TaskEndedError struct {
	TaskID string
	// Status is "failed" or "cancelled".
	Status  string
	Message string
	// Err is the task's error (a *jsonrpc.Error), nil when it carries none.
	Err error
}

func (e *TaskEndedError) Error() string {
	if e.Status == TaskCancelled {
		return fmt.Sprintf("task %s was cancelled: %s", e.TaskID, cmp.Or(e.Message, "by the server"))
	}
	if e.Err != nil {
		return fmt.Sprintf("task %s failed: %v", e.TaskID, e.Err)
	}
	return fmt.Sprintf("task %s failed: %s", e.TaskID, cmp.Or(e.Message, "no reason given"))
}

func (e *TaskEndedError) Unwrap() error { return e.Err }

// cancelTaskExt sends tasks/cancel for an interrupted task and reports it.
func (m *Modern) cancelTaskExt(s *Session, id string, cause error) error {
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Call(cctx, mcp.MethodTasksCancel, map[string]string{"taskId": id}); err != nil {
		m.note(s, fmt.Sprintf("tasks/cancel %s: %v", id, err))
	} else {
		m.note(s, fmt.Sprintf("task %s: cancellation requested (tasks/cancel)", id))
	}
	return &TaskCancelledError{TaskID: id, Err: cause}
}

// modern returns the session's Modern lifecycle, when it speaks that era.
func (s *Session) modern() *Modern {
	switch l := s.life.(type) {
	case *Modern:
		return l
	case *Auto:
		m, _ := l.Chosen().(*Modern)
		return m
	}
	return nil
}

// FollowTask waits for task id of the tasks extension to end, polling
// tasks/get and answering its input requests, and returns its result. An
// interrupt stops the waiting, not the task.
func (s *Session) FollowTask(ctx context.Context, id string) (json.RawMessage, error) {
	m := s.modern()
	if m == nil {
		return nil, errors.New("following a task with tasks/get needs the modern era (the tasks extension)")
	}
	raw, err := s.Call(ctx, mcp.MethodTasksGet, map[string]string{"taskId": id})
	if err != nil {
		return nil, err
	}
	return m.followTask(ctx, s, &Request{Method: mcp.MethodTasksGet, cfg: callConfig{label: fmt.Sprintf("task %q", id)}}, raw, false)
}
