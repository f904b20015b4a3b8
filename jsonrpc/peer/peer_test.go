package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// wait bounds every wait of these tests outside a synctest bubble.
const wait = 5 * time.Second

// remote is the other end of a Peer's connection, driven by the test.
type remote struct {
	t    *testing.T
	conn transport.Conn
}

func (r *remote) send(frame string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := r.conn.Write(ctx, transport.Frame{Data: []byte(frame)}); err != nil {
		r.t.Fatalf("writing %s: %v", frame, err)
	}
}

func (r *remote) next() *jsonrpc.Message {
	r.t.Helper()
	msgs := r.nextFrame()
	if len(msgs) != 1 {
		r.t.Fatalf("got %d messages, want one", len(msgs))
	}
	return msgs[0]
}

func (r *remote) nextFrame() []*jsonrpc.Message {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	f, err := r.conn.Read(ctx)
	if err != nil {
		r.t.Fatalf("reading: %v", err)
	}
	msgs, _, err := jsonrpc.DecodeFrame(f.Data)
	if err != nil {
		r.t.Fatalf("frame %s: %v", f.Data, err)
	}
	return msgs
}

// warnings collects a Peer's warnings.
type warnings struct {
	mu  sync.Mutex
	got []string
	ch  chan string
}

func newWarnings() *warnings { return &warnings{ch: make(chan string, 100)} }

func (w *warnings) add(s string) { w.ch <- s }

// expect waits for a warning that has every one of words, and returns it.
func (w *warnings) expect(t *testing.T, words ...string) string {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case s := <-w.ch:
			ok := true
			for _, word := range words {
				ok = ok && strings.Contains(s, word)
			}
			if ok {
				return s
			}
			t.Logf("other warning: %s", s)
		case <-timer.C:
			t.Fatalf("no warning with %q", words)
		}
	}
}

func newPeer(t *testing.T, opts Options) (*Peer, *remote, *warnings) {
	t.Helper()
	a, b := transport.Pipe()
	w := newWarnings()
	if opts.OnWarning == nil {
		opts.OnWarning = w.add
	}
	p := New(a, opts)
	p.Start()
	t.Cleanup(func() { p.Close(); b.Close() })
	return p, &remote{t: t, conn: b}, w
}

type callResult struct {
	m   *jsonrpc.Message
	err error
}

func goCall(p *Peer, ctx context.Context, req Request) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		m, err := p.Call(ctx, req)
		ch <- callResult{m, err}
	}()
	return ch
}

func result(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatal("the call did not return")
	}
	return callResult{}
}

func TestCall(t *testing.T) {
	p, r, _ := newPeer(t, Options{})
	ch := goCall(p, t.Context(), Request{Method: "a/b", Params: json.RawMessage(`{"x":1}`)})
	req := r.next()
	if !req.IsRequest() || req.Method != "a/b" || string(req.Params) != `{"x":1}` || req.ID.String() != "1" {
		t.Fatalf("request %s", req.Raw)
	}
	r.send(`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
	if res := result(t, ch); res.err != nil || string(res.m.Result) != `{"ok":true}` {
		t.Fatalf("Call = %v, %v", res.m, res.err)
	}
	// An error answer is a response too.
	ch = goCall(p, t.Context(), Request{Method: "c"})
	if req := r.next(); req.ID.String() != "2" {
		t.Fatalf("second id %s", req.ID)
	}
	r.send(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`)
	if res := result(t, ch); res.err != nil || res.m.Error == nil || res.m.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("Call = %+v, %v", res.m, res.err)
	}
}

// The protocol on top names its error codes through Options.CodeName, in
// the errors the engine delivers and in its warnings.
func TestCodeName(t *testing.T) {
	names := func(code int) string {
		if code == -32042 {
			return "URL elicitation required"
		}
		return ""
	}
	p, r, w := newPeer(t, Options{CodeName: names})
	ch := goCall(p, t.Context(), Request{Method: "tools/call"})
	id := r.next().ID
	r.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32042,"message":"first, this"}}`)
	r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"error":{"code":-32042,"message":"go there"}}`)
	res := result(t, ch)
	if res.err != nil || res.m.Error == nil || res.m.Error.Error() != "server error -32042 (URL elicitation required): go there" {
		t.Fatalf("Call = %+v, %v", res.m, res.err)
	}
	w.expect(t, "not tied to a request", "server error -32042 (URL elicitation required): first, this")

	// Without it, only JSON-RPC's own codes have names.
	p, r, _ = newPeer(t, Options{})
	ch = goCall(p, t.Context(), Request{Method: "tools/call"})
	r.send(`{"jsonrpc":"2.0","id":` + r.next().ID.String() + `,"error":{"code":-32042,"message":"go there"}}`)
	if res := result(t, ch); res.m.Error.Error() != "server error -32042: go there" {
		t.Errorf("unnamed: %v", res.m.Error)
	}
}

