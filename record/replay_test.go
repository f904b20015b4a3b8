package record

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// mkTrace builds a trace from lines: "> frame" (client to server),
// "< frame" (server to client), "! text" (a stderr line), "# text" (a
// note).
func mkTrace(lines ...string) *Trace {
	tr := &Trace{Header: Header{Format: Format, Version: Version, Redacted: true}}
	for i, l := range lines {
		e := Event{Time: time.Duration(i) * time.Millisecond, Kind: KindFrame, Data: []byte(l[2:])}
		switch l[:2] {
		case "> ":
			e.Dir = ClientToServer
		case "< ":
			e.Dir = ServerToClient
		case "! ":
			e = Event{Time: e.Time, Kind: KindStderr, Dir: ServerToClient, Text: l[2:]}
		case "# ":
			e = Event{Time: e.Time, Kind: KindNote, Text: l[2:]}
		default:
			panic("mkTrace: bad line " + l)
		}
		tr.Events = append(tr.Events, e)
	}
	return tr
}

// rawClient drives a replay frame by frame.
type rawClient struct {
	t    *testing.T
	conn transport.Conn
	done <-chan error
	devs []string
	mu   *sync.Mutex
	errs []string
}

func replayRaw(t *testing.T, tr *Trace, opts ReplayOptions) *rawClient {
	t.Helper()
	c := &rawClient{t: t, mu: &sync.Mutex{}}
	opts.OnDeviation = func(d Deviation) {
		c.mu.Lock()
		msg := d.Message
		if !d.Failure {
			msg = "(reported only) " + msg
		}
		c.devs = append(c.devs, msg)
		c.mu.Unlock()
	}
	opts.OnStderr = func(s string) {
		c.mu.Lock()
		c.errs = append(c.errs, s)
		c.mu.Unlock()
	}
	rp, err := NewReplayer(tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	c.conn, c.done = rp.ServePipe(ctx)
	t.Cleanup(func() { c.conn.Close() })
	return c
}

func (c *rawClient) send(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, transport.Frame{Data: []byte(s)}); err != nil {
		c.t.Fatalf("send %s: %v", s, err)
	}
}

func (c *rawClient) recv() string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := c.conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	return string(f.Data)
}

func (c *rawClient) expect(want ...string) {
	c.t.Helper()
	for _, w := range want {
		if got := c.recv(); got != w {
			c.t.Fatalf("got  %s\nwant %s", got, w)
		}
	}
}

// sync proves nothing else is queued: an unrecorded ping is answered
// after everything sent before it.
func (c *rawClient) sync() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":"sync","result":{}}`)
}

func (c *rawClient) deviations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.devs...)
}

