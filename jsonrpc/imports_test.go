package jsonrpc

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/modsource"
)

// TestImportRules keeps the protocol layers' boundaries: jsonrpc and mcp
// are leaves (the standard library and stdlib-only internal helpers), the
// transport learns ids from jsonrpc and nothing else of mcpx, and the
// engine adds only the transport. Outside the module, only
// golang.org/x/sys, for the system calls package syscall lacks (a
// Windows job object, access(2)).
func TestImportRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/mcpx-dev/mcpx/"
	modsource.ReadAll(t)
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
			if rel == pkg || strings.HasPrefix(dep, "golang.org/x/sys/") {
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
