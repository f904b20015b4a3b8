package cmd

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the standard streams a command uses, with what is known
// about them. Tests inject buffers; Main uses the process's own streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool
	// Getenv reads the environment (NO_COLOR, MCPX_*).
	Getenv func(string) string
	// Signals, when set, delivers the interrupts (os.Interrupt, SIGTERM)
	// in place of the process's own signals: tests press Ctrl-C with it.
	Signals <-chan os.Signal
}

// SystemIO returns the process's standard streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
		Getenv: os.Getenv,
	}
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// colorEnabled decides colour for a stream from --color, NO_COLOR and
// whether the stream is a terminal.
func (s *IOStreams) colorEnabled(mode string, tty bool) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if s.Getenv("NO_COLOR") != "" || s.Getenv("TERM") == "dumb" {
		return false
	}
	return tty
}
