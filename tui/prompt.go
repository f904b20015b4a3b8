package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/inspector"
)

// Prompter asks a person questions, one line at a time. Its reader and
// writer are injected (the terminal in mcpx, buffers in tests), so every
// interactive flow is testable without a terminal.
//
// Server requests are answered concurrently, but a person can answer only
// one at a time: Begin serialises whole conversations, so the questions of
// two elicitations never interleave.
type Prompter struct {
	out         io.Writer
	interactive bool

	conv sync.Mutex // held for a whole conversation (Begin/end)

	start sync.Once
	in    io.Reader
	lines chan lineResult
	want  chan struct{}

	// hold is the gate of the writers Gate returned: closed while a
	// conversation is in progress.
	hold holdState

	mu          sync.Mutex
	outstanding bool  // the reader was asked for a line not yet taken
	readErr     error // the reader's final error (io.EOF): every later read gets it
	src         LineSource
}

// LineSource reads answers for a Prompter that shares the terminal with a
// line editor (the REPL), so that one reader owns the terminal: it shows
// the prompt itself and returns the line typed, or ErrDismissed when the
// person dismissed the question.
type LineSource interface {
	ReadLine(ctx context.Context, prompt string) (string, error)
	// Hold gives the terminal to one conversation until release is
	// called; the editor's own prompt waits meanwhile.
	Hold(ctx context.Context) (release func(), err error)
}

// UseLineSource makes p read its answers from src instead of its reader.
func (p *Prompter) UseLineSource(src LineSource) {
	p.mu.Lock()
	p.src = src
	p.mu.Unlock()
}

func (p *Prompter) source() LineSource {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.src
}

type lineResult struct {
	text string
	err  error
}

// NewPrompter returns a Prompter that reads answers from in and writes
// questions to out. interactive says whether a person is there to answer
// (stdin and stderr are terminals); policies that need one refuse
// otherwise.
func NewPrompter(in io.Reader, out io.Writer, interactive bool) *Prompter {
	return &Prompter{in: in, out: out, interactive: interactive}
}

// Interactive reports whether a person can be asked.
func (p *Prompter) Interactive() bool { return p != nil && p.interactive }

// Begin starts a conversation: it waits until no other conversation is in
// progress (or ctx ends) and returns the function that ends it.
func (p *Prompter) Begin(ctx context.Context) (end func(), err error) {
	got := make(chan struct{})
	go func() {
		p.conv.Lock()
		close(got)
	}()
	select {
	case <-got:
		src := p.source()
		if src == nil {
			p.hold.close()
			return func() { p.hold.open(); p.conv.Unlock() }, nil
		}
		release, err := src.Hold(ctx)
		if err != nil {
			p.conv.Unlock()
			return nil, err
		}
		p.hold.close()
		return func() { p.hold.open(); release(); p.conv.Unlock() }, nil
	case <-ctx.Done():
		// Take and release the lock once it comes so it is not lost.
		go func() {
			<-got
			p.conv.Unlock()
		}()
		return nil, ctx.Err()
	}
}

// Printf writes to the person.
func (p *Prompter) Printf(format string, args ...any) {
	fmt.Fprintf(p.out, format, args...)
}

// Println writes one line to the person.
func (p *Prompter) Println(s string) { fmt.Fprintln(p.out, s) }

// reader runs in its own goroutine: a read from a terminal cannot be
// interrupted, so it reads a line only when one is wanted and hands it over;
// the asker stops waiting when its context ends.
func (p *Prompter) reader() {
	br := bufio.NewReader(p.in)
	for range p.want {
		s, err := br.ReadString('\n')
		if err != nil && s != "" && errors.Is(err, io.EOF) {
			err = nil // a last line without a newline
		}
		p.lines <- lineResult{text: strings.TrimRight(s, "\r\n"), err: err}
		if err != nil {
			return
		}
	}
}

// ReadLine shows prompt and returns the line the person typed, without its
// newline. At end of input it returns io.EOF.
func (p *Prompter) ReadLine(ctx context.Context, prompt string) (string, error) {
	if !p.Interactive() {
		return "", inspector.ErrNoTerminal
	}
	if src := p.source(); src != nil {
		return src.ReadLine(ctx, prompt)
	}
	p.start.Do(func() {
		p.lines = make(chan lineResult, 1)
		p.want = make(chan struct{}, 1)
		go p.reader()
	})
	fmt.Fprint(p.out, prompt)
	// A line asked for by an asker that gave up is the answer to this
	// question; otherwise ask the reader for one.
	p.mu.Lock()
	if p.readErr != nil {
		p.mu.Unlock()
		fmt.Fprintln(p.out)
		return "", p.readErr
	}
	if !p.outstanding {
		p.outstanding = true
		p.want <- struct{}{}
	}
	p.mu.Unlock()
	select {
	case r := <-p.lines:
		p.mu.Lock()
		p.outstanding = false
		p.readErr = r.err
		p.mu.Unlock()
		return r.text, r.err
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return "", ctx.Err()
	}
}

// Choose asks for one of the given single-letter choices (case-insensitive);
// an empty answer picks def. Unknown answers are asked again.
func (p *Prompter) Choose(ctx context.Context, question string, choices []string, def string) (string, error) {
	for {
		line, err := p.ReadLine(ctx, question)
		if err != nil {
			return "", err
		}
		a := strings.ToLower(strings.TrimSpace(line))
		if a == "" {
			return def, nil
		}
		for _, c := range choices {
			if a == c || (len(c) > 0 && a == c[:1]) {
				return c, nil
			}
		}
		p.Printf("  please answer %s\n", strings.Join(choices, ", "))
	}
}

// Gate returns a writer to w that, while a conversation is in progress
// (between Begin and its end), holds what is written and writes it, in
// order, when the conversation ends: progress bars, log messages and
// notifications that arrive during a form would otherwise land between a
// field's label and its input. What is held is bounded (maxHeld); beyond
// that it is dropped, and the drop said when the conversation ends.
func (p *Prompter) Gate(w io.Writer) io.Writer {
	return &gateWriter{h: &p.hold, w: w}
}

// maxHeld bounds what a gate holds during one conversation.
const maxHeld = 1 << 20

// holdState is whether the gates are closed, and what they hold.
type holdState struct {
	mu      sync.Mutex
	closed  bool
	pending []*gateWriter // the gates holding something, in order of their first write
}

func (h *holdState) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
}

// open writes what the gates held and lets writes through again. Writes
// meanwhile wait, so that nothing overtakes what was held.
func (h *holdState) open() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = false
	for _, g := range h.pending {
		_, _ = g.w.Write(g.buf)
		if g.dropped > 0 {
			fmt.Fprintf(g.w, "(%d bytes of output that arrived during the conversation were dropped)\n", g.dropped)
		}
		g.buf, g.dropped = nil, 0
	}
	h.pending = nil
}

type gateWriter struct {
	h       *holdState
	w       io.Writer
	buf     []byte // guarded by h.mu
	dropped int
}

func (g *gateWriter) Write(b []byte) (int, error) {
	g.h.mu.Lock()
	defer g.h.mu.Unlock()
	if !g.h.closed {
		return g.w.Write(b)
	}
	if g.buf == nil && g.dropped == 0 {
		g.h.pending = append(g.h.pending, g)
	}
	if len(g.buf)+len(b) > maxHeld {
		g.dropped += len(b)
	} else {
		g.buf = append(g.buf, b...)
	}
	return len(b), nil
}