// The diagnostics for responses nobody waits for, and the tolerance of a
// retyped id. A departure tied to the call (an answer to it) comes with
// the call's context, even once the call has returned; one tied to none
// with context.Background(); a warning is no departure.
func TestResponseDiagnostics(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(r *remote, id jsonrpc.ID)
		warning []string
		tie     string // the departure's: "call: ", ": " (none); "" for a warning
	}{
		{"retyped id", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":"` + id.String() + `","result":{"ok":true}}`)
		}, []string{"JSON type changed", "accepted"}, "call: "},
		{"id written as a float", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `.0,"result":{"ok":true}}`)
		}, []string{".0: the same number, but written with a fraction or an exponent", "accepted"}, "call: "},
		{"id written with an exponent", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `0e-1,"result":{"ok":true}}`)
		}, []string{"0e-1: the same number", "accepted"}, "call: "},
		{"duplicate", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":true}}`)
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":"again"}}`)
		}, []string{"second response", "test/x"}, "call: "},
		{"duplicate, retyped", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":true}}`)
			r.send(`{"jsonrpc":"2.0","id":"` + id.String() + `","result":{"ok":"again"}}`)
		}, []string{"second response", "test/x"}, "call: "},
		{"unknown", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":987654,"result":{}}`)
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":true}}`)
		}, []string{"unknown request id 987654"}, ": "},
		{"unknown, an id of 100 kB", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":"` + strings.Repeat("k", 100000) + `","result":{}}`)
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":true}}`)
		}, []string{`unknown request id "kkk`, `k… (ignored)`}, ": "},
		{"not tied to a request", func(r *remote, id jsonrpc.ID) {
			r.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error here"}}`)
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":true}}`)
		}, []string{"not tied to a request", "parse error here"}, ""},
		{"not JSON", func(r *remote, id jsonrpc.ID) {
			r.send(`hello`)
			r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":true}}`)
		}, []string{"not JSON-RPC", "hello"}, ": "},
		{"departs from JSON-RPC", func(r *remote, id jsonrpc.ID) {
			r.send(`{"id":` + id.String() + `,"result":{"ok":true}}`)
		}, []string{"departs from JSON-RPC 2.0", `"jsonrpc": "2.0"`}, "call: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type tagKey struct{}
			w := newWarnings()
			p, r, _ := newPeer(t, Options{OnWarning: w.add, OnDeparture: func(ctx context.Context, s string) {
				tag, _ := ctx.Value(tagKey{}).(string)
				w.add(tag + ": " + s)
			}})
			ch := goCall(p, context.WithValue(t.Context(), tagKey{}, "call"), Request{Method: "test/x"})
			tt.answer(r, r.next().ID)
			if res := result(t, ch); res.err != nil || string(res.m.Result) != `{"ok":true}` {
				t.Fatalf("Call = %v, %v", res.m, res.err)
			}
			if got := w.expect(t, tt.warning...); !strings.HasPrefix(got, tt.tie) || tt.tie == "" && strings.HasPrefix(got, ": ") {
				t.Errorf("%q, want it to start with %q", got, tt.tie)
			}
		})
	}
}

// A response that arrives once the caller gave up is late, even when the
// read loop sees it before the caller wakes up to abandon the request.
func TestResponseAfterTheCallerGaveUpIsLate(t *testing.T) {
	p, r, w := newPeer(t, Options{})
	pc := p.Expect(t.Context(), jsonrpc.Int(41), "tools/call", func() bool { return true })
	r.send(`{"jsonrpc":"2.0","id":41,"result":{"content":[]}}`)
	w.expect(t, "late response to tools/call request 41", "given up")
	select {
	case m := <-pc.Response():
		t.Errorf("the response %s was handed to a caller that gave up", m.Raw)
	default:
	}
	p.mu.Lock()
	_, still := p.pending[jsonrpc.Int(41).Key()]
	p.mu.Unlock()
	if !still {
		t.Error("the request is no longer pending: the caller could not abandon it")
	}
}

// Timeouts, in a bubble of fake time: the idle timeout, which Extend
// resets, and the hard cap, which nothing extends; the caller's context;
// and the response that comes after the caller gave up.
func TestTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := transport.Pipe()
		w := newWarnings()
		p := New(a, Options{OnWarning: w.add})
		p.Start()
		defer p.Close()
		r := &remote{t: t, conn: b}
		var abandoned []string
		var mu sync.Mutex
		abandon := func(id jsonrpc.ID, reason string) {
			mu.Lock()
			abandoned = append(abandoned, id.String()+" "+reason)
			mu.Unlock()
		}

		start := time.Now()
		ch := goCall(p, t.Context(), Request{Method: "slow", Timeout: time.Second, MaxTimeout: time.Hour, Abandon: abandon})
		r.next()
		res := <-ch
		var te *TimeoutError
		if !errors.As(res.err, &te) || !errors.Is(res.err, ErrTimeout) || te.Max || te.After != time.Second || time.Since(start) != time.Second {
			t.Fatalf("idle timeout: %v after %s", res.err, time.Since(start))
		}

		// Progress keeps a request alive until the hard cap.
		start = time.Now()
		ch = goCall(p, t.Context(), Request{Method: "progressing", Timeout: time.Second, MaxTimeout: 5 * time.Second, Abandon: abandon})
		id := r.next().ID
	progress:
		for {
			time.Sleep(900 * time.Millisecond)
			synctest.Wait()
			select {
			case res = <-ch:
				break progress
			default:
			}
			if !p.Extend(id) {
				t.Fatal("Extend found no pending request")
			}
		}
		if d := time.Since(start); !errors.As(res.err, &te) || !te.Max || te.After != 5*time.Second || d < 5*time.Second || d > 6*time.Second {
			t.Fatalf("hard cap: %v after %s", res.err, d)
		}

		// The caller's context.
		ctx, cancel := context.WithCancel(t.Context())
		ch = goCall(p, ctx, Request{Method: "interrupted", Abandon: abandon})
		id = r.next().ID
		cancel()
		if res := <-ch; !errors.Is(res.err, context.Canceled) {
			t.Fatalf("cancelled: %v", res.err)
		}
		r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{}}`)
		synctest.Wait()
		w.expect(t, "late response to interrupted request 3", "given up")

		// A quiet request's late answer passes without a word.
		ch = goCall(p, t.Context(), Request{Method: "probe", Timeout: time.Second, Quiet: true})
		id = r.next().ID
		if res := <-ch; !errors.Is(res.err, ErrTimeout) {
			t.Fatalf("probe: %v", res.err)
		}
		r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{}}`)
		synctest.Wait()
		select {
		case s := <-w.ch:
			t.Errorf("a quiet request's late answer: %s", s)
		default:
		}

		mu.Lock()
		defer mu.Unlock()
		want := "1 timeout|2 timeout|3 cancelled by the user"
		if strings.Join(abandoned, "|") != want {
			t.Errorf("abandoned %q, want %q", abandoned, want)
		}
	})
}

