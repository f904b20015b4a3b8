package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
)

// Colour follows --color, then NO_COLOR and TERM=dumb, then whether the
// stream is a terminal.
func TestColorEnabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode string
		env  map[string]string
		tty  bool
		want bool
	}{
		{"auto", nil, true, true},
		{"auto", nil, false, false},
		{"auto", map[string]string{"NO_COLOR": "1"}, true, false},
		{"auto", map[string]string{"TERM": "dumb"}, true, false},
		{"always", map[string]string{"NO_COLOR": "1", "TERM": "dumb"}, false, true},
		{"never", nil, true, false},
	} {
		ios, _, _ := NewTestIOStreams(tc.env)
		if got := ios.colorEnabled(tc.mode, tc.tty); got != tc.want {
			t.Errorf("--color %s, env %v, terminal %v: colour %v, want %v", tc.mode, tc.env, tc.tty, got, tc.want)
		}
	}
}

// On a terminal, progress is a bar redrawn in place with an escape
// sequence; on one that says it understands none (TERM=dumb), or with
// NO_COLOR and --color never, no escape sequence reaches it at all: the
// bar's erase-line is no colour, and a dumb terminal printed it as text.
func TestNoEscapesOnADumbTerminal(t *testing.T) {
	t.Parallel()
	total := 2.0
	for _, tc := range []struct {
		env   map[string]string
		color string
		want  bool
	}{
		{map[string]string{"TERM": "xterm"}, "auto", true},
		{map[string]string{"TERM": "dumb"}, "auto", false},
		{map[string]string{"TERM": "dumb", "NO_COLOR": "1"}, "never", false},
	} {
		ios, _, errOut := NewTestIOStreams(tc.env)
		ios.ErrTTY = true
		con := newConsole(ios, output{color: tc.color}, nil)
		con.Progress("slow", inspector.Progress{Progress: 1, Total: &total})
		con.Warn("a warning")
		con.Progress("slow", inspector.Progress{Progress: 2, Total: &total})
		con.ClearProgress()
		if got := strings.Contains(errOut.String(), "\x1b"); got != tc.want {
			t.Errorf("env %v, --color %s: escape sequences %v, want %v:\n%q", tc.env, tc.color, got, tc.want, errOut)
		}
		if !tc.want && strings.Count(errOut.String(), "progress: ") != 2 {
			t.Errorf("env %v: progress not one line per update:\n%q", tc.env, errOut)
		}
	}
}

// Output to a pipe or a file holds no escape sequence, whatever the
// command prints: results, errors, warnings, -v and --wire.
func TestNoEscapesInPipes(t *testing.T) {
	t.Parallel()
	server := []string{"--", os.Args[0], stdioServerArg}
	for _, args := range [][]string{
		{"info", "-v"}, {"tools", "list"}, {"tools", "call", "echo", "message=hi", "--wire"}, {"tools", "call", "nosuch"},
		{"prompts", "list"}, {"resources", "read", "test://nosuch"}, {"ping", "--bogus"},
	} {
		r := runMcpx(t, map[string]string{"TERM": "xterm-256color"}, append(args, server...)...)
		if strings.Contains(r.stdout+r.stderr, "\x1b") {
			t.Errorf("mcpx %s: an escape sequence in a pipe:\nstdout %q\nstderr %q", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
}
