package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

type connectResult struct {
	s   *Session
	err error
}

// startConnect runs Connect in a goroutine against a fake server.
func startConnect(t *testing.T, opts Options) (<-chan connectResult, *fakeServer, *warnings) {
	t.Helper()
	client, server := transport.Pipe()
	w := &warnings{t: t, ch: make(chan string, 100)}
	opts.OnWarning = w.add
	srv := newFakeServer(t, server)
	ch := make(chan connectResult, 1)
	go func() {
		s, err := Connect(context.Background(), client, opts)
		ch <- connectResult{s, err}
	}()
	t.Cleanup(func() { client.Close() })
	return ch, srv, w
}

func waitConnect(t *testing.T, ch <-chan connectResult) connectResult {
	t.Helper()
	var r connectResult
	select {
	case r = <-ch:
	case <-time.After(wait):
		t.Fatal("Connect did not return")
	}
	if r.s != nil {
		t.Cleanup(func() { r.s.Close() })
	}
	return r
}

func initResult(version string) string {
	return fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{"listChanged":true},"logging":{},"prompts":null},"serverInfo":{"name":"srv","title":"Server","version":"1.2"},"instructions":"Use it."}`, version)
}

func TestLegacyInitializeParams(t *testing.T) {
	tests := []struct {
		name     string
		life     *Legacy
		wantVer  string
		wantCaps string
	}{
		{"defaults", &Legacy{ClientInfo: Implementation{Name: "mcpx", Version: "0.1"}}, mcp.LatestHandshakeVersion, `{}`},
		{"pinned version", &Legacy{ProtocolVersion: "2024-11-05", ClientInfo: Implementation{Name: "mcpx", Version: "0.1"}}, "2024-11-05", `{}`},
		{"capabilities", &Legacy{ClientInfo: Implementation{Name: "mcpx", Version: "0.1"}, Capabilities: json.RawMessage(`{"roots":{"listChanged":true}}`)}, mcp.LatestHandshakeVersion, `{"roots":{"listChanged":true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, srv, _ := startConnect(t, Options{Lifecycle: tt.life})
			req := srv.nextRequest("initialize")
			var p struct {
				ProtocolVersion string          `json:"protocolVersion"`
				Capabilities    json.RawMessage `json:"capabilities"`
				ClientInfo      Implementation  `json:"clientInfo"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil {
				t.Fatal(err)
			}
			if p.ProtocolVersion != tt.wantVer {
				t.Errorf("protocolVersion = %q, want %q", p.ProtocolVersion, tt.wantVer)
			}
			if string(p.Capabilities) != tt.wantCaps {
				t.Errorf("capabilities = %s, want %s", p.Capabilities, tt.wantCaps)
			}
			if diff := cmp.Diff(tt.life.ClientInfo, p.ClientInfo); diff != "" {
				t.Errorf("clientInfo (-want +got):\n%s", diff)
			}
			srv.reply(req, initResult(tt.wantVer))
			n := srv.next()
			if !n.IsNotification() || n.Method != "notifications/initialized" {
				t.Errorf("after initialize the client sent %s, want notifications/initialized", n.Raw)
			}
			if r := waitConnect(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
		})
	}
}

func TestLegacyAcceptsHandshakeVersions(t *testing.T) {
	want := []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
	if diff := cmp.Diff(want, mcp.HandshakeVersions, cmp.Transformer("sort", func(in []string) map[string]bool {
		m := map[string]bool{}
		for _, v := range in {
			m[v] = true
		}
		return m
	})); diff != "" {
		t.Errorf("mcp.HandshakeVersions (-want +got):\n%s", diff)
	}
	for _, version := range want {
		t.Run(version, func(t *testing.T) {
			life := &Legacy{}
			ch, srv, _ := startConnect(t, Options{Lifecycle: life})
			req := srv.nextRequest("initialize")
			res := initResult(version)
			srv.reply(req, res)
			if n := srv.next(); n.Method != "notifications/initialized" {
				t.Fatalf("sent %s", n.Raw)
			}
			r := waitConnect(t, ch)
			if r.err != nil {
				t.Fatalf("Connect: %v", r.err)
			}
			info := r.s.Server()
			want := &ServerInfo{
				Era:             "legacy",
				ProtocolVersion: version,
				Implementation:  Implementation{Name: "srv", Title: "Server", Version: "1.2"},
				Capabilities:    json.RawMessage(`{"tools":{"listChanged":true},"logging":{},"prompts":null}`),
				Instructions:    "Use it.",
				Raw:             json.RawMessage(res),
			}
			if diff := cmp.Diff(want, info); diff != "" {
				t.Errorf("ServerInfo (-want +got):\n%s", diff)
			}
			for name, has := range map[string]bool{"tools": true, "logging": true, "prompts": false, "resources": false} {
				if info.HasCapability(name) != has {
					t.Errorf("HasCapability(%q) = %v, want %v", name, !has, has)
				}
			}
		})
	}
	var nilInfo *ServerInfo
	if nilInfo.HasCapability("tools") {
		t.Error("nil ServerInfo has a capability")
	}
}

func TestLegacyRejects(t *testing.T) {
	tests := []struct {
		name   string
		answer func(srv *fakeServer, req *jsonrpc.Message)
		check  func(t *testing.T, err error)
	}{
		{
			name:   "unknown version",
			answer: func(srv *fakeServer, req *jsonrpc.Message) { srv.reply(req, initResult("2099-01-01")) },
			check: func(t *testing.T, err error) {
				var ve *VersionError
				if !errors.As(err, &ve) || !errors.Is(err, ErrUnsupportedVersion) {
					t.Fatalf("err = %v, want a *VersionError", err)
				}
				if diff := cmp.Diff(&VersionError{Offered: mcp.LatestHandshakeVersion, Got: "2099-01-01"}, ve); diff != "" {
					t.Errorf("VersionError (-want +got):\n%s", diff)
				}
				if !containsAll(err.Error(), "2099-01-01", mcp.LatestHandshakeVersion) || strings.Contains(err.Error(), "--") {
					t.Errorf("message %q does not give the versions, or names a flag", err)
				}
			},
		},
		{
			// A version of a megabyte is quoted cut, with its length:
			// the error is one line a person reads.
			name:   "a version of a megabyte",
			answer: func(srv *fakeServer, req *jsonrpc.Message) { srv.reply(req, initResult(strings.Repeat("9", 1<<20))) },
			check: func(t *testing.T, err error) {
				var ve *VersionError
				if !errors.As(err, &ve) || len(ve.Got) != 1<<20 {
					t.Fatalf("err = %v, want a *VersionError with the version whole", err)
				}
				if msg := err.Error(); len(msg) > 1000 || !strings.Contains(msg, `…" (1048576 bytes), which mcpx does not speak`) {
					t.Errorf("message of %d bytes: %.300q, want the version cut, with its length", len(msg), msg)
				}
			},
		},
		{
			name: "missing version",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.reply(req, `{"capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrUnsupportedVersion) {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			// A version that is no string, or empty, is refused like a
			// missing one, quoting what came (not as a broken result).
			name: "version not a string",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.reply(req, `{"protocolVersion":20251125,"capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
			},
			check: func(t *testing.T, err error) {
				var ve *VersionError
				if !errors.As(err, &ve) || ve.Invalid != "20251125" || ve.Got != "" ||
					!strings.Contains(err.Error(), "has protocolVersion 20251125, not a string naming a version") {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "empty version",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.reply(req, `{"protocolVersion":"","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
			},
			check: func(t *testing.T, err error) {
				var ve *VersionError
				if !errors.As(err, &ve) || ve.Invalid != `""` || !strings.Contains(err.Error(), `has protocolVersion "", not a string`) {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "JSON-RPC error",
			answer: func(srv *fakeServer, req *jsonrpc.Message) {
				srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32602,"message":"unsupported"}}`)
			},
			check: func(t *testing.T, err error) {
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name:   "result not an object",
			answer: func(srv *fakeServer, req *jsonrpc.Message) { srv.reply(req, `["x"]`) },
			check: func(t *testing.T, err error) {
				if err == nil || !containsAll(err.Error(), "InitializeResult") {
					t.Fatalf("err = %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, srv, _ := startConnect(t, Options{})
			tt.answer(srv, srv.nextRequest("initialize"))
			r := waitConnect(t, ch)
			if r.s != nil {
				t.Fatal("Connect returned a session")
			}
			tt.check(t, r.err)
			// The connection was closed without notifications/initialized.
			for fr := range srv.in {
				t.Errorf("client sent %s after a failed initialize", fr.Data)
			}
		})
	}
}

// A pinned version the server echoes back is accepted even when mcpx does
// not list it: the person asked for exactly that (and is warned).
func TestLegacyPinnedVersionEchoed(t *testing.T) {
	ch, srv, w := startConnect(t, Options{Lifecycle: &Legacy{ProtocolVersion: "2099-01-01"}})
	srv.reply(srv.nextRequest("initialize"), initResult("2099-01-01"))
	srv.next()
	if r := waitConnect(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	w.expect("accepted protocol version 2099-01-01, which mcpx does not know")
}

func TestBatchWarningDependsOnVersion(t *testing.T) {
	tests := []struct {
		version string
		warn    bool
	}{
		{"2025-03-26", false},
		{"2025-06-18", true},
		{"2024-11-05", true},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			notes := make(chan *jsonrpc.Message, 1)
			ch, srv, w := startConnect(t, Options{
				Lifecycle:      &Legacy{ProtocolVersion: tt.version},
				OnNotification: func(m *jsonrpc.Message) { notes <- m },
			})
			srv.reply(srv.nextRequest("initialize"), initResult(tt.version))
			srv.next()
			if r := waitConnect(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
			srv.send(`[{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]`)
			select {
			case <-notes: // the batch has been processed
			case <-time.After(wait):
				t.Fatal("batch not processed")
			}
			if tt.warn {
				w.expect("batch", tt.version)
			} else {
				w.none()
			}
		})
	}
}

// A server request other than ping that comes before the initialized
// notification is warned about once per method (spec 2025-11-25:
// basic/lifecycle, "Initialization") and answered all the same; once the
// session is initialized, none is.
func TestLegacyEarlyServerRequests(t *testing.T) {
	ch, srv, w := startConnect(t, Options{Lifecycle: &Legacy{Capabilities: json.RawMessage(`{"roots":{},"sampling":{}}`)}})
	init := srv.nextRequest("initialize")
	srv.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := srv.next(); m.ID.String() != `"p"` || string(m.Result) != "{}" {
		t.Fatalf("ping answered with %s", m.Raw)
	}
	for _, id := range []string{`"r1"`, `"r2"`} {
		srv.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"roots/list"}`)
		if m := srv.next(); m.ID.String() != id || m.Error == nil {
			t.Fatalf("roots/list answered with %s", m.Raw)
		}
	}
	w.expect("the server sent roots/list before the session was initialized", "SHOULD NOT")
	srv.reply(init, initResult("2025-11-25"))
	if m := srv.next(); m.Method != "notifications/initialized" {
		t.Fatalf("sent %s", m.Raw)
	}
	if r := waitConnect(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	srv.send(`{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{}}`)
	srv.next()
	w.none()
}

// A server's request for a client capability mcpx did not declare in
// initialize is warned about once per method (spec 2025-11-25:
// basic/lifecycle, "Operation": only capabilities successfully
// negotiated are used), and answered all the same; a declared one, ping
// and a method of no capability are not.
func TestServerRequestsOfUndeclaredCapabilities(t *testing.T) {
	ch, srv, w := startConnect(t, Options{Lifecycle: &Legacy{Capabilities: json.RawMessage(`{"roots":{"listChanged":true},"elicitation":null}`)}})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25"))
	srv.next()
	if r := waitConnect(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	for i, method := range []string{"sampling/createMessage", "sampling/createMessage", "elicitation/create", "roots/list", "ping", "x/other"} {
		id := fmt.Sprintf(`"s%d"`, i)
		srv.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`)
		if m := srv.next(); m.ID.String() != id {
			t.Fatalf("%s answered with %s", method, m.Raw)
		}
	}
	w.expect("the server sent sampling/createMessage, though mcpx did not declare the sampling capability", `basic/lifecycle, "Operation"`)
	w.expect("the server sent elicitation/create, though mcpx did not declare the elicitation capability")
	w.none()
}

// However many methods a server sends before the handshake ends, what
// mcpx remembers of its warnings stays bounded.
func TestEarlyRequestWarningsBounded(t *testing.T) {
	s, _, w := newTestSession(t, Options{})
	s.life.(*Legacy).phase.Store(handshaking)
	for i := range 2 * maxWarned {
		s.checkRequestTime(&jsonrpc.Message{Method: fmt.Sprintf("x/%d", i)})
	}
	s.mu.Lock()
	n := len(s.warned)
	s.mu.Unlock()
	if n != maxWarned {
		t.Errorf("%d warnings remembered, want %d", n, maxWarned)
	}
	for range maxWarned {
		w.expect("before the session was initialized")
	}
}
