package featuretest

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cmd"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

// The REPL (mcpx repl, or mcpx with no command): scripted sessions read
// from a pipe, and interactive ones on a fake terminal, through cmd.Run.

// runScript runs mcpx with script as its (non-terminal) stdin.
func runScript(t *testing.T, script string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut syncBuffer
	home := t.TempDir() // no configuration files: named servers are not found
	ios := &cmd.IOStreams{
		In: strings.NewReader(script), Out: &out, ErrOut: &errOut,
		Getenv: func(k string) string {
			switch k {
			case "NO_COLOR":
				return "1"
			case "HOME", "XDG_CONFIG_HOME":
				return home
			}
			return ""
		},
	}
	code := cmd.Run(ctx, args, ios)
	r := result{code: code, stdout: out.String(), stderr: errOut.String()}
	t.Logf("mcpx %s <<EOF\n%sEOF\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), script, r.code, r.stdout, r.stderr)
	return r
}

func TestReplScriptEveryCommand(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "my root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	rootURI := "file://" + strings.ReplaceAll(root, " ", "%20")
	script := strings.Join([]string{
		"ping",
		"tools list",
		"# a comment, and an empty line",
		"",
		"tools call roots",
		":roots add '" + root + "'",
		":roots",
		"tools call roots",
		":roots remove '" + root + "'",
		"tools call roots",
		":json on",
		"ping",
		":json off",
		":wire on",
		"ping",
		":wire off",
		":log debug",
		"tools call log",
		":wait notifications/message 10s",
		"resources subscribe test://counter",
		":wait notifications/resources/updated 10s",
		"resources unsubscribe test://counter",
		":sleep 10ms",
		"call tools/call {",
		`  "name": "roots"`,
		"}",
		"notify notifications/roots/list_changed",
		"help",
		"help ping",
		"tools call log --help",
		":reconnect",
		"info",
		"exit 0",
		"ping",
	}, "\n") + "\n"
	r := runScript(t, script, args("repl", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	// Each command is echoed before its output.
	wantContains(t, "stdout", r.stdout,
		"mcpx> ping\npong (",
		"mcpx> tools list\n",
		"mcpx> tools call roots\nroots: \n",
		"mcpx> :roots\n"+rootURI+"\n",
		"roots: "+rootURI+" (my root)",
		"mcpx> :roots remove '"+root+"'\n(no roots)\nmcpx> tools call roots\nroots: \n",
		"mcpx> :json on\n",
		"mcpx> :wait notifications/message 10s\n[debug] sdk: a debug line\n",
		"mcpx> :wait notifications/resources/updated 10s\nnotification resource updated: test://counter\n",
		"mcpx> call tools/call {\n...>   \"name\": \"roots\"\n...> }\n{",
		"Protocol commands", "REPL commands:", ":wait METHOD [TIMEOUT]",
		"Check that the server answers (ping)",
		"log\n\nThis tool takes no arguments.",
		"mcpx> info\nServer:     sdk-features 1.0.0",
		"mcpx> exit 0\n",
	)
	if strings.Contains(r.stdout, "mcpx> exit 0\nmcpx> ping") {
		t.Error("a command after exit ran")
	}
	// :json on: JSON results, and the echo moves to stderr.
	wantContains(t, "stderr", r.stderr, "JSON output is on", "mcpx> ping\n", "JSON output is off",
		"wire output is on", `→ send {"jsonrpc":"2.0","id":`, `"method":"ping"`, "wire output is off",
		"roots changed; sent notifications/roots/list_changed",
		"log level set to debug", "[debug] sdk: a debug line",
		"subscribed to test://counter", "unsubscribed from test://counter", "server| unsubscribed test://counter",
		"connected to sdk-features 1.0.0")
	if n := strings.Count(r.stderr, `"method":"ping"`); n != 1 {
		t.Errorf("%d pings on the wire, want the one sent under :wire on", n)
	}
	if !regexp.MustCompile(`(?m)^\{\}$`).MatchString(r.stdout) {
		t.Error("ping under :json on did not print {}")
	}
}

// :record FILE traces the live session from then on, :record off ends the
// trace; the file is an ordinary trace, which begins with the session's
// handshake, written from memory and marked as such, so that it replays
// and verifies.
func TestReplRecord(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	r := runScript(t, "ping\n:record "+trace+"\ntools list\n:record off\nping\n", args("repl", sdkServer())...)
	r.wantCode(t, 0)
	wantContains(t, "stderr", r.stderr, "recording to "+trace, "recording stopped")
	tr, err := record.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var methods, prelude []string
	for _, e := range tr.Events {
		var m struct {
			Method string `json:"method"`
		}
		if e.Kind == record.KindFrame && e.Dir == record.ClientToServer && json.Unmarshal(e.Data, &m) == nil {
			if e.Prelude {
				prelude = append(prelude, m.Method)
			} else {
				methods = append(methods, m.Method)
			}
		}
	}
	if strings.Join(methods, ",") != "tools/list" || strings.Join(prelude, ",") != "initialize,notifications/initialized" {
		t.Errorf("the trace holds requests %q after the prelude %q, want exactly tools/list after the handshake", methods, prelude)
	}
	if s := tr.Sessions(); len(s) != 1 || !s[0].Info.Prelude {
		t.Errorf("sessions %+v", s)
	}
	// It replays: another client's handshake and tools/list are answered.
	rp, err := record.NewReplayer(tr, record.ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, done := rp.ServePipe(ctx)
	for _, x := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other","version":"1"}}}`, `"id":"a","result":{"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{}}`, `"id":"b","result":{`},
	} {
		if err := conn.Write(ctx, transport.Frame{Data: []byte(x.send)}); err != nil {
			t.Fatal(err)
		}
		if x.want == "" {
			continue
		}
		f, err := conn.Read(ctx)
		if err != nil || !strings.Contains(string(f.Data), x.want) {
			t.Fatalf("replay answered %s (%v), want %s", f.Data, err, x.want)
		}
	}
	conn.Close()
	if err := <-done; err != nil {
		t.Errorf("strict replay of the :record trace: %v", err)
	}
	// And it verifies: the handshake from memory goes first.
	v := run(t, "", args("verify", trace, sdkServer())...)
	v.wantCode(t, 0)
	wantContains(t, "stdout", v.stdout, "2 exchange(s) verified, 0 mismatch(es)")
}

func TestReplScriptFailures(t *testing.T) {
	t.Parallel()
	// The first failure ends the script with its status.
	r := runScript(t, "ping\ntools call nosuch\nping\n", args("repl", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
	if n := strings.Count(r.stdout, "mcpx> ping"); n != 1 {
		t.Errorf("%d pings ran, want 1", n)
	}
	wantContains(t, "stderr", r.stderr, `mcpx: line 2: tools/call "nosuch"`)

	// --keep-going: to the end, with the first failure's status.
	r = runScript(t, "tools call nosuch\n:bogus\nping\n", args("repl", "--keep-going", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stdout", r.stdout, "mcpx> ping\npong")
	wantContains(t, "stderr", r.stderr, `unknown REPL command ":bogus" (choose one of: :wire,`, "(see help)")

	// What a REPL command cannot change is refused, clearly.
	for _, tc := range []struct{ line, want string }{
		{"tools list -- node server.js", "the REPL is connected to its server already: leave out -- and the server command"},
		{"tools list --url http://127.0.0.1:1/mcp", "--url chooses or shapes the session, which is open already"},
		{"ping --timeout 5s", "--timeout chooses or shapes the session"},
		{"tools call", "wrong number of arguments"},
		{"frobnicate", `unknown command "frobnicate"`},
		{"tools call echo 'message=open", "line 1: the script ends inside the command that starts there (an unterminated single quote)"},
		{"repl", "this is the REPL already"},
		{"auth status", `run mcpx auth from a shell`},
		{"--json", "no command given; type help"},
		{":wait", "usage: :wait METHOD [TIMEOUT]"},
		{":sleep forever", "not a duration"},
		{":log loud", "usage: :log LEVEL"},
		{":roots add /no/such/dir", "/no/such/dir"},
		{":record " + filepath.Join(t.TempDir(), "no", "such", "dir", "t.jsonl"), ":record: "},
		{"exit 300", "the status must be a number from 0 to 255"},
	} {
		r := runScript(t, tc.line+"\n", args("repl", sdkServer())...)
		r.wantCode(t, cmd.ExitUsage)
		wantContains(t, "stderr", r.stderr, tc.want)
	}

	// exit N ends with N.
	r = runScript(t, "exit 7\n", args("repl", sdkServer())...)
	r.wantCode(t, 7)

	// A :wait that times out is a timeout (6).
	r = runScript(t, ":wait notifications/never 200ms\n", args("repl", sdkServer())...)
	r.wantCode(t, cmd.ExitTimeout)
	wantContains(t, "stderr", r.stderr, ":wait notifications/never: no response after 200ms")

	// With --json the echo is on stderr and a failure is one JSON line.
	r = runScript(t, "ping\ntools call nosuch\n", args("repl", "--json", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
	if strings.TrimSpace(r.stdout) != "{}" {
		t.Errorf("stdout = %q, want only the ping result", r.stdout)
	}
	wantContains(t, "stderr", r.stderr, "mcpx> ping\n", `{"error":{"code":"server_error"`)
}

func TestReplUsage(t *testing.T) {
	t.Parallel()
	r := runScript(t, "ping\n", "repl", "myserver")
	r.wantCode(t, cmd.ExitUsage)
	wantContains(t, "stderr", r.stderr, `no server named "myserver" in any configuration file; `+"`mcpx servers`"+` lists the servers found`)

	r = runScript(t, "ping\n", "repl")
	r.wantCode(t, cmd.ExitUsage)
	wantContains(t, "stderr", r.stderr, "no server given")

	r = runScript(t, "ping\n", "repl", "-f", "/no/such/script")
	r.wantCode(t, cmd.ExitUsage)

	// mcpx alone prints its help; an unknown command is still one.
	r = runScript(t, "")
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "Usage:", "repl")
	r = runScript(t, "", "frobnicate")
	r.wantCode(t, cmd.ExitUsage)
	wantContains(t, "stderr", r.stderr, `unknown command "frobnicate" for "mcpx"`)
}

// mcpx with no command and a server is the REPL; -f runs a script file.
func TestReplNoCommandAndScriptFile(t *testing.T) {
	t.Parallel()
	r := runScript(t, "tools call log\n", sdkServer()...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "mcpx> tools call log\nlogged\n")

	file := filepath.Join(t.TempDir(), "session.mcpx")
	if err := os.WriteFile(file, []byte("ping\ntools call roots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runScript(t, "this stdin is not read\n", args("-f", file, sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "mcpx> ping\npong", "mcpx> tools call roots\nroots: \n")
}

// A server that dies is reported with its exit status and last stderr
// lines; :reconnect starts a new one.
func TestReplServerDies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flag := filepath.Join(dir, "started-once")
	// The first start exits after initialize (a moment later, so that the
	// :wait below has usually begun; the test accepts either order); the
	// second stays.
	server := filepath.Join(dir, "server.sh")
	body := "#!/bin/sh\nif [ -e " + flag + " ]; then exec " + os.Args[0] + "; fi\ntouch " + flag + "\n" +
		"read line\necho '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"fragile\",\"version\":\"0\"}}}'\n" +
		"read line\nsleep 0.3\necho 'fragile: giving up now' >&2\nexit 3\n"
	if err := os.WriteFile(server, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	// :wait ends when the session does -- or, when the server is gone
	// before :wait starts, says so at once; the ping after it is refused.
	r := runScript(t, ":wait notifications/never 30s\nping\n", "repl", "--keep-going", "--", server)
	r.wantCode(t, cmd.ExitConnect)
	wantContains(t, "stderr", r.stderr, "the session ended: server exited (exit status 3); its last stderr lines: fragile: giving up now (:reconnect starts a new session)",
		"the session has ended (:reconnect starts a new one): server exited (exit status 3)")
	if !strings.Contains(r.stderr, ":wait notifications/never: the connection ended: server exited (exit status 3)") &&
		strings.Count(r.stderr, "the session has ended (:reconnect starts a new one)") < 2 {
		t.Errorf(":wait did not report the end of the session:\n%s", r.stderr)
	}
	if n := strings.Count(r.stderr, "the session ended:"); n != 1 {
		t.Errorf("the end was reported %d times", n)
	}

	os.Remove(flag)
	r = runScript(t, ":wait notifications/never 30s\n:reconnect\nping\n", "repl", "--keep-going", "--env", serverEnv+"=sdk", "--", server)
	r.wantCode(t, cmd.ExitConnect) // the :wait
	wantContains(t, "stdout", r.stdout, "mcpx> ping\npong")
	wantContains(t, "stderr", r.stderr, "server exited (exit status 3)", "connected to sdk-features 1.0.0")
}

// A script is stopped by an interrupt: the command in flight is cancelled
// (the server is told) and mcpx exits 130.
func TestReplScriptInterrupted(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal, 1)
	var out, errOut syncBuffer
	ios := &cmd.IOStreams{In: strings.NewReader("tools call slow\nping\n"), Out: &out, ErrOut: &errOut, Signals: sigs,
		Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- cmd.Run(context.Background(), args("repl", sdkServer()), ios) }()
	testwait.For(t, "the tool started", func() bool { return strings.Contains(errOut.String(), "slow: started") })
	sigs <- os.Interrupt
	select {
	case code := <-done:
		if code != cmd.ExitInterrupted {
			t.Errorf("exit %d, want 130", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mcpx did not end after the interrupt")
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	wantContains(t, "stderr", errOut.String(), "mcpx: interrupted")
	if strings.Contains(out.String(), "mcpx> ping") {
		t.Error("the script went on after the interrupt")
	}
}

// terminal is a fake terminal running mcpx: keys typed into it, one
// screen for stdout and stderr, and a Ctrl-C key that sends SIGINT (as a
// terminal does while no line is edited).
type terminal struct {
	t      *testing.T
	keys   *io.PipeWriter
	screen *syncBuffer
	sigs   chan os.Signal
	done   chan int
}

func startTerminal(t *testing.T, env map[string]string, args ...string) *terminal {
	t.Helper()
	r, w := io.Pipe()
	term := &terminal{t: t, keys: w, screen: &syncBuffer{}, sigs: make(chan os.Signal, 1), done: make(chan int, 1)}
	ios := &cmd.IOStreams{In: r, Out: term.screen, ErrOut: term.screen, InTTY: true, OutTTY: true, ErrTTY: true, Signals: term.sigs,
		Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return "1"
			}
			return env[k]
		}}
	go func() { term.done <- cmd.Run(context.Background(), args, ios) }()
	t.Cleanup(func() {
		w.Close()
		select {
		case <-term.done:
		case <-time.After(30 * time.Second):
			t.Error("mcpx did not end")
		}
		t.Logf("screen:\n%s", term.screen.String())
	})
	return term
}

func (term *terminal) typeKeys(s string) {
	term.t.Helper()
	if _, err := term.keys.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// waitScreen waits until the screen, after offset from, contains s, and
// returns the offset after it.
func (term *terminal) waitScreen(from int, s string) int {
	term.t.Helper()
	var i int
	testwait.For(term.t, "the screen to show "+s, func() bool {
		scr := term.screen.String()
		if from > len(scr) {
			return false
		}
		i = strings.Index(scr[from:], s)
		return i >= 0
	})
	return from + i + len(s)
}

func (term *terminal) exit() int {
	term.t.Helper()
	select {
	case code := <-term.done:
		term.done <- code
		return code
	case <-time.After(30 * time.Second):
		term.t.Fatal("mcpx did not end")
	}
	return -1
}

func TestReplTerminal(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(t.TempDir(), "history")
	term := startTerminal(t, map[string]string{"MCPX_HISTORY_FILE": hist}, args("repl", sdkServer())...)
	at := term.waitScreen(0, "mcpx> ")

	// Tab completes the tool name from the live server.
	term.typeKeys("tools call lo\t")
	at = term.waitScreen(at, "tools call log ")
	term.typeKeys("\r")
	at = term.waitScreen(at, "logged")

	// Ctrl-C while a command runs cancels it (the server is told) and the
	// prompt comes back.
	term.typeKeys("tools call slow\r")
	at = term.waitScreen(at, "slow: started")
	term.sigs <- os.Interrupt
	term.waitScreen(at, "slow: cancelled by the client")
	// The server still answers the call it was told to cancel, and mcpx
	// says so: before or after it says the command was interrupted (and
	// then above the prompt), as the answer comes.
	late := term.waitScreen(at, "late response to tools/call request")
	at = max(late, term.waitScreen(at, "mcpx: interrupted"))
	at = term.waitScreen(at, "mcpx> ")
	term.typeKeys("ping\r")
	at = term.waitScreen(at, "pong")

	// Ctrl-C at the prompt says how to leave.
	term.typeKeys("\x03")
	at = term.waitScreen(at, "(to leave, type exit or press Ctrl-D)")

	// A server request is asked on the terminal, through the editor.
	term.typeKeys("tools call elicit\r")
	at = term.waitScreen(at, "[a]nswer, [d]ecline or [c]ancel? [a] ")
	term.typeKeys("\r")
	at = term.waitScreen(at, "name")
	term.typeKeys("Ada\r\r\r\r")
	at = term.waitScreen(at, "Send it?")
	term.typeKeys("\r")
	at = term.waitScreen(at, `action accept content {"age":30,"color":"g","name":"Ada","ok":true}`)
	term.waitScreen(at, "mcpx> ")

	// Ctrl-D leaves cleanly.
	term.typeKeys("\x04")
	if code := term.exit(); code != cmd.ExitOK {
		t.Errorf("exit %d after Ctrl-D", code)
	}
	b, err := os.ReadFile(hist)
	if err != nil || !strings.Contains(string(b), "tools call log\ntools call slow\nping\ntools call elicit\n") {
		t.Errorf("history %q, %v", b, err)
	}
}

// A command that gives a credential is not kept in the history file:
// --bearer, --client-secret and -H with a credential header are refused
// in the REPL (they choose the session), and the file would otherwise
// keep the token for good; a secret-looking option or tool argument
// (--api-key, password=, Authorization=), member of a JSON argument
// ({"password": …}), or value (message="Bearer sk-…") is a credential too.
func TestReplHistoryKeepsNoCredentials(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(t.TempDir(), "history")
	term := startTerminal(t, map[string]string{"MCPX_HISTORY_FILE": hist}, args("repl", sdkServer())...)
	at := term.waitScreen(0, "mcpx> ")
	for _, l := range []string{
		"ping --bearer s3cret-1",
		"ping --bearer=s3cret-2",
		"ping -H 'Authorization: Bearer s3cret-3'",
		"ping --header='X-Api-Key: s3cret-4'",
		"ping -H'Cookie: s=s3cret-5'",
		"ping --client-secret s3cret-6",
		"ping --idp-client-secret=s3cret-7",
		"tools call log password=s3cret-8",
		"tools call log --api-key s3cret-9",
		`tools call log --args '{"password": "s3cret-10"}'`,
		`call tools/call {"name": "log", "arguments": {"auth": {"token": "s3cret-11"}}}`,
		"tools call log Authorization='Bearer s3cret-12'",
		"tools call log message='Bearer sk-live-s3cret-13'",
	} {
		term.typeKeys(l + "\r")
	}
	term.typeKeys("ping -H 'Accept-Language: fr'\rtools call log --args '{\"note\": \"a token\"}'\rping\r")
	at = term.waitScreen(at, "pong")
	term.waitScreen(at, "mcpx> ")
	term.typeKeys("\x04")
	if code := term.exit(); code != cmd.ExitOK {
		t.Errorf("exit %d after Ctrl-D", code)
	}
	b, err := os.ReadFile(hist)
	if err != nil || string(b) != "ping -H 'Accept-Language: fr'\ntools call log --args '{\"note\": \"a token\"}'\nping\n" {
		t.Errorf("history %q, %v; want only the commands without a credential", b, err)
	}
}

// Ctrl-C while a question is asked dismisses it (an elicitation is
// cancelled) and then cancels the command: the person always sees the
// question answered, then the interruption -- never the call's result
// (the server answering the cancelled elicitation at once), and never a
// question the server withdrew before it was answered.
func TestReplTerminalDismissQuestion(t *testing.T) {
	t.Parallel()
	term := startTerminal(t, nil, args("repl", "--no-history", sdkServer())...)
	at := term.waitScreen(0, "mcpx> ")
	term.typeKeys("tools call elicit\r")
	at = term.waitScreen(at, "[a]nswer, [d]ecline or [c]ancel? [a] ")
	from := at
	term.typeKeys("\x03")
	at = term.waitScreen(at, "→ answered: cancel")
	at = term.waitScreen(at, "mcpx: interrupted")
	term.waitScreen(at, "mcpx> ")
	if scr := term.screen.String()[from:]; strings.Contains(scr, "action cancel") || strings.Contains(scr, "end of input") {
		t.Errorf("after Ctrl-C the screen shows more than the answer and the interruption:\n%s", scr)
	}
	term.typeKeys("exit\r")
	if code := term.exit(); code != cmd.ExitOK {
		t.Errorf("exit %d", code)
	}
}

// In the modern era the REPL listens (subscriptions/listen) for what it
// needs: list changes, and the resources subscribed to; :log sets the
// level every request carries.
func TestReplModern(t *testing.T) {
	t.Parallel()
	script := strings.Join([]string{
		"resources subscribe test://doc",
		":wait notifications/resources/updated 10s",
		"resources unsubscribe test://doc",
		"resources unsubscribe test://doc",
		":log debug",
		":wire on",
		"ping",
		":wire off",
		":wait notifications/tools/list_changed 10s",
	}, "\n") + "\n"
	r := runScript(t, script, args("repl", "--keep-going", "--protocol-era", "modern", rawModern(""))...)
	r.wantCode(t, cmd.ExitUsage) // the second unsubscribe
	wantContains(t, "stdout", r.stdout,
		"mcpx> :wait notifications/resources/updated 10s\nnotification resource updated: test://doc\n",
		"mcpx> :wait notifications/tools/list_changed 10s\nnotification notifications/tools/list_changed")
	wantContains(t, "stderr", r.stderr,
		"subscription acknowledged: tools list changes, updates of test://doc",
		"unsubscribed from test://doc", "not subscribed to test://doc",
		"log level debug: sent with every request from now on (the modern era has no logging/setLevel)",
		`"method":"server/discover"`, `"io.modelcontextprotocol/logLevel":"debug"`)
}
