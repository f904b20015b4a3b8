package export_test

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/export"
	"github.com/mcpx-dev/mcpx/transport"
)

// bigTrace is a stdio session whose tools/call is answered with a text
// of about size bytes, and a Streamable HTTP session whose SSE response
// carries the same.
func bigTrace(size int) *record.Trace {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog\n", size/44)
	result := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":` + fmt.Sprintf("%q", text) + `}]}}`)
	call := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	const u = "http://127.0.0.1:7000/mcp"
	h := record.Header{Format: record.Format, Version: record.Version, Minor: record.Minor, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return &record.Trace{Header: h, Events: []record.Event{
		{Session: 1, Kind: record.KindSession, SessionInfo: &record.SessionInfo{Transport: "stdio", Target: "server"}},
		{Session: 1, Time: ms(1), Kind: record.KindFrame, Dir: record.ClientToServer, Data: call},
		{Session: 1, Time: ms(2), Kind: record.KindFrame, Dir: record.ServerToClient, Data: result},
		{Session: 2, Time: ms(3), Kind: record.KindSession, SessionInfo: &record.SessionInfo{Transport: "http", Target: u}},
		{Session: 2, Time: ms(4), Kind: record.KindFrame, Dir: record.ClientToServer, Data: call},
		{Session: 2, Time: ms(5), Kind: record.KindHTTP, Text: "POST " + u, Meta: &transport.Meta{HTTPMethod: "POST", URL: u}},
		{Session: 2, Time: ms(6), Kind: record.KindHTTP, Text: "200 OK text/event-stream ← POST " + u,
			Meta: &transport.Meta{HTTPMethod: "POST", URL: u, HTTPStatus: 200, ContentType: "text/event-stream"}},
		{Session: 2, Time: ms(7), Kind: record.KindFrame, Dir: record.ServerToClient, Data: result,
			Meta: &transport.Meta{HTTPMethod: "POST", URL: u, HTTPStatus: 200, ContentType: "text/event-stream", StreamID: "post-2"}},
	}}
}

type exporter struct {
	name  string
	write func(io.Writer, record.SessionSource, export.Options) error
}

var exporters = []exporter{{"HAR", export.HAR}, {"HTML", export.HTML}}

// An export writes a large frame from the trace's bytes: it neither
// copies it into strings of its own nor holds its JSON. Before, the HAR
// of a 50 MiB response took 467 MB (its text copied, then its JSON built
// in a buffer that grew by doubling, for the stdio session; over HTTP its
// SSE text and its event's data besides), the HTML page 221 MB.
func TestExportDoesNotCopyLargeFrames(t *testing.T) {
	const size = 8 << 20
	tr := bigTrace(size)
	for _, c := range exporters {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := c.write(io.Discard, tr, export.Options{}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got := float64(after.TotalAlloc-before.TotalAlloc) / size; got > 0.1 {
			t.Errorf("%s: allocated %.2f times the large frame (which two sessions hold), want at most 0.1", c.name, got)
		}
	}
}

// BenchmarkExport exports a trace holding a 16 MiB response twice (over
// stdio and over HTTP): B/op is what an export costs beyond the trace.
func BenchmarkExport(b *testing.B) {
	tr := bigTrace(16 << 20)
	for _, c := range exporters {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := c.write(io.Discard, tr, export.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
