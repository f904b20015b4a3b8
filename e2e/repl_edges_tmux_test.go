package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/modsource"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// TestReplTerminalEdges drives the REPL in a real terminal (tmux, as
// TestReplTerminal) against testserver rough, for the rough edges a new
// user met in it: the banner before the first prompt, commands that make
// no sense in a session, a log message during a search (Ctrl-R), lines
// that arrive during a form, the review of a sampling reply, progress
// after Ctrl-C, and the history of a command of several lines. It needs
// tmux only; it skips without it unless MCPX_REQUIRE_INTEROP=1.
func TestReplTerminalEdges(t *testing.T) {
	t.Parallel() // beside the scripts
	modsource.ReadAll(t)
	tmuxBin := tmuxPath(t)
	dir := t.TempDir()
	statusFile := filepath.Join(dir, "status")
	trigger := filepath.Join(dir, "ask-trigger")
	later := filepath.Join(dir, "later-trigger")
	mcpx := strings.Join([]string{
		"env", "PATH=" + quoteSh(os.Getenv("PATH")), "GORACE=atexit_sleep_ms=0", "NO_COLOR=1", "TEST_ASK_TRIGGER=" + quoteSh(trigger), "TEST_LATER_TRIGGER=" + quoteSh(later),
		"MCPX_HISTORY_FILE=" + quoteSh(filepath.Join(dir, "history")),
		quoteSh(filepath.Join(binDir, "mcpx")), "repl", "--", quoteSh(filepath.Join(binDir, "testserver")), "rough",
	}, " ")
	tm := startTmux(t, tmuxBin, dir, "clear; "+mcpx+"; echo $? > "+quoteSh(statusFile)+"; exec sleep 600")

	// One line before the first prompt.
	tm.waitFor("the prompt", "mcpx> ")
	before := strings.TrimSpace(tm.screen()[:strings.Index(tm.screen(), "mcpx> ")])
	if n := strings.Count(before, "\n") + 1; before == "" || n != 1 || !strings.HasPrefix(before, "mcpx: connected to testserver-rough") {
		t.Errorf("before the first prompt, want one line (connected to …), got %d:\n%s", n, before)
	}

	// replay is neither offered nor run.
	tm.keys("-l", "replay trace.jsonl")
	tm.keys("Enter")
	tm.waitFor("the refusal", "mcpx: replay is not available in the REPL")
	tm.waitForAfter("the prompt after the refusal", "not available in the REPL", "mcpx> ")

	// A search (Ctrl-R) goes on when a log message arrives: the message is
	// printed above, the line and the search's prompt below it again.
	tm.keys("-l", "tools call later")
	tm.keys("Enter")
	tm.waitForAfter("the prompt after later", "news will follow", "mcpx> ")
	tm.keys("C-r")
	tm.keys("-l", "repl")
	tm.waitFor("the search", "bck-i-search: repl")
	if err := os.WriteFile(later, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tm.waitForAfter("the search after the news", "news between commands", "mcpx> replay trace.jsonl\nbck-i-search: repl")
	tm.keys("-l", "ay")
	tm.waitForAfter("the search going on", "news between commands", "bck-i-search: replay")
	tm.keys("C-g")

	// A log message and progress that arrive while a form is open wait
	// for its end.
	tm.keys("-l", "tools call ask")
	tm.keys("Enter")
	tm.waitFor("the form", "[a]nswer, [d]ecline or [c]ancel?")
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the server to send its news", func() bool {
		_, err := os.Stat(trigger + ".sent")
		return err == nil
	})
	tm.keys("-l", "a")
	tm.keys("Enter")
	tm.waitFor("the field", "Your name")
	tm.keys("-l", "Ada")
	tm.keys("Enter")
	tm.waitFor("the review", "Send it?")
	tm.keys("-l", "s")
	tm.keys("Enter")
	tm.waitFor("the result", `got {"action":"accept","content":{"name":"Ada"}}`)
	scr := tm.screen()
	form := scr[strings.LastIndex(scr, "asks for information"):]
	news := strings.Index(form, "news during the form")
	if news < 0 || news < strings.Index(form, "Send it?") {
		t.Errorf("the log message that arrived during the form is not after it:\n%s", form)
	}

	// A sampling reply is shown back for review: edited, then sent.
	tm.keys("-l", "tools call sample")
	tm.keys("Enter")
	tm.waitFor("the sampling request", "Capital of France?")
	tm.keys("-l", "Lyon")
	tm.keys("Enter")
	tm.keys("Enter")
	tm.waitFor("the review", "Send it to the server? [s]end, [e]dit or [d]ecline:")
	tm.keys("-l", "e")
	tm.keys("Enter")
	tm.waitFor("the edit", "Type the reply again")
	tm.keys("-l", "Paris")
	tm.keys("Enter")
	tm.keys("Enter")
	tm.waitForAfter("the second review", "Type the reply again", "Send it to the server?")
	tm.keys("-l", "s")
	tm.keys("Enter")
	tm.waitFor("the result", `got {"content":{"text":"Paris","type":"text"}`)

	// After Ctrl-C, the call's late progress is dropped; the log message
	// the server sends after it is shown (so the progress came before).
	tm.keys("-l", "tools call stubborn")
	tm.keys("Enter")
	tm.waitFor("progress", "working")
	tm.keys("C-c")
	tm.waitForAfter("the interrupt", "tools call stubborn", "mcpx: interrupted")
	tm.waitForAfter("the log message after the cancel", "tools call stubborn", "stubborn: done after the cancel")
	scr = tm.screen()
	if after := scr[strings.LastIndex(scr, "tools call stubborn"):]; strings.Contains(after, "still working after the cancel") {
		t.Errorf("progress after Ctrl-C was shown:\n%s", after)
	}

	// Up-arrow after a command of several lines recalls all of it.
	tm.keys("-l", "call ping {")
	tm.keys("Enter")
	tm.waitFor("the continuation prompt", "...> ")
	tm.keys("-l", "}")
	tm.keys("Enter")
	tm.waitForAfter("the ping's result", "...> }", "mcpx> ")
	tm.keys("Up")
	testwait.For(t, "the whole command recalled", func() bool {
		return regexp.MustCompile(`(?m)^mcpx> call ping \{ \}\s*$`).MatchString(tm.screen())
	})
	tm.keys("C-u")

	// A long line pasted arrives whole, at once, and a Tab in it is text
	// (the editor turns bracketed paste on): pasted key by key, 50 KB took
	// minutes, and a Tab completed.
	line := "call ping\t" + `{"pad": "` + strings.Repeat("x", 50<<10) + `"}`
	paste := filepath.Join(dir, "paste.txt")
	if err := os.WriteFile(paste, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	tm.run("load-buffer", "-b", "long", paste)
	tm.run("paste-buffer", "-p", "-d", "-b", "long", "-t", "repl")
	tm.keys("Enter")
	testwait.For(t, "the pasted line in the history", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "history"))
		return strings.HasSuffix(string(b), "\n"+line+"\n")
	})
	tm.waitForAfter("the prompt after the pasted line", `x"}`, "mcpx> ")

	tm.keys("C-d")
	testwait.For(t, "mcpx to exit after Ctrl-D", func() bool {
		b, err := os.ReadFile(statusFile)
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
}

// TestReplTerminalInterruptWhileConnecting: Ctrl-C while an interactive
// REPL is still connecting (to a server that never answers initialize)
// ends mcpx with 130 at once, not at --timeout, and the server with it.
func TestReplTerminalInterruptWhileConnecting(t *testing.T) {
	t.Parallel() // beside the scripts
	tmuxBin := tmuxPath(t)
	dir := t.TempDir()
	statusFile := filepath.Join(dir, "status")
	pidFile := filepath.Join(dir, "server.pid")
	mcpx := strings.Join([]string{
		"env", "PATH=" + quoteSh(os.Getenv("PATH")), "GORACE=atexit_sleep_ms=0", "NO_COLOR=1", "TEST_PIDFILE=" + quoteSh(pidFile),
		quoteSh(filepath.Join(binDir, "mcpx")), "--no-history", "--timeout", "10m", "repl", "--", quoteSh(filepath.Join(binDir, "testserver")), "hang",
	}, " ")
	tm := startTmux(t, tmuxBin, dir, "clear; "+mcpx+"; echo $? > "+quoteSh(statusFile)+"; exec sleep 600")

	var pid int
	testwait.For(t, "the server to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(string(b), &pid)
		return err == nil
	})
	tm.keys("C-c")
	testwait.Within(t, 10*time.Second, "mcpx to exit after Ctrl-C", func() bool {
		b, err := os.ReadFile(statusFile)
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	if b, _ := os.ReadFile(statusFile); strings.TrimSpace(string(b)) != "130" {
		t.Errorf("exit status %q, want 130", strings.TrimSpace(string(b)))
	}
	tm.waitFor("the interruption", "mcpx: interrupted")
	if alive(pid) {
		t.Errorf("the server (pid %d) outlived mcpx", pid)
	}
}

// TestReplTerminalWideCharacters: on a line of wide characters (CJK,
// emoji) in a narrow terminal, the cursor is drawn on the character it is
// on, a search's highlight is written over its match, a list of
// completions leaves the cursor where it was, and the line is erased whole
// before it is drawn again. readline counted each character as one column
// when it moved back along the line: Left over 日 moved half of it, Ctrl-R
// showed "echo ssamplng 👋" for "echo sampling 👋", and a line of emoji
// that wraps left copies of its first row above it.
func TestReplTerminalWideCharacters(t *testing.T) {
	t.Parallel() // beside the scripts
	dir := t.TempDir()
	tm := startRoughRepl(t, dir, "MCPX_HISTORY_FILE="+quoteSh(filepath.Join(dir, "history")))
	tm.run("resize-window", "-t", "repl", "-x", "40")
	// pane is the screen as shown (rows as the terminal wrapped them);
	// cursor is where the cursor is on it.
	pane := func() string { return tm.run("capture-pane", "-p", "-t", "repl") }
	cursor := func() string {
		return strings.TrimSpace(tm.run("display-message", "-p", "-t", "repl", "#{cursor_x},#{cursor_y}"))
	}
	waitCursor := func(what, want string) {
		t.Helper()
		testwait.For(t, fmt.Sprintf("the cursor %s at %s", what, want), func() bool { return cursor() == want })
	}

	// "mcpx> echo " and 28 a's take 39 columns: 日 goes to the second row.
	tm.keys("C-l")
	tm.waitFor("the screen cleared", "mcpx> ")
	tm.keys("-l", "echo "+strings.Repeat("a", 28)+strings.Repeat("日本語", 5)+"XYZ")
	waitCursor("after the line", "33,1")
	tm.keys(slices.Repeat([]string{"Left"}, 18)...)
	waitCursor("on 日", "0,1") // readline put it at 15,1
	tm.keys("Left")
	waitCursor("on the last a", "38,0")
	tm.keys("Right", "Right")
	waitCursor("on 本", "2,1") // 16,1
	tm.keys("-l", "Q")
	testwait.For(t, "Q after 日", func() bool { return strings.Contains(pane(), "\n日Q本語") })
	waitCursor("after Q", "3,1")
	tm.keys("C-e", "C-u")

	// A search draws its match where it is.
	tm.keys("-l", "echo sampling 👋")
	tm.keys("Enter")
	tm.waitFor("the line run", `unknown command "echo"`)
	tm.keys("C-l")
	tm.keys("C-r")
	tm.keys("-l", "sampl")
	testwait.For(t, "the match", func() bool {
		return strings.HasPrefix(pane(), "mcpx> echo sampling 👋\nbck-i-search: sampl")
	})
	tm.keys("C-g")

	// A list of completions below the line leaves the cursor on its
	// character (readline put it at 22: a column a character).
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "tools list 日本 --")
	tm.keys("Tab")
	testwait.For(t, "the flags", func() bool { return strings.Contains(pane(), "--json") })
	waitCursor("after the list", "24,0")

	// An emoji of a joiner (👩 ZWJ 💻) is drawn in two columns: the
	// cursor goes back over it as over one character (readline counted
	// four columns and put it two right of x).
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "echo 👩\u200d💻x")
	waitCursor("after the joined emoji", "14,0")
	tm.keys("Left")
	waitCursor("on the x after the joined emoji", "13,0")
	tm.keys("-l", "Q")
	testwait.For(t, "Q after the joined emoji", func() bool { return strings.HasPrefix(pane(), "mcpx> echo 👩\u200d💻Qx") })
	waitCursor("after Q", "14,0")
	// And Left goes over it in one press (it took three, the cursor
	// standing on the emoji), and Backspace takes it whole (it took 💻,
	// and left 👩 and a stray joiner).
	tm.keys("Left", "Left")
	waitCursor("on the joined emoji", "11,0")
	tm.keys("Left")
	waitCursor("before the joined emoji", "10,0")
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "echo 👩\u200d💻x")
	tm.keys("Left", "BSpace")
	testwait.For(t, "the joined emoji taken out", func() bool { return strings.HasPrefix(pane(), "mcpx> echo x\n") })
	waitCursor("on x", "11,0")

	// A flag is two letters (regional indicators) drawn as one character:
	// Left passes it, and Delete takes it, whole.
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "echo 🇫🇷🇩🇪x")
	waitCursor("after the flags", "16,0")
	tm.keys("Left", "Left", "Left")
	waitCursor("on the first flag", "11,0")
	tm.keys("DC")
	testwait.For(t, "the first flag taken out", func() bool { return strings.HasPrefix(pane(), "mcpx> echo 🇩🇪x\n") })
	waitCursor("on the flag left", "11,0")

	// Ctrl-W cuts the word before the cursor and no more (readline emptied
	// the line where the word began it).
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "ab cd")
	tm.keys("Left", "Left", "Left", "C-w")
	testwait.For(t, "the first word cut", func() bool { return strings.HasPrefix(pane(), "mcpx>  cd\n") })
	waitCursor("at the line's start", "6,0")

	// Ctrl-Y puts back whole the joined emoji Delete took (readline's put
	// back 👩 alone).
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "echo 👩\u200d💻x")
	tm.keys("Left", "Left", "DC", "C-e", "C-y")
	testwait.For(t, "the joined emoji put back", func() bool { return strings.HasPrefix(pane(), "mcpx> echo x👩\u200d💻\n") })
	waitCursor("after the joined emoji put back", "14,0")

	// A line of emoji over three rows, edited at its beginning, is drawn
	// once.
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "echo m="+strings.Repeat("🙂", 40))
	waitCursor("after the emoji", "14,2")
	tm.keys("Home")
	waitCursor("at the beginning", "6,0")
	tm.keys("-l", "X")
	testwait.For(t, "the X", func() bool { return strings.HasPrefix(pane(), "mcpx> Xecho m=") })
	waitCursor("after X", "7,0")
	if p := pane(); strings.Count(p, "mcpx> ") != 1 {
		t.Errorf("the line is drawn more than once:\n%s", p)
	}

	// A question's answer is edited by characters too, and the server
	// gets what the line shows.
	tm.keys("C-e", "C-u", "C-l")
	tm.keys("-l", "tools call ask")
	tm.keys("Enter")
	tm.waitFor("the form", "[a]nswer, [d]ecline or [c]ancel?")
	tm.keys("-l", "a")
	tm.keys("Enter")
	tm.waitFor("the field", "Your name")
	tm.keys("-l", "👩\u200d💻🇫🇷Ada")
	tm.keys("Left", "Left", "Left", "BSpace")
	tm.keys("Enter")
	tm.waitFor("the review", "Send it?")
	tm.keys("-l", "s")
	tm.keys("Enter")
	tm.waitFor("the result", `got {"action":"accept","content":{"name":"👩`+"\u200d"+`💻Ada"}}`)
}

