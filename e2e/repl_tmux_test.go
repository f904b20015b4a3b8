package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/modsource"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// TestReplTerminal drives the REPL in a real terminal: tmux runs mcpx repl
// against server-everything, keys are sent with send-keys and the screen
// is read with capture-pane. It needs tmux and server-everything; it skips
// without them in a quick run and fails when MCPX_REQUIRE_INTEROP=1 (the
// test command installs both).
func TestReplTerminal(t *testing.T) {
	t.Parallel() // beside the scripts
	modsource.ReadAll(t)
	require := os.Getenv("MCPX_REQUIRE_INTEROP") == "1"
	tmuxBin := tmuxPath(t)
	node, everything, err := npmPeers()
	if err != nil {
		if require {
			t.Fatalf("MCPX_REQUIRE_INTEROP=1 but %v", err)
		}
		t.Skip(err)
	}

	dir := t.TempDir()
	pidFile := filepath.Join(dir, "ev.pid")
	statusFile := filepath.Join(dir, "status")
	mcpx := strings.Join([]string{
		"env", "PATH=" + quoteSh(os.Getenv("PATH")), "NODE=" + quoteSh(node), "EVERYTHING=" + quoteSh(everything),
		"TEST_PIDFILE=" + quoteSh(pidFile), "GORACE=atexit_sleep_ms=0", "MCPX_HISTORY_FILE=" + quoteSh(filepath.Join(dir, "history")),
		quoteSh(filepath.Join(binDir, "mcpx")), "repl", "--", quoteSh(filepath.Join(binDir, "everything")), "stdio",
	}, " ")
	// The shell records mcpx's exit status, then keeps the pane open.
	tm := startTmux(t, tmuxBin, dir, mcpx+"; echo $? > "+quoteSh(statusFile)+"; exec sleep 600")
	tm.waitFor("the prompt", "Type help for commands")
	tm.waitFor("the prompt", "mcpx> ")

	// Tab completes the tool name from the live server.
	tm.keys("-l", "tools call ec")
	tm.keys("Tab")
	tm.waitFor("the completed tool name", "mcpx> tools call echo")
	tm.keys("-l", " message=hi")
	tm.keys("Enter")
	tm.waitFor("the tool's output", "\nEcho: hi\n")

	// And the prompt name.
	tm.keys("-l", "prompts get args-")
	tm.keys("Tab")
	tm.waitFor("the completed prompt name", "mcpx> prompts get args-prompt")
	tm.keys("-l", " city=Paris")
	tm.keys("Enter")
	tm.waitFor("the prompt's output", "weather in Paris")

	// What is typed ahead while a call shows progress waits for the next
	// prompt: the terminal no longer echoes it into the progress bar's
	// line, where an Enter left a stale bar on the screen.
	tm.keys("-l", "tools call trigger-long-running-operation duration=3 steps=3")
	tm.keys("Enter")
	tm.waitFor("progress", "1/3 (33%)")
	tm.keys("-l", "ping")
	tm.keys("Enter")
	tm.waitForAfter("the answer to the line typed ahead", "Long running operation completed", "pong")
	scr := tm.screen()
	after := scr[strings.LastIndex(scr, "duration=3 steps=3"):]
	if strings.Contains(after, "trigger-long-running-operation [") {
		t.Errorf("a progress bar stayed on the screen after the call:\n%s", after)
	}
	if !regexp.MustCompile(`completed\. Duration: 3 seconds, Steps: 3\.\nmcpx> ping\npong`).MatchString(after) {
		t.Errorf("the line typed ahead is not shown at the prompt after the call's result:\n%s", after)
	}

	// Ctrl-C during a long call returns to the prompt and tells the
	// server (the wire shows notifications/cancelled).
	tm.keys("-l", ":wire on")
	tm.keys("Enter")
	tm.waitFor(":wire on", "wire output is on")
	tm.keys("-l", "tools call trigger-long-running-operation duration=30 steps=30")
	tm.keys("Enter")
	tm.waitFor("progress", `"method":"notifications/progress"`)
	start := time.Now()
	tm.keys("C-c")
	tm.waitFor("the interrupt", "mcpx: interrupted")
	tm.waitForAfter("the prompt after the interrupt", "mcpx: interrupted", "mcpx> ")
	t.Logf("the prompt came back %s after Ctrl-C", time.Since(start).Round(time.Millisecond))
	tm.waitFor("the cancellation on the wire", `"method":"notifications/cancelled","params":{"reason":"cancelled by the user","requestId":`)
	tm.keys("-l", ":wire off")
	tm.keys("Enter")
	tm.waitFor(":wire off", "wire output is off")

	// Ctrl-D leaves: mcpx exits 0 and the server is gone.
	tm.keys("C-d")
	var status string
	testwait.For(t, "mcpx to exit after Ctrl-D", func() bool {
		b, err := os.ReadFile(statusFile)
		status = strings.TrimSpace(string(b))
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	if status != "0" {
		t.Fatalf("mcpx exited with status %s after Ctrl-D", status)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("no server PID: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("PID file holds %q", b)
	}
	testwait.Within(t, 5*time.Second, fmt.Sprintf("server process %d to end after Ctrl-D", pid), func() bool { return !alive(pid) })
}

// tmux drives one tmux server on a private socket.
// tmuxPath finds tmux: without it the test is skipped, or fails under
// MCPX_REQUIRE_INTEROP=1 (the test command installs it).
func tmuxPath(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("MCPX_REQUIRE_INTEROP") == "1" {
			t.Fatal("MCPX_REQUIRE_INTEROP=1 but tmux is not installed (./scripts/test installs it)")
		}
		t.Skip("tmux is not installed (./scripts/test installs it)")
	}
	return bin
}

// startTmux runs command in a 200x50 pane of a tmux server of its own
// (its socket in dir), shown in the log and ended with the test.
func startTmux(t *testing.T, bin, dir, command string) *tmux {
	t.Helper()
	tm := &tmux{t: t, bin: bin, sock: filepath.Join(dir, "tmux.sock")}
	tm.run("-f", "/dev/null", "new-session", "-d", "-s", "repl", "-x", "200", "-y", "50", command)
	t.Cleanup(func() {
		t.Logf("screen:\n%s", tm.screen())
		_ = exec.Command(tm.bin, "-S", tm.sock, "kill-server").Run()
	})
	return tm
}

type tmux struct {
	t    *testing.T
	bin  string
	sock string
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command(tm.bin, append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (tm *tmux) keys(args ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", "repl"}, args...)...)
}

// screen is everything the pane has shown, wrapped lines joined.
func (tm *tmux) screen() string {
	out, err := exec.Command(tm.bin, "-S", tm.sock, "capture-pane", "-p", "-J", "-S", "-", "-t", "repl").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return string(out)
}

func (tm *tmux) waitFor(what, s string) {
	tm.t.Helper()
	tm.waitForAfter(what, "", s)
}

// waitForAfter waits, bounded, until s shows after the last occurrence of
// after.
func (tm *tmux) waitForAfter(what, after, s string) {
	tm.t.Helper()
	testwait.For(tm.t, fmt.Sprintf("%s (%q)", what, s), func() bool {
		scr := tm.screen()
		i := 0
		if after != "" {
			i = strings.LastIndex(scr, after)
		}
		return i >= 0 && strings.Contains(scr[i+len(after):], s)
	})
}

// quoteSh quotes s for sh.
func quoteSh(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