func TestReplayAnswersByMethodAndParams(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		"! server starting",
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		"! working on a",
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"A"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`,
		`< {"result" : {"content":[]}, "id" : 2, "jsonrpc":"2.0"}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	// Out of order, with other ids and member order: still matched, and
	// answered with the recorded bytes under the live id.
	c.send(`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"b"}}`)
	c.expect(`{"result" : {"content":[]}, "id" : "two", "jsonrpc":"2.0"}`)
	c.send(`{"params":{"arguments":{"x":1},"name":"a","_meta":{"progressToken":99}},"method":"tools/call","id":7,"jsonrpc":"2.0"}`)
	c.expect(
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"A"}]}}`,
	)
	c.sync()
	if got := strings.Join(c.errs, "|"); got != "server starting|working on a" {
		t.Errorf("stderr lines %q", got)
	}
	if d := c.deviations(); len(d) != 0 {
		t.Errorf("deviations without --strict: %q", d)
	}
	c.conn.Close()
	if err := <-c.done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// A server that went away mid-request (a ServerEndedNote) is replayed as
// it behaved: the connection closes there, and the client does not wait
// for an answer that never came.
func TestReplayEndsWhereTheServerDid(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom"}}`,
		"! fatal: the widget exploded",
		`< {"jsonrpc":"2.0","id":`,
		"# "+ServerEndedNote+": server exited (exit status 3)",
	)
	for _, strict := range []bool{false, true} {
		ends := make(chan ServerEnd, 1)
		c := replayRaw(t, tr, ReplayOptions{Strict: strict, OnServerEnd: func(e ServerEnd) { ends <- e }})
		// What came before the end is answered as recorded.
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom"}}`)
		c.expect(`{"jsonrpc":"2.0","id":`)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		f, err := c.conn.Read(ctx)
		cancel()
		if !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("strict %v: after the recorded end: %q, %v; want the connection closed", strict, f.Data, err)
		}
		select {
		case err := <-c.done:
			if err != nil {
				t.Errorf("strict %v: Serve: %v", strict, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("strict %v: Serve did not end at the recorded end", strict)
		}
		if got := strings.Join(c.errs, "|"); got != "fatal: the widget exploded" {
			t.Errorf("strict %v: stderr lines %q", strict, got)
		}
		// How the recorded server ended, for a replay process to end so.
		if e := <-ends; e.Status != "exit status 3" || strings.Join(e.LastStderr, "|") != "fatal: the widget exploded" {
			t.Errorf("strict %v: OnServerEnd got %+v", strict, e)
		}
	}

	// An ordinary note changes nothing.
	tr = mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`,
		"# the server ended session X (HTTP 404); it must be initialized again",
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	c.sync()
}

// A stdio trace of an older mcpx notes neither the server's end nor the
// client's: a session whose client's last message is a request never
// answered (nor cancelled) ends where the server went away, so that the
// client does not wait for an answer until its timeout; a server that
// stayed silent while its client gave up is replayed silent.
func TestReplayEndsWhereAnOlderTraceEnds(t *testing.T) {
	t.Parallel()
	const (
		callA  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`
		answer = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
		boom   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom"}}`
		cancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`
	)
	older := func(transport string, tail ...string) *Trace {
		tr := mkTrace(append([]string{"> " + callA, "< " + answer, "> " + boom}, tail...)...)
		tr.Header.Transport = transport
		return tr
	}
	t.Run("crashed", func(t *testing.T) {
		t.Parallel()
		for _, tr := range []*Trace{
			older("stdio", "! fatal: the widget exploded", `< {"jsonrpc":"2.0","id":`),
			older("stdio"), // nothing came at all
		} {
			ends := make(chan ServerEnd, 1)
			c := replayRaw(t, tr, ReplayOptions{OnServerEnd: func(e ServerEnd) { ends <- e }})
			c.send(callA)
			c.expect(answer)
			c.send(boom)
			if len(tr.Events) > 3 {
				c.expect(`{"jsonrpc":"2.0","id":`)
			}
			ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
			f, err := c.conn.Read(ctx)
			stop()
			if !errors.Is(err, transport.ErrClosed) {
				t.Fatalf("after the end of the trace: %q, %v; want the connection closed", f.Data, err)
			}
			if e := <-ends; e.Status != "" || strings.Join(e.LastStderr, "|") != strings.Join(c.errs, "|") {
				t.Errorf("OnServerEnd got %+v (the trace does not say how it ended)", e)
			}
		}
	})
	t.Run("silent", func(t *testing.T) {
		t.Parallel()
		for what, tr := range map[string]*Trace{
			"cancelled":         older("stdio", "> "+cancel),
			"the client left":   older("stdio", "# "+ClientEndedNote+" with 1 request(s) unanswered (tools/call)"),
			"the host left":     older("stdio", "# the host closed its input; closed the server's stdin"),
			"the host is gone":  older("stdio", "# the host stopped reading (closed pipe); shut the server down"),
			"the proxy stopped": older("stdio", "# the proxy was stopped (interrupted); shut the server down"),
			"over HTTP":         older("http"),
			"cut short": func() *Trace { // the recorder killed: a later trace notes ends
				tr := older("stdio")
				tr.Header.Minor = minorNotesEnds
				return tr
			}(),
			"answered last": func() *Trace {
				tr := mkTrace("> "+boom, "> "+callA, "< "+answer)
				tr.Header.Transport = "stdio"
				return tr
			}(),
		} {
			c := replayRaw(t, tr, ReplayOptions{OnServerEnd: func(e ServerEnd) { t.Errorf("%s: OnServerEnd %+v", what, e) }})
			c.send(callA)
			c.expect(answer)
			c.send(boom)
			c.sync() // still served
			c.conn.Close()
		}
	})
}

func TestReplayRemapsProgressTokens(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":1}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":"r-7","method":"tools/call","params":{"name":"a","_meta":{"progressToken":"tok-7"}}}`)
	c.expect(
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-7","progress":1}}`,
		`{"jsonrpc":"2.0","id":"r-7","result":{}}`,
	)
}

// A live request with a token the recorded one lacked gets the recorded
// notifications unchanged.
func TestReplayProgressWithoutRecordedToken(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"A"}]}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"params":{"arguments":{"x":1},"name":"a","_meta":{"progressToken":99}},"method":"tools/call","id":7,"jsonrpc":"2.0"}`)
	c.expect(
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"A"}]}}`,
	)
	c.sync()
}

