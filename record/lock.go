package record

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Recordings into one trace file by several processes at once (two
// commands run with --record on one file, a recording proxy and a
// command) are serialized by an advisory lock on a file beside the trace,
// NAME.lock: the trace itself is replaced by renames (a new trace, a
// held recording, a --force), which a lock on it would not survive.
// Every write of a recording's events is made holding the lock, and a
// session's number is given then, after the lines the other processes
// wrote: sessions of different processes get numbers of their own, and
// lines are never cut into by another's (lines of sessions recorded at
// once interleave, each tagged with its session). The lock is held for one
// write only, never for a whole session. The last recorder to let go
// removes the lock file (where the system allows: on Windows it stays).

// ErrLocked is matched by the error of a recording that waited too long
// (lockWait, or until its context ended) for the lock of its trace: another
// process held it all that time, for instance one stopped in the middle of
// a write.
var ErrLocked = errors.New("another process holds the lock of the trace")

// ErrReplaced is matched by the error of a recording whose trace file was
// replaced by another process while it recorded into it (another
// recording with --force, a session recorded again in record mode update,
// a trace rewritten in the current format): the recording's later events
// have no file to go to, and are not written into the new one.
var ErrReplaced = errors.New("was replaced by another process while this session was recorded into it; the session's later events were not written")

// lockWait bounds every wait for the lock of a trace: it is only ever
// held for one write, so a longer wait means that its holder is stuck.
var lockWait = 30 * time.Second

// traceLock is the lock of one trace file. It is used by one goroutine at
// a time (a recorder's writer, or Close).
type traceLock struct {
	trace string   // the trace file
	path  string   // the lock file beside it
	f     *os.File // the open lock file (or the trace itself), nil when closed
	own   bool     // f is the lock file, not the trace
	held  bool
}

// newTraceLock returns the lock of the trace in name, not taken yet.
func newTraceLock(name string) *traceLock {
	if p, err := filepath.EvalSymlinks(name); err == nil {
		name = p
	}
	return &traceLock{trace: name, path: name + ".lock"}
}

// lock takes the lock, waiting for another holder until ctx ends or
// lockWait passes.
func (l *traceLock) lock(ctx context.Context) error {
	if l.held {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	delay, start := time.Millisecond, time.Now()
	for {
		if l.f == nil {
			if err := l.open(); err != nil {
				return err
			}
		}
		ok, err := tryLockFile(l.f)
		if err != nil {
			return fmt.Errorf("%s: locking %s: %w", l.trace, l.f.Name(), err)
		}
		if ok {
			if !l.own || l.current() {
				l.held = true
				return nil
			}
			// Its last holder removed the lock file: take the one now
			// in its place.
			unlockFile(l.f)
			l.f.Close()
			l.f = nil
			continue
		}
		t := time.NewTimer(delay)
		select {
		case <-wctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("%s: waiting for the lock of the trace: %w", l.trace, ctx.Err())
			}
			return fmt.Errorf("%s: %w (%s) and did not let go of it in %s: is another mcpx stuck writing it?", l.trace, ErrLocked, l.path, time.Since(start).Round(time.Millisecond))
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// open opens the lock file, creating it; in a directory where it cannot
// be created (read-only: no trace can be renamed into it either) the
// trace itself is locked.
func (l *traceLock) open() error {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		l.f, l.own = f, true
		return nil
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		if tf, terr := os.Open(l.trace); terr == nil {
			l.f, l.own = tf, false
			return nil
		}
	}
	return fmt.Errorf("%s: creating its lock file: %w", l.trace, err)
}

// current reports whether the lock file open is still the one at its
// path.
func (l *traceLock) current() bool {
	have, err := l.f.Stat()
	if err != nil {
		return false
	}
	cur, err := os.Stat(l.path)
	return err == nil && os.SameFile(have, cur)
}

// unlock lets go of the lock, keeping the lock file open for the next
// write.
func (l *traceLock) unlock() {
	if l.held {
		unlockFile(l.f)
		l.held = false
	}
}

// close ends the use of the lock, removing the lock file when it can be
// had at once (otherwise its holder removes it).
func (l *traceLock) close() {
	if l.f == nil {
		return
	}
	if !l.held && l.own {
		ok, _ := tryLockFile(l.f)
		l.held = ok
		if ok && !l.current() {
			unlockFile(l.f)
			l.held = false
		}
	}
	removed := false
	if l.held && l.own && removeLockedFile {
		removed = os.Remove(l.path) == nil
	}
	if l.held {
		unlockFile(l.f)
		l.held = false
	}
	l.f.Close()
	l.f = nil
	if l.own && !removed && !removeLockedFile {
		// Fails while another process has it open, which is as it
		// should be.
		_ = os.Remove(l.path)
	}
}
