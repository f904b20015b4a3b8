package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/modsource"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// The exit codes and error kinds README's "Exit codes" section lists are
// those classify gives, each for the errors it documents (wrapped as
// commands return them).
func TestExitCodesAsDocumented(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("tools/call: %w", err) }
	cases := []struct {
		err  error
		code int
		kind string
	}{
		{errors.New("something unexpected"), ExitError, "error"},
		{usageErrorf("unknown flag: --x"), ExitUsage, "usage"},
		{wrap(transport.ErrUnauthorized), ExitAuth, "auth"},
		{wrap(oauthflow.ErrAuthorization), ExitAuth, "auth"},
		{wrap(transport.ErrConnect), ExitConnect, "connection"},
		{wrap(&transport.PeerExitError{}), ExitConnect, "connection"},
		{wrap(transport.ErrFrameTooLarge), ExitConnect, "connection"},
		{wrap(transport.ErrRedirect), ExitConnect, "connection"},
		{wrap(io.EOF), ExitConnect, "connection"},
		{wrap(&jsonrpc.Error{Code: -32601, Message: "method not found"}), ExitServerError, "server_error"},
		{wrap(&inspector.ToolResultError{Name: "t"}), ExitServerError, "tool_error"},
		{wrap(&inspector.InvalidToolError{}), ExitServerError, "invalid_tool"},
		{wrap(&inspector.ExtensionNotDeclaredError{}), ExitServerError, "not_declared"},
		{wrap(inspector.ErrProtocolViolation), ExitServerError, "protocol_violation"},
		{wrap(inspector.ErrTimeout), ExitTimeout, "timeout"},
		{wrap(context.DeadlineExceeded), ExitTimeout, "timeout"},
		{wrap(record.ErrMismatch), ExitMismatch, "mismatch"},
		{wrap(context.Canceled), ExitInterrupted, "interrupted"},
	}
	codes, kinds := map[int]bool{}, map[string]bool{}
	for _, tc := range cases {
		code, kind := classify(tc.err)
		if code != tc.code || kind != tc.kind {
			t.Errorf("%v: exit %d (%s), want %d (%s)", tc.err, code, kind, tc.code, tc.kind)
		}
		codes[code], kinds[kind] = true, true
	}

	root, err := modsource.Root()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`(?s)\n## Exit codes\n(.*?)\n## `).FindSubmatch(readme)
	if section == nil {
		t.Fatal("README.md has no Exit codes section")
	}
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(string(section[1]), -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	for code := range codes {
		if !slices.Contains(documented, code) {
			t.Errorf("exit code %d is not in README's table %v", code, documented)
		}
	}
	for _, code := range documented {
		if !codes[code] && code != ExitOK {
			t.Errorf("README's table has exit code %d, which no error gets", code)
		}
	}
	kindsLine := regexp.MustCompile("(?s)`code` is one of (.*?)\\.\n").FindSubmatch(section[1])
	if kindsLine == nil {
		t.Fatal("README's Exit codes section does not list the error codes")
	}
	var listed []string
	for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(string(kindsLine[1]), -1) {
		listed = append(listed, m[1])
	}
	for kind := range kinds {
		if !slices.Contains(listed, kind) {
			t.Errorf("error code %q is not in README's list %v", kind, listed)
		}
	}
	for _, kind := range listed {
		if !kinds[kind] {
			t.Errorf("README lists the error code %q, which no error gets", kind)
		}
	}
}

