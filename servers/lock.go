package servers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/internal/filelock"
)

// lockWait bounds the wait for another process's edit of a file: an edit
// holds the lock for one read and one write.
var lockWait = 10 * time.Second

// lockFor serializes the read-modify-write edits of the file at path
// between processes (two `mcpx servers add` at once, two trust
// confirmations), so that neither loses the other's change: the file is
// replaced by renames, so the lock is internal/filelock's, on
// path+".lock". It waits until ctx ends (its error is returned then) or
// lockWait passes; unlock lets go.
func lockFor(ctx context.Context, path string) (unlock func(), err error) {
	unlock, err = filelock.Acquire(ctx, path, lockWait)
	if err == nil {
		return unlock, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var busy *filelock.BusyError
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nil, fmt.Errorf("locking %s: %s", path, bareError(err))
}
