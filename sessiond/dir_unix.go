//go:build unix

package sessiond

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// privateModes is true where file modes keep other users out.
const privateModes = true

// userTag names this user in the temp directory's session directory.
func userTag() string { return strconv.Itoa(os.Getuid()) }

// ownedByMe reports an error when fi belongs to another user.
func ownedByMe(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("%w: it belongs to user %d, not to %d", ErrNotPrivate, st.Uid, uid)
	}
	return nil
}
