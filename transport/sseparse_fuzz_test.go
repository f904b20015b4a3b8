package transport

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"
)

// sseSeeds are event streams as servers send them (the spec's Streamable
// HTTP and HTTP+SSE examples, resumable streams with priming events) and
// the odd ones of TestSSEReader.
var sseSeeds = []string{
	"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
	"event: endpoint\ndata: /messages?session_id=2b7e\n\n",
	"id: 0\nretry: 1000\ndata: \n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n",
	"data: x\r\n\r\n",
	"data: x\rid: 7\r\r",
	"data:line1\ndata: line2\n\n",
	": keep-alive\nfoo: bar\ndata: x\n\n",
	"id: 1\ndata: a\n\ndata: b\n\n",
	"id: a\x00b\nretry: 5s\ndata: x\n\n",
	"\xef\xbb\xbfdata: x\n\n",
	"data: a\n\ndata: {\"jsonrpc\"",
	"id: 1\ndata: a\n\nid: 2\ndata: {\"json",
	"id\ndata\n\nevent\ndata:\n\n",
	"retry: 99999999999\nretry: 12\n\ndata\r\n\r",
}

// FuzzSSEReader checks the SSE parser against a plain implementation of
// the WHATWG HTML standard's "Interpreting an event stream" that sees the
// whole stream at once, while the parser reads it in chunks of 1 to 256
// bytes chosen by the fuzzer: the same events, last event id and retry,
// whatever the chunking. Data never holds a CR, an id never a NUL, CR or
// LF, and an event type never a line break.
func FuzzSSEReader(f *testing.F) {
	for i, s := range sseSeeds {
		f.Add([]byte(s), []byte{byte(i), 0, 3, 255})
	}
	f.Fuzz(func(t *testing.T, stream, chunks []byte) {
		want, wantID, wantRetry := refSSE(stream)
		p := newSSEReader(&sizedChunkReader{data: stream, sizes: chunks}, "")
		var got []sseEvent
		for {
			ev, err := p.Next()
			if errors.Is(err, io.EOF) {
				break
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
		if p.LastEventID() != wantID || p.Retry() != wantRetry {
			t.Fatalf("stream %q: last event id %q, retry %v; want %q, %v", stream, p.LastEventID(), p.Retry(), wantID, wantRetry)
		}
	})
}

// sizedChunkReader returns its data in reads of 1 to 256 bytes, the sizes
// taken in turn from sizes (1 byte at a time when it is empty).
type sizedChunkReader struct {
	data, sizes []byte
	n           int
}

func (r *sizedChunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	size := 1
	if len(r.sizes) > 0 {
		size = int(r.sizes[r.n%len(r.sizes)]) + 1
		r.n++
	}
	size = min(size, len(p), len(r.data))
	copy(p, r.data[:size])
	r.data = r.data[size:]
	return size, nil
}

// refSSE interprets a whole event stream as the WHATWG HTML standard says,
// with the parser's documented choices: a retry that does not fit 31 bits
// is ignored, and an unterminated last line is interpreted (so a final
// field sets retry) but never dispatches.
func refSSE(stream []byte) (events []sseEvent, lastID string, retry time.Duration) {
	stream = bytes.TrimPrefix(stream, []byte("\xef\xbb\xbf"))
	var lines [][]byte
	for len(stream) > 0 {
		i := bytes.IndexAny(stream, "\r\n")
		if i < 0 {
			lines = append(lines, stream)
			break
		}
		lines = append(lines, stream[:i])
		if stream[i] == '\r' && i+1 < len(stream) && stream[i+1] == '\n' {
			i++
		}
		stream = stream[i+1:]
	}
	var typ, idBuf string
	var data []byte
	hasData, idSet := false, false
	for _, line := range lines {
		if len(line) == 0 {
			lastID = idBuf
			if hasData {
				ev := sseEvent{Type: typ, Data: data, ID: lastID, HasID: idSet}
				if ev.Type == "" {
					ev.Type = "message"
				}
				events = append(events, ev)
			}
			typ, data, hasData, idSet = "", nil, false, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			typ = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				idBuf, idSet = string(value), true
			}
		case "retry":
			digits := len(value) > 0
			for _, c := range value {
				digits = digits && c >= '0' && c <= '9'
			}
			if n, err := strconv.ParseUint(string(value), 10, 31); digits && err == nil {
				retry = time.Duration(n) * time.Millisecond
			}
		}
	}
	return events, lastID, retry
}
