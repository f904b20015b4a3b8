package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// screen is output written by one goroutine and read by another.
type screen = testwait.Buffer

type fakeTerm struct {
	keys   *io.PipeWriter
	screen *screen
	ed     *Editor
}

func newFakeTerm(t *testing.T, o EditorOptions) *fakeTerm {
	t.Helper()
	r, w := io.Pipe()
	sc := &screen{}
	if o.Prompt == "" {
		o.Prompt, o.ContinuePrompt = "mcpx> ", "...> "
	}
	ed, err := NewEditor(Terminal{In: r, Out: sc}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ed.Close()
		w.Close()
	})
	return &fakeTerm{keys: w, screen: sc, ed: ed}
}

func (f *fakeTerm) typeKeys(t *testing.T, s string) {
	t.Helper()
	if _, err := f.keys.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

type cmdResult struct {
	text string
	err  error
}

func (f *fakeTerm) read() <-chan cmdResult {
	ch := make(chan cmdResult, 1)
	go func() {
		s, err := f.ed.ReadCommand()
		ch <- cmdResult{s, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan cmdResult) cmdResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("ReadCommand did not return")
	}
	return cmdResult{}
}

func TestEditorReadsCommands(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	ch := f.read()
	f.typeKeys(t, "tools list\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools list" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}

	// A command with unbalanced JSON goes on over several lines.
	ch = f.read()
	f.typeKeys(t, "call tools/call {\r\"name\": \"echo\"\r}\r")
	if r := wait(t, ch); r.err != nil || r.text != "call tools/call {\n\"name\": \"echo\"\n}" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}
	if !strings.Contains(f.screen.String(), "...> ") {
		t.Error("no continuation prompt on the screen")
	}

	// Ctrl-C discards the line; Ctrl-D at an empty prompt ends.
	ch = f.read()
	f.typeKeys(t, "tools ca\x03")
	if r := wait(t, ch); !errors.Is(r.err, ErrInterrupt) || r.text != "tools ca" {
		t.Fatalf("got %q, %v; want ErrInterrupt", r.text, r.err)
	}
	ch = f.read()
	f.typeKeys(t, "\x04")
	if r := wait(t, ch); !errors.Is(r.err, io.EOF) {
		t.Fatalf("got %q, %v; want io.EOF", r.text, r.err)
	}
}

func TestEditorEndOfInput(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	ch := f.read()
	f.keys.Close()
	if r := wait(t, ch); !errors.Is(r.err, io.EOF) {
		t.Fatalf("got %q, %v; want io.EOF", r.text, r.err)
	}
	// Later reads end at once, questions too.
	if r := wait(t, f.read()); !errors.Is(r.err, io.EOF) {
		t.Fatalf("second read: %v", r.err)
	}
	if _, err := f.ed.ReadLine(context.Background(), "? "); !errors.Is(err, io.EOF) {
		t.Fatalf("ReadLine after the end: %v", err)
	}
}

func TestEditorHistory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "mcpx", "history")
	f := newFakeTerm(t, EditorOptions{HistoryFile: path})
	ch := f.read()
	f.typeKeys(t, "ping\r")
	r := wait(t, ch)
	f.ed.AddHistory(r.text)
	ch = f.read()
	f.typeKeys(t, "call x {\r  \"a\": 1\r}\r")
	r = wait(t, ch)
	f.ed.AddHistory(r.text)
	// A command of one line is kept as typed: blanks inside quotes are
	// part of a value.
	f.ed.AddHistory(`tools call echo message="a  b"`)
	f.ed.Close()

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "ping\ncall x { \"a\": 1 }\ntools call echo message=\"a  b\"\n" {
		t.Errorf("history file = %q", b)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode().Perm(), err, want)
		}
	}

	// A new editor has them: up arrow recalls the last one.
	g := newFakeTerm(t, EditorOptions{HistoryFile: path})
	ch = g.read()
	g.typeKeys(t, "\x1b[A\x1b[A\x1b[A\r")
	if r := wait(t, ch); r.text != "ping" {
		t.Errorf("three ups gave %q, want ping", r.text)
	}
}

func TestEditorHistoryLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, "ping "+strings.Repeat("x", i))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeTerm(t, EditorOptions{HistoryFile: path, HistoryLimit: 10})
	f.ed.Close()
	b, _ := os.ReadFile(path)
	if got := strings.Count(string(b), "\n"); got != 10 || !strings.HasPrefix(string(b), lines[20]+"\n") {
		t.Errorf("history kept %d lines:\n%s", got, b)
	}
}

// A history file that is a link (kept with one's dotfiles) stays a link
// when the history is trimmed: the file it points to is rewritten.
func TestEditorHistoryThroughLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles-history")
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, "ping "+strings.Repeat("x", i))
	}
	if err := os.WriteFile(real, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "history")
	if err := os.Symlink("dotfiles-history", path); err != nil {
		t.Skip(err)
	}
	f := newFakeTerm(t, EditorOptions{HistoryFile: path, HistoryLimit: 10})
	f.ed.AddHistory("tools list")
	f.ed.Close()
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the history link was replaced: %v, %v", fi, err)
	}
	b, _ := os.ReadFile(real)
	if got := strings.Count(string(b), "\n"); got != 11 || !strings.HasPrefix(string(b), lines[20]+"\n") || !strings.HasSuffix(string(b), "tools list\n") {
		t.Errorf("history holds %d lines:\n%s", got, b)
	}
}

// A question (a server request) takes the terminal from the prompt, and
// the prompt comes back with what was typed.
func TestEditorQuestionTakesThePrompt(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	ch := f.read()
	f.typeKeys(t, "tools li")
	testwait.For(t, "the typed text", func() bool { return strings.Contains(f.screen.String(), "tools li") })

	release, err := f.ed.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	answer := make(chan cmdResult, 1)
	go func() {
		s, err := f.ed.ReadLine(context.Background(), "your name? ")
		answer <- cmdResult{s, err}
	}()
	testwait.For(t, "the question", func() bool { return strings.Contains(f.screen.String(), "your name? ") })
	f.typeKeys(t, "Ada\r")
	if r := wait(t, answer); r.err != nil || r.text != "Ada" {
		t.Fatalf("answer %q, %v", r.text, r.err)
	}
	select {
	case r := <-ch:
		t.Fatalf("the prompt returned %q, %v during the question", r.text, r.err)
	default:
	}
	release()
	f.typeKeys(t, "st\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools list" {
		t.Fatalf("after the question the prompt gave %q, %v; want tools list", r.text, r.err)
	}
}

func TestEditorQuestionCancelled(t *testing.T) {
	interrupted := make(chan struct{}, 1)
	f := newFakeTerm(t, EditorOptions{OnInterrupt: func() { interrupted <- struct{}{} }})

	// The server gave up: the question goes away.
	ctx, cancel := context.WithCancel(context.Background())
	answer := make(chan cmdResult, 1)
	go func() {
		s, err := f.ed.ReadLine(ctx, "q1? ")
		answer <- cmdResult{s, err}
	}()
	testwait.For(t, "the question", func() bool { return strings.Contains(f.screen.String(), "q1? ") })
	cancel()
	if r := wait(t, answer); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %q, %v; want context.Canceled", r.text, r.err)
	}

	// Ctrl-C dismisses a question (it reads as the end of input) and
	// interrupts the command in flight.
	go func() {
		s, err := f.ed.ReadLine(context.Background(), "q2? ")
		answer <- cmdResult{s, err}
	}()
	testwait.For(t, "the second question", func() bool { return strings.Contains(f.screen.String(), "q2? ") })
	f.typeKeys(t, "abc\x03")
	if r := wait(t, answer); !errors.Is(r.err, inspector.ErrDismissed) || !errors.Is(r.err, io.EOF) {
		t.Fatalf("got %q, %v; want ErrDismissed", r.text, r.err)
	}
	select {
	case <-interrupted:
	case <-time.After(5 * time.Second):
		t.Fatal("OnInterrupt was not called")
	}

	// The terminal still works.
	ch := f.read()
	f.typeKeys(t, "ping\r")
	if r := wait(t, ch); r.err != nil || r.text != "ping" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}
}