func TestReplayUnmatchedRequestSaysWhatItExpected(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"bye"}}}`)
	got := c.recv()
	for _, want := range []string{`"id":5`, `"code":-32602`, `no recorded tools/call request has these params`, `{\"name\":\"echo\",\"arguments\":{\"message\":\"hi\"}}`, `"expected":[{"name":"echo"`, `"received":{"name":"echo","arguments":{"message":"bye"}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %s:\n%s", want, got)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":6,"method":"prompts/list"}`)
	got = c.recv()
	for _, want := range []string{`"id":6`, `"code":-32601`, `the recording has no prompts/list request; the next recorded request is tools/call`} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %s:\n%s", want, got)
		}
	}
	if d := c.deviations(); len(d) != 2 {
		t.Errorf("deviations %q, want 2", d)
	}
	// Not JSON-RPC at all: a parse error.
	c.send(`garbage`)
	if got := c.recv(); !strings.Contains(got, `"id":null`) || !strings.Contains(got, `-32700`) {
		t.Errorf("garbage answered with %s", got)
	}
}

func TestReplayServerRequestAndIgnore(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{"at":"2026-01-01"}}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"got roots"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"0 roots"}]}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{Ignore: []string{"$.params.arguments.at"}})
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"roots","arguments":{"at":"2027-06-06"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
	c.send(`{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///x"}]}}`)
	c.expect(
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"got roots"}}`,
		`{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"0 roots"}]}}`,
	)
	// A response the replayed server never asked for is a deviation.
	c.send(`{"jsonrpc":"2.0","id":42,"result":{}}`)
	c.sync()
	if d := c.deviations(); len(d) != 1 || !strings.Contains(d[0], "response to request 42, which the replayed server never sent") {
		t.Errorf("deviations %q", d)
	}
}

// A task the live client creates for a recorded task-augmented server
// request has an id of the client's making: the recorded tasks/get and
// tasks/result about it are sent with the live id, and the client's
// answers naming it match the recorded ones (strictly).
func TestReplayRemapsClientTaskIDs(t *testing.T) {
	t.Parallel()
	task := func(id, status string) string {
		return `{"taskId":"` + id + `","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}`
	}
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"},"task":{"ttl":60000}}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"task":`+task("rec-7", "working")+`}}`,
		`< {"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"rec-7"}}`,
		`> {"jsonrpc":"2.0","id":1,"result":`+task("rec-7", "completed")+`}`,
		`< {"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"rec-7"}}`,
		`> {"jsonrpc":"2.0","id":2,"result":{"action":"decline","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"rec-7"}}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}`)
	c.expect(`{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"},"task":{"ttl":60000}}}`)
	c.send(`{"jsonrpc":"2.0","id":0,"result":{"task":` + task("live-9", "working") + `}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"live-9"}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"result":` + task("live-9", "completed") + `}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"live-9"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"result":{"action":"decline","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"live-9"}}}}`)
	c.expect(`{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`)
	c.conn.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if d := c.deviations(); len(d) != 0 {
		t.Errorf("deviations %q", d)
	}
}

// A server request the recorded client never answered (a host that went
// away first, as the Inspector CLI does after its one command) that the
// live client answers is reported as such, not as an answer to a request
// the replayed server never sent: it did send it.
func TestReplayAnswerTheRecordingLacks(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	c.expect(`{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`, `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
	c.send(`{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`)
	c.sync()
	d := c.deviations()
	if len(d) != 1 || !strings.Contains(d[0], "a response to request 0 (roots/list), which the recorded client never answered (ignored)") {
		t.Errorf("deviations %q", d)
	}
}

func TestReplayRepeatedRequest(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	for _, id := range []string{"1", "2", "3"} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
		c.expect(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[]}}`)
	}
	if d := c.deviations(); len(d) != 0 {
		t.Errorf("deviations %q", d)
	}
}

