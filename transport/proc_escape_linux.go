package transport

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// procID is a process as /proc shows it at one moment: its id, and its
// start time (/proc/PID/stat, field 22, in clock ticks since boot), which
// tells it apart from a later process that reuses the id.
type procID struct {
	pid   int
	start uint64
}

// maxEscaped bounds how many escaped processes a server's tree records,
// so that a server that forks without end cannot make mcpx's memory grow
// with it.
const maxEscaped = 4096

// maxWalk bounds how many processes one walk visits, in the group or out.
const maxWalk = 1 << 16

// escapees are the processes that descend from a stdio server but left
// its process group (setsid, setpgid: a launcher's detached child, a
// daemon), which signals to the group do not reach. Linux lets mcpx find
// them, unprivileged, through /proc, in two ways. While the chain of
// parents from the server to them is alive, by walking it down from the
// server (follow). And where that chain is broken (a daemon that forked
// twice, whose first child exited, adopted by init or a subreaper; what
// a server that has exited left behind), by the server's mark: an entry
// in the server's environment, MCPX_SERVER_MARK=<128 random bits> (then
// the marks of the mcpx processes this one runs within: see serverMark),
// that its descendants inherit unless they clear their environment, and
// that no other process has. A process is recorded only if it holds the
// mark or descends from the server; recorded processes are signalled one
// by one with the group. (What escapes both but holds the server's
// output is found by that: endPipeHolders.)
type escapees struct {
	server procID // zero when the server's start time could not be read
	found  []procID
	seen   map[procID]bool
	// mark is the server's own mark, the value's first (see
	// containsMark); nil when the server has none (tests).
	mark []byte
	// looked is set once a follow has found the server running, and
	// forked once a walk found a process of its tree that had waited for
	// a child (children that still run do not count: see sweep);
	// exitForked once the server, exited, shows it had waited for
	// children (exiting: set by the goroutine that reaps the server,
	// while Close may follow).
	looked, forked bool
	exitForked     atomic.Bool
}

// serverMarkVar names the environment variable that marks a server's
// processes (see escapees). Its value identifies, it grants nothing.
const serverMarkVar = "MCPX_SERVER_MARK"

// markLen is the length of one mark: ServerMarkPrefix and 26 characters
// of base32 (128 random bits, rand.Text).
const markLen = len(ServerMarkPrefix) + 26

// maxInheritedMarks bounds how many marks of enclosing mcpx processes a
// server's mark entry carries on, so that mcpx run within itself without
// end cannot grow its servers' environment without end.
const maxInheritedMarks = 16

// serverMark returns a new server's mark entry, NAME=VALUE, for its
// environment: a new mark (ServerMarkPrefix and 128 random bits), then,
// separated by ':', the marks of the mcpx processes this one runs within
// (it is, or was started by, another mcpx's server), from the entry the
// server would otherwise inherit, from env (its last) or mcpx's own
// environment. Each enclosing mcpx sweeps for its own mark (see
// escapees): when this mcpx is killed before it can end what its server
// left, they still find it. Values that are not marks are left out.
func serverMark(env []string) string {
	inherited, found := "", false
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, serverMarkVar+"="); ok {
			inherited, found = v, true
			break
		}
	}
	if !found {
		inherited = os.Getenv(serverMarkVar)
	}
	entry := serverMarkVar + "=" + ServerMarkPrefix + rand.Text()
	n := 0
	for m := range strings.SplitSeq(inherited, ":") {
		if n < maxInheritedMarks && isMark(m) {
			entry += ":" + m
			n++
		}
	}
	return entry
}