func TestEditorOutputAbovePrompt(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	out := f.ed.Out()
	// No line edited: straight through.
	io.WriteString(out, "before\n")
	ch := f.read()
	f.typeKeys(t, "tools")
	testwait.For(t, "the typed text", func() bool { return strings.Contains(f.screen.String(), "tools") })
	io.WriteString(out, "notification arrived\n")
	testwait.For(t, "the prompt drawn again", func() bool {
		s := f.screen.String()
		i := strings.Index(s, "notification arrived\n")
		return i >= 0 && strings.Contains(s[i:], "mcpx> tools")
	})
	f.typeKeys(t, " list\r")
	if r := wait(t, ch); r.text != "tools list" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}
	if !strings.HasPrefix(f.screen.String(), "before\n") {
		t.Errorf("screen = %q", f.screen.String())
	}
}

// Output that arrives while keys are being handled (completion, here) is
// printed by readline's own goroutine, in order: readline keeps its state
// without a lock, and under -race a writer that drew the line again from
// the writing goroutine was reported (as it was in CI, by the tmux test).
func TestEditorOutputWhileCompleting(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return fakeSource{} }}
	f := newFakeTerm(t, EditorOptions{Complete: c})
	out := f.ed.Out()
	ch := f.read()
	f.typeKeys(t, "tools call ec")
	const notes = 300
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := range notes {
			fmt.Fprintf(out, "note %d\n", i)
		}
	}()
	// Complete the name, then take the completion back, many times.
	for range 40 {
		f.typeKeys(t, "\t\x7f\x7f\x7f")
	}
	<-wrote
	testwait.For(t, "every note", func() bool { return strings.Contains(f.screen.String(), fmt.Sprintf("note %d\n", notes-1)) })
	f.typeKeys(t, "\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools call ec" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}
	screen := f.screen.String()
	last := -1
	for i := range notes {
		at := strings.Index(screen, fmt.Sprintf("note %d\n", i))
		if at < last {
			t.Fatalf("note %d printed before note %d (or not at all):\n%s", i, i-1, screen)
		}
		last = at
	}
}

// A Ctrl-D of the person's still ends the input while the editor wakes
// readline for output (the notes are written while the prompt is up, so
// their wake keys and the person's Ctrl-D reach readline together).
func TestEditorOutputAndCtrlD(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	out := f.ed.Out()
	ch := f.read()
	testwait.For(t, "the prompt", func() bool { return strings.Contains(f.screen.String(), "mcpx> ") })
	for i := range 50 {
		fmt.Fprintf(out, "note %d\n", i)
	}
	f.typeKeys(t, "\x04")
	if r := wait(t, ch); !errors.Is(r.err, io.EOF) {
		t.Fatalf("got %q, %v; want io.EOF", r.text, r.err)
	}
	if s := f.screen.String(); !strings.Contains(s, "note 49\n") {
		t.Errorf("the notes were not all printed when the line ended:\n%s", s)
	}
}

// Output queued while a line is edited and not yet printed by readline
// (nobody reads keys here) is written when the line ends, in order; then
// output goes straight through.
func TestEditorQueuedOutputAtLineEnd(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	out := f.ed.Out()
	f.ed.editingLine(true)
	for i := range 3 {
		fmt.Fprintf(out, "note %d\n", i)
	}
	if s := f.screen.String(); s != "" {
		t.Fatalf("queued output reached the screen before readline or the line's end: %q", s)
	}
	f.ed.editingLine(false)
	io.WriteString(out, "after\n")
	if s, want := f.screen.String(), "note 0\nnote 1\nnote 2\nafter\n"; s != want {
		t.Errorf("screen = %q, want %q", s, want)
	}
}

