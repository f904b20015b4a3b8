package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/transport"
)

// liveReplay serves tr as the "live" server for a verification.
func liveReplay(t *testing.T, tr *Trace) transport.Conn {
	t.Helper()
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, _ := rp.ServePipe(ctx)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func runVerify(t *testing.T, tr *Trace, live transport.Conn, opts VerifyOptions) *VerifyResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Verify(ctx, tr, live, opts)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return res
}

var verifyTrace = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1.0"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"},{"name":"clock"}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clock"}}`,
	`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
	`> {"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///r"}]}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"at":"2026-01-02T03:04:05.123Z","n":1.0}}`,
}

func TestVerifyAgainstItself(t *testing.T) {
	t.Parallel()
	tr := mkTrace(verifyTrace...)
	res := runVerify(t, tr, liveReplay(t, tr), VerifyOptions{})
	if !res.OK() || res.Exchanges != 3 || res.ServerRequests != 1 {
		t.Fatalf("result %+v", res)
	}
	if res.Err() != nil {
		t.Error("Err() on a clean result")
	}
	if s := res.Summary(); s != "3 exchange(s) verified, 0 mismatch(es); answered 1 server request(s) from the recording" {
		t.Errorf("summary %q", s)
	}
}

// TestVerifySaysWhatItDidNotCompare: a recorded request the recording has
// no answer to (its last line cut short, its response edited away, the
// recording killed) is not compared, and the summary says so: the trace
// did not pass with one exchange fewer and no word.
func TestVerifySaysWhatItDidNotCompare(t *testing.T) {
	t.Parallel()
	res := runVerify(t, mkTrace(verifyTrace[:len(verifyTrace)-1]...), liveReplay(t, mkTrace(verifyTrace...)), VerifyOptions{})
	// The call's window (the server's roots/list) is compared: an
	// exchange, its response not.
	if !res.OK() || res.Exchanges != 3 || res.Unanswered != 1 {
		t.Fatalf("result %+v", res)
	}
	if s, want := res.Summary(), "3 exchange(s) verified, 0 mismatch(es); answered 1 server request(s) from the recording; 1 request(s) the recording has no answer to (their responses not compared)"; s != want {
		t.Errorf("summary %q, want %q", s, want)
	}
	if b, err := json.Marshal(res); err != nil || !strings.Contains(string(b), `"unanswered":1`) {
		t.Errorf("JSON %s (%v) lacks \"unanswered\":1", b, err)
	}
}

func TestVerifyNormalizesTimesAndNumbers(t *testing.T) {
	t.Parallel()
	live := append([]string(nil), verifyTrace...)
	live[len(live)-1] = `< {"jsonrpc":"2.0","id":3,"result":{"n":1,"at":"2030-12-31T23:59:59+01:00"}}`
	res := runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)), VerifyOptions{})
	if !res.OK() {
		t.Fatalf("mismatches %+v", res.Mismatches)
	}
}

func TestVerifyReportsDifferences(t *testing.T) {
	t.Parallel()
	live := append([]string(nil), verifyTrace...)
	live[4] = `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo2"},{"name":"clock","extra":true}]}}`
	live[8] = `< {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}`
	res := runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)), VerifyOptions{})
	if len(res.Mismatches) != 2 {
		t.Fatalf("mismatches %+v", res.Mismatches)
	}
	m := res.Mismatches[0]
	// Tools are compared by name: echo2 is echo renamed.
	want := []Difference{
		{Path: `$.result.tools[?@.name=="echo"].name`, Recorded: `"echo"`, Live: `"echo2"`},
		{Path: `$.result.tools[?@.name=="clock"].extra`, Live: "true"},
	}
	if len(m.Diffs) != 2 || m.Diffs[0] != want[0] || m.Diffs[1] != want[1] {
		t.Errorf("diffs %+v, want %+v", m.Diffs, want)
	}
	if m2 := res.Mismatches[1]; m2.Problem != "the response differs (result vs error)" {
		t.Errorf("second mismatch %+v", m2)
	}
	err := res.Err()
	if err == nil || !strings.Contains(err.Error(), `2 of 3 exchange(s) differ from the recording; first: exchange 2 tools/list: the response differs at $.result.tools[?@.name=="echo"].name (recorded "echo", live "echo2")`) {
		t.Errorf("Err() = %v", err)
	}
	// --ignore leaves them out.
	res = runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)),
		VerifyOptions{Ignore: []string{"$.result.tools", "$.error", "$.result"}})
	if !res.OK() {
		t.Errorf("with --ignore: %+v", res.Mismatches)
	}
}

