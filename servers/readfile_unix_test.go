//go:build unix

package servers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// TestLoadHostileProjectFiles: a repository can ship .mcp.json as a link
// to /dev/zero (which never ends: mcpx ran out of memory and crashed with
// a stack trace), as a named pipe (mcpx blocked forever, even on SIGTERM),
// or as a file too large to read. Each is a warning; the other files load.
func TestLoadHostileProjectFiles(t *testing.T) {
	ws := t.TempDir()
	home := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(ws, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, ".cursor", "mcp.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(ws, ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk used.
	if err := big.Truncate(maxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	if err := os.MkdirAll(filepath.Join(ws, ".vscode", "mcp.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cursor", "mcp.json"), []byte(`{"mcpServers": {"ok": {"command": "echo"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := &Env{GOOS: runtime.GOOS, Home: home, Workspace: ws, FS: osFS{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan *Catalog, 1)
	go func() {
		c, err := Load(ctx, env)
		if err != nil {
			t.Error(err)
		}
		done <- c
	}()
	var c *Catalog
	select {
	case c = <-done:
	case <-ctx.Done():
		// Unblock the FIFO so that the goroutine ends.
		if f, err := os.OpenFile(filepath.Join(ws, ".cursor", "mcp.json"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("Load blocked on a project file")
	}
	if c == nil {
		return
	}
	if len(c.Servers) != 1 || c.Servers[0].Name != "ok" {
		t.Errorf("servers = %v, want the one of ~/.cursor/mcp.json", c.Servers)
	}
	checkWarnings(t, c.Warnings,
		".mcp.json: cannot be read: is not a regular file",
		".cursor/mcp.json: cannot be read: is not a regular file",
		".gemini/settings.json: cannot be read: is larger than 128 MiB",
		".vscode/mcp.json: cannot be read: is a directory")
}

// TestEditOwnNotRegular: servers add refuses a servers.json that is a
// link to /dev/zero rather than reading it without end.
func TestEditOwnNotRegular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.json")
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
	err := Add(context.Background(), path, "x", &Server{Transport: TransportStdio, Command: "echo"}, false)
	if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("Add = %v, want ErrNotRegular", err)
	}
}

// TestEnvFileFIFO: an envFile may be a named pipe (1Password mounts .env
// files so, writing them once the read is authorized); a device is not
// read.
func TestEnvFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "app.env")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	env := &Env{GOOS: runtime.GOOS, Home: dir, Workspace: dir, FS: osFS{}}
	s := &Server{Name: "s", Source: Source{ID: "mcpx", Kind: KindMcpx, Path: filepath.Join(dir, "servers.json")},
		Transport: TransportStdio, Command: "x", EnvFile: fifo}
	wrote := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err == nil {
			_, err = f.WriteString("TOKEN=from-the-pipe\n")
			f.Close()
		}
		wrote <- err
	}()
	l, err := Resolve(context.Background(), env, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if l.Env["TOKEN"] != "from-the-pipe" {
		t.Errorf("env = %v", l.Env)
	}
	s.EnvFile = "/dev/zero"
	if _, err := Resolve(context.Background(), env, s, nil); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("envFile /dev/zero: %v", err)
	}
}

// TestEnvFileFIFOInterrupted: an envFile that is a named pipe nobody
// writes made mcpx wait for ever, deaf to Ctrl-C (the open of a FIFO
// waits for a writer, and the read for the writer's data). The wait ends
// with the context — before the open, during it (after the note that it
// waits), and during the read — and leaves no reader behind.
func TestEnvFileFIFOInterrupted(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "app.env")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{Name: "s", Source: Source{ID: "mcpx", Kind: KindMcpx, Path: filepath.Join(dir, "servers.json")},
		Transport: TransportStdio, Command: "x", EnvFile: fifo}
	noReader := func() bool {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			f.Close()
		}
		return errors.Is(err, syscall.ENXIO)
	}
	resolveUntil := func(what string, env *Env, ctx context.Context) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := Resolve(ctx, env, s, nil)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "envFile "+fifo+": the named pipe was not written: context canceled") {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Resolve did not return", what)
		}
		testwait.For(t, what+": the reader gone", noReader)
	}

	// Cancelled before.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resolveUntil("cancelled before", &Env{GOOS: runtime.GOOS, Home: dir, FS: osFS{}}, ctx)

	// Cancelled while the open waits, once told.
	ctx, cancel = context.WithCancel(context.Background())
	var told []string
	env := &Env{GOOS: runtime.GOOS, Home: dir, FS: osFS{}, OnWait: func(p string) { told = append(told, p); cancel() }}
	resolveUntil("cancelled while the open waits", env, ctx)
	if len(told) != 1 || told[0] != fifo {
		t.Errorf("OnWait told %q, want once %s", told, fifo)
	}

	// Cancelled while the read waits: the writer opened and writes
	// nothing.
	ctx, cancel = context.WithCancel(context.Background())
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			t.Error(err)
		}
		opened <- f
		cancel()
	}()
	resolveUntil("cancelled while the read waits", &Env{GOOS: runtime.GOOS, Home: dir, FS: osFS{}}, ctx)
	if f := <-opened; f != nil {
		f.Close()
	}
}
