package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// TestReplTerminalHostile: the REPL against a server whose text is made to
// harm a terminal (testserver hostile), in an 80-column terminal. Its
// lines on stderr are wrapped at words; a completion list of its values
// holds neither a 10,000-character one, which padded every other with a
// screen of spaces, nor one with a control or invisible character; and a
// tool name with spaces and quotes, completed, makes a command that calls
// it; one that reads as another is not offered. @/dev/stdin, the terminal
// itself, is refused.
func TestReplTerminalHostile(t *testing.T) {
	t.Parallel() // beside the scripts
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	tm := startServerRepl(t, dir, "hostile", "TEST_LOG="+quoteSh(log), "--no-history")
	tm.run("resize-window", "-t", "repl", "-x", "80")
	pane := func() string { return tm.run("capture-pane", "-p", "-t", "repl") }

	// The banner is a note: wrapped at words, not at the 80th column.
	if scr := tm.screen(); !strings.Contains(scr, "mcpx: connected to server\n  name:") {
		t.Errorf("the banner is not wrapped at words:\n%s", scr)
	}

	// Completion values: the plain ones, on one row.
	tm.keys("C-l")
	tm.keys("-l", "prompts get greet who=")
	tm.keys("Tab")
	testwait.For(t, "the values", func() bool { return strings.Contains(pane(), `two\ words`) })
	p := pane()
	for _, bad := range []string{"www", "value:", strings.Repeat(" ", 40) + "\n"} {
		if strings.Contains(p, bad) {
			t.Errorf("the list holds %q:\n%s", bad, p)
		}
	}
	if !strings.Contains(p, `it\'s\ \"quoted\"`) || !strings.Contains(p, "宽字符") {
		t.Errorf("the list lacks a value:\n%s", p)
	}
	tm.keys("C-e", "C-u", "C-l")

	// A name with spaces and quotes, completed, is called.
	tm.keys("-l", "tools call sa")
	tm.keys("Tab")
	testwait.For(t, "the candidates", func() bool { return strings.Contains(pane(), `say\ \"hi\"\ it\'s`) })
	tm.keys("-l", "y")
	tm.keys("Tab")
	testwait.For(t, "the completed name", func() bool { return strings.Contains(pane(), `mcpx> tools call say\ \"hi\"\ it\'s`) })
	tm.keys("Enter")
	tm.waitFor("the call", `called say "hi" it's`)

	// A name that reads as echo (a zero-width space or a left-to-right
	// mark in it) is no candidate: echo alone is, and is completed.
	tm.keys("C-l")
	tm.keys("-l", "tools call ec")
	tm.keys("Tab")
	testwait.For(t, "echo completed", func() bool { return strings.Contains(pane(), "mcpx> tools call echo") })
	if p := pane(); strings.Count(p, "echo") != 1 {
		t.Errorf("the candidates hold a name that reads as echo:\n%s", p)
	}
	tm.keys("C-e", "C-u", "C-l")

	// So are a prompt's and its argument's.
	tm.keys("-l", "prompts get tw")
	tm.keys("Tab")
	testwait.For(t, "the prompt's name", func() bool { return strings.Contains(pane(), `mcpx> prompts get two\ words`) })
	tm.keys("Tab")
	testwait.For(t, "the argument's name", func() bool { return strings.Contains(pane(), `two\ words it\'s=`) })
	tm.keys("-l", "x")
	tm.keys("Enter")
	testwait.For(t, "the prompt got", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), `"arguments":{"it's":"x"},"name":"two words"`)
	})

	// A tool's description in its help is wrapped at words to the
	// terminal, as mcpx tools call NAME --help's is: its 10,000-character
	// word is broken at the terminal's width, not left to the terminal.
	tm.keys("-l", "tools call long --help")
	tm.keys("Enter")
	tm.waitForAfter("the tool's help", "mcpx> tools call long --help", "\nmcpx> ")
	scr := tm.screen()
	for _, l := range strings.Split(scr[strings.LastIndex(scr, "mcpx> tools call long --help"):], "\n") {
		if strings.Contains(l, "www") && utf8.RuneCountInString(l) > 80 {
			t.Errorf("a line of the tool's help takes %d columns, more than the terminal's 80", utf8.RuneCountInString(l))
			break
		}
	}

	// The terminal is what the REPL reads its commands from: @/dev/stdin
	// is refused, as @- is (it read the next line typed, blind).
	tm.keys("-l", "tools call echo --args @/dev/stdin")
	tm.keys("Enter")
	tm.waitFor("the refusal", "/dev/stdin is what the REPL reads its commands from")
	tm.keys("-l", "ping")
	tm.keys("Enter")
	tm.waitForAfter("the next command", "mcpx> ping", "pong")
}