// TestReplTerminalNarrowProgress: in a narrow terminal a progress bar
// stays on one row, so that erasing it (at Ctrl-C here) erases all of it.
// Wider than the terminal, it wrapped, and its first row stayed on the
// screen.
func TestReplTerminalNarrowProgress(t *testing.T) {
	t.Parallel() // beside the scripts
	tm := startRoughRepl(t, t.TempDir(), "", "--no-history")
	tm.run("resize-window", "-t", "repl", "-x", "40")
	// "stubborn [" and a 24-column bar, "] 1 working": 45 columns.
	tm.keys("-l", "tools call stubborn")
	tm.keys("Enter")
	tm.waitFor("the progress bar", "stubborn [")
	tm.keys("C-c")
	tm.waitForAfter("the interrupt", "tools call stubborn", "mcpx: interrupted")
	scr := tm.screen()
	if after := scr[strings.LastIndex(scr, "tools call stubborn"):]; strings.Contains(after, "stubborn [") {
		t.Errorf("the progress bar stayed after it was erased:\n%s", after)
	}
}

// TestReplTerminalNarrowAdvice: in a narrow terminal, mcpx's own advice
// (how to give a tool's arguments, after its help; what help says of
// every command) is broken at words to its width, as its notes are. It
// was written whole, and the terminal cut it mid-word at its edge. (The
// screen joins what the terminal wrapped: a line wider than the terminal
// there is one mcpx did not break.)
func TestReplTerminalNarrowAdvice(t *testing.T) {
	t.Parallel() // beside the scripts
	tm := startRoughRepl(t, t.TempDir(), "", "--no-history")
	tm.run("resize-window", "-t", "repl", "-x", "40")
	tm.keys("-l", "tools call loud --help")
	tm.keys("Enter")
	tm.waitForAfter("the tool's help", "tools call loud --help", "tools call --help")
	tm.keys("-l", "help")
	tm.keys("Enter")
	tm.waitForAfter("the help", "mcpx> help", "Ctrl-D or exit leaves.")
	scr := tm.screen()
	for _, want := range []string{"Give arguments", "Its flags, and how", "Per command:", "Ctrl-C cancels"} {
		at := strings.Index(scr, want)
		if at < 0 {
			t.Fatalf("the screen lacks %q:\n%s", want, scr)
		}
		line, _, _ := strings.Cut(scr[at:], "\n")
		if w := utf8.RuneCountInString(line); w > 40 {
			t.Errorf("%q… takes %d columns, more than the terminal's 40:\n%s", want, w, line)
		}
	}
}

