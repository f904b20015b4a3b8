package outfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noTemp fails when a temporary file is left in any of dirs.
func noTemp(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("temporary file left behind: %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReplaceKeepsMode(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []fs.FileMode{0o600, 0o640, 0o604} {
		name := filepath.Join(dir, "f"+mode.String())
		if err := os.WriteFile(name, []byte("old content that is longer\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, mode); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(context.Background(), name, []byte("new\n"), Options{}); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, name); got != "new\n" {
			t.Errorf("content %q", got)
		}
		fi, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("mode %v, want %v kept", fi.Mode(), mode)
		}
	}
	noTemp(t, dir)
}

func TestFixedPerm(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(old, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "new.jsonl")
	for _, name := range []string{old, fresh} {
		if err := WriteFile(context.Background(), name, []byte("secret\n"), Options{Perm: 0o600}); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
}

func TestSymlinksAreFollowed(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(b, "target.txt")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// a/link -> ../b/mid (relative), b/mid -> target.txt (relative, in b).
	link := filepath.Join(a, "link")
	if err := os.Symlink("../b/mid", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.txt", filepath.Join(b, "mid")); err != nil {
		t.Fatal(err)
	}
	f, err := Create(context.Background(), link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(f.tmp) != b {
		t.Errorf("temporary file %s is not beside the target in %s", f.tmp, b)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, filepath.Join(b, "mid")} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v %v", l, fi, err)
		}
	}
	if got := mustRead(t, target); got != "new" {
		t.Errorf("target holds %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v, want 0600 kept", fi.Mode().Perm())
	}
	noTemp(t, a, b)

	// A dangling link names the file to create.
	dangling := filepath.Join(a, "dangling")
	if err := os.Symlink("../b/created.txt", dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(context.Background(), dangling, []byte("made"), Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced: %v %v", fi, err)
	}
	if got := mustRead(t, filepath.Join(b, "created.txt")); got != "made" {
		t.Errorf("created %q", got)
	}

	// A loop is an error, not a hang.
	loop := filepath.Join(a, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(context.Background(), loop, []byte("x"), Options{}); err == nil {
		t.Error("a symlink loop was written")
	}
	noTemp(t, a, b)
}

func TestDirectoryIsAnError(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(context.Background(), dir, []byte("x"), Options{})
	if !errors.Is(err, ErrDirectory) {
		t.Fatalf("got %v, want ErrDirectory", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(".", link); err != nil {
		t.Fatal(err)
	}
	if _, err := Append(context.Background(), link, Options{}); !errors.Is(err, ErrDirectory) {
		t.Fatalf("Append through a link: got %v, want ErrDirectory", err)
	}
	noTemp(t, dir)
}

func TestMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(context.Background(), filepath.Join(dir, "no", "out"), []byte("x"), Options{})
	if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("got %v, want a not-exist error that names no temporary file", err)
	}
}

func TestPublishThenStream(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "trace")
	if err := os.WriteFile(name, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(context.Background(), name, Options{Perm: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("header\n"))
	if got := mustRead(t, name); got != "precious" {
		t.Fatalf("replaced before Publish: %q", got)
	}
	if err := f.Publish(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, name); got != "header\n" {
		t.Fatalf("after Publish: %q", got)
	}
	f.Write([]byte("event\n"))
	if got := mustRead(t, name); got != "header\nevent\n" {
		t.Fatalf("streamed write: %q", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	noTemp(t, dir)

	// Abort before Publish leaves the old file and no temporary file.
	f, err = Create(context.Background(), name, Options{Perm: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("discarded"))
	f.Abort()
	if got := mustRead(t, name); got != "header\nevent\n" {
		t.Fatalf("after Abort: %q", got)
	}
	noTemp(t, dir)
}

func TestCancelledBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	os.WriteFile(name, []byte("old"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WriteFile(ctx, name, []byte("new"), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if got := mustRead(t, name); got != "old" {
		t.Errorf("content %q", got)
	}
	noTemp(t, dir)
}

func TestAppend(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "log")
	if err := os.WriteFile(name, []byte("one\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(name, 0o640)
	link := filepath.Join(dir, "link")
	os.Symlink("log", link)
	f, err := Append(context.Background(), link, Options{Perm: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("two\n"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, name); got != "one\ntwo\n" {
		t.Errorf("content %q", got)
	}
	if fi, _ := os.Lstat(name); fi.Mode() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode())
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	fresh := filepath.Join(dir, "fresh")
	f, err = Append(context.Background(), fresh, Options{Perm: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new private file mode %v", fi.Mode().Perm())
	}
}

func TestWriteErrorSticks(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	os.WriteFile(name, []byte("old"), 0o644)
	f, err := Create(context.Background(), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A write that fails (the descriptor is gone underneath): Close
	// reports it, and the old file stays.
	f.f.Close()
	_, err1 := f.Write([]byte("x"))
	if err1 == nil {
		t.Fatal("write succeeded")
	}
	if _, err := f.Write([]byte("y")); err != err1 {
		t.Fatalf("second write: %v, want the first error %v", err, err1)
	}
	if err := f.Close(); err != err1 {
		t.Fatalf("Close after a failed write: %v, want %v", err, err1)
	}
	if got := mustRead(t, name); got != "old" {
		t.Errorf("content %q", got)
	}
	noTemp(t, dir)
}
