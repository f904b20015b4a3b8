// Package inspector is mcpx's MCP client session as a library: a Session
// on the JSON-RPC engine (package jsonrpc/peer), the protocol eras as
// lifecycles (Legacy, Modern, Auto), the client features a server may
// use (roots, sampling, elicitation, tasks) with their policies, tasks,
// watching and subscriptions, the Catalog of what a server lists,
// argument typing and pagination.
//
// It has no terminal: it prints nothing and reads nothing. What it does
// on its own is reported through callbacks (Options.OnNote, OnWarning,
// OnServerRequest), and when a policy needs a person to answer a server
// it asks a Person, which the caller implements (package tui does, on a
// terminal). Text it reports may hold what a server sent, unescaped: a
// caller that shows it on a terminal escapes it. Its errors are typed
// (errors.Is, errors.As) and give facts, not command-line advice.
package inspector
