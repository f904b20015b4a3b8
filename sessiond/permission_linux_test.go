package sessiond

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// nobody is the user the permission tests connect as.
const nobody = 65534

func TestMain(m *testing.M) {
	if path := os.Getenv("SESSIOND_TEST_CONNECT"); path != "" {
		os.Exit(connectMain(path))
	}
	os.Exit(m.Run())
}

// connectMain is the test binary run as another user: it tries the
// session at path and prints what happened.
func connectMain(path string) int {
	nc, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("dial:", err)
		return 0
	}
	defer nc.Close()
	lines := transport.NewStream(nc, nc)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	// A refusal may come before the hello is written.
	_ = writeJSON(ctx, lines, hello{Version: protocolVersion, Op: opStatus})
	var r reply
	if err := readJSON(ctx, lines, &r); err != nil {
		fmt.Println("reply:", err)
		return 0
	}
	fmt.Printf("reply: ok=%v error=%s\n", r.OK, r.Error)
	return 0
}

// asNobody runs this test binary as another user against the socket.
func asNobody(t *testing.T, socket string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary's own directory is private: a copy the other user
	// can run.
	bin, err := os.MkdirTemp("", "sdbin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(bin, "helper")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(helper, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, helper, "-test.run=^$")
	cmd.Env = []string{"SESSIOND_TEST_CONNECT=" + socket}
	cmd.Dir = bin
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the helper: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root")
	}
}

// Another user can neither reach the socket (its directory is 0700) nor,
// should its modes be loosened by mistake, use it (peer credentials).
func TestAnotherUserCannotUseTheSession(t *testing.T) {
	needRoot(t)
	h := startHeld(t, Options{}, nil)
	for path, want := range map[string]os.FileMode{h.dir: 0o700, h.d.Socket(): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %04o (%v)", path, fi.Mode().Perm(), want, err)
		}
	}
	// The temp directory's parent of h.dir is /tmp: the other user gets
	// as far as h.dir.
	if got := asNobody(t, h.d.Socket()); !strings.HasPrefix(got, "dial:") || !strings.Contains(got, "permission denied") {
		t.Errorf("another user through the private directory: %s", got)
	}
	if err := os.Chmod(h.dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(h.d.Socket(), 0o666); err != nil {
		t.Fatal(err)
	}
	got := asNobody(t, h.d.Socket())
	if !strings.Contains(got, "ok=false") || !strings.Contains(got, "not private to this user") {
		t.Errorf("another user through loosened modes: %s", got)
	}
	if note := receive(t, h.notes, "the daemon's note"); !strings.Contains(note, "refused a connection") {
		t.Errorf("note %q", note)
	}
}

// A client uses no socket or directory of another user's.
func TestClientRefusesAnotherUsersSocket(t *testing.T) {
	needRoot(t)
	h := startHeld(t, Options{}, nil)
	if err := os.Lchown(h.d.Socket(), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(t.Context(), h.dir, h.name, DialOptions{}); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("Dial a socket of another user's: %v", err)
	}
	if err := os.Lchown(h.d.Socket(), 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(h.dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	defer os.Chown(h.dir, 0, 0)
	if _, err := Dial(t.Context(), h.dir, h.name, DialOptions{}); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("Dial in a directory of another user's: %v", err)
	}
}

func TestDirIsPrivate(t *testing.T) {
	needRoot(t)
	rt := t.TempDir()
	env := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return rt
		}
		return ""
	}
	dir, err := Dir(env)
	if err != nil || dir != filepath.Join(rt, "mcpx") {
		t.Fatalf("Dir: %q, %v", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, %v", fi.Mode().Perm(), err)
	}
	// Ours but loosened: made private again.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(env); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v after Dir", fi.Mode().Perm())
	}
	// Another user's, or a link to one's: refused.
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(env); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("a directory of another user's: %v", err)
	}
	os.Remove(dir)
	if err := os.Symlink(t.TempDir(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(env); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("a symbolic link: %v", err)
	}
}