func TestReplayInitializeWithOtherParams(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpx","version":"0.1.0"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	)
	// Any conforming client is served; strict mode reports the
	// difference, and goes on.
	for _, strict := range []bool{false, true} {
		c := replayRaw(t, tr, ReplayOptions{Strict: strict})
		c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"ide","version":"9"}}}`)
		c.expect(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		c.conn.Close()
		if err := <-c.done; err != nil {
			t.Errorf("strict %v: Serve = %v", strict, err)
		}
		d := c.deviations()
		if strict && (len(d) != 1 || !strings.HasPrefix(d[0], "(reported only) initialize params differ from the recording")) || !strict && len(d) != 0 {
			t.Errorf("strict %v: deviations %q", strict, d)
		}
	}
}

func TestReplayStrict(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"a"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"b"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	t.Run("order", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":2,"method":"b"}`)
		c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`) // answered first, then the replay ends
		err := <-c.done
		var de *DeviationError
		if !errors.As(err, &de) || !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "expected request a next, got request b") {
			t.Fatalf("Serve = %v", err)
		}
	})
	t.Run("unsent", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"a"}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		c.conn.Close()
		err := <-c.done
		if err == nil || !strings.Contains(err.Error(), "the client ended the session without sending 1 recorded message(s), first request b") {
			t.Fatalf("Serve = %v", err)
		}
	})
	t.Run("repeat", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"a"}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		c.send(`{"jsonrpc":"2.0","id":3,"method":"a"}`)
		c.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
		if err := <-c.done; err == nil || !strings.Contains(err.Error(), "was sent again") {
			t.Fatalf("Serve = %v", err)
		}
	})
	t.Run("exact", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"a"}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"b"}`)
		c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
		c.conn.Close()
		if err := <-c.done; err != nil {
			t.Fatalf("Serve = %v", err)
		}
	})
}

func TestReplayRedactedTraceMatchesLiveSecrets(t *testing.T) {
	t.Parallel()
	// The trace was recorded with redaction: the live client sends the
	// real value, which replay redacts the same way before matching.
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"login","params":{"user":"ada","password":"[redacted]","pin":"[redacted]"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"ok":true}}`,
	)
	tr.Header.Redact = []string{"$.params.pin"}
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"login","params":{"user":"ada","password":"hunter2","pin":1234}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
}

// A request the server sent after the recorded client had left (the
// stdio proxy forwards what the server says after the host closed its
// input) could not be answered by it: a live client that answers it,
// the replay having sent it earlier, departs from nothing, even in
// strict mode.
func TestReplayStrictTakesAnAnswerTheLeftClientCouldNotGive(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		"# the host closed its input; closed the server's stdin",
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
	)
	tr.Header.Transport = "stdio"
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}`)
	c.expect(`{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
	c.send(`{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`)
	c.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo"}}`)
	c.expect(`{"jsonrpc":"2.0","id":"b","result":{"content":[]}}`)
	for _, d := range c.deviations() {
		if !strings.HasPrefix(d, "(reported only) ") {
			t.Errorf("a departure: %s", d)
		}
	}
}

