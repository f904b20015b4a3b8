package testservers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// RawModern is a 2026-07-28 server written by hand (the Go SDK has no
// tasks extension), for what the SDK server cannot show: the
// io.modelcontextprotocol/tasks extension (SEP-2663), both ways a server
// ends a subscription, a dropped subscription stream, header mismatches,
// and tools with invalid x-mcp-header annotations. It speaks stdio
// (ServeStdio) and Streamable HTTP (ServeHTTP).
//
// Tools: job (a task that completes after two polls), ask-job (a task that
// needs an answer, given with tasks/update), slow-job (a task that runs
// until cancelled), fail-job (a task that fails), hdr(region) (mirrors
// region into Mcp-Param-Region; over HTTP its first call is refused as a
// header mismatch), bad-hdr (an invalid x-mcp-header: must not be called
// over HTTP), plain (an ordinary tool).
type RawModern struct {
	// ListenEnd says how subscriptions/listen ends after its first
	// notifications: "graceful" (a result), "cancel" (notifications/cancelled
	// from the server), "drop" (HTTP only: the stream closes without a
	// response, once; the next listen stays open), or "" (stays open).
	ListenEnd string
	// Stray makes subscriptions/listen send, after its own
	// notifications, two a 2026-07-28 server must not send: a
	// tools/list_changed naming subscription 999, which the client never
	// opened, and a resources/updated naming no subscription.
	Stray bool

	mu        sync.Mutex
	tasks     map[string]*rawTask
	seq       int
	log       []string
	hdrCalls  int
	dropped   bool
	listenCnt int
}

type rawTask struct {
	id, tool, status, message string
	polls                     int
	answer                    json.RawMessage
	failErr                   json.RawMessage
}

// Log returns what the server saw, one line per event.
func (r *RawModern) Log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func (r *RawModern) logf(format string, args ...any) {
	r.mu.Lock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

type rawRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func resultMsg(id json.RawMessage, result string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
}

func errorMsg(id json.RawMessage, code int, msg string, data string) []byte {
	e := fmt.Sprintf(`{"code":%d,"message":%q`, code, msg)
	if data != "" {
		e += `,"data":` + data
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + e + `}}`)
}

func notification(method string, params string) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `}`)
}

const rawServerInfo = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw-modern","version":"0.9"}}`

// transportKind tells serve what the binding can do.
type transportKind int

const (
	overStdio transportKind = iota
	overHTTP
)

