package featuretest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cmd"
	"github.com/mcpx-dev/mcpx/record"
)

// The official MCP Inspector CLI (npm @modelcontextprotocol/inspector,
// pinned in scripts/test) is a host nobody here wrote: it opens one
// connection per command.
const inspectorCLI = "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

// inspectorRuns are the three Inspector CLI commands the trace of
// inspectorTrace records, one session each.
var inspectorRuns = [][]string{
	{"--method", "tools/list"},
	{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello from the inspector"},
	{"--method", "resources/list"},
}

// runInspector runs the Inspector CLI against url and returns its stdout.
func runInspector(t *testing.T, url string, args ...string) string {
	t.Helper()
	out, _ := inspectorCLIRun(t, args, append([]string{"--cli", url, "--transport", "http"}, args...))
	return out
}

// inspectorCLIRun runs the Inspector CLI with argv (args, its own
// arguments, name the run in a failure) in a home of its own, bounded,
// and returns its stdout and stderr; a failed run fails the test.
func inspectorCLIRun(t *testing.T, args, argv []string) (stdout, stderr string) {
	t.Helper()
	node := nodeBin(t)
	cli := npmCache(t, inspectorCLI)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := t.TempDir()
	c := exec.CommandContext(ctx, node, append([]string{cli}, argv...)...)
	c.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "NO_COLOR=1")
	var errOut strings.Builder
	c.Stderr = &errOut
	out, err := c.Output()
	if err != nil {
		t.Fatalf("inspector %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut.String())
	}
	return string(out), errOut.String()
}

// listenAddr matches the address an mcpx listener announces.
var listenAddr = regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)/`)

// serveMcpx runs an mcpx command that listens (proxy or replay --listen on
// 127.0.0.1:0) until the test ends or stop is called, and returns the
// address it listens on.
func serveMcpx(t *testing.T, args ...string) (addr string, stop func() result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	ios := &cmd.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut,
		Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return "1"
			}
			return ""
		}}
	done := make(chan int, 1)
	go func() { done <- cmd.Run(ctx, args, ios) }()
	var r *result
	stop = func() result {
		if r == nil {
			cancel()
			code := <-done
			r = &result{code: code, stdout: out.String(), stderr: errOut.String()}
			t.Logf("mcpx %s\nexit %d\n--- stderr\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return *r
	}
	t.Cleanup(func() { stop() })
	deadline := time.After(20 * time.Second)
	for {
		if m := listenAddr.FindStringSubmatch(errOut.String()); m != nil {
			return m[1], stop
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("mcpx %s ended (exit %d) before listening: %s", strings.Join(args, " "), code, errOut.String())
		case <-deadline:
			t.Fatalf("mcpx %s did not listen within 20s: %s", strings.Join(args, " "), errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// inspectorTrace records the Inspector CLI run three times (inspectorRuns)
// through `mcpx proxy --listen` against the package's server-everything
// over Streamable HTTP (everything), into one trace. It returns the
// trace's file, the server's URL and the Inspector's outputs.
func inspectorTrace(t *testing.T) (trace, server string, outputs []string) {
	t.Helper()
	srv := everything(t)
	server = srv[len(srv)-1]
	trace = filepath.Join(t.TempDir(), "inspector.jsonl")
	addr, stop := serveMcpx(t, "proxy", "--listen", "127.0.0.1:0", "--url", server, "--record", trace)
	for _, run := range inspectorRuns {
		outputs = append(outputs, runInspector(t, "http://"+addr+"/mcp", run...))
	}
	if r := stop(); r.code != cmd.ExitOK && r.code != cmd.ExitInterrupted {
		t.Fatalf("the proxy exited %d", r.code)
	}
	return trace, server, outputs
}

// The Inspector CLI run three times through the proxy makes one trace of
// three sessions (issue 14, defect 2), with the server's SSE priming
// events as stream metadata, not frames (defect 9); replay --listen serves
// the Inspector back from it, each run its own session. The trace
// verifies against server-everything, each of its three sessions on an
// MCP session of its own (issue 14's acceptance: a host nobody here
// wrote, a trace of several sessions, a server nobody here wrote).
func TestInspectorThroughProxyAndReplay(t *testing.T) {
	everything(t) // before t.Parallel: see everything
	t.Parallel()
	trace, server, outputs := inspectorTrace(t)
	if !strings.Contains(outputs[1], "hello from the inspector") {
		t.Fatalf("tools/call through the proxy: %s", outputs[1])
	}
	tr, err := record.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != 3 {
		t.Fatalf("%d sessions in the trace, want 3", len(ss))
	}
	for i, s := range ss {
		inits := 0
		for _, e := range s.Events {
			if e.Kind == record.KindFrame && len(strings.TrimSpace(string(e.Data))) == 0 {
				t.Errorf("session %d holds an empty frame (an SSE priming event?)", s.N)
			}
			if e.Kind == record.KindFrame && e.Dir == record.ClientToServer && strings.Contains(string(e.Data), `"method":"initialize"`) {
				inits++
			}
		}
		if inits != 1 || s.Info.Transport != "http" || !strings.HasPrefix(s.Info.Client, "127.0.0.1:") {
			t.Errorf("session %d: %d initialize, info %+v", i+1, inits, s.Info)
		}
	}

	t.Run("replay", func(t *testing.T) {
		t.Parallel()
		addr, _ := serveMcpx(t, "replay", "--listen", "127.0.0.1:0", trace)
		for i, run := range inspectorRuns {
			if got := runInspector(t, "http://"+addr+"/mcp", run...); got != outputs[i] {
				t.Errorf("replayed %s:\n%s\nwant (as recorded)\n%s", strings.Join(run, " "), got, outputs[i])
			}
		}
		// Once every session was served, a client is served the one that
		// holds what it asks.
		if got := runInspector(t, "http://"+addr+"/mcp", inspectorRuns[1]...); got != outputs[1] {
			t.Errorf("replayed again:\n%s\nwant\n%s", got, outputs[1])
		}
	})
	t.Run("verify", func(t *testing.T) {
		t.Parallel()
		r := run(t, "", "verify", trace, "--url", server)
		r.wantCode(t, 0)
		wantContains(t, "stdout", r.stdout, " verified in 3 sessions, 0 mismatch(es)")
		if strings.Contains(r.stderr, "priming") {
			t.Errorf("SSE priming events on stderr without -v:\n%s", r.stderr)
		}
	})
}

// A host that relaunches the stdio proxy adds a session to the trace
// instead of replacing it (defect 8); --force replaces it. What the proxy
// does with its trace does not depend on the server: it is the package's
// SDK server, which starts in a fraction of node's time.
func TestStdioProxyRelaunchAppends(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "stdio.jsonl")
	host := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	srv := sdkServer()
	proxy := args("proxy", "--record", trace, srv)
	for range 2 {
		hostSession(t, host, `"tools":[{`, proxy...)
	}
	tr, err := record.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if ss := tr.Sessions(); len(ss) != 2 || ss[1].N != 2 || len(ss[0].Frames()) < 4 || len(ss[1].Frames()) < 4 {
		t.Fatalf("sessions %d, want 2", len(ss))
	}
	hostSession(t, host, `"tools":[{`, args("proxy", "--record", trace, "--force", srv)...)
	if tr, err := record.ReadFile(trace); err != nil || len(tr.Sessions()) != 1 {
		t.Fatalf("after --force: %v, %d sessions", err, len(tr.Sessions()))
	}
}

// hostSession runs the stdio proxy as a host would: it writes lines to
// the proxy's stdin, and closes it (ending the session) once the proxy's
// stdout shows want.
func hostSession(t *testing.T, lines, want string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, w := io.Pipe()
	var out, errOut syncBuffer
	ios := &cmd.IOStreams{In: in, Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- cmd.Run(ctx, args, ios) }()
	go w.Write([]byte(lines))
	for !strings.Contains(out.String(), want) {
		select {
		case code := <-done:
			t.Fatalf("the proxy ended (exit %d) before answering: %s\n%s", code, out.String(), errOut.String())
		case <-ctx.Done():
			t.Fatalf("no answer: %s\n%s", out.String(), errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	w.Close()
	if code := <-done; code != cmd.ExitOK {
		t.Fatalf("the proxy exited %d: %s", code, errOut.String())
	}
}

// runInspectorStdio runs the Inspector CLI with args against a stdio
// server: the test binary as mcpx (serverEnv=mcpx) with mcpxArgs. It
// returns the Inspector's stdout.
func runInspectorStdio(t *testing.T, args []string, mcpxArgs ...string) string {
	t.Helper()
	argv := append([]string{"--cli"}, args...)
	argv = append(argv, "-e", serverEnv+"=mcpx", "--", os.Args[0])
	out, stderr := inspectorCLIRun(t, args, append(argv, mcpxArgs...))
	if strings.Contains(stderr, "replay:") {
		t.Errorf("inspector %s: the replay departed:\n%s", strings.Join(args, " "), stderr)
	}
	return out
}

// The Inspector CLI in the 2026-07-28 era (it probes with server/discover
// and opens a subscriptions/listen stream before its request), through the
// stdio proxy to the package's dual-era server: each run is a session of
// the trace; replay --strict serves each run back as recorded, and the
// trace verifies against the server, again and again (the stream's
// acknowledgment is the listen request's whatever else is pending when
// it comes).
func TestInspectorModernStdio(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "modern.jsonl")
	runs := [][]string{
		{"--method", "tools/list"},
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"},
		{"--method", "resources/list"},
	}
	var outputs []string
	for _, r := range runs {
		args := append([]string{"--protocol-era", "modern", "--format", "json"}, r...)
		outputs = append(outputs, runInspectorStdio(t, args, "proxy", "--record", trace, "--env", serverEnv+"=modern", "--", os.Args[0]))
	}
	if !strings.Contains(outputs[1], "Echo: hi") {
		t.Fatalf("tools/call through the proxy: %s", outputs[1])
	}
	tr, err := record.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Sessions()); n != len(runs) {
		t.Fatalf("%d sessions in the trace, want %d", n, len(runs))
	}
	if data, _ := os.ReadFile(trace); !strings.Contains(string(data), `"method":"subscriptions/listen"`) {
		t.Fatalf("the Inspector opened no subscription: the test tests nothing")
	}
	for i, r := range runs {
		args := append([]string{"--protocol-era", "modern", "--format", "json"}, r...)
		if got := runInspectorStdio(t, args, "replay", "--strict", trace); got != outputs[i] {
			t.Errorf("replayed %s:\n%s\nwant (as recorded)\n%s", strings.Join(r, " "), got, outputs[i])
		}
	}
	for range 3 {
		r := run(t, "", "verify", trace, "--env", serverEnv+"=modern", "--", os.Args[0])
		r.wantCode(t, 0)
		wantContains(t, "stdout", r.stdout, "0 mismatch(es)")
	}
}