func TestEnd(t *testing.T) {
	p, r, w := newPeer(t, Options{})
	ch := goCall(p, t.Context(), Request{Method: "listen"})
	id := r.next().ID
	stop := errors.New("the server ended it")
	// Matched loosely, as the transport reports lost requests.
	if !p.End(jsonrpc.String(id.String()), stop) {
		t.Fatal("End found no pending request")
	}
	if res := result(t, ch); !errors.Is(res.err, stop) {
		t.Fatalf("Call = %v", res.err)
	}
	r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{}}`)
	w.expect(t, "late response to listen request 1", "already ended")
}

// Requests of the peer: answered by the handler, concurrently with the
// read loop; a batch with a batch; an invalid id refused; a cancelled
// request not answered.
func TestHandler(t *testing.T) {
	release := make(chan struct{})
	var refused []string
	var mu sync.Mutex
	p, r, _ := newPeer(t, Options{
		Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
			switch req.Method {
			case "echo":
				return req.Params, nil
			case "fail":
				return nil, errors.New("it broke")
			case "refuse":
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no"}
			case "block":
				select {
				case <-release:
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
			case "hold":
				<-ctx.Done()
				return nil, context.Cause(ctx)
			}
			return nil, nil
		},
		OnRefused: func(req *jsonrpc.Message, err *jsonrpc.Error) {
			mu.Lock()
			refused = append(refused, req.ID.String())
			mu.Unlock()
		},
	})
	// A request that blocks does not hold up the next.
	r.send(`{"jsonrpc":"2.0","id":"b","method":"block"}`)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"v":1}}`)
	if m := r.next(); m.ID.String() != "1" || string(m.Result) != `{"v":1}` {
		t.Fatalf("echo answer %s", m.Raw)
	}
	close(release)
	if m := r.next(); m.ID.String() != `"b"` || string(m.Result) != `{}` {
		t.Fatalf("block answer %s", m.Raw)
	}
	r.send(`{"jsonrpc":"2.0","id":2,"method":"fail"}`)
	if m := r.next(); m.Error == nil || m.Error.Code != jsonrpc.CodeInternalError || m.Error.Message != "it broke" {
		t.Fatalf("fail answer %s", m.Raw)
	}
	r.send(`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}`)
	if m := r.next(); !m.ID.IsNull() || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("invalid id answer %s", m.Raw)
	}
	mu.Lock()
	if len(refused) != 1 || refused[0] != `{"x":1}` {
		t.Errorf("refused %q", refused)
	}
	mu.Unlock()

	r.send(`[{"jsonrpc":"2.0","id":3,"method":"echo","params":{}},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":4,"method":"refuse"}]`)
	batch := r.nextFrame()
	if len(batch) != 2 || batch[0].ID.String() != "3" || batch[1].ID.String() != "4" || batch[1].Error.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("batch answer %v", batch)
	}

	// Cancelled: the handler's context ends, its goroutine finishes, and
	// no answer goes out.
	r.send(`{"jsonrpc":"2.0","id":"c","method":"hold"}`)
	deadline := time.Now().Add(wait)
	for {
		p.mu.Lock()
		_, serving := p.serving[jsonrpc.String("c").Key()]
		p.mu.Unlock()
		if serving {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the handler never started")
		}
		time.Sleep(time.Millisecond)
	}
	p.Cancel(jsonrpc.String("c"))
	done := make(chan struct{})
	go func() { p.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("the cancelled handler did not finish")
	}
	r.send(`{"jsonrpc":"2.0","id":5,"method":"echo","params":[5]}`)
	if m := r.next(); m.ID.String() != "5" {
		t.Fatalf("after the cancelled request: %s (the cancelled one was answered?)", m.Raw)
	}
}

