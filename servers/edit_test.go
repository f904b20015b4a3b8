package servers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestAddRemove(t *testing.T) {
	ctx := context.Background()
	env, _ := osEnv(t)
	path, err := OwnFile(env)
	if err != nil {
		t.Fatal(err)
	}

	// Into a file that does not exist yet.
	everything := &Server{Transport: TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
		Env: map[string]string{"DEBUG": "1"}, Cwd: "~"}
	if err := Add(ctx, path, "everything", everything, false); err != nil {
		t.Fatal(err)
	}
	remote := &Server{Transport: TransportAuto, URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}}
	if err := Add(ctx, path, "remote", remote, false); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v", fi.Mode().Perm())
		}
	}

	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var have []got
	for _, s := range c.Servers {
		have = append(have, project(s))
	}
	diff(t, []got{
		{Ref: "mcpx:everything", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
			Env: map[string]string{"DEBUG": "1"}, Cwd: "~"},
		{Ref: "mcpx:remote", Transport: TransportAuto, URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}},
	}, have)

	// A file with comments is refused, not rewritten without them.
	data, _ := os.ReadFile(path)
	for _, comment := range []string{"// my servers, see mcpx servers --help", "/* my servers */"} {
		commented := strings.Replace(string(data), "{", "{\n  "+comment+"\n", 1)
		write(t, path, commented)
		for what, err := range map[string]error{
			"add":    Add(ctx, path, "other", remote, false),
			"remove": Remove(ctx, path, "remote"),
		} {
			var ce *CommentsError
			if !errors.As(err, &ce) || ce.Path != path || ce.Line != 2 || !strings.Contains(err.Error(), "edit the file by hand") {
				t.Errorf("%s with %s: %v", what, comment, err)
			}
		}
		if got, _ := os.ReadFile(path); string(got) != commented {
			t.Errorf("the file with comments was changed:\n%s", got)
		}
	}
	// Trailing commas and a "//" in a string are no comments; the other
	// fields and the order of the entries stay.
	withCommas := strings.Replace(string(data), "{", `{"$schema": "https://example.com/a//b.json",`, 1)
	withCommas = strings.Replace(withCommas, `"Bearer ${env:TOKEN}"`, `"Bearer ${env:TOKEN}",`, 1)
	write(t, path, withCommas)

	err = Add(ctx, path, "remote", &Server{Transport: TransportHTTP, URL: "https://other.example.com/mcp"}, false)
	if !errors.Is(err, ErrExists) {
		t.Fatalf("adding an existing name: %v", err)
	}
	if err := Add(ctx, path, "remote", &Server{Transport: TransportSSE, URL: "https://other.example.com/sse"}, true); err != nil {
		t.Fatal(err)
	}
	if err := Remove(ctx, path, "everything"); err != nil {
		t.Fatal(err)
	}
	if err := Remove(ctx, path, "everything"); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing a missing name: %v", err)
	}
	if err := Add(ctx, path, "a-last", everything, false); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	schema, remoteAt, lastAt := strings.Index(string(data), `"$schema": "https://example.com/a//b.json"`), strings.Index(string(data), `"remote"`), strings.Index(string(data), `"a-last"`)
	if schema < 0 || remoteAt < 0 || lastAt < remoteAt {
		t.Errorf("the other field or the order is lost:\n%s", data)
	}
	if err := Remove(ctx, path, "a-last"); err != nil {
		t.Fatal(err)
	}
	c = load(t, env)
	have = nil
	for _, s := range c.Servers {
		have = append(have, project(s))
	}
	diff(t, []got{{Ref: "mcpx:remote", Transport: TransportSSE, URL: "https://other.example.com/sse"}}, have)

	// Refusals: a bad name, an incomplete definition, a broken file.
	for _, name := range []string{"", "-x", ".x", "a b", "a:b", "@a", "a/b"} {
		if err := Add(ctx, path, name, remote, false); !errors.Is(err, ErrBadName) {
			t.Errorf("name %q: %v", name, err)
		}
	}
	for _, s := range []*Server{{Transport: TransportStdio}, {Transport: TransportHTTP, URL: "ftp://x"}, {Transport: TransportHTTP, URL: "/mcp"}, {Transport: "ws", URL: "https://x"},
		{Transport: TransportHTTP, URL: "unix://"}} {
		if err := Add(ctx, path, "x", s, false); err == nil {
			t.Errorf("%+v was added", s)
		}
	}
	// A server on a Unix socket, as VS Code writes one.
	if err := Add(ctx, path, "sock", &Server{Transport: TransportAuto, URL: "unix:///tmp/s.sock#/mcp"}, false); err != nil {
		t.Errorf("a unix:// URL: %v", err)
	}
	write(t, path, `{"mcpServers": {`)
	if err := Add(ctx, path, "x", remote, false); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("broken file: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"mcpServers": {` {
		t.Errorf("the broken file was changed: %s", data)
	}
}

// TestAddConcurrent: servers add run twice at once used to lose one of the
// entries (each read the old file and wrote it back with its own entry
// only); 20 at once kept 8. Every entry is kept now, and so is every
// trust record.
func TestAddConcurrent(t *testing.T) {
	ctx := context.Background()
	env, _ := osEnv(t)
	path, err := OwnFile(env)
	if err != nil {
		t.Fatal(err)
	}
	store := NewTrustStore(filepath.Join(filepath.Dir(path), "trusted.json"))
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("s%d", i)
			if err := Add(ctx, path, name, &Server{Transport: TransportStdio, Command: "echo", Args: []string{name}}, false); err != nil {
				t.Error(err)
			}
			s := &Server{Name: name, Source: Source{Path: "/p/.mcp.json"}, Transport: TransportStdio, Command: "echo", Hash: name}
			if err := store.Trust(ctx, s); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	if len(c.Servers) != n {
		t.Errorf("%d servers in the file after %d concurrent adds, want all of them", len(c.Servers), n)
	}
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		ok, err := store.Trusted(&Server{Name: name, Source: Source{Path: "/p/.mcp.json", Kind: KindClaudeCode}, Transport: TransportStdio, Command: "echo", Hash: name})
		if err != nil || !ok {
			t.Errorf("trust of %s lost (%v)", name, err)
		}
	}
}

// TestRemoveFromNoFile: removing from a servers.json that does not exist
// is ErrNotFound, and creates nothing (it used to create the directory
// and the lock file).
func TestRemoveFromNoFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcpx")
	err := Remove(context.Background(), filepath.Join(dir, "servers.json"), "nope")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s was created (%v)", dir, err)
	}
}

// TestRemoveDuplicate: of a name written twice in mcpx's file (by hand,
// or pasted), Remove took out the first entry and reported success, while
// the last one, the one Load reads, stayed: mcpx servers remove NAME
// succeeded and NAME was still there, unchanged. Every entry of the name
// goes now.
func TestRemoveDuplicate(t *testing.T) {
	ctx := context.Background()
	env, _ := osEnv(t)
	path, err := OwnFile(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, path, `{"mcpServers": {"d": {"command": "first"}, "keep": {"command": "k"}, "d": {"command": "second"}}}`)
	if err := Remove(ctx, path, "d"); err != nil {
		t.Fatal(err)
	}
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	if len(c.Servers) != 1 || c.Servers[0].Name != "keep" {
		for _, s := range c.Servers {
			t.Errorf("left: %s (%s)", s.Name, s.Command)
		}
	}
}
