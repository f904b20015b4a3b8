// Package outfile writes the files mcpx produces — resources read -o,
// traces, the OAuth token store, the REPL history, --server-stderr — the
// way users expect of a command-line tool (and the way curl -o does):
//
//   - A regular file is replaced atomically: the new content goes to a
//     temporary file in the same directory, which is synced and renamed
//     over the old one, and the directory is synced. Readers see the old
//     content or the new, never half of it; a failed write, sync or rename
//     (or an interruption) leaves the old file as it was and no temporary
//     file behind. The replacement keeps the old file's permission bits
//     (and, where the system allows, its owner and group); a file that
//     did not exist gets 0666 minus the umask. Files that must stay
//     private (traces, tokens) ask for a fixed mode instead (Options.Perm).
//   - A symbolic link is followed: the link stays, the file it points to
//     is replaced (a dangling link names the file to create).
//   - Whatever is not a regular file — a FIFO, a terminal, /dev/null or
//     another device, a descriptor such as /dev/stdout or /dev/fd/3 — is
//     written through: opened and written, never renamed over, never
//     chmod'ed. A FIFO's open waits for its reader (bounded by the
//     context). A descriptor of mcpx's own (/dev/stdout, /dev/fd/N,
//     /proc/self/fd/N) is duplicated rather than reopened, so that output
//     lands where the shell pointed it (after what `>>` already holds).
//   - A directory is an error (ErrDirectory).
//
// Append is the same for files that are added to (logs, history): it
// follows links, writes through devices and FIFOs, and creates a missing
// file with 0666 minus the umask, or Options.Perm.
//
// Errors do not repeat the file's name: callers say which file (and which
// flag) they were writing. The package uses the standard library only.
package outfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ErrDirectory is the error for a target that is a directory.
var ErrDirectory = errors.New("is a directory")

// ErrChanged is the error when, while a replacement was being written,
// something other than a regular file (a FIFO, a device, a link, a
// directory) took the target's place: it is never replaced.
var ErrChanged = errors.New("was replaced by something that is not a regular file while it was written; left it alone")

// Options say how a file is written.
type Options struct {
	// Perm, when non-zero, is the exact permission of the regular file
	// written, whatever the old file's mode and the umask: for files that
	// must stay private (traces and tokens: 0600). For Append it is the
	// mode of a file that has to be created (less the umask); an existing
	// file keeps its own. When zero, a replaced file keeps its mode and a
	// new one gets 0666 minus the umask. It never applies to FIFOs and
	// devices.
	Perm fs.FileMode
}

type kind int

const (
	replace  kind = iota // a temporary file renamed over the target
	direct               // written through (FIFO, device, descriptor)
	appended             // opened for appending (Append)
)

// File is a file being written by Create or Append. Write to it, then
// Close it (which, for a replaced file, puts it in place) or Abort it
// (which leaves the old file as it was). A File is safe for concurrent
// use; writes are not interleaved.
type File struct {
	mu     sync.Mutex
	f      *os.File
	kind   kind
	tmp    string // the temporary file (replace)
	target string // the path tmp replaces (replace)

	published bool
	closed    bool
	err       error // the first error; later writes fail with it
}

