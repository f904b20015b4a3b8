// Package filelock is the advisory lock several mcpx processes take on a
// file they all update (a trace recorded into by several commands, a
// stored OAuth token refreshed by several runs): a lock file beside it,
// NAME.lock, locked with flock(2) or LockFileEx. The lock is on a file of
// its own because the protected file is replaced by renames, which a lock
// on it would not survive. The wait for the lock is polled, bounded by a
// context and a maximum, and the last holder removes the lock file (where
// the system allows: on Windows it stays), checking that the one it holds
// is still the one at its path.
package filelock

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

// BusyError is the error of a wait for a lock that ended before the lock
// could be taken: another process held it all that time (for instance one
// stopped while holding it). It wraps the context's error when the
// context ended first; Err is nil when the maximum wait passed.
type BusyError struct {
	Path   string        // the lock file
	Waited time.Duration // how long the wait lasted
	Err    error         // ctx's error, or nil
}

func (e *BusyError) Error() string {
	s := fmt.Sprintf("another process holds the lock %s and did not let go of it in %s", e.Path, e.Waited.Round(time.Millisecond))
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

func (e *BusyError) Unwrap() error { return e.Err }

// Lock is the lock of one file. It is used by one goroutine at a time; a
// process that locks the same file through two Locks waits for itself, as
// another process would.
type Lock struct {
	target string   // the protected file
	path   string   // the lock file beside it
	f      *os.File // the open lock file (or the target itself), nil when closed
	own    bool     // f is the lock file, not the target
	held   bool

	// OnWait, when set, is called once per Lock that finds the lock held
	// by another and waits: to say so (the holder may take a while).
	OnWait func()
}

// New returns the lock of the file target (after symbolic links, so that
// every name of the file shares one lock), not taken yet.
func New(target string) *Lock {
	if p, err := filepath.EvalSymlinks(target); err == nil {
		target = p
	}
	return &Lock{target: target, path: target + ".lock"}
}

// Path returns the lock file.
func (l *Lock) Path() string { return l.path }

// Lock takes the lock, waiting for another holder until ctx ends or max
// passes (max <= 0: until ctx ends); a wait that ends so returns a
// *BusyError. It keeps the lock file open until Close.
func (l *Lock) Lock(ctx context.Context, max time.Duration) error {
	if l.held {
		return nil
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if max > 0 {
		wctx, cancel = context.WithTimeout(ctx, max)
	}
	defer cancel()
	delay, start, waiting := time.Millisecond, time.Now(), false
	for {
		if l.f == nil {
			if err := l.open(); err != nil {
				return err
			}
		}
		ok, err := tryLockFile(l.f)
		if err != nil {
			return fmt.Errorf("locking %s: %w", l.f.Name(), err)
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
		if !waiting && l.OnWait != nil {
			l.OnWait()
		}
		waiting = true
		t := time.NewTimer(delay)
		select {
		case <-wctx.Done():
			t.Stop()
			return &BusyError{Path: l.path, Waited: time.Since(start), Err: ctx.Err()}
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// open opens the lock file, creating it; in a directory where it cannot
// be created (read-only: nothing can be renamed into it either) the
// target itself is locked.
func (l *Lock) open() error {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		l.f, l.own = f, true
		return nil
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		if tf, terr := os.Open(l.target); terr == nil {
			l.f, l.own = tf, false
			return nil
		}
	}
	return fmt.Errorf("creating its lock file: %w", err)
}

// current reports whether the lock file open is still the one at its
// path.
func (l *Lock) current() bool {
	have, err := l.f.Stat()
	if err != nil {
		return false
	}
	cur, err := os.Stat(l.path)
	return err == nil && os.SameFile(have, cur)
}

// Unlock lets go of the lock, keeping the lock file open for the next
// Lock.
func (l *Lock) Unlock() {
	if l.held {
		unlockFile(l.f)
		l.held = false
	}
}

// Close ends the use of the lock, letting go of it, and removes the lock
// file when the lock can be had at once (otherwise its holder removes it).
func (l *Lock) Close() {
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

// Acquire takes the lock of target (see Lock.Lock) and returns the
// function that lets go of it and removes the lock file: for a lock held
// for one piece of work.
func Acquire(ctx context.Context, target string, max time.Duration) (release func(), err error) {
	l := New(target)
	if err := l.Lock(ctx, max); err != nil {
		l.Close()
		return nil, err
	}
	return l.Close, nil
}
