package record

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/modsource"
)

// TestDependencies keeps record (and recordtest) what a server or client
// author can import into their tests at little cost: the transport, the
// JSON-RPC layer and the MCP vocabulary, never mcpx's session, terminal
// UI or command line, nor the libraries those use (colours, text
// shaping, JSON Schema, pretty-printing, line editing, flags).
func TestDependencies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go list")
	}
	modsource.ReadAll(t) // go list reads the sources behind go test's cache
	pkgs, err := exec.CommandContext(t.Context(), "go", "list", "github.com/mcpx-dev/mcpx/record/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	// record/sdktest, the adapter for the official Go SDK, is the one
	// package that brings the SDK along; nothing else may.
	args := []string{"list", "-deps"}
	for _, p := range strings.Fields(string(pkgs)) {
		if p != "github.com/mcpx-dev/mcpx/record/sdktest" {
			args = append(args, p)
		}
	}
	out, err := exec.CommandContext(t.Context(), "go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/fatih/color", "golang.org/x/text", "github.com/santhosh-tekuri/jsonschema", "github.com/google/jsonschema-go",
		"github.com/tidwall/pretty", "github.com/chzyer/readline", "github.com/spf13/cobra",
		"github.com/mcpx-dev/mcpx/inspector", "github.com/mcpx-dev/mcpx/tui", "github.com/mcpx-dev/mcpx/cmd",
		"github.com/modelcontextprotocol/go-sdk",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("record depends on %s", pkg)
			}
		}
	}
}
