//go:build !unix

package outfile

import (
	"io/fs"
	"os"
	"time"
)

// descriptorOf: only Unix systems name descriptors with paths.
func descriptorOf(string) descriptor { return descriptor{} }

func dupDescriptor(int, string) (*os.File, error) { return nil, fs.ErrInvalid }

// unblockFIFO: there are no FIFOs whose open waits.
func unblockFIFO(string) (release func()) { return func() {} }

// renameOpen puts the temporary file in place of target and reopens it
// for the writes that follow: Windows cannot rename a file that is open.
func renameOpen(f *os.File, tmp, target string) (*os.File, error) {
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := rename(tmp, target); err != nil {
		return nil, err
	}
	return os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
}

// rename is os.Rename, tried again for a moment while Windows refuses it
// because another process has the target open (sharingRefusal): without
// that, a token refreshed while another mcpx run read the old one would
// be lost, the refresh token the server rotated with it.
func rename(oldpath, newpath string) error {
	return retryRename(os.Rename, sharingRefusal, renameWait, oldpath, newpath)
}

// renameWait bounds the retries of rename.
const renameWait = time.Second

// syncDir: directories cannot be synced here.
func syncDir(string) {}

// keepOwner: ownership is not kept beyond what the directory gives.
func keepOwner(*os.File, fs.FileInfo) {}

// checkWritable refuses to replace a read-only file.
func checkWritable(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return fs.ErrPermission
	}
	return nil
}
