package ttyin

import (
	"os"

	"golang.org/x/sys/unix"
)

func discard(f *os.File) error {
	return unix.IoctlSetInt(int(f.Fd()), unix.TCFLSH, unix.TCIFLUSH)
}