// isMark reports whether s is one mark, as serverMark makes them.
func isMark(s string) bool {
	rest, ok := strings.CutPrefix(s, ServerMarkPrefix)
	if !ok || len(s) != markLen {
		return false
	}
	for _, c := range []byte(rest) {
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// newEscapees notes the server pid, just started (mcpx's child, not yet
// waited for, so the id is the server's), and its mark entry ("" none;
// see serverMark), of which the sweep looks for the server's own mark.
func newEscapees(pid int, mark string) *escapees {
	e := &escapees{}
	if st, ok := readProcStat(pid); ok {
		e.server = procID{pid: pid, start: st.start}
	}
	if own := ownMark(mark); own != "" {
		e.mark = []byte(own)
	}
	return e
}

// ownMark returns the server's own mark from its mark entry (see
// serverMark), "" from "".
func ownMark(entry string) string {
	v, ok := strings.CutPrefix(entry, serverMarkVar+"=")
	if !ok {
		return ""
	}
	own, _, _ := strings.Cut(v, ":")
	return own
}

// follow records the descendants of the server that are outside the
// group pgid, and then, if it must (see sweep), the processes with its
// mark. The walk finds nothing once the server has exited: its children
// then belong to init (or a subreaper), and the server's id may belong to
// another process, which its start time rules out.
func (e *escapees) follow(pgid int) {
	if e.server.pid != 0 {
		e.walk([]procID{e.server}, pgid)
	}
	e.sweep(pgid)
}

// sweep records the processes outside the group pgid that hold the
// server's mark, when the server may have left some that no walk finds.
// Reading every process's environment costs a few microseconds per
// process on the system (BenchmarkSweep), so it is skipped for a server
// whose tree, as a follow found it running, holds no process that ever
// waited for a child (the kernel counts the page faults of the children
// a process waited for, cminflt in /proc/PID/stat, which any process
// that ran has), and that had waited for none when it exited (exiting):
// a process is orphaned only when its parent exits, and a parent that
// exits is waited for by its own, in the tree (or the server's exit,
// which mcpx sees), so nothing the tree started can have lost its
// parent; what still has its parent, the walk finds. So a server that
// starts nothing, or whose children (a launcher's server) all still run,
// pays nothing, while one whose tree ever waited for a child (a shell, a
// daemon's first fork), or that exited before any follow, is swept. Not
// swept: what a tree that had waited for no child by the last follow
// starts as mcpx shuts it down and leaves, when the server itself waits
// for none; children reaped unseen (SIGCHLD ignored).
func (e *escapees) sweep(pgid int) {
	if e.mark == nil || (e.looked && !e.forked && !e.exitForked.Load()) {
		return
	}
	names, err := procNames()
	if err != nil {
		return
	}
	self := os.Getpid()
	buf := make([]byte, 32<<10)
	for _, name := range names {
		if len(e.found) >= maxEscaped {
			return
		}
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		if !hasMark(pid, e.mark, buf) { // most processes end here
			continue
		}
		// The start time is read before the environment is read again:
		// should the id be reused in between, the process recorded is
		// not the one that holds the mark, and signalProc passes it over.
		st, ok := readProcStat(pid)
		if !ok || st.pgid == pgid {
			continue
		}
		p := procID{pid: pid, start: st.start}
		if e.seen[p] || !hasMark(pid, e.mark, buf) {
			continue
		}
		e.record(p)
	}
}

// exiting waits for the server to exit, without reaping it (waitid with
// WNOWAIT: os/exec reaps it next), and notes whether it had waited for
// children by then. Its zombie's /proc/PID/stat still counts them
// (cminflt), though its children have gone to init: so a server that
// starts a daemon only once mcpx shuts it down, after the last follow,
// is swept if it waits for the daemon's first fork.
func (e *escapees) exiting() {
	if e.server.pid == 0 {
		return
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, e.server.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(e.server.pid) + "/stat")
	if err != nil {
		return
	}
	if st, _, ok := parseProcFields(b); ok && st.start == e.server.start && st.cminflt > 0 {
		e.exitForked.Store(true)
	}
}

// maxEnviron bounds how much of a process's environment sweep reads.
const maxEnviron = 8 << 20

// hasMark reports whether the environment of pid holds mark, the
// server's own (see containsMark). An environment mcpx may not read
// (another user's process) or that is gone has none.
func hasMark(pid int, mark, buf []byte) bool {
	// Not os.Open: sweep reads every process's, and os.File's setup
	// (the poller, a finalizer) costs as much as the read.
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/environ", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return containsMark(io.LimitReader(fdReader(fd), maxEnviron), mark, buf)
}

// fdReader reads a file descriptor.
type fdReader int

func (fd fdReader) Read(b []byte) (int, error) {
	n, err := unix.Read(int(fd), b)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// containsMark reports whether the NUL-separated entries read from r
// hold mark as one of the marks of a mark entry's value (see serverMark):
// after '=' or ':', and before ':' or the entry's end (NUL). Which
// variable holds it is not looked at: the 128 random bits are the
// server's alone, so a process that holds them had them from the server.
// It reads through buf, which must be longer than mark by two bytes.
func containsMark(r io.Reader, mark, buf []byte) bool {
	// The first entry has no NUL before it: one is put there.
	keep := copy(buf, "\x00")
	for {
		n, err := r.Read(buf[keep:])
		n += keep
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], mark)
			if j < 0 {
				break
			}
			at, end := i+j, i+j+len(mark)
			if end >= n {
				break // the byte after it is read next
			}
			if at > 0 && (b[at-1] == '=' || b[at-1] == ':') && (b[end] == ':' || b[end] == 0) {
				return true
			}
			i = at + 1
		}
		if err != nil {
			return false
		}
		// What could be the start of the mark, cut at the end of the
		// buffer, is kept for the next read, with the byte before it:
		// a whole mark too, should the byte after it be unread.
		keep = min(n, len(mark)+1)
		copy(buf, buf[n-keep:n])
	}
}

