package record

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// Two requests in flight at once (c2s 2, c2s 3, s2c 2, s2c 3): each is
// answered when it comes, alone or in the other order, under the live id
// (defect 1).
func TestReplayPipelinedRequests(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"p2"}}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":"p3"}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p3","progress":1}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p2","progress":1}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"text":"A"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"between"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"text":"B"}}`,
	)
	t.Run("one at a time", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"x"}}}`)
		c.expect(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`,
			`{"jsonrpc":"2.0","id":20,"result":{"text":"A"}}`,
		)
		c.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":"y"}}}`)
		c.expect(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"y","progress":1}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"between"}}`,
			`{"jsonrpc":"2.0","id":30,"result":{"text":"B"}}`,
		)
		c.conn.Close()
		if err := <-c.done; err != nil {
			t.Errorf("strict: %v", err)
		}
	})
	t.Run("other order", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":"B","method":"tools/call","params":{"name":"b"}}`)
		c.expect(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p3","progress":1}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"between"}}`,
			`{"jsonrpc":"2.0","id":"B","result":{"text":"B"}}`,
		)
		c.send(`{"jsonrpc":"2.0","id":"A","method":"tools/call","params":{"name":"a"}}`)
		c.expect(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p2","progress":1}}`,
			`{"jsonrpc":"2.0","id":"A","result":{"text":"A"}}`,
		)
		c.conn.Close()
		if err := <-c.done; err != nil {
			t.Errorf("requests that were in flight together came in another order: %v", err)
		}
	})
}

