package outfile

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal and returns its master and the path of
// its slave, a character device that is safe to write to.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var n uint32
	unlock := int32(0)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlockpt: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("ptsname: %v", e)
	}
	return m, "/dev/pts/" + strconv.Itoa(int(n))
}

func TestCharDeviceIsWrittenThrough(t *testing.T) {
	m, pts := openPTY(t)
	before, err := os.Lstat(pts)
	if err != nil {
		t.Skip(err)
	}
	// Through a link, too.
	link := filepath.Join(t.TempDir(), "tty")
	os.Symlink(pts, link)
	for _, name := range []string{pts, link} {
		if err := WriteFile(context.Background(), name, []byte("hi\n"), Options{Perm: 0o600}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		buf := make([]byte, 16)
		m.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := m.Read(buf)
		if err != nil || n == 0 {
			t.Fatalf("the terminal got nothing: %v", err)
		}
		after, err := os.Lstat(pts)
		if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Fatalf("%s changed: %v -> %v (%v)", pts, before.Mode(), after, err)
		}
	}
}