// A wake key never lands inside an escape sequence (readline would take
// it for part of the sequence, and the output would wait for the line's
// end).
func TestKeyReaderWakeOutsideEscapes(t *testing.T) {
	r, w := io.Pipe()
	k := newKeyReader(r, false)
	t.Cleanup(func() { k.Close(); w.Close() })
	// The reader holds a sequence back until it is whole; readline may
	// still read it in parts.
	buf := make([]byte, 3)
	go func() {
		w.Write([]byte("\x1b[1"))
		w.Write([]byte(";5C"))
	}()
	if n, _ := k.Read(buf); string(buf[:n]) != "\x1b[1" {
		t.Fatalf("read %q", buf[:n])
	}
	k.Wake()
	if n, _ := k.Read(buf); string(buf[:n]) != ";5C" {
		t.Fatalf("inside an escape sequence, read %q; want the rest of the sequence", buf[:n])
	}
	if n, _ := k.Read(buf); !bytes.Equal(buf[:n], wakeKey) || !k.claimWake() || k.claimWake() {
		t.Fatalf("after the sequence, read %q; want one wake key", buf[:n])
	}
	for _, tc := range []struct {
		keys string
		want escState
	}{
		{"abc", escNone}, {"\x1b", escStart}, {"\x1b\x1b", escStart}, {"\x1bb", escNone},
		{"\x1b[", escCSI}, {"\x1b[1;5", escCSI}, {"\x1b[A", escNone}, {"\x1bO", escSS3}, {"\x1bOP", escNone},
		{"\x1b[1\x03", escNone},
	} {
		if got := escNone.after([]byte(tc.keys)); got != tc.want {
			t.Errorf("after %q: %d, want %d", tc.keys, got, tc.want)
		}
	}
}

func TestEditorCompletes(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return fakeSource{} }}
	f := newFakeTerm(t, EditorOptions{Complete: c})
	ch := f.read()
	f.typeKeys(t, "tools call ec\t")
	testwait.For(t, "the completed name", func() bool { return strings.Contains(f.screen.String(), "tools call echo ") })
	f.typeKeys(t, "mes\thi\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools call echo message=hi" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}
}

// A command continued with \<newline> is kept as the one line it means:
// the continuation is removed, not turned into an escaped blank, so that
// recalling it runs the same words.
func TestEditorHistoryContinuation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	f := newFakeTerm(t, EditorOptions{HistoryFile: path})
	cmds := []string{
		"tools call get-sum \\\n  a=1 \\\n  b=2",
		"tools call echo message=a\\\nb",
		"ping \\\n",
		"call tools/call {\"name\": \"echo\"} \\\n  --json",
	}
	for _, c := range cmds {
		f.ed.AddHistory(c)
	}
	f.ed.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(kept) != len(cmds) {
		t.Fatalf("history file = %q", b)
	}
	for i, c := range cmds {
		want, err := Split(c)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Split(kept[i]); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q kept as %q: words %q, %v; want %q", c, kept[i], got, err, want)
		}
	}
}

// TestEditorHomeEnd: Home and End move to the start and the end of the
// line in each of the forms terminals send them: xterm's (ESC [ H, ESC O
// H), and the VT220 form of tmux, screen and the Linux console (ESC [ 1 ~,
// ESC [ 4 ~) and rxvt's (ESC [ 7 ~, ESC [ 8 ~), which readline ignores.
func TestEditorHomeEnd(t *testing.T) {
	for _, k := range []struct{ home, end string }{
		{"\x1b[H", "\x1b[F"}, {"\x1bOH", "\x1bOF"}, {"\x1b[1~", "\x1b[4~"}, {"\x1b[7~", "\x1b[8~"},
	} {
		f := newFakeTerm(t, EditorOptions{})
		ch := f.read()
		f.typeKeys(t, "ping"+k.home+"#"+k.end+"!\r")
		if r := wait(t, ch); r.err != nil || r.text != "#ping!" {
			t.Errorf("Home %q, End %q: got %q, %v; want %q", k.home, k.end, r.text, r.err, "#ping!")
		}
	}
}

