package repl

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestScript(t *testing.T) {
	sc := NewScript(strings.NewReader("ping\n\n# a comment\ncall x {\n  \"a\": 1\n}\r\ntools call echo 'message=two\nlines'\nlast"))
	var got []string
	for {
		cmd, err := sc.ReadCommand()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cmd)
	}
	want := []string{"ping", "", "# a comment", "call x {\n  \"a\": 1\n}", "tools call echo 'message=two\nlines'", "last"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}

	// A UTF-8 byte order mark at the start of the file is not part of
	// the first command.
	sc = NewScript(strings.NewReader("\ufeffping\r\n\ufeffinfo\r\n"))
	if cmd, err := sc.ReadCommand(); cmd != "ping" || err != nil {
		t.Errorf("first command after a byte order mark: %q, %v", cmd, err)
	}
	if cmd, err := sc.ReadCommand(); cmd != "\ufeffinfo" || err != nil {
		t.Errorf("second command: %q, %v (a mark inside the file is not removed)", cmd, err)
	}

	sc = NewScript(strings.NewReader("ping\ncall x {\n"))
	if _, err := sc.ReadCommand(); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.ReadCommand(); err == nil || !strings.Contains(err.Error(), "line 2: the script ends inside the command that starts there (unbalanced JSON") {
		t.Errorf("unfinished command at the end: %v", err)
	}
}

// fakeExec records commands and fails those named fail-N with status N.
type fakeExec struct {
	ran     []string
	blocked chan struct{} // told when block runs
}

func (f *fakeExec) exec(ctx context.Context, words []string) Result {
	f.ran = append(f.ran, strings.Join(words, " "))
	switch words[0] {
	case "exit":
		return Result{Code: 3, Quit: true}
	case "fail-5":
		return Result{Code: 5}
	case "fail-4":
		return Result{Code: 4}
	case "block":
		if f.blocked != nil {
			f.blocked <- struct{}{}
		}
		<-ctx.Done()
		return Result{Code: 130}
	}
	return Result{}
}

func reader(lines ...string) func() (string, error) {
	return func() (string, error) {
		if len(lines) == 0 {
			return "", io.EOF
		}
		l := lines[0]
		lines = lines[1:]
		if l == "^C" {
			return "", ErrInterrupt
		}
		return l, nil
	}
}

