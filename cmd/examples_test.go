package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/repl"
)

// TestHelpExamples runs every example of every command's help (mcpx's own
// tree; the REPL's are derived from them) and wants none refused as a
// usage error: an example that a flag rename, a new check or a typo broke
// is found here rather than by whoever copies it.
//
// The examples run in-process, each in a directory of its own holding the
// files they name (traces, query.json, a script) and a configuration that
// defines the servers they name, with what would reach the world
// replaced: the server command after -- by a program that does not exist
// and every --url by a closed loopback port (each fails at once, with exit
// 4, after everything that checks the command line), --listen by port 0
// under a context already ended. mcpx connect, which starts a background
// process (this test binary), is parsed only: its flags and arguments, and
// the checks before any command runs.
func TestHelpExamples(t *testing.T) {
	t.Parallel()
	fixtures := exampleFixtures(t)
	ios, _, _ := NewTestIOStreams(nil)
	root, _ := newRootCmd(&env{ios: ios, run: &runState{}})
	var examples []string
	walkCommands(root, func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			if inv := mcpxInvocation(line); inv != "" && !slices.Contains(examples, inv) {
				examples = append(examples, inv)
			}
		}
	})
	if len(examples) < 60 {
		t.Fatalf("found only %d examples", len(examples))
	}
	for _, ex := range examples {
		t.Run(ex, func(t *testing.T) {
			t.Parallel()
			words, err := repl.Split(ex)
			if err != nil || len(words) < 1 || words[0] != "mcpx" {
				t.Fatalf("cannot split the example: %v", err)
			}
			dir := t.TempDir()
			env := fixtures.in(t, dir, words)
			args, listens := exampleArgs(dir, words[1:])
			at, rest := takeSessionArg(args)
			if top := firstCommand(rest); top == "connect" {
				if err := dryParse(ios, at, rest); err != nil {
					t.Errorf("mcpx %s: %v", strings.Join(args, " "), err)
				}
				return
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			if listens {
				cancel() // it would serve until interrupted
			}
			tios, stdout, stderr := NewTestIOStreams(env)
			if slices.Contains(args, "@-") {
				tios.In = strings.NewReader(`{"query": "mcp"}`)
			}
			code := Run(ctx, args, tios)
			if code == ExitUsage || strings.Contains(stderr.String(), "internal error") {
				t.Errorf("mcpx %s: exit %d: %s(stdout %d bytes)", strings.Join(args, " "), code, stderr, len(stdout.String()))
			}
		})
	}
}

// mcpxInvocation returns the mcpx command line in an example's line: from
// "mcpx " to the end of the command, before a pipe, a redirection, the
// end of a $(…) or <(…), or a note in parentheses ("mcpx -- node
// server.js    (the REPL)"); "" when the line runs no mcpx.
func mcpxInvocation(line string) string {
	i := strings.Index(line, "mcpx ")
	if i < 0 {
		return ""
	}
	s := line[i:]
	var quote byte
	for j := 0; j < len(s); j++ {
		ch := s[j]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else if ch == '\\' && quote == '"' {
				j++
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '\\':
			j++
		case strings.IndexByte("|>);&", ch) >= 0, ch == '(' && j > 0 && s[j-1] == ' ':
			return strings.TrimSpace(s[:j])
		}
	}
	return strings.TrimSpace(s)
}

// exampleArgs makes an example's arguments safe to run (see
// TestHelpExamples), with the files they name in dir; listens says the
// example serves (--listen).
func exampleArgs(dir string, words []string) (args []string, listens bool) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return append(args, "--", filepath.Join(dir, "no-such-server")), listens
		case w == "--url" && i+1 < len(words):
			args = append(args, w, "http://127.0.0.1:1/mcp")
			i++
			continue
		case w == "--listen" && i+1 < len(words):
			args = append(args, w, "127.0.0.1:0")
			listens = true
			i++
			continue
		}
		args = append(args, exampleFile(dir, w)...)
	}
	return args, listens
}

// exampleFile returns w with a file name it is or holds (@query.json)
// made a path in dir, globs expanded there.
func exampleFile(dir, w string) []string {
	at := ""
	if strings.HasPrefix(w, "@") && w != "@-" {
		at, w = "@", w[1:]
	}
	ext := filepath.Ext(w)
	if strings.Contains(w, "://") || filepath.IsAbs(w) || !slices.Contains([]string{".jsonl", ".json", ".xml", ".html", ".har", ".png", ".mcpx"}, ext) {
		return []string{at + w}
	}
	p := filepath.Join(dir, w)
	if strings.Contains(w, "*") {
		if m, _ := filepath.Glob(p); len(m) > 0 {
			return m
		}
	}
	return []string{at + p}
}

