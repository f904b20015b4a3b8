// Package modsource is for tests that ask the go command about the
// module (go list): they read its sources through ReadAll, so that go
// test's cache, which knows only the files a test reads itself, reruns
// them when a source changes instead of replaying a stale pass.
package modsource

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadAll reads every Go file of the module that holds the current
// directory (skipping hidden directories, testdata and node_modules).
func ReadAll(t testing.TB) {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatal("no go.mod above the test's directory")
		}
		root = parent
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go"):
			_, err := os.ReadFile(path)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
