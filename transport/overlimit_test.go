//go:build unix

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// oversized returns a reader of head, n bytes of x, then tail, made as it
// is read: the test holds none of it.
func oversized(head string, n int64, tail string) io.Reader {
	return io.MultiReader(strings.NewReader(head), io.LimitReader(&endless{}, n), strings.NewReader(tail))
}

const bigResponseHead = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`

// A line over the limit is read past, holding no more than the limit:
// reported as soon as the limit is passed, then at its end with its size,
// and the line after it is read as usual.
func TestLineReaderSkipsALongLine(t *testing.T) {
	const limit = 1 << 10
	const n = 8 << 20
	head := bigResponseHead
	tail := `"}]}}`
	src := io.MultiReader(oversized(head, n, tail+"\n"), strings.NewReader(`{"jsonrpc":"2.0","id":8,"result":{}}`+"\n"))
	lr := NewLineReader(src, limit, "a line")
	lr.SkipLong()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := lr.ReadLine()
	var first *SkippedMessageError
	if !errors.As(err, &first) || first.Whole || first.End || !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("first report = %#v (%v), want a *SkippedMessageError before the line's end", err, err)
	}
	if !strings.HasPrefix(string(first.Prefix), head) || len(first.Prefix) > limit || cap(first.Prefix) > limit {
		t.Errorf("prefix: %d bytes (cap %d), %q…", len(first.Prefix), cap(first.Prefix), first.Prefix[:min(len(first.Prefix), 80)])
	}
	_, ended, err := lr.ReadLine()
	var end *SkippedMessageError
	if !errors.As(err, &end) || !end.End || !end.Whole || !ended || end.Size != int64(len(head)+n+len(tail)) {
		t.Fatalf("second report = %v (ended %v), want the end of the line with its size %d", err, ended, len(head)+n+len(tail))
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("skipping an 8 MiB line with a limit of 1 KiB allocated %d bytes", got)
	}
	line, ended, err := lr.ReadLine()
	if err != nil || !ended || string(line) != `{"jsonrpc":"2.0","id":8,"result":{}}` {
		t.Fatalf("the next line: %q, %v, %v", line, ended, err)
	}
	if _, _, err := lr.ReadLine(); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v", err)
	}
}

// Over stdio framing, a response over the limit fails only the request
// it answers (its error says so; no note), a server message over the limit
// is dropped with a note of its size, and the frames after them are
// delivered.
// Without a listener for lost requests, the line ends the stream as before.
func TestLineReaderFailsOnlyWhatTheLineWasFor(t *testing.T) {
	const limit = 1 << 10
	const head9, tail9 = `{"jsonrpc":"2.0","result":{"text":"`, `"},"id":9}`
	input := func() io.Reader {
		return io.MultiReader(
			oversized(bigResponseHead, 100<<10, `"}]}}`+"\n"),
			oversized(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`, 100<<10, `"}}`+"\n"),
			oversized(head9, 100<<10, tail9+"\n"),
			strings.NewReader(`{"jsonrpc":"2.0","id":8,"result":{}}`+"\n"),
		)
	}
	closing := make(chan struct{})
	defer close(closing)
	l := startLineReader(input(), limit, "a line the server wrote on stdout", closing, func(err error) error { return err })
	var notes, told []string
	l.note = func(kind EventKind, s string) {
		notes = append(notes, s)
		if kind == EventDropped {
			told = append(told, s)
		}
	}
	type loss struct {
		id  string
		err error
	}
	var lost []loss
	l.setOnLost(func(id string, err error) { lost = append(lost, loss{id, err}) })
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Bound)
	defer cancel()
	f, err := l.read(ctx)
	if err != nil || string(f.Data) != `{"jsonrpc":"2.0","id":8,"result":{}}` {
		t.Fatalf("read: %q, %v", f.Data, err)
	}
	// The response to 9 names its id at its end, as the TypeScript SDK
	// writes one: its request fails then, not at its timeout.
	if len(lost) != 2 || lost[0].id != "7" || !errors.Is(lost[0].err, ErrFrameTooLarge) ||
		lost[0].err.Error() != "the server's answer exceeds the maximum message size (1 KiB)" ||
		lost[1].id != "9" || !errors.Is(lost[1].err, ErrFrameTooLarge) ||
		lost[1].err.Error() != fmt.Sprintf("the server's answer (%d bytes) exceeds the maximum message size (1 KiB)", len(head9)+100<<10+len(tail9)) {
		t.Fatalf("lost = %v", lost)
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{
		`a message with method "notifications/message"`,
		"a response whose id was not found in its first 64 KiB (should the rest name it, its request fails then)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the notes do not say %q:\n%s", want, all)
		}
	}
	// The request's error says what happened to the response to 7: a
	// note beside it would say it twice.
	if strings.Contains(all, "request 7") || strings.Count(all, "ended: ") != 1 {
		t.Errorf("notes of the response the request's error tells of:\n%s", all)
	}
	// The person is told of each other message once, at its start (its
	// end is a note for -v and the record).
	if len(told) != 2 || !strings.HasPrefix(told[0], "dropping ") || !strings.HasPrefix(told[1], "dropping ") {
		t.Errorf("told the person:\n%s", strings.Join(told, "\n"))
	}
	if _, err := l.read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v", err)
	}

	// Nobody to fail the request: the stream ends, as it did.
	l = startLineReader(input(), limit, "a line the server wrote on stdout", closing, func(err error) error { return err })
	_, err = l.read(ctx)
	wantTooLarge(t, err, limit)
	if _, err := l.read(ctx); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("after the error: %v", err)
	}
}

