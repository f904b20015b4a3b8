//go:build linux

package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ptySupported tells the scripts' [pty] condition that ttyrun works here.
const ptySupported = true

// ttyMain is `ttyrun COLUMNS PROGRAM [ARGS...]`: it runs PROGRAM with its
// standard output on a pseudo-terminal COLUMNS wide (stdin and stderr are
// ttyrun's own), copies what PROGRAM printed there to ttyrun's standard
// output exactly (the terminal adds no carriage returns), and exits with
// PROGRAM's status. A script sees what a person would on a terminal.
func ttyMain() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: ttyrun COLUMNS PROGRAM [ARGS...]")
		os.Exit(2)
	}
	cols, err := strconv.Atoi(os.Args[1])
	if err != nil || cols <= 0 || cols > 1000 {
		fmt.Fprintf(os.Stderr, "ttyrun: bad width %q\n", os.Args[1])
		os.Exit(2)
	}
	master, slave, err := openPTY(uint16(cols))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ttyrun:", err)
		os.Exit(1)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, slave, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "ttyrun:", err)
		os.Exit(1)
	}
	slave.Close()
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(os.Stdout, master)
		copied <- err
	}()
	_ = cmd.Wait()
	// Everything PROGRAM wrote is in the terminal's buffer now; once it
	// is read, the master reports EIO (no slave left open). A process
	// PROGRAM left behind with the terminal open would keep it from
	// ending: give up on it after a while.
	_ = master.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := <-copied; err != nil && !errors.Is(err, syscall.EIO) {
		fmt.Fprintln(os.Stderr, "ttyrun: reading the terminal:", err)
		os.Exit(1)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

// openPTY opens a pseudo-terminal pair of the given width whose output is
// not post-processed (no "\n" to "\r\n").
func openPTY(cols uint16) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*os.File, *os.File, error) {
		master.Close()
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail(fmt.Errorf("unlocking the terminal: %w", err))
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		return fail(fmt.Errorf("naming the terminal: %w", err))
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	sfd := int(slave.Fd())
	if err := unix.IoctlSetWinsize(sfd, unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: cols}); err != nil {
		slave.Close()
		return fail(fmt.Errorf("setting the terminal's size: %w", err))
	}
	t, err := unix.IoctlGetTermios(sfd, unix.TCGETS)
	if err == nil {
		t.Oflag &^= unix.OPOST
		err = unix.IoctlSetTermios(sfd, unix.TCSETS, t)
	}
	if err != nil {
		slave.Close()
		return fail(fmt.Errorf("setting the terminal's mode: %w", err))
	}
	return master, slave, nil
}
