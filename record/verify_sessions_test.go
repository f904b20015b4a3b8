package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// mergeSessions makes one trace of several one-session traces, each
// becoming a session of its own (as a proxy records one per host
// connection).
func mergeSessions(traces ...*Trace) *Trace {
	out := &Trace{Header: traces[0].Header}
	out.Header.Minor = Minor
	for i, tr := range traces {
		n := i + 1
		info := &SessionInfo{Transport: tr.Header.Transport, Target: tr.Header.Target}
		out.Events = append(out.Events, Event{Kind: KindSession, Session: n, Text: fmt.Sprintf("session %d", n), SessionInfo: info})
		for _, e := range tr.Events {
			e.Session = n
			out.Events = append(out.Events, e)
		}
	}
	return out
}

// writeTrace writes tr to a file and returns its name.
func writeTrace(t *testing.T, tr *Trace) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return name
}

var sessionCalls = [][]call{
	{{method: "tools/list", params: `{}`}},
	{{method: "tools/call", params: `{"name":"echo","arguments":{"message":"two"}}`}},
	{{method: "tools/call", params: `{"name":"progress","arguments":{"steps":3}}`, progress: true}, {method: "ping"}},
}

// Each session of a trace is verified on a connection of its own: over
// stdio a new server process, over HTTP a new MCP session. Sent over one
// connection, the second initialize would be refused and everything after
// it not sent.
func TestVerifySessionsEachOnItsOwnConnection(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		var traces []*Trace
		for _, calls := range sessionCalls {
			tr, _ := recordSession(t, stdioDialer(t, helper("sdk")), "stdio", calls)
			traces = append(traces, tr)
		}
		tf, err := OpenTrace(writeTrace(t, mergeSessions(traces...)))
		if err != nil {
			t.Fatal(err)
		}
		defer tf.Close()
		dials := 0
		res, err := VerifySessions(t.Context(), tf, nil, VerifyOptions{Dial: func(_ context.Context, n int, info SessionInfo) (transport.Conn, error) {
			dials++
			if n != dials || info.Transport != "stdio" {
				t.Errorf("dial %d: session %d, %+v", dials, n, info)
			}
			return transport.StartStdio(helper("sdk"))
		}})
		if err != nil || !res.OK() || res.Sessions != 3 || res.Exchanges != 7 || dials != 3 {
			t.Fatalf("%v: %s", err, reportOf(res))
		}
		if s := res.Summary(); s != "7 exchange(s) verified in 3 sessions, 0 mismatch(es)" {
			t.Errorf("summary %q", s)
		}
		// A changed server fails in the session where it differs, named.
		res, err = VerifySessions(t.Context(), tf, nil, VerifyOptions{Dial: func(context.Context, int, SessionInfo) (transport.Conn, error) {
			return transport.StartStdio(helper("sdk", "RECORD_TEST_VARIANT=changed"))
		}})
		if err != nil || len(res.Mismatches) != 1 {
			t.Fatalf("%v: %s", err, reportOf(res))
		}
		if m := res.Mismatches[0]; m.Session != 2 || m.Exchange != 2 || m.Where(true) != `session 2, exchange 2 tools/call "echo"` || m.Diffs[0].Path != "$.result.content[0].text" {
			t.Errorf("mismatch %+v", m)
		}
	})
	t.Run("http", func(t *testing.T) {
		u := testservers.Streamable(t, newTestServer(""), nil, nil)
		var traces []*Trace
		for _, calls := range sessionCalls {
			tr, _ := recordSession(t, httpDialer(t, u), "http", calls)
			traces = append(traces, tr)
		}
		merged := mergeSessions(traces...)
		// The first session on the connection given, the others dialled.
		res, err := Verify(t.Context(), merged, newHTTPConn(t, u), VerifyOptions{Dial: func(context.Context, int, SessionInfo) (transport.Conn, error) {
			return transport.NewHTTP(transport.HTTPOptions{URL: u})
		}})
		if err != nil || !res.OK() || res.Sessions != 3 || res.Exchanges != 7 {
			t.Fatalf("%v: %s", err, reportOf(res))
		}
		// Without Dial, the sessions beyond the first are reported as not
		// verified, each once.
		res, err = Verify(t.Context(), merged, newHTTPConn(t, u), VerifyOptions{})
		if err != nil || res.Sessions != 1 || len(res.Mismatches) != 2 || res.Mismatches[1].Session != 3 ||
			!strings.Contains(res.Mismatches[0].Problem, "not verified") {
			t.Fatalf("%v: %s", err, reportOf(res))
		}
	})
}

