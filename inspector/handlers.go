package inspector

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// Handler answers one request the server makes of the client (roots/list,
// sampling/createMessage, elicitation/create, tasks/*). It is a plain
// function of the method and its params so that the same handler serves
// both eras: in the handshake era these arrive as server-to-client requests
// (registered in Options.Handlers through Adapt); in the 2026-07-28 era the
// same requests arrive embedded in an InputRequiredResult and are answered
// by calling the handler directly.
type Handler func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// RelatedTaskKey is the _meta key that ties messages to a task
// (spec 2025-11-25: basic/utilities/tasks, "Related Task Metadata").
const RelatedTaskKey = "io.modelcontextprotocol/related-task"

// Adapt turns a Handler into a RequestHandler for Options.Handlers. When the
// request carries related-task metadata the answer carries it too: every
// response related to a task must (spec 2025-11-25: basic/utilities/tasks,
// "Associating Task-Related Messages").
func Adapt(h Handler) RequestHandler {
	return func(ctx context.Context, req *jsonrpc.Message) (any, error) {
		res, err := h(ctx, req.Method, req.Params)
		if err != nil {
			return nil, err
		}
		if rt := relatedTask(req.Params); rt != nil {
			if withMeta, merr := setMeta(res, RelatedTaskKey, rt); merr == nil {
				res = withMeta
			}
		}
		return res, nil
	}
}

// relatedTask returns params._meta[RelatedTaskKey], or nil.
func relatedTask(params json.RawMessage) json.RawMessage {
	obj, err := ParseObject(params)
	if err != nil {
		return nil
	}
	meta, err := ParseObject(obj.Get("_meta"))
	if err != nil {
		return nil
	}
	if v := meta.Get(RelatedTaskKey); len(v) > 0 && string(v) != "null" {
		return v
	}
	return nil
}

// Errors a handler returns to the server. They are *jsonrpc.Error values so the
// session sends them as they are.
var (
	// ErrUserRejected is the sampling refusal the spec suggests
	// (spec 2025-11-25: client/sampling, "Error Handling": code -1).
	errUserRejectedCode = -1
)

// rejectError builds the JSON-RPC error for a refused request.
func rejectError(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: errUserRejectedCode, Message: msg}
}

func invalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// marshalRaw encodes v, for handlers that build their results as values.
func marshalRaw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Every value handlers marshal is built from JSON-safe types.
		panic(fmt.Sprintf("mcpx: cannot encode %T: %v", v, err))
	}
	return b
}
