package repl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/chzyer/readline"
	"golang.org/x/term"

	"github.com/mcpx-dev/mcpx/inspector"
)

// ErrInterrupt is returned by ReadCommand when the person pressed Ctrl-C;
// the text returned with it is what they had typed (now discarded).
var ErrInterrupt = errors.New("interrupted")

// Terminal is what the editor draws on and reads from.
type Terminal struct {
	// In gives the keys. When it is the process's terminal (Real), the
	// editor switches it to raw mode while a line is edited.
	In io.Reader
	// Out is where the prompt and the line being edited are drawn; Other
	// is the second output stream that shares the screen (stderr when Out
	// is stdout), or nil.
	Out, Other io.Writer
	// Real is true for the process's own terminal; false for injected
	// streams (tests), which get no raw mode and a width of 80.
	Real bool
}

// EditorOptions configure an Editor.
type EditorOptions struct {
	Prompt         string // "mcpx> "
	ContinuePrompt string // for the lines of an unfinished command
	// HistoryFile persists commands ("" keeps them for this session only).
	// It is private (0600, in a 0700 directory): commands can hold
	// secrets.
	HistoryFile  string
	HistoryLimit int // default 1000
	// OnHistoryError is told, once, that the history file could not be
	// read or written (the commands are then kept for this session only).
	OnHistoryError func(error)
	Complete       readline.AutoCompleter
	// OnInterrupt is called when the person presses Ctrl-C while answering
	// a question (a server request): the command in flight is cancelled,
	// once the question's answer (cancel) is shown (inspector.AfterAnswer).
	OnInterrupt func()
}

// Editor reads commands from a person at a terminal: line editing,
// completion, history, multi-line commands. It shares the terminal with
// questions asked while a command runs (or while the prompt waits:
// a server may ask at any time): the prompt gives way to a question and
// comes back with what was typed. Output written through Out and Other is
// printed above the prompt without disturbing the line being typed.
type Editor struct {
	rl     *readline.Instance
	keys   *keyReader
	cursor *cursorWriter // readline's output, its cursor moves put right
	o      EditorOptions

	term chan struct{} // the terminal: held by the prompt or a question

	mu          sync.Mutex
	cond        *sync.Cond
	mainReading bool // the prompt is reading
	preempted   bool // keys were injected to take the prompt away
	holders     int  // conversations holding or waiting for the terminal
	held        bool // a conversation holds the terminal

	used      atomic.Bool // a line was read once
	asking    atomic.Bool // a question is read (see promptCompleter)
	dismissed atomic.Bool // the question's line ended with Esc, Enter (dismissKey)
	real      bool        // the terminal is the process's
	out       io.Writer   // the streams, as given
	other     io.Writer

	// The text of the pasteKey readline is handling (its goroutine only).
	piece    []rune
	pieceDue bool

	// The line as readline drew it last (see drawnLine), and as it was
	// when the key readline is handling came (its goroutine only; see
	// wholeChars).
	drawn  drawnLine
	before *lineState

	// What the last key that cut took, whole, for Ctrl-Y to put back
	// (its goroutine only; see noteCut): readline's kill buffer holds
	// the runes it cut itself, a part of a character wholeChars cut
	// whole (👩 of 👩‍💻). ownKill is false until a cut is known, and
	// after one that is not: then readline's own Ctrl-Y stands.
	kill    []rune
	ownKill bool
	// What was cut is for the line it was cut from, a command's or a
	// question's: hideHistory and restoreHistory count each change
	// (asked), and the last cutting key notes the count it came in
	// (cutIn, its goroutine only); Ctrl-Y in another does nothing, so
	// that an answer (a password, say) cut with Ctrl-U is not put into
	// the prompt's line afterwards, nor a command into an answer —
	// readline's own kill buffer included.
	asked atomic.Uint64
	cutIn uint64

	// Output while a line is edited waits here for readline's own
	// goroutine (see aboveWriter).
	aboveMu sync.Mutex
	editing bool // a line is being edited: output goes above it
	queue   []aboveItem
	queued  int  // bytes in queue
	woken   bool // a wake key is on its way

	// The terminal's echo, off between lines (see quiet).
	echoMu     sync.Mutex
	echoFd     uintptr
	echoable   bool // echoFd is a terminal whose echo can be turned off
	echoOff    bool
	echoClosed bool

	hist *historyFile
	// The commands given to readline's history, in order (at most
	// HistoryLimit): a question empties readline's history while it is
	// asked and gives it these back after (see hideHistory).
	histMu     sync.Mutex
	cmds       []string
	histHidden bool

	closeOnce sync.Once
}