func TestVerifyMissingResponseAndUnexpectedRequest(t *testing.T) {
	t.Parallel()
	live := append([]string(nil), verifyTrace[:5]...)
	live = append(live,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clock"}}`,
		`< {"jsonrpc":"2.0","id":"x","method":"sampling/createMessage","params":{}}`,
	)
	res := runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)), VerifyOptions{Timeout: 200 * time.Millisecond})
	if len(res.Mismatches) != 1 {
		t.Fatalf("mismatches %+v", res.Mismatches)
	}
	// The server's request is in the window of the tools/call that caused
	// it, where the recording has a roots/list.
	m := res.Mismatches[0]
	if m.Exchange != 3 || !strings.HasPrefix(m.Problem, "no response within 200ms; the requests the server sent differ: ") ||
		!strings.Contains(m.Problem, "1 sampling/createMessage, the recording has 0") || !strings.Contains(m.Problem, "0 roots/list, the recording has 1") {
		t.Errorf("mismatch %+v", m)
	}
	if len(m.Diffs) != 2 || m.Diffs[0].Message != "roots/list" || m.Diffs[1].Message != "sampling/createMessage" || m.Diffs[1].Recorded != "[]" {
		t.Errorf("diffs %+v", m.Diffs)
	}
}

func TestVerifyConnectionEnds(t *testing.T) {
	t.Parallel()
	client, server := transport.Pipe()
	go func() {
		ctx := context.Background()
		server.Read(ctx) // initialize
		server.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)})
		server.Read(ctx) // notifications/initialized
		server.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A connection that ends is the server's behaviour, reported as such
	// for each exchange it left without an outcome; it is no error.
	res, err := Verify(ctx, mkTrace(verifyTrace...), client, VerifyOptions{})
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.Exchanges != 3 || len(res.Mismatches) != 3 {
		t.Fatalf("result %+v", res)
	}
	for _, m := range res.Mismatches[1:] {
		if m.Problem != "not sent: the connection ended first (connection closed)" {
			t.Errorf("mismatch %+v", m)
		}
	}
	// The result says the live server was lost, and at which exchange:
	// what it did after is no finding about it.
	if l := res.Lost; l == nil || l.Session != 1 || l.Exchange != 2 || l.Method != "tools/list" || !errors.Is(l, transport.ErrClosed) {
		t.Errorf("Lost = %#v", res.Lost)
	}
}

// TestVerifyLost: Lost is set only when an exchange with a recorded
// outcome got none live (here a response that never came, a timeout), not
// when the live server answered differently.
func TestVerifyLost(t *testing.T) {
	t.Parallel()
	tr := mkTrace(verifyTrace...)
	// The live server takes the tools/call and never answers it.
	live := append([]string(nil), verifyTrace[:5]...)
	live = append(live, `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clock"}}`)
	res := runVerify(t, tr, liveReplay(t, mkTrace(live...)), VerifyOptions{Timeout: 200 * time.Millisecond})
	if len(res.Mismatches) != 1 {
		t.Fatalf("mismatches %+v", res.Mismatches)
	}
	if l := res.Lost; l == nil || l.Exchange != 3 || !errors.Is(l, peer.ErrTimeout) || !strings.Contains(l.Error(), "exchange 3 tools/call") {
		t.Errorf("Lost = %v", res.Lost)
	}
	live = append([]string(nil), verifyTrace...)
	live[4] = `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo2"}]}}`
	if res := runVerify(t, tr, liveReplay(t, mkTrace(live...)), VerifyOptions{}); res.OK() || res.Lost != nil {
		t.Errorf("a server that answered differently: Lost = %v, mismatches %+v", res.Lost, res.Mismatches)
	}
}

// TestVerifyErrorCounts: the error counts the exchanges that differ, not
// every mismatch (what the server sent outside any request, a
// notification that could not be sent, are no exchanges).
func TestVerifyErrorCounts(t *testing.T) {
	t.Parallel()
	res := &VerifyResult{Sessions: 1, Exchanges: 4}
	for i := 1; i <= 4; i++ {
		res.Mismatches = append(res.Mismatches, Mismatch{Session: 1, Exchange: i, Method: "tools/list", Problem: "the response differs"})
	}
	res.Mismatches = append(res.Mismatches, Mismatch{Session: 1, Method: "notifications/initialized", Problem: "could not be sent"})
	if got := res.Err().Error(); !strings.HasPrefix(got, "4 of 4 exchange(s) differ from the recording, and 1 other difference(s); first: exchange 1 tools/list") {
		t.Errorf("Err() = %q", got)
	}
	res.Mismatches = res.Mismatches[4:]
	if got := res.Err().Error(); !strings.HasPrefix(got, "1 difference(s) from the recording outside the 4 exchange(s), which match; first: notifications/initialized: could not be sent") {
		t.Errorf("Err() = %q", got)
	}
}

