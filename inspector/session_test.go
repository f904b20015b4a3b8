package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

func TestCallsAnsweredOutOfOrder(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ctx := context.Background()
	const n = 10
	calls := make([]<-chan callResult, n)
	for i := range n {
		calls[i] = goCall(ctx, s, "test/echo", map[string]int{"i": i})
	}
	reqs := make([]*jsonrpc.Message, n)
	ids := map[string]bool{}
	for i := range n {
		reqs[i] = srv.nextRequest("test/echo")
		if ids[reqs[i].ID.String()] {
			t.Fatalf("id %s used twice", reqs[i].ID)
		}
		ids[reqs[i].ID.String()] = true
	}
	// Answer in the reverse of the order the requests arrived in, echoing
	// each request's params so every call can check it got its own answer.
	for i := n - 1; i >= 0; i-- {
		srv.reply(reqs[i], `{"echo": `+string(reqs[i].Params)+`}`)
	}
	for i := range n {
		r := result(t, calls[i])
		if r.err != nil {
			t.Fatalf("call %d: %v", i, r.err)
		}
		want := fmt.Sprintf(`{"echo": {"i":%d}}`, i)
		if string(r.res) != want {
			t.Errorf("call %d got %s, want %s (exactly as sent)", i, r.res, want)
		}
	}
}

func TestCallRequestShape(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ctx := context.Background()
	tests := []struct {
		name   string
		params any
		want   string // the params member as sent; "" for none
	}{
		{"no params", nil, ""},
		{"map params", map[string]string{"uri": "file:///x"}, `{"uri":"file:///x"}`},
		{"raw params are compacted, order kept", json.RawMessage("{\n  \"b\": 1,\n  \"a\": [1, 2]\n}"), `{"b":1,"a":[1,2]}`},
		{"empty raw params", json.RawMessage(nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := goCall(ctx, s, "test/shape", tt.params)
			req := srv.nextRequest("test/shape")
			if got := string(req.Params); got != tt.want {
				t.Errorf("params = %s, want %s", got, tt.want)
			}
			if !req.ID.Valid() || req.ID.IsString() {
				t.Errorf("id %s: want an integer", req.ID)
			}
			srv.reply(req, `{}`)
			if r := result(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
		})
	}
	if _, err := s.Call(ctx, "test/bad", json.RawMessage("{not json")); err == nil {
		t.Error("Call with invalid raw params succeeded")
	}
}

func TestResponseWarnings(t *testing.T) {
	tests := []struct {
		name string
		// answer sends the response(s) for req.
		answer func(srv *fakeServer, req *jsonrpc.Message)
		// wantErr is nil when the call must succeed with result {"ok":true}.
		wantWarning []string
	}{
		{
			name: "numeric id echoed as a string",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.send(`{"jsonrpc":"2.0","id":"` + req.ID.String() + `","result":{"ok":true}}`)
			},
			wantWarning: []string{"JSON type changed"},
		},
		{
			name: "duplicate response",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.reply(req, `{"ok":true}`)
				srv.reply(req, `{"ok":"again"}`)
			},
			wantWarning: []string{"second response", "test/dup"},
		},
		{
			name: "unknown id besides the real answer",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.send(`{"jsonrpc":"2.0","id":987654,"result":{}}`)
				srv.reply(req, `{"ok":true}`)
			},
			wantWarning: []string{"unknown request id 987654"},
		},
		{
			name: "error without an id",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error here"}}`)
				srv.reply(req, `{"ok":true}`)
			},
			wantWarning: []string{"not tied to a request", "parse error here"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv, w := newTestSession(t, Options{})
			ch := goCall(context.Background(), s, "test/dup", nil)
			req := srv.nextRequest("test/dup")
			tt.answer(srv, req)
			r := result(t, ch)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if !jsonEqual(t, r.res, []byte(`{"ok":true}`)) {
				t.Errorf("result = %s", r.res)
			}
			w.expect(tt.wantWarning...)
		})
	}
}

func TestMalformedFramesAreWarnedNotFatal(t *testing.T) {
	tests := []struct {
		frame string
		// want lists, for each warning the frame must cause, words it has.
		want [][]string
	}{
		{"hello world", [][]string{{"not valid JSON", "hello world"}}},
		{"", [][]string{{"empty line"}}},
		{"   ", [][]string{{"empty line"}}},
		{"[]", [][]string{{"empty batch"}}},
		{`{"jsonrpc":"2.0","id":1,`, [][]string{{"not valid JSON"}}},
		{`{"id":424242,"result":{}}`, [][]string{{`"jsonrpc": "2.0"`}, {"unknown request id 424242"}}},
		{`"just a string"`, [][]string{{"not a JSON object"}}},
		{`null`, [][]string{{"not a JSON object"}}},
		{`[1, {"jsonrpc":"2.0","method":"notifications/x"}]`, [][]string{{"not a JSON object"}}},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, [][]string{{"id must be a string or an integer"}}},
		{`{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}`, [][]string{{"both result and error"}, {"unknown request id 5"}}},
	}
	s, srv, w := newTestSession(t, Options{})
	for i, tt := range tests {
		srv.send(tt.frame)
		// The read loop warns before it handles the next frame, so once the
		// ping after the bad frame is answered every warning is queued.
		id := `"sync-` + strconv.Itoa(i) + `"`
		srv.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		// A request with an invalid id is answered with an invalid-request
		// error and a null id, concurrently with the ping: wait for both.
		wantInvalid := strings.Contains(tt.frame, `"method":"ping"`)
		for gotSync := false; !gotSync || wantInvalid; {
			msgs, _, _ := jsonrpc.DecodeFrame(srv.nextFrame().Data)
			if len(msgs) != 1 {
				t.Fatalf("frame %q: unexpected answer", tt.frame)
			}
			switch {
			case msgs[0].ID.String() == id:
				gotSync = true
			case wantInvalid && msgs[0].ID.String() == "null" && msgs[0].Error != nil && msgs[0].Error.Code == jsonrpc.CodeInvalidRequest:
				wantInvalid = false
			default:
				t.Fatalf("frame %q: unexpected answer %s", tt.frame, msgs[0].Raw)
			}
		}
		var got []string
	drain:
		for {
			select {
			case g := <-w.ch:
				got = append(got, g)
			default:
				break drain
			}
		}
		if len(got) != len(tt.want) {
			t.Errorf("frame %q: warnings %q, want %d", tt.frame, got, len(tt.want))
			continue
		}
		for j, subs := range tt.want {
			if !containsAll(got[j], subs...) {
				t.Errorf("frame %q: warning %q lacks %q", tt.frame, got[j], subs)
			}
		}
	}
	// The session still works.
	ch := goCall(context.Background(), s, "test/after", nil)
	srv.reply(srv.nextRequest("test/after"), `{}`)
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
}

