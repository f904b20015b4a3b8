package record

import (
	"bytes"
	"context"
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
