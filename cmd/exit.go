package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// Exit codes. They are stable and documented in the README.
const (
	ExitOK          = 0   // success
	ExitError       = 1   // unexpected error
	ExitUsage       = 2   // bad command line
	ExitAuth        = 3   // authorization required or failed
	ExitConnect     = 4   // cannot connect, server exited, transport failure
	ExitServerError = 5   // JSON-RPC error, a tool result with isError, or the server broke the protocol
	ExitTimeout     = 6   // a request timed out
	ExitMismatch    = 7   // verify (or a strict replay) found a difference from the trace; trace diff one between two traces
	ExitInterrupted = 130 // interrupted (Ctrl-C)
)

// usageError is a mistake on the command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// classify maps an error to its exit code and a stable machine-readable kind.
func classify(err error) (int, string) {
	var ue *usageError
	var te *inspector.ToolResultError
	var rpcErr *jsonrpc.Error
	var exitErr *transport.PeerExitError
	var invalidTool *inspector.InvalidToolError
	var undeclared *inspector.ExtensionNotDeclaredError
	var uv *inspector.UnsupportedVersionError
	var sc *inspector.ServerCancelledError
	var ended *inspector.TaskEndedError
	var lost *record.LostError
	switch {
	case errors.As(err, &ue):
		return ExitUsage, "usage"
	case errors.As(err, &invalidTool):
		// The server's tool definition is at fault; mcpx refused to call it.
		return ExitServerError, "invalid_tool"
	case errors.As(err, &undeclared):
		// The server does not offer what was asked for: mcpx did not
		// send the request, which a server that did not declare the
		// capability of a method answers with an error (exit 5).
		return ExitServerError, "not_declared"
	case errors.Is(err, record.ErrMismatch):
		return ExitMismatch, "mismatch"
	case errors.Is(err, context.Canceled):
		return ExitInterrupted, "interrupted"
	case errors.Is(err, sessiond.ErrStoppedOpening):
		// The person ended the session (mcpx disconnect) while connect was
		// opening it: an interruption, not a failure to connect.
		return ExitInterrupted, "interrupted"
	case errors.Is(err, inspector.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return ExitTimeout, "timeout"
	case errors.As(err, &te):
		return ExitServerError, "tool_error"
	case errors.As(err, &rpcErr), errors.As(err, &sc), errors.As(err, &ended):
		return ExitServerError, "server_error"
	case errors.Is(err, inspector.ErrProtocolViolation):
		// The server broke the protocol (a result mcpx cannot read as
		// the method's, a resultType it does not know): the server is at
		// fault, not mcpx, as with a JSON-RPC error.
		return ExitServerError, "protocol_violation"
	case errors.As(err, &uv), errors.Is(err, transport.ErrFrameTooLarge):
		return ExitConnect, "connection"
	case errors.Is(err, transport.ErrRedirect):
		// A refused redirect is a transport failure even when it happened
		// on the way to an OAuth endpoint.
		return ExitConnect, "connection"
	case errors.Is(err, transport.ErrUnauthorized), errors.Is(err, oauthflow.ErrAuthorization):
		return ExitAuth, "auth"
	case errors.As(err, &exitErr), errors.As(err, &lost), errors.Is(err, transport.ErrConnect),
		errors.Is(err, transport.ErrClosed), errors.Is(err, transport.ErrTransport),
		errors.Is(err, inspector.ErrUnsupportedVersion), errors.Is(err, io.EOF):
		return ExitConnect, "connection"
	}
	return ExitError, "error"
}

// reporter prints a command's error the way mcpx reports errors.
type reporter struct {
	ios  *IOStreams
	json bool // one JSON line (--json)
	// inREPL refers the reader to the REPL's help rather than mcpx --help.
	inREPL bool
	// command is the command path whose help a usage error refers to
	// (mcpx tools call); "" for mcpx's.
	command string
	// hints are what the advice after an HTTP failure depends on.
	hints hintFacts
	// secrets are the credentials the connection knew (see
	// connDesc.knownSecrets), redacted from the message: a server may
	// quote the token it refused in its error, which --wire and traces
	// redact too. nil redacts none.
	secrets *record.Secrets
}

// report prints err on stderr — one line, or one JSON line with --json —
// and returns the exit code.
func (r reporter) report(err error) int {
	var st *exitStatus
	if errors.As(err, &st) {
		return st.code // reported already
	}
	if errors.Is(err, context.Canceled) && r.ios.outputFailure() != nil {
		// A failed write to standard output cancelled the run: Run
		// reports that, once (a REPL command is not "interrupted").
		return ExitError
	}
	code, kind := classify(err)
	// The packages redact the URLs they quote; this is the last line of
	// defence for any that slipped through (a library's error text).
	msg := r.secrets.Text(transport.RedactURLs(errorMessage(err) + httpHint(err, r.hints) + sessionHint(err, r.hints)))
	if r.json {
		// The JSON error's message is one line.
		out := map[string]any{"code": kind, "message": tui.EscapeLine(msg), "exitCode": code}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			out["rpcError"] = rpcErr
		}
		// A script's failing command: its line, for a program to find it.
		var atLine *repl.LineError
		var inc *repl.IncompleteError
		switch {
		case errors.As(err, &atLine):
			out["line"] = atLine.Line
		case errors.As(err, &inc):
			out["line"] = inc.Line
		}
		// The server's error (rpcError) is JSON as it sent it, which may
		// hold C1 and bidirectional controls raw.
		b, _ := json.Marshal(map[string]any{"error": out})
		fmt.Fprintln(r.ios.ErrOut, tui.EscapeJSON(string(r.secrets.Frame(b))))
		return code
	}
	// A message of several lines (a server's) keeps them, indented.
	line := "mcpx: " + strings.ReplaceAll(msg, "\n", "\n  ")
	if code == ExitUsage {
		switch {
		case r.inREPL:
			line += " (see help)"
		case r.command != "":
			line += " (see " + r.command + " --help)"
		default:
			line += " (see mcpx --help)"
		}
	}
	// On a terminal, wrapped at words as the console's lines are.
	fmt.Fprintln(r.ios.ErrOut, tui.WrapText(line, r.ios.errWidth()))
	return code
}

// errorMessage renders err (on several lines only where a server's
// message has them), with the advice for it on mcpx's
// command line (see advice), adding what the error chain knows (JSON-RPC
// error data, the server's last stderr line).
func errorMessage(err error) string {
	msg := err.Error() + advice(err)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && len(rpcErr.Data) > 0 && string(rpcErr.Data) != "null" {
		msg += " (data: " + compact(rpcErr.Data) + ")"
	}
	var exitErr *transport.PeerExitError
	if errors.As(err, &exitErr) {
		if last := exitErr.LastLines(3); len(last) > 0 {
			msg += "; its last stderr lines: " + strings.Join(last, " | ")
		}
	}
	if errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	return tui.EscapeMessage(strings.TrimSpace(msg), "")
}

func compact(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func errorsAs[T any](err error, target *T) bool { return errors.As(err, target) }