func TestWithoutHandler(t *testing.T) {
	_, r, _ := newPeer(t, Options{})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"x/y"}`)
	if m := r.next(); m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound || m.Error.Message != "method not found: x/y" {
		t.Fatalf("answer %s", m.Raw)
	}
	// A 100 KB method is not quoted back whole.
	r.send(`{"jsonrpc":"2.0","id":2,"method":"` + strings.Repeat("m", 100_000) + `"}`)
	if m := r.next(); m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound ||
		m.Error.Message != "method not found: "+strings.Repeat("m", jsonrpc.MaxQuoted)+"… (100000 bytes)" {
		t.Fatalf("answer to a 100 KB method: %d bytes", len(m.Raw))
	}
}

// A handler's error that quotes a megabyte the peer sent is not sent
// back whole: its message is cut, its code kept.
func TestLongErrorMessageIsCut(t *testing.T) {
	_, r, _ := newPeer(t, Options{Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
		var p struct{ V string }
		json.Unmarshal(req.Params, &p)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad value " + p.V}
	}})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":"` + strings.Repeat("v", 1<<20) + `"}}`)
	m := r.next()
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams || len(m.Raw) > 8<<10 ||
		!strings.HasPrefix(m.Error.Message, "bad value vvv") || !strings.HasSuffix(m.Error.Message, fmt.Sprintf("(%d bytes in all)", 1<<20+10)) {
		t.Fatalf("answer of %d bytes: %.100s", len(m.Raw), m.Raw)
	}
}

func TestNotificationsInOrder(t *testing.T) {
	got := make(chan string, 100)
	batches := 0
	_, r, _ := newPeer(t, Options{
		OnNotification: func(m *jsonrpc.Message) { got <- string(m.Params) },
		OnBatch:        func() { batches++ },
	})
	r.send(`{"jsonrpc":"2.0","method":"n","params":[1]}`)
	r.send(`[{"jsonrpc":"2.0","method":"n","params":[2]},{"jsonrpc":"2.0","method":"n","params":[3]}]`)
	r.send(`{"jsonrpc":"2.0","method":"n","params":[4]}`)
	for i := 1; i <= 4; i++ {
		select {
		case s := <-got:
			if s != "["+string(rune('0'+i))+"]" {
				t.Fatalf("notification %d: %s", i, s)
			}
		case <-time.After(wait):
			t.Fatalf("notification %d never came", i)
		}
	}
	if batches != 1 {
		t.Errorf("OnBatch told %d times", batches)
	}
}

// OnRequest sees each request on the read loop, in arrival order with the
// notifications, while the handlers of earlier ones still run.
func TestOnRequestInArrivalOrder(t *testing.T) {
	got := make(chan string, 100)
	release := make(chan struct{})
	defer close(release)
	_, r, _ := newPeer(t, Options{
		Handler: func(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			<-release
			return json.RawMessage(`{}`), nil
		},
		OnRequest:      func(m *jsonrpc.Message) { got <- m.Method },
		OnNotification: func(m *jsonrpc.Message) { got <- m.Method },
	})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"a"}`)
	r.send(`[{"jsonrpc":"2.0","id":2,"method":"b"},{"jsonrpc":"2.0","method":"n"}]`)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"c"}`)
	for _, want := range []string{"a", "b", "n", "c"} {
		select {
		case m := <-got:
			if m != want {
				t.Fatalf("got %s, want %s", m, want)
			}
		case <-time.After(wait):
			t.Fatalf("%s never came", want)
		}
	}
}

// Close ends every wait, is idempotent, and works before Start.
func TestClose(t *testing.T) {
	p, r, _ := newPeer(t, Options{})
	ch := goCall(p, t.Context(), Request{Method: "never"})
	r.next()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if res := result(t, ch); !errors.Is(res.err, transport.ErrClosed) {
		t.Fatalf("Call after Close: %v", res.err)
	}
	p.Close()
	select {
	case <-p.Done():
	default:
		t.Error("Done is open after Close")
	}

	a, _ := transport.Pipe()
	q := New(a, Options{})
	q.Close()
	q.Start()
	if !errors.Is(q.Err(), transport.ErrClosed) {
		t.Errorf("Err of a Peer closed before Start: %v", q.Err())
	}
}

// Intercept takes frames before the engine decodes them, in order.
func TestIntercept(t *testing.T) {
	var got []string
	var mu sync.Mutex
	_, r, _ := newPeer(t, Options{Intercept: func(f transport.Frame) bool {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(f.Data))
		return strings.Contains(string(f.Data), "mine")
	}})
	r.send(`not json, mine`)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"mine"}`)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"engine's"}`)
	if m := r.next(); m.ID.String() != "2" || m.Error == nil {
		t.Fatalf("answer %s: want the engine's answer to 2 only", m.Raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Errorf("intercepted %q", got)
	}
}

// lossConn is a connection that reports lost requests, as Streamable HTTP
// does.
type lossConn struct {
	transport.Conn
	lost func(id string, err error)
}

func (c *lossConn) OnRequestLost(fn func(id string, err error)) { c.lost = fn }