// NewEditor starts an editor on t.
func NewEditor(t Terminal, o EditorOptions) (*Editor, error) {
	if o.HistoryLimit == 0 {
		o.HistoryLimit = 1000
	}
	keys := newKeyReader(t.In, t.Real)
	other := t.Other
	if other == nil {
		other = t.Out
	}
	e := &Editor{keys: keys, o: o, term: make(chan struct{}, 1), out: t.Out, other: other, real: t.Real}
	e.cond = sync.NewCond(&e.mu)
	e.cursor = &cursorWriter{w: t.Out, width: widthOf(t.Out), prompt: o.Prompt}
	keys.dismissible = e.asking.Load
	if f, ok := t.In.(interface{ Fd() uintptr }); ok && t.Real {
		e.echoFd, e.echoable = f.Fd(), true
	}
	cfg := &readline.Config{
		Prompt:                 o.Prompt,
		HistoryLimit:           o.HistoryLimit,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		Stdin:                  keys,
		Stdout:                 e.cursor,
		Stderr:                 other,
		FuncIsTerminal:         func() bool { return true },
		FuncFilterInputRune: func(r rune) (rune, bool) {
			e.before = nil
			switch {
			case r == readline.CharDelete && keys.claimWake():
				if e.drainAbove() {
					keys.Redraw()
				}
				return r, false
			case r == searchRedrawKey:
				return e.redrawSearch(), true
			case r == pasteKey:
				return e.takePiece(), true
			case r == dismissKey:
				e.dismissed.Store(true)
				return r, false
			case r == readline.CharCtrlY && e.cutIn != e.asked.Load():
				return r, false
			case r == readline.CharCtrlY && e.ownKill:
				return e.yank(), true
			case cutsChars(r) && (kills(r) || !e.rl.Operation.IsSearchMode()):
				e.before = e.drawn.before()
				if kills(r) {
					e.cutIn = e.asked.Load()
				}
			}
			return r, true
		},
		Listener:     readline.FuncListener(e.onChange),
		Painter:      &e.drawn,
		FuncGetWidth: widthOf(t.Out),
	}
	if o.Complete != nil {
		cfg.AutoComplete = promptCompleter{e: e, c: o.Complete, width: widthOf(t.Out)}
	}
	if !t.Real {
		noop := func() error { return nil }
		cfg.FuncMakeRaw, cfg.FuncExitRaw = noop, noop
		cfg.FuncOnWidthChanged = func(func()) {}
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return nil, err
	}
	e.rl = rl
	if o.HistoryFile != "" {
		e.loadHistory(o.HistoryFile)
	}
	return e, nil
}

// setPrompt sets the prompt readline draws the line with.
func (e *Editor) setPrompt(p string) {
	e.cursor.setPrompt(p)
	e.rl.SetPrompt(p)
}

// promptCompleter completes at the prompt only: a question's answer (an
// elicitation's field, a sampling reply) is not a command, and Tab there
// offered mcpx's commands (to, Tab: "tools ").
//
// Of several candidates, it leaves out those too wide to be listed on
// the terminal (fitCandidates).
type promptCompleter struct {
	e     *Editor
	c     readline.AutoCompleter
	width func() int
}

func (p promptCompleter) Do(line []rune, pos int) ([][]rune, int) {
	if p.e.asking.Load() {
		return nil, 0
	}
	cands, offset := p.c.Do(line, pos)
	return fitCandidates(cands, offset, p.width()), offset
}

