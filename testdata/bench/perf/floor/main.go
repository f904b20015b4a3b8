// Command floor is the floor of scripts/bench: the least a client written
// with the standard library alone does for each job the benchmark gives
// mcpx — list a server's tools as a table, call a tool and print its text,
// read a resource (text to stdout, a blob decoded into a file), run a script
// of tool calls on one session — over stdio or Streamable HTTP. It does
// the same protocol work as mcpx (handshake, every page, a clean shutdown:
// stdin closed and the server waited for, or DELETE of the HTTP session),
// with no validation, no rendering beyond a table and no options.
//
//	floor help
//	floor [-url URL] list [-- server command...]
//	floor [-url URL] call NAME ARGS-JSON [-o FILE] [-- server command...]
//	floor [-url URL] read URI [-o FILE] [-- server command...]
//	floor [-url URL] [-inflight N] script [-- server command...]   (stdin: "NAME ARGS-JSON" lines)
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
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

const usage = `usage: floor [-url URL] [-inflight N] COMMAND [ARGS] [-- server command...]
commands:
  help                       this text
  list                       tools/list (every page) as a table
  call NAME ARGS [-o FILE]   tools/call; text to stdout, blobs to FILE
  read URI [-o FILE]         resources/read; text to stdout, blobs to FILE
  script                     one tools/call per stdin line "NAME ARGS"
`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("url", "", "Streamable HTTP endpoint")
	inflight := flag.Int("inflight", 1, "script: requests kept in flight")
	flag.Parse()
	args := flag.Args()
	var server []string
	for i, a := range args {
		if a == "--" {
			args, server = args[:i], args[i+1:]
			break
		}
	}
	if len(args) == 0 || args[0] == "help" {
		_, err := os.Stdout.WriteString(usage)
		return err
	}
	out := ""
	for i := 0; i < len(args); i++ {
		if args[i] == "-o" && i+1 < len(args) {
			out = args[i+1]
			args = append(args[:i:i], args[i+2:]...)
			break
		}
	}
	var c conn
	var err error
	if *url != "" {
		c = &httpConn{url: *url}
	} else if len(server) > 0 {
		c, err = startStdio(server)
	} else {
		return errors.New("give -url or -- server command")
	}
	if err != nil {
		return err
	}
	cl := &client{conn: c}
	if _, err := cl.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"0"}}`); err != nil {
		c.close()
		return err
	}
	if err := c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); err != nil {
		c.close()
		return err
	}
	stdout := bufio.NewWriterSize(os.Stdout, 64<<10)
	switch args[0] {
	case "list":
		err = cl.list(stdout)
	case "call":
		if len(args) != 3 {
			err = errors.New("call NAME ARGS")
			break
		}
		var res []byte
		res, err = cl.call("tools/call", `{"name":`+strconv.Quote(args[1])+`,"arguments":`+args[2]+`}`)
		if err == nil {
			err = printContents(stdout, res, "content", out)
		}
	case "read":
		if len(args) != 2 {
			err = errors.New("read URI")
			break
		}
		var res []byte
		res, err = cl.call("resources/read", `{"uri":`+strconv.Quote(args[1])+`}`)
		if err == nil {
			err = printContents(stdout, res, "contents", out)
		}
	case "script":
		err = cl.script(os.Stdin, stdout, *inflight)
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if ferr := stdout.Flush(); err == nil {
		err = ferr
	}
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return err
}

// conn sends one JSON-RPC message; a request's response arrives through
// the client's dispatch (stdio) or as the POST's answer (HTTP).
type conn interface {
	send(msg []byte, deliver func([]byte)) error
	close() error
}

type client struct {
	conn conn
	mu   sync.Mutex
	next int
}

type response struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// start sends a request and returns a channel for its result; with async
// the sending (over HTTP: the whole exchange) runs in its own goroutine.
func (c *client) start(method, params string, async bool) <-chan callResult {
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	ch := make(chan callResult, 1)
	msg := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":` + params + `}`)
	deliver := func(frame []byte) {
		var r response
		if err := json.Unmarshal(frame, &r); err != nil {
			ch <- callResult{err: err}
			return
		}
		if r.Error != nil {
			ch <- callResult{err: fmt.Errorf("%s: %d %s", method, r.Error.Code, r.Error.Message)}
			return
		}
		ch <- callResult{res: r.Result}
	}
	send := func() {
		if err := c.conn.send(msg, deliver); err != nil {
			ch <- callResult{err: err}
		}
	}
	if async {
		go send()
	} else {
		send()
	}
	return ch
}

type callResult struct {
	res []byte
	err error
}

func (c *client) call(method, params string) ([]byte, error) {
	r := <-c.start(method, params, false)
	return r.res, r.err
}

func (c *client) list(w *bufio.Writer) error {
	type tool struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var tools []tool
	cursor := ""
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + strconv.Quote(cursor) + `}`
		}
		res, err := c.call("tools/list", params)
		if err != nil {
			return err
		}
		var page struct {
			Tools      []tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return err
		}
		tools = append(tools, page.Tools...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	width := 4
	for _, t := range tools {
		width = max(width, len(t.Name))
	}
	fmt.Fprintf(w, "%-*s  %s\n", width, "NAME", "DESCRIPTION")
	for _, t := range tools {
		fmt.Fprintf(w, "%-*s  %s\n", width, t.Name, t.Description)
	}
	return nil
}

