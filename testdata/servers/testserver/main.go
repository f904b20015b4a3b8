// Command testserver is a family of MCP servers for mcpx's end-to-end tests.
// The first argument picks the behaviour:
//
//	rich [CHANGE] a well-behaved server (official Go SDK) with every feature:
//	             typed tools, progress, logging, every content type, isError,
//	             text and binary resources, templates, prompts, completion, and
//	             a page size of 3 so every list is paginated. CHANGE makes it
//	             differ as a regression would, for verify to find:
//	             fewer-progress (slow reports its last 2 steps only), renamed
//	             (the log tool is note), log-text (log prefixes its
//	             message with "log: "), session-text (echo adds a session id,
//	             a new UUID each run, that verify must normalize)
//	crash        crashes (exit 3, after a line on stderr) while tools/call is pending
//	garbage      prints non-JSON lines on stdout between valid messages
//	crowded      writes its answer to tools/call echo on the line of a log
//	             message, without the newline between them
//	bom          begins its output with a UTF-8 byte order mark (as .NET's
//	             console does), then behaves
//	unended      writes its messages without the newline that ends each one
//	             (as a hand-written server that forgets it), so none is ever
//	             whole while it runs
//	hang         reads stdin and never answers; keeps running after stdin closes
//	hang-noterm  like hang, and ignores SIGTERM so only SIGKILL ends it
//	disorder     sends a ping request of its own, then a response to an
//	             unknown id, a second response to an answered request, and
//	             the answer with an id of the wrong type
//	taskflood    on calling echo, sends 1100 task-augmented elicitations,
//	             then tasks/list, and answers with how many tasks were
//	             created and refused and how many the list holds
//	batch        negotiates 2025-03-26 and sends JSON-RPC batches (a log
//	             notification, a ping request, and the tools/call response)
//	badlist      answers tools/list with a result that is not a list
//	badtools     lists echo twice, a tool whose name has a space, one whose
//	             name has a bidirectional control, one with no inputSchema
//	             and one with no name; its version holds an OSC sequence
//	             and a C1 control
//	manybadtools lists 12 tools with no inputSchema: more problems than a
//	             list command names one by one
//	progressflood before answering echo, sends 50 progress notifications
//	             for a token no request carries and 50 responses to ids
//	             mcpx never sent; before answering logging/setLevel, the
//	             50 progress notifications
//	badversion   answers initialize with a protocol version nobody speaks
//	badlog       answers echo, then sends a log message whose level is
//	             none of the spec's: a departure tied to no request
//	big          a raw server whose tool big answers with the rich server's
//	             50 MiB text, written straight out (the SDK takes seconds)
//	rough        a raw server whose results are the rough edges a new user
//	             meets: binary data in odd places, progress after the
//	             response, a multi-line error, a nested schema (rough.go)
//	hostile      a raw server whose every string a person may see harms a
//	             terminal: escapes, controls, bidi, invalid UTF-8, wide
//	             characters, a 10,000-character word (hostile.go)
//	exit         exits at once with status 7 after a line on stderr
//	exit-on-read exits with status 7, after a line on stderr, once it has
//	             read the first message, unanswered (a server that dies
//	             on the request: "exit" may die before it is written)
//	endless      answers initialize with a line that never ends: an
//	             endless stream of bytes on stdout, without a newline
//	pages-error, pages-empty, pages-loop
//	             raw servers whose paginated tools/list goes wrong after
//	             its first page: a JSON-RPC error on page 3, a nextCursor
//	             "" answered with the first page again, a cursor that
//	             comes back forever (pages.go)
//	apps         a raw server whose echo tool has an MCP Apps view
//	             (ui://testserver/view), its resource's _meta the JSON in
//	             $TEST_VIEW_META when set (apps.go)
//	modern       the dual-era Go SDK server of internal/testservers for the
//	             2026-07-28 tests (multi-round tools, x-mcp-header, ...)
//	modern-only  the same server, speaking only 2026-07-28
//	legacy-only  the same server, speaking only the handshake revisions
//	silent-legacy a handshake-era server that ignores every request before
//	             initialize (answers nothing), like some real servers do
//	tasks        a raw 2026-07-28 server with the tasks extension and
//	             subscriptions (see tasks.go)
//	print-blob N writes the N bytes of the rich server's binary resource on
//	             stdout (not a server: tests compare files with it)
//	modern-http URLFILE [changed]
//	             the modern server over stateless Streamable HTTP (as a
//	             2026-07-28 server serves it) on 127.0.0.1; "changed" answers
//	             echo with "Echo! " (a regression for verify to find). Writes
//	             the URL to URLFILE (atomically), serves until SIGINT or SIGTERM
//	oauth-http URLFILE
//	             an HTTP server protected by OAuth (see oauth.go), with its
//	             authorization server, on 127.0.0.1; writes the MCP URL to
//	             URLFILE (atomically) and serves until SIGINT or SIGTERM
//	redirect-http URLFILE
//	             two origins on 127.0.0.1: the first redirects (302, 307,
//	             308) to the second, which logs what it receives, or fails
//	             (see redirect.go); writes the first's URL to URLFILE
//	faults-http URLFILE
//	             the HTTP servers that fail on purpose, one way per path
//	             (testservers.Faults: HTTP+SSE, 2026-07-28 and session
//	             faults), on 127.0.0.1; writes the base URL to URLFILE,
//	             logs every request to $TEST_LOG, serves until SIGINT or SIGTERM
//	unix-http URLFILE
//	             the Go SDK test server on a Unix domain socket in a new
//	             directory of the temporary directory (testservers.ServeUnix:
//	             /mcp, /sse, /moved, /away); writes unix://SOCKET to URLFILE,
//	             logs every request to $TEST_LOG, serves until SIGINT or
//	             SIGTERM and removes the directory
//	modern-crash a raw 2026-07-28 stdio server that crashes (exit 3, after
//	             half a frame and a line on stderr) while tools/call is pending
//	modern-hang  a raw 2026-07-28 stdio server that never answers tools/call
//	skills, skills-hostile, skills-nodir, skills-none
//	             a raw server of the Skills extension in both eras: three
//	             skills, directory reads; a traversal URI, a bad digest and
//	             a terminal escape in the hostile one; no directoryRead, no
//	             extension in the last two (skills.go)
//
// $TEST_START_DELAY (a Go duration) delays a stdio mode's start: nothing
// is read from stdin, so initialize is not answered, before it has passed.
//
// $TEST_SAVE_FILE makes a stdio mode that ends at the end of its input
// save its state as it ends, as some servers do: it writes the file
// $TEST_SAVE_DELAY (a Go duration) after its stdin has ended, then exits.
// A server ended before then (SIGTERM) leaves no file.
//
// Every mode records what the tests need to check from the outside: its PID
// in $TEST_PIDFILE (written atomically), and in $TEST_LOG every line it
// received on stdin, as received, and events as lines starting with "# "
// ("# stdin closed", "# SIGTERM", "# SIGTERM (ignored)").
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