// serve answers one request: emit sends a message back (a notification,
// then the response). It returns when the request is over; drop reports
// that the response must be withheld and the stream closed (HTTP).
func (r *RawModern) serve(ctx context.Context, req rawRequest, kind transportKind, header http.Header, emit func([]byte)) (drop bool) {
	var p struct {
		Name          string          `json:"name"`
		Arguments     json.RawMessage `json:"arguments"`
		TaskID        string          `json:"taskId"`
		InputResponse json.RawMessage `json:"inputResponses"`
		Notifications *struct {
			ToolsListChanged      bool     `json:"toolsListChanged"`
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(req.Params, &p)
	if _, ok := p.Meta["io.modelcontextprotocol/protocolVersion"]; !ok {
		emit(errorMsg(req.ID, -32602, "missing _meta io.modelcontextprotocol/protocolVersion", ""))
		return false
	}
	switch req.Method {
	case "server/discover":
		emit(resultMsg(req.ID, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true},"extensions":{"io.modelcontextprotocol/tasks":{}}},"instructions":"raw","ttlMs":60000,"cacheScope":"public",`+rawServerInfo+`}`))
	case "tools/list":
		emit(resultMsg(req.ID, `{"resultType":"complete","ttlMs":300000,"cacheScope":"private","tools":[`+
			`{"name":"job","inputSchema":{"type":"object"}},`+
			`{"name":"ask-job","inputSchema":{"type":"object"}},`+
			`{"name":"slow-job","inputSchema":{"type":"object"}},`+
			`{"name":"fail-job","inputSchema":{"type":"object"}},`+
			`{"name":"plain","inputSchema":{"type":"object"}},`+
			`{"name":"hdr","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},`+
			`{"name":"bad-hdr","inputSchema":{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}}`+
			`],`+rawServerInfo+`}`))
	case "tools/call":
		r.logf("tools/call %s", p.Name)
		r.call(req, p.Name, p.Arguments, kind, header, emit)
	case "tasks/get":
		r.taskGet(req, p.TaskID, emit)
	case "tasks/update":
		r.mu.Lock()
		t := r.tasks[p.TaskID]
		if t != nil {
			t.answer = p.InputResponse
			t.status = "working"
		}
		r.mu.Unlock()
		r.logf("tasks/update %s %s", p.TaskID, p.InputResponse)
		if t == nil {
			emit(errorMsg(req.ID, -32602, "unknown task "+p.TaskID, ""))
			return false
		}
		emit(resultMsg(req.ID, `{"resultType":"complete"}`))
	case "tasks/cancel":
		r.mu.Lock()
		t := r.tasks[p.TaskID]
		if t != nil && t.status != "completed" && t.status != "failed" {
			t.status, t.message = "cancelled", "cancelled by the client"
		}
		r.mu.Unlock()
		r.logf("tasks/cancel %s", p.TaskID)
		if t == nil {
			emit(errorMsg(req.ID, -32602, "unknown task "+p.TaskID, ""))
			return false
		}
		emit(resultMsg(req.ID, `{"resultType":"complete"}`))
	case "subscriptions/listen":
		return r.listen(ctx, req, p.Notifications, kind, emit)
	default:
		emit(errorMsg(req.ID, -32601, "method not found: "+req.Method, ""))
	}
	return false
}

func (r *RawModern) newTask(tool string) *rawTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tasks == nil {
		r.tasks = map[string]*rawTask{}
	}
	r.seq++
	t := &rawTask{id: fmt.Sprintf("task-%d", r.seq), tool: tool, status: "working"}
	r.tasks[t.id] = t
	return t
}

func taskFields(t *rawTask) string {
	s := fmt.Sprintf(`"taskId":%q,"status":%q,"createdAt":"2026-07-28T00:00:00Z","lastUpdatedAt":"2026-07-28T00:00:01Z","ttlMs":60000,"pollIntervalMs":20`, t.id, t.status)
	if t.message != "" {
		s += fmt.Sprintf(`,"statusMessage":%q`, t.message)
	}
	return s
}

func (r *RawModern) call(req rawRequest, name string, args json.RawMessage, kind transportKind, header http.Header, emit func([]byte)) {
	switch name {
	case "job", "ask-job", "slow-job", "fail-job":
		t := r.newTask(name)
		emit(resultMsg(req.ID, `{"resultType":"task",`+taskFields(t)+`}`))
	case "plain":
		emit(resultMsg(req.ID, `{"resultType":"complete","content":[{"type":"text","text":"plain result"}]}`))
	case "hdr":
		var a struct {
			Region string `json:"region"`
		}
		_ = json.Unmarshal(args, &a)
		if kind == overHTTP {
			r.mu.Lock()
			r.hdrCalls++
			first := r.hdrCalls == 1
			r.mu.Unlock()
			got := header.Get("Mcp-Param-Region")
			if first || got != a.Region {
				emit(errorMsg(req.ID, -32020, fmt.Sprintf("Header mismatch: Mcp-Param-Region %q does not match body %q", got, a.Region), ""))
				return
			}
		}
		emit(resultMsg(req.ID, fmt.Sprintf(`{"resultType":"complete","content":[{"type":"text","text":"region %s"}]}`, a.Region)))
	case "bad-hdr":
		emit(resultMsg(req.ID, `{"resultType":"complete","content":[{"type":"text","text":"bad-hdr was called"}]}`))
	default:
		emit(errorMsg(req.ID, -32602, "unknown tool "+name, ""))
	}
}

func (r *RawModern) taskGet(req rawRequest, id string, emit func([]byte)) {
	r.mu.Lock()
	t := r.tasks[id]
	if t == nil {
		r.mu.Unlock()
		emit(errorMsg(req.ID, -32602, "unknown task "+id, ""))
		return
	}
	t.polls++
	extra := ""
	switch {
	case t.status != "working":
	case t.tool == "job" && t.polls >= 2:
		t.status = "completed"
	case t.tool == "fail-job":
		t.status, t.message = "failed", "the job crashed"
	case t.tool == "ask-job" && t.answer == nil:
		t.status = "input_required"
	case t.tool == "ask-job":
		t.status = "completed"
	}
	switch t.status {
	case "completed":
		text := t.tool + " done"
		if t.answer != nil {
			text = "ask-job got " + string(t.answer)
		}
		b, _ := json.Marshal(text)
		extra = `,"result":{"resultType":"complete","content":[{"type":"text","text":` + string(b) + `}]}`
	case "failed":
		extra = `,"error":{"code":-32603,"message":"the job crashed"}`
	case "input_required":
		extra = `,"inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Go ahead?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean","default":true}}}}}}`
	}
	body := `{"resultType":"complete",` + taskFields(t) + extra + `}`
	r.mu.Unlock()
	emit(resultMsg(req.ID, body))
}

func (r *RawModern) listen(ctx context.Context, req rawRequest, f *struct {
	ToolsListChanged      bool     `json:"toolsListChanged"`
	ResourceSubscriptions []string `json:"resourceSubscriptions"`
}, kind transportKind, emit func([]byte)) bool {
	if f == nil {
		emit(errorMsg(req.ID, -32602, "missing notifications", ""))
		return false
	}
	r.mu.Lock()
	r.listenCnt++
	n := r.listenCnt
	r.mu.Unlock()
	r.logf("listen %d", n)
	sub := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(req.ID) + `}`
	granted := fmt.Sprintf(`{"toolsListChanged":%v`, f.ToolsListChanged)
	if len(f.ResourceSubscriptions) > 0 {
		b, _ := json.Marshal(f.ResourceSubscriptions)
		granted += `,"resourceSubscriptions":` + string(b)
	}
	granted += `}`
	emit(notification("notifications/subscriptions/acknowledged", `{`+sub+`,"notifications":`+granted+`}`))
	if f.ToolsListChanged {
		emit(notification("notifications/tools/list_changed", `{`+sub+`}`))
	}
	for _, u := range f.ResourceSubscriptions {
		b, _ := json.Marshal(u)
		emit(notification("notifications/resources/updated", `{`+sub+`,"uri":`+string(b)+`}`))
	}
	if r.Stray {
		emit(notification("notifications/tools/list_changed", `{"_meta":{"io.modelcontextprotocol/subscriptionId":999}}`))
		emit(notification("notifications/resources/updated", `{"uri":"file:///stray"}`))
	}
	switch r.ListenEnd {
	case "graceful":
		emit(resultMsg(req.ID, `{"resultType":"complete",`+sub+`}`))
		return false
	case "cancel":
		emit(notification("notifications/cancelled", `{"requestId":`+string(req.ID)+`,"reason":"server shutting down"}`))
		return false
	case "drop":
		r.mu.Lock()
		first := !r.dropped
		r.dropped = true
		r.mu.Unlock()
		if first && kind == overHTTP {
			return true
		}
	}
	<-ctx.Done()
	r.logf("listen %d cancelled", n)
	return false
}

// ServeHTTP serves the 2026-07-28 Streamable HTTP binding: POST only, one
// SSE response stream per request, no sessions.
func (r *RawModern) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if hr.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(hr.Body)
	var req rawRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Method == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if req.ID == nil {
		r.logf("notification %s", req.Method)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if hr.Header.Get("Mcp-Method") != req.Method || hr.Header.Get("Mcp-Protocol-Version") == "" || hr.Header.Get("Mcp-Session-Id") != "" {
		r.logf("bad headers for %s: method %q version %q session %q", req.Method, hr.Header.Get("Mcp-Method"), hr.Header.Get("Mcp-Protocol-Version"), hr.Header.Get("Mcp-Session-Id"))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	var mu sync.Mutex
	emit := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	r.serve(hr.Context(), req, overHTTP, hr.Header, emit)
}

// HTTP serves r on 127.0.0.1 and returns its URL.
func (r *RawModern) HTTP(t testing.TB) string {
	t.Helper()
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// ServeStdio serves r on in and stdout until in ends. Client
// notifications/cancelled end the request they name.
func (r *RawModern) ServeStdio(in io.Reader) error {
	var outMu sync.Mutex
	emit := func(b []byte) {
		outMu.Lock()
		defer outMu.Unlock()
		os.Stdout.Write(append(b, '\n'))
	}
	var mu sync.Mutex
	cancels := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var req rawRequest
		if json.Unmarshal(line, &req) != nil || req.Method == "" {
			continue
		}
		if req.ID == nil {
			r.logf("notification %s", req.Method)
			if req.Method == "notifications/cancelled" {
				var p struct {
					RequestID json.RawMessage `json:"requestId"`
				}
				_ = json.Unmarshal(req.Params, &p)
				mu.Lock()
				if c := cancels[string(p.RequestID)]; c != nil {
					c()
				}
				mu.Unlock()
			}
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		mu.Lock()
		cancels[string(req.ID)] = cancel
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			r.serve(ctx, req, overStdio, nil, emit)
		}()
	}
	mu.Lock()
	for _, c := range cancels {
		c()
	}
	mu.Unlock()
	wg.Wait()
	if logf := os.Getenv("TEST_LOG"); logf != "" {
		_ = os.WriteFile(logf+".events", []byte(strings.Join(r.Log(), "\n")+"\n"), 0o644)
	}
	return sc.Err()
}

// WaitLog waits (bounded by d) until the server logged a line containing
// sub, and reports whether it did.
func (r *RawModern) WaitLog(sub string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, l := range r.Log() {
			if strings.Contains(l, sub) {
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
