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

// resources subscribe, a one-shot command, shows list_changed
// notifications only with -v, as every one-shot command does (README,
// "Session flags"): many servers announce their lists as a session
// starts, and the subscription's own output sink printed them all on
// stderr. Other notifications still go there.
func TestSubscribeHidesListChangedUnlessVerbose(t *testing.T) {
	t.Parallel()
	u := fakeHTTPServer(t, func(w http.ResponseWriter, m fakeRequest) {
		switch m.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"resources":{"subscribe":true,"listChanged":true}},"serverInfo":{"name":"lists","version":"1"}}}`, m.ID)
		case "resources/subscribe":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"subscribed here\"}}\n\n")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", m.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	})
	args := []string{"resources", "subscribe", "test://x", "--for", "1ms", "--url", u}
	r := runMcpx(t, nil, args...)
	if r.code != ExitOK || strings.Contains(r.stderr, "list_changed") || !strings.Contains(r.stderr, "subscribed here") {
		t.Errorf("exit %d: want the log message and no list_changed on stderr:\n%s", r.code, r.stderr)
	}
	r = runMcpx(t, nil, append(args, "-v")...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "notifications/resources/list_changed") {
		t.Errorf("-v: exit %d: want the list_changed on stderr:\n%s", r.code, r.stderr)
	}
}
