package repl

import "golang.org/x/sys/windows"

// setEcho turns the console's echo on or off, leaving the rest of its
// mode as it is (see Editor.quiet).
func setEcho(fd uintptr, on bool) error {
	var mode uint32
	if err := windows.GetConsoleMode(windows.Handle(fd), &mode); err != nil {
		return err
	}
	if on == (mode&windows.ENABLE_ECHO_INPUT != 0) {
		return nil
	}
	if on {
		mode |= windows.ENABLE_ECHO_INPUT
	} else {
		mode &^= windows.ENABLE_ECHO_INPUT
	}
	return windows.SetConsoleMode(windows.Handle(fd), mode)
}