func TestJSONRPCErrorResponse(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := goCall(context.Background(), s, "tools/call", map[string]string{"name": "x"})
	req := srv.nextRequest("tools/call")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32602,"message":"bad args","data":{"field":"a"}}}`)
	r := result(t, ch)
	var rpcErr *jsonrpc.Error
	if !errors.As(r.err, &rpcErr) {
		t.Fatalf("error %v (%T) is not an *jsonrpc.Error", r.err, r.err)
	}
	want := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad args", Data: json.RawMessage(`{"field":"a"}`)}
	if diff := cmp.Diff(want, rpcErr); diff != "" {
		t.Errorf("jsonrpc.Error (-want +got):\n%s", diff)
	}
	if !containsAll(r.err.Error(), "tools/call", "bad args", "-32602", jsonrpc.CodeName(jsonrpc.CodeInvalidParams)) {
		t.Errorf("error text %q lacks method, code or message", r.err)
	}
}

// MCP's own error codes are named in the errors a session returns, as
// JSON-RPC's are (spec 2025-11-25: server/resources, "Error Handling"),
// without any global registry (package mcp names them).
func TestMCPErrorCodesAreNamed(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := goCall(context.Background(), s, "resources/read", map[string]string{"uri": "x"})
	req := srv.nextRequest("resources/read")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32002,"message":"Resource not found"}}`)
	r := result(t, ch)
	if want := "resources/read: server error -32002 (resource not found): Resource not found"; r.err == nil || r.err.Error() != want {
		t.Errorf("got %v, want %s", r.err, want)
	}
	if (&jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: "m"}).Error() != "server error -32002: m" {
		t.Error("a jsonrpc.Error the session did not deliver is named")
	}
}

func TestAbandonedCallSendsCancelledAndWarnsOnLateResponse(t *testing.T) {
	tests := []struct {
		name       string
		opts       []CallOption
		cancel     bool
		wantReason string
		check      func(t *testing.T, err error)
	}{
		{
			name:       "idle timeout",
			opts:       []CallOption{WithTimeout(30*time.Millisecond, 0)},
			wantReason: "timeout",
			check: func(t *testing.T, err error) {
				var te *TimeoutError
				if !errors.Is(err, ErrTimeout) || !errors.As(err, &te) {
					t.Fatalf("error = %v, want a *TimeoutError", err)
				}
				if te.Max || te.After != 30*time.Millisecond || te.Method != "test/slow" {
					t.Errorf("TimeoutError = %+v", te)
				}
			},
		},
		{
			name:       "hard cap without progress",
			opts:       []CallOption{WithTimeout(time.Hour, 30*time.Millisecond)},
			wantReason: "timeout",
			check: func(t *testing.T, err error) {
				var te *TimeoutError
				if !errors.As(err, &te) || !te.Max || te.After != 30*time.Millisecond {
					t.Fatalf("error = %v, want a hard-cap *TimeoutError", err)
				}
			},
		},
		{
			name:       "context cancelled",
			cancel:     true,
			wantReason: "cancelled",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("error = %v, want context.Canceled", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv, w := newTestSession(t, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := goCall(ctx, s, "test/slow", nil, tt.opts...)
			req := srv.nextRequest("test/slow")
			if tt.cancel {
				cancel()
			}
			tt.check(t, result(t, ch).err)

			n := srv.next()
			if n.Method != "notifications/cancelled" || !n.IsNotification() {
				t.Fatalf("after giving up the session sent %s, want notifications/cancelled", n.Raw)
			}
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
				Reason    string          `json:"reason"`
			}
			if err := json.Unmarshal(n.Params, &p); err != nil {
				t.Fatal(err)
			}
			if string(p.RequestID) != req.ID.String() {
				t.Errorf("requestId = %s, want %s (same JSON type and value)", p.RequestID, req.ID)
			}
			if !containsAll(p.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to mention %q", p.Reason, tt.wantReason)
			}

			srv.reply(req, `{"too":"late"}`)
			w.expect("late response", "test/slow", req.ID.String())
			// A late answer whose id came back as a string is still late.
			srv.send(`{"jsonrpc":"2.0","id":"` + req.ID.String() + `","result":{}}`)
			w.expect("late response", "test/slow")
		})
	}
}

