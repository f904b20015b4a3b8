package transport

import "time"

// procTree is a stdio server together with every process it starts, as far
// as the platform lets mcpx reach them: a process group on Unix
// (proc_unix.go), a job object on Windows (proc_windows.go). Errors are not
// reported: a tree that is already gone is the normal case, and
// shutdownTree notices a server that does not end.
type procTree interface {
	// follow finds, while the server runs, the processes it started
	// that left the tree, so that the steps below reach them too: on
	// Linux, its descendants outside its process group (setsid, a
	// detached child). Elsewhere it does nothing.
	follow()
	// exiting returns once the server has exited, before it is reaped
	// (the caller reaps it next), having noted what only its remains
	// tell: on Linux, whether it waited for children since the last
	// follow. Elsewhere it returns at once.
	exiting()
	// terminate asks the whole tree to end: SIGTERM to the group on Unix.
	// Windows has no such request for a console program, so there it ends
	// the job outright.
	terminate()
	// kill ends every process in the tree at once.
	kill()
	// release kills whatever is left of the tree and frees what mcpx holds
	// to reach it. It is called once, after the server has exited.
	release()
}

// shutdownGraces are the waits of shutdownTree.
type shutdownGraces struct {
	close time.Duration // after stdin is closed, before terminate
	term  time.Duration // after terminate, before kill
	kill  time.Duration // after kill, before giving up
}

// killWait bounds the wait for a killed server to be reaped.
const killWait = 5 * time.Second

// shutdownTree ends a stdio server in the order the spec gives
// (basic/lifecycle, "Shutdown", stdio): closeInput closes its stdin; if the
// server has not exited after g.close, the tree is asked to terminate; if
// it still runs g.term later, the tree is killed. Whatever the server
// started is killed once it has exited, so that nothing outlives it. It
// reports whether the server exited; exited is closed when it has.
//
// The tree is followed before each step, while the server may still run:
// once it has exited, what left its tree is no longer linked to it.
func shutdownTree(tree procTree, exited <-chan struct{}, closeInput func(), g shutdownGraces) bool {
	tree.follow()
	closeInput()
	ok := waitClosed(exited, g.close)
	if !ok {
		tree.follow()
		tree.terminate()
		ok = waitClosed(exited, g.term)
	}
	if !ok {
		tree.follow()
		tree.kill()
		ok = waitClosed(exited, g.kill)
	}
	// Children the server left behind must not survive it.
	tree.release()
	return ok
}

// waitClosed reports whether ch is closed within d.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// ServerMarkPrefix begins the value of the mark mcpx puts in a stdio
// server's environment on Linux (MCPX_SERVER_MARK, see escapees), followed
// by 26 characters of base32 (A-Z, 2-7). The value is new for every server,
// so record normalizes it wherever a message holds it (a tool that shows
// its environment): a trace of such a server is compared equal run after
// run.
const ServerMarkPrefix = "mcpx-mark-"
