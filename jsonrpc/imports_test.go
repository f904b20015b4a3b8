package jsonrpc

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportRules keeps the protocol layers' boundaries: jsonrpc and mcp
// are leaves (the standard library and stdlib-only internal helpers), the
// transport learns ids from jsonrpc and nothing else of mcpx, and the
// engine adds only the transport.
func TestImportRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/mcpx-dev/mcpx/"
	readSources(t)
	allowed := map[string][]string{
		"jsonrpc":      {"internal/rawjson"},
		"mcp":          {"internal/rawjson", "internal/httptoken"},
		"transport":    {"jsonrpc", "internal/"},
		"jsonrpc/peer": {"jsonrpc", "transport", "internal/"},
	}
	for pkg, allow := range allowed {
		out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
	deps:
		for _, dep := range strings.Fields(string(out)) {
			rel, ours := strings.CutPrefix(dep, mod)
			if rel == pkg {
				continue
			}
			if ours {
				for _, a := range allow {
					if rel == a || strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a) {
						continue deps
					}
				}
			}
			t.Errorf("%s imports %s", pkg, dep)
		}
	}
}

// readSources reads the module's Go files. go list reads them behind the
// go command's back, so without this a cached pass of the test survives a
// change that breaks a rule (go test reruns a test when a file it read
// changed).
func readSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules"):
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