// An event over the limit on the GET stream is read past: a response (one
// the server should not send there) fails its request, a notification is
// dropped with a note, and the stream goes on. Before, either ended the
// connection.
func TestGETStreamSkipsAnEventOverTheLimit(t *testing.T) {
	const limit = 64 << 10
	var mu sync.Mutex
	var notes, told []string
	b, err := newHTTPBase(HTTPOptions{
		URL:            "http://127.0.0.1:1/mcp",
		MaxMessageSize: limit,
		ReconnectDelay: time.Hour,
		Observer: func(ev Event) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Kind {
			case EventDropped:
				told = append(told, ev.Text)
				fallthrough
			case EventNote:
				notes = append(notes, ev.Text)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan string, 4)
	b.onLost = func(id string, err error) {
		if errors.Is(err, ErrFrameTooLarge) {
			lost <- id
		} else {
			lost <- "unexpected: " + err.Error()
		}
	}
	s := newStreamable(b, "http://127.0.0.1:1/mcp")
	body := io.MultiReader(
		oversized("id: e1\ndata: "+`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`, 1<<20, `"}}`+"\n\n"),
		oversized("id: e2\ndata: "+bigResponseHead, 1<<20, "\ndata: "+`"}]}}`+"\n\n"),
		// Its id last, on a data line of its own (the TypeScript SDK
		// writes the id after the result).
		oversized("id: e3\ndata: "+`{"result":{"text":"`, 1<<20, "\"}\ndata: ,\"jsonrpc\":\"2.0\",\"id\":11}\n\n"),
		strings.NewReader("id: e4\ndata: "+`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`+"\n\n"),
	)
	x := &exchange{
		resp:   &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(body), Header: http.Header{}},
		cancel: func() {},
		stop:   func() bool { return true },
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &streamState{name: "get-1", method: "GET"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.runGetStream(ctx, x, st)
	}()
	defer func() {
		cancel()
		b.cancel()
		<-done
	}()
	rctx, rcancel := context.WithTimeout(context.Background(), testwait.Bound)
	defer rcancel()
	f, err := b.read(rctx)
	if err != nil || !strings.Contains(string(f.Data), "notifications/tools/list_changed") {
		t.Fatalf("read: %q, %v", f.Data, err)
	}
	for _, want := range []string{"7", "11"} {
		select {
		case id := <-lost:
			if id != want {
				t.Fatalf("lost %q, want request %s", id, want)
			}
		default:
			t.Fatalf("request %s was not reported lost before the frame after it", want)
		}
	}
	mu.Lock()
	all := strings.Join(notes, "\n")
	// The person is told of the notification, in one line whatever the
	// verbosity (EventDropped), as over stdio.
	if len(told) != 2 || !strings.HasPrefix(told[0], "SSE get-1 (GET http://127.0.0.1:1/mcp): dropping an SSE event") ||
		!strings.Contains(told[1], "a response whose id was not found in its first ") {
		t.Errorf("told the person:\n%s", strings.Join(told, "\n"))
	}
	mu.Unlock()
	for _, want := range []string{
		`SSE get-1 (GET http://127.0.0.1:1/mcp): dropping an SSE event longer than the maximum message size (64 KiB): a message with method "notifications/message"`,
		"an SSE event over the maximum message size ended: ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the notes do not say %q:\n%s", want, all)
		}
	}
	// Request 7's error tells of its response: no note, at its start or
	// its end, says it again.
	if strings.Contains(all, "request 7") || strings.Count(all, "ended: ") != 1 {
		t.Errorf("notes of the response the request's error tells of:\n%s", all)
	}
}