// procNames lists /proc.
func procNames() ([]string, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// refollow adds the descendants of the recorded processes that still run:
// a detached child may have started more since follow found it, and they
// are outside the group too, unless they are in its own.
func (e *escapees) refollow(pgid int) {
	if len(e.found) > 0 {
		e.walk(e.found, pgid)
	}
}

// walk records the descendants of roots outside the group pgid, each
// once. A process is a descendant if /proc names it a child of one that
// is still the process recorded (its start time, read after its
// children: while it runs, its id is its own) and, read next, gives that
// one as its parent; a process that is not, or no longer, is passed over.
//
// Walking from the server, it notes whether the server runs, and whether
// a process it walks had waited for a child (see sweep).
func (e *escapees) walk(roots []procID, pgid int) {
	var scan map[int][]int // the whole of /proc, where children lists are missing
	queue := append([]procID(nil), roots...)
	for visits := 0; len(queue) > 0 && len(e.found) < maxEscaped && visits < maxWalk; visits++ {
		p := queue[0]
		queue = queue[1:]
		kids, ok := listChildren(p.pid)
		if !ok {
			if scan == nil {
				scan = scanChildren()
			}
			kids = scan[p.pid]
		}
		st, ok := readProcStat(p.pid)
		if !ok || st.start != p.start {
			continue
		}
		if p == e.server {
			e.looked = true
		}
		if st.cminflt > 0 {
			// It waited for a child, which may have left children of
			// its own to init: a daemon's first fork.
			e.forked = true
		}
		for _, k := range kids {
			st, ok := readProcStat(k)
			if !ok || st.ppid != p.pid {
				continue
			}
			c := procID{pid: k, start: st.start}
			if st.pgid != pgid && !e.seen[c] {
				e.record(c)
			}
			queue = append(queue, c)
		}
	}
}

// record adds p to the processes found.
func (e *escapees) record(p procID) {
	if e.seen == nil {
		e.seen = make(map[procID]bool)
	}
	e.seen[p] = true
	e.found = append(e.found, p)
}

// signal sends sig to every recorded process that still runs.
func (e *escapees) signal(sig syscall.Signal) {
	for _, p := range e.found {
		signalProc(p, sig)
	}
}

// signalProc sends sig to p, if the process with p's id is still p.
// Through a pidfd, opened before the start time is compared, the signal
// reaches the process compared, even if the id were reused meanwhile;
// where pidfds are unavailable (Linux before 5.3, a seccomp filter) the
// comparison is made just before kill.
func signalProc(p procID, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		fd = -1
	}
	if st, ok := readProcStat(p.pid); !ok || st.start != p.start {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		return
	}
	if fd < 0 {
		_ = syscall.Kill(p.pid, sig)
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	_ = unix.Close(fd)
}

// procStat is what /proc/PID/stat says of a process that matters here.
type procStat struct {
	ppid, pgid int
	start      uint64
	// cminflt counts the minor page faults of the children the process
	// has waited for: nonzero once it has reaped any child that ran.
	cminflt uint64
}

// readProcStat reads /proc/PID/stat. A zombie is reported as not there:
// it has nothing left to signal, and its children have gone to another
// parent.
func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(b)
}

// parseProcStat parses a /proc/PID/stat line: "pid (comm) state ppid pgrp
// session ... cminflt ... starttime ...". The command name may hold spaces and
// parentheses: the fields start after its last ')'.
func parseProcStat(b []byte) (procStat, bool) {
	st, state, ok := parseProcFields(b)
	if !ok || state == 'Z' || state == 'X' {
		return procStat{}, false
	}
	return st, true
}

// parseProcFields parses a /proc/PID/stat line as parseProcStat does,
// a zombie's too, and returns the process's state.
func parseProcFields(b []byte) (procStat, byte, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 {
		return procStat{}, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	cminflt, err3 := strconv.ParseUint(string(f[8]), 10, 64)
	start, err4 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procStat{}, 0, false
	}
	return procStat{ppid: ppid, pgid: pgid, start: start, cminflt: cminflt}, f[0][0], true
}

// listChildren returns the children of pid from /proc/PID/task/TID/children
// (one list per thread: a child belongs to the thread that forked it).
// It reports false when the kernel has no such lists (built without
// CONFIG_PROC_CHILDREN) and pid runs; a process that is gone has none.
func listChildren(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, true
	}
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && len(kids) == 0 {
				if _, serr := os.Stat(dir + t.Name()); serr == nil {
					return nil, false
				}
			}
			continue
		}
		for _, f := range bytes.Fields(b) {
			if k, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, true
}

// scanChildren maps every process to its children, reading every
// /proc/PID/stat: what listChildren finds where the kernel keeps no
// children lists, at the cost of a read per process on the system.
func scanChildren() map[int][]int {
	m := make(map[int][]int)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return m
	}
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok {
			m[st.ppid] = append(m[st.ppid], pid)
		}
	}
	return m
}
