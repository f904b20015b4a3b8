package transport_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/transport"
)

// Streamable HTTP against the Go SDK server in every combination of
// response mode (JSON or SSE) and session handling (stateful or stateless),
// with the transport auto-detected or forced.
func TestStreamableAgainstSDK(t *testing.T) {
	for _, jsonResp := range []bool{false, true} {
		for _, stateless := range []bool{false, true} {
			for _, mode := range []transport.HTTPMode{transport.ModeAuto, transport.ModeStreamable} {
				name := map[bool]string{false: "sse", true: "json"}[jsonResp] + "/" +
					map[bool]string{false: "stateful", true: "stateless"}[stateless] + "/" + string(mode)
				t.Run(name, func(t *testing.T) {
					l := newLog()
					u := testservers.Streamable(t, testservers.NewServer(),
						&mcp.StreamableHTTPOptions{JSONResponse: jsonResp, Stateless: stateless}, l.wrap)
					rec := newRecorder()
					sess, conn := mustDial(t, transport.HTTPOptions{URL: u, Mode: mode, UserAgent: "mcpx/test"}, rec)

					if got := toolText(t, sess, "echo", map[string]any{"message": "hi"}); got != "Echo: hi" {
						t.Errorf("echo = %q", got)
					}
					if got := toolText(t, sess, "add", map[string]any{"a": 2, "b": 3}); got != "5" {
						t.Errorf("add = %q", got)
					}
					if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
						t.Fatalf("tools/list: %v", err)
					}
					d := conn.Describe()
					if !strings.HasPrefix(d, "streamable-http: "+u) {
						t.Errorf("Describe = %q", d)
					}
					sid := conn.SessionID()
					if stateless != (sid == "") {
						t.Errorf("session id %q with stateless=%v", sid, stateless)
					}

					// Every request after initialize carries the negotiated
					// version and the session id; all carry our User-Agent
					// and the Accept header the spec requires.
					for _, s := range l.all() {
						if s.Header.Get("User-Agent") != "mcpx/test" {
							t.Errorf("%s %s: User-Agent %q", s.Method, s.RPC, s.Header.Get("User-Agent"))
						}
						if s.Method == "POST" && s.Header.Get("Accept") != "application/json, text/event-stream" {
							t.Errorf("POST %s: Accept %q", s.RPC, s.Header.Get("Accept"))
						}
						if s.RPC == "initialize" {
							if s.Header.Get("Mcp-Protocol-Version") != "" || s.Header.Get("Mcp-Session-Id") != "" {
								t.Errorf("initialize carried session headers: %v", s.Header)
							}
							continue
						}
						if v := s.Header.Get("Mcp-Protocol-Version"); v != "2025-11-25" {
							t.Errorf("%s %s: MCP-Protocol-Version %q", s.Method, s.RPC, v)
						}
						if got := s.Header.Get("Mcp-Session-Id"); got != sid {
							t.Errorf("%s %s: Mcp-Session-Id %q, want %q", s.Method, s.RPC, got, sid)
						}
					}
					if n := l.count("POST", "tools/call"); n != 2 {
						t.Errorf("tools/call POSTed %d times, want 2", n)
					}
					// The GET stream was tried right after initialize.
					if l.count("GET", "*") != 1 {
						t.Errorf("GET requests: %d, want 1 (%s)", l.count("GET", "*"), l.summary())
					}
					if stateless && !strings.Contains(rec.eventText(transport.EventNote), "offers no GET stream for server-initiated messages (HTTP 405)") {
						t.Errorf("no note about the missing GET stream:\n%s", rec.eventText(transport.EventNote))
					}

					sess.Close()
					if stateless {
						if n := l.count("DELETE", "*"); n != 0 {
							t.Errorf("DELETE sent without a session")
						}
					} else if ds := l.find("DELETE", "*"); len(ds) != 1 || ds[0].Header.Get("Mcp-Session-Id") != sid {
						t.Errorf("DELETE requests %v, want one for session %s", len(ds), sid)
					}
					checkNoLeaks(t)
				})
			}
		}
	}
}