// Create opens name to be given new content; see the package comment for
// what that means for each kind of file. ctx bounds the wait of a FIFO's
// open for its reader.
func Create(ctx context.Context, name string, o Options) (*File, error) {
	t, err := inspect(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.fd >= 0 {
		f, err := dupDescriptor(t.fd, name)
		if err != nil {
			return nil, fmt.Errorf("opening: %w", bare(err))
		}
		return &File{f: f, kind: direct}, nil
	}
	if t.direct {
		flag := os.O_WRONLY
		if t.info.Mode().IsRegular() {
			// A regular file behind another process's descriptor: written
			// as a shell's > would.
			flag |= os.O_TRUNC
		}
		f, err := openCtx(ctx, name, flag, 0, t.fifo)
		if err != nil {
			return nil, err
		}
		return &File{f: f, kind: direct}, nil
	}
	return createTemp(t.path, o)
}

// Append opens name for adding to its end, creating it when it does not
// exist; see the package comment. ctx bounds the wait of a FIFO's open
// for its reader.
func Append(ctx context.Context, name string, o Options) (*File, error) {
	t, err := inspect(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.fd >= 0 {
		f, err := dupDescriptor(t.fd, name)
		if err != nil {
			return nil, fmt.Errorf("opening: %w", bare(err))
		}
		return &File{f: f, kind: appended}, nil
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o666
	}
	f, err := openCtx(ctx, name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm, t.fifo)
	if err != nil {
		return nil, err
	}
	return &File{f: f, kind: appended}, nil
}

// WriteFile gives name the content data (Create, Write, Close). When ctx
// ends first, nothing is replaced, no temporary file is left, and the
// error is ctx's; a write to a FIFO whose reader stalls is abandoned then.
func WriteFile(ctx context.Context, name string, data []byte, o Options) error {
	_, err := WriteFrom(ctx, name, bytes.NewReader(data), o)
	return err
}

// WriteFrom gives name the content src writes, as WriteFile does, so that
// a large content produced in pieces (a blob decoded as it is written) is
// never held whole. It returns how many bytes src wrote.
func WriteFrom(ctx context.Context, name string, src io.WriterTo, o Options) (int64, error) {
	f, err := Create(ctx, name, o)
	if err != nil {
		return 0, err
	}
	stop := context.AfterFunc(ctx, func() {
		// Unblocks a write to a FIFO or terminal; regular files do not
		// block (and do not support deadlines).
		_ = f.f.SetWriteDeadline(time.Unix(1, 0))
	})
	n, werr := src.WriteTo(f)
	stop()
	if err := ctx.Err(); err != nil {
		f.Abort()
		return n, err
	}
	if werr != nil {
		f.Abort()
		return n, fmt.Errorf("writing: %w", werr)
	}
	return n, f.Close()
}

// Write writes p. After a failed write every later one fails with the
// same error, and Close reports it. The error is the system's (ENOSPC,
// EPIPE…), without the file's name.
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	if f.closed {
		return 0, os.ErrClosed
	}
	n, err := f.f.Write(p)
	if err != nil {
		f.err = bare(err)
		return n, f.err
	}
	return n, nil
}

// Stat describes the open file (the temporary file of a replacement not
// yet in place): os.SameFile tells whether a name still leads to it.
func (f *File) Stat() (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Stat()
}

// Direct reports whether the file is written through (a FIFO, a device,
// a descriptor) rather than replaced or appended to.
func (f *File) Direct() bool { return f.kind == direct }

// Publish puts what was written so far in place of the target at once
// (synced first, as Close would); later writes go on into the file now
// in place, and Close syncs them. A recording that streams its events
// uses it when its first event arrives, so that an existing file is only
// replaced once there is something to replace it with. For a file
// written through or appended to it does nothing.
func (f *File) Publish() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.kind != replace || f.published:
		return f.err
	case f.err != nil:
		return f.err
	case f.closed:
		return os.ErrClosed
	}
	if err := f.f.Sync(); err != nil {
		f.err = fmt.Errorf("syncing: %w", bare(err))
		return f.err
	}
	if err := checkTarget(f.target); err != nil {
		f.err = err
		return err
	}
	nf, err := renameOpen(f.f, f.tmp, f.target)
	if nf != nil {
		f.f = nf
	}
	if err != nil {
		f.err = fmt.Errorf("putting it in place: %w", bare(err))
		return f.err
	}
	f.published = true
	syncDir(f.target)
	return nil
}

