package ttyin

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// What was typed on a terminal before Discard is gone; what is typed after
// is read.
func TestDiscard(t *testing.T) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	typed := "y\nyes\n"
	if _, err := master.Write([]byte(typed)); err != nil {
		t.Fatal(err)
	}
	// The terminal's line discipline takes what the master wrote
	// asynchronously: wait until the slave has it all to read.
	testwait.For(t, "the terminal to hold what was typed", func() bool {
		queued, err := unix.IoctlGetInt(int(slave.Fd()), unix.TIOCINQ)
		return err == nil && queued == len(typed)
	})
	if err := Discard(slave); err != nil {
		t.Fatal(err)
	}
	if _, err := master.Write([]byte("n\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_ = slave.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := slave.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if string(buf[:got]) != "n\n" {
		t.Errorf("read %q after Discard, want only what came after it, \"n\\n\"", buf[:got])
	}
}
