//go:build unix

package transport

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// procAttr puts the server in its own process group, so that a terminal's
// Ctrl-C reaches mcpx alone (mcpx then cancels and shuts the server down in
// order) and so that the server can be signalled together with its
// children.
func procAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(a)
	return a
}

// canEnter reports why the server could not be started in the directory
// dir, if it cannot be made the working directory: one without search
// permission fails the start with "permission denied", as if the command
// were at fault.
func canEnter(dir string) error {
	if err := unix.Access(dir, unix.X_OK); err != nil {
		return fmt.Errorf("%w (no search permission)", err)
	}
	return nil
}

// startTree returns the process group of the server p, just started with
// procAttr (its process id is the group's id) and with mark in its
// environment (see serverMark), whose watchdog starts watchdogAfter later.
func startTree(p *os.Process, mark string) (procTree, error) {
	g := newProcessGroup(p.Pid, ownMark(mark), watchdogAfter)
	g.escaped = newEscapees(p.Pid, mark)
	return g, nil
}

// watchdogAfter is how long a server runs before its group gets its
// watchdog. Starting a shell costs a few milliseconds of CPU, at the
// moment the server and mcpx are busy starting too: a tenth of a one-shot
// command's CPU against a fast server (scripts/bench, stdio one-shot). A
// command that ends sooner needs no watchdog; one killed sooner leaves
// behind what the server started (README.md says so).
const watchdogAfter = 250 * time.Millisecond

// newProcessGroup returns the process group id, whose server has the
// mark given ("" none), and whose watchdog starts after the given time.
func newProcessGroup(id int, mark string, after time.Duration) *processGroup {
	g := &processGroup{id: id, mark: mark, started: make(chan struct{})}
	g.timer = time.AfterFunc(after, g.watch)
	return g
}

// processGroup is a server's process group, with its watchdog.
//
// Close ends the group in order (shutdownTree), but when mcpx itself dies
// without running it (SIGKILL, the OOM killer, a crash), nothing of mcpx
// is left to do so: the kernel's parent-death signal (Linux, FreeBSD)
// reaches only the server, not what the server started (a launcher's
// node, a shell script's children), and macOS has none. So a watchdog
// process joins the group: a shell that waits for the end of its standard
// input, a pipe whose other end only mcpx holds, which the kernel closes
// when mcpx ends however it ends, and then kills its own process group.
// While mcpx lives it only waits (a shell's read), and the group's id
// stays reserved for as long as it is in the group, so the final kill
// cannot reach another group that reused the id.
type processGroup struct {
	id int
	// timer starts watch; started is closed once watch has started the
	// watchdog or failed to (no /bin/sh, or the group is already gone),
	// or release stopped the timer: watchdog and lifeline are set then,
	// nil if there is none.
	timer    *time.Timer
	started  chan struct{}
	watchdog *exec.Cmd
	lifeline *os.File // mcpx's end of the watchdog's standard input
	// escaped are the server's descendants outside the group, as far as
	// they can be found (Linux); nil for a group that is not a server's
	// (tests).
	escaped *escapees
	// mark is the server's own mark (see serverMark), which the
	// watchdog looks for outside the group; "" for none (outside Linux).
	mark string
}

// watchdogScript is what the watchdog runs: it ignores the signals that
// shutdownTree (SIGTERM) and a terminal (SIGINT, SIGHUP) send to the group,
// waits for the end of its standard input, then kills the processes
// whose environment holds the server's mark, its first argument if it
// has one (Linux: what left the group, which the group's kill would not
// reach; see escapees), and then the group, itself included. While mcpx
// lives it runs only shell built-ins; its environment is empty, so it
// holds no mark, nor does grep's (PATH, and the PWD a shell such as dash
// exports). Unlike escapees.signal it cannot tell a process from a later
// one given its id: that would take the id's reuse between grep's read
// and the kill, milliseconds.
const watchdogScript = "trap '' HUP INT TERM; read x; " +
	`if [ -n "$1" ]; then for p in $(PATH=/usr/bin:/bin grep -lsF -e "$1" /proc/[0-9]*/environ); do ` +
	`p=${p#/proc/}; kill -KILL "${p%/environ}"; done; fi; kill -KILL 0`

// watch starts the group's watchdog.
func (g *processGroup) watch() {
	defer close(g.started)
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "mcpx-watchdog", g.mark)
	cmd.Stdin = r
	cmd.Env = []string{}
	cmd.Dir = "/" // it holds no directory of the user's
	// In the server's group; no parent-death signal: mcpx's death is
	// what it is there to act on.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: g.id}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return
	}
	g.watchdog, g.lifeline = cmd, w
}

// follow looks for the server's descendants that left the group, while
// the server runs and links them to it (see escapees).
func (g *processGroup) follow() {
	if g.escaped != nil {
		g.escaped.follow(g.id)
	}
}

// exiting waits for the server to exit (see escapees.exiting).
func (g *processGroup) exiting() {
	if g.escaped != nil {
		g.escaped.exiting()
	}
}

// terminate sends the group SIGTERM, then SIGCONT, as a shell's kill does
// for a stopped job: a stopped process (one the kernel stopped for using
// the terminal, or a person with SIGSTOP) would otherwise hold the SIGTERM
// pending, unacted on, until the SIGKILL that follows. The server's
// descendants found outside the group get the same.
func (g *processGroup) terminate() {
	_ = syscall.Kill(-g.id, syscall.SIGTERM)
	_ = syscall.Kill(-g.id, syscall.SIGCONT)
	if g.escaped != nil {
		g.escaped.signal(syscall.SIGTERM)
		g.escaped.signal(syscall.SIGCONT)
	}
}

// kill sends the group SIGKILL, and the server's descendants found
// outside it; those that hold its mark are looked for first when the
// server may have left some that no follow found (see escapees.sweep):
// kill is also what ends the leftovers of a server that exited on its
// own, before any follow.
func (g *processGroup) kill() {
	if g.escaped != nil {
		g.escaped.sweep(g.id)
	}
	_ = syscall.Kill(-g.id, syscall.SIGKILL)
	if g.escaped != nil {
		g.escaped.signal(syscall.SIGKILL)
	}
}

// release kills what is left of the group, the watchdog with it, and
// the server's descendants found outside it, with what they started
// since and what holds its mark; and reaps the watchdog.
func (g *processGroup) release() {
	if g.timer.Stop() {
		close(g.started) // it never ran
	}
	<-g.started
	if g.escaped != nil {
		g.escaped.refollow(g.id)
	}
	g.kill()
	if g.watchdog != nil {
		// Its input's end makes it leave too, should it not be in the
		// group any more.
		g.lifeline.Close()
		_ = g.watchdog.Wait()
	}
}