// The legacy HTTP+SSE transport against the Go SDK's SSE handler, chosen
// explicitly and by automatic fallback.
func TestLegacySSEAgainstSDK(t *testing.T) {
	for _, mode := range []transport.HTTPMode{transport.ModeAuto, transport.ModeSSE} {
		t.Run(string(mode), func(t *testing.T) {
			l := newLog()
			u := testservers.SSE(t, testservers.NewServer(), l.wrap)
			rec := newRecorder()
			sess, conn := mustDial(t, transport.HTTPOptions{URL: u, Mode: mode}, rec)
			if got := toolText(t, sess, "echo", map[string]any{"message": "legacy"}); got != "Echo: legacy" {
				t.Errorf("echo = %q", got)
			}
			// The server asks us for roots mid-call; we answer with a POST.
			if got := toolText(t, sess, "roots", map[string]any{}); got != "2 roots" {
				t.Errorf("roots = %q", got)
			}
			d := conn.Describe()
			if !strings.HasPrefix(d, "http+sse: "+u) || !strings.Contains(d, "messages to http://127.0.0.1") {
				t.Errorf("Describe = %q", d)
			}
			if mode == transport.ModeAuto {
				if !strings.Contains(d, "fell back to HTTP+SSE") {
					t.Errorf("Describe does not say why: %q", d)
				}
				notes := rec.eventText(transport.EventNote)
				if !strings.Contains(notes, "trying the HTTP+SSE transport") {
					t.Errorf("no fallback note: %s", notes)
				}
				// initialize went first as a POST to the URL, then again over SSE.
				if n := l.count("POST", "initialize"); n != 2 {
					t.Errorf("initialize POSTed %d times, want 2 (once to detect, once over SSE)", n)
				}
			}
			if conn.Transport() != transport.ModeSSE {
				t.Errorf("Transport = %q", conn.Transport())
			}
			sess.Close()
			checkNoLeaks(t)
		})
	}
}

// A server message sent outside any request arrives on the GET stream,
// which is open before the first request after initialize.
func TestGETStreamDeliversServerMessages(t *testing.T) {
	srv := testservers.NewServer()
	u := testservers.Streamable(t, srv, nil, nil)
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, rec)
	_ = sess
	// Adding a tool makes the server announce it to every session.
	srv.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	select {
	case <-rec.notified:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification arrived")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.notifications[0].Method != "notifications/tools/list_changed" {
		t.Errorf("notification %s", rec.notifications[0].Method)
	}
	var onGet bool
	for _, f := range rec.frames {
		if f.Meta != nil && strings.HasPrefix(f.Meta.StreamID, "get-") && strings.Contains(string(f.Data), "list_changed") {
			onGet = f.Meta.HTTPMethod == "GET"
		}
	}
	if !onGet {
		t.Errorf("the notification did not arrive on the GET stream: %+v", rec.frames)
	}
}

// Server-to-client requests arrive on the POST's SSE stream and are
// answered with a new POST.
func TestServerRequestOnPOSTStream(t *testing.T) {
	l := newLog()
	u := testservers.Streamable(t, testservers.NewServer(), nil, l.wrap)
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, nil)
	if got := toolText(t, sess, "roots", map[string]any{}); got != "2 roots" {
		t.Errorf("roots = %q", got)
	}
	var answered bool
	for _, s := range l.find("POST", "") {
		if strings.Contains(string(s.Body), "file:///a") {
			answered = true
		}
	}
	if !answered {
		t.Errorf("no POST answered roots/list: %s", l.summary())
	}
}

// The Go SDK server (with an event store) closes a tool's stream early with
// a retry field; mcpx resumes it with GET and Last-Event-ID and gets the
// answer without re-sending the request.
func TestResumeAgainstSDKEventStore(t *testing.T) {
	l := newLog()
	u := testservers.Streamable(t, testservers.NewServer(),
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}, l.wrap)
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u}, rec)
	if got := toolText(t, sess, "retry", map[string]any{}); got != "resumed" {
		t.Errorf("retry = %q", got)
	}
	if n := l.count("POST", "tools/call"); n != 1 {
		t.Errorf("tools/call POSTed %d times, want 1", n)
	}
	var resumed bool
	for _, s := range l.find("GET", "*") {
		if s.LastEvent != "" {
			resumed = true
		}
	}
	if !resumed {
		t.Errorf("no GET with Last-Event-ID: %s", l.summary())
	}
}

