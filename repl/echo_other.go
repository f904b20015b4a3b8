//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos || windows)

package repl

import "errors"

// setEcho is not supported here: the terminal's echo stays as it is.
func setEcho(fd uintptr, on bool) error { return errors.ErrUnsupported }