func TestInitializeIsNeverCancelled(t *testing.T) {
	tests := []struct {
		name   string
		cancel bool
		opts   []CallOption
	}{
		{"context cancelled", true, nil},
		{"timeout", false, []CallOption{WithTimeout(20*time.Millisecond, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv, _ := newTestSession(t, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := goCall(ctx, s, "initialize", map[string]any{}, tt.opts...)
			srv.nextRequest("initialize")
			if tt.cancel {
				cancel()
			}
			if r := result(t, ch); r.err == nil {
				t.Fatal("initialize succeeded without an answer")
			}
			// Nothing (no notifications/cancelled) before the marker.
			srv.quietUntil(mark(t, s))
		})
	}
}

func progressToken(t *testing.T, req *jsonrpc.Message) json.RawMessage {
	t.Helper()
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || len(p.Meta.Token) == 0 {
		t.Fatalf("request %s has no _meta.progressToken", req.Raw)
	}
	return p.Meta.Token
}

func sendProgress(srv *fakeServer, token json.RawMessage, progress, total float64, msg string) {
	srv.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%v,"total":%v,"message":%q}}`, token, progress, total, msg))
}

func TestProgressResetsIdleTimeout(t *testing.T) {
	// On synctest's clock: the timeouts are real timers, and the test
	// takes no real time.
	synctest.Test(t, func(t *testing.T) {
		var notes []string
		var mu sync.Mutex
		s, srv, _ := newTestSession(t, Options{OnNotification: func(m *jsonrpc.Message) {
			mu.Lock()
			notes = append(notes, m.Method)
			mu.Unlock()
		}})
		got := make(chan Progress, 100)
		const idle = 300 * time.Millisecond
		ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "slow"},
			WithTimeout(idle, 0), WithProgress(func(p Progress) { got <- p }))
		req := srv.nextRequest("tools/call")
		token := progressToken(t, req)
		// Five updates a third of the idle timeout apart: the call lives well
		// past one idle period only because each update resets it.
		const steps = 5
		start := time.Now()
		for i := 1; i <= steps; i++ {
			sendProgress(srv, token, float64(i), steps, "step "+strconv.Itoa(i))
			select {
			case p := <-got:
				total := float64(steps)
				want := Progress{Progress: float64(i), Total: &total, Message: "step " + strconv.Itoa(i)}
				if diff := cmp.Diff(want, p); diff != "" {
					t.Errorf("progress %d (-want +got):\n%s", i, diff)
				}
			case r := <-ch:
				t.Fatalf("call ended after %v, before progress %d: %v", time.Since(start), i, r.err)
			case <-time.After(wait):
				t.Fatal("progress not delivered")
			}
			time.Sleep(idle / 3) // pacing the scenario, not synchronisation
		}
		if elapsed := time.Since(start); elapsed < idle {
			t.Fatalf("scenario too short to prove anything: %v", elapsed)
		}
		srv.reply(req, `{"content":[]}`)
		if r := result(t, ch); r.err != nil {
			t.Fatalf("call failed although progress kept arriving: %v", r.err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(notes) != 0 {
			t.Errorf("progress for our own call leaked to OnNotification: %v", notes)
		}
	})
}

func TestHardCapFiresDespiteProgress(t *testing.T) {
	// On synctest's clock: the timeouts are real timers, and the test
	// takes no real time.
	synctest.Test(t, func(t *testing.T) {
		s, srv, _ := newTestSession(t, Options{})
		const idle, hard = 250 * time.Millisecond, 750 * time.Millisecond
		var updates atomic.Int32
		ch := goCall(context.Background(), s, "tools/call", nil,
			WithTimeout(idle, hard), WithProgress(func(Progress) { updates.Add(1) }))
		req := srv.nextRequest("tools/call")
		token := progressToken(t, req)
		tick := time.NewTicker(idle / 5)
		defer tick.Stop()
		var r callResult
		i := 0
		deadline := time.After(wait)
	loop:
		for {
			select {
			case r = <-ch:
				break loop
			case <-tick.C:
				i++
				sendProgress(srv, token, float64(i), 1e6, "")
			case <-deadline:
				t.Fatal("hard cap never fired")
			}
		}
		var te *TimeoutError
		if !errors.As(r.err, &te) || !te.Max || te.After != hard {
			t.Fatalf("error = %v, want the hard cap (%v) *TimeoutError", r.err, hard)
		}
		if updates.Load() == 0 {
			t.Error("no progress delivered")
		}
		// The session tells the server, then ignores further progress.
		for {
			n := srv.next()
			if n.Method == "notifications/cancelled" {
				break
			}
			t.Fatalf("unexpected %s", n.Raw)
		}
	})
}

func TestProgressTokenJoinsExistingMeta(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	params := json.RawMessage(`{"name":"t","_meta":{"k":"v"},"arguments":{}}`)
	ch := goCall(context.Background(), s, "tools/call", params, WithProgress(func(Progress) {}))
	req := srv.nextRequest("tools/call")
	obj, err := ParseObject(req.Params)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"name", "_meta", "arguments"}, obj.Keys()); diff != "" {
		t.Errorf("params members (-want +got):\n%s", diff)
	}
	meta, _ := ParseObject(obj.Get("_meta"))
	if diff := cmp.Diff([]string{"k", "progressToken"}, meta.Keys()); diff != "" {
		t.Errorf("_meta members (-want +got):\n%s", diff)
	}
	if string(meta.Get("progressToken")) != req.ID.String() {
		t.Errorf("progressToken %s, want the request id %s", meta.Get("progressToken"), req.ID)
	}
	srv.reply(req, `{}`)
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	if _, err := s.Call(context.Background(), "tools/call", json.RawMessage(`[1]`), WithProgress(func(Progress) {})); err == nil {
		t.Error("progress on non-object params succeeded")
	}
}

func TestServerRequests(t *testing.T) {
	type answer struct {
		result  string // raw JSON, "" when an error is expected
		code    int
		message string // the error's message, if not ""
	}
	tests := []struct {
		name     string
		request  string
		handlers map[string]RequestHandler
		want     answer
		wantID   string
	}{
		{"ping with a string id", `{"jsonrpc":"2.0","id":"p-1","method":"ping"}`, nil, answer{result: `{}`}, `"p-1"`},
		{"ping with a numeric id", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}`, nil, answer{result: `{}`}, `7`},
		{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage"}`, nil, answer{code: jsonrpc.CodeMethodNotFound}, `8`},
		{"unknown method of 100 KB", `{"jsonrpc":"2.0","id":13,"method":"` + strings.Repeat("m", 100_000) + `"}`, nil,
			answer{code: jsonrpc.CodeMethodNotFound, message: "mcpx does not handle " + strings.Repeat("m", 200) + "… (100000 bytes)"}, `13`},
		{
			"handler result", `{"jsonrpc":"2.0","id":9,"method":"roots/list"}`,
			map[string]RequestHandler{"roots/list": func(context.Context, *jsonrpc.Message) (any, error) {
				return map[string]any{"roots": []any{}}, nil
			}},
			answer{result: `{"roots":[]}`}, `9`,
		},
		{
			"handler RPC error", `{"jsonrpc":"2.0","id":10,"method":"elicitation/create"}`,
			map[string]RequestHandler{"elicitation/create": func(context.Context, *jsonrpc.Message) (any, error) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no"}
			}},
			answer{code: jsonrpc.CodeInvalidParams}, `10`,
		},
		{
			"handler plain error", `{"jsonrpc":"2.0","id":11,"method":"elicitation/create"}`,
			map[string]RequestHandler{"elicitation/create": func(context.Context, *jsonrpc.Message) (any, error) {
				return nil, errors.New("boom")
			}},
			answer{code: jsonrpc.CodeInternalError}, `11`,
		},
		{
			"handler overrides ping", `{"jsonrpc":"2.0","id":12,"method":"ping"}`,
			map[string]RequestHandler{"ping": func(context.Context, *jsonrpc.Message) (any, error) {
				return json.RawMessage(`{"custom":true}`), nil
			}},
			answer{result: `{"custom":true}`}, `12`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			told := make(chan string, 1)
			s, srv, _ := newTestSession(t, Options{
				Handlers: tt.handlers,
				OnServerRequest: func(req *jsonrpc.Message, result json.RawMessage, err *jsonrpc.Error) {
					told <- req.Method
				},
			})
			_ = s
			srv.send(tt.request)
			m := srv.next()
			if !m.IsResponse() || m.ID.String() != tt.wantID {
				t.Fatalf("answer %s: want a response with id %s", m.Raw, tt.wantID)
			}
			if tt.want.result != "" {
				if m.Error != nil || !jsonEqual(t, m.Result, []byte(tt.want.result)) {
					t.Errorf("answer %s, want result %s", m.Raw, tt.want.result)
				}
			} else if m.Error == nil || m.Error.Code != tt.want.code {
				t.Errorf("answer %s, want error code %d", m.Raw, tt.want.code)
			} else if tt.want.message != "" && m.Error.Message != tt.want.message {
				t.Errorf("answer's message of %d bytes %.300q, want %.300q", len(m.Error.Message), m.Error.Message, tt.want.message)
			}
			select {
			case <-told:
			case <-time.After(wait):
				t.Error("OnServerRequest not called")
			}
		})
	}
}

