package record

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestReplayHandlerSessions(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()

	// Without a session, only initialize is accepted.
	if r := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusBadRequest {
		t.Errorf("no session: %d", r.StatusCode)
	}
	if r := post(t, srv.URL, "nope", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %d", r.StatusCode)
	}
	// Two sessions, each replayed from the start, answered with JSON.
	var ids []string
	for i := 0; i < 2; i++ {
		r := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}`)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || string(body) != `{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":"2025-11-25"}}` {
			t.Fatalf("initialize: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), body)
		}
		ids = append(ids, r.Header.Get("Mcp-Session-Id"))
	}
	if ids[0] == "" || ids[0] == ids[1] {
		t.Fatalf("session ids %q", ids)
	}
	// The notification sent after notifications/initialized waits for a
	// GET stream; it is parked until one opens.
	if r := post(t, srv.URL, ids[0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		t.Errorf("notification: %d", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	buf := make([]byte, 4096)
	n, _ := io.ReadAtLeast(get.Body, buf, len("event: message\ndata: {}\n\n"))
	if got := string(buf[:n]); !strings.Contains(got, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`) {
		t.Errorf("GET stream: %q", got)
	}
	// DELETE ends a session; it is then unknown.
	del, _ := http.NewRequest("DELETE", srv.URL, nil)
	del.Header.Set("Mcp-Session-Id", ids[1])
	if r, err := http.DefaultClient.Do(del); err != nil || r.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", r, err)
	}
	if r := post(t, srv.URL, ids[1], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: %d", r.StatusCode)
	}
	if r := post(t, srv.URL, ids[0], `{"jsonrpc":"2.0","id":9,"method":"ping"}`); r.StatusCode != 200 {
		t.Errorf("the other session: %d", r.StatusCode)
	} else if b, _ := io.ReadAll(r.Body); string(b) != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Errorf("ping: %s", b)
	}
	req, _ = http.NewRequest("PUT", srv.URL, nil)
	if r, _ := http.DefaultClient.Do(req); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", r.StatusCode)
	}
}
