package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// The misbehaving servers speak raw JSON-RPC on stdio, without the SDK, so
// that they can break the rules on purpose.

// rawMsg is one JSON-RPC message, any kind.
type rawMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// frame is one line from the client: one message, or a batch.
type frame struct {
	msgs  []rawMsg
	batch bool
}

type rawServer struct {
	mode    string
	frames  chan frame
	outMu   sync.Mutex
	wrote   bool            // a line was written
	lastID  json.RawMessage // id of the last request answered
	lastRes json.RawMessage // and its result
}

func runRaw(mode string, in io.Reader) error {
	s := &rawServer{mode: mode, frames: make(chan frame)}
	go s.readLoop(in)
	if mode == "garbage" {
		s.writeLine("starting up... (this line is not JSON)")
	}
	for f := range s.frames {
		for _, m := range f.msgs {
			if m.Method == "" || m.ID == nil {
				continue // notifications and stray responses: logged, ignored
			}
			s.handle(m)
		}
	}
	return nil
}

func (s *rawServer) readLoop(in io.Reader) {
	defer close(s.frames)
	br := bufio.NewReaderSize(in, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var f frame
			if line[0] == '[' {
				f.batch = true
				_ = json.Unmarshal(line, &f.msgs)
			} else {
				var m rawMsg
				if json.Unmarshal(line, &m) == nil {
					f.msgs = []rawMsg{m}
				}
			}
			s.frames <- f
		}
		if err != nil {
			return
		}
	}
}

func (s *rawServer) writeLine(line string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.mode == "bom" && !s.wrote {
		// As a .NET server whose console writes UTF-8 with a byte order
		// mark begins its output.
		line = "\uFEFF" + line
	}
	s.wrote = true
	if s.mode == "hostile" {
		line = strings.ReplaceAll(line, hostileBadBytes, "\xff\x9b")
	}
	if s.mode == "unended" {
		_, _ = os.Stdout.WriteString(line)
		return
	}
	_, _ = os.Stdout.WriteString(line + "\n")
}

func (s *rawServer) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if s.mode == "garbage" {
		// Garbage of every kind before each message: prose, a line with
		// terminal escapes, an empty line, and JSON that is not a message.
		s.writeLine("DEBUG: about to answer (not JSON)")
		s.writeLine("\x1b[2J\x1b[31mscreen-clearing garbage\x1b[0m")
		s.writeLine("")
		s.writeLine("42")
	}
	s.writeLine(string(b))
}

func (s *rawServer) reply(id json.RawMessage, result any) {
	res, _ := json.Marshal(result)
	s.lastID, s.lastRes = id, res
	s.send(rawMsg{JSONRPC: "2.0", ID: id, Result: res})
}

func (s *rawServer) replyError(id json.RawMessage, code int, msg string) {
	e, _ := json.Marshal(map[string]any{"code": code, "message": msg})
	s.send(rawMsg{JSONRPC: "2.0", ID: id, Error: e})
}

var echoTool = map[string]any{
	"name":        "echo",
	"description": "Echoes the message back",
	"inputSchema": map[string]any{
		"type":       "object",
		"properties": map[string]any{"message": map[string]any{"type": "string"}},
		"required":   []string{"message"},
	},
}

var bigTool = map[string]any{
	"name":        "big",
	"description": "Returns a text of 50 MiB on a single line",
	"inputSchema": map[string]any{"type": "object"},
}

// bigResult answers a call of the big tool with the rich server's 50 MiB
// text, written as it goes: the SDK's encoder copies and checks a text
// that size several times over, seconds of CPU a test of the client need
// not spend.
func (s *rawServer) bigResult(id json.RawMessage) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
	chunk := bytes.Repeat([]byte("x"), 1<<16)
	for n := bigDefault - len(bigMarker); n > 0; n -= len(chunk) {
		_, _ = w.Write(chunk[:min(n, len(chunk))])
	}
	_, _ = w.WriteString(bigMarker + `"}]}}` + "\n")
	_ = w.Flush()
}

func textResult(text string, isError bool) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	return r
}