// A trace of several sessions: each connection is served one, the second
// initialize is answered on its own connection (defect 2), and a client
// whose requests only a later session holds is served that one.
func TestReplaySessions(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"2"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	for i := 5; i < len(tr.Events); i++ {
		tr.Events[i].Session = 2
	}
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	session := func(first, second, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, done := rp.ServePipe(ctx)
		c := &rawClient{t: t, conn: conn}
		c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		if got := c.recv(); !strings.Contains(got, first) {
			t.Errorf("initialize answered %s, want %s", got, first)
		}
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		c.send(second)
		c.expect(want)
		conn.Close()
		if err := <-done; err != nil {
			t.Errorf("strict: %v", err)
		}
	}
	session(`"version":"1"`, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`)
	session(`"version":"2"`, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
	// Both served: the one that holds the request is chosen.
	session(`"version":"1"`, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x"}}`, `{"jsonrpc":"2.0","id":8,"result":{"content":[]}}`)

	// --session pins one.
	pinned, err := NewReplayer(tr, ReplayOptions{Session: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _ := pinned.ServePipe(ctx)
	c := &rawClient{t: t, conn: conn}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if got := c.recv(); !strings.Contains(got, `"version":"2"`) {
		t.Errorf("pinned session 2 answered %s", got)
	}
	conn.Close()
	if _, err := NewReplayer(tr, ReplayOptions{Session: 3}); err == nil {
		t.Error("a session the trace lacks was accepted")
	}
}

// Absent params are the same as {} (defect 5): the go-sdk client's
// resources/list against an mcpx recording, and notifications/initialized
// in strict mode.
func TestReplayAbsentParamsAreEmpty(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"prompts":[]}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	c.send(`{"jsonrpc":"2.0","id":"r","method":"resources/list","params":{"_meta":{"progressToken":5}}}`)
	c.expect(`{"jsonrpc":"2.0","id":"r","result":{"resources":[]}}`)
	c.send(`{"jsonrpc":"2.0","id":"p","method":"prompts/list"}`)
	c.expect(`{"jsonrpc":"2.0","id":"p","result":{"prompts":[]}}`)
	c.conn.Close()
	if err := <-c.done; err != nil {
		t.Errorf("strict: %v", err)
	}
	if d := c.deviations(); len(d) != 0 {
		t.Errorf("deviations %q", d)
	}
}

// The header's ignores (scoped to a method) and normalizers apply to
// replay's matching.
func TestReplayHeaderIgnoreAndNormalize(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"at":"2026-01-01T00:00:00Z","n":1}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{"req":"123e4567-e89b-12d3-a456-426614174000"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"b":true}}`,
	)
	tr.Header.Ignore = []string{"tools/call:$.params.arguments.n", "prompts/get:$.params.name"}
	tr.Header.Normalize = []Normalizer{{Builtin: BuiltinTimestamp}, {Builtin: BuiltinUUID}}
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"at":"2027-05-05T10:10:10.5Z","n":9}}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{"req":"00000000-0000-4000-8000-000000000000"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{"b":true}}`)
	c.conn.Close()
	if err := <-c.done; err != nil {
		t.Errorf("strict: %v", err)
	}

	// The normalizers of the options apply in addition to the header's.
	tr.Header.Normalize = []Normalizer{{Builtin: BuiltinTimestamp}}
	c = replayRaw(t, tr, ReplayOptions{Strict: true, Normalize: []Normalizer{{Builtin: BuiltinUUID}}})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"at":"2027-05-05T10:10:10.5Z","n":9}}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{"req":"00000000-0000-4000-8000-000000000000"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{"b":true}}`)
	c.conn.Close()
	if err := <-c.done; err != nil {
		t.Errorf("strict, with ReplayOptions.Normalize: %v", err)
	}
}

// httpTrace builds a handshake-era trace recorded over HTTP: lines as for
// mkTrace, "~ {json}" an http event (its meta and re given as JSON).
func httpTrace(t *testing.T, lines ...string) *Trace {
	t.Helper()
	tr := &Trace{Header: Header{Format: Format, Version: Version, Minor: Minor, Redacted: true, Transport: "http"}}
	for i, l := range lines {
		e := Event{Time: time.Duration(i) * time.Millisecond, Kind: KindFrame, Data: []byte(l[2:])}
		switch l[:2] {
		case "> ":
			e.Dir = ClientToServer
			e.Meta = &transport.Meta{HTTPMethod: "POST"}
		case "< ":
			e.Dir = ServerToClient
			e.Meta = &transport.Meta{HTTPMethod: "POST", HTTPStatus: 200, ContentType: "application/json"}
		case "g ":
			e.Dir = ServerToClient
			e.Meta = &transport.Meta{HTTPMethod: "GET", HTTPStatus: 200, ContentType: "text/event-stream", StreamID: "get-1"}
		case "~ ":
			var w struct {
				Text string          `json:"text"`
				Meta *transport.Meta `json:"meta"`
				Re   json.RawMessage `json:"re"`
			}
			if err := json.Unmarshal([]byte(l[2:]), &w); err != nil {
				t.Fatal(err)
			}
			e = Event{Time: e.Time, Kind: KindHTTP, Text: w.Text, Meta: w.Meta, Re: w.Re}
		}
		tr.Events = append(tr.Events, e)
	}
	return tr
}

var handshake = []string{
	`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
}

func postJSON(t *testing.T, url, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// HTTP outcomes replay as recorded (defect 6): what the server sent on
// its GET stream comes on the GET stream; a recorded refusal without a
// JSON-RPC body is answered with its status and text.
func TestReplayHTTPOutcomes(t *testing.T) {
	t.Parallel()
	tr := httpTrace(t, append(append([]string(nil), handshake...),
		`g {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}`,
		`~ {"text":"Bad Request: body too big","meta":{"httpMethod":"POST","httpStatus":400,"contentType":"text/plain"},"re":1}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	)...)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	resp := postJSON(t, srv.URL, "", handshake[0][2:])
	sid := resp.Header.Get("Mcp-Session-Id")
	if body := readAll(t, resp); !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize: %s", body)
	}
	resp = postJSON(t, srv.URL, sid, handshake[2][2:])
	readAll(t, resp)
	// The GET stream gets the notification.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	line, err := readDataLine(bufio.NewReader(get.Body))
	if err != nil || !strings.Contains(line, "notifications/tools/list_changed") {
		t.Errorf("GET stream: %q, %v", line, err)
	}
	// The refusal, as recorded.
	resp = postJSON(t, srv.URL, sid, `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"big"}}`)
	if body := readAll(t, resp); resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || body != "Bad Request: body too big" {
		t.Errorf("refusal: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp = postJSON(t, srv.URL, sid, `{"jsonrpc":"2.0","id":"y","method":"tools/list"}`)
	if body := readAll(t, resp); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":"y","result":{"tools":[]}}` {
		t.Errorf("tools/list: %d %q", resp.StatusCode, body)
	}
}

func readDataLine(r *bufio.Reader) (string, error) {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(line, "data: ") {
			return strings.TrimSpace(line[len("data: "):]), nil
		}
	}
}

