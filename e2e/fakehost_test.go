package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// fakeHostMain is the fakehost program, an MCP host (an IDE, a desktop
// assistant) that launches a stdio server:
//
//	fakehost [-then wait|close|die|stopreading] [-nowait] [-pidfile FILE] FRAMES -- PROG [ARGS...]
//
// It starts PROG (normally mcpx proxy ... -- SERVER) with pipes, writes the
// lines of FRAMES to its stdin one by one — after a request, it waits for
// the response before the next line, unless -nowait — and copies every
// line PROG writes to stdout. When PROG's stdout closes it prints
// "# stdout closed" and sends nothing more. After the last line, -then
// says what the host does:
//
//	wait         keep PROG's stdin open until PROG closes its stdout (the
//	             default)
//	close        close PROG's stdin, as a host that is done, and wait likewise
//	die          exit at once (status 0) without closing anything: the
//	             kernel closes the host's ends of the pipes, as when a host
//	             crashes
//	stopreading  close its end of PROG's stdout (PROG's writes then fail
//	             with EPIPE) but keep PROG's stdin open, and wait for PROG
//	             to exit
//
// fakehost then exits with PROG's exit code. -pidfile records PROG's PID
// (atomically). SIGINT and SIGTERM are forwarded to PROG. Every wait is
// bounded by waitBound; fakehost fails when it runs out.
func fakeHostMain() {
	fs := flag.NewFlagSet("fakehost", flag.ExitOnError)
	then := fs.String("then", "wait", "what the host does after the last frame: wait, close, die or stopreading")
	noWait := fs.Bool("nowait", false, "send every frame at once, without waiting for responses")
	pidFile := fs.String("pidfile", "", "write PROG's PID to `FILE`")
	_ = fs.Parse(os.Args[1:])
	rest := fs.Args()
	switch *then {
	case "wait", "close", "die", "stopreading":
	default:
		rest = nil
	}
	if len(rest) < 3 || rest[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: fakehost [-then wait|close|die|stopreading] [-nowait] [-pidfile FILE] FRAMES -- PROG [ARGS...]")
		os.Exit(2)
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "fakehost: "+format+"\n", args...)
		os.Exit(1)
	}
	data, err := os.ReadFile(rest[0])
	if err != nil {
		fail("%v", err)
	}
	cmd := exec.Command(rest[2], rest[3:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fail("%v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fail("%v", err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fail("%v", err)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	if *pidFile != "" {
		tmp := filepath.Join(filepath.Dir(*pidFile), "."+filepath.Base(*pidFile)+".tmp")
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			fail("%v", err)
		}
		if err := os.Rename(tmp, *pidFile); err != nil {
			fail("%v", err)
		}
	}

	// The reader: every line to our stdout, response ids to answered.
	answered := make(chan string, 64)
	closed := make(chan struct{})
	var stoppedReading atomic.Bool
	go func() {
		defer close(closed)
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				os.Stdout.Write(line)
				if line[len(line)-1] != '\n' {
					os.Stdout.Write([]byte("\n"))
				}
				if id, ok := responseID(line); ok {
					answered <- id
				}
			}
			if err != nil {
				if !stoppedReading.Load() {
					fmt.Println("# stdout closed")
				}
				return
			}
		}
	}()

	deadline := time.NewTimer(waitBound)
	defer deadline.Stop()
send:
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			line += "\n"
		}
		if _, err := stdin.Write([]byte(line)); err != nil {
			break // PROG went away; its stdout says the rest
		}
		id, isRequest := requestID([]byte(line))
		for isRequest && !*noWait {
			select {
			case got := <-answered:
				if got == id {
					isRequest = false
				}
			case <-closed:
				break send
			case <-deadline.C:
				_ = cmd.Process.Kill()
				fail("no response to request %s within %s", id, waitBound)
			}
		}
	}
	switch *then {
	case "die":
		os.Exit(0)
	case "close":
		stdin.Close()
	case "stopreading":
		stoppedReading.Store(true)
		stdout.Close()
		exited := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(exited)
		}()
		select {
		case <-exited:
		case <-deadline.C:
			_ = cmd.Process.Kill()
			fail("%s did not exit within %s after its stdout stopped being read", rest[2], waitBound)
		}
		os.Exit(cmd.ProcessState.ExitCode())
	}
	for done := false; !done; {
		select {
		case <-answered:
		case <-closed:
			done = true
		case <-deadline.C:
			_ = cmd.Process.Kill()
			fail("%s did not close its stdout within %s", rest[2], waitBound)
		}
	}
	_ = cmd.Wait()
	os.Exit(cmd.ProcessState.ExitCode())
}

type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// requestID returns the id of a request line.
func requestID(line []byte) (string, bool) {
	var h rpcHead
	if json.Unmarshal(line, &h) != nil || h.Method == "" || len(h.ID) == 0 {
		return "", false
	}
	return string(bytes.TrimSpace(h.ID)), true
}

// responseID returns the id a response line answers.
func responseID(line []byte) (string, bool) {
	var h rpcHead
	if json.Unmarshal(line, &h) != nil || h.Method != "" || len(h.ID) == 0 {
		return "", false
	}
	return string(bytes.TrimSpace(h.ID)), true
}

// stallBrowserMain is the stallbrowser program: BROWSER=stallbrowser makes
// mcpx run it with the authorization URL, which it writes (atomically) to
// $BROWSER_URL_FILE and never visits.
func stallBrowserMain() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: stallbrowser URL")
		os.Exit(2)
	}
	name := os.Getenv("BROWSER_URL_FILE")
	if name == "" {
		fmt.Fprintln(os.Stderr, "stallbrowser: BROWSER_URL_FILE is not set")
		os.Exit(2)
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	if err := os.WriteFile(tmp, []byte(os.Args[1]+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "stallbrowser:", err)
		os.Exit(1)
	}
	if err := os.Rename(tmp, name); err != nil {
		fmt.Fprintln(os.Stderr, "stallbrowser:", err)
		os.Exit(1)
	}
}
