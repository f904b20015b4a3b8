//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

package repl

import "golang.org/x/sys/unix"

// setEcho turns the terminal's echo on or off, leaving the rest of its
// mode as it is (see Editor.quiet).
func setEcho(fd uintptr, on bool) error {
	t, err := unix.IoctlGetTermios(int(fd), ioctlReadTermios)
	if err != nil {
		return err
	}
	if on == (t.Lflag&unix.ECHO != 0) {
		return nil
	}
	if on {
		t.Lflag |= unix.ECHO
	} else {
		t.Lflag &^= unix.ECHO
	}
	// TCSETS, not TCSETSF: what was typed ahead stays to be read.
	return unix.IoctlSetTermios(int(fd), ioctlWriteTermios, t)
}
