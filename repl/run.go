package repl

import (
	"bufio"
	"bytes"
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
	r     *bufio.Reader
	line  int
	start int // the line the command returned last starts on
}

// Line returns the line (1-based) of the script on which the command
// ReadCommand or Buffered returned last starts.
func (s *Script) Line() int { return s.start }

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
		lines = append(lines, lineText(l, s.line))
		text := strings.Join(lines, "\n")
		if Scan(text).Incomplete() == Closed {
			s.start = start
			return text, nil
		}
	}
}

// Buffered returns the next command when the input read so far holds it
// whole, so that no read is needed (ok false otherwise: ReadCommand then
// reads it). It returns what ReadCommand would.
func (s *Script) Buffered() (string, bool) {
	n := s.r.Buffered()
	if n == 0 {
		return "", false
	}
	buf, err := s.r.Peek(n)
	if err != nil {
		return "", false
	}
	var lines []string
	off := 0
	for {
		i := bytes.IndexByte(buf[off:], '\n')
		if i < 0 {
			return "", false
		}
		lines = append(lines, lineText(string(buf[off:off+i+1]), s.line+len(lines)+1))
		off += i + 1
		text := strings.Join(lines, "\n")
		if Scan(text).Incomplete() == Closed {
			_, _ = s.r.Discard(off)
			s.start = s.line + 1
			s.line += len(lines)
			return text, true
		}
	}
}

// lineText returns the text of line n (1-based) of a script, read with
// its line ending: without it (\n or \r\n), and the first line without a
// UTF-8 byte order mark, which some Windows editors write at the start of
// a file and which would otherwise be part of the first command's name.
func lineText(raw string, n int) string {
	l := strings.TrimRight(raw, "\r\n")
	if n == 1 {
		l = strings.TrimPrefix(l, "\ufeff")
	}
	return l
}

// IncompleteError reports a script that ends inside a command.
type IncompleteError struct {
	Line int // where the command starts
	Open Open
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("line %d: the script ends inside the command that starts there (%s)", e.Line, e.Open)
}

// LineError is a script's command that failed, with the line it starts
// on, so that a person can find it in the script.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

type lineKey struct{}

// WithLine returns ctx for running the command that starts on line n of a
// script (see LineOf).
func WithLine(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, lineKey{}, n)
}

// LineOf returns the line of the script that the command ctx runs
// starts on, 0 when it is not a script's (a command typed at the
// prompt).
func LineOf(ctx context.Context) int {
	n, _ := ctx.Value(lineKey{}).(int)
	return n
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
	// EscapeEcho, when set, is applied to each echoed line: a script's
	// line with an escape sequence in it is shown, not obeyed by the
	// terminal.
	EscapeEcho func(string) string
	// KeepGoing runs a script to its end despite failures; the status is
	// then the first failure's.
	KeepGoing bool
	// Hint is told when Ctrl-C is pressed at an empty prompt.
	Hint func()
	// Report prints a problem that is not a command's own (an unsplittable
	// line, a read error) and returns its exit status.
	Report func(err error, usage bool) int
	// Line, for a script, returns the line on which the command Read
	// returned last starts: each command runs with it in its context
	// (LineOf), and a problem Report is given for a line is a *LineError,
	// so that what fails is named by its line.
	Line func() int

	// Spawn, for a script, prepares a line to run without waiting for the
	// lines before it: a line that ends in " &", or every line when
	// Parallel is above 1. It returns nil for a line that must run in
	// order (the REPL's own commands, wait), which then waits for the
	// lines in flight first. run runs the line, writing to output of its
	// own; flush writes that output where the line's output goes and
	// releases what the line held. The Runner flushes lines in their
	// order, so a script's output reads as if its lines ran one by one.
	Spawn func(words []string) (run func(ctx context.Context) Result, flush func())
	// Parallel is how many lines may be in flight at once (see Spawn);
	// 0 or 1 runs lines one by one, but for those ending in " &", of
	// which DefaultBackground may be in flight.
	Parallel int

	mu       sync.Mutex
	cancel   context.CancelFunc // the command in flight
	bgCancel context.CancelFunc // the lines running in the background
	stopping bool
}

// DefaultBackground is how many lines ending in " &" may be in flight at
// once without Parallel.
const DefaultBackground = 16

