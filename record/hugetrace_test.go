package record

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// TestWriteHugeTrace writes a large trace of one stdio session for
// measuring the memory of the trace commands by hand (trace diff, replay,
// verify, trace export): MCPX_HUGE_TRACE names the file,
// MCPX_HUGE_TRACE_MB its size (130 MB by default), MCPX_HUGE_TRACE_KB
// the size of a response (6 KB by default) and
// MCPX_HUGE_TRACE_VARIANT, when set, changes one response in a hundred
// (for trace diff). Skipped without MCPX_HUGE_TRACE.
func TestWriteHugeTrace(t *testing.T) {
	name := os.Getenv("MCPX_HUGE_TRACE")
	if name == "" {
		t.Skip("MCPX_HUGE_TRACE names the file to write")
	}
	mb := 130
	if v := os.Getenv("MCPX_HUGE_TRACE_MB"); v != "" {
		var err error
		if mb, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	variant := os.Getenv("MCPX_HUGE_TRACE_VARIANT") != ""
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	rec, err := NewRecorder(bw, RecorderOptions{Header: Header{Transport: "stdio", Target: "server"}})
	if err != nil {
		t.Fatal(err)
	}
	frame := func(dir transport.Direction, s string) {
		rec.Frame(time.Now(), dir, transport.Frame{Data: []byte(s)})
	}
	frame(transport.Outgoing, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpx","version":"1"}}}`)
	frame(transport.Incoming, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}`)
	frame(transport.Outgoing, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	reps := 140 // a response of about 6 KB
	if v := os.Getenv("MCPX_HUGE_TRACE_KB"); v != "" {
		kb, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		reps = max(kb<<10/45, 1)
	}
	body := strings.Repeat("the quick brown fox jumps over the lazy dog; ", reps)
	per := len(body) + 200
	n := mb << 20 / per
	for i := 1; i <= n; i++ {
		frame(transport.Outgoing, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`, i, i))
		text := body
		if variant && i%100 == 0 {
			text = "changed " + body
		}
		frame(transport.Incoming, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d %s"}]}}`, i, i, text))
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}
