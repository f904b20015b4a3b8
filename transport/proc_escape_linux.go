package transport

import (
	"bytes"
	"errors"
	"os"
	"strconv"
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
// daemon that has not yet lost its parent), which signals to the group
// do not reach. Linux lets mcpx find them, unprivileged, through /proc,
// but only while the chain of parents from the server to them is alive:
// so they are looked for while the server still runs (follow), and
// signalled one by one with the group.
type escapees struct {
	server procID // zero when the server's start time could not be read
	found  []procID
	seen   map[int]bool
}

// newEscapees notes the server pid, just started (mcpx's child, not yet
// waited for, so the id is the server's).
func newEscapees(pid int) *escapees {
	e := &escapees{}
	if st, ok := readProcStat(pid); ok {
		e.server = procID{pid: pid, start: st.start}
	}
	return e
}

// follow records the descendants of the server that are outside the
// group pgid. It finds nothing once the server has exited: its children
// then belong to init (or a subreaper), and the server's id may belong to
// another process, which its start time rules out.
func (e *escapees) follow(pgid int) {
	if e.server.pid != 0 {
		e.walk([]procID{e.server}, pgid)
	}
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
		if st, ok := readProcStat(p.pid); !ok || st.start != p.start {
			continue
		}
		for _, k := range kids {
			st, ok := readProcStat(k)
			if !ok || st.ppid != p.pid {
				continue
			}
			c := procID{pid: k, start: st.start}
			if st.pgid != pgid && !e.seen[k] {
				if e.seen == nil {
					e.seen = make(map[int]bool)
				}
				e.seen[k] = true
				e.found = append(e.found, c)
			}
			queue = append(queue, c)
		}
	}
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
// session ... starttime ...". The command name may hold spaces and
// parentheses: the fields start after its last ')'.
func parseProcStat(b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 || f[0][0] == 'Z' || f[0][0] == 'X' {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{ppid: ppid, pgid: pgid, start: start}, true
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