func main() {
	mode := "rich"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if mode == "print-blob" && len(os.Args) == 3 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "testserver: print-blob N")
			os.Exit(2)
		}
		_, _ = os.Stdout.Write(blob(n))
		return
	}
	if mode == "modern-http" && (len(os.Args) == 3 || len(os.Args) == 4) {
		recordPID()
		if err := runModernHTTP(os.Args[2], len(os.Args) == 4 && os.Args[3] == "changed"); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		return
	}
	if mode == "redirect-http" && len(os.Args) == 3 {
		recordPID()
		if err := runRedirectHTTP(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		return
	}
	if mode == "faults-http" && len(os.Args) == 3 {
		recordPID()
		if err := runFaultsHTTP(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		return
	}
	if mode == "unix-http" && len(os.Args) == 3 {
		recordPID()
		if err := runUnixHTTP(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		return
	}
	if mode == "oauth-http" && len(os.Args) == 3 {
		recordPID()
		if err := runOAuthHTTP(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		return
	}
	recordPID()
	in := teeStdin()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		for range sigs {
			// Finish logging what mcpx wrote before it closed our stdin (it
			// should have, before signalling) so the log is complete and
			// in order, then log the signal.
			in.drained(2 * time.Second)
			if mode == "hang-noterm" {
				logEvent("SIGTERM (ignored)")
				continue
			}
			logEvent("SIGTERM")
			os.Exit(143)
		}
	}()

	if d, derr := time.ParseDuration(os.Getenv("TEST_START_DELAY")); derr == nil {
		// A server slow to start: nothing is read before d has passed.
		time.Sleep(d)
	}
	var err error
	switch mode {
	case "rich":
		change := ""
		if len(os.Args) > 2 {
			change = os.Args[2]
		}
		err = runRich(in, change)
	case "modern":
		err = testservers.ServeStdio(testservers.NewModernServer(nil, nil), in)
	case "modern-only":
		err = testservers.ServeStdio(testservers.NewModernServer(nil, testservers.ModernVersions), in)
	case "legacy-only":
		err = testservers.ServeStdio(testservers.NewModernServer(nil, testservers.LegacyVersions), in)
	case "silent-legacy":
		err = runSilentLegacy(in)
	case "tasks":
		err = runTasks(in)
	case "crash", "garbage", "crowded", "disorder", "reuse", "taskflood", "batch", "badlist", "badversion", "badlog", "modern-crash", "modern-hang", "big", "rough", "bom", "unended", "badtools", "manybadtools", "progressflood", "apps", "hostile",
		"pages-error", "pages-empty", "pages-loop":
		err = runRaw(mode, in)
	case "hang", "hang-noterm":
		_, _ = io.Copy(io.Discard, in) // read and log everything, answer nothing
		for {
			time.Sleep(time.Hour) // and do not exit on EOF either
		}
	case "exit":
		fmt.Fprintln(os.Stderr, "testserver: giving up before saying anything")
		os.Exit(7)
	case "exit-on-read":
		_, _ = bufio.NewReader(in).ReadBytes('\n')
		fmt.Fprintln(os.Stderr, "testserver: giving up before saying anything")
		os.Exit(7)
	case "endless":
		err = runEndless(in)
	case "skills", "skills-hostile", "skills-nodir", "skills-none":
		err = runSkills(mode, in)
	default:
		fmt.Fprintf(os.Stderr, "testserver: unknown mode %q\n", mode)
		os.Exit(2)
	}
	in.drained(2 * time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
	if name := os.Getenv("TEST_SAVE_FILE"); name != "" {
		saveLate(name, os.Getenv("TEST_SAVE_DELAY"))
	}
}

// saveLate writes the file name delay after the server's input ended
// (see $TEST_SAVE_FILE).
func saveLate(name, delay string) {
	d, err := time.ParseDuration(delay)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver: $TEST_SAVE_DELAY:", err)
		os.Exit(2)
	}
	time.Sleep(d) // the server's own work at its end, not a synchronization
	if err := os.WriteFile(name, []byte("saved\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
	logEvent("saved")
}