func (s *rawServer) handle(m rawMsg) {
	if s.mode == "hostile" {
		s.hostile(m)
		return
	}
	switch m.Method {
	case "initialize":
		s.initialize(m)
	case "server/discover":
		if s.mode != "modern-crash" && s.mode != "modern-hang" {
			s.replyError(m.ID, -32601, "method not found: "+m.Method)
			return
		}
		s.reply(m.ID, map[string]any{
			"supportedVersions": []string{"2026-07-28"},
			"capabilities":      map[string]any{"tools": map[string]any{}},
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "testserver-" + s.mode, "version": "0.0.1"}},
			"ttlMs":             0,
			"cacheScope":        "public",
		})
	case "ping":
		s.reply(m.ID, map[string]any{})
	case "tools/list":
		if s.mode == "badlist" {
			s.reply(m.ID, map[string]any{"tools": 42})
			return
		}
		if s.mode == "big" {
			s.reply(m.ID, map[string]any{"tools": []any{echoTool, bigTool}})
			return
		}
		if s.mode == "rough" {
			s.reply(m.ID, map[string]any{"tools": roughTools})
			return
		}
		if s.mode == "badtools" {
			s.reply(m.ID, map[string]any{"tools": []any{echoTool, echoTool,
				map[string]any{"name": "look up", "inputSchema": map[string]any{"type": "object", "description": "bidi \u202e control"}},
				map[string]any{"name": "ev\u202eil", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "noschema"},
				map[string]any{"description": "no name", "inputSchema": map[string]any{"type": "object"}}}})
			return
		}
		if s.mode == "manybadtools" {
			// More problems than a list command names one by one.
			var tools []any
			for i := range 12 {
				tools = append(tools, map[string]any{"name": fmt.Sprintf("noschema%d", i+1)})
			}
			s.reply(m.ID, map[string]any{"tools": tools})
			return
		}
		if s.mode == "apps" {
			s.reply(m.ID, map[string]any{"tools": []any{appsEchoTool}})
			return
		}
		if strings.HasPrefix(s.mode, "pages-") {
			s.pagesList(m)
			return
		}
		if strings.HasPrefix(s.mode, "modern-") {
			// A 2026-07-28 server's caching hints (server/utilities/caching).
			s.reply(m.ID, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "public", "tools": []any{echoTool}})
			return
		}
		s.reply(m.ID, map[string]any{"tools": []any{echoTool}})
	case "resources/list":
		if s.mode != "apps" {
			s.replyError(m.ID, -32601, "method not found: "+m.Method)
			return
		}
		// The view, as an ext-apps server lists it (no _meta.ui here:
		// $TEST_VIEW_META is the read content's).
		s.reply(m.ID, map[string]any{"resources": []any{map[string]any{
			"uri": appsViewURI, "name": "echo view", "mimeType": "text/html;profile=mcp-app"}}})
	case "resources/read":
		if s.mode != "apps" {
			s.replyError(m.ID, -32601, "method not found: "+m.Method)
			return
		}
		s.appsView(m)
	case "tools/call":
		s.toolsCall(m)
	case "logging/setLevel":
		if s.mode != "progressflood" {
			s.replyError(m.ID, -32601, "method not found: "+m.Method)
			return
		}
		// A flood with no tool call: what a watch meets.
		s.sendProgressFlood()
		s.reply(m.ID, map[string]any{})
	default:
		s.replyError(m.ID, -32601, "method not found: "+m.Method)
	}
}

func (s *rawServer) initialize(m rawMsg) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(m.Params, &p)
	version := p.ProtocolVersion
	if !slices.Contains([]string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}, version) {
		version = "2025-11-25"
	}
	switch s.mode {
	case "batch", "reuse":
		version = "2025-03-26" // the only revision with JSON-RPC batches
	case "badversion":
		version = "2099-01-01"
	}
	serverVersion := "0.0.1"
	if s.mode == "badtools" {
		serverVersion += "\x1b]0;TITLE\x07\u009b" // an OSC and a C1 control (CSI)
	}
	result := map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
		"serverInfo":      map[string]any{"name": "testserver-" + s.mode, "version": serverVersion},
	}
	if s.mode == "apps" {
		result["capabilities"].(map[string]any)["resources"] = map[string]any{}
	}
	if s.mode == "batch" {
		// Even the initialize response comes as a batch (of one).
		res, _ := json.Marshal(result)
		s.sendBatch(rawMsg{JSONRPC: "2.0", ID: m.ID, Result: res})
		return
	}
	s.reply(m.ID, result)
}

// sendProgressFlood sends 50 progress notifications for a token no
// request carries (progressflood's logging/setLevel).
func (s *rawServer) sendProgressFlood() {
	for i := range 50 {
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": "never-issued", "progress": i + 1})})
	}
}

func (s *rawServer) sendBatch(msgs ...rawMsg) {
	b, _ := json.Marshal(msgs)
	s.writeLine(string(b))
}

