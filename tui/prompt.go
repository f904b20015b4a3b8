package tui

import (
	"bufio"
	"bytes"
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

	conv turns // one conversation at a time (Begin/end), in the order they began

	start sync.Once
	in    io.Reader
	lines chan lineResult
	want  chan struct{}
	drop  chan chan struct{} // asks the reader to drop what it holds
	// discard drops what the terminal holds typed ahead (nil: nothing
	// to do); see DiscardTypeAhead.
	discard func() error

	// hold is the gate of the writers Gate returned: closed while a
	// conversation is in progress.
	hold holdState

	mu          sync.Mutex
	outstanding bool // the reader was asked for a line not yet taken
	// stale is set when the question that asked for the outstanding line
	// went away because the server withdrew its request: what was typed
	// for it is not the answer to the next question.
	stale   bool
	width   func() int // the terminal's columns (nil or 0: unknown, no wrapping)
	readErr error      // the reader's final error (io.EOF): every later read gets it
	src     LineSource
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

// DiscardTypeAhead makes every conversation begin by dropping what was
// typed before its first question appeared: discard drops what the
// terminal holds (ttyin.Discard), and the Prompter what it read ahead.
// An answer, consent above all (open this page?), must be typed after
// the question was shown: a "y" typed twice for the question before is
// not one for this. For a terminal read line by line (no LineSource);
// input that is not a terminal, a script, is all typed ahead and kept.
func (p *Prompter) DiscardTypeAhead(discard func() error) {
	p.mu.Lock()
	p.discard = discard
	p.mu.Unlock()
}

// dropTypeAhead drops what was typed ahead (see DiscardTypeAhead), unless
// a line is being read: that one is the answer to a question asked
// already (the next prompt's, after an OAuth paste prompt gave way), or
// is dropped as stale.
func (p *Prompter) dropTypeAhead() {
	p.mu.Lock()
	discard, outstanding := p.discard, p.outstanding
	p.mu.Unlock()
	if discard == nil || outstanding {
		return
	}
	p.startReader()
	ack := make(chan struct{})
	p.drop <- ack
	<-ack
	_ = discard() // (best effort: a terminal that cannot is no worse off)
}

// startReader starts the goroutine that reads lines, once.
func (p *Prompter) startReader() {
	p.start.Do(func() {
		p.lines = make(chan lineResult, 1)
		p.want = make(chan struct{}, 1)
		p.drop = make(chan chan struct{})
		go p.reader()
	})
}

// Interactive reports whether a person can be asked.
func (p *Prompter) Interactive() bool { return p != nil && p.interactive }

// Begin starts a conversation: it waits until no other conversation is in
// progress (or ctx ends) and returns the function that ends it. The
// conversations that wait take their turns in the order the server sent
// the requests they answer (inspector.Arrival), then in the order they
// began: handlers run concurrently and reach Begin in any order, and a
// person should be asked a server's questions in the order it asked them.
func (p *Prompter) Begin(ctx context.Context) (end func(), err error) {
	if err := p.conv.take(ctx, inspector.Arrival(ctx)); err != nil {
		return nil, err
	}
	src := p.source()
	if src == nil {
		p.dropTypeAhead()
		p.hold.close()
		return func() { p.hold.open(); p.conv.pass() }, nil
	}
	release, err := src.Hold(ctx)
	if err != nil {
		p.conv.pass()
		return nil, err
	}
	p.hold.close()
	return func() { p.hold.open(); release(); p.conv.pass() }, nil
}

// turns lets one holder at a time in, the others in order.
type turns struct {
	mu      sync.Mutex
	busy    bool
	waiting []*turn // in the order they go
}

type turn struct {
	order uint64        // the request's arrival; 0, unknown, goes last
	ready chan struct{} // closed when it is this turn
}

// after reports whether t goes after a turn of the given order.
func (t *turn) after(order uint64) bool {
	return order != 0 && (t.order == 0 || order < t.order)
}

// take waits for the turn of a holder of the given order, or until ctx
// ends.
func (q *turns) take(ctx context.Context, order uint64) error {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	me := &turn{order: order, ready: make(chan struct{})}
	i := len(q.waiting)
	for i > 0 && q.waiting[i-1].after(order) {
		i--
	}
	q.waiting = append(q.waiting[:i], append([]*turn{me}, q.waiting[i:]...)...)
	q.mu.Unlock()
	select {
	case <-me.ready:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		for i, w := range q.waiting {
			if w == me {
				q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
				q.mu.Unlock()
				return ctx.Err()
			}
		}
		q.mu.Unlock()
		q.pass() // the turn came meanwhile: hand it on
		return ctx.Err()
	}
}

// pass ends the turn: the next waiter's begins.
func (q *turns) pass() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) > 0 {
		close(q.waiting[0].ready)
		q.waiting = q.waiting[1:]
		return
	}
	q.busy = false
}

// waiters returns how many wait for their turn.
func (q *turns) waiters() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// SetWidth gives the Prompter the width of the terminal it writes to,
// read at each line (0 when unknown or not a terminal): what it prints is
// wrapped at spaces to fit (WrapText), as the terminal would otherwise
// break a question mid-word at its edge. Without it, or at 0, text is
// written as it is, for a script or a log.
func (p *Prompter) SetWidth(width func() int) {
	p.mu.Lock()
	p.width = width
	p.mu.Unlock()
}

func (p *Prompter) wrap(s string) string {
	p.mu.Lock()
	width := p.width
	p.mu.Unlock()
	if width == nil {
		return s
	}
	return WrapText(s, width())
}

// Printf writes to the person, wrapped to the terminal (SetWidth).
func (p *Prompter) Printf(format string, args ...any) {
	_, _ = io.WriteString(p.out, p.wrap(fmt.Sprintf(format, args...)))
}