// Close finishes the file. A replacement is synced, closed and renamed
// over the target (unless Publish did that already), and the directory
// synced; on any failure the old file is left as it was and the
// temporary file removed. It returns the first error the file met
// (including a failed Write), and is idempotent.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.err
	}
	f.closed = true
	if f.kind != replace {
		if err := f.f.Close(); err != nil && f.err == nil {
			f.err = fmt.Errorf("closing: %w", bare(err))
		}
		return f.err
	}
	if f.err == nil {
		if err := f.f.Sync(); err != nil {
			f.err = fmt.Errorf("syncing: %w", bare(err))
		}
	}
	if err := f.f.Close(); err != nil && f.err == nil {
		f.err = fmt.Errorf("closing: %w", bare(err))
	}
	if f.published {
		return f.err
	}
	if f.err == nil {
		f.err = checkTarget(f.target)
	}
	if f.err == nil {
		if err := rename(f.tmp, f.target); err != nil {
			f.err = fmt.Errorf("putting it in place: %w", bare(err))
		}
	}
	if f.err != nil {
		os.Remove(f.tmp)
		return f.err
	}
	syncDir(f.target)
	return nil
}

// Abort gives up the file: a replacement not yet published is removed
// and the old file left as it was; a published replacement, a file
// written through and one appended to are closed as they are. It is a
// no-op after Close.
func (f *File) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	f.f.Close()
	if f.kind == replace && !f.published {
		os.Remove(f.tmp)
	}
	if f.err == nil {
		f.err = errAborted
	}
}

var errAborted = errors.New("abandoned")

// target is what a name leads to.
type target struct {
	path   string      // the file a replacement renames over (links followed)
	info   fs.FileInfo // the file name leads to, nil when there is none
	direct bool        // written through, never replaced
	fifo   bool        // a FIFO: its open waits for a reader
	fd     int         // a descriptor of this process to duplicate, or -1
}

// inspect decides how name is written.
func inspect(name string) (target, error) {
	t := target{path: name, fd: -1}
	if name == "" {
		return t, errors.New("no file name")
	}
	fi, err := os.Stat(name)
	switch {
	case err == nil:
		t.info = fi
	case !errors.Is(err, fs.ErrNotExist):
		return t, bare(err)
	}
	if fi != nil && fi.IsDir() {
		return t, ErrDirectory
	}
	path, desc, err := resolve(name)
	if err != nil {
		return t, err
	}
	switch {
	case desc.own && fi != nil:
		t.direct, t.fd = true, desc.fd
	case fi != nil && !fi.Mode().IsRegular():
		t.direct, t.fifo = true, fi.Mode()&fs.ModeNamedPipe != 0
	case desc.found && fi != nil:
		// Another process's descriptor (/proc/PID/fd/N): its link does
		// not name a path to put a file at.
		t.direct = true
	case desc.found:
		return t, fs.ErrNotExist
	}
	t.path = path
	return t, nil
}

// maxLinks bounds a chain of symbolic links, as the kernel does.
const maxLinks = 40

// resolve follows the symbolic links of name's last element, as open(2)
// would, and returns the path of the file they lead to, which need not
// exist: a dangling link names the file to create. Paths are joined
// without lexical cleaning, so that "dir/link" with a link to "../x" is
// resolved the way the kernel resolves it even when dir is itself a link.
// desc reports a link in the chain that is a process's descriptor
// (/dev/stdout, /proc/self/fd/1), whose target is not a path.
func resolve(name string) (path string, desc descriptor, err error) {
	path = name
	for i := 0; ; i++ {
		if d := descriptorOf(path); d.found {
			return path, d, nil
		}
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, desc, nil
		}
		if err != nil {
			return "", desc, bare(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, desc, nil
		}
		if i == maxLinks {
			return "", desc, errors.New("too many levels of symbolic links")
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", desc, bare(err)
		}
		if link == "" {
			return "", desc, errors.New("a symbolic link with an empty target")
		}
		if !filepath.IsAbs(link) && filepath.VolumeName(link) == "" && !os.IsPathSeparator(link[0]) {
			dir, _ := filepath.Split(path)
			link = dir + link
		}
		path = link
	}
}

