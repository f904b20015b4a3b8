package repl

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// keyReader is the editor's only reader of the terminal. It reads from the
// terminal only when the line editor asks for keys, and it can put keys of
// its own in front of the person's: the editor injects them to take a
// prompt away (a server request needs the terminal) or to end a question
// nobody waits for any more.
//
// It also hands text over in pieces rather than key by key (see pasteKey):
// readline draws the whole line again after each key, so a line pasted
// key by key cost time in the square of its length (a JSON value of
// 200 KB for --args took many minutes).
type keyReader struct {
	src io.Reader
	// tty: an end of input read from a terminal is a Ctrl-D typed while
	// the terminal was in line mode, not the end of the terminal.
	tty bool

	inject chan []byte
	// wake asks for a wakeKey (see Wake); wakes counts those read and not
	// yet claimed.
	wake  chan struct{}
	wakes atomic.Int32
	// redraw asks for a searchRedrawKey (see Redraw).
	redraw chan struct{}
	want   chan struct{}
	got    chan readResult

	// Used by the single goroutine that calls Read (readline's).
	pending bool
	buf     []byte
	esc     escState // where the keys read so far leave an escape sequence
	in      escState // where the terminal's bytes fed so far leave one
	seq     []byte   // an escape sequence of the terminal's, not yet whole
	run     []byte   // text of the terminal's, not yet handed over
	paste   bool     // inside a bracketed paste

	pieceMu sync.Mutex
	pieces  [][]rune // text handed over as pasteKeys, in order (see takePiece)

	startOnce sync.Once
	closeOnce sync.Once
	closed    chan struct{}

	mu  sync.Mutex
	eof bool // the source ended for good

	// dismissible reports whether Esc and Enter dismiss (a question is
	// asked: see dismissKey); nil: never.
	dismissible func() bool
}

type readResult struct {
	data []byte
	err  error
}

func newKeyReader(src io.Reader, tty bool) *keyReader {
	return &keyReader{
		src: src, tty: tty,
		inject: make(chan []byte, 8),
		wake:   make(chan struct{}, 1),
		redraw: make(chan struct{}, 1),
		want:   make(chan struct{}, 1),
		got:    make(chan readResult, 1),
		closed: make(chan struct{}),
	}
}

// loop reads the source, one read per request: a read from a terminal
// cannot be interrupted, so it runs in a goroutine of its own.
func (k *keyReader) loop() {
	b := make([]byte, 4096)
	for {
		select {
		case <-k.want:
		case <-k.closed:
			return
		}
		n, err := k.src.Read(b)
		data := append([]byte(nil), b[:n]...)
		select {
		case k.got <- readResult{data: data, err: err}:
		case <-k.closed:
			return
		}
		if err != nil && !(k.tty && errors.Is(err, io.EOF)) {
			return
		}
	}
}

// Inject puts keys in front of whatever the person types.
func (k *keyReader) Inject(b []byte) {
	select {
	case k.inject <- b:
	case <-k.closed:
	}
}

// wakeKey is the key the editor has readline read to run code on
// readline's goroutine (Editor.drainAbove), between two of the person's
// keys. It is Ctrl-D, the one key after which readline's terminal reader
// waits for the line editor (as it does after Enter and Ctrl-C) rather
// than reading on: the editor's input filter takes it (claimWake) and
// ends that wait, as readline does for any key its filter takes. (A key
// it did not wait after would leave a wake-up behind, and readline would
// read the terminal between lines.) A Ctrl-D of the person's stays theirs:
// the filter claims as many as were read here as wake keys; if the
// person's came first, theirs and the editor's swap places, with nothing
// between them.
var wakeKey = []byte{4}

// Wake has a read return wakeKey: at once if the line editor waits for a
// key, else when it next asks (and not inside an escape sequence). It
// never blocks: one wake not yet read stands for any number.
func (k *keyReader) Wake() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// Redraw has the next read return searchRedrawKey, before any key of the
// person's. It is called by readline's goroutine, in its input filter,
// while readline's terminal reader waits after a wake key (which was the
// last key of its read), so the redraw key comes next. It never blocks.
func (k *keyReader) Redraw() {
	select {
	case k.redraw <- struct{}{}:
	default:
	}
}

// redrawKey is searchRedrawKey as the terminal's bytes.
var redrawKey = []byte(string(searchRedrawKey))

