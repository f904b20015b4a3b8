//go:build unix

package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// endless is a reader that never ends: x forever. It counts what it gave.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// wantTooLarge checks that err is a *FrameTooLargeError for limit.
func wantTooLarge(t *testing.T, err error, limit int64) {
	t.Helper()
	var tl *FrameTooLargeError
	if !errors.Is(err, ErrFrameTooLarge) || !errors.As(err, &tl) || tl.Limit != limit {
		t.Fatalf("error = %v, want a *FrameTooLargeError for %d bytes", err, limit)
	}
}

func TestLineReaderStopsAtTheLimit(t *testing.T) {
	src := &endless{}
	lr := NewLineReader(src, 100<<10, "a line")
	_, _, err := lr.ReadLine()
	wantTooLarge(t, err, 100<<10)
	if !strings.Contains(err.Error(), "a line exceeds the maximum message size (100 KiB)") {
		t.Errorf("message = %q", err)
	}
	// Reading stopped right after the limit: the line reader's buffer is
	// all it read beyond it.
	if src.n > 100<<10+64<<10 {
		t.Errorf("read %d bytes of an endless line with a limit of %d", src.n, 100<<10)
	}
	if _, _, err := lr.ReadLine(); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("after the error, ReadLine = %v", err)
	}
}

func TestLineReaderAtTheLimit(t *testing.T) {
	const limit = 200 << 10 // several chunks, past the reader's buffer
	at := bytes.Repeat([]byte("a"), limit)
	input := string(at) + "\n" + "short\n" + string(at) // the last line without a newline
	lr := NewLineReader(strings.NewReader(input), limit, "a line")
	for i, want := range []struct {
		line  []byte
		ended bool
	}{{at, true}, {[]byte("short"), true}, {at, false}} {
		line, ended, err := lr.ReadLine()
		if err != nil || !bytes.Equal(line, want.line) || ended != want.ended || cap(line) != len(line) {
			t.Fatalf("line %d: %d bytes (cap %d), ended %v, err %v; want %d bytes, ended %v", i, len(line), cap(line), ended, err, len(want.line), want.ended)
		}
	}
	if _, _, err := lr.ReadLine(); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v", err)
	}

	over := string(at) + "b\n"
	_, _, err := NewLineReader(strings.NewReader(over), limit, "a line").ReadLine()
	wantTooLarge(t, err, limit)
	_, _, err = NewLineReader(strings.NewReader(string(at)+"b"), limit, "a line").ReadLine()
	wantTooLarge(t, err, limit)
}

// The pieces of a message come back whole and in order, whatever their
// sizes and wherever the chunks end.
func TestFrameBufferAssembles(t *testing.T) {
	for _, size := range []int{0, 1, firstChunk - 1, firstChunk, firstChunk + 1, 5*firstChunk + 3, 3*maxChunk + 7} {
		want := pattern(size)
		b := frameBuffer{limit: int64(size) + 10}
		for p := want; len(p) > 0; {
			n := min(len(p), 1+len(p)%7919)
			if !b.Write(p[:n]) {
				t.Fatalf("size %d: Write refused", size)
			}
			p = p[n:]
		}
		got := b.Bytes([]byte("tail"))
		if !bytes.Equal(got, append(append([]byte(nil), want...), "tail"...)) || len(got) != cap(got) {
			t.Fatalf("size %d: got %d bytes (cap %d), first difference at %d", size, len(got), cap(got), firstDifference(got, want))
		}
		if b.Len() != 0 || len(b.chunks) != 0 {
			t.Fatalf("size %d: not emptied", size)
		}
	}
}