func TestLostRequest(t *testing.T) {
	a, b := transport.Pipe()
	c := &lossConn{Conn: a}
	p := New(c, Options{})
	p.Start()
	defer p.Close()
	defer b.Close()
	r := &remote{t: t, conn: b}
	ch := goCall(p, t.Context(), Request{Method: "x"})
	id := r.next().ID
	lost := errors.New("the stream broke")
	c.lost(id.LooseKey(), lost)
	if res := result(t, ch); !errors.Is(res.err, lost) {
		t.Fatalf("Call = %v", res.err)
	}
}

// Stop ends the read loop but leaves the connection to its owner.
func TestStop(t *testing.T) {
	a, b := transport.Pipe()
	defer a.Close()
	p := New(a, Options{})
	p.Start()
	r := &remote{t: t, conn: b}
	ch := goCall(p, t.Context(), Request{Method: "x"})
	r.next()
	p.Stop()
	if res := result(t, ch); !errors.Is(res.err, context.Canceled) {
		t.Fatalf("Call after Stop: %v", res.err)
	}
	// The connection still works.
	go r.send(`{"jsonrpc":"2.0","method":"after"}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if f, err := a.Read(ctx); err != nil || !strings.Contains(string(f.Data), "after") {
		t.Fatalf("reading after Stop: %s, %v", f.Data, err)
	}
	p.Close()
}

// TestServingIsBounded: a peer that sends requests without reading the
// answers (or faster than they are made) gets at most maxServing handled
// at once: the read loop waits for a slot, so memory stays bounded however
// many it sends, and a batch works on maxInBatch answers at once. Close
// frees a read loop waiting for a slot.
func TestServingIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := transport.Pipe()
		var running, most atomic.Int32
		release := make(chan struct{})
		p := New(a, Options{Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		}})
		p.Start()
		r := &remote{t: t, conn: b}
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			for i := range maxServing + 100 {
				if b.Write(context.Background(), transport.Frame{Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block"}`, i))}) != nil {
					return
				}
			}
		}()
		synctest.Wait()
		if n := running.Load(); n != maxServing {
			t.Fatalf("%d handlers running, want %d", n, maxServing)
		}
		// The answers drain; the rest are handled as slots free up.
		go func() {
			for {
				if _, err := b.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		close(release)
		<-sent
		synctest.Wait()
		if m := most.Load(); m != maxServing {
			t.Errorf("at most %d handlers ran at once, want %d", m, maxServing)
		}

		// A batch of many requests: maxInBatch at once.
		most.Store(0)
		release = make(chan struct{})
		var batch []string
		for i := range 100 {
			batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":"b%d","method":"block"}`, i))
		}
		r.send("[" + strings.Join(batch, ",") + "]")
		synctest.Wait()
		if n := running.Load(); n != maxInBatch {
			t.Errorf("%d answers of a batch worked on at once, want %d", n, maxInBatch)
		}
		close(release)
		synctest.Wait()

		// Close while the read loop waits for a slot.
		release = make(chan struct{})
		go func() {
			for i := range maxServing + 1 {
				if b.Write(context.Background(), transport.Frame{Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"block"}`, i))}) != nil {
					return
				}
			}
		}()
		synctest.Wait()
		p.Close()
		<-p.Done()
		close(release)
	})
}

// Each handler knows the place of its request in the order the peer sent
// them, a batch's requests in the batch's order: handlers run at once,
// and what serves them in turn (a person's questions) goes by it.
func TestArrival(t *testing.T) {
	_, r, _ := newPeer(t, Options{
		Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
			return json.RawMessage(strconv.FormatUint(Arrival(ctx), 10)), nil
		},
	})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"a"}`)
	if m := r.next(); string(m.Result) != "1" {
		t.Errorf("first request: %s", m.Raw)
	}
	r.send(`[{"jsonrpc":"2.0","id":2,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":3,"method":"a"}]`)
	if b := r.nextFrame(); len(b) != 2 || string(b[0].Result) != "2" || string(b[1].Result) != "3" {
		t.Errorf("batch: %v", b)
	}
	r.send(`{"jsonrpc":"2.0","id":4,"method":"a"}`)
	if m := r.next(); string(m.Result) != "4" {
		t.Errorf("after the batch: %s", m.Raw)
	}
	if Arrival(context.Background()) != 0 {
		t.Error("a context of no handler has an arrival")
	}
}

// TestPeerGoneEndsHandlers: when the connection ends on the peer's side
// (a server that exits while its request waits on a person), the handlers
// still running end too (ErrEnded): nobody is left to answer, and a
// question asked for the request would otherwise go on for nothing.
func TestPeerGoneEndsHandlers(t *testing.T) {
	started := make(chan struct{})
	ended := make(chan error, 1)
	a, b := transport.Pipe()
	p := New(a, Options{Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, context.Cause(ctx)
	}})
	p.Start()
	t.Cleanup(func() { p.Close() })
	r := &remote{t: t, conn: b}
	r.send(`{"jsonrpc":"2.0","id":1,"method":"ask"}`)
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the handler never started")
	}
	b.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, ErrEnded) {
			t.Errorf("the handler's context ended with %v, want ErrEnded", err)
		}
	case <-time.After(wait):
		t.Fatal("the handler still runs after the peer's end of the connection closed")
	}
}

