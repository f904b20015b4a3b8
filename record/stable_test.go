package record

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/transport"
)

// stableCalls are sdkCalls without the one whose answer changes every
// run (now).
var stableCalls = slices.DeleteFunc(slices.Clone(sdkCalls), func(c call) bool { return strings.Contains(c.params, `"now"`) })

func stableBytes(t *testing.T, tr *Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteStable(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Recording the same session twice gives the same stable trace, byte for
// byte, over stdio and over Streamable HTTP (whose session ids and SSE
// event ids differ between the two recordings).
func TestStableRecordingsAreIdentical(t *testing.T) {
	srv := newTestServer("")
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer up.Close()
	for _, tc := range []struct {
		name string
		dial func(obs transport.Observer) transport.Conn
	}{
		{"stdio", stdioDialer(t, helper("sdk"))},
		{"http", httpDialer(t, up.URL)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := recordSession(t, tc.dial, tc.name, stableCalls)
			b, _ := recordSession(t, tc.dial, tc.name, stableCalls)
			sa, sb := stableBytes(t, a), stableBytes(t, b)
			if !bytes.Equal(sa, sb) {
				la, lb := strings.Split(string(sa), "\n"), strings.Split(string(sb), "\n")
				for i := range min(len(la), len(lb)) {
					if la[i] != lb[i] {
						t.Fatalf("two stable recordings differ at line %d:\n%s\n%s", i+1, la[i], lb[i])
					}
				}
				t.Fatalf("two stable recordings differ in length: %d and %d lines", len(la), len(lb))
			}
			for _, volatile := range []string{`"t":`, `"created"`, `"mcpx"`} {
				if bytes.Contains(sa, []byte(volatile)) {
					t.Errorf("the stable trace holds %s:\n%s", volatile, sa)
				}
			}
			if tc.name == "http" && !bytes.Contains(sa, []byte(`"sessionId":"[session-1]"`)) {
				t.Errorf("no session id placeholder:\n%s", sa)
			}
			// Writing a stable trace again changes nothing.
			again, err := Read(bytes.NewReader(sa))
			if err != nil {
				t.Fatal(err)
			}
			if s2 := stableBytes(t, again); !bytes.Equal(sa, s2) {
				t.Errorf("a stable trace written again differs:\n%s\n----\n%s", sa, s2)
			}
		})
	}
}

// A stable trace lays a long frame out one member per line, so that a
// changed tool description is one changed line, and reads back as the
// same messages: replay serves it and verify checks a server against it.
func TestStableTraceLayoutReplayVerify(t *testing.T) {
	tr, want := recordSession(t, stdioDialer(t, helper("sdk")), "stdio", stableCalls)
	st := stableBytes(t, tr)
	lines := strings.Split(string(st), "\n")
	if !strings.Contains(lines[0], `"minor":4`) || !strings.Contains(lines[0], `"stable":true`) {
		t.Errorf("header %s", lines[0])
	}
	found := false
	for _, l := range lines {
		if strings.TrimSpace(l) == `"description": "echo the message",` {
			found = true
		}
	}
	if !found {
		t.Errorf("the echo tool's description is not a line of its own:\n%s", st)
	}

	name := filepath.Join(t.TempDir(), "stable.jsonl")
	if err := os.WriteFile(name, st, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func() (SessionSource, error){
		func() (SessionSource, error) { return ReadFile(name) },
		func() (SessionSource, error) { return OpenTrace(name) },
	} {
		src, err := read()
		if err != nil {
			t.Fatal(err)
		}
		s, err := src.ReadSession(1)
		if err != nil || s == nil {
			t.Fatalf("session 1: %v", err)
		}
		for _, e := range s.Frames() {
			if bytes.ContainsAny(e.Data, "\n") {
				t.Errorf("a frame read back holds a newline: %s", e.Data)
			}
		}
		rp, err := NewReplayerSource(src, ReplayOptions{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		conn, done := rp.ServePipe(context.Background())
		got := exercise(t, conn, stableCalls)
		conn.Close()
		if err := <-done; err != nil {
			t.Errorf("strict replay of the stable trace: %v", err)
		}
		canon := func(rs []string) []string {
			var out []string
			for _, r := range rs {
				c, _ := canonicalFrame([]byte(r))
				out = append(out, string(c))
			}
			return out
		}
		if !slices.Equal(canon(got.results), canon(want.results)) {
			t.Errorf("replayed results\n%q\nwant\n%q", got.results, want.results)
		}
		res, err := VerifySessions(context.Background(), src, startStdio(t, helper("sdk")), VerifyOptions{})
		if err != nil || !res.OK() {
			t.Errorf("verify against the stable trace: %v %+v", err, res)
		}
	}
}

// A recording proxy numbers SSE streams across its sessions in the order
// the server's answers begin, so that a GET stream and a POST's answer
// race for a number, and quotes the client's address with its port in the
// session's text: the stable form numbers each session's streams anew,
// kind by kind, and leaves the port out, so that two recordings of one
// session through the proxy are the same bytes.
func TestStableProxyStreamsAndClientPort(t *testing.T) {
	t.Parallel()
	proxied := func(port string, get, call int) *Trace {
		meta := func(method, stream string) *transport.Meta {
			return &transport.Meta{HTTPMethod: method, URL: "http://127.0.0.1:9/mcp", ContentType: "text/event-stream", HTTPStatus: 200, StreamID: stream}
		}
		post, getStream := fmt.Sprintf("post-%d", call), fmt.Sprintf("get-%d", get)
		return &Trace{Header: Header{Transport: "http", Target: "http://127.0.0.1:9/mcp", Redacted: true}, Events: []Event{
			{Session: 1, Kind: KindSession, Text: "http: POST http://127.0.0.1:9/mcp from 127.0.0.1:" + port,
				SessionInfo: &SessionInfo{Transport: "http", Target: "http://127.0.0.1:9/mcp", Client: "127.0.0.1:" + port}},
			{Session: 1, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)},
			{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Meta: meta("POST", "post-1")},
			{Session: 1, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet"}}`)},
			{Session: 1, Kind: KindStream, Text: "SSE " + getStream + `: event id="0" with no data (priming)`, Meta: meta("GET", getStream)},
			{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), Meta: meta("GET", getStream)},
			{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`), Meta: meta("POST", post)},
			{Session: 1, Kind: KindNote, Text: "SSE " + post + " cut: EOF"},
		}}
	}
	a := stableBytes(t, proxied("50001", 2, 3))
	b := stableBytes(t, proxied("50002", 3, 2))
	if !bytes.Equal(a, b) {
		t.Fatalf("two stable recordings of one proxied session differ:\n%s\n----\n%s", a, b)
	}
	for _, want := range []string{`"streamId":"post-2"`, `"streamId":"get-1"`, `SSE get-1: event id=`, `SSE post-2 cut`, `from 127.0.0.1"`, `"client":"127.0.0.1"`} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("the stable trace lacks %s:\n%s", want, a)
		}
	}
	for _, volatile := range []string{"5000", "post-3", "get-2"} {
		if bytes.Contains(a, []byte(volatile)) {
			t.Errorf("the stable trace holds %s:\n%s", volatile, a)
		}
	}
	again, err := Read(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if a2 := stableBytes(t, again); !bytes.Equal(a, a2) {
		t.Errorf("a stable trace written again differs:\n%s\n----\n%s", a, a2)
	}
}

// Two requests in flight together are answered on two POST streams,
// which a recording numbers in the order the server's answers begin:
// when both answers come after the second request, the stable form puts
// the streams in the order of the requests they answer, not of their
// racing numbers, so that two recordings of one session are the same
// bytes.
func TestStableConcurrentPostStreams(t *testing.T) {
	t.Parallel()
	recorded := func(first, second int) *Trace {
		meta := func(n int) *transport.Meta {
			return &transport.Meta{HTTPMethod: "POST", URL: "http://127.0.0.1:9/mcp", ContentType: "text/event-stream", HTTPStatus: 200, StreamID: fmt.Sprintf("post-%d", n)}
		}
		return &Trace{Header: Header{Transport: "http", Target: "http://127.0.0.1:9/mcp", Redacted: true}, Events: []Event{
			{Session: 1, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)},
			{Session: 1, Kind: KindFrame, Dir: ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`)},
			{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":3,"result":{}}`), Meta: meta(second)},
			{Session: 1, Kind: KindFrame, Dir: ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`), Meta: meta(first)},
		}}
	}
	a := stableBytes(t, recorded(2, 3))
	b := stableBytes(t, recorded(3, 2))
	if !bytes.Equal(a, b) {
		t.Fatalf("two stable recordings of one session differ:\n%s\n----\n%s", a, b)
	}
}