func TestReadBody(t *testing.T) {
	const limit = 100 << 10
	t.Run("declared too large is refused unread", func(t *testing.T) {
		src := &endless{}
		_, err := ReadBody(src, limit+1, limit, "the body")
		wantTooLarge(t, err, limit)
		if src.n != 0 {
			t.Errorf("read %d bytes", src.n)
		}
	})
	t.Run("endless", func(t *testing.T) {
		src := &endless{}
		_, err := ReadBody(src, -1, limit, "the body")
		wantTooLarge(t, err, limit)
		if src.n > limit+32<<10 {
			t.Errorf("read %d bytes of an endless body with a limit of %d", src.n, limit)
		}
	})
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("at the limit, declared %v", declared), func(t *testing.T) {
			want := pattern(limit)
			n := int64(-1)
			if declared {
				n = limit
			}
			got, err := ReadBody(bytes.NewReader(want), n, limit, "the body")
			if err != nil || !bytes.Equal(got, want) || len(got) != cap(got) {
				t.Fatalf("got %d bytes (cap %d), err %v", len(got), cap(got), err)
			}
			_, err = ReadBody(bytes.NewReader(append(want, 'x')), -1, limit, "the body")
			wantTooLarge(t, err, limit)
		})
	}
}

// A body of unknown length (a server's chunked answer) is read straight
// into the buffers that hold it, with no 32 KiB scratch buffer to copy
// from: reading 4 KiB allocates less than that buffer alone (the least of
// a few measures, as other tests allocate too).
func TestReadBodyOfUnknownLengthAllocatesLittle(t *testing.T) {
	body := pattern(4 << 10)
	perRead := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 10 {
			if got, err := ReadBody(bytes.NewReader(body), -1, 1<<20, "the body"); err != nil || !bytes.Equal(got, body) {
				t.Fatalf("got %d bytes, %v", len(got), err)
			}
		}
		runtime.ReadMemStats(&after)
		perRead = min(perRead, (after.TotalAlloc-before.TotalAlloc)/10)
	}
	if perRead >= 32<<10 {
		t.Fatalf("reading a 4 KiB body allocates %d bytes", perRead)
	}
}

// A server whose stdout line never ends: Read fails with the limit named,
// having buffered no more than that, and Close still ends the server.
func TestStdioEndlessLine(t *testing.T) {
	t.Parallel()
	opts := helperOptions(t, "endless")
	opts.MaxMessageSize = 1 << 20
	c := startHelper(t, opts)
	_, err := readEnd(t, c)
	wantTooLarge(t, err, 1<<20)
	if !strings.Contains(err.Error(), "a line the server wrote on stdout exceeds the maximum message size (1 MiB)") {
		t.Errorf("message = %q", err)
	}
	pid := c.PID()
	c.Close()
	waitGone(t, pid, 5*time.Second)
}

// Frames queued ahead of the reader are bounded by the maximum message
// size, not by their number: a peer sending large frames faster than they
// are read cannot fill memory.
func TestLineReaderBoundsReadAhead(t *testing.T) {
	const limit = 1 << 20
	line := append(bytes.Repeat([]byte("y"), limit/2), '\n')
	src := &repeat{line: line}
	closing := make(chan struct{})
	defer close(closing)
	l := startLineReader(src, limit, "a line", closing, func(err error) error { return err })
	f, err := l.read(context.Background())
	if err != nil || len(f.Data) != limit/2 {
		t.Fatalf("first frame: %d bytes, %v", len(f.Data), err)
	}
	// Without further reads, the reader stops once a limit's worth is
	// queued: it reads the source only after waiting for room, so what
	// it read by then is all it reads.
	if !testwait.Poll(testwait.Bound, func() bool { return l.ahead.queued.Load() >= limit }) {
		t.Fatalf("the reader queued %d bytes", l.ahead.queued.Load())
	}
	if n := src.lines(); n > 4 {
		t.Fatalf("the reader read %d lines of %d bytes ahead, with a limit of %d", n, len(line), limit)
	}
	for range 10 {
		if f, err := l.read(context.Background()); err != nil || len(f.Data) != limit/2 {
			t.Fatalf("later frame: %d bytes, %v", len(f.Data), err)
		}
	}
}