func TestRunnerScript(t *testing.T) {
	var echo strings.Builder
	f := &fakeExec{}
	r := &Runner{Read: reader("ping", "", "# nothing", "tools call echo 'message=a b'", "fail-5", "never"), Exec: f.exec, Echo: &echo,
		Report: func(err error, usage bool) int { return 2 }}
	if code := r.Run(context.Background()); code != 5 {
		t.Errorf("status %d, want 5 (the failing command's)", code)
	}
	if diff := cmp.Diff([]string{"ping", "tools call echo message=a b", "fail-5"}, f.ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
	if want := "mcpx> ping\nmcpx> tools call echo 'message=a b'\nmcpx> fail-5\n"; echo.String() != want {
		t.Errorf("echo = %q, want %q", echo.String(), want)
	}

	// --keep-going: to the end, with the first failure's status.
	f = &fakeExec{}
	r = &Runner{Read: reader("fail-4", "ping", "fail-5", "ping"), Exec: f.exec, KeepGoing: true}
	if code := r.Run(context.Background()); code != 4 || len(f.ran) != 4 {
		t.Errorf("status %d after %q, want 4 after all four", code, f.ran)
	}

	// A line that cannot be split is a usage error.
	var reported error
	r = &Runner{Read: reader("echo 'open"), Exec: f.exec, Report: func(err error, usage bool) int {
		reported = err
		return 2
	}}
	if code := r.Run(context.Background()); code != 2 || reported == nil || !strings.Contains(reported.Error(), "unterminated single quote") {
		t.Errorf("status %d, reported %v", code, reported)
	}

	// exit ends with its status.
	r = &Runner{Read: reader("exit", "ping"), Exec: (&fakeExec{}).exec}
	if code := r.Run(context.Background()); code != 3 {
		t.Errorf("exit: status %d", code)
	}
}

func TestRunnerInteractive(t *testing.T) {
	f := &fakeExec{}
	hints := 0
	r := &Runner{Read: reader("fail-5", "^C", "ping", "^C"), Exec: f.exec, Interactive: true, Hint: func() { hints++ }}
	if code := r.Run(context.Background()); code != 0 {
		t.Errorf("status %d, want 0: failures do not end a session", code)
	}
	if len(f.ran) != 2 || hints != 2 {
		t.Errorf("ran %q, %d hints", f.ran, hints)
	}
}

// An interrupt cancels the command in flight; a script stops there, an
// interactive session goes on.
func TestRunnerInterrupt(t *testing.T) {
	for _, interactive := range []bool{false, true} {
		f := &fakeExec{blocked: make(chan struct{}, 1)}
		r := &Runner{Read: reader("block", "ping"), Exec: f.exec, Interactive: interactive}
		if r.Interrupt() != !interactive {
			t.Errorf("interactive %v: an interrupt with nothing running reports the wrong thing", interactive)
		}
		r.stopping = false
		done := make(chan int, 1)
		go func() { done <- r.Run(context.Background()) }()
		select {
		case <-f.blocked:
		case <-time.After(5 * time.Second):
			t.Fatal("block did not run")
		}
		if !r.Interrupt() {
			t.Error("Interrupt found no command in flight")
		}
		select {
		case code := <-done:
			switch {
			case interactive && (code != 0 || len(f.ran) != 2):
				t.Errorf("interactive: status %d, ran %q; want 0 after both", code, f.ran)
			case !interactive && (code != ExitInterrupted || len(f.ran) != 1):
				t.Errorf("script: status %d, ran %q; want 130 after block", code, f.ran)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after the interrupt")
		}
	}
}

// A script's commands run knowing the line they start on (a command of
// several lines: its first), whether read or taken from what was read
// already, and a line that cannot be split is reported with its line.
func TestRunnerScriptLines(t *testing.T) {
	sc := NewScript(strings.NewReader("ping\n\n# c\ntools call echo 'message=a\nb'\nping &\n&\n"))
	var lines []int
	var mu sync.Mutex
	var reported error
	r := &Runner{Read: sc.ReadCommand, Line: sc.Line, KeepGoing: true,
		Exec: func(ctx context.Context, _ []string) Result {
			mu.Lock()
			lines = append(lines, LineOf(ctx))
			mu.Unlock()
			return Result{}
		},
		Spawn: func([]string) (func(context.Context) Result, func()) {
			return func(ctx context.Context) Result {
				mu.Lock()
				lines = append(lines, LineOf(ctx))
				mu.Unlock()
				return Result{}
			}, func() {}
		},
		Report: func(err error, usage bool) int { reported = err; return 2 }}
	r.Run(context.Background())
	if diff := cmp.Diff([]int{1, 4, 6}, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	var le *LineError
	if !errors.As(reported, &le) || le.Line != 7 || !strings.HasPrefix(reported.Error(), "line 7: ") {
		t.Errorf("reported %v, want it at line 7", reported)
	}

	// Taken whole from what was read already (Buffered), the same.
	sc = NewScript(strings.NewReader("a\n\nb\n"))
	if _, err := sc.ReadCommand(); err != nil || sc.Line() != 1 {
		t.Fatalf("first: line %d, %v", sc.Line(), err)
	}
	if text, ok := sc.Buffered(); !ok || text != "" || sc.Line() != 2 {
		t.Errorf("buffered %q %v: line %d, want the empty line 2", text, ok, sc.Line())
	}
	if text, ok := sc.Buffered(); !ok || text != "b" || sc.Line() != 3 {
		t.Errorf("buffered %q %v: line %d, want b at 3", text, ok, sc.Line())
	}
	if LineOf(context.Background()) != 0 {
		t.Error("a command typed at the prompt has no line")
	}
}
