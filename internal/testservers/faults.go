package testservers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Faults is an HTTP MCP server that fails on purpose, one way per path,
// for the fault matrix of mcpx's end-to-end tests. It is written by hand
// (no SDK) so that it can break the transports' rules, and it logs what
// it saw, one line per event ("PATH HTTP-METHOD [JSON-RPC method]",
// "PATH stream closed by the client", ...), so that tests can check what
// reached the server.
//
// The legacy HTTP+SSE transport (2024-11-05), GET /legacy/FAULT opens the
// stream; its endpoint event names /legacy/FAULT/messages?s=N:
//
//	ok       behaves (echo answers "Echo: MESSAGE")
//	drop     the stream closes when tools/call arrives (the POST itself is
//	         accepted): the answer never comes
//	post500  tools/call is refused with HTTP 500
//	hang     tools/call is accepted and never answered
//	get500   the GET is refused with HTTP 503
//	eof      the stream ends before any endpoint event
//	silent   the stream stays open and says nothing
//	badurl   the endpoint event is not a URL
//	foreign  the endpoint event names another origin (a second server,
//	         which logs "foreign HTTP-METHOD" for anything it receives)
//
// The stateless Streamable HTTP of 2026-07-28, POST /modern/FAULT
// (server/discover and tools/list behave unless said otherwise):
//
//	ok        tools/call answers "Echo: MESSAGE" on an SSE stream
//	drop      tools/call gets an SSE stream with one progress notification,
//	          then the stream closes without the response
//	500       tools/call is refused with HTTP 500
//	rpc400    tools/call gets HTTP 400 with a JSON-RPC error as the body
//	down      every request is refused with HTTP 503
//	discover  server/discover answers a result that is not a DiscoverResult
//	resulttype tools/call answers resultType "mystery", which no revision
//	          defines
//	noinput   tools/call answers input_required with neither inputRequests
//	          nor requestState
//	hang      tools/call gets an SSE stream that stays silent
//	progress  tools/call gets an SSE stream of progress notifications that
//	          never ends with the response
//	droplist  every other tools/list (the first, the third, …) gets an SSE
//	          stream that closes without the response
//
// Streamable HTTP with a session (2025-11-25), /session/progress:
// initialize assigns a session, GET is refused with 405, tools/call gets an
// endless stream of progress notifications, and DELETE is logged;
// /session/comments: initialize gets an SSE stream of comments (keep-alives)
// that never carries the result; /session/overrun: the answer to ping
// is followed, on the same connection, by bytes past its Content-Length
// (an HTTP response nobody asked for); /session/pingpong: every POST that
// carries no request (a notification, a response) is answered with 200
// and a new ping request as its JSON body, where the spec has 202 and no
// body (a client that reads it answers, and is answered again);
// /session/pingpong202: the same, under 202 Accepted;
// /session/empty200: every POST that carries no request is answered with
// an empty 200 OK, where the spec has 202 Accepted; /session/getelsewhere:
// the GET stream is redirected (307) to the foreign origin;
// /session/newid: every answer after initialize's carries another
// Mcp-Session-Id (fault-session-2, fault-session-3, ...), while the
// requests are taken with the one initialize assigned; /session/whoami:
// tools/call answers with the request it got, as a server reporting its
// caller would: its path and query and its Authorization, Cookie,
// X-Api-Key and X-Auth headers, in the result's text, or, for a message
// "fail", in a JSON-RPC error's message (the credentials mcpx sent, for
// the tests that check mcpx does not show them again).
type Faults struct {
	// URL is the server's base URL (http://127.0.0.1:PORT); Foreign the
	// base URL of the other origin.
	URL, Foreign string

	log    io.Writer
	logMu  sync.Mutex
	mu     sync.Mutex
	seq    int
	lists  int // tools/list requests to /modern/droplist
	legacy map[string]*legacyStream
	stop   context.Context
	done   context.CancelFunc
}

// legacyStream is one open HTTP+SSE stream: POSTed requests are answered
// on it.
type legacyStream struct {
	out  chan []byte
	drop chan struct{}
	once sync.Once
}

