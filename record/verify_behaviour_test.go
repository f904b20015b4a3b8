package record

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// behaviourCalls exercise what the regressions of newTestServer's
// variants change: the tools' names, progress, a log message, the echo.
// The log level rides in the request's _meta (the 2026-07-28 way; a
// handshake-era session sets it with logging/setLevel first).
var behaviourCalls = []call{
	{method: "tools/list", params: `{}`},
	{method: "tools/call", params: `{"name":"progress","arguments":{"steps":5}}`, progress: true},
	{method: "tools/call", params: `{"name":"log","arguments":{"message":"hello"},"_meta":{"io.modelcontextprotocol/logLevel":"debug"}}`},
	{method: "tools/call", params: `{"name":"echo","arguments":{"message":"hi"}}`},
}

// exchangeOf returns the number, in session 1 of tr, of the first request
// of method whose params name name (0: none).
func exchangeOf(tr *Trace, method, name string) int {
	n := 0
	for _, e := range tr.Sessions()[0].Frames() {
		if e.Dir != ClientToServer {
			continue
		}
		msgs, _ := parseFrame(e.Data)
		for _, m := range msgs {
			if !m.IsRequest() {
				continue
			}
			n++
			var p struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if m.Method == method && p.Name == name {
				return n
			}
		}
	}
	return 0
}

// A server that drops progress notifications, renames one tool or changes
// a log message fails verify with exactly one difference each, named by
// session, exchange and JSONPath; a server whose only change is a session
// id in its text passes once a normalizer is stored in the trace (issue
// 14's acceptance, defects 3 and 10), in both protocol eras, over stdio,
// Streamable HTTP and HTTP+SSE.
func TestVerifyFindsEachRegressionOnce(t *testing.T) {
	t.Parallel()
	type server func(t *testing.T, variant string) func(transport.Observer) transport.Conn
	stdio := func(t *testing.T, variant string) func(transport.Observer) transport.Conn {
		return stdioDialer(t, helper("sdk", "RECORD_TEST_VARIANT="+variant))
	}
	streamable := func(t *testing.T, variant string) func(transport.Observer) transport.Conn {
		return httpDialer(t, testservers.Streamable(t, newTestServer(variant), nil, nil))
	}
	stateless := func(t *testing.T, variant string) func(transport.Observer) transport.Conn {
		return httpDialer(t, testservers.Modern(t, newTestServer(variant)))
	}
	sse := func(t *testing.T, variant string) func(transport.Observer) transport.Conn {
		return httpDialer(t, testservers.SSE(t, newTestServer(variant), nil))
	}
	handshake := &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "record-test", Version: "1.0"}}
	for _, tc := range []struct {
		name      string
		transport string
		server    server
		life      inspector.Lifecycle
	}{
		{"stdio/handshake", "stdio", stdio, handshake},
		{"stdio/2026-07-28", "stdio", stdio, modernLife()},
		{"streamable/handshake", "http", streamable, handshake},
		{"streamable/2026-07-28", "http", stateless, modernLife()},
		{"sse/handshake", "http", sse, handshake},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := behaviourCalls
			if _, legacy := tc.life.(*inspector.Legacy); legacy {
				calls = append([]call{{method: "logging/setLevel", params: `{"level":"debug"}`}}, calls...)
			}
			tr, _ := recordSessionWith(t, tc.server(t, ""), tc.transport, calls, tc.life, RedactOptions{})
			verify := func(variant string) *VerifyResult {
				t.Helper()
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				res, err := Verify(ctx, tr, tc.server(t, variant)(nil), VerifyOptions{})
				if err != nil {
					t.Fatalf("verify against %q: %v", variant, err)
				}
				return res
			}
			if res := verify(""); !res.OK() {
				t.Fatalf("against the same server: %s", reportOf(res))
			}
			for _, want := range []struct {
				variant, method, name string
				diff                  Difference
			}{
				{"fewer-progress", "tools/call", "progress", Difference{Message: "notifications/progress", Path: "$"}},
				{"renamed", "tools/list", "", Difference{Path: `$.result.tools[?@.name=="add"].name`, Recorded: `"add"`, Live: `"sum"`}},
				{"log-text", "tools/call", "log", Difference{Message: "notifications/message #1", Path: "$.params.data", Recorded: `"hello"`, Live: `"log: hello"`}},
			} {
				res := verify(want.variant)
				if len(res.Mismatches) != 1 || len(res.Mismatches[0].Diffs) != 1 {
					t.Errorf("%s: want exactly one difference:\n%s", want.variant, reportOf(res))
					continue
				}
				m := res.Mismatches[0]
				d := m.Diffs[0]
				if want.diff.Recorded == "" {
					// A list of notifications: compared whole.
					d.Recorded, d.Live = "", ""
				}
				if m.Session != 1 || m.Exchange != exchangeOf(tr, want.method, want.name) || m.Method != want.method || d != want.diff {
					t.Errorf("%s: session %d, exchange %d (want %d) %s: %+v", want.variant, m.Session, m.Exchange,
						exchangeOf(tr, want.method, want.name), m.Method, d)
				}
			}

			// A session id in the text, new every run.
			tr, _ = recordSessionWith(t, tc.server(t, "session-text"), tc.transport, calls, tc.life, RedactOptions{})
			res := verify("session-text")
			if len(res.Mismatches) != 1 || res.Mismatches[0].Exchange != exchangeOf(tr, "tools/call", "echo") ||
				res.Mismatches[0].Diffs[0].Path != "$.result.content[0].text" {
				t.Errorf("session-text without a normalizer: %s", reportOf(res))
			}
			tr.Header.Normalize = []Normalizer{{Builtin: BuiltinUUID}}
			if res := verify("session-text"); !res.OK() {
				t.Errorf("session-text with the header's normalizer: %s", reportOf(res))
			}
		})
	}
}