// fitCandidates keeps a list of several candidates to those narrow
// enough to be listed on a terminal of width columns. readline lists
// candidates in columns as wide as the widest, each padded to it, and
// counts one row a column: a server's 10,000-character completion value
// padded every other candidate with 10,000 spaces, and the line was
// drawn again rows away from where it was. Leaving one out must not make
// the rest look like all there is, so where some do not fit: the prefix
// they all share is inserted when there is one; otherwise the ones that
// fit are listed when they share no prefix (readline would insert one,
// past where the others part), and nothing is completed when they do or
// when one or none is left. A candidate alone is inserted, never listed,
// and kept; a candidate left out can still be typed.
func fitCandidates(cands [][]rune, offset, width int) [][]rune {
	if len(cands) < 2 {
		return cands
	}
	// readline's room: the width short of its last column, a column the
	// shown prefix (offset runes) and the candidate wide, and one space.
	room := width - 1 - offset - 1
	fit := cands[:0:0]
	for _, c := range cands {
		if (readline.Runes{}).WidthAll(c) <= room {
			fit = append(fit, c)
		}
	}
	switch {
	case len(fit) == len(cands):
		return cands
	case len(commonPrefix(cands)) > 0:
		return [][]rune{commonPrefix(cands)}
	case len(fit) >= 2 && len(commonPrefix(fit)) == 0:
		return fit
	}
	return nil
}

// commonPrefix returns the runes every candidate begins with.
func commonPrefix(cands [][]rune) []rune {
	p := cands[0]
	for _, c := range cands[1:] {
		n := 0
		for n < len(p) && n < len(c) && p[n] == c[n] {
			n++
		}
		p = p[:n]
	}
	return p
}

func widthOf(w io.Writer) func() int {
	return func() int {
		// A file, or a writer in front of one (mcpx's standard output).
		if f, ok := w.(interface{ Fd() uintptr }); ok {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				return w
			}
		}
		return 80
	}
}

// Out returns a writer to the drawing stream that prints above the line
// being edited, if there is one.
func (e *Editor) Out() io.Writer { return &aboveWriter{e: e, direct: e.out, above: e.rl.Stdout()} }

// Other returns a writer to the second stream that prints above the line
// being edited.
func (e *Editor) Other() io.Writer {
	return &aboveWriter{e: e, direct: e.other, above: e.rl.Stderr()}
}

// aboveWriter writes straight through while no line is edited. While one
// is, the line must be cleared, the output written and the line drawn
// again — by readline's own goroutine: it changes its state (the line on
// Enter, completion and search modes) without a lock, so readline's
// writer, called from another goroutine (a notification from the server)
// while a key is being handled, is a data race. So the output waits in
// the editor's queue, and a key of the editor's own (keyReader.Wake) has
// readline's goroutine print it in its input filter (drainAbove), between
// two of the person's keys. What is still queued when the line ends is
// written straight through, in order.
type aboveWriter struct {
	e             *Editor
	direct, above io.Writer
	err           error // the first failed write of queued output
}

type aboveItem struct {
	w *aboveWriter
	b []byte
}

// aboveLimit bounds the output waiting for readline's goroutine (busy
// completing a name, say, with the server's help): past it a writer
// prints what waits itself, through readline's writer as before — the
// race above, rather than memory that grows with what a server sends.
const aboveLimit = 1 << 20

func (w *aboveWriter) Write(b []byte) (int, error) {
	e := w.e
	e.aboveMu.Lock()
	defer e.aboveMu.Unlock()
	if !e.editing {
		return w.direct.Write(b)
	}
	if w.err != nil {
		return 0, w.err
	}
	e.queue = append(e.queue, aboveItem{w: w, b: bytes.Clone(b)})
	e.queued += len(b)
	if e.queued > aboveLimit {
		e.printQueued(true)
		return len(b), w.err
	}
	if !e.woken {
		e.woken = true
		e.keys.Wake()
	}
	return len(b), nil
}

// printQueued writes the queue out (through readline's writer, or
// straight through), with aboveMu held.
func (e *Editor) printQueued(viaReadline bool) {
	for _, it := range e.queue {
		out := it.w.direct
		if viaReadline {
			out = it.w.above
		}
		if _, err := out.Write(it.b); err != nil && it.w.err == nil {
			it.w.err = err
		}
	}
	e.queue, e.queued = nil, 0
}