// repeat gives line forever.
type repeat struct {
	line []byte
	off  int
	n    int64
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off += c
		if r.off == len(r.line) {
			r.off = 0
		}
	}
	r.n += int64(n)
	return n, nil
}

func (r *repeat) lines() int64 { return r.n / int64(len(r.line)) }

func TestSSEReaderLimit(t *testing.T) {
	const limit = 64 << 10
	t.Run("an endless data line", func(t *testing.T) {
		src := &endless{}
		p := newSSEReaderLimit(io.MultiReader(strings.NewReader("data: "), src), "", limit)
		_, err := p.Next()
		wantTooLarge(t, err, limit)
		if src.n > limit+64<<10 {
			t.Errorf("read %d bytes of an endless event with a limit of %d", src.n, limit)
		}
		if _, err := p.Next(); !errors.Is(err, ErrFrameTooLarge) {
			t.Errorf("after the error, Next = %v", err)
		}
	})
	t.Run("an event that never ends, in many data lines", func(t *testing.T) {
		line := "data: " + strings.Repeat("z", 1000) + "\n"
		src := &repeat{line: []byte(line)}
		p := newSSEReaderLimit(src, "", limit)
		_, err := p.Next()
		wantTooLarge(t, err, limit)
		if src.n > limit+64<<10 {
			t.Errorf("read %d bytes with a limit of %d", src.n, limit)
		}
	})
	t.Run("an event exactly at the limit", func(t *testing.T) {
		half := strings.Repeat("h", limit/2)
		rest := strings.Repeat("r", limit-limit/2-1) // the LF joining the lines counts
		input := "data: " + half + "\r\ndata:" + rest + "\r\n\r\ndata: " + half + "\ndata: " + rest + "!\n\n"
		p := newSSEReaderLimit(&chunkReader{data: []byte(input), size: 1000}, "", limit)
		ev, err := p.Next()
		if err != nil || string(ev.Data) != half+"\n"+rest || len(ev.Data) != cap(ev.Data) {
			t.Fatalf("event at the limit: %d bytes, %v", len(ev.Data), err)
		}
		_, err = p.Next()
		wantTooLarge(t, err, limit)
	})
	t.Run("comments and unknown fields of any length are skipped", func(t *testing.T) {
		long := strings.Repeat("c", 3*limit)
		input := ":" + long + "\nx-" + long + ": " + long + "\ndata: ok\n\n"
		p := newSSEReaderLimit(strings.NewReader(input), "", limit)
		ev, err := p.Next()
		if err != nil || string(ev.Data) != "ok" {
			t.Fatalf("got %q, %v", ev.Data, err)
		}
	})
	t.Run("an id line longer than the limit", func(t *testing.T) {
		// An id is held to maxSSEField first (TestSSEReaderFieldTooLong),
		// and to a smaller limit by that.
		p := newSSEReaderLimit(strings.NewReader("id: "+strings.Repeat("i", limit+1)+"\ndata: x\n\n"), "", limit)
		_, err := p.Next()
		var fe *SSEFieldTooLongError
		if !errors.As(err, &fe) || !errors.Is(err, ErrFrameTooLarge) {
			t.Errorf("error = %v, want an *SSEFieldTooLongError", err)
		}
		const small = 1 << 10
		p = newSSEReaderLimit(strings.NewReader("id: "+strings.Repeat("i", small+1)+"\ndata: x\n\n"), "", small)
		_, err = p.Next()
		wantTooLarge(t, err, small)
	})
}

