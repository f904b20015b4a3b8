package cmd

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// startupNotifier is a Streamable HTTP server (2025-11-25, no session)
// that answers logging/setLevel on an SSE stream carrying, before the
// result, the notifications a server sends as a session starts: they
// reach mcpx while it is still setting the session up.
func startupNotifier(t *testing.T) string {
	t.Helper()
	return fakeHTTPServer(t, func(w http.ResponseWriter, m fakeRequest) {
		switch {
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"early","version":"1"}}}`, m.ID)
		case m.Method == "logging/setLevel":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"early bird\"}}\n\n")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", m.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	})
}

// watch prints every notification on stdout, the ones the server sends
// while the session is being set up (here during logging/setLevel) too:
// they were shown on stderr instead, and a list_changed among them not
// at all.
func TestWatchShowsNotificationsOfTheStartUp(t *testing.T) {
	t.Parallel()
	u := startupNotifier(t)
	r := runMcpx(t, nil, "watch", "--for", "1ms", "--log-level", "debug", "--url", u)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"notifications/tools/list_changed", "early bird"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\nstdout: %s\nstderr: %s", want, r.stdout, r.stderr)
		}
	}
	r = runMcpx(t, nil, "watch", "--for", "1ms", "--log-level", "debug", "--json", "--url", u)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != ExitOK || len(lines) != 2 ||
		!strings.Contains(lines[0], `"notifications/tools/list_changed"`) || !strings.Contains(lines[1], `"early bird"`) {
		t.Errorf("--json: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