func TestServerRequestDuringCall(t *testing.T) {
	t.Run("handler blocks while our call completes", func(t *testing.T) {
		release := make(chan struct{})
		started := make(chan struct{})
		s, srv, _ := newTestSession(t, Options{Handlers: map[string]RequestHandler{
			"elicitation/create": func(ctx context.Context, _ *jsonrpc.Message) (any, error) {
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return map[string]string{"action": "decline"}, nil
			},
		}})
		ch := goCall(context.Background(), s, "tools/call", nil)
		req := srv.nextRequest("tools/call")
		srv.send(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{}}`)
		select {
		case <-started:
		case <-time.After(wait):
			t.Fatal("handler not started")
		}
		// The handler is still waiting; the read loop must not be.
		srv.reply(req, `{"content":[]}`)
		if r := result(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
		close(release)
		m := srv.next()
		if m.ID.String() != `"e1"` || !jsonEqual(t, m.Result, []byte(`{"action":"decline"}`)) {
			t.Errorf("handler answer = %s", m.Raw)
		}
	})
	t.Run("handler makes its own call", func(t *testing.T) {
		var s *Session
		s, srv, _ := newTestSession(t, Options{Handlers: map[string]RequestHandler{
			"sampling/createMessage": func(ctx context.Context, _ *jsonrpc.Message) (any, error) {
				return s.Call(ctx, "test/nested", nil)
			},
		}})
		ch := goCall(context.Background(), s, "tools/call", nil)
		outer := srv.nextRequest("tools/call")
		srv.send(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`)
		nested := srv.nextRequest("test/nested")
		srv.reply(nested, `{"v":1}`)
		m := srv.next()
		if m.ID.String() != `"s1"` || !jsonEqual(t, m.Result, []byte(`{"v":1}`)) {
			t.Fatalf("sampling answer = %s", m.Raw)
		}
		srv.reply(outer, `{"done":true}`)
		if r := result(t, ch); r.err != nil || !jsonEqual(t, r.res, []byte(`{"done":true}`)) {
			t.Fatalf("outer call = %s, %v", r.res, r.err)
		}
	})
}

