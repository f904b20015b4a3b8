package record

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// lockedBuffer is output written by one goroutine and read by another.
type lockedBuffer = testwait.Buffer

// stdioProxy runs ProxyStdio with the host's ends returned.
type stdioProxy struct {
	hostIn  *io.PipeWriter // what the host writes
	hostOut *bufio.Reader  // what the host reads
	stderr  *lockedBuffer
	done    chan error
	trace   string
}

func startStdioProxy(t *testing.T, ctx context.Context, server transport.StdioOptions) *stdioProxy {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioProxy{hostIn: inW, hostOut: bufio.NewReader(outR), stderr: &lockedBuffer{}, done: make(chan error, 1), trace: t.TempDir() + "/p.jsonl"}
	rec, err := Create(context.Background(), p.trace, RecorderOptions{Header: Header{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		err := ProxyStdio(ctx, StdioProxyOptions{Server: server, In: inR, Out: outW, Stderr: p.stderr, OnFrame: rec.Frame, OnEvent: rec.Observe, DrainGrace: 5 * time.Second})
		rec.Close()
		outW.Close()
		p.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return p
}

func (p *stdioProxy) readLine(t *testing.T) string {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := p.hostOut.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("reading from the proxy: %v", r.err)
		}
		return r.s
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy sent nothing within 10s")
	}
	return ""
}

func (p *stdioProxy) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy did not end within 15s")
	}
	return nil
}

func TestStdioProxyIsByteTransparent(t *testing.T) {
	t.Parallel()
	p := startStdioProxy(t, context.Background(), helper("echo-lines"))
	// What the server says first arrives exactly as it said it.
	for _, f := range serverOddFrames {
		if got := p.readLine(t); got != f+"\n" {
			t.Fatalf("server frame changed:\n got %q\nwant %q", got, f+"\n")
		}
	}
	// What the host sends reaches the server exactly (it echoes it back).
	hostFrames := append([]string(nil), oddFrames...)
	hostFrames = append(hostFrames, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"crlf\"}\r")
	for _, f := range hostFrames {
		if _, err := io.WriteString(p.hostIn, f+"\n"); err != nil {
			t.Fatal(err)
		}
		if got := p.readLine(t); got != f+"\n" {
			t.Fatalf("host frame changed on the way:\n got %q\nwant %q", got, f+"\n")
		}
	}
	p.hostIn.Close()
	if err := p.wait(t); err != nil {
		t.Fatalf("the host closed its input: ProxyStdio = %v, want nil", err)
	}
	if !strings.Contains(p.stderr.String(), "echo-lines: pid ") || strings.Count(p.stderr.String(), "echo-lines: ") != len(hostFrames)+1 {
		t.Errorf("server stderr not passed through:\n%s", p.stderr.String())
	}
	tr, err := ReadFile(p.trace)
	if err != nil {
		t.Fatal(err)
	}
	var c2s, s2c []string
	for _, e := range tr.Frames() {
		if e.Dir == ClientToServer {
			c2s = append(c2s, string(e.Data))
		} else {
			s2c = append(s2c, string(e.Data))
		}
	}
	if strings.Join(c2s, "\n") != strings.Join(hostFrames, "\n") {
		t.Errorf("recorded client frames differ:\n%q\n%q", c2s, hostFrames)
	}
	if want := append(append([]string(nil), serverOddFrames...), hostFrames...); strings.Join(s2c, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded server frames differ:\n%q\n%q", s2c, want)
	}
	stderrLines := 0
	for _, e := range tr.Events {
		if e.Kind == KindStderr {
			stderrLines++
		}
	}
	if stderrLines != len(hostFrames)+1 {
		t.Errorf("%d stderr lines in the trace", stderrLines)
	}
	// The server ended because the host closed its input: no server gone.
	if n := serverEndedNotes(tr); n != 0 {
		t.Errorf("%d notes that the server closed the connection, after a normal end", n)
	}
}

// serverEndedNotes counts the notes of tr that say the server went away.
func serverEndedNotes(tr *Trace) int {
	n := 0
	for _, e := range tr.Events {
		if e.Kind == KindNote && strings.HasPrefix(e.Text, ServerEndedNote) {
			n++
		}
	}
	return n
}

