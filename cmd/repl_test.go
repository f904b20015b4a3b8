package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/tui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestReplExamples(t *testing.T) {
	t.Parallel()
	in := `  mcpx tools call echo message=hi -- node server.js
  mcpx tools call get-sum a=2 b=3 --json -- node server.js
  mcpx tools list --url http://127.0.0.1:3001/mcp
  mcpx ping`
	want := `  tools call echo message=hi
  tools call get-sum a=2 b=3 --json
  tools list
  ping`
	if got := replExamples(in); got != want {
		t.Errorf("replExamples:\n%s\nwant:\n%s", got, want)
	}
}

func TestHistoryPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MCPX_HISTORY_FILE": "/x/h", "XDG_STATE_HOME": "/s", "HOME": "/home/a"}, "/x/h"},
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/home/a"}, "/s/mcpx/history"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/a"}, "/home/a/.local/state/mcpx/history"},
		{map[string]string{"HOME": "/home/a"}, "/home/a/.local/state/mcpx/history"},
		{map[string]string{}, ""},
	} {
		ios, _, _ := NewTestIOStreams(tc.env)
		if got := historyPath(ios); got != tc.want {
			t.Errorf("historyPath(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestNoteQueue(t *testing.T) {
	t.Parallel()
	q := newNoteQueue()
	q.add(&jsonrpc.Message{Method: "notifications/message"})
	q.add(&jsonrpc.Message{Method: "notifications/resources/updated", Params: []byte(`{"uri":"a"}`)})
	q.add(&jsonrpc.Message{Method: "notifications/resources/updated", Params: []byte(`{"uri":"b"}`)})
	ctx := context.Background()

	// The oldest match is taken, once; globs work.
	m, err := q.take(ctx, "notifications/resources/*", nil)
	if err != nil || string(m.Params) != `{"uri":"a"}` {
		t.Fatalf("took %v, %v", m, err)
	}
	m, _ = q.take(ctx, "notifications/resources/updated", nil)
	if string(m.Params) != `{"uri":"b"}` {
		t.Fatalf("took %s", m.Params)
	}

	// Waiting for one that has not come yet.
	got := make(chan *jsonrpc.Message, 1)
	go func() {
		m, _ := q.take(ctx, "notifications/tools/list_changed", nil)
		got <- m
	}()
	q.add(&jsonrpc.Message{Method: "notifications/tools/list_changed"})
	select {
	case m := <-got:
		if m == nil || m.Method != "notifications/tools/list_changed" {
			t.Fatalf("took %v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("take did not see the notification")
	}

	// Bounded by ctx, or by the end of the session.
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := q.take(tctx, "nothing", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("take without a match: %v", err)
	}
	gone := make(chan struct{})
	close(gone)
	if _, err := q.take(ctx, "nothing", gone); !errors.Is(err, inspector.ErrServerGone) {
		t.Errorf("take after the end: %v", err)
	}
	// The message left is still there; clear drops it.
	q.clear()
	tctx, cancel = context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := q.take(tctx, "notifications/message", nil); err == nil {
		t.Error("clear kept a notification")
	}
}

func TestExitStatusIsSilent(t *testing.T) {
	t.Parallel()
	ios, _, errOut := NewTestIOStreams(nil)
	if code := (reporter{ios: ios}).report(&exitStatus{code: 5}); code != 5 || errOut.String() != "" {
		t.Errorf("report(exitStatus 5) = %d, printed %q", code, errOut.String())
	}
}

// The REPL runs every line through one command tree: what a line sets —
// a flag, a refused flag, a "--", its context — must not carry over to
// the next line of the same command.
func TestREPLLinesDoNotCarryOver(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	ios, out, errOut := NewTestIOStreams(nil)
	ios.In = strings.NewReader(strings.Join([]string{
		"tools call echo message=one --json",
		"tools call echo message=two",
		"ping --timeout 1s",
		"ping",
		"ping -- node server.js",
		"ping",
	}, "\n") + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Run(ctx, []string{"repl", "--keep-going", "--url", u}, ios)
	stdout, stderr := out.String(), errOut.String()
	if code != ExitUsage {
		t.Errorf("exit %d, want %d (the first failure's)", code, ExitUsage)
	}
	if !strings.Contains(stdout, `"text": "Echo: one"`) || strings.Contains(stdout, `"text": "Echo: two"`) || !strings.Contains(stdout, "\nEcho: two\n") {
		t.Errorf("--json lasted beyond its line:\n%s", stdout)
	}
	if n := strings.Count(stdout, "pong"); n != 2 {
		t.Errorf("%d pongs, want 2 (the lines without a refused flag or --):\n%s\n%s", n, stdout, stderr)
	}
	if n := strings.Count(stderr, "--timeout chooses or shapes the session"); n != 1 {
		t.Errorf("--timeout refused %d times, want once:\n%s", n, stderr)
	}
	if n := strings.Count(stderr, "leave out -- and the server command"); n != 1 {
		t.Errorf("-- refused %d times, want once:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "interrupted") || strings.Contains(stderr, "context canceled") {
		t.Errorf("a line ran with an earlier line's context:\n%s", stderr)
	}
}

// A session flag is refused by name wherever a line puts it — before the
// command's name too, where whether it takes a value decides which word
// is the command — on the first line a command tree runs (the session
// flags are given to a command when a line first names it) and in the
// trees of lines run at once.
func TestREPLRefusesSessionFlagsAnywhere(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	lines := []struct{ line, flag string }{
		{"--stable tools list", "--stable"},
		{"tools --timeout 1s list", "--timeout"},
		{"tools list --url http://127.0.0.1:1/mcp", "--url"},
		{"ping --no-redact", "--no-redact"},
		{"resources --stable list", "--stable"},
	}
	for _, parallel := range []string{"1", "3"} {
		var script []string
		for _, l := range lines {
			script = append(script, l.line)
		}
		ios, out, errOut := NewTestIOStreams(nil)
		ios.In = strings.NewReader(strings.Join(script, "\n") + "\n")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code := Run(ctx, []string{"repl", "--keep-going", "--parallel", parallel, "--url", u}, ios)
		cancel()
		if code != ExitUsage {
			t.Errorf("--parallel %s: exit %d, want %d", parallel, code, ExitUsage)
		}
		got := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if len(got) != len(lines) {
			t.Fatalf("--parallel %s: %d lines on stderr, want %d:\n%s\n%s", parallel, len(got), len(lines), errOut, out)
		}
		for i, l := range lines {
			if want := fmt.Sprintf("mcpx: line %d: %s chooses or shapes the session", i+1, l.flag); !strings.HasPrefix(got[i], want) {
				t.Errorf("--parallel %s: %q: %s; want %q", parallel, l.line, got[i], want)
			}
		}
	}
}

// At a terminal the REPL runs commands one at a time and goes on after a
// failure: --parallel and --keep-going, which shape a script's run, would
// do nothing there, and are refused in one line before anything starts
// (the server at --url is never asked).
func TestREPLAtATerminalRefusesScriptFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"repl", "--parallel", "4"},
		{"repl", "--keep-going"},
		{"--keep-going", "--parallel", "2"}, // mcpx with no command
	} {
		ios, out, errOut := NewTestIOStreams(nil)
		ios.InTTY, ios.ErrTTY = true, true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		code := Run(ctx, append(args, "--url", "http://127.0.0.1:1/mcp"), ios)
		cancel()
		stderr := errOut.String()
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
			!strings.Contains(stderr, "to a script (-f FILE, or commands piped to stdin); at a terminal commands run one at a time") || out.String() != "" {
			t.Errorf("%q: exit %d, want %d and one line:\n%s%s", args, code, ExitUsage, stderr, out)
		}
	}
}

// forgetRun puts every flag of a command of the REPL's tree back to its
// default, whatever its type.
func TestForgetRunResetsEveryFlag(t *testing.T) {
	t.Parallel()
	ios, _, _ := NewTestIOStreams(nil)
	e := &env{ios: ios, run: &runState{}, conns: &connector{ios: ios, track: func(*client) func() { return nil }}}
	s := newReplSession(context.Background(), e, connDesc{}, false)
	values := map[string]string{"bool": "true", "string": "x", "stringArray": "x", "duration": "3s", "int": "7", "SIZE": "1MiB"}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		if err := c.ParseFlags([]string{"--", "server"}); err != nil { // (with the parents' persistent flags)
			t.Fatal(err)
		}
		fs := c.Flags()
		fs.VisitAll(func(f *pflag.Flag) {
			v, ok := values[f.Value.Type()]
			if !ok {
				t.Errorf("%s --%s: a flag of type %s is not tried", c.CommandPath(), f.Name, f.Value.Type())
				return
			}
			if err := fs.Set(f.Name, v); err != nil {
				t.Errorf("%s --%s=%s: %v", c.CommandPath(), f.Name, v, err)
			}
		})
		c.SetContext(context.Background())
		forgetRun(c)
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Changed || f.Value.String() != f.DefValue {
				t.Errorf("%s --%s is %q (changed %v) after forgetRun, want %q", c.CommandPath(), f.Name, f.Value.String(), f.Changed, f.DefValue)
			}
		})
		if fs.ArgsLenAtDash() != -1 || c.Context() != nil {
			t.Errorf("%s: the position of -- or the context survived forgetRun", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(s.root)
}

// One table drives the REPL's own commands: help lists them, completion
// offers them, and a line is dispatched by it.
func TestREPLCommandTable(t *testing.T) {
	t.Parallel()
	ios, out, errOut := NewTestIOStreams(nil)
	e := &env{ios: ios, run: &runState{}, conns: &connector{ios: ios, track: func(*client) func() { return nil }}}
	s := newReplSession(context.Background(), e, connDesc{}, false)
	s.help()
	offered := map[string]bool{}
	for _, n := range s.node.Children {
		offered[n.Name] = true
	}
	var colons []string
	for _, c := range s.commands {
		if !strings.Contains(out.String(), "  "+c.use+"  ") {
			t.Errorf("help does not list %q:\n%s", c.use, out.String())
		}
		if !offered[c.name] {
			t.Errorf("completion does not offer %s", c.name)
		}
		if strings.HasPrefix(c.name, ":") {
			colons = append(colons, c.name)
		}
	}
	if res := s.exec(context.Background(), []string{":nope"}); res.Code != ExitUsage ||
		!strings.Contains(errOut.String(), "(choose one of: "+strings.Join(colons, ", ")+")") {
		t.Errorf(":nope: exit %d, %s", res.Code, errOut.String())
	}
	if res := s.exec(context.Background(), []string{"quit", "3"}); !res.Quit || res.Code != 3 {
		t.Errorf("quit 3 = %+v", res)
	}
	if res := s.exec(context.Background(), []string{":wire", "on"}); res.Code != 0 || !s.wire.Load() {
		t.Errorf(":wire on = %+v, wire %v", res, s.wire.Load())
	}
}

// TestREPLHelpWrapsOnATerminal: help's own sentences (its heading, what
// every command takes) are broken at words to a terminal's width, as the
// console's lines are; off a terminal they are whole lines.
func TestREPLHelpWrapsOnATerminal(t *testing.T) {
	t.Parallel()
	head := "Protocol commands (as in mcpx, without the server; `help COMMAND` or COMMAND --help for more):"
	tail := "Per command: --json, --wire, -v. Quote words with spaces ('a b'); JSON needs no quotes. Ctrl-C cancels the command running; Ctrl-D or exit leaves."
	for _, width := range []int{0, 40} {
		ios, out, _ := NewTestIOStreams(nil)
		if width > 0 {
			ios.OutTTY, ios.OutWidth = true, func() int { return width }
		}
		e := &env{ios: ios, run: &runState{}, conns: &connector{ios: ios, track: func(*client) func() { return nil }}}
		newReplSession(context.Background(), e, connDesc{}, false).help()
		text := out.String()
		at := strings.Index(text, "\nPer command:")
		if at < 0 {
			t.Fatalf("width %d: no Per command:\n%s", width, text)
		}
		first, _, _ := strings.Cut(text, "\n")
		if width == 0 {
			if first != head || !strings.HasSuffix(text, "\nPer command: --json, --wire, -v. Quote words with spaces ('a b'); JSON needs no quotes.\nCtrl-C cancels the command running; Ctrl-D or exit leaves.\n") {
				t.Errorf("off a terminal, the lines are not whole:\n%s", text)
			}
			continue
		}
		if tui.DisplayWidth(first) > width || !strings.HasPrefix(strings.Join(strings.Fields(text), " "), head) {
			t.Errorf("the heading is not wrapped at words:\n%s", text)
		}
		for _, l := range strings.Split(strings.TrimRight(text[at+1:], "\n"), "\n") {
			if tui.DisplayWidth(l) > width {
				t.Errorf("a line takes %d columns, more than %d: %q", tui.DisplayWidth(l), width, l)
			}
		}
		if got := strings.Join(strings.Fields(text[at:]), " "); got != tail {
			t.Errorf("the words are %q, want %q", got, tail)
		}
	}
}

// TestREPLParallelLinesInOrder: with --parallel, lines run at once on
// command trees of their own and print in line order, each with its own
// flags (--json on some lines only).
func TestREPLParallelLinesInOrder(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	ios, out, errOut := NewTestIOStreams(nil)
	var script, want strings.Builder
	for i := range 60 {
		if i%3 == 0 {
			fmt.Fprintf(&script, "tools call echo message=n%d --json\n", i)
			fmt.Fprintf(&want, `"text": "Echo: n%d"`+"\n", i)
		} else {
			fmt.Fprintf(&script, "tools call echo message=n%d\n", i)
			fmt.Fprintf(&want, "Echo: n%d\n", i)
		}
	}
	ios.In = strings.NewReader(script.String())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code := Run(ctx, []string{"repl", "--parallel", "8", "--url", u}, ios); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got strings.Builder
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "Echo: ") || strings.Contains(l, `"text": "Echo: `) {
			got.WriteString(strings.TrimSpace(l) + "\n")
		}
	}
	if got.String() != want.String() {
		t.Errorf("results out of order or wrong:\n%s\nwant\n%s", got.String(), want.String())
	}
}

// TestJSONErrorLineIsTerminalSafe: the --json error line quotes the
// server's error as JSON, with the C1 and bidirectional controls it may
// hold escaped (the same JSON, nothing a terminal acts on).
func TestJSONErrorLineIsTerminalSafe(t *testing.T) {
	t.Parallel()
	ios, _, errOut := NewTestIOStreams(nil)
	rpcErr := &jsonrpc.Error{Code: -32000, Message: "bad\u009b2J \u202eevil\u2066", Data: json.RawMessage(`"\u202e"`)}
	if code := (reporter{ios: ios, json: true}).report(rpcErr); code != ExitServerError {
		t.Errorf("exit %d", code)
	}
	line := errOut.String()
	if strings.ContainsAny(line, "\u009b\u202e\u2066") {
		t.Errorf("raw control in the error line: %q", line)
	}
	var v struct {
		Error struct {
			RPCError jsonrpc.Error `json:"rpcError"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &v); err != nil || v.Error.RPCError.Message != rpcErr.Message {
		t.Errorf("the line %q does not hold the server's message: %v", line, err)
	}
}

// TestREPLScriptFromStdinDash: -f - reads the script from stdin, as
// --args @- reads an argument from it.
func TestREPLScriptFromStdinDash(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	ios, out, errOut := NewTestIOStreams(nil)
	ios.In = strings.NewReader("tools call echo message=from-stdin\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code := Run(ctx, []string{"repl", "-f", "-", "--url", u}, ios); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "mcpx> tools call echo message=from-stdin\nEcho: from-stdin\n") {
		t.Errorf("the script on stdin did not run:\n%s\n%s", out.String(), errOut.String())
	}
}

// -f DIRECTORY is refused before the server is reached: a directory
// opens, and reading it failed only once the session was open.
func TestREPLScriptDirectoryRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runMcpx(t, nil, "repl", "-f", dir, "--url", "http://"+testservers.RefusedAddr(t)+"/mcp")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "-f "+dir+": is a directory; give a script file") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

// A line pasted from a shell, with mcpx in front, is told to leave it out
// (cobra said: unknown command "mcpx" for "mcpx").
func TestREPLLineStartingWithMcpx(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	ios, _, errOut := NewTestIOStreams(nil)
	ios.In = strings.NewReader("mcpx tools list\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code := Run(ctx, []string{"repl", "--url", u}, ios); code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if want := `mcpx: line 1: leave out "mcpx": the REPL runs mcpx's commands as they follow it (tools list)`; !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("stderr %q, want it to begin %q", errOut, want)
	}
}

// A command whose value has the form of a credential is not kept in the
// history, whatever the value is named; words that merely look alike
// (prose, a mention of a token) are kept.
func TestGivesCredentialByValue(t *testing.T) {
	for _, line := range []string{
		`tools call echo message="Bearer sk-live-abc"`,
		`tools call echo message="Bearer 4f9a8b7c6d5e"`,
		`tools call echo message='Basic dXNlcjpwYXNz'`,
		`tools call echo message="basic YWxhZGRpbjpvcGVuc2VzYW1l"`,
		`tools call echo message=sk-proj-4f9a8b7c6d5e4f3a2b1c`,
		`tools call echo message="my key is sk-ant-api03-AbCdEf123456"`,
		`tools call echo note=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8`,
		`tools call echo note=github_pat_11ABCDEFG0123456789_abcdefghijklmnop`,
		`tools call echo note=xoxb-1234567890-abcdefghij`,
		`tools call echo note=xoxp-1234567890-abcdefghij`,
		`tools call echo note=AKIAIOSFODNN7EXAMPLE`,
		`tools call echo note=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U`,
		`tools call echo --args '{"message": "Bearer 4f9a8b7c6d5e"}'`,
		`call tools/call {"name": "echo", "arguments": {"message": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}}`,
	} {
		if !givesCredential(line) {
			t.Errorf("%s: kept in the history", line)
		}
	}
	for _, line := range []string{
		`tools call echo message="the token expired"`,
		`tools call echo message="a token"`,
		`tools call echo message="a basic example of bearer authentication"`,
		`tools call echo message="Bearer tokens and Basic credentials"`,
		`tools call echo message="basic well-being"`,
		`tools call echo lib=sk-learn-is-a-library`,
		`tools call echo message=task-1234567890abcdef`,
		`tools call echo message="risk-assessment-2024-report-final"`,
		`tools call echo note="AKIA is how AWS keys begin"`,
		`tools call echo message=hello`,
	} {
		if givesCredential(line) {
			t.Errorf("%s: left out of the history, but it gives no credential", line)
		}
	}
}

// TestErrorLineWrapsOnATerminal: the error line is wrapped at words to
// the terminal's width, its continuation indented, as the console's lines
// are; off a terminal it is one line.
func TestErrorLineWrapsOnATerminal(t *testing.T) {
	t.Parallel()
	rpcErr := &jsonrpc.Error{Code: -32000, Message: "the tool could not reach its database because the connection pool is exhausted"}
	ios, _, errOut := NewTestIOStreams(nil)
	ios.ErrTTY, ios.ErrWidth = true, func() int { return 40 }
	(reporter{ios: ios}).report(rpcErr)
	want := "mcpx: server error -32000: the tool\n  could not reach its database because\n  the connection pool is exhausted\n"
	if errOut.String() != want {
		t.Errorf("on a terminal:\n%q\nwant\n%q", errOut.String(), want)
	}
	ios, _, errOut = NewTestIOStreams(nil)
	(reporter{ios: ios}).report(rpcErr)
	if strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("off a terminal: %q", errOut.String())
	}
}
