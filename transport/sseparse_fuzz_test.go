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
//
// The reader takes id, event and retry values of up to fuzzField bytes
// here, not maxSSEField (4 KiB; TestSSEReaderFieldTooLong checks that
// one), and longer streams than maxFuzzStream (or chunk lists than
// maxFuzzChunks) are skipped. To reach the limit the fuzzer kept inputs
// of 4 KiB, and the minimizer, which tries removing every span of bytes
// of each new input the fuzzer finds (some n²/2 runs), took its whole
// -fuzzminimizetime (60 s by default) on each one derived from them,
// fuzzing nothing meanwhile: 0 execs/sec, its worker killed and
// restarted at the end.
func FuzzSSEReader(f *testing.F) {
	for i, s := range fuzzing.SSEStreams() {
		f.Add([]byte(s), []byte{byte(i), 0, 3, 255})
	}
	f.Add([]byte("id: "+strings.Repeat("i", fuzzField+1)+"\ndata: x\n\n"), []byte{7, 200})
	f.Add([]byte("event: "+strings.Repeat("e", fuzzField)+"\ndata: x\n\n"), []byte{255})
	f.Add([]byte("retry: "+strings.Repeat("9", fuzzField+1)+"\ndata: x\n\n"), []byte{2})
	f.Fuzz(func(t *testing.T, stream, chunks []byte) {
		if len(stream) > maxFuzzStream || len(chunks) > maxFuzzChunks {
			t.Skip()
		}
		want, wantID, ms := fuzzing.SSE(stream)
		wantRetry, wantSet := time.Duration(max(ms, 0))*time.Millisecond, ms >= 0
		p := newSSEReader(fuzzing.ChunkReader(stream, chunks), "")
		p.maxField = fuzzField
		var got []sseEvent
		for {
			ev, err := p.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var fe *SSEFieldTooLongError
			if errors.As(err, &fe) {
				// The one departure from the standard: an id, event or
				// retry value over the limit (fuzzField here) ends the
				// stream.
				if !longField(stream, fuzzField) {
					t.Fatalf("Next: %v, but stream %q has no field that long", err, stream)
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
		if longField(stream, fuzzField) {
			t.Fatalf("stream %q has an id, event or retry value over %d bytes, but the reader took it", stream, fuzzField)
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

// fuzzField is the longest id, event or retry value FuzzSSEReader's
// reader takes; maxFuzzStream and maxFuzzChunks bound its inputs (the
// longest of fuzzing.SSEStreams is 133 bytes).
const (
	fuzzField     = 16
	maxFuzzStream = 256
	maxFuzzChunks = 64
)

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

// longField reports whether stream has an id, event or retry field
// whose value is longer than n bytes.
func longField(stream []byte, n int) bool {
	stream = bytes.TrimPrefix(stream, []byte("\xef\xbb\xbf"))
	for _, line := range bytes.FieldsFunc(stream, func(r rune) bool { return r == '\r' || r == '\n' }) {
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "id", "event", "retry":
			if len(value) > n {
				return true
			}
		}
	}
	return false
}
