package sessiond

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/modsource"
)

// TestNoTerminalDependency keeps the session daemon a library: no
// terminal UI or command line of mcpx's, no colours or terminal control.
func TestNoTerminalDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	modsource.ReadAll(t) // go list reads the sources behind go test's cache
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/mcpx-dev/mcpx/sessiond").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/fatih/color", "github.com/tidwall/pretty", "github.com/chzyer/readline", "golang.org/x/term",
		"github.com/mattn/go-isatty", "github.com/spf13/cobra", "github.com/spf13/pflag",
		"github.com/mcpx-dev/mcpx/tui", "github.com/mcpx-dev/mcpx/cmd", "github.com/mcpx-dev/mcpx/repl",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("sessiond depends on %s", pkg)
			}
		}
	}
}