// ServeFaults starts Faults (and its foreign origin) on 127.0.0.1, logging
// to log (nil for none). stop ends both servers and every open stream.
func ServeFaults(log io.Writer) (f *Faults, stop func(), err error) {
	if log == nil {
		log = io.Discard
	}
	ctx, cancel := context.WithCancel(context.Background())
	f = &Faults{log: log, legacy: map[string]*legacyStream{}, stop: ctx, done: cancel}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, nil, err
	}
	fl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		l.Close()
		cancel()
		return nil, nil, err
	}
	f.URL = "http://" + l.Addr().String()
	f.Foreign = "http://" + fl.Addr().String()
	hs := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	foreign := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.logf("foreign %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusAccepted)
	})}
	go hs.Serve(l)
	go foreign.Serve(fl)
	return f, func() {
		cancel()
		hs.Close()
		foreign.Close()
	}, nil
}

func (f *Faults) logf(format string, args ...any) {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	fmt.Fprintf(f.log, format+"\n", args...)
}

// faultRequest is the part of a JSON-RPC message the server looks at.
type faultRequest struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Message string `json:"message"`
		} `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

func (f *Faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 2 {
		http.NotFound(w, r)
		return
	}
	kind, fault := parts[0], parts[1]
	var req faultRequest
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if json.Unmarshal(body, &req) != nil {
			http.Error(w, "not a JSON-RPC message", http.StatusBadRequest)
			return
		}
	}
	what := r.URL.Path + " " + r.Method
	if req.Method != "" {
		what += " " + req.Method
	}
	if req.Method == "notifications/cancelled" {
		what += " " + string(req.Params.RequestID)
	}
	f.logf("%s", what)
	switch {
	case kind == "legacy" && len(parts) == 2 && r.Method == http.MethodGet:
		f.legacyGET(w, r, fault)
	case kind == "legacy" && len(parts) == 3 && parts[2] == "messages" && r.Method == http.MethodPost:
		f.legacyPOST(w, r, fault, req)
	case kind == "modern" && len(parts) == 2 && r.Method == http.MethodPost:
		f.modern(w, r, fault, req)
	case kind == "session" && len(parts) == 2:
		f.session(w, r, fault, req)
	default:
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

func flush(w http.ResponseWriter) {
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

func sseEvent(w http.ResponseWriter, event string, data []byte) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	flush(w)
}

// wait blocks until the client goes away or the server stops; it logs
// which.
func (f *Faults) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
		f.logf("%s stream closed by the client", r.URL.Path)
	case <-f.stop.Done():
	}
}

func (f *Faults) legacyGET(w http.ResponseWriter, r *http.Request, fault string) {
	switch fault {
	case "get500":
		http.Error(w, "the event stream is down for maintenance", http.StatusServiceUnavailable)
		return
	case "eof":
		sseHeaders(w)
		fmt.Fprint(w, ": nothing to see here\n\n")
		return
	case "silent":
		sseHeaders(w)
		f.wait(r)
		return
	case "badurl":
		sseHeaders(w)
		sseEvent(w, "endpoint", []byte("http://[::1]:port/messages"))
		f.wait(r)
		return
	case "foreign":
		sseHeaders(w)
		sseEvent(w, "endpoint", []byte(f.Foreign+"/legacy/foreign/messages?s=1"))
		f.wait(r)
		return
	}
	f.mu.Lock()
	f.seq++
	id := fmt.Sprint(f.seq)
	st := &legacyStream{out: make(chan []byte, 16), drop: make(chan struct{})}
	f.legacy[id] = st
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.legacy, id)
		f.mu.Unlock()
	}()
	sseHeaders(w)
	sseEvent(w, "endpoint", []byte("/legacy/"+fault+"/messages?s="+id))
	for {
		select {
		case m := <-st.out:
			sseEvent(w, "message", m)
		case <-st.drop:
			f.logf("%s stream dropped by the server", r.URL.Path)
			return
		case <-r.Context().Done():
			f.logf("%s stream closed by the client", r.URL.Path)
			return
		case <-f.stop.Done():
			return
		}
	}
}

func (f *Faults) legacyPOST(w http.ResponseWriter, r *http.Request, fault string, req faultRequest) {
	f.mu.Lock()
	st := f.legacy[r.URL.Query().Get("s")]
	f.mu.Unlock()
	if st == nil {
		http.Error(w, "unknown stream", http.StatusNotFound)
		return
	}
	if req.Method == "tools/call" {
		switch fault {
		case "post500":
			http.Error(w, "internal error: the tool backend is down", http.StatusInternalServerError)
			return
		case "drop":
			w.WriteHeader(http.StatusAccepted)
			st.once.Do(func() { close(st.drop) })
			return
		case "hang":
			w.WriteHeader(http.StatusAccepted)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
	if m := handshakeAnswer(req, "2024-11-05"); m != nil {
		select {
		case st.out <- m:
		case <-r.Context().Done():
		}
	}
}

// handshakeAnswer answers a request of the handshake era (initialize,
// ping, tools/list, tools/call echo); nil for notifications.
func handshakeAnswer(req faultRequest, version string) []byte {
	if req.ID == nil {
		return nil
	}
	switch req.Method {
	case "initialize":
		return resultMsg(req.ID, `{"protocolVersion":"`+version+`","capabilities":{"tools":{}},"serverInfo":{"name":"faults","version":"0.1"}}`)
	case "ping":
		return resultMsg(req.ID, `{}`)
	case "tools/list":
		return resultMsg(req.ID, `{"tools":[`+faultTools+`]}`)
	case "tools/call":
		b, _ := json.Marshal("Echo: " + req.Params.Arguments.Message)
		return resultMsg(req.ID, `{"content":[{"type":"text","text":`+string(b)+`}]}`)
	}
	return errorMsg(req.ID, -32601, "method not found: "+req.Method, "")
}

const faultTools = `{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}},` +
	`{"name":"slow","inputSchema":{"type":"object"}}`

func (f *Faults) modern(w http.ResponseWriter, r *http.Request, fault string, req faultRequest) {
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(m []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(m)
	}
	if fault == "down" {
		http.Error(w, "the server is down for maintenance", http.StatusServiceUnavailable)
		return
	}
	switch req.Method {
	case "server/discover":
		if fault == "discover" {
			answer(resultMsg(req.ID, `{"resultType":"complete","supportedVersions":"2026-07-28","capabilities":[]}`))
			return
		}
		answer(resultMsg(req.ID, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public",`+
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"faults","version":"0.1"}}}`))
		return
	case "tools/list":
		if fault == "droplist" {
			f.mu.Lock()
			f.lists++
			drop := f.lists%2 == 1
			f.mu.Unlock()
			if drop {
				sseHeaders(w)
				return
			}
		}
		answer(resultMsg(req.ID, `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[`+faultTools+`]}`))
		return
	case "tools/call":
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write(errorMsg(req.ID, -32601, "method not found: "+req.Method, ""))
		return
	}
	switch fault {
	case "500":
		http.Error(w, "internal error: the tool backend is down", http.StatusInternalServerError)
	case "rpc400":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(errorMsg(req.ID, -32602, "echo refuses this message", `{"reason":"policy"}`))
	case "drop":
		sseHeaders(w)
		sseEvent(w, "message", f.progress(req, 1))
	case "hang":
		sseHeaders(w)
		f.wait(r)
	case "progress":
		f.progressForever(w, r, req)
	case "resulttype":
		sseHeaders(w)
		sseEvent(w, "message", resultMsg(req.ID, `{"resultType":"mystery","content":[{"type":"text","text":"?"}]}`))
	case "noinput":
		sseHeaders(w)
		sseEvent(w, "message", resultMsg(req.ID, `{"resultType":"input_required"}`))
	default:
		sseHeaders(w)
		b, _ := json.Marshal("Echo: " + req.Params.Arguments.Message)
		sseEvent(w, "message", resultMsg(req.ID, `{"resultType":"complete","content":[{"type":"text","text":`+string(b)+`}]}`))
	}
}

// overrun answers with msg, and, in the same write, bytes past its
// Content-Length that look like another response (with a terminal escape
// sequence in it), which no request is waiting for.
func overrun(w http.ResponseWriter, msg []byte) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s"+
		"HTTP/1.1 200 OK\r\nX-Stray: \x1b[31mred\r\n\r\n", faultSession, len(msg), msg)
}

// progress is the n-th progress notification for req (a log message when
// the request has no progress token).
func (f *Faults) progress(req faultRequest, n int) []byte {
	if req.Params.Meta.ProgressToken == nil {
		return notification("notifications/message", fmt.Sprintf(`{"level":"info","data":"still working (%d)"}`, n))
	}
	return notification("notifications/progress", fmt.Sprintf(`{"progressToken":%s,"progress":%d}`, req.Params.Meta.ProgressToken, n))
}

// progressForever streams progress on an SSE answer until the client
// leaves.
func (f *Faults) progressForever(w http.ResponseWriter, r *http.Request, req faultRequest) {
	f.sseForever(w, r, func(n int) { sseEvent(w, "message", f.progress(req, n)) })
}

// commentsForever answers with an SSE stream of comments only, until the
// client goes away.
func (f *Faults) commentsForever(w http.ResponseWriter, r *http.Request) {
	f.sseForever(w, r, func(int) {
		fmt.Fprint(w, ": keep-alive\n\n")
		flush(w)
	})
}

// sseForever answers with an SSE stream on which write writes its n-th
// piece every 50 ms, from the first at once, until the client leaves or
// the faults stop.
func (f *Faults) sseForever(w http.ResponseWriter, r *http.Request, write func(n int)) {
	sseHeaders(w)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for n := 1; ; n++ {
		write(n)
		select {
		case <-t.C:
		case <-r.Context().Done():
			f.logf("%s stream closed by the client", r.URL.Path)
			return
		case <-f.stop.Done():
			return
		}
	}
}

const faultSession = "fault-session-1"

func (f *Faults) session(w http.ResponseWriter, r *http.Request, fault string, req faultRequest) {
	switch r.Method {
	case http.MethodDelete:
		f.logf("%s DELETE session %s", r.URL.Path, r.Header.Get("Mcp-Session-Id"))
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodPost:
	case http.MethodGet:
		if fault == "getelsewhere" {
			http.Redirect(w, r, f.Foreign+"/stream", http.StatusTemporaryRedirect)
			return
		}
		fallthrough
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
		return
	}
	if req.Method == "initialize" && fault == "comments" {
		f.commentsForever(w, r)
		return
	}
	if req.Method == "ping" && fault == "overrun" {
		overrun(w, handshakeAnswer(req, "2025-11-25"))
		return
	}
	if req.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", faultSession)
	} else if got := r.Header.Get("Mcp-Session-Id"); got != faultSession {
		http.Error(w, "missing or wrong session id", http.StatusBadRequest)
		return
	} else if fault == "newid" {
		f.mu.Lock()
		f.seq++
		n := f.seq
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("fault-session-%d", n+1))
	}
	switch {
	case (fault == "pingpong" || fault == "pingpong202") && (req.ID == nil || req.Method == ""):
		f.mu.Lock()
		f.seq++
		n := f.seq
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if fault == "pingpong202" {
			w.WriteHeader(http.StatusAccepted)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"srv%d","method":"ping"}`, n)
	case fault == "empty200" && (req.ID == nil || req.Method == ""):
		w.Header().Set("Content-Length", "0")
	case req.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case req.Method == "tools/call" && fault == "whoami":
		w.Header().Set("Content-Type", "application/json")
		w.Write(whoami(r, req))
	case req.Method == "tools/call":
		f.progressForever(w, r, req)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(handshakeAnswer(req, "2025-11-25"))
	}
}

// whoami answers a tools/call of /session/whoami with what r carried.
func whoami(r *http.Request, req faultRequest) []byte {
	got := "request " + r.URL.RequestURI()
	for _, h := range []string{"Authorization", "Cookie", "X-Api-Key", "X-Auth"} {
		if v := r.Header.Get(h); v != "" {
			got += "; " + h + ": " + v
		}
	}
	if req.Params.Arguments.Message == "fail" {
		return errorMsg(req.ID, -32000, "refused the "+got, "")
	}
	b, _ := json.Marshal(got)
	return resultMsg(req.ID, `{"content":[{"type":"text","text":`+string(b)+`}]}`)
}
