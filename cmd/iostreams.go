package cmd

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/mcpx-dev/mcpx/internal/syncbuf"
)

// IOStreams are the standard streams a command uses, with what is known
// about them. Tests inject buffers; Main uses the process's own streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool
	// OutWidth, when set, returns the width of the terminal Out is, 0
	// when unknown: tables are fitted to it.
	OutWidth func() int
	// ErrWidth is OutWidth for ErrOut: a progress bar is fitted to it.
	ErrWidth func() int
	// Getenv reads the environment (NO_COLOR, MCPX_*).
	Getenv func(string) string
	// LookupEnv reads a variable and whether it is set, as os.LookupEnv:
	// a server definition's ${VAR} set to "" expands to "", where an
	// unset one is an error or stays as written. nil: a variable is set
	// when Getenv gives it a value.
	LookupEnv func(string) (string, bool)
	// Environ lists the environment a server command inherits
	// (os.Environ), for the secret values a trace must not keep; nil:
	// none.
	Environ func() []string
	// Signals, when set, delivers the interrupts (os.Interrupt, SIGTERM)
	// in place of the process's own signals: tests press Ctrl-C with it.
	Signals <-chan os.Signal

	// out is Out as Run installed it, which remembers a failed write.
	out *outputWriter
	// process is set on the process's own streams (SystemIO): a command
	// may then tune the process's Go runtime for itself, which one run
	// among others in a test binary must not.
	process bool
}

// lookupEnv reads a variable and whether it is set (LookupEnv, else
// Getenv, by which "" is unset).
func (s *IOStreams) lookupEnv(name string) (string, bool) {
	if s.LookupEnv != nil {
		return s.LookupEnv(name)
	}
	v := s.Getenv(name)
	return v, v != ""
}

// outputFailure returns the error of the first failed write to standard
// output, nil when none failed (or the streams are not Run's).
func (s *IOStreams) outputFailure() error {
	if s == nil || s.out == nil {
		return nil
	}
	return s.out.failure()
}

// SystemIO returns the process's standard streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY:     isTerminal(os.Stdin),
		OutTTY:    isTerminal(os.Stdout),
		ErrTTY:    isTerminal(os.Stderr),
		Getenv:    os.Getenv,
		LookupEnv: os.LookupEnv,
		Environ:   os.Environ,
		process:   true,
		OutWidth:  func() int { return terminalWidth(os.Stdout) },
		ErrWidth:  func() int { return terminalWidth(os.Stderr) },
	}
}

// NewTestIOStreams returns streams for a test: an empty stdin, stdout and
// stderr written to Buffers (which the test may read while mcpx still
// writes), no terminal, and an environment that holds only env (the real
// one is never read). Set In, the TTY fields or Signals on the result as
// the test needs.
func NewTestIOStreams(env map[string]string) (ios *IOStreams, stdout, stderr *Buffer) {
	stdout, stderr = &Buffer{}, &Buffer{}
	ios = &IOStreams{
		In:     bytes.NewReader(nil),
		Out:    stdout,
		ErrOut: stderr,
		Getenv: func(k string) string { return env[k] },
		LookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
		Environ: func() []string {
			var out []string
			for k, v := range env {
				out = append(out, k+"="+v)
			}
			return out
		},
	}
	return ios, stdout, stderr
}

// Buffer is a bytes.Buffer that is safe for concurrent use: mcpx writes to
// it from several goroutines while a test reads it.
type Buffer = syncbuf.Buffer

// outWidth is the width tables on standard output are fitted to: the
// terminal's, 0 (no limit) when Out is not a terminal or its width is
// unknown.
func (s *IOStreams) outWidth() int {
	if !s.OutTTY || s.OutWidth == nil {
		return 0
	}
	return s.OutWidth()
}

// terminalWidth is the width of the terminal f is, 0 when unknown.
func terminalWidth(f *os.File) int {
	if w, _, err := term.GetSize(int(f.Fd())); err == nil {
		return w
	}
	return 0
}

// errWidth is the width a progress bar on standard error is fitted to:
// the terminal's, 0 (no limit) when unknown.
func (s *IOStreams) errWidth() int {
	if !s.ErrTTY || s.ErrWidth == nil {
		return 0
	}
	return s.ErrWidth()
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// dumbTerminal reports whether the terminal says it understands no escape
// sequence (TERM=dumb): no colour unless asked for, no line redrawn.
func (s *IOStreams) dumbTerminal() bool { return s.Getenv("TERM") == "dumb" }

// colorEnabled decides colour for a stream from --color, NO_COLOR and
// whether the stream is a terminal.
func (s *IOStreams) colorEnabled(mode string, tty bool) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if s.Getenv("NO_COLOR") != "" || s.dumbTerminal() {
		return false
	}
	return tty
}

// outputWriter is standard output as commands see it (Run installs it).
// It remembers the first failed write — a full disk, a closed pipe, a
// file too large — after which every write fails at once with the same
// error, and tells onError, which cancels the run: the REPL, watch and
// the proxies stop at the first output that is lost instead of going on
// silently, and Run reports the failure (once, for every command).
type outputWriter struct {
	w       io.Writer
	onError func(error)

	mu  sync.Mutex
	err error
}

func (o *outputWriter) Write(p []byte) (int, error) {
	if err := o.failure(); err != nil {
		return 0, err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.mu.Lock()
		first := o.err == nil
		if first {
			o.err = err
		}
		o.mu.Unlock()
		if first && o.onError != nil {
			o.onError(err)
		}
	}
	return n, err
}

// failure returns the first failed write's error, nil while none failed.
func (o *outputWriter) failure() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Fd returns the descriptor of the underlying file (the line editor
// measures the terminal with it), or ^uintptr(0) when it is not a file.
func (o *outputWriter) Fd() uintptr {
	if f, ok := o.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// outputError is a failed write to standard output.
type outputError struct{ err error }

func (e *outputError) Error() string {
	err := e.err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // "write /dev/stdout: ..." says nothing more
	}
	return "writing to standard output: " + err.Error()
}

func (e *outputError) Unwrap() error { return e.err }

// brokenPipe reports a write to a pipe whose reader is gone
// (mcpx … | head -1): not a failure worth a word.
func brokenPipe(err error) bool {
	if errors.Is(err, syscall.EPIPE) {
		return true
	}
	if runtime.GOOS == "windows" {
		// ERROR_BROKEN_PIPE, ERROR_NO_DATA ("the pipe is being closed").
		var errno syscall.Errno
		return errors.As(err, &errno) && (errno == 109 || errno == 232)
	}
	return false
}
