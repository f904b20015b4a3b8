package transport

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

func readAllEvents(t *testing.T, p *sseReader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	for {
		ev, err := p.Next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		evs = append(evs, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []sseEvent
		last  string
		retry time.Duration
		// zeroRetry: a retry field set the reconnection time to 0 (a
		// retry of 0 otherwise means none was set).
		zeroRetry bool
	}{
		{
			name:  "one message, LF",
			input: "event: message\ndata: {\"a\":1}\n\n",
			want:  []sseEvent{{Type: "message", Data: []byte(`{"a":1}`)}},
		},
		{
			name:  "default type is message; CRLF endings",
			input: "data: x\r\n\r\n",
			want:  []sseEvent{{Type: "message", Data: []byte("x")}},
		},
		{
			name:  "lone CR endings",
			input: "data: x\rid: 7\r\r",
			want:  []sseEvent{{Type: "message", Data: []byte("x"), ID: "7", HasID: true}},
			last:  "7",
		},
		{
			name:  "multi-line data is joined with LF; no space after colon",
			input: "data:line1\ndata: line2\n\n",
			want:  []sseEvent{{Type: "message", Data: []byte("line1\nline2")}},
		},
		{
			name:  "only one leading space is removed",
			input: "data:  two\n\n",
			want:  []sseEvent{{Type: "message", Data: []byte(" two")}},
		},
		{
			name:  "comments and unknown fields are ignored",
			input: ": keep-alive\nfoo: bar\ndata: x\n\n",
			want:  []sseEvent{{Type: "message", Data: []byte("x")}},
		},
		{
			name:  "priming event: id and retry with empty data",
			input: "id: e1\nretry: 500\ndata: \n\n",
			want:  []sseEvent{{Type: "message", Data: nil, ID: "e1", HasID: true}},
			last:  "e1",
			retry: 500 * time.Millisecond,
		},
		{
			name:  "id persists across events without one",
			input: "id: 1\ndata: a\n\ndata: b\n\n",
			want: []sseEvent{
				{Type: "message", Data: []byte("a"), ID: "1", HasID: true},
				{Type: "message", Data: []byte("b"), ID: "1"},
			},
			last: "1",
		},
		{
			name:  "a block with no data dispatches nothing but sets id and retry",
			input: "id: 9\nretry: 250\n\n",
			last:  "9",
			retry: 250 * time.Millisecond,
		},
		{
			name:  "id with NUL is ignored; invalid retry is ignored",
			input: "id: a\x00b\nretry: 5s\ndata: x\n\n",
			want:  []sseEvent{{Type: "message", Data: []byte("x")}},
		},
		{
			name:      "retry: 0 asks to reconnect at once, which is a value",
			input:     "retry: 500\nretry: 0\ndata: x\n\n",
			want:      []sseEvent{{Type: "message", Data: []byte("x")}},
			zeroRetry: true,
		},
		{
			name:  "a retry of more digits than 31 bits hold asks for the longest wait",
			input: "retry: 99999999999\ndata: x\n\n",
			want:  []sseEvent{{Type: "message", Data: []byte("x")}},
			retry: (1<<31 - 1) * time.Millisecond,
		},
		{
			name:  "event type",
			input: "event: endpoint\ndata: /message?sessionId=1\n\n",
			want:  []sseEvent{{Type: "endpoint", Data: []byte("/message?sessionId=1")}},
		},
		{
			name:  "leading BOM is skipped",
			input: "\xef\xbb\xbfdata: x\n\n",
			want:  []sseEvent{{Type: "message", Data: []byte("x")}},
		},
		{
			name:  "an unterminated last event is discarded",
			input: "data: a\n\ndata: {\"jsonrpc\"",
			want:  []sseEvent{{Type: "message", Data: []byte("a")}},
		},
		{
			name:  "the id of a torn event does not become the last event id",
			input: "id: 1\ndata: a\n\nid: 2\ndata: {\"json",
			want:  []sseEvent{{Type: "message", Data: []byte("a"), ID: "1", HasID: true}},
			last:  "1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newSSEReader(strings.NewReader(tt.input), "")
			got := readAllEvents(t, p)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events %+v, want %d %+v", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Type != w.Type || !bytes.Equal(g.Data, w.Data) || g.ID != w.ID || g.HasID != w.HasID {
					t.Errorf("event %d = %+v (data %q), want %+v (data %q)", i, g, g.Data, w, w.Data)
				}
			}
			if p.LastEventID() != tt.last {
				t.Errorf("LastEventID = %q, want %q", p.LastEventID(), tt.last)
			}
			retry, set := p.Retry()
			if wantSet := tt.retry != 0 || tt.zeroRetry; retry != tt.retry || set != wantSet {
				t.Errorf("Retry = %v (set %v), want %v (set %v)", retry, set, tt.retry, wantSet)
			}
		})
	}
}

