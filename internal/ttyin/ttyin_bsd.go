//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package ttyin

import (
	"os"

	"golang.org/x/sys/unix"
)

// fread is FREAD of <sys/fcntl.h>: TIOCFLUSH flushes the input queue only
// (0 would flush the output too).
const fread = 1

func discard(f *os.File) error {
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.TIOCFLUSH, fread)
}