// An MCP Apps host that opens a view whose resources/read content
// declares no _meta.ui looks for the declaration in the view's
// resources/list entry (the ext-apps SDK's fallback). A trace of a host
// that did not (mcpx before it followed that rule) has no listing: the
// replay answers it with an error, not -32601, and strict mode reports it
// without failing. A listing no such read explains is a departure still.
func TestReplayViewListing(t *testing.T) {
	t.Parallel()
	view := func(meta string) *Trace {
		return mkTrace(
			`> {"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ui://s/view"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"ui://s/view","mimeType":"text/html;profile=mcp-app","text":"<p>v</p>"`+meta+`}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		)
	}
	const (
		read    = `{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"ui://s/view"}}`
		list    = `{"jsonrpc":"2.0","id":"l","method":"resources/list"}`
		call    = `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo"}}`
		refused = `{"jsonrpc":"2.0","id":"l","error":{"code":-32603,"message":"mcpx replay: the recording has no resources/list request (the recorded client did not list the resources)"}}`
	)
	t.Run("undeclared view", func(t *testing.T) {
		c := replayRaw(t, view(""), ReplayOptions{Strict: true})
		c.send(read)
		c.recv()
		c.send(list)
		c.expect(refused)
		c.send(call)
		c.expect(`{"jsonrpc":"2.0","id":"c","result":{"content":[]}}`)
		c.conn.Close()
		if err := <-c.done; err != nil {
			t.Fatalf("Serve = %v", err)
		}
		if d := c.deviations(); len(d) != 1 || !strings.HasPrefix(d[0], "(reported only) request resources/list is not in the recording: an MCP Apps host") {
			t.Errorf("deviations %q", d)
		}
	})
	t.Run("undeclared view, not strict", func(t *testing.T) {
		c := replayRaw(t, view(""), ReplayOptions{})
		c.send(read)
		c.recv()
		c.send(list)
		c.expect(refused)
		c.sync()
		if d := c.deviations(); len(d) != 0 {
			t.Errorf("deviations %q", d)
		}
	})
	departs := func(t *testing.T, c *rawClient) {
		t.Helper()
		c.send(list)
		if got := c.recv(); !strings.Contains(got, `"code":-32601`) {
			t.Errorf("answered %s", got)
		}
		if err := <-c.done; err == nil || !strings.Contains(err.Error(), "the recording has no resources/list request") {
			t.Fatalf("Serve = %v", err)
		}
	}
	t.Run("declared view", func(t *testing.T) {
		c := replayRaw(t, view(`,"_meta":{"ui":{}}`), ReplayOptions{Strict: true})
		c.send(read)
		c.recv()
		departs(t, c)
	})
	t.Run("no view read", func(t *testing.T) {
		departs(t, replayRaw(t, view(""), ReplayOptions{Strict: true}))
	})
	t.Run("next page", func(t *testing.T) {
		c := replayRaw(t, view(""), ReplayOptions{Strict: true})
		c.send(read)
		c.recv()
		c.send(`{"jsonrpc":"2.0","id":"l","method":"resources/list","params":{"cursor":"2"}}`)
		c.recv()
		if err := <-c.done; err == nil || !strings.Contains(err.Error(), "the recording has no resources/list request") {
			t.Fatalf("Serve = %v", err)
		}
	})
}

// The notifications of a subscriptions/listen stream, and its result,
// carry the subscription id, which is the listen request's id (spec
// 2026-07-28: basic/patterns/subscriptions): replayed, it is the live
// client's request id, as a response's id is, or the client could not
// tell them for its own.
func TestReplaySubscriptionID(t *testing.T) {
	t.Parallel()
	const meta = modernMeta
	tr := listenTrace()
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true}}}`)
	// The listen's answer is its own to replay (no client message came
	// after it in its chain); the list_changed came during tools/list.
	c.expect(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`)
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{` + meta + `}}`)
	c.expect(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`,
		`{"jsonrpc":"2.0","id":8,"result":{"tools":[]}}`)
	c.conn.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// A strict replay compares the client's answers to the server's requests,
// but not how far the client's own task had come when a tasks/get asked
// (working now, completed in the recording: a matter of time); what the
// task comes to is compared in the answer to tasks/result.
func TestReplayStrictTakesATaskStatusAsTime(t *testing.T) {
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"tasks/get","params":{"taskId":"t1"}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"taskId":"t1","status":"completed","ttl":60000}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	for _, tc := range []struct {
		answer string
		want   string // a deviation, "" for none
	}{
		{`{"taskId":"t1","status":"working","ttl":60000}`, ""},
		{`{"taskId":"t1","status":"working","statusMessage":"asking","ttl":60000}`, ""},
		{`{"taskId":"t1","status":"completed","ttl":1}`, "the client answered request 0"},
	} {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		c.recv()
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}`)
		if got := c.recv(); !strings.Contains(got, `"tasks/get"`) {
			t.Fatalf("expected tasks/get, got %s", got)
		}
		c.send(`{"jsonrpc":"2.0","id":0,"result":` + tc.answer + `}`)
		c.expect(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
		d := strings.Join(c.deviations(), "\n")
		if tc.want == "" && d != "" || tc.want != "" && !strings.Contains(d, tc.want) {
			t.Errorf("answer %s: deviations %q, want %q", tc.answer, d, tc.want)
		}
	}
}

// modernMeta is the _meta member of a 2026-07-28 request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// listenTrace is a 2026-07-28 session with a subscription: acknowledged,
// a list change on it while a later tools/list is pending, then both
// answered.
func listenTrace() *Trace {
	return mkTrace(
		`> {"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{`+modernMeta+`,"notifications":{"toolsListChanged":true}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen:0"},"notifications":{"toolsListChanged":true}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen:0"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`< {"jsonrpc":"2.0","id":"listen:0","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen:0"}}}`,
	)
}
