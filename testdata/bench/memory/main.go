// Command memory measures mcpx's peak resident memory (RSS) on large
// frames and prints it as a ratio to the frame's size: a 50 MiB frame over
// stdio, over Streamable HTTP with an SSE response (and, for comparison,
// with a JSON body), and a 100 MiB frame in a trace read by trace show,
// replay, verify and trace diff. scripts/bench-memory builds mcpx and runs it.
//
// The peak is the child's ru_maxrss as wait4 reports it. That figure also
// covers the child's own waited-for children (the stdio server mcpx
// starts), so the server here is this program in a lean mode that streams
// its frames from a small buffer and stays far below mcpx's figure. The
// HTTP server runs in this process, which is not measured.
//
// The fixed overhead (the RSS of mcpx --version) is printed too, so a
// reader sees how much of each figure the payload costs.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serveEnv, when set in the environment, makes this program the stdio
// test server (mcpx starts it as its server).
const serveEnv = "MCPX_BENCH_SERVE"

// frameEnv holds the size of the big frames the server sends, in bytes.
const frameEnv = "MCPX_BENCH_FRAME"

// textEnv, when set, makes the server answer every tools/call with a text
// of that many x, whatever the tool: the answers of the sessions trace
// (writeSessionsTrace), so that verify finds no difference.
const textEnv = "MCPX_BENCH_TEXT"

func main() {
	if os.Getenv(serveEnv) != "" {
		size, _ := strconv.Atoi(os.Getenv(frameEnv))
		text, _ := strconv.Atoi(os.Getenv(textEnv))
		if err := serveStdio(os.Stdin, os.Stdout, size, text); err != nil {
			fmt.Fprintln(os.Stderr, "bench server:", err)
			os.Exit(1)
		}
		return
	}
	mcpx := flag.String("mcpx", "", "the mcpx binary to measure")
	frame := flag.Int("frame", 50<<20, "size in bytes of the frame sent over stdio and HTTP")
	traceFrame := flag.Int("trace-frame", 100<<20, "size in bytes of the frame in the trace")
	only := flag.String("only", "", "run only the cases whose name contains this")
	keep := flag.Bool("keep", false, "keep the work directory (the trace) and print its name")
	flag.Parse()
	if *mcpx == "" {
		fmt.Fprintln(os.Stderr, "usage: memory -mcpx PATH [-frame BYTES] [-trace-frame BYTES] [-only NAME]")
		os.Exit(2)
	}
	if err := run(*mcpx, *frame, *traceFrame, *only, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench-memory:", err)
		os.Exit(1)
	}
}

// result is one measured case.
type result struct {
	name    string
	payload int   // the frame's size
	peak    int64 // peak RSS in bytes
	elapsed time.Duration
}