// refusingServer serves the test server over Streamable HTTP, refusing
// every tools/call of the tool "refused" with status (a text/plain body, no
// JSON-RPC), as a gateway or a strict server may.
func refusingServer(t *testing.T, status int) string {
	return testservers.Streamable(t, newTestServer(""), nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"name":"refused"`)) {
					http.Error(w, "refused on purpose", status)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	})
}

// recordRefusal records a session whose second tools/call is refused, with
// calls before and after it.
func recordRefusal(t *testing.T, u string) *Trace {
	t.Helper()
	name := filepath.Join(t.TempDir(), "refusal.jsonl")
	rec, err := Create(t.Context(), name, RecorderOptions{Header: Header{Transport: "http", Target: u}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Observer: rec.Observe})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sess, err := inspector.Connect(ctx, rec.Wrap(conn), inspector.Options{Lifecycle: &inspector.Legacy{ClientInfo: inspector.Implementation{Name: "t", Version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"message":"one"}}`)); err != nil {
		t.Fatal(err)
	}
	var he *transport.HTTPError
	if _, err := sess.Call(ctx, "tools/call", json.RawMessage(`{"name":"refused","arguments":{}}`)); !errors.As(err, &he) || he.Status != 400 {
		t.Fatalf("the refused call: %v", err)
	}
	if _, err := sess.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"message":"three"}}`)); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A recorded refusal (a 400 without a JSON-RPC body) that happens again is
// a match; another status is one difference, and the session goes on.
func TestVerifyHTTPRefusalIsAnOutcome(t *testing.T) {
	t.Parallel()
	tr := recordRefusal(t, refusingServer(t, http.StatusBadRequest))
	// Five exchanges: the 400 to a request in a session made mcpx ping in
	// it, to tell a session the server forgot from one refused request.
	res := verifyAgainst(t, tr, newHTTPConn(t, refusingServer(t, http.StatusBadRequest)), VerifyOptions{})
	if !res.OK() || res.Exchanges != 5 {
		t.Fatalf("against the same server: %s", reportOf(res))
	}
	res = verifyAgainst(t, tr, newHTTPConn(t, refusingServer(t, http.StatusForbidden)), VerifyOptions{})
	if res.Exchanges != 5 || len(res.Mismatches) != 1 {
		t.Fatalf("against a server refusing with 403: %s", reportOf(res))
	}
	m := res.Mismatches[0]
	want := Difference{Message: "HTTP", Path: "$.status", Recorded: "400", Live: "403"}
	if m.Exchange != 3 || m.Problem != "refused with HTTP 403, the recording has HTTP 400" || len(m.Diffs) != 1 || m.Diffs[0] != want {
		t.Errorf("mismatch %+v", m)
	}
	// A server that answers where the recording has a refusal.
	res = verifyAgainst(t, tr, newHTTPConn(t, testservers.Streamable(t, newTestServer(""), nil, nil)), VerifyOptions{})
	if len(res.Mismatches) != 1 || !strings.HasPrefix(res.Mismatches[0].Problem, "answered, but the recording has a refusal (HTTP 400)") {
		t.Fatalf("against a server that answers: %s", reportOf(res))
	}
}

// The notifications and requests of a window are filed by progress token
// and by the POST stream they came on, whatever else is pending; the rest
// is left over, in the order it came.
func TestAttributor(t *testing.T) {
	t.Parallel()
	a := newAttributor(0)
	x := &exchange{n: 1, token: progressTokenKey([]byte(`{"_meta":{"progressToken":"p1"}}`))}
	y := &exchange{n: 2}
	a.sent(x)
	a.sent(y)
	msg := func(s string) *jsonrpc.Message { return parseMessage([]byte(s)) }
	prog := msg(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`)
	onY := msg(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"y"}}`)
	ambiguous := msg(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"?"}}`)
	onGet := msg(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{}}`)
	a.message(prog, nil)
	a.message(onY, &transport.Meta{StreamID: "post-7"})
	a.message(ambiguous, nil) // two pending: nobody's
	a.answered(y, &transport.Meta{StreamID: "post-7"})
	a.message(onGet, &transport.Meta{StreamID: "get-1"})
	late := msg(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}`)
	a.message(late, nil) // only x pending
	if xw, yw := x.win[0].msgs, y.win[0].msgs; len(xw) != 2 || xw[0] != prog || xw[1] != late || len(yw) != 1 || yw[0] != onY {
		t.Errorf("windows: x %d, y %d", len(xw), len(yw))
	}
	if left := a.leftover().msgs; len(left) != 2 || left[0] != ambiguous || left[1] != onGet {
		t.Errorf("leftover %v", left)
	}
}

// recordtest-style reporting: every difference of every exchange is in
// the result, whatever failed before it.
func TestVerifyReportsEverything(t *testing.T) {
	t.Parallel()
	live := append([]string(nil), verifyTrace...)
	live[4] = `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"},{"name":"clock","x":1}]}}`
	live[8] = `< {"jsonrpc":"2.0","id":3,"result":{"at":"2026-01-02T03:04:05.123Z","n":2}}`
	res := runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)), VerifyOptions{})
	if len(res.Mismatches) != 2 || res.Mismatches[0].Exchange != 2 || res.Mismatches[1].Exchange != 3 {
		t.Fatalf("%s", reportOf(res))
	}
	// A scoped ignore applies to its method only.
	res = runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)), VerifyOptions{Ignore: []string{"tools/call:$.result.n", "tools/list:$.result.n"}})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Method != "tools/list" {
		t.Fatalf("scoped: %s", reportOf(res))
	}
}
