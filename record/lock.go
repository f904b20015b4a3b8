package record

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/internal/filelock"
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

// ErrChanged is matched by the error of UpdateTrace when another process
// changed the trace while it was recorded again (recorded a session into
// it, replaced it): the trace is left as that process left it, and the new
// recording is not written, since it would replace what the other process
// recorded.
var ErrChanged = errors.New("was changed by another process while it was recorded again; it was left as it is, with what that process wrote (record it again)")

// lockWait bounds every wait for the lock of a trace: it is only ever
// held for one write, so a longer wait means that its holder is stuck.
var lockWait = 30 * time.Second

// traceLock is the lock of one trace file (see internal/filelock). It is
// used by one goroutine at a time (a recorder's writer, or Close).
type traceLock struct {
	trace string // the trace file
	l     *filelock.Lock
}

// newTraceLock returns the lock of the trace in name, not taken yet
// (filelock.New follows symbolic links, so every name of the trace shares
// it; errors name the trace as it was given).
func newTraceLock(name string) *traceLock {
	return &traceLock{trace: name, l: filelock.New(name)}
}

// lock takes the lock, waiting for another holder until ctx ends or
// lockWait passes.
func (l *traceLock) lock(ctx context.Context) error {
	err := l.l.Lock(ctx, lockWait)
	var be *filelock.BusyError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &be):
		return fmt.Errorf("%s: %w", l.trace, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: waiting for the lock of the trace: %w", l.trace, context.Canceled)
	}
	return fmt.Errorf("%s: %w (%s) and did not let go of it in %s: is another mcpx stuck writing it?", l.trace, ErrLocked, be.Path, be.Waited.Round(time.Millisecond))
}

// unlock lets go of the lock, keeping the lock file open for the next
// write.
func (l *traceLock) unlock() { l.l.Unlock() }

// close ends the use of the lock, removing the lock file when it can be
// had at once (otherwise its holder removes it).
func (l *traceLock) close() { l.l.Close() }
