package cmd

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/transport"
)

// usageCase is a command line that must be refused as a usage error
// (exit 2, one line on stderr, nothing on stdout) with stderr starting
// "mcpx: " + want. None of them gets as far as starting a server: the
// server command, where there is one, does not exist.
type usageCase struct {
	args []string
	want string
}

func checkUsageCases(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, tc := range cases {
		r := runMcpx(t, nil, tc.args...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != ExitUsage || r.stdout != "" || strings.Contains(line, "\n") || !strings.HasPrefix(line, "mcpx: "+tc.want) {
			t.Errorf("mcpx %s: exit %d, stdout %q, stderr %q;\nwant exit 2 and one line starting %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, "mcpx: "+tc.want)
		}
	}
}

// noServer is a server command that cannot start: a command line that
// got as far as starting it would fail with exit 4, not 2.
var noServer = []string{"--", "/nonexistent/mcpx-test-server"}

func withServer(args ...string) []string { return append(args, noServer...) }

// A global flag that a command would ignore is refused, naming the flag,
// the command and what the command does instead of connecting; and so
// are the recording flags without --record.
func TestGlobalFlagsThatDoNotApply(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(trace, []byte(`{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","redacted":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkUsageCases(t, []usageCase{
		{[]string{"servers", "list", "--wire"}, "--wire does not apply to mcpx servers list, which reads configuration files only (it takes --json, -v)"},
		{[]string{"servers", "--record", "r.jsonl"}, "--record does not apply to mcpx servers, which reads configuration files only"},
		{[]string{"servers", "show", "x", "--timeout", "5s"}, "--timeout does not apply to mcpx servers show"},
		{[]string{"servers", "remove", "x", "--url", "http://127.0.0.1:1/"}, "--url does not apply to mcpx servers remove"},
		{[]string{"servers", "add", "x", "--insecure", "--url", "http://127.0.0.1:1/"}, "--insecure does not apply to mcpx servers add"},
		{[]string{"sessions", "-v", "--ui"}, "--ui, -v do not apply to mcpx sessions, which lists the open sessions and connects to no server"},
		{[]string{"disconnect", "x", "--env", "A=b"}, "--env does not apply to mcpx disconnect"},
		{[]string{"auth", "status", "--timeout", "5s"}, "--timeout does not apply to mcpx auth status, which reads the token store only"},
		{[]string{"auth", "logout", "--all", "--wire"}, "--wire does not apply to mcpx auth logout"},
		{[]string{"auth", "token", "--url", "http://127.0.0.1:1/", "--record", "r.jsonl"}, "--record does not apply to mcpx auth token"},
		{[]string{"trace", "show", trace, "--timeout", "5s"}, "--timeout does not apply to mcpx trace show, which reads a trace file (it takes --json, --max-message-size)"},
		{[]string{"trace", "show", trace, "-s", "web"}, "-s does not apply to mcpx trace show"},
		{[]string{"trace", "diff", trace, trace, "--wire"}, "--wire does not apply to mcpx trace diff, which reads two trace files"},
		{[]string{"trace", "export", trace, "--html", "-", "-v"}, "-v does not apply to mcpx trace export"},
		{[]string{"replay", trace, "--url", "http://127.0.0.1:1/"}, "--url does not apply to mcpx replay, which serves the server recorded in a trace"},
		{[]string{"replay", trace, "--timeout", "1s"}, "--timeout does not apply to mcpx replay"},
		{withServer("proxy", "--timeout", "1s"), "--timeout does not apply to mcpx proxy, which forwards frames"},
		{[]string{"proxy", "--listen", "127.0.0.1:0", "--url", "https://127.0.0.1:1/", "--insecure"}, "--insecure does not apply to mcpx proxy"},
		{withServer("proxy", "--record", "r.jsonl", "--record-mode", "once"), "--record-mode does not apply to mcpx proxy"},
		{withServer("verify", trace, "--root", "/tmp"), "--root does not apply to mcpx verify, which answers the server's requests from the trace"},
		{[]string{"completion", "bash", "--url", "http://127.0.0.1:1/"}, "--url does not apply to mcpx completion bash, which writes a shell's completion script"},
		{[]string{"completion", "--wire"}, "--wire does not apply to mcpx completion"},
		{[]string{"help", "--timeout", "1s"}, "--timeout does not apply to mcpx help, which prints help"},
		// The recording flags need a recording.
		{withServer("ping", "--ignore", "$.x"), "--ignore applies to a recording: give --record FILE, or leave it out"},
		{withServer("tools", "list", "--force", "--stable"), "--force, --stable apply to a recording: give --record FILE, or leave them out"},
		{withServer("info", "--no-redact"), "--no-redact applies to a recording"},
		{withServer("proxy", "--redact", "$.x"), "--redact applies to a recording"},
		// What the server command or URL leaves without effect.
		{withServer("ping", "--trust"), "--trust and --input apply to a configured server (-s NAME)"},
		{withServer("ping", "--input", "a=b"), "--trust and --input apply to a configured server"},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--server-stderr", "hide"}, "--server-stderr applies to a server command after --"},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--shutdown-grace", "2s"}, "--shutdown-grace applies to a server command after --; a server at --url is not mcpx's to shut down"},
		// Given at their defaults, they are as much without effect.
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--server-stderr", "show"}, "--server-stderr applies to a server command after --"},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--shutdown-grace", transport.DefaultCloseGrace.String()}, "--shutdown-grace applies to a server command after --"},
		{withServer("ping", "--shutdown-grace", "-5ms"), "--shutdown-grace -5ms: give a positive duration"},
		// Credentials given twice, TLS flags that contradict; fixed
		// credentials where OAuth is the point.
		{[]string{"auth", "login", "--url", "http://127.0.0.1:1/", "--bearer", "x"}, "auth login runs OAuth, and --bearer sends a fixed token instead: leave --bearer out"},
		{[]string{"auth", "login", "--url", "http://127.0.0.1:1/", "-H", "Authorization: x"}, "auth login runs OAuth, which is off for this server: -H gives an Authorization header"},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--bearer", "x", "-H", "Authorization: Bearer y"}, "--bearer and -H 'Authorization: …' both give the Authorization header; give one"},
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "-H", "authorization: Bearer y", "--client-id", "c"}, "-H gives the Authorization header, so OAuth flags such as --client-id do not apply"},
		{[]string{"ping", "--url", "https://127.0.0.1:1/", "--insecure", "--ca-cert", "/dev/null"}, "--insecure verifies no certificate, so --ca-cert would not be used; give one"},
		// The views' flags without views, --no-browser without a browser.
		{[]string{"ping", "--url", "http://127.0.0.1:1/", "--bearer", "x", "--no-browser"}, "--no-browser applies to OAuth's authorization and to --ui's views; neither is here (the credentials are given"},
		{withServer("tools", "call", "x", "--ui-theme", "dark"), "--ui-theme applies to MCP Apps' views: give --ui, or leave it out"},
		{withServer("ping", "--ui-timeout", "5s", "--ui-theme", "light"), "--ui-theme, --ui-timeout apply to MCP Apps' views"},
		{withServer("tools", "call", "x", "--ui-downloads", "."), "--ui-downloads applies to MCP Apps' views: give --ui, or leave it out"},
		{withServer("tools", "call", "x", "--on-ui-download", "accept"), "--on-ui-download applies to MCP Apps' views: give --ui, or leave it out"},
		{withServer("ping", "--no-browser"), "--no-browser applies to OAuth's authorization (a server at --url) and to --ui's views; neither is here"},
	})
}

// The environment's default token does not keep mcpx auth login from
// running OAuth (it is not sent there): the login gets as far as the
// server, which is not listening.
func TestAuthLoginIgnoresBearerFromEnv(t *testing.T) {
	t.Parallel()
	r := runMcpx(t, map[string]string{"MCPX_BEARER_TOKEN": "from-env"}, "auth", "login", "--url", "http://127.0.0.1:1/mcp", "--timeout", "5s")
	if r.code != ExitConnect {
		t.Errorf("exit %d, want %d; stderr %q", r.code, ExitConnect, r.stderr)
	}
}

// --wide shapes a table that --json does not print: both is a mistake
// (the error, with --json, is one JSON line).
func TestWideWithJSON(t *testing.T) {
	t.Parallel()
	r := runMcpx(t, nil, withServer("tools", "list", "--wide", "--json")...)
	if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, `"message":"--wide shapes the table, which --json replaces; give one of them"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// What a command takes works: the global flags it says it reads, and
// --json and --color everywhere.
func TestGlobalFlagsThatApply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(trace, []byte(`{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","redacted":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MCPX_CONFIG_DIR": dir, "HOME": dir, "XDG_RUNTIME_DIR": dir}
	for _, args := range [][]string{
		{"servers", "list", "--json", "-v", "--color", "never"},
		{"sessions", "--json"},
		{"trace", "show", trace, "--json", "--max-message-size", "1MiB"},
		{"trace", "diff", trace, trace, "--ignore", "$.x", "--normalize", "uuid"},
		{"auth", "status", "--json", "--url", "http://127.0.0.1:1/"},
		{"completion", "bash", "--color", "never", "--json"},
		{"help", "tools", "--color", "always"},
	} {
		if r := runMcpx(t, env, args...); r.code != 0 {
			t.Errorf("mcpx %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// A flag given an empty value ("$URL" unset) is refused (each would take
// it as not given, silently), except --cursor "", the first page; and so
// is an empty argument, except where it goes to the server as given.
func TestEmptyValues(t *testing.T) {
	t.Parallel()
	const empty = "is empty: give a value, or leave the flag out (is a variable unset?)"
	checkUsageCases(t, []usageCase{
		{withServer("ping", "--url", ""), "--url " + empty},
		{[]string{"ping", "--url="}, "--url " + empty},
		{withServer("ping", "--record", ""), "--record " + empty},
		{withServer("ping", "--cwd", ""), "--cwd " + empty},
		{withServer("ping", "--cwd", "", "--record", ""), "--cwd, --record are empty: give values, or leave the flags out"},
		{withServer("ping", "--server-stderr", ""), "--server-stderr " + empty},
		{withServer("ping", "--bearer", ""), "--bearer " + empty},
		{withServer("ping", "--protocol-era", ""), "--protocol-era " + empty},
		{withServer("ping", "--root", "/tmp", "--root", ""), "--root " + empty},
		{withServer("ping", "-H", ""), "-H " + empty},
		{[]string{"ping", "-s", ""}, "-s " + empty},
		{withServer("tools", "call", "x", "-o", ""), "-o " + empty},
		{withServer("tools", "call", "x", "--args", ""), "--args " + empty},
		{withServer("-f", ""), "-f " + empty},
		{[]string{"replay", "t.jsonl", "--listen", ""}, "--listen " + empty},
		{[]string{"trace", "show", ""}, "mcpx trace show: argument 1 is empty"},
		{[]string{"trace", "diff", "a.jsonl", " "}, "mcpx trace diff: argument 2 is empty"},
		{withServer("connect", ""), "mcpx connect: argument 1 is empty"},
		{[]string{"servers", "show", ""}, "mcpx servers show: argument 1 is empty"},
	})
	// Sent as given: the server's answer to an empty name is for the user
	// to see; --cursor "" asks for the first page.
	for _, args := range [][]string{withServer("call", ""), withServer("tools", "call", ""), withServer("tools", "list", "--cursor", "")} {
		if r := runMcpx(t, nil, args...); r.code != ExitConnect {
			t.Errorf("mcpx %s: exit %d, want %d (it tried the server); stderr %q", strings.Join(args, " "), r.code, ExitConnect, r.stderr)
		}
	}
}

// A flag's value left out, so that the next flag was taken for it, is
// refused; so is a long flag typed with one dash that pflag read as a
// shorthand with its value attached.
func TestFlagLikeValues(t *testing.T) {
	t.Parallel()
	checkUsageCases(t, []usageCase{
		{withServer("ping", "--record", "--json"), `--record "--json": that is a flag, not the FILE --record takes (was the value left out?)`},
		{withServer("--cwd", "-v", "ping"), `--cwd "-v": that is a flag, not the DIR --cwd takes`},
		{withServer("tools", "call", "echo", "-o", "--json"), `-o "--json": that is a flag, not the FILE -o takes`},
		{withServer("ping", "--root", "/tmp", "--root", "--wire"), `--root "--wire": that is a flag`},
		{[]string{"ping", "-s", "--url=http://x/"}, `-s "--url=http://x/": that is a flag`},
		// The value left out right before the server command's --: the --
		// was taken for it, and the server command became mcpx's words.
		{withServer("tools", "list", "--record"), `--record needs a value before --: --record FILE (the -- was taken for its value) (see mcpx tools list --help)`},
		{withServer("tools", "call", "echo", "message=hi", "-o"), `-o needs a value before --: -o FILE (the -- was taken for its value)`},
		{withServer("ping", "-s"), `-s needs a value before --: -s NAME`},
		{withServer("ping", "--timeout"), `--timeout needs a value before --: --timeout DURATION`},
		{withServer("tools", "call", "echo", "-output", "f.png"), `-output: a long flag takes two dashes: --output (one dash made it -o with the value "utput")`},
		{[]string{"-server", "web", "ping"}, `-server: a long flag takes two dashes: --server`},
		{withServer("ping", "--wire", "false"), `--wire false: --wire is a switch and takes no separate value; give --wire alone (or --wire=false)`},
		{withServer("tools", "list", "-v", "true"), `-v true: -v is a switch and takes no separate value; give -v alone (or -v=true)`},
	})
	// A value that only starts with a dash is a value.
	if r := runMcpx(t, nil, withServer("ping", "--env", "-notaflag=1")...); r.code != ExitConnect {
		t.Errorf("--env -notaflag=1: exit %d, stderr %q", r.code, r.stderr)
	}
}

// pflag's errors are said in mcpx's words: the flag, the value, what it
// takes; a mistyped flag gets the closest ones.
func TestFlagErrorWords(t *testing.T) {
	t.Parallel()
	checkUsageCases(t, []usageCase{
		{withServer("--timeout", "abc", "ping"), `--timeout "abc" is not a duration: give a number with a unit, e.g. 30s, 1m30s or 500ms (see mcpx ping --help)`},
		{withServer("--parallel", "x"), `--parallel "x" is not a whole number (see mcpx --help)`},
		{withServer("--parallel", "99999999999999999999"), `--parallel "99999999999999999999" is too large`},
		{withServer("replay", "t.jsonl", "--session", "two"), `--session "two" is not a whole number`},
		{withServer("ping", "--json=maybe"), `--json is a switch: give it without a value (or --json=false), not --json=maybe`},
		{withServer("ping", "--max-message-size", "lots"), `--max-message-size: "lots" is not a size: give bytes or a number with a unit`},
		{[]string{"ping", "--url"}, "--url needs a value: --url URL (see mcpx ping --help)"},
		{[]string{"tools", "call", "x", "-o"}, "-o needs a value: -o FILE"},
		{withServer("tools", "list", "--wdie"), "unknown flag: --wdie (did you mean --wide or --wire?) (see mcpx tools list --help)"},
		{withServer("ping", "-json"), "unknown flag: -json (flags with long names take two dashes: --json)"},
		{withServer("ping", "-x"), "unknown flag: -x (see mcpx ping --help)"},
		{withServer("ping", "--bogus"), "unknown flag: --bogus (see mcpx ping --help)"},
		{withServer("tools", "call", "echo", "--message", "hi"), "unknown flag: --message (did you mean --max-message-size or the argument message=VALUE?)"},
		{withServer("prompts", "get", "greet", "--name=Ada"), "unknown flag: --name (did you mean the argument name=VALUE?)"},
		{[]string{"tools", "list", "--version"}, "unknown flag: --version (the version is mcpx's own: mcpx --version)"},
		{[]string{"version"}, `unknown command "version" for "mcpx" (did you mean mcpx --version?)`},
		{[]string{"--wire"}, "no server given: put the server command after --, e.g. mcpx -- node server.js"},
	})
}

// Words a command does not take are said to be that (cobra.NoArgs called
// them unknown commands), and mcpx help refuses a topic that names no
// command instead of printing mcpx's help with exit 0.
func TestStrayWordsAndHelpTopics(t *testing.T) {
	t.Parallel()
	checkUsageCases(t, []usageCase{
		{[]string{"sessions", "x"}, `mcpx sessions takes no arguments, but was given "x"; usage: mcpx sessions [flags] (see mcpx sessions --help)`},
		{[]string{"auth", "status", "x"}, `mcpx auth status takes no arguments, but was given "x"`},
		{[]string{"completion", "bash", "x"}, `mcpx completion bash takes no arguments`},
		{[]string{"servers", "lst"}, `unknown command "lst" for "mcpx servers" (choose one of: add, list, remove, show)`},
		{[]string{"servers", "--", "x"}, `mcpx servers takes no server command`},
		{[]string{"help", "toolz"}, `unknown help topic "toolz" (did you mean mcpx tools?); mcpx help lists the commands`},
		{[]string{"help", "tools", "lst"}, `unknown help topic "tools lst" (did you mean mcpx tools list?)`},
		{[]string{"help", "a", "b"}, `unknown help topic "a b"`},
		// --help after a word that names no command: cobra showed the help
		// of the command before it, exit 0.
		{[]string{"toolz", "--help"}, `unknown command "toolz" for "mcpx" (did you mean tools?)`},
		{[]string{"tools", "bogus", "-h"}, `unknown command "bogus" for "mcpx tools" (choose one of: call, list, schema) (see mcpx tools --help)`},
	})
	for _, args := range [][]string{{"help"}, {"help", "tools", "call"}, {"help", "flags"}, {"help", "tools", "call", "echo"}} {
		if r := runMcpx(t, nil, args...); r.code != 0 || r.stdout == "" || r.stderr != "" {
			t.Errorf("mcpx %s: exit %d, stdout %d bytes, stderr %q", strings.Join(args, " "), r.code, len(r.stdout), r.stderr)
		}
	}
}

// Every name a command gives readsGlobals is a global flag (a misspelt
// one would refuse the flag it meant), every command that connects to no
// server says which it reads, and its usage lists them.
func TestReadsGlobalsNames(t *testing.T) {
	t.Parallel()
	ios, _, _ := NewTestIOStreams(nil)
	root, _ := newRootCmd(&env{ios: ios, run: &runState{}})
	globals := root.PersistentFlags()
	restricted := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) {
		reads, ok := c.Annotations[globalsAnnotation]
		if !ok {
			return
		}
		restricted[c.CommandPath()] = true
		for _, n := range strings.Fields(reads) {
			if globals.Lookup(n) == nil {
				t.Errorf("%s reads %q, which is no global flag", c.CommandPath(), n)
			}
		}
		if c.Annotations[globalsWhyAnnotation] == "" {
			t.Errorf("%s does not say what it does instead of connecting", c.CommandPath())
		}
		if u := c.UsageString(); !strings.Contains(u, "\nGlobal flags it takes: ") || !strings.Contains(u, " (see mcpx help flags)") {
			t.Errorf("%s: its usage does not list the global flags it takes:\n%s", c.CommandPath(), u)
		}
	})
	for _, p := range []string{"mcpx servers", "mcpx servers list", "mcpx servers show", "mcpx servers add", "mcpx servers remove",
		"mcpx sessions", "mcpx disconnect", "mcpx auth status", "mcpx auth logout", "mcpx auth token",
		"mcpx trace show", "mcpx trace diff", "mcpx trace export", "mcpx replay", "mcpx proxy", "mcpx verify",
		"mcpx help", "mcpx completion", "mcpx completion bash", "mcpx completion zsh", "mcpx completion fish", "mcpx completion powershell"} {
		if !restricted[p] {
			t.Errorf("%s does not say which global flags it reads", p)
		}
	}
}

// A usage line puts [flags] before the server command: flags after --
// are the server's.
func TestUsageLineFlagsBeforeServer(t *testing.T) {
	t.Parallel()
	ios, _, _ := NewTestIOStreams(nil)
	root, _ := newRootCmd(&env{ios: ios, run: &runState{}})
	n := 0
	walkCommands(root, func(c *cobra.Command) {
		u := c.UseLine()
		i := strings.Index(u, "-- <server command>")
		if i < 0 {
			return
		}
		n++
		if !strings.Contains(u[:i], "[flags]") {
			t.Errorf("%s: usage line %q has [flags] after the server command", c.CommandPath(), u)
		}
	})
	if n < 20 {
		t.Fatalf("only %d commands take a server command", n)
	}
}

func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, fn)
	}
}

// A REPL line gets the same checks: a global flag its command does not
// read, help for a word that is no command, a long flag with one dash.
func TestREPLLineFlagChecks(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(trace, []byte(`{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","redacted":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := []struct{ line, want string }{
		{"trace show " + trace + " --wire", "mcpx: --wire does not apply to mcpx trace show, which reads a trace file (it takes --json) (see help)"},
		{"help toolz", `mcpx: unknown command "toolz" for "mcpx" (did you mean tools?) (see help)`},
		{"tools bogus --help", `mcpx: unknown command "bogus" for "mcpx tools" (choose one of: call, list, schema) (see help)`},
		{"tools call echo -output f", `mcpx: -output: a long flag takes two dashes: --output (one dash made it -o with the value "utput") (see help)`},
		{"tools call echo --args ''", "mcpx: --args is empty"},
	}
	var script []string
	for _, l := range lines {
		script = append(script, l.line)
	}
	ios, out, errOut := NewTestIOStreams(nil)
	ios.In = strings.NewReader(strings.Join(script, "\n") + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code := Run(ctx, []string{"repl", "--keep-going", "--", os.Args[0], stdioServerArg}, ios); code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	var got []string
	lineNo := regexp.MustCompile(`^mcpx: line \d+: `) // (a script's errors say where)
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.HasPrefix(l, "mcpx: ") {
			got = append(got, lineNo.ReplaceAllString(l, "mcpx: "))
		}
	}
	if len(got) != len(lines) {
		t.Fatalf("%d errors, want %d:\n%s\n%s", len(got), len(lines), errOut, out)
	}
	for i, l := range lines {
		if !strings.HasPrefix(got[i], l.want) {
			t.Errorf("%q: %s\nwant %s", l.line, got[i], l.want)
		}
	}
}

// A server command after -- that is one of mcpx's flags, or a URL, is
// refused before anything starts, saying where each goes; a program
// found under such a name is started all the same.
func TestServerCommandThatIsNotOne(t *testing.T) {
	t.Parallel()
	checkUsageCases(t, []usageCase{
		{[]string{"tools", "list", "--", "--json", "node", "server.js"}, `the server command after -- starts with "--json", a flag: mcpx's flags go before the -- (everything after it is the server's command line, as you would run it yourself) (see mcpx tools list --help)`},
		{[]string{"ping", "--", "-v", "node"}, `the server command after -- starts with "-v", a flag: mcpx's flags go before the --`},
		{[]string{"ping", "--", "https://user:pw@example.com/mcp?token=abc"}, `the server command after -- is a URL, "https://user:redacted@example.com/mcp?token=[redacted]": a server at a URL is given with --url URL instead (see mcpx ping --help)`},
		{[]string{"proxy", "--", "--record", "t.jsonl", "node"}, `the server command after -- starts with "--record", a flag`},
		{[]string{"servers", "add", "x", "--", "http://127.0.0.1:1/mcp"}, `the server command after -- is a URL`},
	})
}

// A program on $PATH whose name starts with a dash is a program (not
// parallel: it sets $PATH, which mcpx reads in the test's process).
func TestServerCommandDashProgram(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a program on PATH has an extension there")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "-server")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if r := runMcpx(t, nil, "ping", "--", "-server"); r.code != ExitConnect {
		t.Errorf("mcpx ping -- -server (a program): exit %d, stderr %q; want %d (it was started)", r.code, r.stderr, ExitConnect)
	}
}

// A missing or extra argument is named: the usage line's word for the
// first one missing, or the first one too many.
func TestWrongNumberOfArgumentsNamesWhich(t *testing.T) {
	t.Parallel()
	checkUsageCases(t, []usageCase{
		{withServer("tools", "call"), `mcpx tools call: wrong number of arguments: NAME is missing; usage: mcpx tools call NAME [key=value ...] [flags] -- <server command> (see mcpx tools call --help)`},
		{withServer("resources", "read"), `mcpx resources read: wrong number of arguments: URI is missing; usage: `},
		{[]string{"trace", "diff", "old.jsonl"}, `mcpx trace diff: wrong number of arguments: NEW is missing; usage: `},
		{withServer("tools", "list", "extra"), `mcpx tools list: wrong number of arguments: it takes none, but was given "extra"; usage: mcpx tools list [flags] -- <server command>`},
		{withServer("tools", "schema", "a", "b"), `mcpx tools schema: wrong number of arguments: "b" is one too many; usage: `},
		// A usage line without a word for it: the count alone.
		{withServer("complete"), `mcpx complete: wrong number of arguments; usage: `},
	})
}
