// Command exits is the end-to-end scripts' `exits CODE PROGRAM [ARGS...]`
// (see e2e/e2e_test.go): it runs PROGRAM with our standard streams and
// succeeds only if it exits with CODE.
// SIGINT and SIGTERM are forwarded, so `kill -INT` on a background `exits`
// reaches the program as a Ctrl-C would.
//
// With -within DURATION the program must also end within DURATION (from its
// start): a program still running then gets SIGQUIT (a Go program prints
// its goroutines), then SIGKILL, and exits fails.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	var within time.Duration
	if len(args) > 1 && args[0] == "-within" {
		d, err := time.ParseDuration(args[1])
		if err != nil || d <= 0 {
			fmt.Fprintf(os.Stderr, "exits: bad -within duration %q\n", args[1])
			os.Exit(2)
		}
		within, args = d, args[2:]
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: exits [-within DURATION] CODE PROGRAM [ARGS...]")
		os.Exit(2)
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "exits: bad exit code %q\n", args[0])
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "exits: %v\n", err)
		os.Exit(1)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	var late atomic.Bool
	if within > 0 {
		t := time.AfterFunc(within, func() {
			late.Store(true)
			_ = cmd.Process.Signal(syscall.SIGQUIT)
			time.AfterFunc(2*time.Second, func() { _ = cmd.Process.Kill() })
		})
		defer t.Stop()
	}
	_ = cmd.Wait()
	if late.Load() {
		fmt.Fprintf(os.Stderr, "exits: %s still ran after %s (sent SIGQUIT): it hangs\n", args[1], within)
		os.Exit(1)
	}
	if got := cmd.ProcessState.ExitCode(); got != want {
		fmt.Fprintf(os.Stderr, "exits: %s ended with %s, want exit code %d\n", args[1], cmd.ProcessState, want)
		os.Exit(1)
	}
}
