package transport_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

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
