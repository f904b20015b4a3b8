package repl

import (
	"errors"
	"io"
	"sync"
)

// keyReader is the editor's only reader of the terminal. It reads from the
// terminal only when the line editor asks for keys, and it can put keys of
// its own in front of the person's: the editor injects them to take a
// prompt away (a server request needs the terminal) or to end a question
// nobody waits for any more.
type keyReader struct {
	src io.Reader
	// tty: an end of input read from a terminal is a Ctrl-D typed while
	// the terminal was in line mode, not the end of the terminal.
	tty bool

	inject chan []byte
	want   chan struct{}
	got    chan readResult

	// Used by the single goroutine that calls Read (readline's).
	pending bool
	buf     []byte

	startOnce sync.Once
	closeOnce sync.Once
	closed    chan struct{}

	mu  sync.Mutex
	eof bool // the source ended for good
}

type readResult struct {
	data []byte
	err  error
}

func newKeyReader(src io.Reader, tty bool) *keyReader {
	return &keyReader{
		src: src, tty: tty,
		inject: make(chan []byte, 8),
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
	if len(k.buf) > 0 {
		n := copy(p, k.buf)
		k.buf = k.buf[n:]
		return n, nil
	}
	select {
	case b := <-k.inject:
		return k.take(p, b), nil
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
	case b := <-k.inject:
		return k.take(p, b), nil
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
			if len(r.data) == 0 {
				return 0, io.EOF
			}
		}
		return k.take(p, r.data), nil
	case <-k.closed:
		return 0, io.EOF
	}
}

func (k *keyReader) take(p, b []byte) int {
	n := copy(p, b)
	k.buf = append(k.buf[:0], b[n:]...)
	return n
}

// Close makes every read end; it does not close the source.
func (k *keyReader) Close() error {
	k.closeOnce.Do(func() { close(k.closed) })
	return nil
}