func TestServerCancelsItsRequest(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan struct{})
	s, srv, _ := newTestSession(t, Options{Handlers: map[string]RequestHandler{
		"elicitation/create": func(ctx context.Context, _ *jsonrpc.Message) (any, error) {
			close(started)
			select {
			case <-ctx.Done():
				close(stopped)
				return nil, ctx.Err()
			case <-time.After(wait):
				return nil, errors.New("never cancelled")
			}
		},
	}})
	srv.send(`{"jsonrpc":"2.0","id":"r1","method":"elicitation/create","params":{}}`)
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("handler not started")
	}
	srv.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","reason":"changed my mind"}}`)
	select {
	case <-stopped:
	case <-time.After(wait):
		t.Fatal("handler context not cancelled")
	}
	// spec basic/utilities/cancellation: receivers SHOULD NOT send a
	// response for a cancelled request.
	srv.quietUntil(mark(t, s))
}

func TestServerBatches(t *testing.T) {
	notes := make(chan *jsonrpc.Message, 10)
	s, srv, w := newTestSession(t, Options{OnNotification: func(m *jsonrpc.Message) { notes <- m }})

	t.Run("requests answered with a batch", func(t *testing.T) {
		srv.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}},` +
			`{"jsonrpc":"2.0","id":"two","method":"no/such"}]`)
		fr := srv.nextFrame()
		msgs, batch, err := jsonrpc.DecodeFrame(fr.Data)
		if err != nil || !batch {
			t.Fatalf("answer %s: want a batch (err %v)", fr.Data, err)
		}
		type resp struct {
			ID    string
			Code  int
			Empty bool
		}
		var got []resp
		for _, m := range msgs {
			r := resp{ID: m.ID.String(), Empty: string(m.Result) == "{}"}
			if m.Error != nil {
				r.Code = m.Error.Code
			}
			got = append(got, r)
		}
		want := []resp{{ID: "1", Empty: true}, {ID: `"two"`, Code: jsonrpc.CodeMethodNotFound}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("batch answer (-want +got):\n%s", diff)
		}
		select {
		case m := <-notes:
			if m.Method != "notifications/message" {
				t.Errorf("notification %s", m.Raw)
			}
		case <-time.After(wait):
			t.Fatal("notification in the batch not delivered")
		}
	})

	t.Run("responses in a batch", func(t *testing.T) {
		a := goCall(context.Background(), s, "test/a", nil)
		ra := srv.nextRequest("test/a")
		b := goCall(context.Background(), s, "test/b", nil)
		rb := srv.nextRequest("test/b")
		srv.send(`[{"jsonrpc":"2.0","id":` + rb.ID.String() + `,"result":{"who":"b"}},{"jsonrpc":"2.0","id":` + ra.ID.String() + `,"result":{"who":"a"}}]`)
		for name, ch := range map[string]<-chan callResult{"a": a, "b": b} {
			r := result(t, ch)
			if r.err != nil || !jsonEqual(t, r.res, []byte(`{"who":"`+name+`"}`)) {
				t.Errorf("call %s = %s, %v", name, r.res, r.err)
			}
		}
	})
	// No lifecycle ran, so no version to object to.
	w.none()
}

func TestNotificationsDeliveredInOrder(t *testing.T) {
	notes := make(chan string, 100)
	_, srv, w := newTestSession(t, Options{OnNotification: func(m *jsonrpc.Message) { notes <- m.Method }})
	var want []string
	for i := range 20 {
		method := "notifications/test/" + strconv.Itoa(i)
		want = append(want, method)
		srv.send(`{"jsonrpc":"2.0","method":"` + method + `"}`)
	}
	// Progress for a token nobody waits for is an ordinary notification
	// (and a warning: see TestProgressAndLogDepartures).
	srv.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1}}`)
	want = append(want, "notifications/progress")
	defer w.expect(`progress for token "nobody"`)
	var got []string
	for range want {
		select {
		case m := <-notes:
			got = append(got, m)
		case <-time.After(wait):
			t.Fatalf("only %d notifications delivered", len(got))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

// failingConn wraps a Conn so that the test can make Read fail with a
// chosen error, as a transport does when its peer goes away.
type failingConn struct {
	transport.Conn
	fail chan struct{}
	err  error
}

func (c *failingConn) Read(ctx context.Context) (transport.Frame, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.fail:
			cancel()
		case <-ctx.Done():
		}
	}()
	f, err := c.Conn.Read(ctx)
	select {
	case <-c.fail:
		return transport.Frame{}, c.err
	default:
	}
	return f, err
}

func TestConnectionEndFailsPendingCalls(t *testing.T) {
	client, server := transport.Pipe()
	exit := &transport.PeerExitError{Status: "exit status 2", Code: 2, LastStderr: []string{"panic: oops"}}
	fc := &failingConn{Conn: client, fail: make(chan struct{}), err: exit}
	s := NewSession(fc, Options{})
	defer s.Close()
	srv := newFakeServer(t, server)

	ch := goCall(context.Background(), s, "tools/call", nil)
	srv.nextRequest("tools/call")
	close(fc.fail)
	r := result(t, ch)
	var pe *transport.PeerExitError
	if !errors.As(r.err, &pe) || pe != exit {
		t.Fatalf("pending call error = %v, want the transport's *PeerExitError", r.err)
	}
	select {
	case <-s.Done():
	case <-time.After(wait):
		t.Fatal("Done not closed")
	}
	if !errors.Is(s.Err(), exit) {
		t.Errorf("Err() = %v", s.Err())
	}
	// A call made after the end fails with the same reason, without hanging.
	r = result(t, goCall(context.Background(), s, "tools/list", nil))
	if !errors.As(r.err, &pe) {
		t.Errorf("call after the end = %v", r.err)
	}
}