// The SSE parser skipping events holds no more than the limit.
func TestSSEReaderSkipsAnEventOverTheLimit(t *testing.T) {
	const limit = 1 << 10
	const n = 8 << 20
	head := "data: " + bigResponseHead
	src := io.MultiReader(oversized(head, n, "\ndata: end\n\n"), strings.NewReader("data: next\n\n"))
	p := newSSEReaderLimit(src, "", limit)
	p.skipEvents()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := p.Next()
	var sk *SkippedMessageError
	if !errors.As(err, &sk) || sk.End || scanPrefix(sk.Prefix).ID != "7" {
		t.Fatalf("first report: %v", err)
	}
	_, err = p.Next()
	if !errors.As(err, &sk) || !sk.End || sk.Size != int64(len(bigResponseHead)+n+len("\nend")) {
		t.Fatalf("second report: %v (size %d)", err, sk.Size)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("skipping an 8 MiB event with a limit of 1 KiB allocated %d bytes", got)
	}
	ev, err := p.Next()
	if err != nil || string(ev.Data) != "next" {
		t.Fatalf("next event: %q, %v", ev.Data, err)
	}
}

func TestScanPrefix(t *testing.T) {
	for _, tt := range []struct {
		prefix string
		want   prefixInfo
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"te`, prefixInfo{ID: "7", Response: true}},
		{` { "id" : "a\"b" , "error":{"code":-1,"message":"xx`, prefixInfo{ID: `a"b`, Response: true}},
		{`{"jsonrpc":"2.0","result":{"x":1},"id":3}`, prefixInfo{ID: "3", Response: true}},
		{`{"jsonrpc":"2.0","result":{"x":"}],\"id\":4"},"id":3`, prefixInfo{Response: true}},
		{`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{"mess`, prefixInfo{Method: "sampling/createMessage", RequestID: jsonrpc.Int(5)}},
		{`{"method":"elicitation/create","id":"e\u0031","params":{"mess`, prefixInfo{Method: "elicitation/create", RequestID: jsonrpc.RawID([]byte(`"e\u0031"`))}},
		{`{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"mess`, prefixInfo{Method: "sampling/createMessage"}},
		{`{"method":"sampling/createMessage","params":{"messages":[]},"jsonrpc":"2.0","id":1`, prefixInfo{Method: "sampling/createMessage"}},
		{`{"jsonrpc":"2.0","id":1.5,"method":"sampling/createMessage","params":{"mess`, prefixInfo{Method: "sampling/createMessage"}},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`, prefixInfo{Method: "notifications/message"}},
		{`{"jsonrpc":"2.0","id":5,"params":{},"method":"x","result":{`, prefixInfo{Method: "x", Response: true}},
		{`{"jsonrpc":"2.0","id":12`, prefixInfo{}},
		{`{"jsonrpc":"2.0","id":null,"error":{`, prefixInfo{Response: true}},
		{`[{"jsonrpc":"2.0","id":1,"result":{`, prefixInfo{Batch: true}},
		{`xyz`, prefixInfo{}},
	} {
		if got := scanPrefix([]byte(tt.prefix)); got != tt.want {
			t.Errorf("scanPrefix(%s) = %+v, want %+v", tt.prefix, got, tt.want)
		}
	}
}

// scanPrefix never fails on what a server sends, and the id it finds in
// any prefix of a response is that response's id.
func FuzzScanPrefix(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"text":"hi"}}`,
		`{"jsonrpc":"2.0","id":"x\u0041","error":{"code":-32600,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"result":{},"id":1}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`{"id":[1,2],"result":1}`,
		`{"jsonrpc":"2.0","id":"s\u0031","method":"sampling/createMessage","params":{"maxTokens":5}}`,
		`{"id":3,"method":"elicitation/create","params":{},"result":{}}`,
	} {
		f.Add([]byte(s), len(s)/2)
	}
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		info := scanPrefix(data)
		if info.ID != "" && !info.Response {
			t.Fatalf("an id without a response: %+v", info)
		}
		if !info.RequestID.IsZero() && (info.Response || info.Method == "" || !info.RequestID.Valid()) {
			t.Fatalf("a request id without a request: %+v", info)
		}
		// Fed in pieces, as a reader dropping a message feeds it, the
		// scanner finds what it finds in the whole.
		k := cut % (len(data) + 1)
		if k < 0 {
			k = -k
		}
		var pieces memberScanner
		pieces.write(data[:k])
		pieces.write(data[k : (k+len(data))/2])
		pieces.write(data[(k+len(data))/2:])
		if got := pieces.info(); got != info {
			t.Fatalf("fed in pieces at %d: %+v, fed whole: %+v", k, got, info)
		}
		if len(data) <= 512 {
			var bytewise memberScanner
			for i := range data {
				bytewise.write(data[i : i+1])
			}
			if got := bytewise.info(); got != info {
				t.Fatalf("fed byte by byte: %+v, fed whole: %+v", got, info)
			}
		}
		msgs, _, err := jsonrpc.DecodeFrame(data)
		if err != nil || len(msgs) != 1 || data[0] != '{' || msgs[0].ID.IsZero() || msgs[0].ID.IsNull() {
			return
		}
		// In a whole message whose members of interest are each named
		// once, as written (the decoder also takes "ID" for "id"), the
		// scanner finds the id wherever it is: a response's, when it is
		// a string or a number, and a request's, when MCP allows it.
		if has, ok := onceEach(data); ok {
			m := msgs[0]
			switch {
			case m.IsResponse() && (m.Result != nil || m.ErrorRaw != nil) && (m.ID.IsString() || m.ID.String()[0] == '-' || (m.ID.String()[0] >= '0' && m.ID.String()[0] <= '9')):
				if info.ID != m.ID.LooseKey() {
					t.Fatalf("scanPrefix(%q) = %+v, the response's id is %s", data, info, m.ID)
				}
			case m.IsRequest() && m.Method != "" && m.ID.Valid() && !has["result"] && !has["error"]:
				if info.RequestID.Key() != m.ID.Key() || info.Method != m.Method {
					t.Fatalf("scanPrefix(%q) = %+v, the request is %s %q", data, info, m.ID, m.Method)
				}
			}
		}
		if cut < 0 || cut > len(data) {
			cut = len(data)
		}
		got := scanPrefix(data[:cut])
		if msgs[0].IsResponse() && got.ID != "" && got.ID != msgs[0].ID.LooseKey() {
			t.Fatalf("scanPrefix(%q) found id %q, the response's is %q", data[:cut], got.ID, msgs[0].ID.LooseKey())
		}
		// The id of a request is answered as sent: the same key, type
		// and all.
		if msgs[0].IsRequest() && !got.RequestID.IsZero() && got.RequestID.Key() != msgs[0].ID.Key() {
			t.Fatalf("scanPrefix(%q) found request id %s, the request's is %s", data[:cut], got.RequestID, msgs[0].ID)
		}
	})
}

// onceEach reports whether each of the members id, method, result and
// error of the object data is named at most once, and as written, and
// which of them it has.
func onceEach(data []byte) (has map[string]bool, ok bool) {
	has, ok = map[string]bool{}, true
	rawjson.Members(data, func(name, _ []byte) bool {
		n := rawjson.Name(name)
		switch l := strings.ToLower(n); l {
		case "id", "method", "result", "error":
			ok = ok && n == l && !has[l]
			has[l] = true
		}
		return ok
	})
	return has, ok
}

// With skipEvents, an id, event or retry field longer than the parser
// takes drops its event, not the stream: the event is reported once, at
// its end, with its data's first bytes (the id of the request a response
// answers), its id does not become the last event id, and the next event
// is read. Before, the stream ended with an *SSEFieldTooLongError.
func TestSSEReaderSkipsAnEventWithAFieldTooLong(t *testing.T) {
	for _, field := range []string{"id", "event", "retry"} {
		t.Run(field, func(t *testing.T) {
			input := "id: e1\ndata: first\n\n" +
				field + ": " + strings.Repeat("9", maxSSEField+1) + "\ndata: " + `{"jsonrpc":"2.0","id":7,"result":{}}` + "\n\n" +
				"data: next\n\n"
			p := newSSEReaderLimit(&chunkReader{data: []byte(input), size: 100}, "", 64<<10)
			p.skipEvents()
			if ev, err := p.Next(); err != nil || string(ev.Data) != "first" {
				t.Fatalf("first event: %q, %v", ev.Data, err)
			}
			_, err := p.Next()
			var sk *SkippedMessageError
			var fe *SSEFieldTooLongError
			if !errors.As(err, &sk) || !sk.Whole || sk.End || !errors.As(err, &fe) || fe.Field != field || !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("the event with the long %s: %v, want it dropped for its %s field", field, err, field)
			}
			if scanPrefix(sk.Prefix).ID != "7" {
				t.Errorf("its prefix %q does not give the id of the request it answers", sk.Prefix)
			}
			if err := sk.requestError(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "the server's answer was dropped: an SSE "+field+" field is longer than 4 KiB") {
				t.Errorf("the request's error: %v", err)
			}
			if ev, err := p.Next(); err != nil || string(ev.Data) != "next" || ev.ID != "e1" {
				t.Fatalf("the event after it: %+v, %v", ev, err)
			}
		})
	}
}

// Under a maximum message size smaller than a field's own cap, the limit
// is the field's cap, and the error says it is the maximum message size
// (which a larger --max-message-size raises), not the most mcpx takes.
func TestSSEReaderFieldCapIsASmallLimit(t *testing.T) {
	input := "id: " + strings.Repeat("i", 40) + "\ndata: {}\n\n"
	p := newSSEReaderLimit(&chunkReader{data: []byte(input), size: 100}, "", 32)
	p.skipEvents()
	_, err := p.Next()
	var fe *SSEFieldTooLongError
	if !errors.As(err, &fe) || !fe.MessageSize || fe.Limit != 32 {
		t.Fatalf("err = %v (%+v), want the id field over the 32-byte limit", err, fe)
	}
	if want := "an SSE id field is longer than the maximum message size (32 bytes)"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q in it", err, want)
	}
}

// A field line that goes on past the limit, in skipEvents mode, is
// reported as soon as the limit is passed, holding no more than a buffer
// and the cap of a field, as data over the limit is; it is not waited
// for to its end, which may never come.
func TestSSEReaderSkipsAnEndlessFieldLine(t *testing.T) {
	const limit = 64 << 10
	r := &endlessField{prefix: "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\nid: "}
	p := newSSEReaderLimit(r, "", limit)
	p.skipEvents()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := p.Next()
	runtime.ReadMemStats(&after)
	var sk *SkippedMessageError
	if !errors.As(err, &sk) || sk.Whole || sk.Field == nil || sk.Field.Field != "id" || scanPrefix(sk.Prefix).ID != "3" {
		t.Fatalf("Next: %v, want the event dropped at once for its id field, with its data's prefix", err)
	}
	if r.read > limit+2*maxSSERead {
		t.Errorf("read %d bytes of the line before reporting it", r.read)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*(maxSSEField+maxSSERead) {
		t.Errorf("reading the line allocated %d bytes", n)
	}
}

// postStreamHarness reads bodies as the stream of a POST that owes
// request 7 a response, and keeps what the connection reports.
type postStreamHarness struct {
	s       *streamable
	st      *streamState
	dropped chan string
	mu      sync.Mutex
	told    []string
}

func newPostStreamHarness(t *testing.T, limit int64) *postStreamHarness {
	h := &postStreamHarness{dropped: make(chan string, 4)}
	b, err := newHTTPBase(HTTPOptions{
		URL:            "http://127.0.0.1:1/mcp",
		MaxMessageSize: limit,
		ReconnectDelay: time.Hour,
		Observer: func(ev Event) {
			if ev.Kind == EventDropped {
				h.mu.Lock()
				h.told = append(h.told, ev.Text)
				h.mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.cancel)
	b.onLost = func(string, error) {}
	b.onDropped = func(id jsonrpc.ID, method string, err error) {
		h.dropped <- id.String() + " " + method + ": " + err.Error()
	}
	h.s = newStreamable(b, "http://127.0.0.1:1/mcp")
	h.st = &streamState{name: "post-1", method: "POST", pending: map[string]bool{"7": true}}
	return h
}

func (h *postStreamHarness) consume(body io.Reader) (int, error) {
	resp := &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(body), Header: http.Header{}}
	return h.s.consume(resp, h.st, "POST")
}

// On the SSE stream of a POST, a notification and a request of the
// server's over the limit (and a priming event with an id too long) are
// dropped as over stdio, not the stream: the
// notification is told of (EventDropped), the request answered with an
// error (DropReporter), and the response the stream owes is delivered.
// Before, either failed the request the stream was for.
func TestPOSTStreamSkipsServerMessagesOverTheLimit(t *testing.T) {
	const limit = 64 << 10
	h := newPostStreamHarness(t, limit)
	body := io.MultiReader(
		// A priming event whose id is too long: no message, only noted.
		strings.NewReader("id: "+strings.Repeat("i", maxSSEField+1)+"\ndata:\n\n"),
		oversized("data: "+`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`, 1<<20, `"}}`+"\n\n"),
		oversized("data: "+`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"`, 1<<20, `"}}]}}`+"\n\n"),
		strings.NewReader("data: "+`{"jsonrpc":"2.0","id":7,"result":{}}`+"\n\n"),
	)
	if _, err := h.consume(body); !errors.Is(err, errAnswered) {
		t.Errorf("consume: %v, want the stream answered", err)
	}
	// What it queued is read without waiting (a cancelled context ends
	// only the wait for more).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, err := h.s.b.read(ctx)
	if err != nil || string(f.Data) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("read: %q, %v", f.Data, err)
	}
	select {
	case d := <-h.dropped:
		if d != `"s1" sampling/createMessage: the request exceeds the client's maximum message size (64 KiB)` {
			t.Errorf("the request is answered with %q", d)
		}
	default:
		t.Error("the request of the server's was not reported for an answer before the frame after it")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.told) != 1 || !strings.HasPrefix(h.told[0], "SSE post-1 (POST http://127.0.0.1:1/mcp): dropping an SSE event longer than the maximum message size (64 KiB): a message with method \"notifications/message\"") {
		t.Errorf("told the person:\n%s", strings.Join(h.told, "\n"))
	}
}

// A request of the server's over the limit whose id comes after its
// params, as the TypeScript SDK writes one, is answered with an error at
// its end, where its id is read. Before, it was only noted, and the
// server waited for an answer that never came.
func TestPOSTStreamAnswersARequestWhoseIDComesLast(t *testing.T) {
	const limit = 64 << 10
	h := newPostStreamHarness(t, limit)
	head := `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"`
	tail := `"}}]},"jsonrpc":"2.0","id":"s2"}`
	body := io.MultiReader(
		oversized("data: "+head, 1<<20, tail+"\n\n"),
		strings.NewReader("data: "+`{"jsonrpc":"2.0","id":7,"result":{}}`+"\n\n"),
	)
	if _, err := h.consume(body); !errors.Is(err, errAnswered) {
		t.Errorf("consume: %v, want the stream answered", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if f, err := h.s.b.read(ctx); err != nil || string(f.Data) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("read: %q, %v", f.Data, err)
	}
	select {
	case d := <-h.dropped:
		want := fmt.Sprintf(`"s2" sampling/createMessage: the request (%d bytes) exceeds the client's maximum message size (64 KiB)`, len(head)+1<<20+len(tail))
		if d != want {
			t.Errorf("the request is answered with %q, want %q", d, want)
		}
	default:
		t.Error("the request of the server's was not reported for an answer")
	}
}

// On the SSE stream of a POST, a response over the limit whose id is read
// fails its request and settles the stream; one whose id is not read
// (it may be the response owed) still ends the stream, failing what it
// owes at once rather than leaving it to wait for what was dropped.
func TestPOSTStreamResponseOverTheLimit(t *testing.T) {
	const limit = 64 << 10
	h := newPostStreamHarness(t, limit)
	_, err := h.consume(oversized("data: "+bigResponseHead, 1<<20, `"}]}}`+"\n\n"))
	if !errors.Is(err, errAnswered) {
		t.Errorf("consume: %v, want the stream settled", err)
	}
	// The loss is queued for Read, behind the frames before it.
	select {
	case it := <-h.s.b.inbox:
		if it.lost == nil || len(it.lost.ids) != 1 || it.lost.ids[0] != "7" ||
			it.lost.err.Error() != "the server's answer exceeds the maximum message size (64 KiB)" {
			t.Errorf("queued %+v, want the loss of request 7", it)
		}
	default:
		t.Fatal("request 7 was not reported lost")
	}
	h = newPostStreamHarness(t, limit)
	_, err = h.consume(oversized("data: "+`{"jsonrpc":"2.0","result":{"text":"`, 1<<20, `"},"id":7}`+"\n\n"))
	wantTooLarge(t, err, limit)
}