// printContents prints the text of each content block of res[key] and
// writes the decoded blobs to out, or with out every block's text or
// data (the last one's stays).
func printContents(w *bufio.Writer, res []byte, key, out string) error {
	var r map[string][]struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
		Resource *struct {
			Text string `json:"text"`
			Blob string `json:"blob"`
		} `json:"resource"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	for _, c := range r[key] {
		text, blob := c.Text, c.Blob
		if c.Resource != nil {
			text, blob = c.Resource.Text, c.Resource.Blob
		}
		if blob != "" {
			data, err := base64.StdEncoding.DecodeString(blob)
			if err != nil {
				return err
			}
			if out == "" {
				fmt.Fprintf(w, "(%d bytes of binary content)\n", len(data))
				continue
			}
			if err := os.WriteFile(out, data, 0o666); err != nil {
				return err
			}
			continue
		}
		if out != "" {
			if err := os.WriteFile(out, []byte(text), 0o666); err != nil {
				return err
			}
			continue
		}
		w.WriteString(text)
		w.WriteByte('\n')
	}
	return nil
}

// script runs one tools/call per line, keeping up to inflight requests
// pending, and prints the results in the order of the lines.
func (c *client) script(in io.Reader, w *bufio.Writer, inflight int) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	inflight = max(inflight, 1)
	pending := make(chan (<-chan callResult), inflight)
	slots := make(chan struct{}, inflight)
	done := make(chan error, 1)
	go func() {
		var first error
		for ch := range pending {
			r := <-ch
			<-slots
			if r.err != nil && first == nil {
				first = r.err
			}
			if r.err == nil && first == nil {
				first = printContents(w, r.res, "content", "")
			}
		}
		done <- first
	}()
	for sc.Scan() {
		name, args, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		slots <- struct{}{}
		pending <- c.start("tools/call", `{"name":`+strconv.Quote(name)+`,"arguments":`+args+`}`, inflight > 1)
	}
	close(pending)
	if err := <-done; err != nil {
		return err
	}
	return sc.Err()
}

// ---- stdio ----

type stdioConn struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	wmu  sync.Mutex
	mu   sync.Mutex
	wait map[string]func([]byte)
	done chan struct{}
	err  error
}

func startStdio(argv []string) (*stdioConn, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &stdioConn{cmd: cmd, in: in, wait: map[string]func([]byte){}, done: make(chan struct{})}
	go c.read(out)
	return c, nil
}

func (c *stdioConn) read(out io.Reader) {
	defer close(c.done)
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it whole.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if len(line) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			c.err = err
			c.mu.Lock()
			for _, f := range c.wait {
				f([]byte(`{"error":{"code":-1,"message":"server closed its output"}}`))
			}
			c.wait = nil
			c.mu.Unlock()
			return
		}
	}
}

func (c *stdioConn) dispatch(line []byte) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	// Only the id is needed: decoding stops short of the result.
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return
		}
		if k == "id" {
			if err := dec.Decode(&m.ID); err != nil {
				return
			}
			break
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return
		}
	}
	if m.ID == nil {
		return
	}
	c.mu.Lock()
	f := c.wait[string(m.ID)]
	delete(c.wait, string(m.ID))
	c.mu.Unlock()
	if f != nil {
		f(line)
	}
}

func (c *stdioConn) send(msg []byte, deliver func([]byte)) error {
	if deliver != nil {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			return err
		}
		c.mu.Lock()
		c.wait[string(m.ID)] = deliver
		c.mu.Unlock()
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.in.Write(append(msg, '\n'))
	return err
}

func (c *stdioConn) close() error {
	c.in.Close()
	<-c.done
	return c.cmd.Wait()
}

// ---- Streamable HTTP ----

type httpConn struct {
	url     string
	mu      sync.Mutex
	session string
}

func (c *httpConn) send(msg []byte, deliver func([]byte)) error {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	c.mu.Lock()
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	c.mu.Unlock()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.mu.Lock()
		c.session = id
		c.mu.Unlock()
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST: %s", resp.Status)
	}
	if deliver == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return readSSE(resp.Body, deliver)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	deliver(body)
	return nil
}

// readSSE delivers the first event whose data is a response.
func readSSE(body io.Reader, deliver func([]byte)) error {
	r := bufio.NewReaderSize(body, 64<<10)
	var data []byte
	for {
		line, err := r.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && len(data) > 0:
			if bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`)) {
				deliver(data)
				return nil
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
		if err != nil {
			return fmt.Errorf("SSE stream ended without the response: %w", err)
		}
	}
}

func (c *httpConn) close() error {
	c.mu.Lock()
	session := c.session
	c.mu.Unlock()
	if session == "" {
		return nil
	}
	req, err := http.NewRequest(http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
