package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Script reads commands from a file or a pipe: one per line, joined with
// the following lines while unfinished (an open quote, unbalanced JSON
// brackets, a final backslash), like the editor does.
type Script struct {
	r    *bufio.Reader
	line int
}

// NewScript reads commands from r.
func NewScript(r io.Reader) *Script { return &Script{r: bufio.NewReaderSize(r, 64*1024)} }

// ReadCommand returns the next command, or io.EOF at the end.
func (s *Script) ReadCommand() (string, error) {
	var lines []string
	start := s.line + 1
	for {
		l, err := s.r.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		if l == "" && errors.Is(err, io.EOF) {
			if len(lines) > 0 {
				return "", &IncompleteError{Line: start, Open: Scan(strings.Join(lines, "\n")).Incomplete()}
			}
			return "", io.EOF
		}
		s.line++
		lines = append(lines, strings.TrimRight(l, "\r\n"))
		text := strings.Join(lines, "\n")
		if Scan(text).Incomplete() == Closed {
			return text, nil
		}
	}
}

// IncompleteError reports a script that ends inside a command.
type IncompleteError struct {
	Line int // where the command starts
	Open Open
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("line %d: the script ends inside the command that starts there (%s)", e.Line, e.Open)
}

// Result is how one command ended.
type Result struct {
	Code int  // its exit status
	Quit bool // the command asks the session to end with Code (exit)
}

// Runner runs commands one by one until the input ends, an exit command,
// or — in a script — the first failure.
type Runner struct {
	// Read returns the next command (ErrInterrupt: Ctrl-C at the prompt;
	// io.EOF: the end).
	Read func() (string, error)
	// Exec runs one command, split into words, with a context that an
	// interrupt cancels.
	Exec func(ctx context.Context, words []string) Result
	// Interactive: a person types the commands; failures do not end the
	// session and an interrupt only cancels the command in flight.
	Interactive bool
	// Echo, for a script, receives each command before it runs, as
	// "mcpx> command" (continuation lines as "...> ").
	Echo io.Writer
	// KeepGoing runs a script to its end despite failures; the status is
	// then the first failure's.
	KeepGoing bool
	// Hint is told when Ctrl-C is pressed at an empty prompt.
	Hint func()
	// Report prints a problem that is not a command's own (an unsplittable
	// line, a read error) and returns its exit status.
	Report func(err error, usage bool) int

	mu       sync.Mutex
	cancel   context.CancelFunc // the command in flight
	stopping bool
}

// ExitInterrupted is the status of a script stopped by an interrupt.
const ExitInterrupted = 130

// Interrupt cancels the command in flight; a script also stops. It reports
// whether it had anything to interrupt.
func (r *Runner) Interrupt() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.Interactive {
		r.stopping = true
	}
	if r.cancel != nil {
		r.cancel()
		return true
	}
	return !r.Interactive
}

func (r *Runner) stopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopping
}

// Run reads and runs commands until the end and returns the exit status:
// an exit command's, else in a script the first failure's (0 when every
// command succeeded), and 0 for an interactive session.
func (r *Runner) Run(ctx context.Context) int {
	first := 0
	for {
		if ctx.Err() != nil || r.stopped() {
			return ExitInterrupted
		}
		text, err := r.Read()
		switch {
		case errors.Is(err, ErrInterrupt):
			if strings.TrimSpace(text) == "" && r.Hint != nil {
				r.Hint()
			}
			continue
		case errors.Is(err, io.EOF):
			if ctx.Err() != nil || r.stopped() {
				return ExitInterrupted
			}
			return first
		case err != nil:
			var inc *IncompleteError
			code := r.Report(err, errors.As(err, &inc))
			if r.Interactive {
				return first
			}
			return code
		}
		words, err := Split(text)
		if len(words) == 0 && err == nil {
			continue
		}
		if r.Echo != nil {
			for i, l := range strings.Split(text, "\n") {
				p := "mcpx> "
				if i > 0 {
					p = "...> "
				}
				fmt.Fprintln(r.Echo, p+l)
			}
		}
		var res Result
		if err != nil {
			res.Code = r.Report(err, true)
		} else {
			res = r.exec(ctx, words)
		}
		if res.Quit {
			return res.Code
		}
		if !r.Interactive && r.stopped() {
			return ExitInterrupted
		}
		if res.Code != 0 && !r.Interactive {
			if !r.KeepGoing {
				return res.Code
			}
			if first == 0 {
				first = res.Code
			}
		}
	}
}

func (r *Runner) exec(ctx context.Context, words []string) Result {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
	}()
	return r.Exec(lctx, words)
}
