//go:build unix

package outfile

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestNewFileGetsUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	name := filepath.Join(dir, "new")
	if err := WriteFile(context.Background(), name, []byte("x"), Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0666 minus umask 027 = 0640", fi.Mode().Perm())
	}
	syscall.Umask(0)
	name = filepath.Join(dir, "new0")
	if err := WriteFile(context.Background(), name, []byte("x"), Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o666 {
		t.Errorf("mode %v, want 0666 with umask 0", fi.Mode().Perm())
	}
	// A private file is private whatever the umask.
	name = filepath.Join(dir, "private")
	if err := WriteFile(context.Background(), name, []byte("x"), Options{Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("private mode %v", fi.Mode().Perm())
	}
}

func mkfifo(t *testing.T, name string) {
	t.Helper()
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
}

func isFIFO(t *testing.T, name string) {
	t.Helper()
	fi, err := os.Lstat(name)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer a FIFO: %v %v", name, fi, err)
	}
}

func TestFIFOIsWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	link := filepath.Join(dir, "link")
	os.Symlink("fifo", link)
	for _, name := range []string{fifo, link} {
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(f)
			// Closed before the result is in: a reader still open when the
			// next round's write opens the FIFO would take it in place of
			// that round's reader, which would then wait for ever.
			f.Close()
			got <- string(b)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := WriteFile(ctx, name, []byte("through the pipe"), Options{Perm: 0o600})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-got:
			if s != "through the pipe" {
				t.Errorf("the reader got %q", s)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the reader got nothing")
		}
		isFIFO(t, fifo)
		if fi, _ := os.Lstat(fifo); fi.Mode().Perm() != 0o600 {
			t.Errorf("FIFO mode changed to %v", fi.Mode().Perm())
		}
	}
	noTemp(t, dir)
}

func TestFIFOWithoutReaderIsInterruptible(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- WriteFile(ctx, fifo, []byte("x"), Options{}) }()
	select {
	case err := <-done:
		t.Fatalf("returned before its reader came or the context ended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling did not end the wait for a reader")
	}
	isFIFO(t, fifo)
	noTemp(t, dir)
}

// TestDevNull checks that /dev/null (and a link to it) is written
// through. The decision is checked first, so that a regression can never
// get as far as replacing the machine's /dev/null (the tests may run as
// root).
func TestDevNull(t *testing.T) {
	before, err := os.Lstat("/dev/null")
	if err != nil || before.Mode()&fs.ModeCharDevice == 0 {
		t.Skip("no /dev/null character device")
	}
	link := filepath.Join(t.TempDir(), "null")
	os.Symlink("/dev/null", link)
	for _, name := range []string{"/dev/null", link} {
		tg, err := inspect(name)
		if err != nil || !tg.direct {
			t.Fatalf("%s: would not be written through (%+v, %v)", name, tg, err)
		}
		if err := WriteFile(context.Background(), name, []byte("gone"), Options{Perm: 0o600}); err != nil {
			t.Fatal(err)
		}
		if err := closeAppended(Append(context.Background(), name, Options{})); err != nil {
			t.Fatal(err)
		}
		after, err := os.Lstat("/dev/null")
		if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Fatalf("/dev/null changed: %v -> %v (%v)", before.Mode(), after, err)
		}
	}
}

// closeAppended writes to and closes what Append opened.
func closeAppended(f *File, err error) error {
	if err != nil {
		return err
	}
	f.Write([]byte("x"))
	return f.Close()
}

func TestOwnDescriptors(t *testing.T) {
	// A pipe: /dev/fd/N writes into it.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	name := "/dev/fd/" + strconv.Itoa(int(w.Fd()))
	if _, err := os.Stat(name); err != nil {
		w.Close()
		t.Skipf("no /dev/fd: %v", err)
	}
	if err := WriteFile(context.Background(), name, []byte("piped"), Options{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, _ := io.ReadAll(r); string(b) != "piped" {
		t.Errorf("the pipe got %q", b)
	}

	// A regular file opened for appending (a shell's >>): the output is
	// added where the descriptor points, the file is not replaced.
	dir := t.TempDir()
	logName := filepath.Join(dir, "log")
	os.WriteFile(logName, []byte("earlier\n"), 0o644)
	lf, err := os.OpenFile(logName, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	before, _ := os.Stat(logName)
	if err := WriteFile(context.Background(), "/dev/fd/"+strconv.Itoa(int(lf.Fd())), []byte("later\n"), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, logName); got != "earlier\nlater\n" {
		t.Errorf("log holds %q", got)
	}
	if after, _ := os.Stat(logName); !os.SameFile(before, after) {
		t.Error("the file behind the descriptor was replaced")
	}
	noTemp(t, dir, "/dev/fd")
}

func TestTargetTurnedFIFOIsNotReplaced(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	os.WriteFile(name, []byte("old"), 0o644)
	f, err := Create(context.Background(), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	os.Remove(name)
	mkfifo(t, name)
	if err := f.Close(); !errors.Is(err, ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	isFIFO(t, name)
	noTemp(t, dir)
}

// TestFailedWriteKeepsOldFile makes a real write fail: the file size
// limit (RLIMIT_FSIZE) turns writes past it into EFBIG (Go ignores the
// SIGXFSZ that comes with it).
func TestFailedWriteKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = 64 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	err := WriteFile(context.Background(), name, make([]byte, 1<<20), Options{})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("got %v, want EFBIG", err)
	}
	if got := mustRead(t, name); got != "old" {
		t.Errorf("content %q", got[:min(len(got), 20)])
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	noTemp(t, dir)
}

func TestReadOnlyFileIsNotReplaced(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any file")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "ro")
	os.WriteFile(name, []byte("keep"), 0o444)
	if err := WriteFile(context.Background(), name, []byte("x"), Options{}); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("got %v, want permission denied", err)
	}
	if got := mustRead(t, name); got != "keep" {
		t.Errorf("content %q", got)
	}
	noTemp(t, dir)
}