// drainAbove runs on readline's goroutine, in its input filter, when a
// wake key comes: it takes the line off the screen and prints the queued
// output; readline then draws the line again. Completion ends: its
// candidates go with the line. A search (Ctrl-R) goes on, but readline
// draws only the line after a key its filter takes: drainAbove reports
// the search, and the editor has a searchRedrawKey follow to draw its
// prompt again.
func (e *Editor) drainAbove() (search bool) {
	e.aboveMu.Lock()
	defer e.aboveMu.Unlock()
	e.woken = false
	if len(e.queue) == 0 {
		return false
	}
	if e.editing {
		op := e.rl.Operation
		if op.IsInCompleteMode() {
			op.ExitCompleteMode(false)
		}
		search = op.IsSearchMode()
		e.rl.Clean()
	}
	e.printQueued(false)
	return search
}

// searchRedrawKey is the key the editor has readline read after output
// printed during a search (see drainAbove): it comes right after the wake
// key, in the same read, so no key of the person's comes between. The
// character itself is never handed over as a key (text holding it goes
// as a piece, see keyReader.flushRun).
const searchRedrawKey = '\uFDD0' // a noncharacter

// searchProbe is what redrawSearch adds to the text searched for: a
// surrogate, which no line read and no line of the history holds
// (readline decodes the terminal's bytes, and Go a string's, with U+FFFD
// in place of one), so the search it makes finds nothing.
const searchProbe rune = 0xDFFF

// redrawSearch runs on readline's goroutine, in its input filter, when a
// searchRedrawKey comes, and returns the key readline is to handle in its
// place. Readline draws a search's prompt (below the line) only as it
// searches: the probe is added to what is searched for (which finds
// nothing, and draws the prompt) and the Backspace returned takes it out
// (which finds again what was found, from where it stands, and draws the
// line and the prompt). Outside a search (it ended meanwhile), the key is
// a Bell, which does nothing there.
func (e *Editor) redrawSearch() rune {
	op := e.rl.Operation
	if !op.IsSearchMode() {
		return readline.CharBell
	}
	op.SearchChar(searchProbe)
	return readline.CharBackspace
}

// searchPieceMax is the longest text that goes into a search (Ctrl-R)
// under way rather than ending it: each character searches the history
// again.
const searchPieceMax = 256

// takePiece runs on readline's goroutine, in its input filter, when a
// pasteKey comes, and returns the key readline is to handle in its place.
// During a search (Ctrl-R) a short text is what is searched for, as if
// typed (all but its last character are added here, the last is the key
// returned). Otherwise the completion or search under way ends, and the
// text goes into the line: readline inserts the pasteKey, and insertPiece
// replaces it.
func (e *Editor) takePiece() rune {
	piece := e.keys.takePiece()
	op := e.rl.Operation
	if op.IsSearchMode() && len(piece) > 0 && len(piece) <= searchPieceMax {
		for _, r := range piece[:len(piece)-1] {
			op.SearchChar(r)
		}
		return piece[len(piece)-1]
	}
	if op.IsInCompleteMode() {
		op.ExitCompleteMode(false)
	}
	if op.IsSearchMode() {
		op.ExitSearchMode(false)
	}
	e.piece, e.pieceDue = piece, true
	return pasteKey
}

// onChange is readline's listener, called on its goroutine after each key
// it handled with the line and the cursor (and, with no key, by the
// goroutine that reads a line as it begins): it returns the line and the
// cursor to put in their place, ok false when they stand.
func (e *Editor) onChange(line []rune, pos int, key rune) ([]rune, int, bool) {
	switch key {
	case 0:
		return nil, 0, false
	case pasteKey:
		return e.insertPiece(line, pos, key)
	}
	before := e.before
	e.before = nil
	out, to, ok := wholeChars(before, line, pos, key)
	if kills(key) {
		if ok {
			e.noteCut(before, out, to)
		} else {
			e.noteCut(before, line, pos)
		}
	}
	return out, to, ok
}

