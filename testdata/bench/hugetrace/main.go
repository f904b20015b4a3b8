// Command hugetrace writes a large trace of one session, for measuring by
// hand the memory of the trace commands (trace diff, replay, verify, trace
// export) on traces of the size a long session leaves:
//
//	go run ./testdata/bench/hugetrace -o /tmp/c.jsonl -kb 1
//	/usr/bin/time -v mcpx trace export --har /tmp/c.jsonl > /dev/null
//
// -variant changes one response in a hundred (a second trace for trace
// diff); -http records a Streamable HTTP session instead, as mcpx the
// client records one: each call a POST answered with an SSE stream or
// (one in three) with JSON, its response arriving after the next call is
// sent (for trace export).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

func main() {
	name := flag.String("o", "", "the trace file to write (required)")
	mb := flag.Int("mb", 130, "the trace's size in MB, about")
	kb := flag.Int("kb", 6, "a response's size in KB, about")
	variant := flag.Bool("variant", false, "change one response in a hundred")
	overHTTP := flag.Bool("http", false, "record a Streamable HTTP session")
	flag.Parse()
	if *name == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Create(*name)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	hd := record.Header{Transport: "stdio", Target: "server"}
	if *overHTTP {
		hd = record.Header{Transport: "http", Target: hugeURL}
	}
	rec, err := record.NewRecorder(bw, record.RecorderOptions{Header: hd})
	if err != nil {
		log.Fatal(err)
	}
	frame := func(dir transport.Direction, s string) {
		rec.Frame(time.Now(), dir, transport.Frame{Data: []byte(s)})
	}
	if *overHTTP {
		frame = httpExchanges(rec)
	}
	frame(transport.Outgoing, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpx","version":"1"}}}`)
	frame(transport.Incoming, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}`)
	frame(transport.Outgoing, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	reps := max(*kb<<10/45, 1) // 45 bytes a repetition
	body := strings.Repeat("the quick brown fox jumps over the lazy dog; ", reps)
	per := len(body) + 200
	n := *mb << 20 / per
	for i := 1; i <= n; i++ {
		frame(transport.Outgoing, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`, i, i))
		text := body
		if *variant && i%100 == 0 {
			text = "changed " + body
		}
		frame(transport.Incoming, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d %s"}]}}`, i, i, text))
	}
	if *overHTTP {
		frame(transport.Outgoing, "") // the last response
	}
	if err := rec.Close(); err != nil {
		log.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
}

const hugeURL = "http://127.0.0.1:7000/mcp"

// httpExchanges returns a function that records the frames given it as
// Streamable HTTP exchanges do: the client's frame, then its POST; the
// server's frame (a response, or a notification on its way) is held and
// recorded, on an SSE stream or (one POST in three) as a JSON body,
// after the next POST, so that exchanges overlap. An empty frame of the
// client's sends only what is held.
func httpExchanges(rec *record.Recorder) func(transport.Direction, string) {
	var held []string
	posts := 0
	http := func(text string, m transport.Meta) {
		m.HTTPMethod, m.URL = "POST", hugeURL
		rec.Observe(transport.Event{Time: time.Now(), Kind: transport.EventHTTP, Text: text, Meta: &m})
	}
	answer := func(n int, data []string) {
		if n%3 == 0 {
			http("200 OK application/json ← POST "+hugeURL, transport.Meta{HTTPStatus: 200, ContentType: "application/json"})
			for _, d := range data {
				rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: []byte(d), Meta: &transport.Meta{HTTPMethod: "POST", URL: hugeURL, HTTPStatus: 200, ContentType: "application/json"}})
			}
			return
		}
		http("200 OK text/event-stream ← POST "+hugeURL, transport.Meta{HTTPStatus: 200, ContentType: "text/event-stream"})
		stream := "post-" + strconv.Itoa(n)
		for i, d := range data {
			rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: []byte(d), Meta: &transport.Meta{HTTPMethod: "POST", URL: hugeURL,
				HTTPStatus: 200, ContentType: "text/event-stream", StreamID: stream, EventID: stream + "-" + strconv.Itoa(i)}})
		}
	}
	return func(dir transport.Direction, s string) {
		if dir == transport.Incoming {
			held = append(held, s)
			return
		}
		if s != "" {
			rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(s)})
			http("POST "+hugeURL+" (Mcp-Session-Id: 1868a90c)", transport.Meta{SessionID: "1868a90c"})
			if !strings.Contains(s, `"id"`) {
				// A notification is accepted, with no body.
				http("202 Accepted ← POST "+hugeURL, transport.Meta{HTTPStatus: 202})
				return
			}
			posts++
		}
		if len(held) > 0 {
			answer(posts-1, held)
			held = nil
		}
	}
}
