//go:build unix

package transport

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

const (
	helperStdoutEnv  = "MCPX_HELPER_STDOUT"  // base64 bytes the "script" mode writes on stdout
	helperStderrEnv  = "MCPX_HELPER_STDERR"  // base64 bytes the "script" mode writes on stderr
	helperExitEnv    = "MCPX_HELPER_EXIT"    // exit code of "script"; "kill" makes it SIGKILL itself; set: "daemon" exits once it has reported
	helperNoExitEnv  = "MCPX_HELPER_NOEXIT"  // set: "detached" and "daemon" run on after stdin EOF, until SIGTERM
	helperPidFileEnv = "MCPX_HELPER_PIDFILE" // where "daemon-at-eof" writes its daemon's pids
)

func runHelper(mode string) int {
	switch mode {
	case "script":
		// Write the given bytes on stdout and stderr, then exit as told.
		for _, p := range []struct {
			env string
			f   *os.File
		}{{helperStderrEnv, os.Stderr}, {helperStdoutEnv, os.Stdout}} {
			b, err := base64.StdEncoding.DecodeString(os.Getenv(p.env))
			if err != nil {
				return 100
			}
			if _, err := p.f.Write(b); err != nil {
				return 101
			}
		}
		switch code := os.Getenv(helperExitEnv); code {
		case "kill":
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		default:
			n, _ := strconv.Atoi(code)
			return n
		}
	case "echo":
		// Echo every stdin line back on stdout; exit on EOF.
		r := bufio.NewReaderSize(os.Stdin, 1<<20)
		w := bufio.NewWriterSize(os.Stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				w.Write(line)
				if err := w.Flush(); err != nil {
					return 102
				}
			}
			if err != nil {
				return 0
			}
		}
	case "echo-after-usr1":
		// Read nothing until SIGUSR1 arrives, then echo like "echo".
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGUSR1)
		fmt.Println("ready")
		<-sig
		return runHelper("echo")
	case "endless":
		// One line that never ends, until stdout is closed.
		chunk := []byte(strings.Repeat("x", 64<<10))
		for {
			if _, err := os.Stdout.Write(chunk); err != nil {
				return 0
			}
		}
	case "env":
		wd, _ := os.Getwd()
		fmt.Printf("%s\n%s\n", os.Getenv("MCPX_HELPER_VALUE"), wd)
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "noread":
		// Never read stdin, so a writer fills the pipe and blocks.
		fmt.Println("ready")
		select {}
	case "stop-ttin":
		// Be stopped as the kernel stops a background process that
		// reads the terminal.
		fmt.Println("ready")
		syscall.Kill(os.Getpid(), syscall.SIGTTIN)
		select {}
	case "close-stdin":
		// Close stdin and keep running: mcpx's writes fail (EPIPE) while
		// the server is still there.
		os.Stdin.Close()
		fmt.Println("ready")
		select {}
	case "exit-on-eof":
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "ignore-eof":
		// Keep running after stdin closes; SIGTERM (default action) ends it.
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		select {}
	case "ignore-term":
		// Survive stdin EOF and SIGTERM; only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		select {}
	case "spawn":
		// Start a grandchild that ignores SIGTERM, report its pid, and exit
		// on stdin EOF, leaving the grandchild behind in the process group.
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), helperEnv+"=ignore-term")
		out, err := gc.StdoutPipe()
		if err != nil {
			return 104
		}
		if err := gc.Start(); err != nil {
			return 105
		}
		// Wait until the grandchild has its SIGTERM handler in place.
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
			return 106
		}
		fmt.Println(gc.Process.Pid)
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "detached":
		// Start a child in a session of its own (as setsid(1), or node's
		// spawn with detached: true), itself a "spawn" that leaves a
		// grandchild ignoring SIGTERM in that session's group and runs on
		// (its stdin held open here); report both pids, and exit on stdin
		// EOF, leaving them outside the server's process group.
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		c := exec.Command(exe)
		c.Env = append(os.Environ(), helperEnv+"=spawn")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if _, err := c.StdinPipe(); err != nil { // held open
			return 104
		}
		out, err := c.StdoutPipe()
		if err != nil {
			return 104
		}
		if err := c.Start(); err != nil {
			return 105
		}
		gpid, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			return 106
		}
		fmt.Printf("%d %s", c.Process.Pid, gpid)
		io.Copy(io.Discard, os.Stdin)
		if os.Getenv(helperNoExitEnv) != "" {
			select {}
		}
		return 0
	case "daemon":
		// Start a daemon as one starts itself: a child in a session of
		// its own ("daemonize") starts a grandchild that ignores SIGTERM,
		// reports its pid and exits; its parent gone, the grandchild is
		// adopted by init (or a subreaper), no longer linked to the
		// server. Report the child's and the grandchild's pids once the
		// child has been waited for, then exit on stdin EOF (at once,
		// given helperExitEnv).
		pids, code := startDaemon()
		if code != 0 {
			return code
		}
		fmt.Print(pids)
		if os.Getenv(helperExitEnv) != "" {
			return 0
		}
		io.Copy(io.Discard, os.Stdin)
		if os.Getenv(helperNoExitEnv) != "" {
			select {}
		}
		return 0
	case "nest":
		// Be an mcpx run as a server: start a "daemon" server of its own
		// as mcpx does (StartStdio, with a mark of its own), report the
		// daemon's first parent's and its pids, and at stdin's EOF die as
		// an mcpx killed would, without closing the connection.
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		c, err := StartStdio(StdioOptions{Command: exe, Env: []string{helperEnv + "=daemon", "GORACE=atexit_sleep_ms=0"}})
		if err != nil {
			return 105
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		f, err := c.Read(ctx)
		cancel()
		if err != nil {
			return 106
		}
		fmt.Printf("%s\n", f.Data)
		io.Copy(io.Discard, os.Stdin)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "bare-daemon":
		// Start a daemon as "daemon" does, but one that clears its
		// environment (no mark) and keeps the server's stderr and stdout
		// (no chain of parents either): report its pids, then exit on
		// stdin EOF (at once, given helperExitEnv).
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		c := exec.Command(exe)
		c.Env = append(os.Environ(), helperEnv+"=bare-daemonize")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		c.Stderr = os.Stderr
		c.ExtraFiles = []*os.File{os.Stdout} // its fd 3
		out, err := c.Output()
		if err != nil {
			return 105
		}
		fmt.Printf("%d %s", c.Process.Pid, out)
		if os.Getenv(helperExitEnv) != "" {
			return 0
		}
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "bare-daemonize":
		// "bare-daemon"'s child: start an "ignore-term" with an
		// environment of its own only, holding the server's stderr and,
		// as its fd 3 (given by "bare-daemon"), the server's stdout.
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		gc := exec.Command(exe)
		gc.Env = []string{helperEnv + "=ignore-term", "GORACE=atexit_sleep_ms=0"}
		gc.Stderr = os.Stderr
		gc.ExtraFiles = []*os.File{os.NewFile(3, "server stdout")}
		out, err := gc.StdoutPipe()
		if err != nil {
			return 104
		}
		if err := gc.Start(); err != nil {
			return 105
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
			return 106
		}
		fmt.Println(gc.Process.Pid)
		return 0
	case "daemon-at-eof":
		// Start nothing until stdin's EOF, then start a daemon as
		// "daemon" does, write its pids in the file helperPidFileEnv
		// names, and exit.
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		pids, code := startDaemon()
		if code != 0 {
			return code
		}
		if err := os.WriteFile(os.Getenv(helperPidFileEnv), []byte(pids), 0o600); err != nil {
			return 107
		}
		return 0
	case "daemonize":
		// "daemon"'s child: start an "ignore-term", report its pid once
		// it is ready, and exit.
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), helperEnv+"=ignore-term")
		out, err := gc.StdoutPipe()
		if err != nil {
			return 104
		}
		if err := gc.Start(); err != nil {
			return 105
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
			return 106
		}
		fmt.Println(gc.Process.Pid)
		return 0
	case "tree-parent":
		// Be mcpx: start a "spawn" server as StartStdio does, in a
		// process group with a watchdog (started at once), report the
		// server's pid and its grandchild's once the watchdog is in
		// place, then wait to be killed (no Close runs).
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		server := exec.Command(exe)
		server.Env = append(os.Environ(), helperEnv+"=spawn")
		server.SysProcAttr = procAttr()
		if _, err := server.StdinPipe(); err != nil { // held open
			return 104
		}
		out, err := server.StdoutPipe()
		if err != nil {
			return 104
		}
		if err := server.Start(); err != nil {
			return 105
		}
		g := newProcessGroup(server.Process.Pid, "", 0)
		gpid, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			return 106
		}
		<-g.started
		if g.watchdog == nil {
			return 107
		}
		fmt.Printf("%d %s", server.Process.Pid, gpid)
		select {}
	case "mcpx-daemon":
		// Be mcpx (StartStdio) with a "daemon" server, report the
		// daemon's pids once the server's watchdog is in place, then wait
		// to be killed (no Close runs).
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		c, err := StartStdio(StdioOptions{Command: exe, Env: []string{helperEnv + "=daemon", "GORACE=atexit_sleep_ms=0"}})
		if err != nil {
			return 105
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		f, err := c.Read(ctx)
		cancel()
		if err != nil {
			return 106
		}
		g := c.tree.(*processGroup)
		<-g.started
		if g.watchdog == nil {
			return 107
		}
		fmt.Printf("%s\n", f.Data)
		select {}
	case "orphan-stdout":
		// Leave a grandchild holding our stdout, then exit 3: stdout never
		// reaches EOF although the server is gone.
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), helperEnv+"=ignore-term")
		gc.Stdout = os.Stdout
		if err := gc.Start(); err != nil {
			return 105
		}
		fmt.Println(gc.Process.Pid)
		return 3
	}
	fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
	return 99
}

// startDaemon starts a "daemonize" child in a session of its own and
// waits for it; it returns the child's and the daemon's pids, or an exit
// code.
func startDaemon() (string, int) {
	exe, err := os.Executable()
	if err != nil {
		return "", 103
	}
	c := exec.Command(exe)
	c.Env = append(os.Environ(), helperEnv+"=daemonize")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := c.Output()
	if err != nil {
		return "", 105
	}
	return fmt.Sprintf("%d %s", c.Process.Pid, out), 0
}

// processGone reports whether pid no longer runs. A zombie (exited, not yet
// reaped by whoever inherited it) counts as gone.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesised command name.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z' || stat[i+2] == 'X'
	}
	return false
}

// waitGone polls, with a bound, until pid is gone.
func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	testwait.Within(t, within, fmt.Sprintf("process %d to be gone after Close", pid), func() bool { return processGone(pid) })
}
