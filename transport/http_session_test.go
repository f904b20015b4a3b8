package transport_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcpx-dev/mcpx/transport"
)

// A session id holding anything but visible ASCII (0x21 to 0x7E; spec
// 2025-11-25: basic/transports, "Session Management"), or longer than
// mcpx takes, is refused: initialize fails naming the byte (escaped) or
// the length, and the id never goes back to the server. mcpx used to
// adopt it and echo it in every request's header. (Other control
// characters and DEL never get this far: net/http refuses the answer.)
func TestSessionIDRefused(t *testing.T) {
	cases := []struct {
		name, id string
		offset   int // -1: refused for its length; -2: accepted
		want     string
	}{
		{"space", "abc def", 3, `the server's Mcp-Session-Id "abc def" holds the byte 0x20 at offset 3, but a session id may hold only visible ASCII (0x21 to 0x7E)`},
		{"tab", "ab\tc", 2, `"ab\x09c" holds the byte 0x09 at offset 2`},
		{"UTF-8", "café", 3, `"café" holds the byte 0xc3 at offset 3`},
		{"too long", strings.Repeat("a", 4097), -1, "is 4097 bytes long, more than the 4 KiB mcpx takes"},
		{"visible ASCII at both ends", "!0~", -2, ""},
		{"as long as taken", strings.Repeat("b", 4096), -2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, bubble(func(t *testing.T) {
			f := &fake{}
			f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.RPC != "initialize" {
					return false
				}
				writeJSON(w, tc.id, `{"jsonrpc":"2.0","id":`+s.ID+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`)
				return true
			}
			_, conn, err := dial(t, transport.HTTPOptions{URL: startFake(t, f)}, nil)
			if tc.offset == -2 {
				if err != nil || conn.SessionID() != tc.id {
					t.Fatalf("connect: %v; session %q", err, conn.SessionID())
				}
				return
			}
			var se *transport.SessionIDError
			if !errors.As(err, &se) || !errors.Is(err, transport.ErrTransport) {
				t.Fatalf("err = %v, want a *SessionIDError", err)
			}
			if se.Offset != tc.offset || se.ID != tc.id {
				t.Errorf("offset %d, id %q; want %d, %q", se.Offset, se.ID, tc.offset, tc.id)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, "POST http://") || len(msg) > 600 {
				t.Errorf("err = %s\nwant it to say %s (and stay short)", msg, tc.want)
			}
			if conn.SessionID() != "" {
				t.Errorf("adopted session %q", conn.SessionID())
			}
			conn.Close()
			for _, s := range f.log.all() {
				if v, ok := s.Header["Mcp-Session-Id"]; ok {
					t.Errorf("%s %s sent Mcp-Session-Id %q", s.Method, s.RPC, v)
				}
			}
		}))
	}
}

// A server that answers with another Mcp-Session-Id than the one it
// assigned at initialization departs from the protocol: the id is
// assigned once, at initialization, and the client sends it with every
// later request (spec 2025-11-25: basic/transports, "Session
// Management"). mcpx keeps the first and says so once, whatever the
// server changes next; it used to keep it without a word. An id that
// matches what the request carried, and the new session's id after the
// server ended the old one (404), are no change.
func TestSessionIDChangedMidSession(t *testing.T) { synctest.Test(t, testSessionIDChangedMidSession) }

func testSessionIDChangedMidSession(t *testing.T) {
	var n atomic.Int32
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		writeJSON(w, fmt.Sprintf("other-%d", n.Add(1)), `{"jsonrpc":"2.0","id":`+s.ID+`,"result":{"tools":[]}}`)
		return true
	}
	rec := newRecorder()
	sess, conn := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, rec)
	for range 3 {
		if _, err := sess.Call(callCtx(t), "tools/list", nil); err != nil {
			t.Fatalf("tools/list: %v", err)
		}
	}
	if _, err := sess.Call(callCtx(t), "ping", nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	synctest.Wait()
	deps := rec.allDepartures()
	want := `/mcp: the answer carries Mcp-Session-Id "other-1", but the server assigned session "s1" at initialization; mcpx goes on sending "s1" (spec: basic/transports, "Session Management": the id is assigned at initialization, and the client sends it with every later request; further changes are not said)`
	if len(deps) != 1 || !strings.Contains(deps[0], want) || !strings.Contains(deps[0], "POST http://") {
		t.Fatalf("departures %q\nwant one with %q", deps, want)
	}
	if id := conn.SessionID(); id != "s1" {
		t.Errorf("session id %q, want s1", id)
	}
	for _, s := range f.log.find("POST", "*") {
		if s.RPC != "initialize" && s.Header.Get("Mcp-Session-Id") != "s1" {
			t.Errorf("%s sent Mcp-Session-Id %q, want s1", s.RPC, s.Header.Get("Mcp-Session-Id"))
		}
	}
}

// The GET stream's answer is checked as a POST's is.
func TestSessionIDChangedOnGET(t *testing.T) { synctest.Test(t, testSessionIDChangedOnGET) }

func testSessionIDChangedOnGET(t *testing.T) {
	f := &fake{}
	f.get = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		w.Header().Set("Mcp-Session-Id", "other-get")
		startSSE(w)
		<-r.Context().Done()
		return true
	}
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f)}, rec)
	if _, err := sess.Call(callCtx(t), "ping", nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	synctest.Wait()
	deps := rec.allDepartures()
	want := `/mcp: the answer carries Mcp-Session-Id "other-get", but the server assigned session "s1" at initialization`
	if len(deps) != 1 || !strings.Contains(deps[0], want) || !strings.HasPrefix(deps[0], "GET http://") {
		t.Fatalf("departures %q\nwant one with %q", deps, want)
	}
	sess.Close()
}