// A server that puts its Mcp-Session-Id in a result's text differs on
// every run over HTTP; the session-id normalizer, stored in the trace,
// replaces the session ids the recording and the live session saw
// (defect 10).
func TestVerifySessionIDNormalizer(t *testing.T) {
	t.Parallel()
	u := testservers.Streamable(t, newTestServer(""), nil, nil)
	tr, res := recordSession(t, httpDialer(t, u), "http", []call{{method: "tools/call", params: `{"name":"whoami","arguments":{}}`}})
	if !strings.Contains(res.results[1], "you are session ") || strings.HasSuffix(res.results[1], `session "}]}`) {
		t.Fatalf("whoami: %s", res.results[1])
	}
	v := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{})
	if len(v.Mismatches) != 1 || v.Mismatches[0].Diffs[0].Path != "$.result.content[0].text" {
		t.Fatalf("without a normalizer: %s", reportOf(v))
	}
	tr.Header.Normalize = []Normalizer{{Builtin: BuiltinSessionID}}
	if v := verifyAgainst(t, tr, newHTTPConn(t, u), VerifyOptions{}); !v.OK() {
		t.Fatalf("with the session-id normalizer: %s", reportOf(v))
	}
}

// A server that answered a request twice is a behaviour verify compares:
// recorded twice and answered once live, recorded once and answered twice
// live, both are differences at that exchange; twice and twice, with the
// same answers, is a match, and a second answer that differs is reported.
func TestVerifyResponseSentAgain(t *testing.T) {
	t.Parallel()
	head := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	}
	tail := []string{
		`> {"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":3,"result":{}}`,
	}
	once := mkTrace(append(slices.Clone(head), tail...)...)
	twice := mkTrace(append(append(slices.Clone(head), `< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`), tail...)...)
	// server answers tools/list with each of answers, one frame each.
	server := func(answers ...string) transport.Conn {
		return pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
			switch m.Method {
			case "initialize":
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`), nil)})
			case "tools/list":
				for _, a := range answers {
					server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(a), nil)})
				}
			case "ping":
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{}`), nil)})
			}
		})
	}
	for _, c := range []struct {
		name    string
		tr      *Trace
		answers []string
		problem string
	}{
		{"recorded once, once", once, []string{`{"tools":[]}`}, ""},
		{"recorded twice, twice", twice, []string{`{"tools":[]}`, `{"tools":[]}`}, ""},
		{"recorded twice, once", twice, []string{`{"tools":[]}`}, "answered 1 time(s), the recording has 2"},
		// (The live repetition may come after verify compared the
		// exchange: it is then one of the server's messages outside any
		// request.)
		{"recorded once, twice", once, []string{`{"tools":[]}`, `{"tools":[]}`}, "answered 2 time(s), the recording has 1|the server's messages differ: 1 response, the recording has 0"},
		{"recorded twice, another second answer", twice, []string{`{"tools":[]}`, `{"tools":[{"name":"x"}]}`}, "the response it sent again differs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runVerify(t, c.tr, server(c.answers...), VerifyOptions{Timeout: 500 * time.Millisecond})
			switch {
			case c.problem == "" && !res.OK():
				t.Errorf("mismatches: %s", reportOf(res))
			case c.problem != "" && (len(res.Mismatches) != 1 || !slices.Contains(strings.Split(c.problem, "|"), res.Mismatches[0].Problem)):
				t.Errorf("want one mismatch, %q; got %s", c.problem, reportOf(res))
			}
		})
	}
}

