package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzSSEReader checks the SSE parser against a plain implementation of
// the WHATWG HTML standard's "Interpreting an event stream" that sees the
// whole stream at once (fuzzing.SSE), while the parser reads it in chunks
// of 1 to 256 bytes chosen by the fuzzer (fuzzing.ChunkReader): the same
// events, last event id and retry, whatever the chunking. Data never holds a CR, an id never a NUL, CR or
// LF, and an event type never a line break.
func FuzzSSEReader(f *testing.F) {
	for i, s := range fuzzing.SSEStreams() {
		f.Add([]byte(s), []byte{byte(i), 0, 3, 255})
	}
	f.Add([]byte("id: "+strings.Repeat("i", maxSSEField+1)+"\ndata: x\n\n"), []byte{7, 200})
	f.Add([]byte("event: "+strings.Repeat("e", maxSSEField)+"\ndata: x\n\n"), []byte{255})
	f.Fuzz(func(t *testing.T, stream, chunks []byte) {
		want, wantID, ms := fuzzing.SSE(stream)
		wantRetry, wantSet := time.Duration(max(ms, 0))*time.Millisecond, ms >= 0
		p := newSSEReader(fuzzing.ChunkReader(stream, chunks), "")
		var got []sseEvent
		for {
			ev, err := p.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var fe *SSEFieldTooLongError
			if errors.As(err, &fe) {
				// The one departure from the standard: an id, event or
				// retry value over maxSSEField ends the stream.
				if !longLine(stream, maxSSEField) {
					t.Fatalf("Next: %v, but stream %q has no line that long", err, stream)
				}
				return
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if bytes.IndexByte(ev.Data, '\r') >= 0 || bytes.ContainsAny([]byte(ev.ID), "\x00\r\n") || bytes.ContainsAny([]byte(ev.Type), "\r\n") {
				t.Fatalf("event %+v holds a CR, LF or NUL where it cannot", ev)
			}
			got = append(got, ev)
		}
		if _, err := p.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("Next after the end: %v, want io.EOF", err)
		}
		if len(got) != len(want) {
			t.Fatalf("stream %q in chunks %v: %d events %+v, want %d %+v", stream, chunks, len(got), got, len(want), want)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Type != w.Type || !bytes.Equal(g.Data, w.Data) || g.ID != w.ID || g.HasID != w.HasID {
				t.Fatalf("stream %q in chunks %v: event %d is %+v, want %+v", stream, chunks, i, g, w)
			}
		}
		if retry, set := p.Retry(); p.LastEventID() != wantID || retry != wantRetry || set != wantSet {
			t.Fatalf("stream %q: last event id %q, retry %v (set %v); want %q, %v (set %v)", stream, p.LastEventID(), retry, set, wantID, wantRetry, wantSet)
		}
		skipping(t, stream, chunks, want)
	})
}

// skipping reads stream again with skipEvents and a small limit: an
// event over it, or with a field over it, is dropped (a
// *SkippedMessageError, never the end of the stream), and the events
// that come are the standard's, in order, with some left out.
func skipping(t *testing.T, stream, chunks []byte, want []fuzzing.SSEEvent) {
	const limit = 64
	p := newSSEReaderLimit(fuzzing.ChunkReader(stream, chunks), "", limit)
	p.skipEvents()
	i := 0
	for {
		ev, err := p.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		var sk *SkippedMessageError
		if errors.As(err, &sk) {
			if len(sk.Prefix) > limit {
				t.Fatalf("stream %q: a dropped event kept %d bytes", stream, len(sk.Prefix))
			}
			continue
		}
		if err != nil {
			t.Fatalf("stream %q, skipping: Next: %v", stream, err)
		}
		if len(ev.Data) > limit {
			t.Fatalf("stream %q, skipping: an event of %d bytes", stream, len(ev.Data))
		}
		for i < len(want) && (want[i].Type != ev.Type || !bytes.Equal(want[i].Data, ev.Data)) {
			i++
		}
		if i == len(want) {
			t.Fatalf("stream %q in chunks %v, skipping: event %+v is not among the standard's %+v, in order", stream, chunks, ev, want)
		}
		i++
	}
}

// longLine reports whether stream has a line longer than n bytes.
func longLine(stream []byte, n int) bool {
	for _, line := range bytes.FieldsFunc(stream, func(r rune) bool { return r == '\r' || r == '\n' }) {
		if len(line) > n {
			return true
		}
	}
	return false
}
