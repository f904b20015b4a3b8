package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/mcp"
)

// ToolCall is one tools/call as a person asked for it.
type ToolCall struct {
	Name string
	Args json.RawMessage
	// Task asks for a task-augmented call (spec 2025-11-25:
	// basic/utilities/tasks). In the 2026-07-28 era the server decides
	// whether a call becomes a task, so it is ignored there (with a note).
	Task bool
	TTL  time.Duration
	// Progress receives progress updates of a plain call, or of a task
	// for its lifetime.
	Progress func(Progress)
	// OnTaskStatus is told each status of a task-augmented call.
	OnTaskStatus func(Task)
	// OnNote receives remarks for the person.
	OnNote func(string)
	// URLRequired, when set, is offered a -32042 error (the server needs a
	// URL elicitation first); if it reports true, the call is made once more.
	URLRequired func(ctx context.Context, err error) (retry bool)
}

// ErrTaskRequired marks a tool that declares execution.taskSupport
// "required" and was called without a task.
var ErrTaskRequired = errors.New("the tool requires task execution")

// ToolResultError reports a CallToolResult with isError: true. The result
// is returned with it, so it can still be shown. Name is empty when the
// tool is not known (the result of a task, fetched by its id).
type ToolResultError struct{ Name string }

func (e *ToolResultError) Error() string {
	if e.Name == "" {
		return "the tool reported an error (isError: true)"
	}
	return fmt.Sprintf("tool %q reported an error (isError: true)", e.Name)
}

// RunTool performs a tools/call the way a person means it: as a task when
// asked and possible, once more after a URL elicitation the server required,
// and with errors that explain themselves — a tool the server does not list
// (with close names, *NotFoundError), a tool that needs a task
// (ErrTaskRequired). A result with isError comes back together with a
// *ToolResultError (wrapped like the others).
func (s *Session) RunTool(ctx context.Context, call ToolCall) (json.RawMessage, error) {
	note := func(msg string) {
		if call.OnNote != nil {
			call.OnNote(msg)
		}
	}
	if call.Task && s.Server() != nil && s.Server().Era == "modern" {
		note("a task-augmented call was asked for, but in the modern era the server decides whether a call runs as a task (mcpx declares the tasks extension and follows any task it gets)")
		if call.TTL != 0 {
			note("a task TTL has no effect in the modern era: the tasks extension has no way to ask for one")
		}
		call.Task = false
	}
	once := func() (json.RawMessage, error) {
		if call.Task {
			return s.callToolAsTask(ctx, call, note)
		}
		var opts []CallOption
		if call.Progress != nil {
			opts = append(opts, WithProgress(call.Progress))
		}
		return s.CallTool(ctx, call.Name, call.Args, opts...)
	}
	res, err := once()
	if err != nil && call.URLRequired != nil && call.URLRequired(ctx, err) {
		res, err = once()
	}
	if err != nil {
		if !call.Task && s.ToolNeedsTask(ctx, call.Name, err) {
			err = fmt.Errorf("%w (%w)", err, ErrTaskRequired)
		}
		return nil, err
	}
	for _, p := range s.ToolResultProblems(call.Name, res) {
		note(fmt.Sprintf("the result of tool %q departs from the spec (server/tools): %s", call.Name, p))
	}
	if !ToolResultIsError(res) {
		return res, nil
	}
	err = &ToolResultError{Name: call.Name}
	if nf := s.CheckListed(ctx, "tool", call.Name, err); nf != nil {
		return res, nf
	}
	if !call.Task && s.ToolTaskSupport(ctx, call.Name) == "required" {
		// The official TypeScript SDK (1.32) answers so: its tool handler
		// turns the -32601 it throws into an isError result.
		note(fmt.Sprintf("tool %q requires a task, and the server answered the call without one with an isError result where the spec requires a -32601 (Method not found) error (basic/utilities/tasks, \"Tool-Level Negotiation\")", call.Name))
		return res, fmt.Errorf("%w (%w)", err, ErrTaskRequired)
	}
	return res, err
}

// callToolAsTask sends a task-augmented tools/call and follows the task.
func (s *Session) callToolAsTask(ctx context.Context, call ToolCall, note func(string)) (json.RawMessage, error) {
	if !s.Server().Declares("tasks", "requests", "tools", "call") {
		note("the server does not declare tasks.requests.tools.call; sending a task-augmented call anyway")
	} else if ts := s.ToolTaskSupport(ctx, call.Name); ts == "forbidden" {
		note(fmt.Sprintf("tool %q declares execution.taskSupport \"forbidden\" (the spec says a client must not call it as a task); sending a task-augmented call anyway", call.Name))
	} else if ts != "required" && ts != "optional" {
		note(fmt.Sprintf("tool %q does not declare task support (execution.taskSupport); sending a task-augmented call anyway", call.Name))
	}
	params := map[string]any{"name": call.Name}
	if len(call.Args) > 0 {
		params["arguments"] = call.Args
	}
	p, _ := json.Marshal(params)
	return s.CallAsTask(ctx, mcp.MethodToolsCall, p, TaskRun{TTL: call.TTL, OnStatus: call.OnTaskStatus, OnNote: note, Progress: call.Progress})
}
