//go:build unix

package outfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// descriptorOf recognises the paths that name an open descriptor rather
// than a file: /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N and
// /proc/self/fd/N (this process's), /proc/PID/fd/N (another's).
func descriptorOf(path string) descriptor {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return descriptor{}
		}
		path = abs
	}
	path = filepath.Clean(path)
	switch path {
	case "/dev/stdin":
		return descriptor{found: true, own: true, fd: 0}
	case "/dev/stdout":
		return descriptor{found: true, own: true, fd: 1}
	case "/dev/stderr":
		return descriptor{found: true, own: true, fd: 2}
	}
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if n, ok := strings.CutPrefix(path, prefix); ok {
			if fd, err := strconv.Atoi(n); err == nil && fd >= 0 && n[0] != '+' {
				return descriptor{found: true, own: true, fd: fd}
			}
		}
	}
	if rest, ok := strings.CutPrefix(path, "/proc/"); ok {
		// /proc/PID/fd/N or /proc/PID/task/TID/fd/N of another process.
		if parts := strings.Split(rest, "/"); len(parts) >= 3 && parts[len(parts)-2] == "fd" {
			return descriptor{found: true}
		}
	}
	return descriptor{}
}

// dupDescriptor returns a duplicate of this process's descriptor fd
// (close-on-exec, so that no server inherits it).
func dupDescriptor(fd int, name string) (*os.File, error) {
	syscall.ForkLock.RLock()
	nfd, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// unblockFIFO opens the FIFO name for reading without waiting, which
// lets a writer's open waiting for a reader return; release closes it.
func unblockFIFO(name string) (release func()) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return func() {}
	}
	return func() { f.Close() }
}

// renameOpen renames the open temporary file over target; f stays the
// open file.
func renameOpen(f *os.File, tmp, target string) (*os.File, error) {
	return f, rename(tmp, target)
}

// rename is os.Rename: Unix renames over a file whatever has it open.
func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// syncDir syncs the directory holding path, so that a rename in it
// survives a crash. It is best effort: the rename is done, and some file
// systems cannot sync a directory.
func syncDir(path string) {
	dir, _ := filepath.Split(path)
	if d, err := os.Open(dirName(dir)); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// keepOwner gives the replacement f the owner and group of old, as far
// as this process may (root may give both; others their own groups).
func keepOwner(f *os.File, old fs.FileInfo) {
	want, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	fi, err := f.Stat()
	if err != nil {
		return
	}
	have, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || have.Uid == want.Uid && have.Gid == want.Gid {
		return
	}
	if f.Chown(int(want.Uid), int(want.Gid)) != nil && have.Gid != want.Gid {
		_ = f.Chown(-1, int(want.Gid))
	}
}

// checkWritable refuses to replace a file this process may not write (a
// read-only file), as a shell's > or curl -o would.
func checkWritable(path string) error {
	const wOK = 0x2
	if err := syscall.Access(path, wOK); err != nil {
		return err
	}
	return nil
}
