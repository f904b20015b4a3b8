package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// stdioServerArg makes the test binary a stdio MCP server (see TestMain),
// which writes the value of $K to the file $MCPX_TEST_MARK first, and
// $MCPX_TEST_SAY (its variables expanded) and its own arguments on
// stderr, as a server that logs its configuration does.
const stdioServerArg = "-mcpx-stdio-server"

func stdioServerMain() int {
	if say := os.Getenv("MCPX_TEST_SAY"); say != "" {
		fmt.Fprintln(os.Stderr, os.ExpandEnv(say), strings.Join(os.Args[2:], " "))
	}
	if mark := os.Getenv("MCPX_TEST_MARK"); mark != "" {
		if err := os.WriteFile(mark, []byte(os.Getenv("K")), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := testservers.ServeStdio(testservers.NewServer(), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// namedHome is a home whose Cursor file (~/.cursor/mcp.json, the same
// path on every system) defines the server t, this test binary as a
// stdio server with env; mcpx's own directory is under it too.
func namedHome(t *testing.T, env map[string]string) (vars map[string]string, cursorFile string) {
	t.Helper()
	home := t.TempDir()
	vars = map[string]string{"HOME": home, "USERPROFILE": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"APPDATA": filepath.Join(home, ".config"), "MCPX_CONFIG_DIR": filepath.Join(home, "mcpx")}
	cursorFile = filepath.Join(home, ".cursor", "mcp.json")
	writeCursor(t, cursorFile, env)
	return vars, cursorFile
}

func writeCursor(t *testing.T, path string, env map[string]string) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"t": map[string]any{"command": os.Args[0], "args": []string{stdioServerArg}, "env": env}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runOnTerminal runs mcpx as if stdin and stderr were a terminal on which
// the person types input.
func runOnTerminal(t *testing.T, env map[string]string, input string, args ...string) runResult {
	t.Helper()
	ios, out, errOut := NewTestIOStreams(env)
	ios.In = strings.NewReader(input)
	ios.InTTY, ios.ErrTTY = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Run(ctx, args, ios)
	return runResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// A command from a project file in the working directory (a repository's
// .vscode/mcp.json) starts only once the person confirmed it on the
// terminal; the answer is remembered (privately) for the entry as it is,
// so an edited entry is asked about again, and without a terminal an
// unconfirmed entry is refused, naming --trust. (Not parallel: the
// working directory is the workspace.)
func TestNamedServerAsksOnce(t *testing.T) {
	env, _ := namedHome(t, nil)
	work := t.TempDir()
	t.Chdir(work)
	project := filepath.Join(work, ".vscode", "mcp.json")
	writeProject := func(extra map[string]string) {
		t.Helper()
		b, err := json.Marshal(map[string]any{"servers": map[string]any{
			"p": map[string]any{"command": os.Args[0], "args": []string{stdioServerArg}, "env": extra}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(project), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(project, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeProject(nil)
	call := []string{"tools", "call", "-s", "p", "echo", "message=hi"}
	store := filepath.Join(env["MCPX_CONFIG_DIR"], "trusted.json")

	r := runOnTerminal(t, env, "n\n", call...)
	if r.code != ExitError || r.stdout != "" || !strings.Contains(r.stderr, "Starting it runs this command on this machine:") ||
		!strings.Contains(r.stderr, "Server vscode-project:p is defined in "+project+" (a project file: whoever wrote the repository chose this command).") ||
		!strings.Contains(r.stderr, "Start it? (asked again only if the entry changes) [y]es, [n]o:") ||
		!strings.Contains(r.stderr, "not confirmed") {
		t.Fatalf("declined: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(store); err == nil {
		t.Fatal("a no was remembered")
	}

	r = runMcpx(t, env, call...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "give --trust") || strings.Contains(r.stderr, "Start it?") {
		t.Fatalf("no terminal: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	r = runOnTerminal(t, env, "y\n", call...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: hi" {
		t.Fatalf("confirmed: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(store); err != nil {
		t.Fatal(err)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the trust store has mode %04o", fi.Mode().Perm())
	}

	// Remembered: no question, with or without a terminal.
	r = runMcpx(t, env, call...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: hi" {
		t.Fatalf("remembered: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOnTerminal(t, env, "", call...)
	if r.code != 0 || strings.Contains(r.stderr, "Start it?") {
		t.Fatalf("remembered on a terminal: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	// The entry changes (another environment): asked again.
	writeProject(map[string]string{"EXTRA": "1"})
	r = runMcpx(t, env, call...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--trust") {
		t.Fatalf("edited, no terminal: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runOnTerminal(t, env, "y\n", call...)
	if r.code != 0 || !strings.Contains(r.stderr, "with EXTRA set") || !strings.Contains(r.stderr, "Start it?") {
		t.Fatalf("edited, on a terminal: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	// --trust starts it without asking, and remembers nothing.
	writeProject(map[string]string{"EXTRA": "2"})
	r = runMcpx(t, env, append(call, "--trust")...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: hi" {
		t.Fatalf("--trust: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r = runMcpx(t, env, call...); r.code != ExitUsage {
		t.Fatalf("--trust was remembered: exit %d", r.code)
	}
}

// ${input:ID} is asked for on a terminal (the default when nothing is
// typed), taken from --input, and without either an error naming --input.
func TestNamedServerInputs(t *testing.T) {
	t.Parallel()
	env, _ := namedHome(t, nil)
	mark := ownMarkServer(t, env, "in", "${input:key}")
	got := func() string {
		t.Helper()
		b, err := os.ReadFile(mark)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(mark)
		return string(b)
	}

	r := runMcpx(t, env, "ping", "-s", "in")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `needs the input "key", and no value was given: give it with --input key=VALUE`) {
		t.Fatalf("no value: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runMcpx(t, env, "ping", "-s", "in", "--input", "key=from-flag")
	if r.code != 0 || got() != "from-flag" {
		t.Fatalf("--input: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// mcpx's own file: started without asking; the input is asked for.
	r = runOnTerminal(t, env, "typed\n", "ping", "-s", "in")
	if r.code != 0 || got() != "typed" || !strings.Contains(r.stderr, "Server in asks for key: ") || strings.Contains(r.stderr, "Start it?") {
		t.Fatalf("asked: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if r = runMcpx(t, env, "ping", "-s", "in", "--input", "key"); r.code != ExitUsage || !strings.Contains(r.stderr, `--input "key": expected ID=VALUE`) {
		t.Fatalf("bad --input: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// ownMarkServer defines the server name in mcpx's own file of env: this
// test binary's stdio server, with K set to k (expanded as definitions
// are), which it writes to the file ownMarkServer returns.
func ownMarkServer(t *testing.T, env map[string]string, name, k string) (mark string) {
	t.Helper()
	mark = filepath.Join(t.TempDir(), "k")
	own := filepath.Join(env["MCPX_CONFIG_DIR"], "servers.json")
	if err := os.MkdirAll(filepath.Dir(own), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"command": os.Args[0], "args": []string{stdioServerArg}, "env": map[string]string{"K": k, "MCPX_TEST_MARK": mark}}}})
	if err := os.WriteFile(own, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return mark
}

// A variable of mcpx's environment set to "" is set: ${env:EMPTY} in
// mcpx's own file (where an unset one is an error) expands to "".
func TestNamedServerEmptyVariable(t *testing.T) {
	t.Parallel()
	env, _ := namedHome(t, nil)
	mark := ownMarkServer(t, env, "e", "[${env:EMPTY}]")
	if r := runMcpx(t, env, "ping", "-s", "e"); r.code != ExitUsage || !strings.Contains(r.stderr, "uses ${env:EMPTY}, which is not set in the environment") {
		t.Fatalf("unset: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	env["EMPTY"] = ""
	if r := runMcpx(t, env, "ping", "-s", "e"); r.code != 0 {
		t.Fatalf("set to \"\": exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(mark); err != nil || string(b) != "[]" {
		t.Errorf("the server got K=%q (%v), want []", b, err)
	}
}

// Shell completion offers the configured servers' names for -s, mcpx repl,
// mcpx connect and mcpx servers show; remove offers mcpx's own only.
func TestServerNameCompletion(t *testing.T) {
	t.Parallel()
	env, cursor := namedHome(t, nil)
	if r := runMcpx(t, env, "servers", "add", "mine", "--", "node", "server.js"); r.code != 0 {
		t.Fatalf("add: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// Names with control characters (from any file: a project's too)
	// are not offered: the shell would print them raw
	// ("ev\x1b]0;pwned\x07il" set the terminal's title; "nl\nname" was
	// two candidates).
	data, err := os.ReadFile(cursor)
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.Replace(string(data), `{"mcpServers":{`,
		`{"mcpServers":{"ev\u001b]0;pwned\u0007il": {"command": "x"}, "nl\nname": {"command": "x"}, "bidi\u202e": {"command": "x"},`, 1)
	if hostile == string(data) {
		t.Fatalf("unexpected %s: %s", cursor, data)
	}
	if err := os.WriteFile(cursor, []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"tools", "list", "-s", ""}, []string{"mine", "t"}},
		{[]string{"repl", ""}, []string{"mine", "t"}},
		{[]string{"connect", ""}, []string{"mine", "t"}},
		{[]string{"servers", "show", ""}, []string{"mine", "t"}},
		{[]string{"servers", "remove", ""}, []string{"mine"}},
	} {
		r := runMcpx(t, env, append([]string{cobra.ShellCompRequestCmd}, tc.args...)...)
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if !strings.HasPrefix(l, ":") {
				names = append(names, l)
			}
		}
		if strings.Join(names, " ") != strings.Join(tc.want, " ") {
			t.Errorf("completing %q: %q, want %q (stderr %s)", tc.args, names, tc.want, r.stderr)
		}
	}
}

// A named server at a URL gets the headers of its entry, variables
// expanded, and -H adds to them; its type chooses the transport.
func TestNamedServerHeaders(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 16)
	u := testservers.Streamable(t, testservers.NewServer(), nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case got <- r.Header.Clone():
			default:
			}
			h.ServeHTTP(w, r)
		})
	})
	env, _ := namedHome(t, nil)
	env["API_TOKEN"] = "s3cret"
	own := filepath.Join(env["MCPX_CONFIG_DIR"], "servers.json")
	if err := os.MkdirAll(filepath.Dir(own), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"h": map[string]any{
		"type": "http", "url": u, "headers": map[string]string{"X-Api-Token": "${env:API_TOKEN}"}}}})
	if err := os.WriteFile(own, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runMcpx(t, env, "info", "-s", "h", "-H", "X-Extra: 1")
	if r.code != 0 || !strings.Contains(r.stdout, "the type of mcpx:h in "+own) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "s3cret") {
		t.Fatal("the header's value was printed")
	}
	h := <-got
	if h.Get("X-Api-Token") != "s3cret" || h.Get("X-Extra") != "1" {
		t.Fatalf("headers sent: %v", h)
	}
}

// A server at a URL from a project file whose headers take a variable of
// this machine would send its value to a URL the repository chose: the
// person is asked first, shown the URL, the header names (never their
// values) and the variables; nothing reaches the server before a yes.
// The answer is remembered until the entry changes. (Not parallel: the
// working directory is the workspace.)
func TestNamedURLAsksBeforeSendingVariables(t *testing.T) {
	var requests atomic.Int32
	auth := make(chan string, 64)
	u := testservers.Streamable(t, testservers.NewServer(), nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			select {
			case auth <- r.Header.Get("Authorization"):
			default:
			}
			h.ServeHTTP(w, r)
		})
	})
	env, _ := namedHome(t, nil)
	env["API_TOKEN"] = "s3cret"
	work := t.TempDir()
	t.Chdir(work)
	project := filepath.Join(work, ".vscode", "mcp.json")
	writeProject := func(url string) {
		t.Helper()
		b, err := json.Marshal(map[string]any{"servers": map[string]any{
			"h": map[string]any{"type": "http", "url": url,
				"headers": map[string]string{"Authorization": "Bearer ${env:API_TOKEN}", "X-Static": "st4tic"}},
			"plain": map[string]any{"type": "http", "url": url, "headers": map[string]string{"X-Static": "st4tic"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(project), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(project, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeProject(u)
	call := []string{"tools", "call", "-s", "h", "echo", "message=hi"}

	r := runOnTerminal(t, env, "n\n", call...)
	for _, want := range []string{
		"Server vscode-project:h is defined in " + project + " (a project file: whoever wrote the repository chose this URL).",
		"Using it sends requests to:\n  " + u + "\n",
		"  with the headers Authorization, X-Static\n",
		"  holding values of this machine: ${env:API_TOKEN} (in headers.Authorization)\n",
		"Connect to it? (asked again only if the entry changes) [y]es, [n]o:",
		"not connected: the server's entry was not confirmed",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("declined: no %q in stderr", want)
		}
	}
	if r.code != ExitError || r.stdout != "" || strings.Contains(r.stderr, "s3cret") || strings.Contains(r.stderr, "st4tic") {
		t.Fatalf("declined: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runMcpx(t, env, call...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "would send ${env:API_TOKEN} to "+u+": confirm it on a terminal, or give --trust") {
		t.Fatalf("no terminal: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests reached the server before a yes", n)
	}

	r = runOnTerminal(t, env, "y\n", call...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: hi" {
		t.Fatalf("confirmed: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := <-auth; got != "Bearer s3cret" {
		t.Fatalf("Authorization sent: %q", got)
	}
	if r = runMcpx(t, env, call...); r.code != 0 {
		t.Fatalf("remembered: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// An entry that takes nothing from this machine is not asked about.
	if r = runMcpx(t, env, "tools", "call", "-s", "plain", "echo", "message=hi"); r.code != 0 {
		t.Fatalf("plain: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	// The URL changes: asked again.
	writeProject(u + "?moved=1")
	if r = runMcpx(t, env, call...); r.code != ExitUsage || !strings.Contains(r.stderr, "--trust") {
		t.Fatalf("edited: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestShownValue: what listings show of an entry's env and header values
// and of its arguments. A credential is hidden by its name or by its form;
// references to variables stay readable.
func TestShownValue(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"DEBUG", "1", "1"},
		{"API_KEY", "sekrit", "<redacted>"},
		{"GITHUB_TOKEN", "${env:GH}", "${env:GH}"},
		{"Authorization", "Bearer ${env:TOKEN}", "Bearer ${env:TOKEN}"},
		{"Authorization", "Bearer lit${HOME}", "<redacted>"},
		{"X-Custom", "Bearer abc", "<redacted>"},
		{"X-Custom", "Basic dTpw", "<redacted>"},
		{"GITHUB_PAT", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "<redacted>"},
		{"OPENAI", "sk-proj-abcdefghijklmnop", "<redacted>"},
		{"AWS", "AKIAABCDEFGHIJKLMNOP", "<redacted>"},
		{"DATABASE_URL", "postgres://u:pw@db/app", "postgres://u:redacted@db/app"},
		{"ENDPOINT", "https://h/p?api_key=k&x=1", "https://h/p?api_key=[redacted]&x=1"},
		{"MODE", "sk-short", "sk-short"},
	} {
		if got := shownValue(c.name, c.value); got != c.want {
			t.Errorf("shownValue(%q, %q) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
	args := []string{"--token=t", "--api-key", "k", "--port", "80", "-v", "https://u:p@h/", "--auth=${env:A}"}
	want := []string{"--token=<redacted>", "--api-key", "<redacted>", "--port", "80", "-v", "https://u:redacted@h/", "--auth=${env:A}"}
	if got := shownArgs(args); !slices.Equal(got, want) {
		t.Errorf("shownArgs(%q) = %q, want %q", args, got, want)
	}
}

// TestServersJSONTerminalSafe: mcpx servers --json printed names and
// commands from definition files with C1 and bidirectional controls raw
// (valid JSON, but a terminal acts on U+009B as on ESC [). They are \u
// escapes now: the same JSON.
func TestServersJSONTerminalSafe(t *testing.T) {
	t.Parallel()
	env, cursor := namedHome(t, nil)
	if err := os.WriteFile(cursor, []byte(`{"mcpServers": {"a\u009b2Jb\u202e": {"command": "x\u0085"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"servers", "--json"}, {"servers", "show", "--json", "a\u009b2Jb\u202e"}} {
		r := runMcpx(t, env, args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
		if strings.ContainsAny(r.stdout, "\u009b\u202e\u0085") {
			t.Errorf("%q printed controls raw: %q", args, r.stdout)
		}
		if !strings.Contains(r.stdout, `a\u009b2Jb\u202e`) || !strings.Contains(r.stdout, `x\u0085`) {
			t.Errorf("%q: %s", args, r.stdout)
		}
	}
}

// TestShownArgsEmbeddedCredentials: a credential written into an argument
// that names it itself — docker's -e NAME=VALUE, mcp-remote's --header
// 'Authorization: Bearer …', both common in Claude Desktop's file, which
// has no other way to reach a remote server or pass a container a token —
// was printed by mcpx servers and servers show, since only the flag before
// it was looked at.
func TestShownArgsEmbeddedCredentials(t *testing.T) {
	args := []string{
		"run", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=Pl41nSecret", "-e", "GH=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "-e", "DEBUG=1",
		"--env=API_KEY=k3y", "mcp-remote", "https://example.com/mcp", "--header", "Authorization: Bearer abc123",
		"--header", "Authorization:${AUTH_HEADER}", "--header", "X-Api-Key:k3y", `C:\Users\ada`, "PATH=/usr/bin",
	}
	want := []string{
		"run", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=<redacted>", "-e", "GH=<redacted>", "-e", "DEBUG=1",
		"--env=API_KEY=<redacted>", "mcp-remote", "https://example.com/mcp", "--header", "Authorization: <redacted>",
		"--header", "Authorization:${AUTH_HEADER}", "--header", "X-Api-Key:<redacted>", `C:\Users\ada`, "PATH=/usr/bin",
	}
	if got := shownArgs(args); !slices.Equal(got, want) {
		t.Errorf("shownArgs:\n got %q\nwant %q", got, want)
	}
}

// TestServersShowCodexHeaderVariables: Codex's bearer_token_env_var and
// env_http_headers, which add headers to every request, were shown by
// neither mcpx servers show nor --json (the trust line named the
// variables only until the entry was confirmed).
func TestServersShowCodexHeaderVariables(t *testing.T) {
	t.Parallel()
	env, _ := namedHome(t, nil)
	codex := filepath.Join(env["HOME"], ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(codex), 0o755); err != nil {
		t.Fatal(err)
	}
	toml := "[mcp_servers.figma]\nurl = \"https://mcp.figma.com/mcp\"\nbearer_token_env_var = \"FIGMA_TOKEN\"\nenv_http_headers = { \"X-Key\" = \"FIGMA_KEY\" }\n"
	if err := os.WriteFile(codex, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runMcpx(t, env, "servers", "show", "figma")
	if r.code != 0 || !regexp.MustCompile(`(?m)^header: +Authorization: Bearer \$FIGMA_TOKEN$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^header: +X-Key: \$FIGMA_KEY$`).MatchString(r.stdout) {
		t.Errorf("servers show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runMcpx(t, env, "servers", "show", "figma", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"bearerTokenEnv":"FIGMA_TOKEN"`) || !strings.Contains(r.stdout, `"envHeaders":{"X-Key":"FIGMA_KEY"}`) {
		t.Errorf("servers show --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A configured server's own timeout (here Gemini CLI's, in milliseconds)
// is how long mcpx waits for an answer unless --timeout is given; servers
// show says so.
func TestServerEntryTimeout(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	env, _ := namedHome(t, nil)
	gemini := filepath.Join(env["HOME"], ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(gemini), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gemini, []byte(`{"mcpServers": {"slowpoke": {"httpUrl": "`+u+`", "timeout": 300}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runMcpx(t, env, "tools", "call", "slow", "-s", "slowpoke")
	if r.code != ExitTimeout || !strings.Contains(r.stderr, "no response after 300ms") {
		t.Errorf("the entry's timeout: exit %d: %s", r.code, r.stderr)
	}
	r = runMcpx(t, env, "tools", "call", "slow", "-s", "slowpoke", "--timeout", "200ms")
	if r.code != ExitTimeout || !strings.Contains(r.stderr, "no response after 200ms") {
		t.Errorf("--timeout: exit %d: %s", r.code, r.stderr)
	}
	r = runMcpx(t, env, "servers", "show", "slowpoke")
	if r.code != 0 || !regexp.MustCompile(`(?m)^timeout: +300ms \(the entry's wait for an answer`).MatchString(r.stdout) {
		t.Errorf("servers show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runMcpx(t, env, "servers", "show", "slowpoke", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"timeout":"300ms"`) {
		t.Errorf("servers show --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A session process gets the entry's timeout with the rest of it.
	d := connDesc{session: sessionDesc{timeout: 300 * time.Millisecond, maxTimeout: defaultMaxTimeout}}
	if got := strings.Join(resolvedArgs(d), " "); got != "--timeout=300ms --max-timeout=10m0s" {
		t.Errorf("resolvedArgs: %s", got)
	}
	d.session.timeoutSet, d.session.maxTimeoutSet = true, true
	if got := resolvedArgs(d); len(got) != 0 {
		t.Errorf("resolvedArgs with the flags given (passed as given): %q", got)
	}
}