// unendedConn is a connection whose peer wrote a line it never ended.
type unendedConn struct {
	transport.Conn
	unended string
}

func (c unendedConn) UnendedLine() string { return c.unended }

// A request that times out on a connection that holds an unended line (a
// server that forgets the newline after each message) says so.
func TestTimeoutTellsOfAnUnendedLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := transport.Pipe()
		defer b.Close()
		p := New(unendedConn{Conn: a, unended: "the server wrote 9 bytes on stdout after its last newline"}, Options{})
		p.Start()
		defer p.Close()
		r := &remote{t: t, conn: b}
		ch := goCall(p, t.Context(), Request{Method: "initialize", Timeout: time.Second})
		r.next()
		res := <-ch
		var te *TimeoutError
		if !errors.As(res.err, &te) || te.Unended != "the server wrote 9 bytes on stdout after its last newline" ||
			res.err.Error() != "no response after 1s; the server wrote 9 bytes on stdout after its last newline" {
			t.Fatalf("timeout: %v", res.err)
		}
	})
}

// A request whose id is that of a request still being answered is
// refused with that id (a requestor must not reuse an id: spec
// 2025-11-25, basic, "Requests"), and the first request keeps the id: the
// peer's cancellation of it reaches its handler.
func TestRequestIDInUse(t *testing.T) {
	var mu sync.Mutex
	var refused []string
	ended := make(chan error, 1)
	p, r, _ := newPeer(t, Options{
		Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
			if req.Method == "hold" {
				<-ctx.Done()
				ended <- context.Cause(ctx)
				return nil, context.Cause(ctx)
			}
			return req.Params, nil
		},
		OnRefused: func(req *jsonrpc.Message, err *jsonrpc.Error) {
			mu.Lock()
			refused = append(refused, req.Method+" "+req.ID.String())
			mu.Unlock()
		},
	})
	r.send(`{"jsonrpc":"2.0","id":"d","method":"hold"}`)
	r.send(`{"jsonrpc":"2.0","id":"d","method":"echo","params":{"v":1}}`)
	m := r.next()
	if m.ID.String() != `"d"` || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest ||
		m.Error.Message != `invalid request: id "d" is that of a request mcpx is still answering (a request id must not be reused)` {
		t.Fatalf("the second request with id \"d\": %s", m.Raw)
	}
	mu.Lock()
	if len(refused) != 1 || refused[0] != `echo "d"` {
		t.Errorf("refused %q", refused)
	}
	mu.Unlock()
	p.Cancel(jsonrpc.String("d"))
	select {
	case err := <-ended:
		if !errors.Is(err, ErrCancelled) {
			t.Errorf("the first request's handler ended with %v, want ErrCancelled", err)
		}
	case <-time.After(wait):
		t.Fatal("cancelling \"d\" did not reach the first request's handler")
	}
	// Once answered (here: withdrawn), the id is free again.
	deadline := time.Now().Add(wait)
	for {
		p.mu.Lock()
		n := len(p.serving)
		p.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the withdrawn request is still being served")
		}
		time.Sleep(time.Millisecond)
	}
	r.send(`{"jsonrpc":"2.0","id":"d","method":"echo","params":{"v":2}}`)
	if m := r.next(); m.ID.String() != `"d"` || string(m.Result) != `{"v":2}` {
		t.Fatalf("id \"d\" reused after its request ended: %s", m.Raw)
	}
}

// A message nested deeper than mcpx reads is not lost on the peer: a
// request is answered with an error under its id (the peer would wait for
// ever), and a response ends the request it answers with that error.
func TestTooDeep(t *testing.T) {
	var mu sync.Mutex
	var refused []string
	p, r, w := newPeer(t, Options{
		Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) { return nil, nil },
		OnRefused: func(req *jsonrpc.Message, err *jsonrpc.Error) {
			mu.Lock()
			refused = append(refused, req.Method)
			mu.Unlock()
		},
	})
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	r.send(`{"jsonrpc":"2.0","id":"d","method":"elicitation/create","params":{"x":` + deep + `}}`)
	w.expect(t, "nested deeper than the 10000 levels mcpx reads")
	m := r.next()
	if m.ID.String() != `"d"` || m.Error == nil || m.Error.Code != jsonrpc.CodeInternalError ||
		m.Error.Message != "the message is nested deeper than the 10000 levels mcpx reads" {
		t.Fatalf("answer %s", m.Raw)
	}
	mu.Lock()
	if len(refused) != 1 || refused[0] != "elicitation/create" {
		t.Errorf("refused %q", refused)
	}
	mu.Unlock()

	ch := goCall(p, t.Context(), Request{Method: "x"})
	id := r.next().ID
	r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"x":` + deep + `}}`)
	if res := result(t, ch); res.err == nil || !errors.Is(res.err, jsonrpc.ErrTooDeep) {
		t.Fatalf("Call = %v, want ErrTooDeep", res.err)
	}
}

// A message that shares its line with another, or with other text, is
// not read (the line is not JSON), but it is not lost on the peer either:
// a request is refused under its id, and a response ends the request it
// answers at once, rather than at its timeout.
func TestNotAloneOnItsLine(t *testing.T) {
	p, r, w := newPeer(t, Options{
		Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
			return json.RawMessage(`{}`), nil
		},
	})
	r.send(`{"jsonrpc":"2.0","id":"r","method":"roots/list"} and more`)
	w.expect(t, "not valid JSON")
	m := r.next()
	if m.ID.String() != `"r"` || m.Error == nil || m.Error.Code != jsonrpc.CodeInternalError ||
		!strings.HasPrefix(m.Error.Message, "the message is not alone on its line") {
		t.Fatalf("answer %s", m.Raw)
	}

	ch := goCall(p, t.Context(), Request{Method: "x"})
	id := r.next().ID
	r.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}{"jsonrpc":"2.0","id":` + id.String() + `,"result":{}}`)
	if res := result(t, ch); res.err == nil || !errors.Is(res.err, errNotAlone) {
		t.Fatalf("Call = %v, want errNotAlone", res.err)
	}

	// A line of only "{}"s costs no more than maxLeading of them.
	r.send(strings.Repeat("{}", 1<<20) + "x")
	w.expect(t, "not valid JSON")
}

