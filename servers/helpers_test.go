package servers

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mapFS is a file system of the given files, keyed by path in the
// separators of the environment under test.
type mapFS map[string]string

func (m mapFS) ReadFile(name string) ([]byte, error) {
	if s, ok := m[name]; ok {
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Stat finds a file of m, or a directory: the start of a file's path.
// Only whether it exists is used (ProjectRoot), so no FileInfo is given.
func (m mapFS) Stat(name string) (fs.FileInfo, error) {
	for k := range m {
		if k == name || strings.HasPrefix(k, name+"/") || strings.HasPrefix(k, name+`\`) {
			return nil, nil
		}
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadDir lists the files of m directly in name (the names only: what
// readDirFS's users look at).
func (m mapFS) ReadDir(name string) ([]fs.DirEntry, error) {
	seen := map[string]bool{}
	var out []fs.DirEntry
	for k := range m {
		rest, ok := strings.CutPrefix(k, name+"/")
		if !ok {
			rest, ok = strings.CutPrefix(k, name+`\`)
		}
		if !ok {
			continue
		}
		base, _, isDir := strings.Cut(strings.ReplaceAll(rest, `\`, "/"), "/")
		if !seen[base] {
			seen[base] = true
			out = append(out, dirEntry{name: base, dir: isDir})
		}
	}
	if len(out) == 0 {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return out, nil
}

// dirEntry is an entry of a mapFS directory.
type dirEntry struct {
	name string
	dir  bool
}

func (d dirEntry) Name() string { return d.name }
func (d dirEntry) IsDir() bool  { return d.dir }
func (d dirEntry) Type() fs.FileMode {
	if d.dir {
		return fs.ModeDir
	}
	return 0
}
func (d dirEntry) Info() (fs.FileInfo, error) { return nil, fs.ErrInvalid }

// linuxEnv is Ada's Linux machine, working in ~/proj.
func linuxEnv(files mapFS, vars map[string]string) *Env {
	return &Env{GOOS: "linux", Home: "/home/ada", Workspace: "/home/ada/proj",
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }, FS: files}
}

// got is what a test compares of a Server.
type got struct {
	Ref       string
	Transport Transport
	Command   string
	Args      []string
	Env       map[string]string
	EnvFile   string
	Cwd       string
	URL       string
	Headers   map[string]string
	Timeout   time.Duration
	Disabled  bool
}

func project(s *Server) got {
	return got{Ref: s.Ref(), Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env, EnvFile: s.EnvFile,
		Cwd: s.Cwd, URL: s.URL, Headers: s.Headers, Timeout: s.Timeout, Disabled: s.Disabled}
}

func load(t *testing.T, env *Env) *Catalog {
	t.Helper()
	c, err := Load(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkWarnings fails unless each want is a substring of one warning (in
// order of the wants, each warning used once) and no other warning came.
func checkWarnings(t *testing.T, warns []Warning, want ...string) {
	t.Helper()
	var texts []string
	for _, w := range warns {
		texts = append(texts, w.String())
	}
	used := make([]bool, len(texts))
	for _, w := range want {
		found := false
		for i, s := range texts {
			if !used[i] && strings.Contains(s, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("no warning contains %q; warnings:\n%s", w, strings.Join(texts, "\n"))
		}
	}
	for i, s := range texts {
		if !used[i] {
			t.Errorf("unexpected warning: %s", s)
		}
	}
}

func diff(t *testing.T, want, have any) {
	t.Helper()
	if d := cmp.Diff(want, have, cmp.AllowUnexported(Input{})); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}
