package record

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/transport"
)

// The legacy HTTP+SSE transport (2024-11-05) through the proxy: each host
// connection is a session of its own (defect 2), which verify checks on a
// connection of its own, and which replay --listen serves back over
// HTTP+SSE (defect 6).
func TestLegacySSESessionsThroughTheProxy(t *testing.T) {
	t.Parallel()
	up := testservers.SSE(t, newTestServer(""), nil)
	proxyURL, readTrace := startHTTPProxy(t, up)
	dial := func(u string) transport.Conn {
		conn, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Mode: transport.ModeSSE})
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}
	calls := [][]call{
		{{method: "tools/call", params: `{"name":"echo","arguments":{"message":"one"}}`}},
		{{method: "tools/call", params: `{"name":"progress","arguments":{"steps":2}}`, progress: true}, {method: "ping"}},
		// A request of the server's while it handles the call: on the
		// session's one stream, as everything is over HTTP+SSE.
		{{method: "tools/call", params: `{"name":"roots"}`}},
	}
	var want []sessionResult
	for _, c := range calls {
		want = append(want, exercise(t, dial(proxyURL+"/sse"), c))
	}
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != len(calls) {
		dumpTrace(t, tr)
		t.Fatalf("%d sessions, want %d", len(ss), len(calls))
	}
	for _, s := range ss {
		inits := 0
		for _, e := range s.Events {
			if e.Kind == KindFrame && e.Dir == ClientToServer && strings.Contains(string(e.Data), `"initialize"`) {
				inits++
			}
		}
		if inits != 1 {
			t.Errorf("session %d: %d initialize", s.N, inits)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := Verify(ctx, tr, nil, VerifyOptions{Dial: func(context.Context, int, SessionInfo) (transport.Conn, error) {
		return dial(up), nil
	}})
	if err != nil || !res.OK() || res.Sessions != len(calls) {
		t.Fatalf("verify: %v: %s", err, reportOf(res))
	}

	rp, err := NewReplayer(tr, ReplayOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	for i, c := range calls {
		got := exercise(t, dial(srv.URL+"/sse"), c)
		if !slices.Equal(got.results, want[i].results) || !slices.Equal(got.progress, want[i].progress) {
			t.Errorf("replayed session %d: %+v\nwant (as recorded) %+v", i+1, got, want[i])
		}
	}
}

func dumpTrace(t *testing.T, tr *Trace) {
	for _, e := range tr.Events {
		t.Logf("s%d %s %s %s %.200s", e.Session, e.Kind, e.Dir, e.Text, e.Data)
	}
}
