package inspector

import (
	"encoding/json"
	"strings"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// What commands need to know about a notification, without naming its
// method.

// IsListChanged reports whether m announces that one of the server's lists
// changed (notifications/tools/list_changed and its kin).
func IsListChanged(m *jsonrpc.Message) bool { return strings.HasSuffix(m.Method, "/list_changed") }

// UpdatedResource returns the URI of a resource update
// (notifications/resources/updated), and whether m is one.
func UpdatedResource(m *jsonrpc.Message) (string, bool) {
	if m.Method != mcp.NotificationResourcesUpdated {
		return "", false
	}
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.URI, true
}

// TaskStatusOf returns the task of a task status notification
// (notifications/tasks/status, spec 2025-11-25: basic/utilities/tasks),
// and whether m is one that names a task.
func TaskStatusOf(m *jsonrpc.Message) (Task, bool) {
	var t Task
	if m.Method != mcp.NotificationTasksStatus || json.Unmarshal(m.Params, &t) != nil || t.TaskID == "" {
		return Task{}, false
	}
	return t, true
}
