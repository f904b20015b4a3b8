package mcp

import (
	"encoding/json"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Route is what a request of the stateless 2026-07-28 era carries outside
// its body where the binding has an envelope (Streamable HTTP: the
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-{Name}
// headers; spec 2026-07-28: basic/transports/streamable-http, "Request
// Metadata"). It has the shape of transport.Route, which carries it.
type Route struct {
	// ProtocolVersion is the version the message's _meta declares.
	ProtocolVersion string
	// Method is the JSON-RPC method.
	Method string
	// Name is the name-shaped identifier of the request (a tool or prompt
	// name, a resource URI, a task id); "" for none.
	Name string
	// Params are the values mirrored from a tools/call's arguments (see
	// HeaderValues), in order.
	Params []RouteParam
}

// RouteParam is one mirrored argument: Name is the header name's suffix
// (Mcp-Param-{Name}), Value its plain value before any encoding.
type RouteParam struct {
	Name, Value string
}

// nameField is the params member each method mirrors into Mcp-Name (spec
// 2026-07-28: basic/transports/streamable-http, "Standard Request
// Headers"; the tasks extension adds its methods).
var nameField = map[string]string{
	MethodToolsCall:     "name",
	MethodPromptsGet:    "name",
	MethodResourcesRead: "uri",
	MethodTasksGet:      "taskId",
	MethodTasksUpdate:   "taskId",
	MethodTasksCancel:   "taskId",
}

// StandardRoute derives the standard part of a message's route from the
// message itself: the protocol version its _meta declares ("" when it
// declares none), the method, and the name-shaped identifier the method
// mirrors into Mcp-Name (spec 2026-07-28: basic/transports/streamable-http,
// "Standard Request Headers"). Mcp-Param values need the tool's schema
// and are not derived here. Replay and verify use it for recorded
// messages that carry no route.
//
// params is looked at in place (a large tools/call costs no copy): members
// match by their exact names, the last of repeated ones counting, as
// decoding into a map would.
func StandardRoute(method string, params json.RawMessage) Route {
	r := Route{Method: method}
	if len(rawjson.Trim(params)) == 0 || !json.Valid(params) {
		return r
	}
	field := nameField[method]
	var meta, name []byte
	rawjson.Members(params, func(n, v []byte) bool {
		switch {
		case rawjson.NameIs(n, "_meta"):
			meta = v
		case field != "" && rawjson.NameIs(n, field):
			name = v
		}
		return true
	})
	var version []byte
	rawjson.Members(meta, func(n, v []byte) bool {
		if rawjson.NameIs(n, MetaProtocolVersion) {
			version = v
		}
		return true
	})
	if s, ok := rawjson.String(version); ok {
		r.ProtocolVersion = s // the header must match the body
	}
	if s, ok := rawjson.String(name); ok {
		r.Name = s
	}
	return r
}
