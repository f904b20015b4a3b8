package transport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// runHelper runs the helper behaviour mode (see TestMain) on Windows.
func runHelper(mode string) int {
	switch mode {
	case "echo":
		// Echo every stdin line back on stdout; exit on EOF.
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if _, err := os.Stdout.Write(line); err != nil {
					return 102
				}
			}
			if err != nil {
				return 0
			}
		}
	case "ignore-eof":
		// Report our pid, then keep running after stdin closes: only
		// being terminated ends us.
		fmt.Println(os.Getpid())
		io.Copy(io.Discard, os.Stdin)
		blockForever()
	case "spawn":
		// Start a grandchild that only ends when terminated, report its
		// pid, and exit on stdin EOF, leaving the grandchild behind.
		gc, err := startIgnoreEOF()
		if err != nil {
			return 105
		}
		fmt.Println(gc.Pid)
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "mcpx":
		// Play mcpx: start a "spawn" server with StartStdio, report its pid
		// and its grandchild's, then wait to be killed without Close.
		exe, err := os.Executable()
		if err != nil {
			return 103
		}
		c, err := StartStdio(StdioOptions{Command: exe, Env: []string{helperEnv + "=spawn"}})
		if err != nil {
			return 105
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		f, err := c.Read(ctx)
		if err != nil {
			return 106
		}
		fmt.Printf("%d\n%s\n", c.PID(), f.Data)
		blockForever()
	}
	fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
	return 99
}

// blockForever never returns. Unlike select {}, it cannot end the helper
// as a deadlock, which Go detects on Windows once every goroutine blocks.
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// startIgnoreEOF starts this test binary in "ignore-eof" mode, with its
// standard streams on NUL.
func startIgnoreEOF() (*os.Process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	gc := exec.Command(exe)
	gc.Env = append(os.Environ(), helperEnv+"=ignore-eof")
	if err := gc.Start(); err != nil {
		return nil, err
	}
	return gc.Process, nil
}

// openProcess opens pid to wait for it; the handle keeps naming that
// process after it exits. If the process is still running when the test
// ends, it is terminated.
func openProcess(t *testing.T, pid int) windows.Handle {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatalf("opening process %d: %v", pid, err)
	}
	t.Cleanup(func() {
		_ = windows.TerminateProcess(h, 1)
		windows.CloseHandle(h)
	})
	return h
}

// running reports whether the process h has not exited yet.
func running(t *testing.T, h windows.Handle) bool {
	t.Helper()
	ev, err := windows.WaitForSingleObject(h, 0)
	if err != nil {
		t.Fatalf("WaitForSingleObject: %v", err)
	}
	return ev != windows.WAIT_OBJECT_0
}

// waitExited waits, with a bound, until the process h has exited.
func waitExited(t *testing.T, h windows.Handle, what string, within time.Duration) {
	t.Helper()
	ev, err := windows.WaitForSingleObject(h, uint32(within.Milliseconds()))
	if err != nil {
		t.Fatalf("WaitForSingleObject: %v", err)
	}
	if ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("%s still running %s later: an orphan", what, within)
	}
}
