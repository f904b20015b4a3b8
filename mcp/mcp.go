// Package mcp is the vocabulary of the Model Context Protocol that more
// than one of mcpx's packages speaks: the protocol revisions, method and
// notification names, the _meta keys the protocol reserves, its error
// codes and result types, the route a 2026-07-28 request carries outside
// its body, and the x-mcp-header rules for mirroring tool arguments into
// it. It is a leaf: it imports only the standard library (and mcpx's
// stdlib-only internal helpers), so that the session (package inspector)
// and the trace library (package record) can share it without depending
// on each other. The specification is in the revision's directory of
// the MCP repository (https://modelcontextprotocol.io/specification).
package mcp

// Protocol revisions of the handshake era that mcpx speaks, newest first
// (spec: basic/lifecycle, "Version Negotiation").
var HandshakeVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// LatestHandshakeVersion is offered in initialize unless pinned otherwise.
const LatestHandshakeVersion = "2025-11-25"

// ModernVersions are the stateless protocol revisions mcpx speaks, newest
// first.
var ModernVersions = []string{"2026-07-28"}

// LatestModernVersion is the version modern requests declare unless pinned.
const LatestModernVersion = "2026-07-28"

// BatchVersion is the only revision that allows JSON-RPC batches (spec
// 2025-03-26: basic, "Batching"; 2025-06-18 removed them).
const BatchVersion = "2025-03-26"

// IsModernVersion reports whether v names a stateless revision
// (2026-07-28 or later; revision names are ISO dates).
func IsModernVersion(v string) bool { return v >= "2026-07-28" }

// Reserved _meta keys of 2026-07-28 (spec: basic/index, "_meta").
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// OpenTelemetry trace context _meta keys, the one exception to the
// reserved prefix (spec 2026-07-28: basic/index, "OpenTelemetry trace
// context"): their values follow W3C Trace Context and W3C Baggage.
const (
	MetaTraceParent = "traceparent"
	MetaTraceState  = "tracestate"
	MetaBaggage     = "baggage"
)

// MetaReservedPrefix starts every _meta key the protocol reserves (spec
// 2026-07-28: basic/index, "_meta").
const MetaReservedPrefix = "io.modelcontextprotocol/"

// MetaProgressToken is the _meta key of a request that asks for progress
// notifications (spec: basic/utilities/progress).
const MetaProgressToken = "progressToken"

// TasksExtension identifies the tasks extension of 2026-07-28 (SEP-2663),
// declared under capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// SkillsExtension identifies the Skills extension (specification
// io.modelcontextprotocol/skills, "Extension Identifier"): a server that
// declares it under capabilities.extensions serves skills/list and
// skills/get. It is specified against 2026-07-28, and declared the same
// way in a handshake-era initialize result.
const SkillsExtension = "io.modelcontextprotocol/skills"

// SkillsDirectoryRead is the setting of SkillsExtension by which a server
// says it implements resources/directory/read (Skills extension,
// "Capability Negotiation": a boolean, false when absent).
const SkillsDirectoryRead = "directoryRead"

// Error codes MCP defines beside JSON-RPC's own (package jsonrpc).
const (
	// CodeResourceNotFound (spec 2025-11-25: server/resources, "Error
	// Handling").
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired (spec 2025-11-25: client/elicitation).
	CodeURLElicitationRequired = -32042
	// Error codes of 2026-07-28 (spec: basic/index, "Error Codes").
	CodeHeaderMismatch                  = -32020
	CodeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
)

var codeNames = map[int]string{
	CodeResourceNotFound:                "resource not found",
	CodeURLElicitationRequired:          "URL elicitation required",
	CodeHeaderMismatch:                  "HeaderMismatch",
	CodeMissingRequiredClientCapability: "MissingRequiredClientCapability",
	CodeUnsupportedProtocolVersion:      "UnsupportedProtocolVersion",
}

// CodeName returns the readable name of one of MCP's error codes, "" for
// any other code (JSON-RPC's own codes are named by package jsonrpc).
func CodeName(code int) string { return codeNames[code] }

// Result types (spec 2026-07-28: basic/index, "ResultType"; "task" comes
// from the tasks extension).
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
	ResultTask          = "task"
)