// A progress notification the recorded server sent after its response
// (racing it) belongs to the request still: verify waits (up to the
// timeout) for the live server's before it compares the exchange, rather
// than comparing at once and finding the live one outside any request.
func TestVerifyWaitsForProgressAfterTheResponse(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":3,"result":{}}`,
	)
	// server sends the second progress notification late after the
	// response (never, when late is negative).
	server := func(late time.Duration) transport.Conn {
		return pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
			switch m.Method {
			case "initialize":
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`), nil)})
			case "tools/call":
				tok := json.RawMessage(`"p"`)
				if p := progressToken(m.Raw); p != nil {
					tok = p
				}
				progress := func(n int) transport.Frame {
					return transport.Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(tok) + `,"progress":` + strconv.Itoa(n) + `}}`)}
				}
				server.Write(ctx, progress(1))
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{"content":[]}`), nil)})
				if late >= 0 {
					time.AfterFunc(late, func() { server.Write(ctx, progress(2)) })
				}
			case "ping":
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{}`), nil)})
			}
		})
	}
	if res := runVerify(t, tr, server(100*time.Millisecond), VerifyOptions{Timeout: 5 * time.Second}); !res.OK() {
		t.Errorf("a server that sends it 100ms after the response: %s", reportOf(res))
	}
	res := runVerify(t, tr, server(-1), VerifyOptions{Timeout: 300 * time.Millisecond})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Exchange != 2 ||
		!strings.Contains(res.Mismatches[0].Problem, "1 notifications/progress, the recording has 2") {
		t.Errorf("a server that never sends it: %s", reportOf(res))
	}
}

// A server's pagination cursors are opaque tokens (spec 2025-11-25:
// server/utilities/pagination), often made anew for each session: verify
// asks for the next page with the cursor the live server gave, not the
// recorded one, and the two compare equal; the pages themselves are
// compared, and a live server with one page fewer is reported.
func TestVerifyFollowsTheLiveCursors(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}],"nextCursor":"rec-1"}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"rec-1"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b"}],"nextCursor":"rec-2"}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"rec-2"}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"c"}]}}`,
	)
	// server pages tools a, b, c (a and b, when short), with cursors of
	// this session's (prefix), and refuses any other.
	server := func(prefix string, short bool) transport.Conn {
		names := []string{"a", "b", "c"}
		if short {
			names = names[:2]
		}
		return pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
			switch m.Method {
			case "initialize":
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`), nil)})
			case "tools/list":
				page := 0
				if c := rawjson.Member(m.Params, "cursor"); c != nil {
					s, _ := rawjson.String(c)
					n, err := strconv.Atoi(strings.TrimPrefix(s, prefix))
					if !strings.HasPrefix(s, prefix) || err != nil {
						server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"})})
						return
					}
					page = n
				}
				result := `{"tools":[{"name":"` + names[page] + `"}]`
				if page+1 < len(names) {
					result += `,"nextCursor":"` + prefix + strconv.Itoa(page+1) + `"`
				}
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(result+"}"), nil)})
			}
		})
	}
	if res := runVerify(t, tr, server("live-", false), VerifyOptions{Timeout: 5 * time.Second}); !res.OK() {
		t.Errorf("a server with cursors of its own: %s", reportOf(res))
	}
	res := runVerify(t, tr, server("live-", true), VerifyOptions{Timeout: 5 * time.Second})
	if len(res.Mismatches) != 2 || res.Mismatches[0].Exchange != 3 || res.Mismatches[1].Exchange != 4 {
		t.Errorf("a server with a page fewer: %s", reportOf(res))
	}
}

// A live cursor reads as the recorded one only where a cursor is (a
// nextCursor or cursor member): a cursor is often short, and a result
// that says "20" where the recording says "10" differs, though the live
// server's cursor is "20" where the recorded one's was "10".
func TestVerifyCursorsOnlyWhereCursorsAre(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}],"nextCursor":"10"}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"10"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b"}]}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"10"}]}}`,
	)
	server := pipeServer(t, func(ctx context.Context, server transport.Conn, m *jsonrpc.Message) {
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"a"}],"nextCursor":"20"}`
			if c, _ := rawjson.String(rawjson.Member(m.Params, "cursor")); c == "20" {
				result = `{"tools":[{"name":"b"}]}`
			} else if c != "" {
				server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"})})
				return
			}
		case "tools/call":
			result = `{"content":[{"type":"text","text":"20"}]}`
		default:
			return
		}
		server.Write(ctx, transport.Frame{Data: jsonrpc.EncodeResponse(m.ID, []byte(result), nil)})
	})
	res := runVerify(t, tr, server, VerifyOptions{Timeout: 5 * time.Second})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Exchange != 4 || res.Mismatches[0].Method != "tools/call" {
		t.Errorf("want the tools/call's text reported, and nothing else: %s", reportOf(res))
	}
}
