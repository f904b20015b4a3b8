// Package modsource is for tests that run the go command on the module
// (go list, go run, go build): they read its sources through ReadAll, so
// that go test's cache, which knows only the files a test reads itself,
// reruns them when a source changes instead of replaying a stale pass.
package modsource

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Root returns the directory of the module that holds the current
// directory: the nearest one above it with a go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// ReadAll reads every Go file of the module, testdata's included (test
// servers are built from there), and its go.mod and go.sum, skipping
// hidden directories and node_modules.
func ReadAll(t testing.TB) {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "node_modules"):
			return filepath.SkipDir
		case !d.IsDir() && (strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum"):
			_, err := os.ReadFile(path)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