// noteCut keeps what a key that cut (see kills) took from before's line
// to leave line, for Ctrl-Y (see yank). A key that took nothing leaves
// what was kept as it was; a cut that cannot be told (before not known)
// hands Ctrl-Y back to readline.
func (e *Editor) noteCut(before *lineState, line []rune, pos int) {
	cut, ok := cutText(before, line, pos)
	switch {
	case !ok:
		e.kill, e.ownKill = nil, false
	case len(cut) > 0:
		e.kill, e.ownKill = cut, true
	}
}

// yank runs on readline's goroutine, in its input filter, for a Ctrl-Y
// when the editor knows the last cut (noteCut), and returns the key
// readline is to handle in its place: a pasteKey whose text is the cut,
// which insertPiece puts in the line as it does a pasted text. readline's
// own Ctrl-Y puts back its kill buffer, which holds only the runes it cut
// itself: after Delete on 👩‍💻 (three runes), 👩, and nothing of what
// Ctrl-W cut from the line's start. As readline's does, it ends a search
// (Ctrl-R) or completion under way.
func (e *Editor) yank() rune {
	op := e.rl.Operation
	if op.IsInCompleteMode() {
		op.ExitCompleteMode(false)
	}
	if op.IsSearchMode() {
		op.ExitSearchMode(false)
	}
	e.piece, e.pieceDue = slices.Clone(e.kill), true
	return pasteKey
}

// insertPiece puts a pasted text in the line (see onChange): after a
// pasteKey, which readline inserted before the cursor, the key's text goes
// in its place.
func (e *Editor) insertPiece(line []rune, pos int, key rune) ([]rune, int, bool) {
	if key != pasteKey || !e.pieceDue {
		return nil, 0, false
	}
	piece := e.piece
	e.piece, e.pieceDue = nil, false
	if pos < 1 || pos > len(line) || line[pos-1] != pasteKey {
		return nil, 0, false
	}
	out := make([]rune, 0, len(line)-1+len(piece))
	out = append(append(append(out, line[:pos-1]...), piece...), line[pos:]...)
	return out, pos - 1 + len(piece), true
}

// Bracketed paste on and off (xterm's mode 2004; see pasteStart).
const (
	bracketedPasteOn  = "\x1b[?2004h"
	bracketedPasteOff = "\x1b[?2004l"
)

// editingLine marks a line as being edited (on) or done: output written
// meanwhile and not yet printed is written straight through.
func (e *Editor) editingLine(on bool) {
	e.aboveMu.Lock()
	defer e.aboveMu.Unlock()
	was := e.editing
	e.editing = on
	if !on {
		e.printQueued(false)
	}
	if e.real && on != was {
		// The terminal marks what is pasted only while a line is edited:
		// a program run after mcpx would get the marks as keys.
		mode := bracketedPasteOff
		if on {
			mode = bracketedPasteOn
		}
		_, _ = io.WriteString(e.out, mode)
	}
}

// readline edits one line, starting with prefill.
func (e *Editor) readline(prefill string) (string, error) {
	e.used.Store(true)
	e.quiet(false)
	defer e.quiet(true)
	e.editingLine(true)
	defer e.editingLine(false)
	return e.rl.ReadlineWithDefault(prefill)
}

// quiet turns the terminal's echo off (on) when no line is edited (is).
// Between lines the terminal is as mcpx found it, in line mode, and it
// echoed what the person typed ahead while a command ran: into the line
// of its progress bar, which the next update then cleared from the screen
// (not from the input), or, after an Enter, below it, leaving a stale
// bar on the screen. With the echo off what is typed ahead waits unseen
// in the terminal, and the next prompt shows it as the editor reads it.
// Ctrl-C still interrupts. Close turns the echo back on.
func (e *Editor) quiet(on bool) {
	if !e.echoable {
		return
	}
	e.echoMu.Lock()
	defer e.echoMu.Unlock()
	if on == e.echoOff || (on && e.echoClosed) {
		return
	}
	if setEcho(e.echoFd, !on) == nil {
		e.echoOff = on
	}
}