func TestCloseIsIdempotentAndFailsPendingCalls(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := goCall(context.Background(), s, "tools/call", nil)
	srv.nextRequest("tools/call")
	if s.Err() != nil {
		t.Errorf("Err() before the end = %v", s.Err())
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		}()
	}
	wg.Wait()
	if r := result(t, ch); !errors.Is(r.err, transport.ErrClosed) {
		t.Errorf("pending call = %v, want ErrClosed", r.err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close again = %v", err)
	}
	if !errors.Is(s.Err(), transport.ErrClosed) {
		t.Errorf("Err() = %v", s.Err())
	}
	if err := s.Notify(context.Background(), "test/x", nil); err == nil {
		t.Error("Notify after Close succeeded")
	}
}

// decoratingLifecycle is a stand-in for an era that decorates every request
// (as 2026-07-28 will), to check the session consults the lifecycle.
type decoratingLifecycle struct{ opened bool }

func (d *decoratingLifecycle) Open(context.Context, *Session) error { d.opened = true; return nil }
func (d *decoratingLifecycle) Server() *ServerInfo                  { return nil }
func (d *decoratingLifecycle) Decorate(method string, p json.RawMessage) (json.RawMessage, error) {
	if method == "test/refuse" {
		return nil, errors.New("refused")
	}
	return setMeta(p, "era", json.RawMessage(`"test"`))
}

func TestLifecycleDecoratesUnlessRaw(t *testing.T) {
	life := &decoratingLifecycle{}
	client, server := transport.Pipe()
	srv := newFakeServer(t, server)
	s, err := Connect(context.Background(), client, Options{Lifecycle: life})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !life.opened || s.Lifecycle() != life {
		t.Fatal("Connect did not open the given lifecycle")
	}
	tests := []struct {
		name string
		opts []CallOption
		want string
	}{
		{"decorated", nil, `{"a":1,"_meta":{"era":"test"}}`},
		{"raw", []CallOption{Raw()}, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := goCall(context.Background(), s, "test/x", json.RawMessage(`{"a":1}`), tt.opts...)
			req := srv.nextRequest("test/x")
			if string(req.Params) != tt.want {
				t.Errorf("params = %s, want %s", req.Params, tt.want)
			}
			srv.reply(req, `{}`)
			result(t, ch)
			if err := s.Notify(context.Background(), "notifications/x", json.RawMessage(`{"a":1}`), tt.opts...); err != nil {
				t.Fatal(err)
			}
			if n := srv.next(); string(n.Params) != tt.want {
				t.Errorf("notification params = %s, want %s", n.Params, tt.want)
			}
		})
	}
	if _, err := s.Call(context.Background(), "test/refuse", nil); err == nil || !containsAll(err.Error(), "test/refuse", "refused") {
		t.Errorf("Call refused by the lifecycle = %v", err)
	}
}

// TestLateProgressIsNotANotification: progress for a request that was
// answered goes to OnLateProgress, never to OnNotification nor to the
// finished call's progress callback — whether it comes right behind the
// response (the caller may not have returned yet) or later. A marker
// notification sent after it proves it was read.
func TestLateProgressIsNotANotification(t *testing.T) {
	notes := make(chan string, 10)
	late := make(chan string, 10)
	s, srv, _ := newTestSession(t, Options{
		OnNotification: func(m *jsonrpc.Message) { notes <- m.Method },
		OnLateProgress: func(id jsonrpc.ID, p Progress) { late <- id.String() + " " + p.Message },
	})
	var updates atomic.Int32
	for _, when := range []string{"right behind the response", "after the call returned"} {
		ch := goCall(context.Background(), s, "tools/call", nil, WithProgress(func(Progress) { updates.Add(1) }))
		req := srv.nextRequest("tools/call")
		token := progressToken(t, req)
		if when == "right behind the response" {
			srv.reply(req, `{"content":[]}`)
			sendProgress(srv, token, 1, 1, "late")
			result(t, ch)
		} else {
			srv.reply(req, `{"content":[]}`)
			result(t, ch)
			sendProgress(srv, token, 1, 1, "late")
		}
		srv.send(`{"jsonrpc":"2.0","method":"notifications/test/marker"}`)
		select {
		case m := <-notes:
			if m != "notifications/test/marker" {
				t.Fatalf("%s: late progress delivered as a notification (%s)", when, m)
			}
		case <-time.After(wait):
			t.Fatalf("%s: marker not delivered", when)
		}
		select {
		case got := <-late:
			if got != req.ID.String()+" late" {
				t.Errorf("%s: OnLateProgress got %q", when, got)
			}
		default:
			t.Errorf("%s: OnLateProgress not called", when)
		}
	}
	if n := updates.Load(); n != 0 {
		t.Errorf("late progress reached the finished call's callback %d times", n)
	}
}