// A server that broke the protocol so that a request stopped is exit 5,
// protocol_violation, as the inspector's errors come (inside an incomplete
// list too); mcpx's own bound, and the server's JSON-RPC error on a page,
// keep their kinds.
func TestClassifyProtocolViolation(t *testing.T) {
	t.Parallel()
	_, notTask := inspector.ParseDetailedTask(json.RawMessage(`{"status":"working"}`))
	_, badContents := inspector.DecodeContents(json.RawMessage(`{"contents":5}`))
	_, badInput := inspector.ParseInputRequired(json.RawMessage(`[]`))
	loop := &inspector.PaginationError{Method: "tools/list", Cursor: "c", Repeated: true, Pages: 2}
	for _, tc := range []struct {
		err  error
		code int
		kind string
	}{
		{fmt.Errorf("tools/call: the server answered resultType \"task\" but %w", notTask), ExitServerError, "protocol_violation"},
		{fmt.Errorf("resources/read %q: %w", "a://b", badContents), ExitServerError, "protocol_violation"},
		{fmt.Errorf("tools/call: %w", badInput), ExitServerError, "protocol_violation"},
		{&inspector.IncompleteListError{Method: "tools/list", Pages: 2, Err: loop}, ExitServerError, "protocol_violation"},
		{&inspector.IncompleteListError{Method: "tools/list", Pages: 10000, Err: &inspector.PaginationError{Method: "tools/list", Pages: 10000}}, ExitError, "error"},
		{&inspector.IncompleteListError{Method: "tools/list", Pages: 1, Err: &jsonrpc.Error{Code: -32602, Message: "bad cursor"}}, ExitServerError, "server_error"},
		{&inspector.IncompleteListError{Method: "tools/list", Pages: 1, Err: inspector.ErrTimeout}, ExitTimeout, "timeout"},
	} {
		if code, kind := classify(tc.err); code != tc.code || kind != tc.kind {
			t.Errorf("%v: exit %d (%s), want %d (%s)", tc.err, code, kind, tc.code, tc.kind)
		}
	}
}

// --strict fails a command for the server's departures warned about
// since the last command that answered for them: exit 5,
// protocol_violation, once each; warnings that are not departures, and
// strict off, fail nothing.
func TestStrictError(t *testing.T) {
	t.Parallel()
	c := &client{console: tui.NewConsole(io.Discard, false, false), clientState: &clientState{}}
	c.console.Warn("not the server's") // a warning, not a departure
	if err := c.strictError(true); err != nil {
		t.Fatalf("no departure: %v", err)
	}
	ctx := context.Background()
	c.depart(ctx, "one")
	c.depart(ctx, "two")
	if err := c.strictError(false); err != nil {
		t.Fatalf("strict off: %v", err)
	}
	err := c.strictError(true)
	if err == nil {
		t.Fatal("two departures: no error")
	}
	if code, kind := classify(fmt.Errorf("line 2: %w", err)); code != ExitServerError || kind != "protocol_violation" {
		t.Errorf("exit %d (%s), want 5 (protocol_violation)", code, kind)
	}
	if want := "the server departed from the protocol 2 time(s) (the warnings above); --strict makes that an error"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// The next command answers only for its own.
	if err := c.strictError(true); err != nil {
		t.Errorf("answered for already: %v", err)
	}
	view := &client{console: tui.NewConsole(io.Discard, false, false), clientState: c.clientState} // (as withOutput makes one)
	view.depart(ctx, "a view's")
	if err := c.strictError(true); err == nil || !strings.Contains(err.Error(), " 1 time(s)") {
		t.Errorf("a view's departure: %v", err)
	}
}

// A REPL line answers for the departures that come with its context (of
// its requests, or found by its command) while it runs, not for the
// session's, nor for another line's; one that comes with the context of
// a line that has ended is the session's, which a script answers for at
// its end.
func TestLineDepartures(t *testing.T) {
	t.Parallel()
	c := &client{console: tui.NewConsole(io.Discard, false, false), clientState: &clientState{}}
	view := &client{console: tui.NewConsole(io.Discard, false, false), clientState: c.clientState}
	ctxA, a := withLineDepartures(context.Background())
	ctxB, b := withLineDepartures(context.Background())
	c.depart(ctxA, "A's")
	view.depart(ctxA, "A's, found by its command")
	c.depart(ctxB, "B's")
	c.depart(context.Background(), "tied to no request")
	if n := a.end(); n != 2 {
		t.Errorf("line A answers for %d, want 2", n)
	}
	c.depart(ctxA, "a late second answer to A's request")
	if n := b.end(); n != 1 {
		t.Errorf("line B answers for %d, want 1", n)
	}
	if n := c.unanswered(); n != 2 {
		t.Errorf("the session's unanswered: %d, want 2", n)
	}
	err := &strictError{n: 2, outside: true}
	if code, kind := classify(err); code != ExitServerError || kind != "protocol_violation" {
		t.Errorf("exit %d (%s), want 5 (protocol_violation)", code, kind)
	}
	if want := "the server departed from the protocol 2 time(s) outside the script's commands (the warnings above); --strict makes that an error"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}