// ReadCommand shows the prompt and returns one command: a line, or
// several while the command is unfinished (an open quote, unbalanced JSON
// brackets, a final backslash). Ctrl-C returns ErrInterrupt (with the text
// typed so far), Ctrl-D at an empty prompt io.EOF.
func (e *Editor) ReadCommand() (string, error) {
	var lines []string
	saved := ""
	for {
		prompt := e.o.Prompt
		if len(lines) > 0 {
			prompt = e.o.ContinuePrompt
		}
		if e.keys.Ended() {
			return "", io.EOF
		}
		e.mu.Lock()
		for e.holders > 0 {
			e.cond.Wait()
		}
		e.term <- struct{}{}
		e.mainReading = true
		e.mu.Unlock()

		e.setPrompt(prompt)
		line, err := e.readline(saved)

		e.mu.Lock()
		e.mainReading = false
		pre := e.preempted
		e.preempted = false
		e.mu.Unlock()
		<-e.term
		saved = ""
		if pre {
			if errors.Is(err, readline.ErrInterrupt) {
				// A question took the terminal; ask again with what was
				// typed once it is done.
				saved = line
				continue
			}
			e.keys.drainInjected() // the person finished the line first
		}
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			return strings.Join(append(lines, line), "\n"), ErrInterrupt
		case err != nil:
			return "", err
		}
		lines = append(lines, line)
		text := strings.Join(lines, "\n")
		if Scan(text).Incomplete() != Closed {
			continue
		}
		return text, nil
	}
}

// Hold gives the terminal to a conversation (a server request asking the
// person something): the prompt, if it is waiting for a command, gives
// way until release is called.
func (e *Editor) Hold(ctx context.Context) (release func(), err error) {
	e.mu.Lock()
	e.holders++
	if e.mainReading && !e.preempted {
		e.preempted = true
		// Bell leaves completion or search mode; Ctrl-C then ends the
		// prompt's read with what was typed.
		e.keys.Inject([]byte{7, 3})
	}
	e.mu.Unlock()
	select {
	case e.term <- struct{}{}:
	case <-ctx.Done():
		e.mu.Lock()
		e.holders--
		e.cond.Broadcast()
		e.mu.Unlock()
		return nil, ctx.Err()
	}
	e.mu.Lock()
	e.held = true
	e.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			e.held = false
			e.mu.Unlock()
			<-e.term
			e.mu.Lock()
			e.holders--
			e.cond.Broadcast()
			e.mu.Unlock()
		})
	}, nil
}