// TestProgressAndLogDepartures: progress that does not increase, progress
// for a token no request of ours carries (spec basic/utilities/progress),
// progress beyond its total and a log message without a known level
// (server/utilities/logging) are each a warning; the updates and
// notifications are delivered all the same. Progress that cannot be read
// as such (no progress, not a number) is a warning and a notification,
// never an update.
func TestProgressAndLogDepartures(t *testing.T) {
	notes := make(chan string, 20)
	s, srv, w := newTestSession(t, Options{OnNotification: func(m *jsonrpc.Message) { notes <- m.Method }})
	var got []float64
	ch := goCall(context.Background(), s, "tools/call", nil, WithProgress(func(p Progress) { got = append(got, p.Progress) }))
	req := srv.nextRequest("tools/call")
	token := progressToken(t, req)
	sendProgress(srv, token, 2, 4, "a")
	sendProgress(srv, token, 1, 4, "b")
	w.expect("progress for request " + req.ID.String() + " went from 2 to 1: it must increase")
	sendProgress(srv, token, 1, 4, "c")
	w.expect("went from 1 to 1")
	sendProgress(srv, token, 3, 4, "d")
	srv.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1}}`)
	w.expect(`progress for token "nobody", which no request of mcpx's carries`)
	// Progress beyond its total is said, and taken.
	sendProgress(srv, token, 5, 4, "e")
	w.expect("progress for request " + req.ID.String() + " is 5, beyond its total 4")
	// What cannot be read as progress is not taken for it (nor for 0):
	// each is a warning, then shown as the notification it is.
	for _, c := range []struct{ params, warning string }{
		{`{"progressToken":%s}`, "progress notification without a progress"},
		{`{"progressToken":%s,"progress":"6"}`, `progress notification with the progress "6", which is not a number`},
		{`{"progressToken":%s,"progress":1e400}`, "progress notification with the progress 1e400, which is beyond the range of a 64-bit float"},
		{`{"progressToken":%s,"progress":7,"total":"8"}`, `progress notification with the total "8", which is not a number`},
		{`{"progressToken":%s,"progress":7,"message":{}}`, "progress notification with the message {}, which is not a string"},
		{`{"progressToken":[%s],"progress":7}`, "which is neither a string nor a number"},
		{`{"progress":7%.0s}`, "progress notification without a progressToken"},
	} {
		srv.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":` + fmt.Sprintf(c.params, token) + `}`)
		w.expect(c.warning)
	}
	srv.reply(req, `{"content":[]}`)
	result(t, ch)
	if fmt.Sprint(got) != "[2 1 1 3 5]" {
		t.Errorf("updates %v, want all five as sent", got)
	}
	for _, params := range []string{`{"level":"shouting","data":"x"}`, `{"data":"x"}`, `{"level":"info"}`} {
		srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":` + params + `}`)
	}
	w.expect(`log message with the level "shouting", which is none of debug, info,`)
	w.expect("log message without a level")
	w.expect("log message without data")
	srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"emergency","data":{"a":1}}}`)
	for _, want := range []string{"notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress",
		"notifications/message", "notifications/message", "notifications/message", "notifications/message"} {
		select {
		case m := <-notes:
			if m != want {
				t.Errorf("notification %s, want %s", m, want)
			}
		case <-time.After(wait):
			t.Fatalf("no %s delivered", want)
		}
	}
}

// A response with neither a result nor an error answers nothing: the call
// fails, as the server's departure from the protocol, rather than
// returning no result as if it were one.
func TestCallAnsweredWithNeitherResultNorError(t *testing.T) {
	s, srv, w := newTestSession(t, Options{})
	ch := goCall(t.Context(), s, "tools/call", map[string]any{"name": "x"})
	req := srv.nextRequest("tools/call")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `}`)
	r := result(t, ch)
	if r.err == nil || !errors.Is(r.err, ErrProtocolViolation) || !strings.Contains(r.err.Error(), "neither a result nor an error") {
		t.Fatalf("Call = %s, %v; want a protocol violation", r.res, r.err)
	}
	w.expect("neither a request, a notification nor a response")
	// A result of null is a result.
	ch = goCall(t.Context(), s, "x/y", nil)
	srv.reply(srv.nextRequest("x/y"), `null`)
	if r := result(t, ch); r.err != nil || string(r.res) != "null" {
		t.Fatalf("Call = %s, %v; want null", r.res, r.err)
	}
}

// TestEachDepartureBounded: a departure the server can repeat with every
// message (progress for a token never issued, a response to an unknown
// id; and a warning: an error not tied to a request) is said EachShown times, the last saying more are counted; the rest
// are counted (OnDepartureUnsaid, for --strict) and summed up by
// UnsaidDepartures, each sort on its own.
func TestEachDepartureBounded(t *testing.T) {
	var unsaid atomic.Int64
	s, srv, w := newTestSession(t, Options{OnDepartureUnsaid: func(context.Context) { unsaid.Add(1) }})
	const sent = EachShown + 7
	for i := range sent {
		srv.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":` + fmt.Sprint(i+1) + `}}`)
		srv.send(`{"jsonrpc":"2.0","id":"x` + fmt.Sprint(i) + `","result":{}}`)
		srv.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	}
	for i := range EachShown {
		p := w.expect(`progress for token "nobody", which no request of mcpx's carries`)
		r := w.expect("response to unknown request id")
		e := w.expect("server reported an error not tied to a request")
		for _, x := range []string{p, r, e} {
			if last := i == EachShown-1; strings.Contains(x, "counted, not shown") != last {
				t.Errorf("warning %d: %q", i+1, x)
			}
		}
	}
	// A request answered after them: they were all read by then.
	ch := goCall(context.Background(), s, "ping", nil)
	srv.reply(srv.nextRequest("ping"), `{}`)
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	w.none()
	if n := unsaid.Load(); n != 2*7 {
		t.Errorf("%d departures counted, not said; want %d", n, 2*7)
	}
	// (An error not tied to a request is no departure: summed up, not
	// counted.)
	want := []Unsaid{{"errors not tied to a request", 7}, {"progress notifications for tokens no request carries", 7}, {"responses to unknown request ids", 7}}
	if diff := cmp.Diff(want, s.UnsaidDepartures()); diff != "" {
		t.Errorf("UnsaidDepartures (-want +got):\n%s", diff)
	}
}

