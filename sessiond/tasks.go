package sessiond

import (
	"encoding/json"
	"errors"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// A command's task-augmented request with a progress token (`tools call
// --task`) asks for progress for the task's whole life: the token stays
// valid after the CreateTaskResult answered the request, until the task
// is over (spec 2025-11-25: basic/utilities/tasks, "Task Progress
// Notifications"). The held session keeps the progress of the request it
// sent for it (inspector.WithTaskProgress) until the task is seen over,
// in an answer to tasks/get, tasks/cancel or tasks/result passed through
// for any command, or until the command that created it detaches.

// taskFollow is the progress of a task a command created through the
// session.
type taskFollow struct {
	a    *attachment
	sess *inspector.Session
	ids  []jsonrpc.ID // the held session's ids of the request that created it
}

// taskAugmented reports whether params ask for the request to run as a
// task (spec 2025-11-25: basic/utilities/tasks, "Creating Tasks").
func taskAugmented(params json.RawMessage) bool {
	t := rawjson.Member(params, "task")
	return len(t) > 0 && t[0] == '{'
}

// followTask keeps the progress of a task-augmented request sent as ids
// for the task its answer created, or ends it when the answer created
// none (an error, or a server that answered the call directly).
func (d *Daemon) followTask(a *attachment, sess *inspector.Session, ids []jsonrpc.ID, res json.RawMessage, err error) {
	id := ""
	if err == nil {
		id, _ = rawjson.String(rawjson.Member(rawjson.Member(res, "task"), "taskId"))
	}
	if id == "" {
		taskFollow{sess: sess, ids: ids}.end()
		return
	}
	d.mu.Lock()
	old, reused := d.tasks[id]
	d.tasks[id] = taskFollow{a: a, sess: sess, ids: ids}
	d.mu.Unlock()
	if reused {
		// A server that reuses a task's id: the earlier one is over.
		old.end()
	}
}

// taskAnswered ends the progress of the task that a tasks/get,
// tasks/cancel or tasks/result passed through is about, when its answer
// shows the task over: a terminal status, tasks/result's answer (it
// waits for one, spec: "Result Retrieval"), or the server's error (the
// task is unknown, or over already).
func (d *Daemon) taskAnswered(method string, params, res json.RawMessage, err error) {
	switch method {
	case mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksResult:
	default:
		return
	}
	var rpcErr *jsonrpc.Error
	over := errors.As(err, &rpcErr) || (err == nil && method == mcp.MethodTasksResult)
	if err == nil && !over {
		status, _ := rawjson.String(rawjson.Member(res, "status"))
		over = inspector.TerminalStatus(status)
	}
	if !over {
		return
	}
	id, ok := rawjson.String(rawjson.Member(params, "taskId"))
	if !ok {
		return
	}
	d.mu.Lock()
	f, ok := d.tasks[id]
	delete(d.tasks, id)
	d.mu.Unlock()
	if ok {
		f.end()
	}
}

// endTasks ends the progress of the tasks a command that detached created:
// nothing is left to pass it to.
func (d *Daemon) endTasks(a *attachment) {
	var ended []taskFollow
	d.mu.Lock()
	for id, f := range d.tasks {
		if f.a == a {
			ended = append(ended, f)
			delete(d.tasks, id)
		}
	}
	d.mu.Unlock()
	for _, f := range ended {
		f.end()
	}
}

func (f taskFollow) end() {
	for _, id := range f.ids {
		f.sess.EndTaskProgress(id)
	}
}