// claimWake reports whether a Ctrl-D that reached the line editor is a
// wakeKey (taking it).
func (k *keyReader) claimWake() bool {
	for {
		n := k.wakes.Load()
		if n == 0 {
			return false
		}
		if k.wakes.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// drainInjected drops injected keys nobody has read.
func (k *keyReader) drainInjected() {
	for {
		select {
		case <-k.inject:
		default:
			return
		}
	}
}

// Ended reports whether the source has ended for good.
func (k *keyReader) Ended() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.eof
}

func (k *keyReader) Read(p []byte) (int, error) {
	n, err := k.read(p)
	k.esc = k.esc.after(p[:n])
	return n, err
}

func (k *keyReader) read(p []byte) (int, error) {
	for {
		n, err := k.readOnce(p)
		if err != errHeldBack {
			return n, err
		}
	}
}

// errHeldBack is readOnce's when the terminal's bytes it read were all
// held back (text of a paste, part of an escape sequence or of a
// character): the read goes on.
var errHeldBack = errors.New("held back")

func (k *keyReader) readOnce(p []byte) (int, error) {
	if len(k.buf) > 0 {
		n := copy(p, k.buf)
		k.buf = k.buf[n:]
		return n, nil
	}
	// Not inside an escape sequence: readline's reader would take the
	// wake key for a part of it.
	wake, redraw := k.wake, k.redraw
	if k.esc == escCSI || k.esc == escSS3 {
		wake, redraw = nil, nil
	}
	select {
	case <-redraw:
		return k.take(p, redrawKey), nil
	case b := <-k.inject:
		return k.take(p, b), nil
	case <-wake:
		k.wakes.Add(1)
		return k.take(p, wakeKey), nil
	default:
	}
	if k.Ended() {
		return 0, io.EOF
	}
	if !k.pending {
		k.startOnce.Do(func() { go k.loop() })
		k.pending = true
		k.want <- struct{}{}
	}
	select {
	case <-redraw:
		return k.take(p, redrawKey), nil
	case b := <-k.inject:
		return k.take(p, b), nil
	case <-wake:
		k.wakes.Add(1)
		return k.take(p, wakeKey), nil
	case r := <-k.got:
		k.pending = false
		if r.err != nil {
			if k.tty && errors.Is(r.err, io.EOF) && len(r.data) == 0 {
				return k.take(p, []byte{4}), nil // Ctrl-D
			}
			if !k.tty || !errors.Is(r.err, io.EOF) {
				k.mu.Lock()
				k.eof = true
				k.mu.Unlock()
			}
		}
		last := r.err != nil && k.Ended()
		k.feed(r.data, last)
		if len(k.buf) == 0 {
			if last {
				return 0, io.EOF
			}
			return 0, errHeldBack
		}
		n := copy(p, k.buf)
		k.buf = k.buf[n:]
		return n, nil
	case <-k.closed:
		return 0, io.EOF
	}
}

func (k *keyReader) take(p, b []byte) int {
	n := copy(p, b)
	k.buf = append(k.buf[:0], b[n:]...)
	return n
}

// pasteKey stands, in the keys readline reads, for a piece of text that
// the editor puts into the line at once (Editor.insertPiece): the key
// reader hands over each run of printable characters of the terminal's
// (of pieceMin characters or more, or a bracketed paste) as one pasteKey,
// keeping the text (takePiece). Readline inserts the key like any
// character and calls the editor's listener, which puts the text in its
// place — one redraw of the line for the run rather than one per
// character. The character itself is never handed over as it is (text
// holding it goes as a piece), so each pasteKey readline reads is one.
const pasteKey = '\uFFFC' // OBJECT REPLACEMENT CHARACTER

// pieceMin is the shortest run of text handed over as a piece outside a
// bracketed paste: what a person types comes a key or a few at a time,
// and goes to readline as keys, as it always did.
const pieceMin = 16

// pasteLimit bounds the text of a bracketed paste held back before it is
// handed over (in pieces of this size, then).
const pasteLimit = 1 << 20

// Bracketed paste (xterm's mode 2004, which the editor turns on while a
// line is edited): the terminal puts what is pasted between these two
// sequences, so the text comes over as one piece however many reads it
// takes, and a Tab in it is text rather than completion.
var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// dismissKey stands, in the keys readline reads, for Esc then Enter typed
// while a question is asked: the editor's input filter takes it, and the
// Enter after it ends the line, which the question then takes for a
// dismissal (inspector.ErrDismissed), as a line of only Esc is in a
// one-shot command. readline takes Esc for the first half of an Alt key,
// and Esc then Enter was Enter: the question was answered (a form's
// "[a]nswer" default) by the keys meant to dismiss it. The character
// itself is never handed over as a key (text holding it goes as a piece).
const dismissKey = '\uFDD1' // a noncharacter

// escEnter reports whether seq is Esc (once or more), then Enter.
func escEnter(seq []byte) bool {
	n := len(seq)
	return n >= 2 && (seq[n-1] == '\r' || seq[n-1] == '\n') && len(bytes.Trim(seq[:n-1], "\x1b")) == 0
}

// homeEnd turns the VT220 form of Home and End (ESC [ 1 ~ and ESC [ 4 ~:
// what tmux, screen and the Linux console send) and rxvt's (ESC [ 7 ~,
// ESC [ 8 ~) into xterm's, the only ones readline knows: it ignores the
// others, and Home and End did nothing there.
func homeEnd(seq []byte) []byte {
	switch string(seq) {
	case "\x1b[1~", "\x1b[7~":
		return []byte("\x1b[H")
	case "\x1b[4~", "\x1b[8~":
		return []byte("\x1b[F")
	}
	return seq
}

// feed takes bytes of the terminal's: keys go to buf for readline, text to
// pieces (with a pasteKey in buf). Escape sequences are kept whole, the
// bracketed paste's own taken out. At the end of the input (last), what
// is held back goes too.
func (k *keyReader) feed(data []byte, last bool) {
	for _, c := range data {
		if k.in != escNone || c == 0x1b {
			k.flushRun(false)
			k.seq = append(k.seq, c)
			if k.in = k.in.after([]byte{c}); k.in != escNone && len(k.seq) < 64 {
				continue
			}
			switch {
			case bytes.Equal(k.seq, pasteStart):
				k.paste = true
			case bytes.Equal(k.seq, pasteEnd):
				k.paste = false
			case k.dismissible != nil && escEnter(k.seq) && k.dismissible():
				k.buf = append(utf8.AppendRune(k.buf, dismissKey), '\r')
			default:
				k.buf = append(k.buf, homeEnd(k.seq)...)
			}
			k.seq, k.in = k.seq[:0], escNone
			continue
		}
		if c < 0x20 && !(c == '\t' && k.paste) || c == 0x7f {
			k.flushRun(false)
			k.buf = append(k.buf, c)
			continue
		}
		k.run = append(k.run, c)
	}
	switch {
	case last:
		k.flushRun(false)
		k.buf = append(k.buf, k.seq...)
		k.seq, k.in = k.seq[:0], escNone
	case !k.paste || len(k.run) >= pasteLimit:
		k.flushRun(true)
	}
}

// flushRun hands the text held back over (but, with keepPartial, the
// bytes of a character that the next read completes).
func (k *keyReader) flushRun(keepPartial bool) {
	text := k.run
	var rest []byte
	if keepPartial {
		for i := len(text) - 1; i >= 0 && i >= len(text)-utf8.UTFMax; i-- {
			if utf8.RuneStart(text[i]) {
				if !utf8.FullRune(text[i:]) {
					text, rest = text[:i], text[i:]
				}
				break
			}
		}
	}
	if len(text) > 0 {
		if !k.paste && utf8.RuneCount(text) < pieceMin && !bytes.ContainsRune(text, pasteKey) && !bytes.ContainsRune(text, searchRedrawKey) && !bytes.ContainsRune(text, dismissKey) {
			k.buf = append(k.buf, text...)
		} else {
			k.pieceMu.Lock()
			k.pieces = append(k.pieces, []rune(string(text)))
			k.pieceMu.Unlock()
			k.buf = utf8.AppendRune(k.buf, pasteKey)
		}
	}
	k.run = append(k.run[:0], rest...)
}

// takePiece returns the text the next pasteKey stands for, in the order
// they were read (by readline's goroutine that handles keys, when it
// comes to that key).
func (k *keyReader) takePiece() []rune {
	k.pieceMu.Lock()
	defer k.pieceMu.Unlock()
	if len(k.pieces) == 0 {
		return nil
	}
	p := k.pieces[0]
	k.pieces[0] = nil
	k.pieces = k.pieces[1:]
	return p
}

// Close makes every read end; it does not close the source.
func (k *keyReader) Close() error {
	k.closeOnce.Do(func() { close(k.closed) })
	return nil
}

// escState follows the escape sequences of the keys read (the cursor and
// function keys), as far as readline's terminal reader needs.
type escState uint8

const (
	escNone  escState = iota
	escStart          // ESC
	escCSI            // ESC [, then parameters
	escSS3            // ESC O
)

func (s escState) after(b []byte) escState {
	for _, c := range b {
		switch s {
		case escNone:
			if c == 0x1b {
				s = escStart
			}
		case escStart:
			switch c {
			case '[':
				s = escCSI
			case 'O':
				s = escSS3
			case 0x1b:
			default:
				s = escNone
			}
		case escCSI:
			// Parameters and intermediates (0x20-0x3f) go on; a final
			// byte ends the sequence, and so does a control character.
			if c < 0x20 || c > 0x3f {
				s = escNone
			}
		case escSS3:
			s = escNone
		}
	}
	return s
}