// firstCommand returns the first word of args that is not a flag.
func firstCommand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// dryParse takes args through what precedes a command's run: cobra's
// parse of the flags and its check of the arguments, and mcpx's checks of
// the flags and of their values.
func dryParse(ios *IOStreams, at sessionRef, args []string) error {
	e := &env{ios: ios, run: &runState{at: at, args: args}}
	root, flags := newRootCmd(e)
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := c.ParseFlags(rest); err != nil {
		return err
	}
	for _, check := range []func() error{
		func() error { return c.ValidateArgs(c.Flags().Args()) },
		func() error { return checkFlags(c) },
		func() error { return checkArgs(c, c.Flags().Args()) },
		func() error { return checkOneDash(c, args) },
		func() error {
			_, err := flags.validate(context.Background(), validation{ios: ios, eraSet: c.Flags().Changed("protocol-era"),
				timeoutSet: c.Flags().Changed("timeout"), maxTimeoutSet: c.Flags().Changed("max-timeout"),
				stderrSet: c.Flags().Changed("server-stderr"), graceSet: c.Flags().Changed("shutdown-grace"), at: at})
			return err
		},
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// examplesFiles are the files the examples name, made once.
type examplesFiles struct {
	trace   []byte // a trace of two sessions
	servers map[string]any
}

func exampleFixtures(t *testing.T) *examplesFiles {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	for range 2 {
		if r := runMcpx(t, nil, "tools", "list", "--record", trace, "--", os.Args[0], stdioServerArg); r.code != 0 {
			t.Fatalf("recording the examples' trace: exit %d: %s", r.code, r.stderr)
		}
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	gone := "/nonexistent/mcpx-example-server"
	return &examplesFiles{trace: b, servers: map[string]any{
		"github":     map[string]any{"type": "stdio", "command": gone},
		"everything": map[string]any{"type": "stdio", "command": gone},
		"remote":     map[string]any{"url": "http://127.0.0.1:1/mcp"},
	}}
}

// in writes the files into dir and returns the environment to run the
// example words in: the configured servers but the one it adds.
func (f *examplesFiles) in(t *testing.T, dir string, words []string) map[string]string {
	t.Helper()
	write := func(name string, b []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"session.jsonl", "t.jsonl", "v1.jsonl", "v2.jsonl", "traces/a.jsonl"} {
		write(name, f.trace)
	}
	write("query.json", []byte(`{"query": "mcp"}`))
	write("session.mcpx", []byte("ping\n"))
	own := map[string]any{}
	for name, s := range f.servers {
		if !(len(words) > 3 && words[1] == "servers" && words[2] == "add" && words[3] == name) {
			own[name] = s
		}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": own})
	if err != nil {
		t.Fatal(err)
	}
	write("config/servers.json", b)
	// (SOURCE:NAME: Cursor's file, the same path on every system.)
	write("home/.cursor/mcp.json", []byte(`{"mcpServers": {"github": {"command": "/nonexistent/mcpx-example-server"}}}`))
	home := filepath.Join(dir, "home")
	return map[string]string{"MCPX_CONFIG_DIR": filepath.Join(dir, "config"), "HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_RUNTIME_DIR": dir, "XDG_STATE_HOME": filepath.Join(dir, "state"), "BROWSER": filepath.Join(dir, "no-browser")}
}

// The example lines give the mcpx command line they show.
func TestMcpxInvocation(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		`  mcpx tools list -- node server.js`:                                                  `mcpx tools list -- node server.js`,
		`  mcpx -- node server.js    (the REPL)`:                                               `mcpx -- node server.js`,
		`  source <(mcpx completion bash)`:                                                     `mcpx completion bash`,
		`  mcpx tools list --json -- node server.js | jq .`:                                    `mcpx tools list --json -- node server.js`,
		`  mcpx completion zsh > "${fpath[1]}/_mcpx"`:                                          `mcpx completion zsh`,
		`  curl -H "Authorization: Bearer $(mcpx auth token --url https://x/mcp)" …`:           `mcpx auth token --url https://x/mcp`,
		`  mcpx call resources/read '{"uri":"file:///tmp/x"}' --json -- node server.js`:        `mcpx call resources/read '{"uri":"file:///tmp/x"}' --json -- node server.js`,
		`  mcpx replay t.jsonl --fault 'tools/call#3:error=-32603,a|b' > x`:                    `mcpx replay t.jsonl --fault 'tools/call#3:error=-32603,a|b'`,
		`  printf 'tools call echo message=hi\nping\n' | mcpx repl -- node server.js`:          `mcpx repl -- node server.js`,
		`  jq -n '{query: "mcp"}' | mcpx tools call search --args @- -- node server.js`:        `mcpx tools call search --args @- -- node server.js`,
		`  mcpx tools call get-time --ui -- npx -y @modelcontextprotocol/server-basic --stdio`: `mcpx tools call get-time --ui -- npx -y @modelcontextprotocol/server-basic --stdio`,
		`  echo hi`: ``,
	} {
		if got := mcpxInvocation(line); got != want {
			t.Errorf("mcpxInvocation(%q) = %q, want %q", line, got, want)
		}
	}
}
