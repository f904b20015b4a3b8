package record

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// checkSameSession compares a replayed session with the recorded one.
func checkSameSession(t *testing.T, recorded, replayed sessionResult) {
	t.Helper()
	if len(recorded.results) != len(replayed.results) {
		t.Fatalf("replay gave %d results, recording %d", len(replayed.results), len(recorded.results))
	}
	for i := range recorded.results {
		if recorded.results[i] != replayed.results[i] {
			t.Errorf("result %d differs:\nrecorded %s\nreplayed %s", i, recorded.results[i], replayed.results[i])
		}
	}
	if !reflect.DeepEqual(recorded.progress, replayed.progress) {
		t.Errorf("progress: recorded %q, replayed %q", recorded.progress, replayed.progress)
	}
	if !reflect.DeepEqual(recorded.serverRequests, replayed.serverRequests) {
		t.Errorf("server requests: recorded %q, replayed %q", recorded.serverRequests, replayed.serverRequests)
	}
}

// replayOverPipe replays tr strictly in-process and runs the calls on it.
func replayOverPipe(t *testing.T, tr *Trace, calls []call) sessionResult {
	t.Helper()
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true, OnDeviation: func(d Deviation) { t.Errorf("deviation: %s", d.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, done := rp.ServePipe(ctx)
	res := exercise(t, conn, calls)
	if err := <-done; err != nil {
		t.Errorf("strict replay of the same session: %v", err)
	}
	return res
}

func verifyAgainst(t *testing.T, tr *Trace, conn transport.Conn, opts VerifyOptions) *VerifyResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer conn.Close()
	res, err := Verify(ctx, tr, conn, opts)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return res
}

// checkFailsOnEcho checks the report of a verification against the
// changed server, whose echo tool answers differently.
func checkFailsOnEcho(t *testing.T, res *VerifyResult) {
	t.Helper()
	if res.OK() || len(res.Mismatches) != 1 {
		t.Fatalf("verify against the changed server: %d mismatches, want 1: %+v", len(res.Mismatches), res.Mismatches)
	}
	m := res.Mismatches[0]
	if m.Method != "tools/call" || len(m.Diffs) != 1 || m.Diffs[0].Path != "$.result.content[0].text" ||
		m.Diffs[0].Recorded != `"Echo: hello"` || m.Diffs[0].Live != `"Echo! hello"` {
		t.Errorf("mismatch = %+v", m)
	}
	if m.Label() != `tools/call "echo"` || m.Problem != "the response differs" || !strings.Contains(res.Summary(), "1 mismatch") {
		t.Errorf("mismatch %s: %s; %s", m.Label(), m.Problem, res.Summary())
	}
}

func TestRoundTripSDKStdio(t *testing.T) {
	t.Parallel()
	tr, rec := recordSession(t, stdioDialer(t, helper("sdk")), "stdio", sdkCalls)
	if len(rec.progress) != 3 || len(rec.serverRequests) != 1 {
		t.Fatalf("the recorded session lacks progress or the server request: %+v", rec)
	}
	checkSameSession(t, rec, replayOverPipe(t, tr, sdkCalls))

	res := verifyAgainst(t, tr, startStdio(t, helper("sdk")), VerifyOptions{})
	if !res.OK() || res.Exchanges != len(sdkCalls)+1 || res.ServerRequests != 1 {
		t.Fatalf("verify against the same server: %d exchanges, %d server requests:\n%s", res.Exchanges, res.ServerRequests, reportOf(res))
	}
	checkFailsOnEcho(t, verifyAgainst(t, tr, startStdio(t, helper("sdk", "RECORD_TEST_VARIANT=changed")), VerifyOptions{}))
	// --ignore makes the difference acceptable.
	if res := verifyAgainst(t, tr, startStdio(t, helper("sdk", "RECORD_TEST_VARIANT=changed")),
		VerifyOptions{Ignore: []string{"$.result.content[*].text"}}); !res.OK() {
		t.Errorf("--ignore did not ignore: %+v", res.Mismatches)
	}
}

func TestRoundTripSDKHTTP(t *testing.T) {
	t.Parallel()
	u := testservers.Streamable(t, newTestServer(""), nil, nil)
	tr, rec := recordSession(t, func(obs transport.Observer) transport.Conn {
		conn, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}, "http", sdkCalls)
	sawSession, sawHTTP := false, false
	for _, e := range tr.Events {
		sawSession = sawSession || e.Meta != nil && e.Meta.SessionID != ""
		sawHTTP = sawHTTP || e.Kind == KindHTTP
	}
	if !sawSession || !sawHTTP {
		t.Errorf("the HTTP trace lacks session ids (%v) or HTTP events (%v)", sawSession, sawHTTP)
	}
	checkSameSession(t, rec, replayOverPipe(t, tr, sdkCalls))

	// Replayed over Streamable HTTP too.
	rp, err := NewReplayer(tr, ReplayOptions{Strict: true, OnDeviation: func(d Deviation) { t.Errorf("deviation: %s", d.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	hc, err := transport.NewHTTP(transport.HTTPOptions{URL: srv.URL + "/mcp", Mode: transport.ModeStreamable})
	if err != nil {
		t.Fatal(err)
	}
	checkSameSession(t, rec, exercise(t, hc, sdkCalls))

	live, _ := transport.NewHTTP(transport.HTTPOptions{URL: u})
	if res := verifyAgainst(t, tr, live, VerifyOptions{}); !res.OK() {
		t.Fatalf("verify against the same server over HTTP:\n%s", reportOf(res))
	}
	changed, _ := transport.NewHTTP(transport.HTTPOptions{URL: testservers.Streamable(t, newTestServer("changed"), nil, nil)})
	checkFailsOnEcho(t, verifyAgainst(t, tr, changed, VerifyOptions{}))
}

// everythingStdio returns the options that launch server-everything over
// stdio, or skips (fails under MCPX_REQUIRE_INTEROP=1) without it.
func everythingStdio(t testing.TB) transport.StdioOptions {
	t.Helper()
	cache := testservers.NPMCache()
	script := filepath.Join(cache, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); cache == "" || err != nil {
		if testservers.RequireInterop() {
			t.Fatal("server-everything is not installed (run ./scripts/test)")
		}
		t.Skip("server-everything is not installed (run ./scripts/test to install the npm peers)")
	}
	node, err := testservers.Node(cache)
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	return transport.StdioOptions{Command: node, Args: []string{script, "stdio"}}
}

// everythingCalls exercise server-everything. The client declares roots,
// and the server asks for them (roots/list) 350ms after the handshake,
// then logs that it got them: the long-running operation comes first and
// lasts a second, so that both come during it in every session, recorded
// or verified, whatever the machine's load (else the verification waits
// its 30s for them after the last exchange, and finds them elsewhere).
var everythingCalls = []call{
	{method: "tools/call", params: `{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":2}}`, progress: true},
	{method: "tools/list", params: `{}`},
	{method: "tools/call", params: `{"name":"echo","arguments":{"message":"hello"}}`},
	{method: "tools/call", params: `{"name":"get-sum","arguments":{"a":2,"b":3}}`},
	{method: "resources/list", params: `{}`},
	{method: "resources/read", params: `{"uri":"demo://resource/static/document/architecture.md"}`},
	{method: "prompts/list", params: `{}`},
	{method: "prompts/get", params: `{"name":"args-prompt","arguments":{"city":"Paris"}}`},
	{method: "ping"},
}

func TestRoundTripEverythingStdio(t *testing.T) {
	t.Parallel() // mostly waiting for node to start
	opts := everythingStdio(t)
	// The servers of the two verifications start now, beside the recorded
	// one: a node start is most of the test's time.
	live, changed := startStdio(t, opts), startStdio(t, opts)
	tr, rec := recordSession(t, stdioDialer(t, opts), "stdio", everythingCalls)
	if len(rec.progress) != 2 {
		t.Errorf("progress: %q", rec.progress)
	}
	sawStderr, sawRoots := false, false
	for _, e := range tr.Events {
		sawStderr = sawStderr || e.Kind == KindStderr && strings.Contains(e.Text, "Starting")
		sawRoots = sawRoots || e.Kind == KindFrame && e.Dir == ServerToClient && strings.Contains(string(e.Data), `"method":"roots/list"`)
	}
	if !sawStderr {
		t.Error("the server's stderr is not in the trace")
	}
	if !sawRoots {
		t.Error("the server's roots/list request is not in the trace")
	}
	checkSameSession(t, rec, replayOverPipe(t, tr, everythingCalls))

	// server-everything registers more tools once it is initialized and
	// announces them (notifications/tools/list_changed) on its own time:
	// before the first request is sent or during it, a race of the
	// server's, not a difference between two runs of it. So does the log
	// message it sends once it has the client's roots ("Roots updated"),
	// which came during the first request or the second in a loaded run;
	// and its roots/list, 350ms after the handshake, came before the
	// first request was sent in a run loaded enough (a CI machine running
	// the race detector over several packages): where it comes is the
	// server's timer's, and that the server asks is checked above.
	settled := VerifyOptions{Ignore: []string{mcp.NotificationToolsListChanged + ":$", mcp.NotificationMessage + ":$", mcp.MethodRootsList + ":$"}}
	t.Run("verify", func(t *testing.T) {
		t.Parallel()
		res := verifyAgainst(t, tr, live, settled)
		if !res.OK() {
			t.Fatalf("verify against server-everything:\n%s", reportOf(res))
		}
	})
	// A changed server: here, a trace whose echo answer was edited.
	t.Run("verify edited", func(t *testing.T) {
		t.Parallel()
		edited := *tr
		edited.Events = append([]Event(nil), tr.Events...)
		n := 0
		for i, e := range edited.Events {
			if e.Kind == KindFrame && e.Dir == ServerToClient && strings.Contains(string(e.Data), "Echo: hello") {
				edited.Events[i].Data = []byte(strings.Replace(string(e.Data), "Echo: hello", "Echo: goodbye", 1))
				n++
			}
		}
		if n != 1 {
			t.Fatalf("edited %d frames, want 1", n)
		}
		res := verifyAgainst(t, &edited, changed, settled)
		if res.OK() || len(res.Mismatches) != 1 || len(res.Mismatches[0].Diffs) != 1 || res.Mismatches[0].Diffs[0].Path != "$.result.content[0].text" {
			t.Fatalf("verify against an edited trace: %+v", res.Mismatches)
		}
	})
}