// job is a line running in the background, in line order.
type job struct {
	echo  string
	done  chan Result
	flush func()
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
	if r.bgCancel != nil {
		r.bgCancel()
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
// command succeeded), and 0 for an interactive session. In a script, lines
// run in the background (see Spawn) are waited for before it returns; a
// failure among them counts at its line's place, and lines already in
// flight when one fails still finish and print.
func (r *Runner) Run(ctx context.Context) int {
	bg, bgCancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.bgCancel = bgCancel
	r.mu.Unlock()
	defer bgCancel()
	limit := r.Parallel
	if limit <= 1 {
		limit = DefaultBackground
	}
	var (
		jobs  []*job
		slots = make(chan struct{}, limit)
		first = 0
		// failed is set by the first failure of a script that does not
		// keep going: its status ends the script.
		failed = -1
	)
	// settle flushes the finished lines at the head of the queue, and
	// with wait every line, in order, and counts their results.
	settle := func(wait bool) {
		for len(jobs) > 0 {
			j := jobs[0]
			var res Result
			if wait {
				res = <-j.done
			} else {
				select {
				case res = <-j.done:
				default:
					return
				}
			}
			jobs = jobs[1:]
			if r.Echo != nil {
				fmt.Fprint(r.Echo, j.echo)
			}
			j.flush()
			<-slots
			if res.Code != 0 && !r.Interactive {
				if first == 0 {
					first = res.Code
				}
				if !r.KeepGoing && failed < 0 {
					failed = res.Code
				}
			}
		}
	}
	// Lines in the background run on goroutines kept for the script (at
	// most limit): a line's stack grows deep (the command tree, the
	// session, JSON), and a goroutine of its own for each line grew it
	// again every time, a tenth of the CPU of a script run at 16 at once.
	var (
		tasks   = make(chan func())
		workers sync.WaitGroup
		started int
	)
	defer func() { close(tasks); workers.Wait() }()
	inBackground := func(f func()) {
		if started < limit {
			select {
			case tasks <- f: // an idle one takes it
				return
			default:
			}
			started++
			workers.Add(1)
			go func() {
				defer workers.Done()
				f()
				for f := range tasks {
					f()
				}
			}()
			return
		}
		tasks <- f // one is finishing: the line holds a slot
	}
	defer settle(true)
	for {
		settle(false)
		if failed >= 0 {
			settle(true)
			return failed
		}
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
			settle(true)
			if ctx.Err() != nil || r.stopped() {
				return ExitInterrupted
			}
			if failed >= 0 {
				return failed
			}
			return first
		case err != nil:
			settle(true)
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
		lctx, lbg := ctx, bg
		line := 0
		if r.Line != nil && !r.Interactive {
			line = r.Line()
			lctx, lbg = WithLine(ctx, line), WithLine(bg, line)
		}
		background := err == nil && endsInAmpersand(text, words)
		if background {
			words = words[:len(words)-1]
		}
		echo := ""
		if r.Echo != nil {
			var b strings.Builder
			for i, l := range strings.Split(text, "\n") {
				p := "mcpx> "
				if i > 0 {
					p = "...> "
				}
				if r.EscapeEcho != nil {
					l = r.EscapeEcho(l)
				}
				b.WriteString(p + l + "\n")
			}
			echo = b.String()
		}
		var run func(context.Context) Result
		var flush func()
		switch {
		case background && r.Interactive:
			err = errors.New("a line ending in & runs without waiting only in a script")
		case background && len(words) == 0:
			err = errors.New("& alone is not a command")
		case err == nil && !r.Interactive && r.Spawn != nil && (background || r.Parallel > 1):
			run, flush = r.Spawn(words)
			if run == nil && background {
				err = fmt.Errorf("%s runs in order: it cannot end in &", words[0])
			}
		}
		if run != nil {
			// Every slot held: wait for the oldest line and flush it.
			for len(slots) == cap(slots) {
				j := jobs[0]
				res := <-j.done
				j.done <- res // for settle
				settle(false)
			}
			if failed >= 0 {
				flush() // (not run: it only releases what the line held)
				return failed
			}
			slots <- struct{}{}
			j := &job{echo: echo, done: make(chan Result, 1), flush: flush}
			jobs = append(jobs, j)
			inBackground(func() { j.done <- run(lbg) })
			continue
		}
		// A line run in order waits for the lines before it.
		settle(true)
		if failed >= 0 {
			return failed
		}
		if r.Echo != nil {
			fmt.Fprint(r.Echo, echo)
		}
		var res Result
		switch {
		case err != nil && line > 0:
			res.Code = r.Report(&LineError{Line: line, Err: err}, true)
		case err != nil:
			res.Code = r.Report(err, true)
		default:
			res = r.exec(lctx, words)
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

// endsInAmpersand reports whether a line ends in a word "&" of its own
// (not quoted: "echo '&'" does not).
func endsInAmpersand(text string, words []string) bool {
	t := strings.TrimRight(text, " \t")
	return len(words) > 0 && words[len(words)-1] == "&" && strings.HasSuffix(t, "&") &&
		(len(t) == 1 || t[len(t)-2] == ' ' || t[len(t)-2] == '\t')
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