// ReadLine asks one question: it shows prompt and returns the line typed.
// Ctrl-C dismisses the question (inspector.ErrDismissed: an elicitation is
// cancelled) and cancels the command in flight (OnInterrupt); Esc then
// Enter dismisses the question only (see dismissKey); Ctrl-D
// returns io.EOF; when ctx ends first the question is taken off the
// screen.
func (e *Editor) ReadLine(ctx context.Context, prompt string) (string, error) {
	e.mu.Lock()
	held := e.held
	e.mu.Unlock()
	if !held {
		release, err := e.Hold(ctx)
		if err != nil {
			return "", err
		}
		defer release()
	}
	if e.keys.Ended() {
		return "", io.EOF
	}
	type result struct {
		line string
		err  error
	}
	done := make(chan result, 1)
	e.setPrompt(prompt)
	defer e.setPrompt(e.o.Prompt)
	e.dismissed.Store(false)
	e.asking.Store(true)
	defer e.asking.Store(false)
	e.hideHistory()
	go func() {
		line, err := e.readline("")
		e.restoreHistory()
		done <- result{line, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		e.keys.Inject([]byte{7, 3})
		select {
		case r = <-done:
			if !errors.Is(r.err, readline.ErrInterrupt) {
				e.keys.drainInjected()
			}
		case <-time.After(2 * time.Second):
		}
		return "", ctx.Err()
	}
	switch {
	case errors.Is(r.err, readline.ErrInterrupt):
		if e.o.OnInterrupt != nil {
			// Once the question's answer (cancel) is shown, before the
			// server has it: else the command's cancellation races with
			// the answer (the server may withdraw its question first, or
			// answer the call).
			inspector.AfterAnswer(ctx, e.o.OnInterrupt)
		}
		return "", inspector.ErrDismissed
	case r.err != nil:
		return "", r.err
	case e.dismissed.Swap(false):
		// Esc, Enter: the question only; the command goes on.
		return "", inspector.ErrDismissed
	}
	return r.line, nil
}

// AddHistory remembers a command and appends it to the history file. The
// history holds one line per command: a command of several lines is
// joined, each line's indentation dropped and a blank in place of each
// line break; a command of one line is kept as typed (blanks inside
// quotes are part of a value).
func (e *Editor) AddHistory(cmd string) {
	line := historyLine(cmd)
	if line == "" {
		return
	}
	e.saveHistory(line)
	if e.hist != nil {
		e.hist.add(line)
	}
}

// saveHistory gives readline's history a command (unless a question is
// asked: it gets it after).
func (e *Editor) saveHistory(line string) {
	e.histMu.Lock()
	defer e.histMu.Unlock()
	e.cmds = append(e.cmds, line)
	if n := len(e.cmds) - e.o.HistoryLimit; n > 0 {
		e.cmds = slices.Delete(e.cmds, 0, n)
	}
	if !e.histHidden {
		_ = e.rl.SaveHistory(line)
	}
}

// hideHistory empties readline's history while a question is asked: an
// answer is not a command, and Up or Ctrl-R there offered the commands.
// And readline keeps the line being edited in its history (it is what
// Down comes back to): restoreHistory gives the commands back in a
// history of its own, so that an answer (a password, say) is not offered
// at the prompt afterwards.
func (e *Editor) hideHistory() {
	e.histMu.Lock()
	defer e.histMu.Unlock()
	e.rl.ResetHistory()
	e.histHidden = true
	e.asked.Add(1)
}

// restoreHistory ends hideHistory: readline's history holds the commands
// again, and nothing of the answer.
func (e *Editor) restoreHistory() {
	e.histMu.Lock()
	defer e.histMu.Unlock()
	e.rl.ResetHistory()
	for _, l := range e.cmds {
		_ = e.rl.SaveHistory(l)
	}
	e.histHidden = false
	e.asked.Add(1)
}

// historyLine joins the lines of cmd into one (see AddHistory). A line
// break continued with a final backslash is removed with its backslash,
// as Scan removes it: kept, the backslash would escape the blank put in
// the break's place and make a word of it (a\<newline>b, one word, would
// come back as two).
func historyLine(cmd string) string {
	lines := strings.Split(cmd, "\n")
	var b strings.Builder
	glue := false // the break before this line is a \<newline> inside a word
	for i, l := range lines {
		next := false
		if i < len(lines)-1 && Scan(strings.Join(lines[:i+1], "\n")).Incomplete() == OpenEscape {
			l = l[:len(l)-1]
			n := lines[i+1]
			next = l != "" && !isBlank(l[len(l)-1]) && n != "" && !isBlank(n[0])
		}
		if glue {
			b.WriteString(strings.TrimRightFunc(l, unicode.IsSpace))
		} else if t := strings.TrimSpace(l); t != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t)
		}
		glue = next
	}
	return b.String()
}

// loadHistory reads the history file and keeps appending to it.
func (e *Editor) loadHistory(path string) {
	hist, lines := openHistory(path, e.o.HistoryLimit, e.o.OnHistoryError)
	for _, l := range lines {
		e.saveHistory(l)
	}
	e.hist = hist
}

// Close ends the editor: a pending read returns io.EOF and the terminal
// leaves raw mode. It is idempotent and safe from any goroutine.
func (e *Editor) Close() error {
	e.closeOnce.Do(func() {
		e.keys.Close()
		if e.used.Load() {
			// (An editor never used is left alone: readline's terminal
			// goroutine may not have registered with its WaitGroup yet,
			// and it holds nothing.)
			_ = e.rl.Close()
		}
		e.editingLine(false) // nothing written is lost
		e.echoMu.Lock()
		e.echoClosed = true
		e.echoMu.Unlock()
		e.quiet(false)
		if e.hist != nil {
			e.hist.close()
		}
	})
	return nil
}