// TestReplTerminalEscDismisses: Esc then Enter dismisses a question (the
// elicitation is cancelled) and the command goes on to its result, as a
// line of only Esc does in a one-shot command. readline took Esc for the
// first half of an Alt key: Esc then Enter was Enter, which answered the
// form's first question with its default ("[a]nswer").
func TestReplTerminalEscDismisses(t *testing.T) {
	t.Parallel() // beside the scripts
	tm := startRoughRepl(t, t.TempDir(), "", "--no-history")
	tm.keys("-l", "tools call ask")
	tm.keys("Enter")
	tm.waitFor("the form", "[a]nswer, [d]ecline or [c]ancel?")
	tm.keys("Escape", "Enter")
	tm.waitFor("the result", `got {"action":"cancel"}`)
	tm.waitForAfter("the prompt after the result", `got {"action":"cancel"}`, "mcpx> ")
	scr := tm.screen()
	if strings.Contains(scr, "(string) >") {
		t.Errorf("the form went on after Esc, Enter:\n%s", scr)
	}
	// The progress bar, if it came before the form, was taken off the
	// screen while the form was open, and at the command's end.
	if strings.Contains(scr, "ask [") {
		t.Errorf("a progress bar stayed on the screen:\n%s", scr)
	}
}

// startRoughRepl starts mcpx repl against testserver rough in tmux, in
// dir, with the environment variable setting env (none when "") and the
// flags before repl, and waits for its prompt.
func startRoughRepl(t *testing.T, dir, env string, flags ...string) *tmux {
	t.Helper()
	return startServerRepl(t, dir, "rough", env, flags...)
}

// startServerRepl is startRoughRepl with testserver's mode.
func startServerRepl(t *testing.T, dir, mode, env string, flags ...string) *tmux {
	t.Helper()
	words := []string{"env", "PATH=" + quoteSh(os.Getenv("PATH")), "GORACE=atexit_sleep_ms=0", "NO_COLOR=1"}
	if env != "" {
		words = append(words, env)
	}
	words = append(words, quoteSh(filepath.Join(binDir, "mcpx")))
	words = append(words, flags...)
	words = append(words, "repl", "--", quoteSh(filepath.Join(binDir, "testserver")), mode)
	tm := startTmux(t, tmuxPath(t), dir, "clear; "+strings.Join(words, " ")+"; exec sleep 600")
	tm.waitFor("the prompt", "mcpx> ")
	return tm
}