func TestStdioProxyEndsWhenTheServerDoes(t *testing.T) {
	t.Parallel()
	p := startStdioProxy(t, context.Background(), helper("exit3"))
	err := p.wait(t)
	var pe *transport.PeerExitError
	if !errors.As(err, &pe) || pe.Code != 3 {
		t.Fatalf("ProxyStdio = %v, want the server's exit", err)
	}
	if !strings.Contains(p.stderr.String(), "exit3: giving up") {
		t.Errorf("stderr %q", p.stderr.String())
	}
	// The trace says where the server went away, for replay.
	tr, err := ReadFile(p.trace)
	if err != nil {
		t.Fatal(err)
	}
	if n := serverEndedNotes(tr); n != 1 {
		t.Errorf("%d notes that the server closed the connection, want 1: %+v", n, tr.Events)
	}
}

// A proxy stopped (Ctrl-C) while a request of the host's is unanswered
// notes that it was stopped: the server did not go away there, and a
// replay of the session stays silent instead of ending the connection
// as a crashed server's.
func TestStdioProxyStoppedIsNoServerEnd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startStdioProxy(t, ctx, helper("echo-lines"))
	for range serverOddFrames {
		p.readLine(t)
	}
	const call = `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow"}}`
	if _, err := io.WriteString(p.hostIn, call+"\n"); err != nil {
		t.Fatal(err)
	}
	p.readLine(t) // the helper's echo: the call reached the server
	cancel()
	if err := p.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("ProxyStdio = %v, want context.Canceled", err)
	}
	tr, err := ReadFile(p.trace)
	if err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for _, e := range tr.Events {
		if e.Kind == KindNote && strings.HasPrefix(e.Text, proxyStoppedNote) {
			stopped++
		}
	}
	if stopped != 1 {
		t.Errorf("%d notes that the proxy was stopped, want 1: %+v", stopped, tr.Events)
	}
	if ends, _ := replayEnds(tr); len(ends) > 0 {
		t.Errorf("replay would end the connection after %q, as where the server went away", ends)
	}
}

// A host line over the maximum message size ends the stdio proxy (the
// host sees its stdout close), and the trace notes why: the host's line,
// not the server, ended the session. Before, the trace said nothing, and
// a replay read the request the host had in flight as one the server
// went away on, and ended there as a crashed server.
func TestStdioProxyNotesAHostLineOverTheLimit(t *testing.T) {
	t.Parallel()
	server := helper("echo-lines")
	server.MaxMessageSize = 1 << 10
	p := startStdioProxy(t, context.Background(), server)
	for range serverOddFrames {
		p.readLine(t)
	}
	// A request in flight (the helper echoes it, which answers nothing),
	// then a line over the limit.
	const call = `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow"}}`
	if _, err := io.WriteString(p.hostIn, call+"\n"); err != nil {
		t.Fatal(err)
	}
	p.readLine(t)
	go io.WriteString(p.hostIn, `{"jsonrpc":"2.0","method":"big","params":{"x":"`+strings.Repeat("x", 2<<10)+`"}}`+"\n")
	if err := p.wait(t); !errors.Is(err, transport.ErrFrameTooLarge) {
		t.Fatalf("ProxyStdio = %v, want a message too large", err)
	}
	tr, err := ReadFile(p.trace)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Events {
		if e.Kind == KindNote && strings.HasPrefix(e.Text, hostTooLargeNote) {
			notes = append(notes, e.Text)
		}
	}
	if want := hostTooLargeNote + " (1 KiB); shut the server down"; len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want one %q: %+v", notes, want, tr.Events)
	}
	if n := serverEndedNotes(tr); n != 0 {
		t.Errorf("%d notes that the server closed the connection", n)
	}
	if ends, _ := replayEnds(tr); len(ends) > 0 {
		t.Errorf("replay would end the connection after %q, as where the server went away", ends)
	}
}

