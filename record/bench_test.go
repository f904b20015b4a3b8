package record

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/transport"
)

// BenchmarkRecordingOverhead measures what recording costs a session with a
// real stdio server (the Go SDK server, in a child process). One session
// alternates round trips with the recorder on and off (a switch in front
// of it), so both kinds of call see the same process, pipes and machine
// state; it reports both and the overhead in percent (the target is under
// 5%).
func BenchmarkRecordingOverhead(b *testing.B) {
	for _, bc := range []struct {
		name   string
		method string
		params json.RawMessage
	}{
		{"ping", "ping", nil},
		{"tools-call", "tools/call", json.RawMessage(`{"name":"echo","arguments":{"message":"hello, recorded world"}}`)},
		{"tools-list", "tools/list", json.RawMessage(`{}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			rec, err := Create(context.Background(), b.TempDir()+"/bench.jsonl", RecorderOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { rec.Close() })
			c, err := transport.StartStdio(helper("sdk"))
			if err != nil {
				b.Fatal(err)
			}
			sw := &recordSwitch{plain: c, recorded: rec.Wrap(c)}
			s, err := inspector.Connect(ctx, sw, inspector.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			call := func(on bool) time.Duration {
				sw.on.Store(on)
				start := time.Now()
				if _, err := s.Call(ctx, bc.method, bc.params); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for i := 0; i < 200; i++ { // warm up both
				call(false)
				call(true)
			}
			plain := make([]time.Duration, b.N)
			recorded := make([]time.Duration, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					plain[i] = call(false)
					recorded[i] = call(true)
				} else {
					recorded[i] = call(true)
					plain[i] = call(false)
				}
			}
			b.StopTimer()
			// Medians: a scheduler hiccup or a GC pause in one call says
			// nothing about recording.
			p, r := median(plain), median(recorded)
			b.ReportMetric(p, "plain-ns/call")
			b.ReportMetric(r, "recorded-ns/call")
			b.ReportMetric((r-p)/p*100, "overhead-%")
		})
	}
}

func median(ds []time.Duration) float64 {
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds())
}

// recordSwitch sends each read and write through the recorder or not,
// as on says (set between calls).
type recordSwitch struct {
	plain, recorded transport.Conn
	on              atomic.Bool
}

func (s *recordSwitch) conn() transport.Conn {
	if s.on.Load() {
		return s.recorded
	}
	return s.plain
}

func (s *recordSwitch) Read(ctx context.Context) (transport.Frame, error) {
	return s.conn().Read(ctx)
}

func (s *recordSwitch) Write(ctx context.Context, f transport.Frame) error {
	return s.conn().Write(ctx, f)
}

func (s *recordSwitch) Close() error { return s.plain.Close() }

// BenchmarkRecorderFrame is the recorder's own cost per frame (redaction,
// encoding, one write to a file).
func BenchmarkRecorderFrame(b *testing.B) {
	rec, err := Create(context.Background(), b.TempDir()+"/frames.jsonl", RecorderOptions{})
	defer rec.Close()
	if err != nil {
		b.Fatal(err)
	}
	frame := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hello, recorded world"}],"structuredContent":{"a":1,"b":[1,2,3]}}}`)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: frame})
	}
}

// bigTrace is a recorded session of n exchanges: initialize, then n-1
// tools/call requests with distinct arguments and their results.
func bigTrace(n int) *Trace {
	tr := &Trace{Header: Header{Format: Format, Version: Version, Redacted: true}}
	add := func(dir Direction, s string) {
		tr.Events = append(tr.Events, Event{Time: time.Duration(len(tr.Events)) * time.Microsecond, Kind: KindFrame, Dir: dir, Data: []byte(s)})
	}
	add(ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	add(ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`)
	add(ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 2; i <= n; i++ {
		add(ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"message number %d"}}}`, i, i))
		add(ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"Echo: message number %d"}],"structuredContent":{"n":%d,"at":"2026-01-01T00:00:00Z"}}}`, i, i, i))
	}
	return tr
}

// BenchmarkVerify10000 verifies a 10,000-exchange trace against an
// in-process replay of it: all of the time is mcpx's (the target is under
// 2 s per verification).
func BenchmarkVerify10000(b *testing.B) {
	tr := bigTrace(10000)
	rp, err := NewReplayer(tr, ReplayOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		conn, done := rp.ServePipe(ctx)
		res, err := Verify(ctx, tr, conn, VerifyOptions{})
		conn.Close()
		<-done
		cancel()
		if err != nil || !res.OK() || res.Exchanges != 10000 {
			b.Fatalf("verify: %v, %+v", err, res)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/verify")
}

// BenchmarkRecorderBigFrame is BenchmarkRecorderFrame for a tools/list
// result of about 8 KiB.
func BenchmarkRecorderBigFrame(b *testing.B) {
	rec, err := NewRecorder(io.Discard, RecorderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var tools []string
	for i := 0; i < 30; i++ {
		tools = append(tools, fmt.Sprintf(`{"name":"tool-%d","description":"Does thing number %d, carefully.","inputSchema":{"type":"object","properties":{"a":{"type":"number","description":"first"},"b":{"type":"string"}},"required":["a"]}}`, i, i))
	}
	frame := []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[` + strings.Join(tools, ",") + `]}}`)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: frame})
	}
}