// A JSON-RPC error that came in a 4xx body in the 2026-07-28 era is
// replayed with its status and body (defect 6), also from a trace whose
// http event came before the frame.
func TestReplayModernErrorStatus(t *testing.T) {
	t.Parallel()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	tr := httpTrace(t,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",`+meta+`}}`,
		`~ {"text":"404 Not Found application/json ← POST http://x/mcp","meta":{"httpMethod":"POST","httpStatus":404,"contentType":"application/json"}}`,
		`< {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no tool nope"}}`,
	)
	tr.Events[2].Meta.HTTPStatus = 404
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope",`+meta+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "nope")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 404 || body != `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"no tool nope"}}` {
		t.Errorf("answer: %d %s", resp.StatusCode, body)
	}
}

// replay --listen serves a legacy HTTP+SSE client (defect 6): GET opens the
// stream with its endpoint event, POSTs are accepted and answered on it.
func TestReplayLegacySSE(t *testing.T) {
	t.Parallel()
	tr := mkTrace(append(append([]string(nil), handshake...),
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	)...)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	endpoint, err := readDataLine(r)
	if resp.StatusCode != 200 || err != nil || !strings.HasPrefix(endpoint, "/sse?sessionId=") {
		t.Fatalf("GET /sse: %d, endpoint %q, %v", resp.StatusCode, endpoint, err)
	}
	for _, x := range []struct{ send, want string }{
		{strings.Replace(handshake[0][2:], `"id":0`, `"id":5`, 1), `"id":5,"result":{"protocolVersion"`},
		{handshake[2][2:], ""},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":6,"result":{"tools":[]}}`},
	} {
		p := postJSON(t, srv.URL+endpoint, "", x.send)
		if readAll(t, p); p.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %d", x.send, p.StatusCode)
		}
		if x.want == "" {
			continue
		}
		if line, err := readDataLine(r); err != nil || !strings.Contains(line, x.want) {
			t.Fatalf("stream: %q, %v; want %s", line, err, x.want)
		}
	}
}

// A request no session of the trace holds is answered by a session that
// has requests of its method, so that the error says what the trace holds
// (the params it was recorded with), rather than by the session served so
// far, which has none of the method and said "the recording has no
// tools/call request" of a trace that has one.
func TestReplayUnmatchedAcrossSessionsSaysWhatTheTraceHas(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"2"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
	)
	for i := 4; i < len(tr.Events); i++ {
		tr.Events[i].Session = 2
	}
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"bye"}}}`)
	got := c.recv()
	for _, want := range []string{`"id":5`, `"code":-32602`, `no recorded tools/call request has these params`, `{\"name\":\"echo\",\"arguments\":{\"message\":\"hi\"}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %s:\n%s", want, got)
		}
	}
	// What the session chosen holds is still answered.
	c.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":6,"result":{"content":[]}}`)
}