// A server line over the maximum message size ends the stdio proxy too
// (the host sees its server's output close), and the trace notes why:
// the server's line ended the session, so a replay ends the connection
// there as the server's end. Before, the proxy ended without a note, and
// the trace read as a host that left with its request unanswered.
func TestStdioProxyNotesAServerLineOverTheLimit(t *testing.T) {
	t.Parallel()
	server := helper("echo-lines", "ECHO_LINES_BIG=2048")
	server.MaxMessageSize = 1 << 10
	p := startStdioProxy(t, context.Background(), server)
	for range serverOddFrames {
		p.readLine(t)
	}
	// A request in flight (the helper echoes it, which answers nothing),
	// then a notification the helper answers with a line over the limit.
	const call = `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow"}}`
	if _, err := io.WriteString(p.hostIn, call+"\n"); err != nil {
		t.Fatal(err)
	}
	p.readLine(t)
	if _, err := io.WriteString(p.hostIn, `{"jsonrpc":"2.0","method":"notifications/big"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); !errors.Is(err, transport.ErrFrameTooLarge) {
		t.Fatalf("ProxyStdio = %v, want a message too large", err)
	}
	tr, err := ReadFile(p.trace)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Events {
		if e.Kind == KindNote && strings.HasPrefix(e.Text, serverTooLargeNote) {
			notes = append(notes, e.Text)
		}
	}
	if want := serverTooLargeNote + " (1 KiB); shut the server down"; len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want one %q: %+v", notes, want, tr.Events)
	}
	ends, exits := replayEnds(tr)
	for _, exit := range exits {
		if exit == nil || exit.Status != serverTooLargeNote+" (1 KiB)" {
			t.Errorf("the end says %+v, want the line over the limit", exit)
		}
	}
	if !slices.Equal(ends, []string{"tools/call"}) {
		t.Errorf("replay ends the connection after %q, want after the tools/call in flight", ends)
	}
}

// startHTTPProxy serves a recording proxy for upstream and returns its
// URL and the trace file; readTrace flushes the recording and reads it.
func startHTTPProxy(t *testing.T, upstream string) (string, func() (*Trace, error)) {
	t.Helper()
	return startHTTPProxyWith(t, HTTPProxyOptions{Upstream: upstream})
}

// startHTTPProxyWith is startHTTPProxy with more options (o.Recorder is
// set to the trace's).
func startHTTPProxyWith(t *testing.T, o HTTPProxyOptions) (string, func() (*Trace, error)) {
	t.Helper()
	name := t.TempDir() + "/h.jsonl"
	rec, err := Create(context.Background(), name, RecorderOptions{Header: Header{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	o.Recorder = rec
	p, err := NewHTTPProxy(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		rec.Close()
	})
	return srv.URL, func() (*Trace, error) {
		if err := rec.Flush(); err != nil {
			return nil, err
		}
		return ReadFile(name)
	}
}

func TestHTTPProxyStreamable(t *testing.T) {
	t.Parallel()
	up := testservers.Streamable(t, newTestServer(""), nil, nil)
	proxyURL, readTrace := startHTTPProxy(t, up)
	direct, err := transport.NewHTTP(transport.HTTPOptions{URL: up})
	if err != nil {
		t.Fatal(err)
	}
	want := exercise(t, direct, sdkCalls)
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: proxyURL + "/mcp", Mode: transport.ModeStreamable, Authorizer: transport.BearerToken("SECRET-BEARER")})
	if err != nil {
		t.Fatal(err)
	}
	got := exercise(t, conn, sdkCalls)
	// The "now" tool's time differs; everything else is the same.
	for i := range want.results {
		if !strings.Contains(want.results[i], `"at"`) && want.results[i] != got.results[i] {
			t.Errorf("result %d through the proxy:\n%s\nwant %s", i, got.results[i], want.results[i])
		}
	}
	if len(got.progress) != 3 || len(got.serverRequests) != 1 {
		t.Errorf("progress %q, server requests %q through the proxy", got.progress, got.serverRequests)
	}
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	tr.WriteTo(&all)
	if bytes.Contains(all.Bytes(), []byte("SECRET-BEARER")) {
		t.Error("the bearer token is in the trace")
	}
	var methods []string
	sessions := map[string]bool{}
	for _, e := range tr.Events {
		if e.Meta != nil && e.Meta.SessionID != "" {
			sessions[e.Meta.SessionID] = true
		}
		if e.Kind == KindFrame {
			for _, m := range func() []*jsonrpc.Message { ms, _ := parseFrame(e.Data); return ms }() {
				if m.Method != "" {
					methods = append(methods, string(e.Dir)+" "+m.Method)
				}
			}
		}
	}
	for _, w := range []string{"c2s initialize", "c2s tools/call", "s2c notifications/progress", "s2c roots/list", "c2s prompts/get"} {
		if !strings.Contains(strings.Join(methods, "\n"), w) {
			t.Errorf("the trace lacks %q: %q", w, methods)
		}
	}
	if len(sessions) != 1 {
		t.Errorf("session ids in the trace: %v", sessions)
	}
	// And the trace replays to the same results.
	checkSameSession(t, got, replayOverPipe(t, tr, sdkCalls))
}

func TestHTTPProxyLegacySSE(t *testing.T) {
	t.Parallel()
	up := testservers.SSE(t, testservers.NewServer(), nil)
	proxyURL, readTrace := startHTTPProxy(t, up)
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: proxyURL + "/sse", Mode: transport.ModeSSE})
	if err != nil {
		t.Fatal(err)
	}
	res := exercise(t, conn, []call{{method: "tools/call", params: `{"name":"echo","arguments":{"message":"via sse"}}`}})
	if !strings.Contains(res.results[1], "Echo: via sse") {
		t.Errorf("result %s", res.results[1])
	}
	if d, ok := any(conn).(transport.Describer); ok && !strings.Contains(d.Describe(), proxyURL) {
		t.Errorf("the client does not post to the proxy: %s", d.Describe())
	}
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	rewritten := false
	frames := 0
	for _, e := range tr.Events {
		rewritten = rewritten || e.Kind == KindNote && strings.Contains(e.Text, "endpoint event") && strings.Contains(e.Text, proxyURL)
		if e.Kind == KindFrame {
			frames++
		}
	}
	if !rewritten || frames < 4 {
		t.Errorf("rewritten %v, %d frames", rewritten, frames)
	}
}

// Each HTTP+SSE host connection is a session of its own, also when the
// host connects again from the same address (the Inspector CLI, one
// connection per command): the 202 its initialize POST gets, without an
// Mcp-Session-Id, does not make the session one whose later GET (the next
// connection's stream) belongs to it.
func TestHTTPProxyLegacySSESessionPerConnection(t *testing.T) {
	t.Parallel()
	up := testservers.SSE(t, testservers.NewServer(), nil)
	proxyURL, readTrace := startHTTPProxy(t, up)
	for range 3 {
		conn, err := transport.NewHTTP(transport.HTTPOptions{URL: proxyURL + "/sse", Mode: transport.ModeSSE})
		if err != nil {
			t.Fatal(err)
		}
		exercise(t, conn, []call{{method: "tools/call", params: `{"name":"echo","arguments":{"message":"via sse"}}`}})
	}
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != 3 {
		t.Fatalf("%d sessions, want 3", len(ss))
	}
	for _, s := range ss {
		inits := 0
		for _, e := range s.Events {
			if e.Kind == KindFrame && e.Dir == ClientToServer && bytes.Contains(e.Data, []byte(`"initialize"`)) {
				inits++
			}
		}
		if inits != 1 || s.Info.Transport != "sse" {
			t.Errorf("session %d: %d initialize, info %+v", s.N, inits, s.Info)
		}
	}
}

func TestHTTPProxyStreamsWithoutBuffering(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release: // sent only once the first event went through the proxy
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "id: 2\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n")
	}))
	defer upstream.Close()
	proxyURL, readTrace := startHTTPProxy(t, upstream.URL+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", proxyURL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"slow"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != "id: 1\n" {
		t.Fatalf("first line %q, %v (the proxy buffered the stream?)", first, err)
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if want := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\nid: 2\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n"; string(rest) != want {
		t.Errorf("stream changed:\n got %q\nwant %q", rest, want)
	}
	cancel()
	// The multi-line event is one frame, its lines joined with \n.
	deadline := time.Now().Add(5 * time.Second)
	for {
		tr, err := readTrace()
		if err == nil && len(tr.Frames()) == 3 {
			if got := string(tr.Frames()[2].Data); got != "{\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}" || tr.Frames()[2].Meta.EventID != "2" {
				t.Errorf("last frame %q meta %+v", got, tr.Frames()[2].Meta)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace: %v %+v", err, tr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHTTPProxyEverything(t *testing.T) {
	t.Parallel() // mostly waiting for node to start
	up := testservers.Everything(t, "streamableHttp")
	proxyURL, readTrace := startHTTPProxy(t, up)
	conn, err := transport.NewHTTP(transport.HTTPOptions{URL: proxyURL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	res := exercise(t, conn, []call{{method: "tools/call", params: `{"name":"get-sum","arguments":{"a":2,"b":3}}`}})
	if !strings.Contains(res.results[1], "5") {
		t.Errorf("result %s", res.results[1])
	}
	if tr, err := readTrace(); err != nil || len(tr.Frames()) < 4 {
		t.Errorf("trace: %v", err)
	}
}

func TestHTTPProxyBadUpstream(t *testing.T) {
	t.Parallel()
	if _, err := NewHTTPProxy(HTTPProxyOptions{Upstream: "ftp://x"}); err == nil {
		t.Error("ftp upstream accepted")
	}
	proxyURL, _ := startHTTPProxy(t, "http://127.0.0.1:1/mcp")
	resp, err := http.Post(proxyURL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
}

// Each host connection through the HTTP proxy is a session of its own
// (defect 2), also when two overlap; a session-less GET (an HTTP+SSE
// client) opens one too.
func TestHTTPProxySessionPerConnection(t *testing.T) {
	t.Parallel()
	up := testservers.Streamable(t, newTestServer(""), nil, nil)
	proxyURL, readTrace := startHTTPProxy(t, up)
	dial := func() transport.Conn {
		conn, err := transport.NewHTTP(transport.HTTPOptions{URL: proxyURL + "/mcp", Mode: transport.ModeStreamable})
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}
	exercise(t, dial(), sdkCalls[:1])
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			exercise(t, dial(), sdkCalls[:2])
		}()
	}
	wg.Wait()
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != 3 {
		t.Fatalf("%d sessions, want 3", len(ss))
	}
	for _, s := range ss {
		inits, ids := 0, map[string]bool{}
		for _, e := range s.Events {
			if e.Meta != nil && e.Meta.SessionID != "" {
				ids[e.Meta.SessionID] = true
			}
			if e.Kind == KindFrame && e.Dir == ClientToServer && bytes.Contains(e.Data, []byte(`"initialize"`)) {
				inits++
			}
		}
		if inits != 1 || len(ids) != 1 || s.Info.Transport != "http" || !strings.HasPrefix(s.Info.Client, "127.0.0.1:") {
			t.Errorf("session %d: %d initialize, session ids %v, info %+v", s.N, inits, ids, s.Info)
		}
	}
}

// An upstream's SSE priming event is stream metadata, not a frame (defect
// 9); a refusal without a JSON-RPC body is an http event tied to its
// request, and a JSON-RPC error in a 4xx body stays a frame (defect 6).
func TestHTTPProxyPrimingAndRefusals(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte(`"initialize"`)):
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Mcp-Session-Id", "S1")
			io.WriteString(w, "id: 0\nretry: 1500\ndata: \n\n")
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"u","version":"1"}}}`+"\n\n")
		case bytes.Contains(body, []byte(`"tools/list"`)):
			http.Error(w, "Bad Request: no valid session", http.StatusBadRequest)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such method"}}`)
		}
	}))
	defer up.Close()
	proxyURL, readTrace := startHTTPProxy(t, up.URL)
	send := func(sid, body string) *http.Response {
		req, _ := http.NewRequest("POST", proxyURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	send("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if resp := send("S1", `{"jsonrpc":"2.0","id":"two","method":"tools/list"}`); resp.StatusCode != 400 {
		t.Errorf("status %d", resp.StatusCode)
	}
	send("S1", `{"jsonrpc":"2.0","id":3,"method":"nope"}`)
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	ss := tr.Sessions()
	if len(ss) != 1 {
		t.Fatalf("%d sessions", len(ss))
	}
	var frames, streams, refusals int
	for _, e := range ss[0].Events {
		switch e.Kind {
		case KindFrame:
			frames++
			if len(bytes.TrimSpace(e.Data)) == 0 {
				t.Errorf("an empty frame: %+v", e)
			}
		case KindStream:
			streams++
			if e.Retry != 1500*time.Millisecond || e.Meta.EventID != "0" {
				t.Errorf("stream event %+v", e)
			}
		case KindHTTP:
			if e.Re != nil {
				refusals++
				if string(e.Re) != `"two"` || e.Meta.HTTPStatus != 400 || !strings.Contains(e.Text, "no valid session") {
					t.Errorf("refusal %+v", e)
				}
			}
		}
	}
	if frames != 5 || streams != 1 || refusals != 1 {
		t.Errorf("%d frames, %d stream events, %d refusals:\n%+v", frames, streams, refusals, ss[0].Events)
	}
}

// The recording proxy forgets a session id once the session is over: the
// upstream answered 404 (it does not know the id) or a DELETE of it
// succeeded. Before, every id a client sent stayed in the proxy's table,
// so a client sending made-up ids grew it without bound.
func TestHTTPProxyForgetsEndedSessions(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch sid := r.Header.Get("Mcp-Session-Id"); {
		case sid == "live" && r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case sid == "live":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		default:
			http.Error(w, "Not Found: no such session", http.StatusNotFound)
		}
	}))
	defer upstream.Close()
	name := t.TempDir() + "/h.jsonl"
	rec, err := Create(context.Background(), name, RecorderOptions{Header: Header{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upstream.URL, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	send := func(method, sid string) int {
		req, _ := http.NewRequest(method, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	known := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.byID)
	}
	for i := 0; i < 50; i++ {
		if got := send(http.MethodPost, fmt.Sprint("made-up-", i)); got != http.StatusNotFound {
			t.Fatalf("made-up id: %d, want the upstream's 404", got)
		}
	}
	if n := known(); n != 0 {
		t.Errorf("after 50 made-up ids the upstream refused, the proxy knows %d", n)
	}
	if got := send(http.MethodPost, "live"); got != http.StatusOK || known() != 1 {
		t.Errorf("a live session: %d, %d known; want 200, 1", got, known())
	}
	if got := send(http.MethodDelete, "live"); got != http.StatusOK || known() != 0 {
		t.Errorf("DELETE of the live session: %d, %d known; want 200, 0", got, known())
	}
}

// A host's credentials (its bearer token, its cookies) that the upstream
// server echoes (in a result, in a refusal's body) are redacted from the
// proxy's trace.
func TestHTTPProxyRedactsEchoedHostCredentials(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c, _ := r.Cookie("sid")
		who := r.Header.Get("Authorization") + " / " + c.Value
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			http.Error(w, "Bad Request: who is "+who+"?", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"`+who+`","version":"1"}}}`)
	}))
	defer up.Close()
	proxyURL, readTrace := startHTTPProxy(t, up.URL)
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`} {
		req, _ := http.NewRequest("POST", proxyURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer host-BEARER-0001")
		req.AddCookie(&http.Cookie{Name: "sid", Value: "host-COOKIE-0002"})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	tr.WriteTo(&all)
	if bytes.Contains(all.Bytes(), []byte("host-")) || !bytes.Contains(all.Bytes(), []byte(`"name":"[redacted] / [redacted]"`)) {
		t.Errorf("the trace:\n%s", all.Bytes())
	}
}

// An upstream that goes away mid-request (it closes the connection
// without answering) gets the host an immediate 502 from the proxy; the
// trace records that answer, as a refusal of the request, so that a
// replay answers the POST the same way at once. Before, the trace held
// only a note ("POST … failed: EOF"), and the replay left the POST open
// until the host gave up. One failed exchange is no end of an HTTP
// server (mcpx's own --record notes no server end either): the trace has
// no ServerEndedNote, and the session goes on.
func TestHTTPProxyUpstreamGoneMidRequest(t *testing.T) {
	t.Parallel()
	const initResult = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"u","version":"1"}}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte(`"initialize"`)):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "S1")
			io.WriteString(w, initResult)
		case bytes.Contains(body, []byte(`"tools/call"`)):
			// The server goes away while handling the call.
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":3,"result":{}}`)
		}
	}))
	defer up.Close()
	proxyURL, readTrace := startHTTPProxy(t, up.URL)
	const (
		initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		call       = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom"}}`
		ping       = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	)
	postRead(t, proxyURL, "", initialize)
	resp, live := postRead(t, proxyURL, "S1", call)
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(live, "mcpx proxy: ") {
		t.Fatalf("the call through the proxy: %d %q, want 502 from the proxy", resp.StatusCode, live)
	}
	liveType := resp.Header.Get("Content-Type")
	if resp, _ := postRead(t, proxyURL, "S1", ping); resp.StatusCode != http.StatusOK {
		t.Fatalf("a request after the failed one: %d", resp.StatusCode)
	}
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	if n := serverEndedNotes(tr); n != 0 {
		t.Errorf("%d notes that the server closed the connection, want none: %+v", n, tr.Events)
	}
	refusals := 0
	for _, e := range tr.Events {
		if e.Kind == KindHTTP && e.Re != nil {
			refusals++
			if string(e.Re) != "2" || e.Meta == nil || e.Meta.HTTPStatus != http.StatusBadGateway || e.Text != strings.TrimSpace(live) {
				t.Errorf("refusal %+v, want 502 for id 2 with the body %q", e, live)
			}
		}
	}
	if refusals != 1 {
		t.Errorf("%d refusals in the trace, want 1: %+v", refusals, tr.Events)
	}

	// The replay answers the call as the host saw it, at once, and goes on.
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	resp, _ = postRead(t, srv.URL, "", initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	resp, got := postRead(t, srv.URL, sid, call)
	if resp.StatusCode != http.StatusBadGateway || got != strings.TrimSpace(live) || resp.Header.Get("Content-Type") != liveType {
		t.Errorf("replayed call: %d %s %q, want 502 %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), got, liveType, live)
	}
	if resp, got := postRead(t, srv.URL, sid, ping); resp.StatusCode != http.StatusOK || got != ping[:len(ping)-len(`"method":"ping"}`)]+`"result":{}}` {
		t.Errorf("replayed ping after the call: %d %q", resp.StatusCode, got)
	}
	// Verified against the replay, it matches; against a server that goes
	// away again, the report says so, and that the recording's did too.
	if res := verifyAgainst(t, tr, newHTTPConn(t, srv.URL), VerifyOptions{Timeout: 2 * time.Second}); !res.OK() || res.Exchanges != 3 {
		t.Errorf("verify against the replay: %s", reportOf(res))
	}
	res := verifyAgainst(t, tr, newHTTPConn(t, up.URL), VerifyOptions{Timeout: 2 * time.Second})
	if len(res.Mismatches) != 1 || !strings.Contains(res.Mismatches[0].Problem, "closed the connection without answering (EOF); the recording has a refusal, HTTP 502: mcpx proxy: the upstream server closed the connection without answering") {
		t.Errorf("verify against the upstream: %s", reportOf(res))
	}
}

// An upstream error status whose body is over the size limit gets the
// host the proxy's 502, not the upstream's status: a replay answers the
// request with that 502 too, whatever the upstream's body's type (an
// older trace's untied refusal of the POST must not claim it first).
func TestHTTPProxyOversizedErrorBodyReplaysAsThe502(t *testing.T) {
	t.Parallel()
	const limit = 4096
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"initialize"`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "S1")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"u","version":"1"}}}`)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, strings.Repeat("x", 2*limit))
	}))
	defer up.Close()
	proxyURL, readTrace := startHTTPProxyWith(t, HTTPProxyOptions{Upstream: up.URL, MaxMessageSize: limit})
	const (
		initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		call       = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big"}}`
	)
	postRead(t, proxyURL, "", initialize)
	resp, live := postRead(t, proxyURL, "S1", call)
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("the call through the proxy: %d %q, want the proxy's 502", resp.StatusCode, live)
	}
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	resp, _ = postRead(t, srv.URL, "", initialize)
	resp, got := postRead(t, srv.URL, resp.Header.Get("Mcp-Session-Id"), call)
	if resp.StatusCode != http.StatusBadGateway || got != strings.TrimSpace(live) {
		t.Errorf("replayed call: %d %q, want 502 %q", resp.StatusCode, got, live)
	}
}

