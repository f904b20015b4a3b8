package transport

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// endPipeHolders kills the processes that still hold the other end of
// the pipes files read (the server's stdout and stderr), once the server
// has exited and its tree has been ended, if within wait some still do.
// Only the server's tree can hold those ends: mcpx made them for the
// server alone and closed its own copies once it had started (a child
// mcpx starts later holds mcpx's reading ends until its exec: see
// holdsPipe). So this finds what the
// mark and the chain of parents miss (see escapees): a process that
// cleared its environment and lost its parent, or that a tree that never
// waited for a child started as it was shut down, as long as it kept the
// server's output, which is also what would keep mcpx waiting for its
// end. Whether a pipe still has a writer is one poll of mcpx's end: a
// server whose tree has ended costs nothing more; /proc is read only when
// some process holds on.
func endPipeHolders(wait time.Duration, files ...*os.File) {
	var held []string // "pipe:[INODE]", as /proc/PID/fd links read
	deadline := time.Now().Add(wait)
	for _, f := range files {
		rc, err := f.SyscallConn()
		if err != nil {
			continue
		}
		_ = rc.Control(func(fd uintptr) {
			if writerGone(int(fd), deadline) {
				return
			}
			var st unix.Stat_t
			if unix.Fstat(int(fd), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
				held = append(held, "pipe:["+strconv.FormatUint(st.Ino, 10)+"]")
			}
		})
	}
	if len(held) == 0 {
		return
	}
	names, err := procNames()
	if err != nil {
		return
	}
	self := os.Getpid()
	visits := 0
	for _, name := range names {
		if visits >= maxLinks {
			return
		}
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		if !holdsPipe(pid, held, &visits) {
			continue
		}
		// As in sweep: the start time is read before the second look,
		// so that the process signalled is the one that holds the pipe.
		st, ok := readProcStat(pid)
		if !ok || !holdsPipe(pid, held, &visits) {
			continue
		}
		signalProc(procID{pid: pid, start: st.start}, syscall.SIGKILL)
	}
}

// writerGone reports whether the pipe whose reading end is fd has no
// writer left, waiting until deadline for the last to go: a pipe's
// reading end polls as POLLHUP once no process holds its writing end
// (with no events asked for, output not read yet does not count).
func writerGone(fd int, deadline time.Time) bool {
	for {
		ms := max(int(time.Until(deadline).Milliseconds()), 0)
		fds := []unix.PollFd{{Fd: int32(fd)}}
		n, err := unix.Poll(fds, ms)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return true // nothing to learn: no scan
		}
		return n > 0
	}
}

// maxLinks bounds how many descriptors of processes endPipeHolders
// looks at, in all: a microsecond or two each.
const maxLinks = 1 << 20

// holdsPipe reports whether process pid has a descriptor open for
// writing on one of the pipes named in held, counting in visits the links
// read, of which it reads no more than maxLinks. Both ends of a pipe link
// to the same name: a process that holds mcpx's end, the reading one, is
// not the server's (a child mcpx is starting holds every descriptor of
// mcpx's until its exec closes them).
func holdsPipe(pid int, held []string, visits *int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	for *visits < maxLinks {
		fds, err := d.Readdirnames(256)
		for _, fd := range fds {
			*visits++
			link, lerr := os.Readlink(dir + fd)
			if lerr != nil || len(link) < 6 || link[:5] != "pipe:" {
				continue
			}
			for _, h := range held {
				if link == h && writes(pid, fd) {
					return true
				}
			}
		}
		if err != nil {
			return false
		}
	}
	return false
}

// writes reports whether descriptor fd of process pid is open for
// writing, as the flags line of /proc/PID/fdinfo/FD says (octal; the
// access mode in its two lowest bits).
func writes(pid int, fd string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + fd)
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&unix.O_ACCMODE != unix.O_RDONLY
		}
	}
	return false
}