// oversizedServer answers every POST with an SSE stream whose one event's data
// never ends, or with a JSON body of the given size.
func oversizedServer(t *testing.T, jsonSize int64, chunked bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if jsonSize > 0 {
			w.Header().Set("Content-Type", "application/json")
			if !chunked {
				w.Header().Set("Content-Length", fmt.Sprint(jsonSize))
			}
			io.Copy(w, io.LimitReader(&endless{}, jsonSize))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: ")
		buf := bytes.Repeat([]byte("x"), 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestHTTPMessageLimit(t *testing.T) {
	const limit = 1 << 20
	initialize := Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)}
	for _, tt := range []struct {
		name     string
		jsonSize int64
		chunked  bool
	}{
		{"JSON body with Content-Length", limit + 1, false},
		{"chunked JSON body", 2 * limit, true},
		{"SSE event that never ends", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := oversizedServer(t, tt.jsonSize, tt.chunked)
			c, err := NewHTTP(HTTPOptions{URL: u, Mode: ModeStreamable, MaxMessageSize: limit})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = c.Write(ctx, initialize)
			if err == nil {
				// An SSE answer is read after Write returns.
				_, err = c.Read(ctx)
			}
			if ctx.Err() != nil {
				t.Fatal("no error within the bound")
			}
			wantTooLarge(t, err, limit)
			if !errors.Is(err, ErrTransport) {
				t.Errorf("error %v does not match ErrTransport", err)
			}
		})
	}
	t.Run("JSON body exactly at the limit", func(t *testing.T) {
		// Not JSON, but read whole and delivered: the limit is not what
		// fails, the missing response is.
		u := oversizedServer(t, limit, false)
		c, err := NewHTTP(HTTPOptions{URL: u, Mode: ModeStreamable, MaxMessageSize: limit})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Write(ctx, initialize); !errors.Is(err, ErrTransport) || !strings.Contains(err.Error(), "did not answer request id 1") {
			t.Fatalf("Write: %v", err)
		}
		f, err := c.Read(ctx)
		if err != nil || len(f.Data) != limit {
			t.Fatalf("read %d bytes, %v", len(f.Data), err)
		}
	})
}

// Reading a large line costs the line, not twice it: the pieces are
// assembled outside the Go heap and copied once.
func TestLineReaderAllocatesTheLineOnce(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("chunks are mapped outside the heap on unix only")
	}
	line := append(pattern(8<<20), '\n')
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, _, err := NewLineReader(bytes.NewReader(line), 0, "a line").ReadLine()
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != len(line)-1 {
		t.Fatalf("ReadLine: %d bytes, %v", len(got), err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(line))+1<<20 {
		t.Errorf("reading an 8 MiB line allocated %d bytes on the heap", n)
	}
}

// lyingBody is a body that declares more than it sends: it yields n
// bytes, then fails as a connection closed by the peer would.
type lyingBody struct{ n int }

func (b *lyingBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	k := min(len(p), b.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	b.n -= k
	return k, nil
}

// A declared Content-Length is not taken on trust: a peer that declares
// the limit (256 MiB by default) and sends a byte makes ReadBody hold
// about what it sent. Before, it allocated the declared length up front,
// which a few local connections could multiply into gigabytes.
func TestReadBodyDeclaredLengthLie(t *testing.T) {
	const limit = 256 << 20
	for _, sent := range []int{1, declaredUpfront + 1, 3*declaredUpfront + 5} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := ReadBody(&lyingBody{n: sent}, limit, limit, "the body")
		runtime.ReadMemStats(&after)
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != sent {
			t.Fatalf("sent %d of %d: got %d bytes, err %v; want the bytes sent and the read error", sent, limit, len(got), err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(4*sent+2*declaredUpfront) {
			t.Errorf("sent %d bytes of a declared %d: allocated %d bytes", sent, limit, alloc)
		}
	}
	// An honest declared length still ends in a slice of exactly it.
	for _, n := range []int64{0, 10, declaredUpfront, 2*declaredUpfront + 3} {
		want := pattern(int(n))
		got, err := ReadBody(bytes.NewReader(want), n, limit, "the body")
		if err != nil || !bytes.Equal(got, want) || int64(cap(got)) != n {
			t.Errorf("declared %d: got %d bytes (cap %d), err %v", n, len(got), cap(got), err)
		}
	}
}