// postRead POSTs one JSON-RPC body as a Streamable HTTP client does (in
// session sid, when set) and returns the answer with its body read,
// within a few seconds.
func postRead(t *testing.T, url, sid, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// replayEnds returns the methods of the requests after which a replay of
// tr's first session ends the connection (as where the server went away),
// with how it says the server ended at each.
func replayEnds(tr *Trace) (methods []string, exits []*ServerEnd) {
	sc := buildScript(tr.Sessions()[0], tr.Header.Minor >= minorNotesEnds, nil, nil, nil)
	for _, st := range sc.steps {
		for _, o := range st.follow {
			if o.end {
				methods = append(methods, st.method)
				exits = append(exits, o.exit)
			}
		}
	}
	return methods, exits
}

// A host that closes its connection mid-stream (it gave up on a call,
// or went away) is noted in the trace, and the proxy closes the
// upstream's stream with it; a proxy stopped with a stream open notes
// that it was stopped instead, as the stdio proxy does, so that a trace
// cut either way says so rather than ending on a request unanswered.
func TestHTTPProxyNotesStreamsCut(t *testing.T) {
	t.Parallel()
	upstreamDone := make(chan struct{}, 2)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the answer never comes
		upstreamDone <- struct{}{}
	}))
	defer up.Close()
	name := t.TempDir() + "/h.jsonl"
	rec, err := Create(context.Background(), name, RecorderOptions{Header: Header{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: up.URL, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	// Each part serves the proxy on a server of its own, whose Close
	// waits for the proxy's handlers.
	srv := httptest.NewServer(p)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// open posts a call and reads its stream's first event.
	open := func(ctx context.Context, id int) *http.Response {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow"}}`, id)
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "id: 1\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
		return resp
	}
	notes := func() []string {
		t.Helper()
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range tr.Events {
			if e.Kind == KindNote {
				out = append(out, e.Text)
			}
		}
		return out
	}
	waitUpstream := func(what string) {
		t.Helper()
		select {
		case <-upstreamDone:
		case <-ctx.Done():
			t.Fatalf("%s: the upstream's stream was left open", what)
		}
	}

	// The host gives up on the call: its connection closes.
	hctx, hcancel := context.WithCancel(ctx)
	resp := open(hctx, 1)
	hcancel()
	resp.Body.Close()
	waitUpstream("the host gone")
	srv.Close()
	const hostLeft = "SSE post-1: the host closed its connection before the end; the proxy closed the upstream's too"
	if got := notes(); !slices.Equal(got, []string{hostLeft}) {
		t.Fatalf("notes %q, want %q", got, hostLeft)
	}

	// The proxy is stopped with a call's stream open.
	srv = httptest.NewServer(p)
	defer srv.Close()
	resp = open(ctx, 2)
	defer resp.Body.Close()
	p.Stop("interrupted")
	srv.CloseClientConnections()
	waitUpstream("the proxy stopped")
	srv.Close()
	got := notes()
	want := []string{hostLeft, proxyStoppedNote + " (interrupted); closed its connections to the upstream"}
	if !slices.Equal(got, want) {
		t.Errorf("notes:\n got %q\nwant %q", got, want)
	}
}
