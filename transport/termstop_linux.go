package transport

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A server runs in a process group of its own (procAttr), apart from the
// terminal's foreground group, so the kernel stops it (SIGTTIN, SIGTTOU)
// the moment it reads the terminal or changes its modes: ssh or sudo
// asking for a password, for one. Nothing tells mcpx: the request waits
// for its timeout, a minute by default, behind a misleading message, while
// the person sees the prompt and types the password into a terminal that
// echoes it, for the shell to read as a command once mcpx exits. So mcpx
// watches its servers for such a stop (SIGCHLD, then waitid for stopped
// children only, which neither reaps nor hides an exit from os/exec) and
// ends the connection at once, saying why. A stop by any other signal
// (SIGSTOP from a person, a debugger) is left alone.

// stopWatch is the set of servers watched for a stop, each with what to
// call once it is stopped by the terminal, and the SIGCHLD subscription
// that wakes the watch while there is any (its goroutine ends with it).
var stopWatch struct {
	mu       sync.Mutex
	watchers map[int]*stopWatcher
	signals  chan os.Signal
}

// stopWatcher is one watch (a pointer, so that a watch ends only itself:
// by the time os/exec has reaped a server, a server started since may have
// its process id and a watch of its own).
type stopWatcher struct{ stopped func(signal string) }

// watchTerminalStops calls stopped (at most once) with the signal's name
// if the process pid, a child of mcpx, is stopped for using the terminal,
// until unwatch is called.
func watchTerminalStops(pid int, stopped func(signal string)) (unwatch func()) {
	var once sync.Once
	stopWatch.mu.Lock()
	if stopWatch.signals == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGCHLD)
		stopWatch.signals = ch
		stopWatch.watchers = map[int]*stopWatcher{}
		go func() {
			for range ch {
				checkTerminalStops()
			}
		}()
	}
	w := &stopWatcher{func(sig string) { once.Do(func() { stopped(sig) }) }}
	stopWatch.watchers[pid] = w
	stopWatch.mu.Unlock()
	// A stop before the watch began sent its SIGCHLD to no one.
	checkTerminalStops()
	return func() {
		stopWatch.mu.Lock()
		defer stopWatch.mu.Unlock()
		if stopWatch.watchers[pid] == w {
			delete(stopWatch.watchers, pid)
		}
		if len(stopWatch.watchers) == 0 && stopWatch.signals != nil {
			signal.Stop(stopWatch.signals) // nothing is sent on it after this
			close(stopWatch.signals)
			stopWatch.signals = nil
		}
	}
}

// checkTerminalStops asks, for each watched server, whether it is stopped
// for using the terminal (a SIGCHLD says only that some child changed).
func checkTerminalStops() {
	type hit struct {
		stopped func(string)
		sig     string
	}
	var hits []hit
	stopWatch.mu.Lock()
	for pid, w := range stopWatch.watchers {
		if sig, ok := terminalStop(pid); ok {
			hits = append(hits, hit{w.stopped, unix.SignalName(sig)})
		}
	}
	stopWatch.mu.Unlock()
	for _, h := range hits {
		h.stopped(h.sig)
	}
}

// terminalStop reports whether the child pid has stopped since it was last
// asked, by SIGTTIN or SIGTTOU. WSTOPPED alone neither reaps a child that
// exited nor reports it; WNOHANG does not wait.
func terminalStop(pid int) (syscall.Signal, bool) {
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOHANG, nil); err != nil {
		return 0, false
	}
	if info.Signo != int32(unix.SIGCHLD) || info.Code != cldStopped {
		return 0, false
	}
	sig := syscall.Signal(siginfoStatus(&info))
	return sig, sig == syscall.SIGTTIN || sig == syscall.SIGTTOU
}

// cldStopped is si_code's CLD_STOPPED, which x/sys does not name.
const cldStopped = 5

// siginfoStatus returns si_status of a SIGCHLD's siginfo, which x/sys
// leaves in the padding: the union after si_signo, si_errno and si_code is
// aligned to a pointer, and holds si_pid, si_uid, then si_status.
func siginfoStatus(info *unix.Siginfo) int32 {
	const ptr = unsafe.Sizeof(uintptr(0))
	off := (12+ptr-1)&^(ptr-1) + 8
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), off))
}

// waitPipeEmpty waits until nothing is left to read in the pipe f (its
// reader has taken it all), for at most d or until done is closed.
// (TIOCINQ is FIONREAD, which Linux answers for pipes too.)
func waitPipeEmpty(f *os.File, d time.Duration, done <-chan struct{}) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n := 0
		if cerr := rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); cerr != nil || err != nil || n == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-t.C:
			return
		case <-done:
			return
		}
	}
}
