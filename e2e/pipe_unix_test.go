//go:build unix

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClosedStdoutIsQuiet runs mcpx with standard output a pipe whose
// reader is gone (mcpx … | head -1 once head has exited): every kind of
// run ends quietly with status 0, whether it set up its signal handling
// (a command) or not (help and the version, which only print), rather
// than being killed by SIGPIPE (status 141 in a shell with pipefail).
func TestClosedStdoutIsQuiet(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--help"},
		{"--version"},
		{"tools", "call", "--help"},
		{"help", "flags"},
		{"completion", "bash"},
		{"servers", "--json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer w.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			c := exec.CommandContext(ctx, filepath.Join(binDir, "mcpx"), args...)
			// No configuration files: servers lists none, from nowhere.
			home := t.TempDir()
			c.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
			c.Dir = home
			var stderr bytes.Buffer
			c.Stdout, c.Stderr = w, &stderr
			err = c.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("mcpx %s with a closed stdout: %v (want exit 0); stderr: %q", strings.Join(args, " "), ee, stderr.String())
			} else if err != nil {
				t.Fatal(err)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %q, want nothing", stderr.String())
			}
		})
	}
}