// A question's answer is not a command: Tab completes mcpx's commands at
// the prompt only (in an elicitation's field, "to" and Tab became
// "tools "), and is then part of the answer as typed.
func TestEditorQuestionDoesNotComplete(t *testing.T) {
	c := &Completer{Root: testGrammar(), Source: func() Source { return fakeSource{} }}
	f := newFakeTerm(t, EditorOptions{Complete: c})
	answer := make(chan cmdResult, 1)
	go func() {
		s, err := f.ed.ReadLine(context.Background(), "your name? ")
		answer <- cmdResult{s, err}
	}()
	testwait.For(t, "the question", func() bool { return strings.Contains(f.screen.String(), "your name? ") })
	f.typeKeys(t, "to\t\t\r")
	if r := wait(t, answer); r.err != nil || r.text != "to" {
		t.Fatalf("answer %q, %v; want %q", r.text, r.err, "to")
	}
	// The prompt still completes.
	ch := f.read()
	f.typeKeys(t, "to\t\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools " {
		t.Fatalf("the prompt gave %q, %v; want %q", r.text, r.err, "tools ")
	}
}

// Output that arrives during a search (Ctrl-R) is printed above the line,
// and the search goes on: its prompt is drawn again below the line, and
// the next key still searches.
func TestEditorOutputDuringSearch(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	f.ed.AddHistory("tools call echo message=hi")
	f.ed.AddHistory("ping")
	out := f.ed.Out()
	ch := f.read()
	f.typeKeys(t, "\x12ech")
	testwait.For(t, "the search", func() bool { return strings.Contains(f.screen.String(), "bck-i-search: ech") })
	io.WriteString(out, "notification arrived\n")
	testwait.For(t, "the search drawn again below the note", func() bool {
		s := f.screen.String()
		i := strings.Index(s, "notification arrived\n")
		return i >= 0 && strings.Contains(s[i:], "mcpx> tools call echo message=hi") && strings.Contains(s[i:], "bck-i-search: ech")
	})
	f.typeKeys(t, "o m")
	testwait.For(t, "the search going on", func() bool { return strings.Contains(f.screen.String(), "bck-i-search: echo m") })
	f.typeKeys(t, "\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools call echo message=hi" {
		t.Fatalf("got %q, %v; want the command found", r.text, r.err)
	}
}

// The character the editor uses as its search redraw key, typed, is text.
func TestEditorRedrawKeyTypedIsText(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	ch := f.read()
	f.typeKeys(t, "a"+string(searchRedrawKey)+"b\r")
	if r := wait(t, ch); r.err != nil || r.text != "a"+string(searchRedrawKey)+"b" {
		t.Fatalf("got %q, %v", r.text, r.err)
	}
}

// A question's answer is not a command: Up, Down and Ctrl-R there offer
// none of the history of commands, and an answer (a password, say) is
// not offered at the prompt afterwards.
func TestEditorQuestionHasNoHistory(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	f.ed.AddHistory("tools call echo message=hi")
	f.ed.AddHistory("ping")
	ask := func(keys string) cmdResult {
		t.Helper()
		answer := make(chan cmdResult, 1)
		go func() {
			s, err := f.ed.ReadLine(context.Background(), "your name? ")
			answer <- cmdResult{s, err}
		}()
		f.typeKeys(t, keys)
		return wait(t, answer)
	}
	for _, keys := range []string{"\x1b[A\x1b[A\r", "\x10\r", "\x1b[A\x1b[BAda\r", "\x12ping\r", "\x12ech\x12\r", "Bob\x1b[A\x1b[B\x1b[B\x15\r"} {
		want := ""
		if strings.Contains(keys, "Ada") {
			want = "Ada"
		}
		if r := ask(keys); r.err != nil || r.text != want {
			t.Errorf("keys %q in a question: got %q, %v; want %q", keys, r.text, r.err, want)
		}
	}
	if r := ask("s3cret\r"); r.text != "s3cret" {
		t.Fatalf("got %q", r.text)
	}
	// At the prompt: Up, then Down back to the line being typed.
	ch := f.read()
	f.typeKeys(t, "\x1b[A\x1b[B\r")
	if r := wait(t, ch); r.err != nil || r.text != "" {
		t.Errorf("Up, Down at the prompt after a question gave %q, %v; want an empty line", r.text, r.err)
	}
	ch = f.read()
	f.typeKeys(t, "\x1b[A\x1b[A\x1b[A\r")
	if r := wait(t, ch); r.err != nil || r.text != "tools call echo message=hi" {
		t.Errorf("Up three times gave %q, %v; want the first command", r.text, r.err)
	}
	if s := f.screen.String(); strings.Contains(s[strings.Index(s, "s3cret\n")+1:], "s3cret") {
		t.Errorf("the answer was shown at the prompt:\n%q", s)
	}
}

// What Ctrl-U, Ctrl-W and the like cut from a question's answer (a
// password, say) is not put back by Ctrl-Y at the prompt afterwards, nor
// what was cut at the prompt into an answer; within a line Ctrl-Y still
// puts back what was cut.
func TestEditorQuestionKeepsItsCuts(t *testing.T) {
	f := newFakeTerm(t, EditorOptions{})
	// drawn waits until the screen shows prompt once more than it did
	// (before): the line is begun, and keys typed from then on are its
	// own (typed before, they race with its start inside readline).
	drawn := func(prompt string, before int) {
		testwait.For(t, "the prompt "+prompt, func() bool { return strings.Count(f.screen.String(), prompt) > before })
	}
	ask := func(keys string) cmdResult {
		t.Helper()
		answer := make(chan cmdResult, 1)
		n := strings.Count(f.screen.String(), "password? ")
		go func() {
			s, err := f.ed.ReadLine(context.Background(), "password? ")
			answer <- cmdResult{s, err}
		}()
		drawn("password? ", n)
		f.typeKeys(t, keys)
		return wait(t, answer)
	}
	command := func(keys string) cmdResult {
		t.Helper()
		n := strings.Count(f.screen.String(), "mcpx> ")
		ch := f.read()
		drawn("mcpx> ", n)
		f.typeKeys(t, keys)
		return wait(t, ch)
	}
	if r := command("ping\x15\r"); r.err != nil || r.text != "" { // a command cut whole: Ctrl-U
		t.Fatalf("Ctrl-U at the prompt gave %q, %v", r.text, r.err)
	}
	if r := ask("\x19s3cret\x15\x19\r"); r.err != nil || r.text != "s3cret" {
		t.Errorf("in a question, Ctrl-Y gave %q, %v; want only what was cut in it", r.text, r.err)
	}
	if r := command("\x19\r"); r.err != nil || r.text != "" {
		t.Errorf("Ctrl-Y at the prompt after a question gave %q, %v; want nothing of the answer", r.text, r.err)
	}
	if r := command("ab\x15\x19\x19\r"); r.err != nil || r.text != "abab" {
		t.Errorf("Ctrl-U, Ctrl-Y twice at the prompt gave %q, %v; want abab", r.text, r.err)
	}
}

// fixedCompleter offers the same candidates whatever is typed.
type fixedCompleter [][]rune

func (f fixedCompleter) Do([]rune, int) ([][]rune, int) { return f, 0 }

// A candidate too wide to be listed (a server's 10,000-character
// completion value) is left out of a list of several: readline padded
// every candidate to its width, a screen of spaces each, and lost track of
// where the line was. Alone, it is inserted.
func TestEditorListsNoCandidateWiderThanTheTerminal(t *testing.T) {
	huge := strings.Repeat("w", 10000)
	f := newFakeTerm(t, EditorOptions{Complete: fixedCompleter{[]rune("abc"), []rune(huge), []rune("xyz")}})
	f.read()
	f.typeKeys(t, "\t")
	testwait.For(t, "the list", func() bool { return strings.Contains(f.screen.String(), "xyz") })
	if s := f.screen.String(); strings.Contains(s, "www") || strings.Contains(s, strings.Repeat(" ", 80)) {
		t.Errorf("the list holds the huge candidate or a row of padding: %d bytes", len(s))
	}

	f = newFakeTerm(t, EditorOptions{Complete: fixedCompleter{[]rune(huge)}})
	ch := f.read()
	f.typeKeys(t, "\t\r")
	if r := wait(t, ch); r.text != huge {
		t.Errorf("alone, the huge candidate is not inserted: %d bytes, %v", len(r.text), r.err)
	}
}

// Leaving a too-wide candidate out does not make the rest look like all
// there is: their shared prefix is inserted, and one left alone is not.
func TestFitCandidates(t *testing.T) {
	huge := strings.Repeat("w", 10000)
	for _, tc := range []struct {
		name  string
		cands []string
		want  []string
	}{
		{"all fit", []string{"abc", "abd"}, []string{"abc", "abd"}},
		{"alone", []string{huge}, []string{huge}},
		{"shared prefix", []string{"xa1", "xa2", "x" + huge}, []string{"x"}},
		{"listed", []string{"abc", huge, "xyz"}, []string{"abc", "xyz"}},
		{"one left", []string{"abc", huge}, nil},
		{"the rest share a prefix", []string{"xa1", "xa2", huge}, nil},
	} {
		var cands [][]rune
		for _, c := range tc.cands {
			cands = append(cands, []rune(c))
		}
		var got []string
		for _, c := range fitCandidates(cands, 0, 80) {
			got = append(got, string(c))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %.40q, want %.40q", tc.name, got, tc.want)
		}
	}
}
