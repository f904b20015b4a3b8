package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
)

// callAsTask runs tools/call as a task (--task), showing status changes on
// stderr.
// showTaskStatus installs a display of a task's status changes, which
// arrive from polling and, when the server sends them, as
// notifications/tasks/status: each change is shown once. restore puts the
// previous notification routing back.
func (c *client) showTaskStatus() (show func(inspector.Task), restore func()) {
	var mu sync.Mutex
	shown := map[string]string{}
	show = func(t inspector.Task) {
		mu.Lock()
		defer mu.Unlock()
		if shown[t.TaskID] == t.Status+"\x00"+t.StatusMessage {
			return
		}
		shown[t.TaskID] = t.Status + "\x00" + t.StatusMessage
		c.console.Note(inspector.DescribeTask(t))
	}
	prev := c.sink.get()
	c.sink.set(func(m *inspector.Message) {
		var t inspector.Task
		if m.Method == "notifications/tasks/status" && json.Unmarshal(m.Params, &t) == nil && t.TaskID != "" {
			show(t)
			return
		}
		if prev != nil {
			prev(m)
			return
		}
		c.console.Notification(m)
	})
	return show, func() { c.sink.set(prev) }
}

type tasksOptions struct {
	g      *globalOptions
	cursor string
}

func newTasksCmd(g *globalOptions) *cobra.Command {
	o := &tasksOptions{g: g}
	one := func(use, short, method string) *cobra.Command {
		return &cobra.Command{
			Use:   use + " ID -- <server command>",
			Short: short,
			RunE: func(c *cobra.Command, args []string) error {
				own, server := splitServer(c, args)
				if err := wantArgs(c, own, 1, 1); err != nil {
					return err
				}
				return o.one(c.Context(), method, own[0], server)
			},
		}
	}
	list := newListCmd(g, "list", "List the server's tasks (all pages)", "tasks/list", renderTasks)
	cmd := groupCmd("tasks", "List, inspect, fetch and cancel tasks (2025-11-25, experimental)",
		list,
		one("get", "Show a task's status (tasks/get)", "tasks/get"),
		one("result", "Wait for a task's result and print it (tasks/result)", "tasks/result"),
		one("cancel", "Cancel a task (tasks/cancel)", "tasks/cancel"),
	)
	cmd.Long = `Tasks are durable requests a server runs in the background
(tools/call --task creates one). A task lives in the server, so these commands
are useful with servers that outlive one connection (HTTP); a stdio server
started for a single command knows no tasks from earlier runs.`
	return cmd
}

func (o *tasksOptions) one(ctx context.Context, method, id string, server []string) error {
	return o.g.withClient(ctx, server, func(c *client) error {
		if c.isModern() {
			return o.oneModern(ctx, c, method, id)
		}
		var res json.RawMessage
		var err error
		if method == "tasks/result" {
			res, err = c.sess.TaskResult(ctx, id)
		} else {
			res, err = c.sess.Call(ctx, method, map[string]string{"taskId": id})
		}
		if err != nil {
			return fmt.Errorf("%s %q: %w", method, id, err)
		}
		o.g.emit(c, res, func() {
			if method == "tasks/result" {
				if obj, err := inspector.ParseObject(res); err == nil && obj.Has("content") {
					c.out.ToolResult(res)
					return
				}
				c.out.JSON(res)
				return
			}
			var t inspector.Task
			if json.Unmarshal(res, &t) == nil && t.TaskID != "" {
				renderTasks(c.out, []json.RawMessage{res})
				return
			}
			c.out.JSON(res)
		})
		return nil
	})
}

// oneModern runs a tasks command against the tasks extension of
// 2026-07-28: tasks/get carries the result (so "result" follows the task
// with tasks/get until it ends) and tasks/cancel answers with an empty
// acknowledgement (so "cancel" then shows the task's state).
func (o *tasksOptions) oneModern(ctx context.Context, c *client, method, id string) error {
	if !c.sess.Server().Declares("extensions", inspector.TasksExtension) {
		c.console.Warn("the server does not declare the " + inspector.TasksExtension + " extension; sending " + method + " anyway")
	}
	switch method {
	case "tasks/result":
		res, err := c.sess.FollowTask(ctx, id)
		if err != nil {
			return err
		}
		o.g.emit(c, res, func() { c.out.ToolResult(res) })
		return nil
	case "tasks/cancel":
		res, err := c.sess.Call(ctx, "tasks/cancel", map[string]string{"taskId": id})
		if err != nil {
			return fmt.Errorf("tasks/cancel %q: %w", id, err)
		}
		if o.g.json {
			c.out.JSON(res)
			return nil
		}
		fmt.Fprintf(o.g.io.Out, "cancellation requested for task %s\n", inspector.EscapeLine(id))
		if t, err := c.sess.GetTaskExt(ctx, id); err == nil {
			renderDetailedTask(c.out, t)
		}
		return nil
	}
	res, err := c.sess.Call(ctx, "tasks/get", map[string]string{"taskId": id})
	if err != nil {
		return fmt.Errorf("tasks/get %q: %w", id, err)
	}
	o.g.emit(c, res, func() {
		t, err := inspector.ParseDetailedTask(res)
		if err != nil {
			c.out.JSON(res)
			return
		}
		renderDetailedTask(c.out, t)
	})
	return nil
}

// renderDetailedTask shows a task of the tasks extension: its state, what
// it waits for, and its result or error once it has one.
func renderDetailedTask(p *inspector.Printer, t *inspector.DetailedTask) {
	w := p.Writer()
	renderTasks(p, []json.RawMessage{mustJSON(t.Task())})
	if len(t.InputRequests) > 0 {
		fmt.Fprintf(w, "  waiting for input: %d request(s)\n", len(t.InputRequests))
	}
	if t.Error != nil {
		fmt.Fprintln(w, "  error: "+inspector.EscapeLine(t.Error.Error()))
	}
	if len(t.Result) > 0 {
		fmt.Fprintln(w, "  result:")
		p.ToolResult(t.Result)
	}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// renderTasks lists tasks: id, status, message, times.
func renderTasks(p *inspector.Printer, items []json.RawMessage) {
	w := p.Writer()
	if len(items) == 0 {
		fmt.Fprintln(w, "(no tasks)")
		return
	}
	for _, it := range items {
		var t inspector.Task
		if json.Unmarshal(it, &t) != nil {
			p.JSON(it)
			continue
		}
		fmt.Fprintln(w, inspector.DescribeTask(t))
		extra := "  created " + inspector.EscapeLine(t.CreatedAt) + ", updated " + inspector.EscapeLine(t.LastUpdatedAt)
		if t.TTL != nil {
			extra += fmt.Sprintf(", ttl %dms", *t.TTL)
		}
		if t.PollInterval != nil {
			extra += fmt.Sprintf(", poll every %dms", *t.PollInterval)
		}
		fmt.Fprintln(w, extra)
	}
}