func TestVerifyRemapsCancelledRequestIDs(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":"a","method":"slow"}`,
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"x"}}`,
	)
	client, server := transport.Pipe()
	got := make(chan string, 2)
	go func() {
		for i := 0; i < 2; i++ {
			f, err := server.Read(context.Background())
			if err != nil {
				return
			}
			got <- string(f.Data)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Verify(ctx, tr, client, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if a, b := <-got, <-got; a != `{"jsonrpc":"2.0","id":1,"method":"slow"}` || b != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}` {
		t.Errorf("sent %s and %s", a, b)
	}
}

// A live server's batch of requests is answered with one batch (JSON-RPC
// 2.0, section 6), and an answer whose id came back as a string is still
// the answer to the request (the session accepts it the same way).
func TestVerifyBatchAndRetypedID(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	)
	client, server := transport.Pipe()
	defer server.Close()
	live := make(chan error, 1)
	go func() {
		live <- func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := server.Read(ctx)
			if err != nil {
				return err
			}
			if string(req.Data) != `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` {
				return fmt.Errorf("the request %s", req.Data)
			}
			batch := `[{"jsonrpc":"2.0","id":"a","method":"roots/list"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`
			if err := server.Write(ctx, transport.Frame{Data: []byte(batch)}); err != nil {
				return err
			}
			ans, err := server.Read(ctx)
			if err != nil {
				return err
			}
			var answers []struct{ ID, Result json.RawMessage }
			if json.Unmarshal(ans.Data, &answers) != nil || len(answers) != 2 || string(answers[0].ID) != `"a"` ||
				string(answers[0].Result) != `{"roots":[]}` || string(answers[1].ID) != `"b"` || string(answers[1].Result) != `{}` {
				return fmt.Errorf("the answer to the batch: %s", ans.Data)
			}
			return server.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":"1","result":{"tools":[]}}`)})
		}()
	}()
	res := runVerify(t, tr, client, VerifyOptions{Timeout: 5 * time.Second})
	if err := <-live; err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Exchanges != 1 || res.ServerRequests != 1 {
		t.Errorf("result %+v", res)
	}
}

// The params of a request the server sends are compared like a
// notification's: a change is one difference in the window of the request
// that caused it, and the recorded answer still answers it.
func TestVerifyServerRequestParams(t *testing.T) {
	t.Parallel()
	live := append([]string(nil), verifyTrace...)
	live[6] = `< {"jsonrpc":"2.0","id":0,"method":"roots/list","params":{"cursor":"c2"}}`
	res := runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)), VerifyOptions{})
	if len(res.Mismatches) != 1 || res.ServerRequests != 1 {
		t.Fatalf("%s", reportOf(res))
	}
	m := res.Mismatches[0]
	want := Difference{Message: "roots/list #1", Path: "$.params", Live: `{"cursor":"c2"}`}
	if m.Exchange != 3 || len(m.Diffs) != 1 || m.Diffs[0] != want {
		t.Errorf("mismatch %+v", m)
	}
}

