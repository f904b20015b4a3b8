//go:build unix

package sessiond

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// A session process killed before the session is open (SIGKILL, the OOM
// killer) could not say why it ended: the error says it was killed. mcpx
// connect exited 255 without a word.
func TestStartKilled(t *testing.T) {
	_, err := StartBackground(t.Context(), BackgroundOptions{Path: "/bin/sh", Args: []string{"-c", "kill -KILL $$"}, Stderr: io.Discard})
	var se *StartError
	if !errors.As(err, &se) || se.Killed == "" || !strings.HasPrefix(err.Error(), "the session process was killed before the session was open (signal: killed)") {
		t.Errorf("StartBackground = %v", err)
	}
}
