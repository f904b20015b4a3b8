package transport

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// A server the kernel stops for using the terminal (here it stops itself
// with the same signal) would never answer: the connection ends at once,
// saying why, instead of each request waiting for its timeout.
func TestStdioServerStoppedByTerminalEndsTheConnection(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "stop-ttin"))
	readFrame(t, c) // ready
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Read(ctx)
	if ctx.Err() != nil {
		t.Fatal("Read waited although the server was stopped by SIGTTIN")
	}
	if !errors.Is(err, ErrTransport) || !strings.Contains(err.Error(), "stopped (SIGTTIN) for using the terminal") {
		t.Fatalf("Read = %v, want a transport failure saying the server was stopped for using the terminal", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// Only the terminal's stops count: a server a person (or a debugger)
// stopped with SIGSTOP is left alone.
func TestTerminalStopIsOnlyTheTerminals(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group that is not orphaned, as a server's
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stopped := func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		i := strings.LastIndexByte(string(stat), ')')
		return err == nil && i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
	}
	for _, sig := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGTTIN} {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		testwait.Within(t, 5*time.Second, "the child to stop", stopped)
		got, ok := terminalStop(pid)
		if want := sig == syscall.SIGTTIN; ok != want || (ok && got != sig) {
			t.Errorf("stopped by %v: terminalStop = %v, %v; want %v", sig, got, ok, want)
		}
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		testwait.Within(t, 5*time.Second, "the child to go on", func() bool { return !stopped() })
	}
}

// A stopped server is asked to terminate as any other: SIGTERM alone would
// wait, pending, until the SIGKILL that follows it, so the group is
// continued too (as a shell's kill does for a stopped job) and the server
// ends by the SIGTERM, with its chance to clean up.
func TestStdioStoppedServerGetsSIGTERM(t *testing.T) {
	t.Parallel()
	opts := helperOptions(t, "stop-ttin")
	opts.TermGrace = 10 * time.Second // ample: a SIGKILL would mean the SIGTERM was not acted on
	c := startHelper(t, opts)
	readFrame(t, c) // ready, then stopped
	if _, err := readEnd(t, c); !errors.Is(err, ErrTransport) {
		t.Fatalf("Read = %v, want the stop's transport failure", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the stopped server ended with %v, want SIGTERM", c.cmd.ProcessState)
	}
}

// The watch of a server that exited ends after os/exec reaped it, by
// which time a server started since may have been given its process id:
// ending the old watch leaves the new one in place.
func TestTerminalStopWatchOfAReusedPid(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	unwatchOld := watchTerminalStops(pid, func(string) {})
	got := make(chan string, 1)
	unwatchNew := watchTerminalStops(pid, func(sig string) { got <- sig })
	defer unwatchNew()
	unwatchOld()
	if err := syscall.Kill(pid, syscall.SIGTTIN); err != nil {
		t.Fatal(err)
	}
	select {
	case sig := <-got:
		if sig != "SIGTTIN" {
			t.Errorf("stopped by %s, want SIGTTIN", sig)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the newer watch of the process id was ended with the older one")
	}
}