// Of two requests with one id in one batch, the first in the batch keeps
// the id and the second is refused, however their handlers are
// scheduled: they are begun in the batch's order. Several batches, each
// with ids of its own, give the scheduler its chances.
func TestRequestIDInUseInABatch(t *testing.T) {
	refused := make(chan string, 100)
	_, r, _ := newPeer(t, Options{
		Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
			if req.Method == "first" {
				// Held until the other request with this id was
				// answered: it cannot find the id free.
				select {
				case <-refused:
				case <-time.After(wait / 5):
				}
			}
			return json.RawMessage(strconv.Quote(req.Method)), nil
		},
		OnRefused: func(req *jsonrpc.Message, err *jsonrpc.Error) { refused <- req.Method },
	})
	for i := range 20 {
		id := strconv.Quote(fmt.Sprintf("d%d", i))
		r.send(`[{"jsonrpc":"2.0","id":` + id + `,"method":"first"},{"jsonrpc":"2.0","id":` + id + `,"method":"second"}]`)
		b := r.nextFrame()
		if len(b) != 2 || string(b[0].Result) != `"first"` || b[1].Error == nil || b[1].Error.Code != jsonrpc.CodeInvalidRequest ||
			b[0].ID.String() != id || b[1].ID.String() != id {
			var raws []string
			for _, m := range b {
				raws = append(raws, string(m.Raw))
			}
			t.Fatalf("batch %d answered %s, want the first answered and the second refused", i, raws)
		}
	}
}

// A request of the peer's that reuses the id of an earlier one, answered
// already, is served, and warned about once: ids must not be reused
// within a session (spec 2025-11-25: basic, "Requests"). After
// NewSession, the old ids are the new session's to use.
func TestRequestIDReused(t *testing.T) {
	p, r, w := newPeer(t, Options{Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
		return req.Params, nil
	}})
	echo := func(id string, v int) {
		t.Helper()
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"echo","params":[%d]}`, id, v))
		if m := r.next(); m.ID.String() != id || string(m.Result) != fmt.Sprintf("[%d]", v) {
			t.Fatalf("answer %s, want [%d] for id %s", m.Raw, v, id)
		}
	}
	quiet := func() {
		t.Helper()
		select {
		case s := <-w.ch:
			t.Fatalf("unexpected warning %q", s)
		default:
		}
	}
	echo(`1`, 1)
	echo(`"1"`, 2) // another id: a string
	echo(`2`, 3)
	quiet()
	echo(`1`, 4)
	w.expect(t, "server request 1 (echo) reuses the id of an earlier request", `basic, "Requests"`)
	echo(`2`, 5)
	quiet() // once
	p.NewSession()
	echo(`1`, 6)
	quiet()
	echo(`1`, 7)
	w.expect(t, "server request 1 (echo) reuses the id")
}

// The ids remembered are bounded: the oldest are forgotten first.
func TestSeenIDsBounded(t *testing.T) {
	s := seenIDs{seed: maphash.MakeSeed(), set: map[uint64]struct{}{}}
	for i := range maxSeenIDs + 10 {
		if s.add(strconv.Itoa(i)) {
			t.Fatalf("id %d seen before it was added", i)
		}
	}
	if len(s.set) != maxSeenIDs {
		t.Errorf("%d ids remembered, want %d", len(s.set), maxSeenIDs)
	}
	if s.add("3") {
		t.Error("an id among the oldest is still remembered")
	}
	if !s.add(strconv.Itoa(maxSeenIDs + 9)) {
		t.Error("the latest id is forgotten")
	}
}

// A batch's request still waiting its turn (the batch is answered
// maxInBatch at a time) holds its id, and the peer's cancellation of it
// reaches its handler when it starts: it is not answered.
func TestBatchRequestCancelledBeforeItsTurn(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, maxInBatch)
	lateCause := make(chan error, 1)
	p, r, _ := newPeer(t, Options{Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) {
		if req.Method == "late" {
			lateCause <- context.Cause(ctx)
			return nil, nil
		}
		started <- struct{}{}
		<-release
		return nil, nil
	}})
	var b strings.Builder
	b.WriteString("[")
	for i := range maxInBatch {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"block"},`, i)
	}
	b.WriteString(`{"jsonrpc":"2.0","id":"late","method":"late"}]`)
	r.send(b.String())
	for range maxInBatch {
		select {
		case <-started:
		case <-time.After(wait):
			t.Fatal("the batch's first requests did not start")
		}
	}
	p.Cancel(jsonrpc.String("late"))
	close(release)
	select {
	case err := <-lateCause:
		if !errors.Is(err, ErrCancelled) {
			t.Errorf("the cancelled request's handler ran with %v, want ErrCancelled", err)
		}
	case <-time.After(wait):
		t.Fatal("the cancelled request's handler never ran")
	}
	answers := r.nextFrame()
	if len(answers) != maxInBatch {
		t.Errorf("%d answers, want %d (none to the cancelled request)", len(answers), maxInBatch)
	}
	for _, m := range answers {
		if m.ID.String() == `"late"` {
			t.Errorf("the cancelled request was answered: %s", m.Raw)
		}
	}
}

