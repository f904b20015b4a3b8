package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/modsource"
)

// TestReadmeQuickStart runs the commands of README's "Quick start"
// exactly as written there (./mcpx being the binary under test, run from
// the repository) and checks that none prints a stray line on stderr:
// only what the command is about (--wire's frames, the countdown's
// progress) may be there. The server command the commands share, go run
// ./examples/demo-server, is run as written by the first of them; the
// others get the same server prebuilt (as quickstart.txtar does), since
// each go run costs about ten times the CPU of the command it serves.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel() // beside the scripts
	modsource.ReadAll(t)
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`(?s)\n## Quick start\n(.*?)\n## `).FindSubmatch(b)
	if section == nil {
		t.Fatal("README.md has no Quick start section")
	}
	var commands []string
	for _, line := range strings.Split(string(section[1]), "\n") {
		if cmd, ok := strings.CutPrefix(line, "    ./mcpx "); ok {
			commands = append(commands, cmd)
		}
	}
	if len(commands) < 5 {
		t.Fatalf("found only %d ./mcpx commands in the Quick start", len(commands))
	}
	progress := regexp.MustCompile(`^progress: \d+/\d+ \(\d+%\)`)
	const goRun = " -- go run ./examples/demo-server"
	ranGo := false
	for _, cmd := range commands {
		line := cmd
		if strings.HasSuffix(cmd, goRun) {
			if ranGo {
				line = strings.TrimSuffix(cmd, goRun) + " -- " + quoteSh(filepath.Join(binDir, "demo-server"))
			}
			ranGo = true
		}
		t.Run(cmd, func(t *testing.T) {
			t.Parallel() // each runs a server of its own
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c := exec.CommandContext(ctx, "sh", "-c", quoteSh(filepath.Join(binDir, "mcpx"))+" "+line)
			c.Dir = repoRoot
			c.Env = append(append(os.Environ(), goEnv...), "NO_COLOR=1")
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			if err := c.Run(); err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			if stdout.Len() == 0 {
				t.Errorf("no output on stdout")
			}
			if strings.Contains(cmd, "--wire") {
				return // stderr is the wire
			}
			for _, l := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
				if l != "" && !(strings.Contains(cmd, "countdown") && progress.MatchString(l)) {
					t.Errorf("stray line on stderr: %q", l)
				}
			}
		})
	}
}