// TestEachDepartureSaidInOrder: departures of one sort said from several
// goroutines at once (the transport tells of each SSE stream answering a
// notification from a goroutine of its own) are said in the order they
// are counted, so that the one saying that more are counted is the last
// said of its sort. One counted while another was being said was said
// before it: the tenth, "(further ... are counted, not shown)", came
// before the ninth.
func TestEachDepartureSaidInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const kind = "answers of a test"
		var mu sync.Mutex
		var said []string
		var s *Session
		s, _, _ = newTestSession(t, Options{OnDeparture: func(_ context.Context, msg string) {
			if msg == "late" {
				// Another comes while this one is being said.
				go s.departedEach(context.Background(), kind, "later")
				synctest.Wait()
			}
			mu.Lock()
			defer mu.Unlock()
			said = append(said, msg)
		}})
		for range EachShown - 2 {
			s.departedEach(context.Background(), kind, "early")
		}
		s.departedEach(context.Background(), kind, "late")
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(said) != EachShown {
			t.Fatalf("%d departures said, want %d: %q", len(said), EachShown, said)
		}
		if last := said[EachShown-1]; !strings.HasPrefix(last, "later (further "+kind) {
			t.Errorf("said last %q, want the one saying more are counted: %q", last, said)
		}
	})
}

// TestUnsaidNotificationsApart: a progress notification that is itself a
// departure past the first EachShown of its sort goes to
// OnNotificationUnsaid, with its warning unsaid; those before it, and a
// log message whatever its departure, go to OnNotification; without
// OnNotificationUnsaid every one does.
func TestUnsaidNotificationsApart(t *testing.T) {
	for _, apart := range []bool{true, false} {
		t.Run(fmt.Sprint("apart=", apart), func(t *testing.T) {
			var mu sync.Mutex
			var shown, unsaid []string
			keep := func(to *[]string) func(*jsonrpc.Message) {
				return func(m *jsonrpc.Message) {
					mu.Lock()
					defer mu.Unlock()
					*to = append(*to, m.Method)
				}
			}
			opts := Options{OnNotification: keep(&shown)}
			if apart {
				opts.OnNotificationUnsaid = keep(&unsaid)
			}
			s, srv, w := newTestSession(t, opts)
			const sent = EachShown + 3
			for i := range sent {
				srv.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":` + fmt.Sprint(i+1) + `}}`)
				srv.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody"}}`)
				srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":"x"}}`)
			}
			// A request answered after them: they were all read by then.
			ch := goCall(context.Background(), s, "ping", nil)
			srv.reply(srv.nextRequest("ping"), `{}`)
			if r := result(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
			// Warned about EachShown times a sort, whichever way the
			// notifications went.
			for range 3 * EachShown {
				w.expect("")
			}
			w.none()
			count := func(list []string, method string) (n int) {
				for _, m := range list {
					if m == method {
						n++
					}
				}
				return n
			}
			mu.Lock()
			defer mu.Unlock()
			wantShown, wantUnsaid := EachShown, sent-EachShown
			if !apart {
				wantShown, wantUnsaid = sent, 0
			}
			// (Two sorts of progress: for a token no request carries,
			// and one that cannot be read as progress.)
			if n := count(shown, mcp.NotificationProgress); n != 2*wantShown {
				t.Errorf("%d progress notifications to OnNotification; want %d", n, 2*wantShown)
			}
			if n := count(unsaid, mcp.NotificationProgress); n != 2*wantUnsaid {
				t.Errorf("%d progress notifications to OnNotificationUnsaid; want %d", n, 2*wantUnsaid)
			}
			if n := count(shown, mcp.NotificationMessage); n != sent {
				t.Errorf("%d log messages to OnNotification; want %d", n, sent)
			}
			if n := count(unsaid, mcp.NotificationMessage); n != 0 {
				t.Errorf("%d log messages to OnNotificationUnsaid; want none", n)
			}
		})
	}
}

// TestEachDepartureShownAnyway: for a program whose output is every
// notification (ShowsUnsaid: mcpx watch), the tenth line of a sort says
// further ones are not warned about — they are shown all the same — not
// that they are not shown; the warnings' sort (an error not tied to a
// request) says so too, as a watch's closing line does.
func TestEachDepartureShownAnyway(t *testing.T) {
	_, srv, w := newTestSession(t, Options{ShowsUnsaid: func() bool { return true }})
	for i := range EachShown {
		srv.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":` + fmt.Sprint(i+1) + `}}`)
		srv.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	}
	for i := range EachShown {
		p := w.expect(`progress for token "nobody", which no request of mcpx's carries`)
		e := w.expect("server reported an error not tied to a request")
		for _, x := range []string{p, e} {
			last := i == EachShown-1
			if strings.Contains(x, "counted, not warned about)") != last || strings.Contains(x, "not shown") {
				t.Errorf("warning %d: %q", i+1, x)
			}
		}
	}
}

// Log messages are shown whatever their departures (their text is meant
// for the person): past the tenth bad one of a program that does not
// show every notification, the warning says further ones are not warned
// about, not that they are not shown.
func TestLogDeparturesSayTheyAreShown(t *testing.T) {
	_, srv, w := newTestSession(t, Options{ShowsUnsaid: func() bool { return false }})
	for range EachShown {
		srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":"x"}}`)
	}
	for i := range EachShown {
		x := w.expect(`log message with the level "loud"`)
		last := i == EachShown-1
		if strings.Contains(x, "counted, not warned about)") != last || strings.Contains(x, "not shown") {
			t.Errorf("warning %d: %q", i+1, x)
		}
	}
	if !ShownAnyway(logDepartures) || ShownAnyway("progress notifications for tokens no request carries") {
		t.Error("ShownAnyway: only log messages are shown whatever their departures")
	}
}
