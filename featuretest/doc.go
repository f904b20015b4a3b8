// Package featuretest holds end-to-end tests of mcpx's client features
// (roots, sampling, elicitation, logging, subscriptions, watch, linger,
// tasks): they run mcpx's commands through cmd.Run with injected streams
// against Go SDK servers built into the test binary and, when installed,
// the npm peers (server-everything, the conformance suite).
package featuretest
