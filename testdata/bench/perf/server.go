package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The benchmark's server: raw JSON-RPC over stdio (this program with
// PERF_SERVE=stdio) and Streamable HTTP (in the benchmark's process), with
// knobs so that the client's own cost shows. It lists `tools` tools in
// pages of `page` (echo, big and then filler tools with a small input
// schema each), answers tools/call echo with the message, tools/call big
// and resources/read bench://big with `size` bytes of text, and
// resources/read bench://blob with `size` bytes of binary data (base64).
// Big frames are written from a small buffer.

// config holds the server's knobs.
type config struct {
	tools, page, size int
}

// envConfig reads the knobs of the stdio server from the environment.
func envConfig() config {
	atoi := func(name string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
			return n
		}
		return def
	}
	return config{tools: atoi("PERF_TOOLS", 20), page: atoi("PERF_PAGE", 100), size: atoi("PERF_SIZE", 1<<20)}
}

// query renders the knobs as the query of the HTTP server's URL.
func (c config) query() string {
	return fmt.Sprintf("tools=%d&page=%d&size=%d", c.tools, c.page, c.size)
}

// env renders the knobs for the stdio server.
func (c config) env() []string {
	return []string{"PERF_SERVE=stdio", "PERF_TOOLS=" + strconv.Itoa(c.tools), "PERF_PAGE=" + strconv.Itoa(c.page), "PERF_SIZE=" + strconv.Itoa(c.size)}
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// answer writes the response to req (nothing for a notification); it
// reports whether it wrote anything.
func (c config) answer(w *bufio.Writer, req *request) bool {
	if req.ID == nil {
		return false
	}
	head := func() {
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(req.ID)
		w.WriteString(`,"result":`)
	}
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		head()
		w.WriteString(`{"protocolVersion":` + strconv.Quote(p.ProtocolVersion) +
			`,"capabilities":{"tools":{"listChanged":true},"resources":{}},"serverInfo":{"name":"bench","version":"1"}}`)
	case "ping":
		head()
		w.WriteString(`{}`)
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(req.Params, &p)
		from, _ := strconv.Atoi(p.Cursor)
		head()
		c.writeTools(w, from)
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Message json.RawMessage `json:"message"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &p)
		head()
		switch p.Name {
		case "big":
			w.WriteString(`{"content":[{"type":"text","text":"`)
			writeText(w, c.size)
			w.WriteString(`"}]}`)
		default:
			msg := p.Arguments.Message
			if len(msg) == 0 {
				msg = json.RawMessage(`""`)
			}
			w.WriteString(`{"content":[{"type":"text","text":`)
			w.Write(msg)
			w.WriteString(`}]}`)
		}
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &p)
		head()
		w.WriteString(`{"contents":[{"uri":` + strconv.Quote(p.URI))
		if p.URI == "bench://blob" {
			w.WriteString(`,"mimeType":"application/octet-stream","blob":"`)
			writeBlob(w, c.size)
		} else {
			w.WriteString(`,"mimeType":"text/plain","text":"`)
			writeText(w, c.size)
		}
		w.WriteString(`"}]}`)
	default:
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(req.ID)
		w.WriteString(`,"error":{"code":-32601,"message":"method not found"}}`)
		return true
	}
	w.WriteString(`}`)
	return true
}

// writeTools writes one page of tools/list from index from.
func (c config) writeTools(w *bufio.Writer, from int) {
	to := min(from+c.page, c.tools)
	w.WriteString(`{"tools":[`)
	for i := from; i < to; i++ {
		if i > from {
			w.WriteByte(',')
		}
		name := fmt.Sprintf("tool%05d", i)
		switch i {
		case 0:
			name = "echo"
		case 1:
			name = "big"
		}
		// Only echo requires its message: big is called without one.
		required := ""
		if i == 0 {
			required = `,"required":["message"]`
		}
		w.WriteString(`{"name":"` + name + `","description":"Tool ` + strconv.Itoa(i) +
			` echoes its message back, as benchmark tools do.","inputSchema":{"type":"object","properties":{` +
			`"message":{"type":"string","description":"what to echo"},"count":{"type":"integer","minimum":0}}` + required + `}}`)
	}
	w.WriteString(`]`)
	if to < c.tools {
		w.WriteString(`,"nextCursor":"` + strconv.Itoa(to) + `"`)
	}
	w.WriteString(`}`)
}

// textChunk is 64 characters of text as JSON carries it: 63 letters and
// an escaped newline.
var textChunk = strings.Repeat("x", 63) + `\n`

// writeText writes n bytes of text (as decoded), JSON-escaped.
func writeText(w *bufio.Writer, n int) {
	for ; n >= 64; n -= 64 {
		w.WriteString(textChunk)
	}
	w.WriteString(strings.Repeat("y", n))
}

// writeBlob writes n bytes of binary data in base64.
func writeBlob(w *bufio.Writer, n int) {
	raw := make([]byte, 3*1024)
	for i := range raw {
		raw[i] = byte(i*7 + i/256)
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	for ; n > 0; n -= len(raw) {
		enc.Write(raw[:min(n, len(raw))])
	}
	enc.Close()
}

// serveStdio answers requests, one per line, until stdin ends.
func serveStdio(c config) error {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A request longer than the buffer: not one of ours.
			return fmt.Errorf("request longer than %d bytes", in.Size())
		}
		if len(line) > 1 {
			var req request
			if json.Unmarshal(line, &req) == nil && c.answer(out, &req) {
				out.WriteByte('\n')
				if in.Buffered() == 0 {
					if err := out.Flush(); err != nil {
						return err
					}
				}
			}
		}
		if err != nil {
			if err == io.EOF {
				return out.Flush()
			}
			return err
		}
	}
}

// httpServer is the Streamable HTTP server on 127.0.0.1, knobs in the
// query of each request. It answers requests with JSON bodies, accepts the
// GET stream (held open until the client leaves or deletes its session),
// and counts the GET streams opened so the benchmark can say so.
type httpServer struct {
	ln      net.Listener
	srv     *http.Server
	url     string
	gets    atomic.Int64
	nextSID atomic.Int64

	mu       sync.Mutex
	sessions map[string]chan struct{} // closed by DELETE
}

func startHTTP() (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &httpServer{ln: ln, url: "http://" + ln.Addr().String() + "/mcp", sessions: map[string]chan struct{}{}}
	h.srv = &http.Server{Handler: h}
	go h.srv.Serve(ln)
	return h, nil
}

func (h *httpServer) Close() error { return h.srv.Close() }

// URL returns the endpoint with c's knobs.
func (h *httpServer) URL(c config) string { return h.url + "?" + c.query() }

func (h *httpServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	atoi := func(k string) int { n, _ := strconv.Atoi(q.Get(k)); return n }
	c := config{tools: atoi("tools"), page: max(atoi("page"), 1), size: atoi("size")}
	sid := r.Header.Get("Mcp-Session-Id")
	h.mu.Lock()
	gone, known := h.sessions[sid]
	h.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		if !known {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		h.gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-gone:
		}
	case http.MethodDelete:
		if known {
			h.mu.Lock()
			delete(h.sessions, sid)
			h.mu.Unlock()
			close(gone)
		}
		w.WriteHeader(http.StatusOK)
	case http.MethodPost:
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.Method == "initialize" {
			sid = strconv.FormatInt(h.nextSID.Add(1), 10)
			h.mu.Lock()
			h.sessions[sid] = make(chan struct{})
			h.mu.Unlock()
			w.Header().Set("Mcp-Session-Id", sid)
		} else if !known {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriterSize(w, 64<<10)
		c.answer(bw, &req)
		bw.Flush()
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}