// When the server ends the session (HTTP 404 for its id), the session
// re-initializes and the failed request is sent once more.
func TestSessionExpiryAgainstSDK(t *testing.T) {
	srv := testservers.NewServer()
	l := newLog()
	u := testservers.Streamable(t, srv, nil, l.wrap)
	rec := newRecorder()
	sess, conn := mustDial(t, transport.HTTPOptions{URL: u}, rec)
	old := conn.SessionID()
	for ss := range srv.Sessions() {
		ss.Close()
	}
	if got := toolText(t, sess, "echo", map[string]any{"message": "again"}); got != "Echo: again" {
		t.Errorf("echo = %q", got)
	}
	if conn.SessionID() == old || conn.SessionID() == "" {
		t.Errorf("session id %q after expiry of %q", conn.SessionID(), old)
	}
	if n := l.count("POST", "initialize"); n != 2 {
		t.Errorf("initialize sent %d times, want 2", n)
	}
	if !strings.Contains(rec.allNotes(), "session expired") {
		t.Errorf("no note about the new session: %q", rec.allNotes())
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testservers.NewServer() }, nil)
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshakes are expected
	ts.StartTLS()
	t.Cleanup(ts.Close)

	t.Run("unknown CA", func(t *testing.T) {
		_, _, err := dial(t, transport.HTTPOptions{URL: ts.URL}, nil)
		if !errors.Is(err, transport.ErrConnect) {
			t.Fatalf("err = %v, want ErrConnect", err)
		}
		var ua x509.UnknownAuthorityError
		var cv interface{ Unwrap() error }
		if !errors.As(err, &ua) && !errors.As(err, &cv) {
			t.Errorf("err does not carry the certificate problem: %v", err)
		}
	})
	t.Run("ca-cert", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "ca.pem")
		pemData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
		if err := os.WriteFile(file, pemData, 0o600); err != nil {
			t.Fatal(err)
		}
		sess, _ := mustDial(t, transport.HTTPOptions{URL: ts.URL, CACerts: pemData, CACertFile: file}, nil)
		if got := toolText(t, sess, "echo", map[string]any{"message": "tls"}); got != "Echo: tls" {
			t.Errorf("echo = %q", got)
		}
	})
	t.Run("insecure", func(t *testing.T) {
		sess, _ := mustDial(t, transport.HTTPOptions{URL: ts.URL, Insecure: true}, nil)
		if got := toolText(t, sess, "echo", map[string]any{"message": "tls"}); got != "Echo: tls" {
			t.Errorf("echo = %q", got)
		}
	})
	t.Run("bad ca file", func(t *testing.T) {
		if _, err := transport.NewHTTP(transport.HTTPOptions{URL: ts.URL, CACerts: []byte("not a certificate"), CACertFile: "ca.pem"}); err == nil {
			t.Error("no error for a CA file without certificates")
		}
	})
}

// Interop with @modelcontextprotocol/server-everything in both HTTP modes,
// auto-detected.
func TestEverythingHTTP(t *testing.T) {
	// Not parallel: checkNoLeaks looks at every goroutine.
	urls := transport.EverythingHTTP.URLs(t)
	for _, mode := range []string{"streamableHttp", "sse"} {
		t.Run(mode, func(t *testing.T) {
			u := urls[mode]
			rec := newRecorder()
			sess, conn := mustDial(t, transport.HTTPOptions{URL: u}, rec)
			if got := toolText(t, sess, "echo", map[string]any{"message": "hi"}); got != "Echo: hi" {
				t.Errorf("echo = %q", got)
			}
			want := map[string]transport.HTTPMode{"streamableHttp": transport.ModeStreamable, "sse": transport.ModeSSE}[mode]
			if conn.Transport() != want {
				t.Errorf("transport %q, want %q (%s)", conn.Transport(), want, conn.Describe())
			}
			sess.Close()
			checkNoLeaks(t)
		})
	}
}
