package servers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// lockWait bounds the wait for another process's edit of a file: an edit
// holds the lock for one read and one write.
var lockWait = 10 * time.Second

// errLocked is the error of an edit that waited lockWait for the lock.
var errLocked = errors.New("another process holds its lock")

// lockFor serializes the read-modify-write edits of the file at path
// between processes (two `mcpx servers add` at once, two trust
// confirmations), so that neither loses the other's change. The lock is
// an advisory lock on path+".lock", which is created (0600) and left in
// place: removing it would let a waiting process lock a file no longer
// at that path. The file itself is replaced by renames, which a lock on it
// would not survive. It waits until ctx ends or lockWait passes; unlock
// lets go.
func lockFor(ctx context.Context, path string) (unlock func(), err error) {
	lp := path + ".lock"
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the lock file %s: %s", lp, bareError(err))
	}
	wctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	delay := time.Millisecond
	for {
		ok, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", lp, err)
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-wctx.Done():
			t.Stop()
			f.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: %w (%s) and did not let go of it in %s", path, errLocked, lp, lockWait)
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}