// A server that sends something outside any request on its own time (a
// timer, as server-everything asks for the roots 350 ms after the
// handshake) is given that time: the live session lasts until what the
// recording shows came, bounded by the timeout, rather than ending with
// its last exchange.
// toolsServer is a live server with tools (listChanged declared): it
// answers initialize, and on tools/list calls list with its empty answer
// to write (with whatever else the test sends around it).
func toolsServer(t *testing.T, list func(ctx context.Context, server transport.Conn, answer []byte)) transport.Conn {
	return pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
		switch m.Method {
		case "initialize":
			server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}`), nil)})
		case "tools/list":
			list(ctx, server, jsonrpc.EncodeResponse(m.ID, []byte(`{"tools":[]}`), nil))
		}
	})
}

// pipeServer is a live server over a pipe that hands each message the
// client sends to serve, in order, until the pipe closes (at the test's
// end).
func pipeServer(t *testing.T, serve func(ctx context.Context, server transport.Conn, m *jsonrpc.Message)) transport.Conn {
	client, server := transport.Pipe()
	go func() {
		ctx := context.Background()
		for {
			f, err := server.Read(ctx)
			if err != nil {
				return
			}
			serve(ctx, server, parseMessage(f.Data))
		}
	}()
	t.Cleanup(func() { server.Close() })
	return client
}

// listChangedFrame is notifications/tools/list_changed.
var listChangedFrame = transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)}

func TestVerifyWaitsForWhatTheServerSendsLater(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	)
	// later is the live server: it answers, and sends list_changed after
	// delay once it answered tools/list (never, when delay is negative).
	later := func(delay time.Duration) transport.Conn {
		return toolsServer(t, func(ctx context.Context, server transport.Conn, answer []byte) {
			server.Write(ctx, transport.Frame{Data: answer})
			if delay >= 0 {
				time.AfterFunc(delay, func() { server.Write(ctx, listChangedFrame) })
			}
		})
	}
	if res := runVerify(t, tr, later(100*time.Millisecond), VerifyOptions{}); !res.OK() {
		t.Errorf("a server that sends it 100ms later: %s", reportOf(res))
	}
	start := time.Now()
	res := runVerify(t, tr, later(-1), VerifyOptions{Timeout: 300 * time.Millisecond})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Exchange != 0 ||
		res.Mismatches[0].Problem != "the server's messages differ: 0 notifications/tools/list_changed, the recording has 1" {
		t.Errorf("a server that never sends it: %s", reportOf(res))
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("gave up after %s, before the timeout", d)
	}
}

// A list_changed notification sent on the server's own time falls beside
// whichever request is pending: recorded during tools/list, sent live
// after it (or the other way round), the sessions still match; a missing
// one is still reported.
func TestVerifyListChangedOnTheServersTime(t *testing.T) {
	t.Parallel()
	during := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	)
	// live answers tools/list, sending list_changed before the answer
	// (before) or after it (!before), or not at all (never).
	live := func(before, never bool) transport.Conn {
		return toolsServer(t, func(ctx context.Context, server transport.Conn, answer []byte) {
			if before && !never {
				server.Write(ctx, listChangedFrame)
			}
			server.Write(ctx, transport.Frame{Data: answer})
			if !before && !never {
				server.Write(ctx, listChangedFrame)
			}
		})
	}
	if res := runVerify(t, during, live(true, false), VerifyOptions{}); !res.OK() {
		t.Errorf("sent during tools/list, as recorded: %s", reportOf(res))
	}
	if res := runVerify(t, during, live(false, false), VerifyOptions{}); !res.OK() {
		t.Errorf("sent after tools/list, recorded during it: %s", reportOf(res))
	}
	res := runVerify(t, during, live(false, true), VerifyOptions{Timeout: 200 * time.Millisecond})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Problem != "the server's messages differ: 0 notifications/tools/list_changed, the recording has 1" {
		t.Errorf("never sent: %s", reportOf(res))
	}
}

// A task's status notification comes on the task's own time: recorded
// beside tasks/result (the official TypeScript SDK sends input_required
// as its task asks, whatever the client is waiting for), sent live before
// it, the sessions still match; a missing one is still reported.
func TestVerifyTaskStatusOnTheTasksTime(t *testing.T) {
	t.Parallel()
	status := `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"input_required","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}`
	result := `{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`
	during := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"t1"}}`,
		`< `+status,
		`< {"jsonrpc":"2.0","id":2,"result":`+result+`}`,
	)
	// live sends the status once it answered initialize (early), or not
	// at all, and answers tasks/result.
	live := func(early bool) transport.Conn {
		return pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
			switch m.Method {
			case "initialize":
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}`), nil)})
				if early {
					server.Write(ctx, transport.Frame{Data: []byte(status)})
				}
			case "tasks/result":
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(result), nil)})
			}
		})
	}
	if res := runVerify(t, during, live(true), VerifyOptions{}); !res.OK() {
		t.Errorf("sent before tasks/result, recorded during it: %s", reportOf(res))
	}
	res := runVerify(t, during, live(false), VerifyOptions{Timeout: 200 * time.Millisecond})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Problem != "the server's messages differ: 0 notifications/tasks/status, the recording has 1" {
		t.Errorf("never sent: %s", reportOf(res))
	}
}

// Changed counts each exchange that differs once, however many of its
// parts do, and what differs outside any exchange apart.
func TestVerifyResultChanged(t *testing.T) {
	t.Parallel()
	res := &VerifyResult{Exchanges: 5, Mismatches: []Mismatch{
		{Session: 1, Exchange: 2, Problem: "the response differs"},
		{Session: 1, Exchange: 2, Problem: "the notifications differ"},
		{Session: 1, Exchange: 0, Problem: "the server's messages differ"},
		{Session: 2, Exchange: 2, Problem: "the response differs"},
		{Session: 2, Exchange: 0, Method: "notifications/initialized", Problem: "accepted, but the recording has a refusal (HTTP 400)"},
	}}
	if ex, other := res.Changed(); ex != 2 || other != 2 {
		t.Errorf("Changed() = %d, %d; want 2 exchanges and 2 other differences", ex, other)
	}
	if ex, other := (&VerifyResult{Exchanges: 3}).Changed(); ex != 0 || other != 0 {
		t.Errorf("Changed() of a clean result = %d, %d", ex, other)
	}
}