// Println writes one line to the person, wrapped to the terminal
// (SetWidth).
func (p *Prompter) Println(s string) { fmt.Fprintln(p.out, p.wrap(s)) }

// reader runs in its own goroutine: a read from a terminal cannot be
// interrupted, so it reads a line only when one is wanted and hands it over;
// the asker stops waiting when its context ends.
func (p *Prompter) reader() {
	br := bufio.NewReader(p.in)
	for {
		select {
		case ack := <-p.drop:
			_, _ = br.Discard(br.Buffered())
			close(ack)
			continue
		case <-p.want:
		}
		s, err := br.ReadString('\n')
		if err != nil && s != "" && errors.Is(err, io.EOF) {
			err = nil // a last line without a newline
		}
		p.lines <- lineResult{text: strings.TrimRight(s, "\r\n"), err: err}
		if err != nil {
			// Every later read gets err (readErr); a drop has nothing
			// left to drop.
			for ack := range p.drop {
				close(ack)
			}
			return
		}
	}
}

// ReadLine shows prompt and returns the line the person typed, without its
// newline. At end of input it returns io.EOF. On a terminal line by line
// (no LineSource), a line of only Esc dismisses the question
// (inspector.ErrDismissed), and a line with other control characters
// (arrow keys, which do not edit there) is asked again.
func (p *Prompter) ReadLine(ctx context.Context, prompt string) (string, error) {
	if !p.Interactive() {
		return "", inspector.ErrNoTerminal
	}
	if src := p.source(); src != nil {
		return src.ReadLine(ctx, prompt)
	}
	p.startReader()
	for {
		line, err := p.readLine(ctx, prompt)
		if err != nil {
			return line, err
		}
		switch answer := strings.TrimSpace(line); {
		case answer == "\x1b":
			p.Println("(dismissed)")
			return "", inspector.ErrDismissed
		case strings.ContainsFunc(line, isTypedControl):
			p.Println("  ✗ that line holds control characters (arrow keys and Esc do not edit here); type the answer again, or Esc alone and Enter to dismiss")
			continue
		}
		return line, nil
	}
}

// isTypedControl reports a control character that has no place in an
// answer typed on a line: what arrow keys, Esc or Ctrl-letters put there
// on a terminal that does not edit lines itself. A tab is text.
func isTypedControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// readLine asks the reader for one line (see ReadLine).
func (p *Prompter) readLine(ctx context.Context, prompt string) (string, error) {
	for {
		fmt.Fprint(p.out, prompt)
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
			stale := p.stale
			p.stale = false
			p.mu.Unlock()
			if r.err != nil {
				fmt.Fprintln(p.out) // (the input ended on the prompt's line)
				return r.text, r.err
			}
			if stale {
				// The line was begun for a question that went away; what
				// the person typed after this one appeared is in it too.
				p.Println("  (that line was begun for a question that went away; type the answer again)")
				continue
			}
			return r.text, nil
		case <-ctx.Done():
			if inspector.Withdrawn(ctx) {
				// (Not for other ends: the lines typed after an OAuth
				// paste prompt gave way to the browser are the next
				// prompt's.)
				p.mu.Lock()
				p.stale = true
				p.mu.Unlock()
			}
			fmt.Fprintln(p.out)
			return "", ctx.Err()
		}
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
//
// A line left unfinished on the terminal (a progress bar, redrawn in place)
// is erased when the conversation begins, and drawn again when it ends:
// left there, the conversation's first line was printed below it, and the
// bar, never redrawn where it stood, stayed in the transcript.
func (p *Prompter) Gate(w io.Writer) io.Writer {
	g := &gateWriter{h: &p.hold, w: w}
	p.hold.mu.Lock()
	p.hold.gates = append(p.hold.gates, g)
	p.hold.mu.Unlock()
	return g
}

// unfinished returns the unfinished line after b is written after the
// unfinished line partial: what follows b's last line break or CR.
func unfinished(partial, b []byte) []byte {
	if i := bytes.LastIndexAny(b, "\r\n"); i >= 0 {
		partial, b = partial[:0], b[i+1:]
	}
	if len(partial)+len(b) > maxPartial {
		return partial[:0]
	}
	return append(partial, b...)
}

// maxHeld bounds what a gate holds during one conversation.
const maxHeld = 1 << 20

// holdState is whether the gates are closed, and what they hold.
type holdState struct {
	mu      sync.Mutex
	closed  bool
	pending []*gateWriter // the gates holding something, in order of their first write
	gates   []*gateWriter // every gate
}

// erase is what takes an unfinished line off the terminal.
const erase = "\r\x1b[K"

func (h *holdState) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, g := range h.gates {
		if g.drawn() {
			_, _ = io.WriteString(g.w, erase)
		}
	}
}

// open writes what the gates held and lets writes through again. Writes
// meanwhile wait, so that nothing overtakes what was held.
func (h *holdState) open() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = false
	for _, g := range h.gates {
		if g.drawn() {
			_, _ = g.w.Write(append([]byte("\r"), g.partial...))
		}
	}
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
	// partial is the line written last, not finished, from its last CR
	// (guarded by h.mu; bounded by maxPartial, else forgotten).
	partial []byte
}

// drawn reports whether the unfinished line shows something (more than the
// erase of the line a progress bar was on).
func (g *gateWriter) drawn() bool {
	return len(bytes.TrimPrefix(g.partial, []byte(erase[1:]))) > 0
}

// maxPartial bounds the unfinished line a gate keeps to draw again.
const maxPartial = 4 << 10

func (g *gateWriter) Write(b []byte) (int, error) {
	g.h.mu.Lock()
	defer g.h.mu.Unlock()
	if !g.h.closed {
		g.partial = unfinished(g.partial, b)
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
