package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/tui"
)

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
		c.console.Note(tui.DescribeTask(t))
	}
	prev, every := c.sink.getEvery()
	c.sink.setEvery(func(m *jsonrpc.Message) {
		if t, ok := inspector.TaskStatusOf(m); ok {
			show(t)
			return
		}
		if prev != nil {
			prev(m)
			return
		}
		c.console.Notification(m)
	}, every)
	return show, func() { c.sink.setEvery(prev, every) }
}

type tasksOptions struct {
	e *env
}

// The task commands that take a task id.
type taskVerb int

const (
	taskGet taskVerb = iota
	taskResult
	taskCancel
)

func newTasksCmd(e *env) *cobra.Command {
	o := &tasksOptions{e: e}
	one := func(use, short string, verb taskVerb) *cobra.Command {
		return &cobra.Command{
			Use:     use + " ID [flags] -- <server command>",
			Short:   short,
			Example: "  mcpx tasks " + use + " 786512e2-9e0d-44bd-8f29-789f320fe840 -- node server.js",
			RunE: func(c *cobra.Command, args []string) error {
				own, server := splitServer(c, args)
				if err := wantArgs(c, own, 1, 1); err != nil {
					return err
				}
				return o.one(c.Context(), verb, own[0], server)
			},
		}
	}
	list := (&listOptions{e: e, method: inspector.ListTasks, render: renderTasks,
		instead: "; look a task up with mcpx tasks get ID"}).command("list", "List the server's tasks (all pages)")
	cmd := groupCmd("tasks",
		list,
		one("get", "Show a task's status (tasks/get)", taskGet),
		one("result", "Wait for a task's result and print it (tasks/result)", taskResult),
		one("cancel", "Cancel a task (tasks/cancel)", taskCancel),
	)
	cmd.Long = `Tasks are durable requests a server runs in the background
(tools/call --task creates one). A task lives in the server, so these commands
are useful with servers that outlive one connection (HTTP); a stdio server
started for a single command knows no tasks from earlier runs.`
	return cmd
}

func (o *tasksOptions) one(ctx context.Context, verb taskVerb, id string, server []string) error {
	return o.e.withClient(ctx, server, func(c *client) error {
		switch verb {
		case taskResult:
			res, err := c.sess.AwaitTask(ctx, id)
			if err != nil {
				return err
			}
			o.e.emit(c, res, func() {
				if obj, err := inspector.ParseObject(res); err == nil && obj.Has("content") {
					c.out.ToolResult(res)
					return
				}
				c.out.JSON(res)
			})
			// A tool task that failed has a result with isError (spec
			// 2025-11-25: basic/utilities/tasks, "Task Execution Errors"):
			// exit 5, as tools call --task does with the same result.
			if inspector.ToolResultIsError(res) {
				return fmt.Errorf("task %s: %w", id, &inspector.ToolResultError{})
			}
			return nil
		case taskCancel:
			res, err := c.sess.RequestTaskCancel(ctx, id)
			if err != nil {
				return err
			}
			if o.e.cfg.out.json {
				c.out.JSON(res.Raw)
				return nil
			}
			if res.Acknowledged {
				fmt.Fprintf(o.e.ios.Out, "cancellation requested for task %s\n", tui.EscapeLine(id))
			}
			t, err := res.State(ctx)
			switch {
			case err == nil && t != nil:
				renderDetailedTask(c.out, t)
			case !res.Acknowledged:
				c.out.JSON(res.Raw)
			}
			return nil
		}
		res, err := c.sess.LookupTask(ctx, id)
		if err != nil {
			return err
		}
		o.e.emit(c, res.Raw, func() {
			if res.Task != nil {
				renderDetailedTask(c.out, res.Task)
				return
			}
			c.out.JSON(res.Raw)
		})
		return nil
	})
}

// renderDetailedTask shows a task of the tasks extension: its state, what
// it waits for, and its result or error once it has one.
func renderDetailedTask(p *tui.Printer, t *inspector.DetailedTask) {
	w := p.Writer()
	renderTasks(p, []json.RawMessage{mustJSON(t.Task())})
	if len(t.InputRequests) > 0 {
		fmt.Fprintf(w, "  waiting for input: %d request(s)\n", len(t.InputRequests))
	}
	if t.Error != nil {
		fmt.Fprintln(w, "  error: "+tui.EscapeLine(t.Error.Error()))
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
func renderTasks(p *tui.Printer, items []json.RawMessage) {
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
		fmt.Fprintln(w, tui.DescribeTask(t))
		// What the server left out is left out here, not shown empty.
		var extra []string
		if t.CreatedAt != "" {
			extra = append(extra, "created "+tui.EscapeLine(t.CreatedAt))
		}
		if t.LastUpdatedAt != "" {
			extra = append(extra, "updated "+tui.EscapeLine(t.LastUpdatedAt))
		}
		if t.TTL != nil {
			extra = append(extra, fmt.Sprintf("ttl %dms", *t.TTL))
		}
		if t.PollInterval != nil {
			extra = append(extra, fmt.Sprintf("poll every %dms", *t.PollInterval))
		}
		if len(extra) > 0 {
			fmt.Fprintln(w, "  "+strings.Join(extra, ", "))
		}
	}
}