// A frame far larger than any buffer arrives whole.
func TestSSEReaderHugeEvent(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 8<<20)
	input := append(append([]byte("data: "), big...), "\n\n"...)
	p := newSSEReader(bytes.NewReader(input), "")
	evs := readAllEvents(t, p)
	if len(evs) != 1 || !bytes.Equal(evs[0].Data, big) {
		t.Fatalf("got %d events, first %d bytes; want one of %d bytes", len(evs), len(evs[0].Data), len(big))
	}
}

// Events split across reads at every position parse the same.
func TestSSEReaderChunked(t *testing.T) {
	input := "id: 1\r\nevent: message\r\ndata: {\"x\":1}\r\n\r\nid: 2\rdata: y\r\r"
	for size := 1; size <= len(input); size++ {
		p := newSSEReader(&chunkReader{data: []byte(input), size: size}, "")
		evs := readAllEvents(t, p)
		if len(evs) != 2 || string(evs[0].Data) != `{"x":1}` || string(evs[1].Data) != "y" || p.LastEventID() != "2" {
			t.Fatalf("chunk size %d: got %+v, last id %q", size, evs, p.LastEventID())
		}
	}
}

type chunkReader struct {
	data []byte
	size int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(r.size, len(r.data), len(p))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func TestJSONRPCIDs(t *testing.T) {
	if got := requestIDs([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)); len(got) != 1 || got[0] != "3" {
		t.Errorf("requestIDs(request) = %v", got)
	}
	if got := requestIDs([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); len(got) != 0 {
		t.Errorf("requestIDs(notification) = %v", got)
	}
	if got := requestIDs([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)); len(got) != 0 {
		t.Errorf("requestIDs(response) = %v", got)
	}
	if got := requestIDs([]byte(`[{"id":"a","method":"x"},{"method":"n"},{"id":2,"method":"y"}]`)); len(got) != 2 || got[0] != "a" || got[1] != "2" {
		t.Errorf("requestIDs(batch) = %v", got)
	}
	if got := responseIDs([]byte(`{"jsonrpc":"2.0","id":"3","result":{}}`)); len(got) != 1 || got[0] != "3" {
		t.Errorf("responseIDs(string id) = %v", got)
	}
	if got := responseIDs([]byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)); len(got) != 0 {
		t.Errorf("responseIDs(request) = %v", got)
	}
	if got := responseIDs([]byte(`not json`)); len(got) != 0 {
		t.Errorf("responseIDs(garbage) = %v", got)
	}
}

func TestFallbackStatus(t *testing.T) {
	tests := []struct {
		offered string
		status  int
		want    bool
	}{
		{"2025-11-25", 400, true},
		{"2025-11-25", 404, true},
		{"2025-11-25", 405, true},
		{"2025-11-25", 415, false},
		{"2025-11-25", 401, false},
		{"2025-11-25", 403, false},
		{"2025-11-25", 500, false},
		{"", 405, true},
		{"2025-06-18", 415, true},
		{"2024-11-05", 418, true},
		{"2025-03-26", 401, false},
		{"2025-03-26", 403, false},
		{"2025-03-26", 502, false},
		{"2025-06-18", 429, false},
	}
	for _, tt := range tests {
		if got := fallbackStatus(tt.offered, tt.status); got != tt.want {
			t.Errorf("fallbackStatus(%q, %d) = %v, want %v", tt.offered, tt.status, got, tt.want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	base := mustURL(t, "http://127.0.0.1:8080/sse")
	for ref, want := range map[string]bool{
		"/message?sessionId=1":               true,
		"message":                            true,
		"http://127.0.0.1:8080/m":            true,
		"http://127.0.0.1:8081/m":            false,
		"https://127.0.0.1:8080/m":           false,
		"http://evil.example:8080/m":         false,
		"//evil.example/m":                   false,
		"HTTP://127.0.0.1:8080/m?x=1":        true,
		"http://127.0.0.1:8080/../../etc/ok": true,
	} {
		u, err := base.Parse(ref)
		if err != nil {
			t.Fatal(err)
		}
		if got := SameOrigin(base, u); got != want {
			t.Errorf("SameOrigin(%s, %q → %s) = %v, want %v", base, ref, u, got, want)
		}
	}
	if !SameOrigin(mustURL(t, "http://a/x"), mustURL(t, "http://a:80/y")) {
		t.Error("default port 80 should match an explicit :80")
	}
}

func TestHeaderSummaryRedacts(t *testing.T) {
	h := map[string][]string{
		"Authorization":  {"Bearer s3cret"},
		"Cookie":         {"sid=s3cret"},
		"X-Api-Key":      {"s3cret"},
		"Mcp-Session-Id": {"abc"},
	}
	got := headerSummary(h, nil, "Authorization", "Cookie", "X-Api-Key", "Mcp-Session-Id")
	if strings.Contains(got, "s3cret") {
		t.Errorf("secret shown: %s", got)
	}
	for _, want := range []string{"Authorization: [redacted]", "Cookie: [redacted]", "X-Api-Key: [redacted]", "Mcp-Session-Id: abc"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
}

// TestHeaderSummaryHidesAddedValues: the value of a header the user added
// is not shown (it may be a credential under any name), except an MCP
// header's.
func TestHeaderSummaryHidesAddedValues(t *testing.T) {
	h := http.Header{"X-Auth": {"s3cret"}, "X-Tenant": {"acme"}, "Mcp-Protocol-Version": {"2025-06-18"}, "Last-Event-Id": {"7"}}
	got := headerSummary(h, h.Clone(), "Mcp-Protocol-Version", "Last-Event-Id", "X-Auth", "X-Tenant")
	if want := "Mcp-Protocol-Version: 2025-06-18, Last-Event-Id: 7, X-Auth: [redacted], X-Tenant: [redacted]"; got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
	if got := headerSummary(h, nil, "X-Tenant"); got != "X-Tenant: acme" {
		t.Errorf("a header the server sent: %q", got)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// endlessField is a stream of one field line that never ends ("id: xxx…"),
// made as it is read; it counts the bytes read.
type endlessField struct {
	prefix string
	read   int64
}

func (r *endlessField) Read(p []byte) (int, error) {
	n := 0
	for ; n < len(p); n++ {
		if r.read < int64(len(r.prefix)) {
			p[n] = r.prefix[r.read]
		} else {
			p[n] = 'x'
		}
		r.read++
	}
	return n, nil
}

// An over-long id, event or retry field ends the stream once it passes
// maxSSEField, holding no more than that and a buffer: it was appended to
// until the maximum message size, doubling, and a 256 MiB limit cost 1.2
// GB. An event's data may still be as large as the limit.
func TestSSEReaderFieldTooLong(t *testing.T) {
	for _, field := range []string{"id", "event", "retry"} {
		t.Run(field, func(t *testing.T) {
			r := &endlessField{prefix: field + ": "}
			p := newSSEReaderLimit(r, "", 256<<20)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := p.Next()
			runtime.ReadMemStats(&after)
			var fe *SSEFieldTooLongError
			if !errors.As(err, &fe) || fe.Field != field || !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("Next: %v, want an SSE %s field too long", err, field)
			}
			if want := "an SSE " + field + " field is longer than 4 KiB"; !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
			if r.read > maxSSEField+maxSSERead {
				t.Errorf("read %d bytes of the line before failing", r.read)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 4*(maxSSEField+maxSSERead) {
				t.Errorf("reading the line allocated %d bytes", n)
			}
			if _, err := p.Next(); !errors.As(err, &fe) {
				t.Errorf("Next after the error: %v", err)
			}
		})
	}
	// At the cap, a field is still taken.
	id := strings.Repeat("i", maxSSEField)
	p := newSSEReader(strings.NewReader("id: "+id+"\ndata: x\n\n"), "")
	if evs := readAllEvents(t, p); len(evs) != 1 || evs[0].ID != id {
		t.Errorf("an id of %d bytes: %d events", len(id), len(evs))
	}
}

// emptyReader returns its data, then nothing and no error for ever: an
// io.Reader that breaks its contract's advice.
type emptyReader struct {
	data  string
	reads int
}

func (r *emptyReader) Read(p []byte) (int, error) {
	r.reads++
	if r.data != "" {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	return 0, nil
}

// A body that returns no bytes and no error, again and again, ends the
// stream with io.ErrNoProgress after a bounded number of reads (at the
// start, within a split byte-order mark, and after an event) instead of
// holding the reader for ever.
func TestSSEReaderNoProgress(t *testing.T) {
	for _, data := range []string{"", "\xef", "data: a\n\n"} {
		r := &emptyReader{data: data}
		p := newSSEReader(r, "")
		var err error
		for range 3 {
			if _, err = p.Next(); err != nil {
				break
			}
		}
		if !errors.Is(err, io.ErrNoProgress) || r.reads > 2*maxEmptyReads+2 {
			t.Errorf("%q: %v after %d reads, want io.ErrNoProgress", data, err, r.reads)
		}
	}
}
