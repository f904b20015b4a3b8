//go:build linux

// Command shim starts the benchmark's stdio server so that the client
// under test (mcpx or the floor) is charged only for itself: the client
// starts the shim, the shim starts the server on the same stdin and stdout
// and waits for it to exit without reaping it (waitid with WNOWAIT), so the
// server's CPU time and peak RSS never reach the client's rusage; the
// benchmark, a child subreaper, reaps the orphaned server. The shim's own
// CPU time is written to $PERF_SHIM_RUSAGE for the benchmark to subtract.
// Signals the shim gets are passed on to the server.
//
//	shim SERVER [ARGS...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: shim SERVER [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "shim:", err)
		os.Exit(4)
	}
	// A client that signals the shim (mcpx's shutdown does, when the server
	// is slow to leave) ends the server; the shim still waits for it and
	// reports its own CPU time.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	var info unix.Siginfo
	code := 0
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "shim: waitid:", err)
			code = 4
		}
		break
	}
	if path := os.Getenv("PERF_SHIM_RUSAGE"); path != "" {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			cpu := syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)
			_ = os.WriteFile(path, fmt.Appendf(nil, "%d\n", cpu), 0o644)
		}
	}
	os.Exit(code)
}