// What a request of the peer's costs while it waits its turn (a batch may
// hold millions): its id held, not yet a context for its handler.
func TestBeginIsCheap(t *testing.T) {
	p := New(nil, Options{})
	m := &jsonrpc.Message{ID: jsonrpc.Int(7), Method: "ping"}
	allocs := testing.AllocsPerRun(100, func() {
		if p.begin(m, 1) == nil {
			t.Fatal("refused")
		}
		p.mu.Lock()
		clear(p.serving)
		p.mu.Unlock()
	})
	if allocs > 2 {
		t.Errorf("begin allocates %v times, want at most 2 (the id's key, the handling)", allocs)
	}
}

// A request whose caller gave up before it was written is neither sent
// nor cancelled: a cancellation must name a request that was issued
// (spec 2025-11-25: basic/utilities/cancellation).
func TestCallGivenUpBeforeItIsSent(t *testing.T) {
	a, b := transport.Pipe()
	p := New(a, Options{})
	p.Start()
	defer p.Close()
	sent := make(chan string, 4)
	go func() {
		for {
			f, err := b.Read(context.Background())
			if err != nil {
				return
			}
			sent <- string(f.Data)
		}
	}()
	abandoned := false
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Call(ctx, Request{Method: "never", Abandon: func(jsonrpc.ID, string) { abandoned = true }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if abandoned {
		t.Error("a request never sent was abandoned (its peer would be told to cancel it)")
	}
	// The next request is the first frame the peer sees.
	go p.Call(t.Context(), Request{Method: "after"})
	select {
	case f := <-sent:
		if !strings.Contains(f, `"after"`) {
			t.Errorf("the peer got %s first, want the request after", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request after was not sent")
	}
}

// A request whose method is not a string is an invalid Request object
// (JSON-RPC 2.0 section 5.1): it is answered with -32600 under its id, or
// the peer would wait for ever, and the warning says what is wrong with
// it. Its id is never taken for that of a response to mcpx's request.
func TestMethodNotAString(t *testing.T) {
	p, r, w := newPeer(t, Options{
		Handler: func(ctx context.Context, req *jsonrpc.Message) (json.RawMessage, error) { return nil, nil },
	})
	r.send(`{"jsonrpc":"2.0","id":"s6","method":5}`)
	w.expect(t, `"method" must be a string, not a number (5)`)
	m := r.next()
	if m.ID.String() != `"s6"` || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("answer %s", m.Raw)
	}

	ch := goCall(p, t.Context(), Request{Method: "x"})
	id := r.next().ID
	// Without an id it is not answered (there is nothing to answer it
	// with); with the id of mcpx's request it does not end that request.
	r.send(`{"jsonrpc":"2.0","method":{"a":1}}`)
	r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"method":[1]}`)
	if m := r.next(); m.ID.String() != id.String() || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("answer %s", m.Raw)
	}
	r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"ok":true}}`)
	if res := result(t, ch); res.err != nil || string(res.m.Result) != `{"ok":true}` {
		t.Fatalf("Call = %v, %v", res.m, res.err)
	}
}

// A late response is a warning of a sort the peer can repeat with every
// message (the request stays retired, or pending while its caller gives
// up): it goes to OnEachWarning, which bounds how many are said, each
// time it comes.
func TestLateResponsesAreWarnedEach(t *testing.T) {
	w := newWarnings()
	p, r, _ := newPeer(t, Options{OnWarning: w.add, OnEachWarning: func(kind, msg string) { w.add(kind + ": " + msg) }})
	ch := goCall(p, t.Context(), Request{Method: "listen"})
	id := r.next().ID
	if !p.End(id, errors.New("ended")) {
		t.Fatal("End found no pending request")
	}
	if res := result(t, ch); res.err == nil {
		t.Fatal("Call ended without an error")
	}
	p.Expect(t.Context(), jsonrpc.Int(41), "tools/call", func() bool { return true })
	for range 3 {
		r.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{}}`)
		w.expect(t, lateAnswers+": late response to listen request 1", "already ended")
		r.send(`{"jsonrpc":"2.0","id":41,"result":{}}`)
		w.expect(t, lateAnswers+": late response to tools/call request 41", "given up")
	}
}
