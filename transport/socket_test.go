//go:build unix

package transport_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/transport"
)

// lines is a log the socket's server writes to from its handlers.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A server on a Unix socket (unix:///PATH#/mcp, as VS Code names one) is
// reached over the socket, with requests for http://localhost and the
// fragment's path; mcpx shows and records the unix:// URL, never the
// http://localhost one.
func TestUnixSocketStreamable(t *testing.T) {
	t.Parallel()
	log := &lines{}
	sock := testservers.UnixSocket(t, log)
	u := "unix://" + sock + "#/mcp"
	rec := newRecorder()
	sess, conn := mustDial(t, transport.HTTPOptions{URL: u, Mode: transport.ModeAuto}, rec)
	if got := toolText(t, sess, "echo", map[string]any{"message": "over the socket"}); got != "Echo: over the socket" {
		t.Errorf("echo = %q", got)
	}
	if d := conn.Describe(); !strings.HasPrefix(d, "streamable-http: "+u) {
		t.Errorf("Describe = %q", d)
	}
	if got := log.String(); !strings.Contains(got, "unix: POST /mcp Host: localhost\n") || strings.Contains(got, " /mcp#") {
		t.Errorf("the server got:\n%s", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, ev := range rec.events {
		if strings.Contains(ev.Text, "localhost") {
			t.Errorf("an event shows the request's URL: %q", ev.Text)
		}
		if ev.Meta != nil && ev.Meta.URL != "" && ev.Meta.URL != u {
			t.Errorf("an event's URL is %q, want %q", ev.Meta.URL, u)
		}
	}
}

// HTTP+SSE over a socket: the endpoint event's URL (a path and a query on
// http://localhost) is the socket's, as the unix:// URL with that query
// and the path in the fragment, and the messages go there.
func TestUnixSocketSSE(t *testing.T) {
	t.Parallel()
	log := &lines{}
	sock := testservers.UnixSocket(t, log)
	u := "unix://" + sock + "#/sse"
	sess, conn := mustDial(t, transport.HTTPOptions{URL: u, Mode: transport.ModeSSE}, nil)
	if got := toolText(t, sess, "add", map[string]any{"a": 2, "b": 40}); got != "42" {
		t.Errorf("add = %q", got)
	}
	d := conn.Describe()
	if !strings.Contains(d, "messages to unix://"+sock+"?sessionid=") || !strings.Contains(d, "#/sse") {
		t.Errorf("Describe = %q", d)
	}
	if got := log.String(); !strings.Contains(got, "unix: GET /sse Host: localhost\n") || !strings.Contains(got, "unix: POST /sse?sessionid=") {
		t.Errorf("the server got:\n%s", got)
	}
}

// Without a fragment the path is "/"; the query of the unix:// URL is
// the request's.
func TestUnixSocketRootPath(t *testing.T) {
	t.Parallel()
	log := &lines{}
	sock := testservers.UnixSocket(t, log)
	_, _, err := dial(t, transport.HTTPOptions{URL: "unix://" + sock + "?x=1", Mode: transport.ModeStreamable}, nil)
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.Status != 404 {
		t.Fatalf("err = %v, want the server's 404", err)
	}
	if got := log.String(); got != "unix: POST /?x=1 Host: localhost\n" {
		t.Errorf("the server got:\n%s", got)
	}
	if !strings.Contains(err.Error(), "unix://"+sock+"?x=1") {
		t.Errorf("the error does not name the URL: %v", err)
	}
}

// A redirect is followed on the socket; one to another address is not
// followed off it, and nothing is dialed there.
func TestUnixSocketRedirects(t *testing.T) {
	t.Parallel()
	sock := testservers.UnixSocket(t, nil)
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: "unix://" + sock + "#/moved", Mode: transport.ModeStreamable}, rec)
	if got := toolText(t, sess, "echo", map[string]any{"message": "moved"}); got != "Echo: moved" {
		t.Errorf("echo = %q", got)
	}
	// Told of with the socket's URLs.
	if notes := rec.eventText(transport.EventNote); !strings.Contains(notes, "POST unix://"+sock+"#/moved: HTTP 307 redirect to unix://"+sock+"#/mcp (same origin): following it") {
		t.Errorf("notes:\n%s", notes)
	}
	// An error after a redirect names the URL that answered as the
	// socket's.
	_, _, err := dial(t, transport.HTTPOptions{URL: "unix://" + sock + "#/moved", Mode: transport.ModeSSE}, nil)
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.AnsweredBy != "unix://"+sock+"#/mcp" {
		t.Errorf("err = %v, want an HTTP error answered by unix://%s#/mcp", err, sock)
	}
	// A GET (the HTTP+SSE stream) would be followed to another origin:
	// not from a socket.
	_, _, err = dial(t, transport.HTTPOptions{URL: "unix://" + sock + "#/away", Mode: transport.ModeSSE}, nil)
	if !errors.Is(err, transport.ErrConnect) || !strings.Contains(err.Error(), "not at 127.0.0.1:1") {
		t.Errorf("err = %v, want a refusal to leave the socket", err)
	}
	// A POST's redirect off the socket is refused naming the socket's URL.
	_, _, err = dial(t, transport.HTTPOptions{URL: "unix://" + sock + "#/away", Mode: transport.ModeStreamable}, nil)
	var re *transport.RedirectError
	if !errors.As(err, &re) || re.From != "unix://"+sock+"#/away" || re.To != "http://127.0.0.1:1/mcp" {
		t.Errorf("err = %v, want the redirect refused", err)
	}
}

// A socket that is not there is a failure to connect naming it.
func TestUnixSocketMissing(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "mx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "none.sock")
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: "unix://" + sock + "#/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Write(callCtx(t), transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	if !errors.Is(err, transport.ErrConnect) || !strings.Contains(err.Error(), "POST unix://"+sock+"#/mcp: dial unix "+sock) {
		t.Errorf("err = %v", err)
	}
}