func run(mcpx string, frame, traceFrame int, only string, keep bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mcpx-bench-memory-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("work directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	srv, err := startHTTP(frame)
	if err != nil {
		return err
	}
	defer srv.Close()

	server := func(size int) []string {
		return []string{"--", self}
	}
	env := func(size int) []string {
		return []string{serveEnv + "=1", frameEnv + "=" + strconv.Itoa(size), "MCPX_PROTOCOL_ERA="}
	}
	out := filepath.Join(dir, "out")
	type tcase struct {
		name    string
		payload int
		args    []string
		env     []string
		stdin   func(w io.WriteCloser, r io.Reader) error // drives stdin/stdout when set
		ok      func(code int) bool
	}
	stdio, sse, jsonURL := server(frame), []string{"--url", srv.sse}, []string{"--url", srv.json}
	trace := filepath.Join(dir, "trace.jsonl")
	sessions := filepath.Join(dir, "sessions.jsonl")
	oneSession := filepath.Join(dir, "one-session.jsonl")
	cases := []tcase{
		{name: "baseline: mcpx --version", args: []string{"--version"}},
		{name: "stdio: call tools/call --json", payload: frame, args: cat([]string{"call", "tools/call", `{"name":"big"}`, "--json"}, stdio), env: env(frame)},
		{name: "stdio: tools call --json", payload: frame, args: cat([]string{"tools", "call", "big", "--json"}, stdio), env: env(frame)},
		{name: "stdio: tools call (text)", payload: frame, args: cat([]string{"tools", "call", "big"}, stdio), env: env(frame)},
		{name: "stdio: resources read -o FILE", payload: frame, args: cat([]string{"resources", "read", "test://big", "-o", out + ".bin"}, stdio), env: env(frame)},
		{name: "sse: call tools/call --json", payload: frame, args: cat([]string{"call", "tools/call", `{"name":"big"}`, "--json"}, sse)},
		{name: "sse: tools call --json", payload: frame, args: cat([]string{"tools", "call", "big", "--json"}, sse)},
		{name: "sse: tools call (text)", payload: frame, args: cat([]string{"tools", "call", "big"}, sse)},
		{name: "sse: resources read -o FILE", payload: frame, args: cat([]string{"resources", "read", "test://big", "-o", out + ".bin"}, sse)},
		{name: "json body: tools call --json", payload: frame, args: cat([]string{"tools", "call", "big", "--json"}, jsonURL)},
		{name: "trace: record (tools call --record)", payload: traceFrame, args: cat([]string{"tools", "call", "big", "--json", "--record", trace}, server(traceFrame)), env: env(traceFrame)},
		{name: "trace: trace show", payload: traceFrame, args: []string{"trace", "show", trace}},
		{name: "trace: trace show --json", payload: traceFrame, args: []string{"trace", "show", "--json", trace}},
		{name: "trace: replay (stdio)", payload: traceFrame, args: []string{"replay", trace},
			stdin: func(w io.WriteCloser, r io.Reader) error { return replayClient(trace, w, r) }},
		{name: "trace: verify", payload: traceFrame, args: cat([]string{"verify", trace}, server(traceFrame)), env: env(traceFrame)},
		{name: "trace: trace diff (the trace with itself)", payload: traceFrame, args: []string{"trace", "diff", trace, trace}},
		// A trace of several sessions (a proxy's day): replay holds the
		// session it serves, not the file.
		{name: "sessions: replay (stdio) of session 3", payload: sessionsTraceSize, args: []string{"replay", sessions},
			stdin: func(w io.WriteCloser, r io.Reader) error { return replaySessionClient(sessions, 3, w, r) }},
		// Verify streams it: each session on a server of its own, read as
		// its events are needed (issue 14: a 36 MiB trace under 100 MiB).
		{name: "sessions: verify (4 sessions)", payload: sessionsTraceSize, args: cat([]string{"verify", sessions}, server(0)),
			env: []string{serveEnv + "=1", textEnv + "=" + strconv.Itoa(sessionResult), "MCPX_PROTOCOL_ERA="}},
		// The same calls in one session: verify holds what is in flight,
		// replay the session it serves.
		{name: "sessions: replay (stdio) of 1 session", payload: sessionsTraceSize, args: []string{"replay", oneSession},
			stdin: func(w io.WriteCloser, r io.Reader) error { return replaySessionClient(oneSession, 1, w, r) }},
		{name: "sessions: verify (1 session)", payload: sessionsTraceSize, args: cat([]string{"verify", oneSession}, server(0)),
			env: []string{serveEnv + "=1", textEnv + "=" + strconv.Itoa(sessionResult), "MCPX_PROTOCOL_ERA="}},
	}
	if err := writeSessionsTrace(sessions, 4, sessionCalls); err != nil {
		return err
	}
	if err := writeSessionsTrace(oneSession, 1, 4*sessionCalls); err != nil {
		return err
	}
	var results []result
	var base int64
	for _, c := range cases {
		if only != "" && !strings.Contains(c.name, only) && !strings.HasPrefix(c.name, "baseline") &&
			!(strings.HasPrefix(c.name, "trace: record") && strings.Contains(only, "trace")) {
			continue
		}
		start := time.Now()
		peak, code, stderr, err := measure(mcpx, c.args, c.env, out, c.stdin)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if code != 0 {
			return fmt.Errorf("%s: mcpx exited %d: %s", c.name, code, lastLine(stderr))
		}
		r := result{name: c.name, payload: c.payload, peak: peak, elapsed: time.Since(start)}
		if c.payload == 0 {
			base = peak
		}
		results = append(results, r)
		report(r, base)
	}
	return nil
}

func cat(a, b []string) []string { return append(append([]string(nil), a...), b...) }

const mib = 1 << 20

func report(r result, base int64) {
	if r.payload == 0 {
		fmt.Printf("%-40s %27s peak RSS %6.1f MiB (the fixed overhead)\n", r.name, "", float64(r.peak)/mib)
		return
	}
	fmt.Printf("%-40s frame %5.1f MiB  peak RSS %6.1f MiB  ratio %5.2f  (above baseline %5.2f)  %5.1fs\n",
		r.name, float64(r.payload)/mib, float64(r.peak)/mib, float64(r.peak)/float64(r.payload),
		float64(r.peak-base)/float64(r.payload), r.elapsed.Seconds())
}

// measure runs mcpx with args and returns its peak RSS in bytes.
func measure(mcpx string, args, env []string, out string, drive func(io.WriteCloser, io.Reader) error) (int64, int, string, error) {
	cmd := exec.Command(mcpx, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var driveErr chan error
	if drive != nil {
		in, err := cmd.StdinPipe()
		if err != nil {
			return 0, 0, "", err
		}
		o, err := cmd.StdoutPipe()
		if err != nil {
			return 0, 0, "", err
		}
		if err := cmd.Start(); err != nil {
			return 0, 0, "", err
		}
		driveErr = make(chan error, 1)
		go func() { driveErr <- drive(in, o) }()
	} else {
		f, err := os.Create(out)
		if err != nil {
			return 0, 0, "", err
		}
		defer f.Close()
		cmd.Stdout = f
		if err := cmd.Start(); err != nil {
			return 0, 0, "", err
		}
	}
	if driveErr != nil {
		// Wait closes the pipes: the driver finishes first (it reads mcpx's
		// stdout to its end).
		if err := <-driveErr; err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return 0, 0, stderr.String(), fmt.Errorf("driving mcpx: %w", err)
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, 0, stderr.String(), err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, "", errors.New("no rusage on this platform")
	}
	peak := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" {
		peak *= 1024 // Linux reports KiB, macOS bytes
	}
	return peak, cmd.ProcessState.ExitCode(), stderr.String(), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// ---- the big frames ----

// textLine is one line of the big text: 63 characters and a newline,
// which JSON escapes as \n.
const textLine = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

// writeBigText writes a tools/call result frame of exactly size bytes
// (without its newline) answering id: one text content.
func writeBigText(w io.Writer, id json.RawMessage, size int) error {
	prefix := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`
	suffix := `END"}]}}`
	return writeFill(w, prefix, suffix, size, []byte(strings.Repeat(textLine+`\n`, 1024)))
}

// writeBigBlob writes a resources/read result frame of exactly size bytes
// holding one binary resource (base64, a multiple of 4 characters).
func writeBigBlob(w io.Writer, id json.RawMessage, size int) error {
	prefix := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"contents":[{"uri":"test://big","mimeType":"application/octet-stream","blob":"`
	suffix := `"}]}}`
	raw := make([]byte, 48*1024)
	for i := range raw {
		raw[i] = byte(i*7 + i/256)
	}
	size -= (size - len(prefix) - len(suffix)) % 4
	return writeFill(w, prefix, suffix, size, []byte(base64.StdEncoding.EncodeToString(raw)))
}

// writeFill writes prefix, then chunk repeatedly (the last one cut short)
// so that the whole is size bytes with suffix, then suffix.
func writeFill(w io.Writer, prefix, suffix string, size int, chunk []byte) error {
	bw := bufio.NewWriterSize(w, 256*1024)
	bw.WriteString(prefix)
	n := size - len(prefix) - len(suffix)
	for n > 0 {
		c := chunk[:min(n, len(chunk))]
		if len(c) < len(chunk) && bytes.HasSuffix(c, []byte(`\`)) {
			c[len(c)-1] = 'x' // never cut an escape in half
		}
		bw.Write(c)
		n -= len(c)
	}
	bw.WriteString(suffix)
	return bw.Flush()
}

// ---- the stdio server ----

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// answer writes the answer to req (nothing for a notification); text,
// when not zero, is the length of every tools/call's answer text (see
// textEnv).
func answer(w io.Writer, req request, size, text int, newline bool) error {
	if req.ID == nil {
		return nil
	}
	end := func(err error) error {
		if err == nil && newline {
			_, err = w.Write([]byte("\n"))
		}
		return err
	}
	result := ""
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		v, _ := json.Marshal(p.ProtocolVersion)
		result = `{"protocolVersion":` + string(v) + `,"capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"bench","version":"1"}}`
	case "ping":
		result = `{}`
	case "tools/list":
		result = `{"tools":[{"name":"big","description":"A big text","inputSchema":{"type":"object"}}]}`
	case "tools/call":
		if text > 0 {
			result = `{"content":[{"type":"text","text":"` + strings.Repeat("x", text) + `"}]}`
			break
		}
		return end(writeBigText(w, req.ID, size))
	case "resources/read":
		return end(writeBigBlob(w, req.ID, size))
	default:
		_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`, req.ID, req.Method)
		return end(err)
	}
	_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	return end(err)
}

func serveStdio(in io.Reader, out io.Writer, size, text int) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var req request
		if json.Unmarshal(sc.Bytes(), &req) != nil {
			continue
		}
		if err := answer(out, req, size, text, true); err != nil {
			return err
		}
	}
	return sc.Err()
}

// ---- the HTTP server (Streamable HTTP, stateless) ----

type httpServer struct {
	l         net.Listener
	sse, json string
}

func (s *httpServer) Close() { s.l.Close() }

func startHTTP(size int) (*httpServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + l.Addr().String()
	mux := http.NewServeMux()
	handle := func(sse bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.Error(w, "no", http.StatusMethodNotAllowed)
				return
			}
			var req request
			if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if req.ID == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			if !sse {
				w.Header().Set("Content-Type", "application/json")
				answer(w, req, size, 0, false)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
			answer(w, req, size, 0, false)
			io.WriteString(w, "\n\n")
		}
	}
	mux.Handle("/sse", handle(true))
	mux.Handle("/json", handle(false))
	go http.Serve(l, mux)
	return &httpServer{l: l, sse: base + "/sse", json: base + "/json"}, nil
}

// ---- the replay client ----

// replayClient plays the client side of trace to a replaying mcpx: it
// sends each recorded client frame and, after a request, reads lines until
// the answer with its id arrived. Big lines are skipped, never buffered.
func replayClient(trace string, w io.WriteCloser, r io.Reader) error {
	return replaySessionClient(trace, 0, w, r)
}

// sessionsTraceSize is about the size of the traces writeSessionsTrace
// writes: 4 sessions of 9 MiB, or one of 36 MiB.
const sessionsTraceSize = 4 * sessionCalls * sessionResult

const (
	sessionCalls  = 96
	sessionResult = 96 << 10
)

// writeSessionsTrace writes a trace of n sessions, each a handshake and
// calls tool calls answered with sessionResult bytes of text.
func writeSessionsTrace(name string, n, calls int) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(bw, `{"format":"mcpx-trace","version":1,"minor":2,"mcpx":"bench","created":"2026-01-01T00:00:00Z","transport":"stdio","target":"stdio: bench","redacted":true}`)
	text := strings.Repeat("x", sessionResult)
	t := 0
	ev := func(s int, rest string) {
		t += 10
		fmt.Fprintf(bw, `{"t":%d,"s":%d,%s}`+"\n", t, s, rest)
	}
	for s := 1; s <= n; s++ {
		ev(s, `"kind":"session","text":"stdio: bench","session":{"transport":"stdio","target":"stdio: bench"}`)
		ev(s, `"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		ev(s, `"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"bench","version":"1"}}}`)
		ev(s, `"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i := 1; i <= calls; i++ {
			ev(s, fmt.Sprintf(`"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"s%d","arguments":{"i":%d}}}`, i, s, i))
			ev(s, fmt.Sprintf(`"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, i, text))
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replaySessionClient is replayClient for one session of the trace (0:
// every frame).
func replaySessionClient(trace string, session int, w io.WriteCloser, r io.Reader) error {
	mark := []byte(fmt.Sprintf(`"s":%d,`, session))
	in := bufio.NewReaderSize(r, 1<<20)
	defer func() {
		w.Close()
		io.Copy(io.Discard, in)
	}()
	f, err := os.Open(trace)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := bufio.NewReaderSize(f, 1<<20)
	for {
		head, small, err := peekLine(tr)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !small || !bytes.Contains(head, []byte(`"dir":"c2s"`)) || session > 0 && !bytes.Contains(head, mark) {
			continue
		}
		var ev struct {
			Msg json.RawMessage `json:"msg"`
		}
		if json.Unmarshal(head, &ev) != nil || len(ev.Msg) == 0 {
			continue
		}
		var req request
		json.Unmarshal(ev.Msg, &req)
		if _, err := w.Write(append(ev.Msg, '\n')); err != nil {
			return err
		}
		if req.ID == nil || req.Method == "" {
			continue
		}
		want := []byte(`"id":` + string(req.ID))
		for {
			head, _, err := peekLine(in)
			if err != nil {
				return fmt.Errorf("waiting for the answer to %s: %w", req.Method, err)
			}
			if bytes.Contains(head, want) && !bytes.Contains(head, []byte(`"method"`)) {
				break
			}
		}
	}
}

// peekLine consumes one line of r and returns its first 64 KiB (all of it
// when small is true).
func peekLine(r *bufio.Reader) (head []byte, small bool, err error) {
	line, err := r.ReadSlice('\n')
	if err == nil {
		return append([]byte(nil), line...), true, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return append([]byte(nil), line...), true, nil
		}
		return nil, false, err
	}
	head = append([]byte(nil), line[:min(len(line), 64*1024)]...)
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = r.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	return head, false, nil
}
