//go:build linux

package sessiond

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// peerPID returns the process id of the session process that listens on
// the other end of nc, a command's connection (SO_PEERCRED: the
// credentials the listener had when it called listen), or 0.
func peerPID(nc net.Conn) int {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// checkPeer refuses a connection from another user (SO_PEERCRED): the
// socket's mode already keeps them out, this holds even if it did not.
func checkPeer(nc net.Conn) error {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return fmt.Errorf("reading the peer's credentials: %w", credErr)
	}
	if uid := os.Getuid(); int(cred.Uid) != uid {
		return fmt.Errorf("%w: the connecting process belongs to user %d, the session to %d", ErrNotPrivate, cred.Uid, uid)
	}
	return nil
}