// What the recorded server sent while no request was in flight (here a
// timer's resource update) comes after every message the recorded client
// had sent by then, not only the latest: a live client that answers the
// server's roots/list at once, where the recorded one answered after
// subscribing, gets the update after its subscription, as recorded, not
// before it (server-everything's toggle-subscriber-updates, recorded with
// the go-sdk client).
func TestReplayUnsolicitedAfterWhatPrecededIt(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"toggle-subscriber-updates"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"demo://a"}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"roots updated"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://a"}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"tools":[]}}`,
	)
	unprompted := []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"roots updated"}}`,
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://a"}}`,
	}
	for _, early := range []bool{true, false} {
		name := "answer as recorded"
		if early {
			name = "answer at once"
		}
		t.Run(name, func(t *testing.T) {
			// (Strictly, an answer sent before the subscription's is out of
			// causal order.)
			c := replayRaw(t, tr, ReplayOptions{Strict: !early})
			c.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"toggle-subscriber-updates"}}`)
			c.expect(`{"jsonrpc":"2.0","id":30,"result":{"content":[]}}`, `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
			if early {
				c.send(`{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`)
				c.sync() // nothing comes before the subscription
			}
			c.send(`{"jsonrpc":"2.0","id":40,"method":"resources/subscribe","params":{"uri":"demo://a"}}`)
			c.expect(`{"jsonrpc":"2.0","id":40,"result":{}}`)
			if early {
				c.expect(unprompted...)
			} else {
				c.send(`{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`)
				c.expect(unprompted...)
			}
			c.send(`{"jsonrpc":"2.0","id":50,"method":"tools/list"}`)
			c.expect(`{"jsonrpc":"2.0","id":50,"result":{"tools":[]}}`)
			c.conn.Close()
			if err := <-c.done; err != nil {
				t.Errorf("strict: %v", err)
			}
		})
	}
}

// Two clients that connect at once to a replay of a trace of two sessions
// whose clients sent the same requests are served one session each, as
// they are one after the other: the second connection does not rank the
// first one's session as free because it was not chosen yet (the
// recorded counter answers 1, then 2).
func TestReplaySessionsConnectedAtOnce(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"n":1}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"n":2}}`,
	)
	for i := 2; i < len(tr.Events); i++ {
		tr.Events[i].Session = 2
	}
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	// Both connections are made before either is served its session.
	a, b := rp.newConn(""), rp.newConn("")
	var got []string
	for _, c := range []*replayConn{a, b} {
		if _, err := c.start(); err != nil {
			t.Fatal(err)
		}
		outs, err := c.handle([]byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"count"}}`))
		if err != nil || len(outs) != 1 {
			t.Fatalf("answered %v, %v", outs, err)
		}
		got = append(got, string(outs[0].frame))
	}
	if want := []string{`{"jsonrpc":"2.0","id":5,"result":{"n":1}}`, `{"jsonrpc":"2.0","id":5,"result":{"n":2}}`}; !slices.Equal(got, want) {
		t.Errorf("answered %q, want %q", got, want)
	}
}

// A batch the recorded server answered a batch with (JSON-RPC batches,
// MCP 2025-03-26) is replayed as the answers of its requests: the same
// batch sent again gets one batch, in the recorded order, after what came
// before it; the requests sent one at a time, in another order, each get
// their own answer under their live id, and what the server sent after
// the batch comes once both were sent.
func TestReplayBatchAnswer(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> [{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}]`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"working"}}`,
		`< [{"jsonrpc":"2.0","id":3,"result":{"b":1}},{"jsonrpc":"2.0","id":2,"result":{"a":1}}]`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"after"}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"tools":[]}}`,
	)
	working := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"working"}}`
	after := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"after"}}`
	end := func(c *rawClient) {
		c.send(`{"jsonrpc":"2.0","id":40,"method":"tools/list"}`)
		c.expect(`{"jsonrpc":"2.0","id":40,"result":{"tools":[]}}`)
		if d := c.deviations(); len(d) > 0 {
			t.Errorf("deviations %q", d)
		}
	}
	t.Run("the same batch", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`[{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"b"}}]`)
		c.expect(working, `[{"jsonrpc":"2.0","id":30,"result":{"b":1}},{"jsonrpc":"2.0","id":20,"result":{"a":1}}]`, after)
		end(c)
	})
	t.Run("one at a time", func(t *testing.T) {
		c := replayRaw(t, tr, ReplayOptions{})
		c.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"b"}}`)
		c.expect(working, `{"jsonrpc":"2.0","id":30,"result":{"b":1}}`)
		c.send(`{"jsonrpc":"2.0","method":"notifications/x"}`)
		c.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"a"}}`)
		c.expect(`{"jsonrpc":"2.0","id":20,"result":{"a":1}}`, after)
		end(c)
	})
}