func (s *rawServer) toolsCall(m rawMsg) {
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Message string `json:"message"`
		} `json:"arguments"`
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if s.mode == "big" && p.Name == "big" {
		s.bigResult(m.ID)
		return
	}
	if s.mode == "rough" {
		var a struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &a)
		s.roughCall(m, p.Name, a.Arguments, p.Meta.ProgressToken)
		return
	}
	if strings.HasPrefix(s.mode, "pages-") && p.Name != "echo" {
		s.pagesCall(m)
		return
	}
	if p.Name != "echo" {
		s.send(rawMsg{JSONRPC: "2.0", ID: m.ID, Result: mustJSON(textResult("unknown tool "+p.Name, true))})
		return
	}
	switch s.mode {
	case "modern-hang":
		// Never answered.
	case "crash", "modern-crash":
		// Half a response, a last word on stderr, and death.
		s.outMu.Lock()
		_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","id":`)
		fmt.Fprintln(os.Stderr, "testserver: fatal: the widget exploded while calling echo")
		os.Exit(3)
	case "disorder":
		// A request of our own first, answered before we go on.
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`77`), Method: "ping"})
		if r, _, ok := s.awaitResponse(`77`); !ok || r.Error != nil {
			s.send(rawMsg{JSONRPC: "2.0", ID: m.ID, Result: mustJSON(textResult("our ping was not answered", true))})
			return
		}
		// A response nobody asked for, a second response to the previous
		// request, then the answer with the id's JSON type changed.
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"nobody-asked"`), Result: mustJSON(textResult("unsolicited", false))})
		if s.lastID != nil {
			s.send(rawMsg{JSONRPC: "2.0", ID: s.lastID, Result: s.lastRes})
		}
		s.send(rawMsg{JSONRPC: "2.0", ID: mustJSON(string(m.ID)), Result: mustJSON(textResult(p.Arguments.Message, false))})
		// And a late duplicate of that answer, which mcpx may or may not
		// still be around to see.
		s.send(rawMsg{JSONRPC: "2.0", ID: m.ID, Result: mustJSON(textResult("late duplicate", false))})
	case "taskflood":
		s.taskFlood(m)
	case "batch":
		s.batchCall(m, p.Meta.ProgressToken, p.Arguments.Message)
	case "reuse":
		s.reuseCall(m)
	case "crowded":
		// The answer written on the line of a log message, as a server
		// that forgets a newline between two writes does.
		s.writeLine(string(mustJSON(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "data": "crowded"})})) +
			string(mustJSON(rawMsg{JSONRPC: "2.0", ID: m.ID, Result: mustJSON(textResult(p.Arguments.Message, false))})))
	case "progressflood":
		// Progress for a token no request carries, and answers to ids
		// mcpx never sent, 50 of each, then the answer.
		for i := range 50 {
			s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": "never-issued", "progress": i + 1})})
			s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(fmt.Sprintf(`"nobody-%d"`, i)), Result: json.RawMessage(`{}`)})
		}
		s.reply(m.ID, textResult(p.Arguments.Message, false))
	case "badlog":
		s.reply(m.ID, textResult(p.Arguments.Message, false))
		s.send(rawMsg{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "loud", "data": "after " + p.Arguments.Message})})
	default:
		s.reply(m.ID, textResult(p.Arguments.Message, false))
	}
}

// batchCall sends a batch holding a log notification, a progress
// notification and a ping request, waits for the client's answer to the
// ping, and answers the call in a batch too.
func (s *rawServer) batchCall(m rawMsg, token json.RawMessage, message string) {
	batch := []rawMsg{
		{JSONRPC: "2.0", Method: "notifications/message", Params: mustJSON(map[string]any{"level": "info", "logger": "batch", "data": "hello from a batch"})},
		{JSONRPC: "2.0", ID: json.RawMessage(`"srv-ping-1"`), Method: "ping"},
	}
	if token != nil {
		batch = append(batch, rawMsg{JSONRPC: "2.0", Method: "notifications/progress", Params: mustJSON(map[string]any{"progressToken": token, "progress": 1, "total": 2, "message": "halfway, in a batch"})})
	}
	s.sendBatch(batch...)

	answer, isError := message, false
	r, inBatch, ok := s.awaitResponse(`"srv-ping-1"`)
	switch {
	case !ok:
		answer, isError = "the ping was not answered", true
	case !inBatch:
		answer, isError = "the ping in a batch was answered outside a batch", true
	case r.Error != nil:
		answer, isError = "the ping was answered with an error: "+string(r.Error), true
	}
	s.sendBatch(rawMsg{JSONRPC: "2.0", ID: m.ID, Result: mustJSON(textResult(answer, isError))})
}

// reuseCall breaks the rules on request ids and long text: a batch of
// two pings with one id (the first must be answered, the second refused,
// in one batch), a ping whose id an earlier ping used (answered, after
// its request ended), and a request whose method is 100 KB long (answered
// with "method not found" that does not quote it all), and a request
// whose method is a number (answered -32600). It answers the call with
// "ok", or with what went wrong.
func (s *rawServer) reuseCall(m rawMsg) {
	fail := func(why string) { s.reply(m.ID, textResult(why, true)) }
	ping := rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"d"`), Method: "ping"}
	s.sendBatch(ping, ping)
	msgs, batch, ok := s.awaitAnswers(`"d"`)
	switch {
	case !ok:
		fail("the batch of two pings with one id was not answered")
		return
	case !batch || len(msgs) != 2:
		fail(fmt.Sprintf("the batch of two pings with one id was answered with %d messages (batch: %v)", len(msgs), batch))
		return
	case msgs[0].Result == nil || !strings.Contains(string(msgs[1].Error), `"code":-32600`):
		fail("of the two pings with one id, the first was not answered and the second refused: " + string(msgs[0].Result) + string(msgs[0].Error) + ", " + string(msgs[1].Result) + string(msgs[1].Error))
		return
	}
	for range 2 {
		s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`77`), Method: "ping"})
		if r, _, ok := s.awaitResponse(`77`); !ok || r.Error != nil {
			fail("ping 77 was not answered")
			return
		}
	}
	s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"long"`), Method: "x/" + strings.Repeat("m", 100_000)})
	r, _, ok := s.awaitResponse(`"long"`)
	switch {
	case !ok:
		fail("the request with a 100 KB method was not answered")
	case !strings.Contains(string(r.Error), `"code":-32601`) || len(r.Error) > 1000:
		fail(fmt.Sprintf("the request with a 100 KB method was answered with %d bytes: %.300s", len(r.Error), r.Error))
		return
	}
	// A request whose method is not a string: an invalid request,
	// answered with -32600 under its id (JSON-RPC 2.0 section 5.1).
	s.writeLine(`{"jsonrpc":"2.0","id":"s6","method":5}`)
	r, _, ok = s.awaitResponse(`"s6"`)
	switch {
	case !ok:
		fail("the request whose method is 5 was not answered")
	case !strings.Contains(string(r.Error), `"code":-32600`):
		fail("the request whose method is 5 was answered with " + string(r.Result) + string(r.Error))
	default:
		s.reply(m.ID, textResult("ok", false))
	}
}

// awaitAnswers waits (at most 10s) for the client's frame that answers our
// request id, reading past anything else, and returns its responses with
// that id; batch tells whether it was a batch.
func (s *rawServer) awaitAnswers(id string) (msgs []rawMsg, batch, ok bool) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case f, open := <-s.frames:
			if !open {
				return nil, false, false
			}
			for _, r := range f.msgs {
				if r.Method == "" && string(r.ID) == id {
					msgs = append(msgs, r)
				}
			}
			if len(msgs) > 0 {
				return msgs, f.batch, true
			}
		case <-timeout:
			return nil, false, false
		}
	}
}

// taskFlood sends 1100 task-augmented elicitations (more than the 1024
// tasks mcpx keeps), then tasks/list, and answers the call with what came
// back: "N tasks created, M refused; tasks/list holds K".
func (s *rawServer) taskFlood(m rawMsg) {
	const n = 1100
	for i := range n {
		s.send(rawMsg{JSONRPC: "2.0", ID: mustJSON(fmt.Sprintf("t%d", i)), Method: "elicitation/create",
			Params: json.RawMessage(`{"task":{"ttl":60000},"message":"flood","requestedSchema":{"type":"object","properties":{}}}`)})
	}
	created, refused := 0, 0
	timeout := time.After(20 * time.Second)
	for created+refused < n {
		select {
		case f, open := <-s.frames:
			if !open {
				return
			}
			for _, r := range f.msgs {
				switch {
				case r.Method != "" || !strings.HasPrefix(string(r.ID), `"t`):
				case r.Error != nil:
					refused++
				default:
					created++
				}
			}
		case <-timeout:
			s.reply(m.ID, textResult(fmt.Sprintf("only %d of %d elicitations answered", created+refused, n), true))
			return
		}
	}
	s.send(rawMsg{JSONRPC: "2.0", ID: json.RawMessage(`"list"`), Method: "tasks/list"})
	r, _, ok := s.awaitResponse(`"list"`)
	var list struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	if !ok || json.Unmarshal(r.Result, &list) != nil {
		s.reply(m.ID, textResult("tasks/list was not answered with a list", true))
		return
	}
	s.reply(m.ID, textResult(fmt.Sprintf("%d tasks created, %d refused; tasks/list holds %d", created, refused, len(list.Tasks)), false))
}

// awaitResponse waits (at most 10s) for the client's response to our
// request id, reading past anything else; batch tells whether it came in a
// batch.
func (s *rawServer) awaitResponse(id string) (r rawMsg, batch, ok bool) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case f, open := <-s.frames:
			if !open {
				return rawMsg{}, false, false
			}
			for _, r := range f.msgs {
				if r.Method == "" && string(r.ID) == id {
					return r, f.batch, true
				}
			}
		case <-timeout:
			return rawMsg{}, false, false
		}
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
