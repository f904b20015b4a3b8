package transport

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// UnendedLineReporter is a connection that can say what its peer wrote
// that is not yet a whole message: on stdio, the bytes after the last
// newline. A server that writes its messages without the newline that
// ends each one (spec basic/transports, "stdio") is otherwise
// indistinguishable from one that does not answer; a request that times
// out says what is waiting (see peer.TimeoutError).
type UnendedLineReporter interface {
	// UnendedLine describes, for people, the bytes the peer wrote since
	// its last newline; "" when there are none.
	UnendedLine() string
}

// unendedHead is how many bytes of an unended line are kept to quote.
const unendedHead = 60

// unendedWatch passes reads through, keeping the size and the first bytes
// of what came after the last newline. It holds at most unendedHead
// bytes, whatever the line's length.
type unendedWatch struct {
	r    io.Reader
	mu   sync.Mutex
	n    int64  // bytes after the last newline
	head []byte // the first of them, at most unendedHead
}

func (w *unendedWatch) Read(b []byte) (int, error) {
	n, err := w.r.Read(b)
	if n > 0 {
		got := b[:n]
		w.mu.Lock()
		if i := bytes.LastIndexByte(got, '\n'); i >= 0 {
			w.n, w.head = 0, w.head[:0]
			got = got[i+1:]
		}
		w.n += int64(len(got))
		if room := unendedHead - len(w.head); room > 0 {
			w.head = append(w.head, got[:min(room, len(got))]...)
		}
		w.mu.Unlock()
	}
	return n, err
}

// describe says what came after the last newline, "" when nothing did;
// what names the writer and the stream ("the server wrote %d bytes on
// stdout").
func (w *unendedWatch) describe(what string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return ""
	}
	quoted := strconv.Quote(string(w.head))
	if w.n > int64(len(w.head)) {
		quoted += "…"
	}
	return fmt.Sprintf(what+" after its last newline, and a message ends only with one (spec basic/transports, \"stdio\"): %s", w.n, quoted)
}