// A notification tagged with a subscription id belongs to the
// subscriptions/listen request of that id (spec 2026-07-28:
// basic/patterns/subscriptions), whatever else is pending when it comes:
// a list change sent while a later request is pending too, the sessions
// match, the live request's id in place of the recorded one. A list
// change tagged with another id is a difference still.
func TestVerifySubscriptionNotifications(t *testing.T) {
	t.Parallel()
	tr := listenTrace()
	// live acknowledges the subscription, tagged with the listen
	// request's id (or tag); once tools/list came too, it sends a list
	// change on the subscription, then answers both.
	live := func(tag string) transport.Conn {
		var listen jsonrpc.ID
		sub := func() string {
			if tag != "" {
				return tag
			}
			return string(listen.Raw())
		}
		return pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
			switch m.Method {
			case "subscriptions/listen":
				listen = m.ID
				server.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(listen.Raw()) + `},"notifications":{"toolsListChanged":true}}}`)})
			case "tools/list":
				server.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + sub() + `}}}`)})
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{"tools":[]}`), nil)})
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(listen, []byte(`{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":`+string(listen.Raw())+`}}`), nil)})
			}
		})
	}
	if res := runVerify(t, tr, live(""), VerifyOptions{}); !res.OK() || res.Exchanges != 2 {
		t.Errorf("acknowledged as recorded: %s", reportOf(res))
	}
	res := runVerify(t, tr, live(`"another"`), VerifyOptions{Timeout: 300 * time.Millisecond})
	if res.OK() || !strings.Contains(reportOf(res), "notifications/tools/list_changed") {
		t.Errorf("a list change tagged with another id: %s", reportOf(res))
	}
}

// A subscription still open when the recording ended (mcpx watch
// interrupted) is compared as far as the recording goes: its
// acknowledgement and notifications, which verify waits for before it
// sends the recorded cancellation, the live server's later ones left out;
// it is not counted as a request the recording has no answer to. An
// acknowledgement that differs, or none, is a difference.
func TestVerifyOpenSubscription(t *testing.T) {
	t.Parallel()
	const meta = modernMeta
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{`+meta+`,"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2},"notifications":{"toolsListChanged":true}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"cancelled by the user","requestId":2}}`,
	)
	// live acknowledges with acked, then sends changes list changes; a
	// cancellation of the listen request is logged on cancelled.
	live := func(acked string, changes int) (transport.Conn, chan string) {
		cancelled := make(chan string, 1)
		return pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
			switch m.Method {
			case "subscriptions/listen":
				sub := `{"io.modelcontextprotocol/subscriptionId":` + string(m.ID.Raw()) + `}`
				if acked != "" {
					server.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":` + sub + `,"notifications":` + acked + `}}`)})
				}
				for range changes {
					server.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":` + sub + `}}`)})
				}
			case "notifications/cancelled":
				cancelled <- string(m.Params)
			}
		}), cancelled
	}
	conn, cancelled := live(`{"toolsListChanged":true}`, 3)
	res := runVerify(t, tr, conn, VerifyOptions{})
	if !res.OK() || res.Exchanges != 1 || res.Unanswered != 0 || res.Summary() != "1 exchange(s) verified, 0 mismatch(es)" {
		t.Errorf("as recorded: %s", reportOf(res))
	}
	select {
	case p := <-cancelled:
		if !strings.Contains(p, `"requestId":`) {
			t.Errorf("cancellation %s", p)
		}
	case <-time.After(5 * time.Second):
		t.Error("the recorded cancellation was not sent")
	}
	conn, _ = live(`{"toolsListChanged":true,"promptsListChanged":true}`, 1)
	res = runVerify(t, tr, conn, VerifyOptions{})
	if r := reportOf(res); res.OK() || !strings.Contains(r, "the recording ends before the response") || !strings.Contains(r, "promptsListChanged") {
		t.Errorf("acknowledged otherwise: %s", r)
	}
	conn, _ = live("", 0)
	res = runVerify(t, tr, conn, VerifyOptions{Timeout: 200 * time.Millisecond})
	if r := reportOf(res); res.OK() || !strings.Contains(r, "notifications/subscriptions/acknowledged") {
		t.Errorf("not acknowledged: %s", r)
	}
}