// descriptor is a path that names an open descriptor rather than a file.
type descriptor struct {
	found bool // the path is a descriptor link
	own   bool // of this process: fd can be duplicated
	fd    int
}

// createTemp starts the replacement of the regular file at path (which
// may not exist yet).
func createTemp(path string, o Options) (*File, error) {
	dir, base := filepath.Split(path)
	old, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return nil, bare(err)
	case !old.Mode().IsRegular():
		// The name led to a regular file or nothing a moment ago.
		return nil, ErrChanged
	default:
		if err := checkWritable(path); err != nil {
			return nil, err
		}
	}
	// A new file with no fixed mode is created with 0666 for the umask to
	// trim; otherwise private until its mode is set below.
	perm := fs.FileMode(0o666)
	if o.Perm != 0 || old != nil {
		perm = 0o600
	}
	if len(base) > 100 {
		base = base[:100]
	}
	var f *os.File
	var tmp string
	for i := 0; ; i++ {
		tmp = dir + "." + base + ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
		// O_APPEND: once published (File.Publish), its writes land at
		// the end of the file even after another process appended to it.
		f, err = os.OpenFile(tmp, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i == 9 {
			return nil, fmt.Errorf("creating a file in %s: %w", dirName(dir), bare(err))
		}
	}
	fail := func(what string, err error) (*File, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("%s: %w", what, bare(err))
	}
	if old != nil {
		keepOwner(f, old)
	}
	switch {
	case o.Perm != 0:
		err = f.Chmod(o.Perm)
	case old != nil:
		err = f.Chmod(old.Mode().Perm())
	}
	if err != nil {
		return fail("setting the file's mode", err)
	}
	return &File{f: f, kind: replace, tmp: tmp, target: path}, nil
}

// checkTarget makes sure that what a rename is about to replace is still
// a regular file, or nothing.
func checkTarget(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return bare(err)
	case !fi.Mode().IsRegular():
		return ErrChanged
	}
	return nil
}

// openCtx opens name; the open of a FIFO, which waits for a reader, is
// abandoned when ctx ends.
func openCtx(ctx context.Context, name string, flag int, perm fs.FileMode, fifo bool) (*os.File, error) {
	if !fifo {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, fmt.Errorf("opening: %w", bare(err))
		}
		return f, nil
	}
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(name, flag, perm)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("opening: %w", bare(r.err))
		}
		return r.f, nil
	case <-ctx.Done():
	}
	// Release the open still waiting, and close what it opened.
	release := unblockFIFO(name)
	go func() {
		r := <-ch
		if r.f != nil {
			r.f.Close()
		}
		release()
	}()
	return nil, ctx.Err()
}

// retryRename renames oldpath to newpath with rename, trying again for
// at most wait while transient says the refusal ends by itself.
func retryRename(rename func(oldpath, newpath string) error, transient func(error) bool, wait time.Duration, oldpath, newpath string) error {
	deadline := time.Now().Add(wait)
	delay := time.Millisecond
	for {
		err := rename(oldpath, newpath)
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// sharingRefusal reports Windows' refusal to rename over a file that
// another process has open without FILE_SHARE_DELETE, as Go's os.Open
// opens files (a reader of the old content, another mcpx reading a
// token, a virus scanner): ERROR_ACCESS_DENIED (5) or
// ERROR_SHARING_VIOLATION (32). It lasts as long as that open, usually
// milliseconds.
func sharingRefusal(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && (errno == 5 || errno == 32)
}

// dirName names the directory part of a path split by filepath.Split.
func dirName(dir string) string {
	if dir == "" {
		return "."
	}
	if len(dir) > 1 && os.IsPathSeparator(dir[len(dir)-1]) && filepath.VolumeName(dir)+string(dir[len(dir)-1]) != dir {
		return dir[:len(dir)-1]
	}
	return dir
}

// bare strips the operation and path an os error carries: a temporary
// file's name means nothing to the user, and callers name the file.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}
