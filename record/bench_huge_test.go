package record

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// hugeResult is a tools/call result of about 50 MiB: one text content
// of prose, the same with the first secret of BenchmarkRecorderHugeFrame
// in every 4 KiB of it, or one image content of base64 (the payloads of
// the 50 MiB goals).
func hugeResult(kind string) []byte {
	const size = 50 << 20
	var body string
	switch kind {
	case "text":
		body = strings.Repeat("the quick brown fox jumps over the lazy dog; tokens are counted here. ", size/70)
		return []byte(`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"` + body + `"}]}}`)
	case "echoes":
		body = strings.Repeat(strings.Repeat("the quick brown fox jumps over the lazy dog; ", 90)+"tk-00000000-LIVE-secret", size/4073)
		return []byte(`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"` + body + `"}]}}`)
	default:
		raw := make([]byte, size*3/4)
		for i := range raw {
			raw[i] = byte(i*7919 + i>>8)
		}
		body = base64.StdEncoding.EncodeToString(raw)
		return []byte(`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"image","mimeType":"image/png","data":"` + body + `"}]}}`)
	}
}

// BenchmarkRecorderHugeFrame is the recorder's cost for a 50 MiB server
// frame, after the client sent n secret arguments that the session then
// looks for in everything the server sends (redaction rules 3): it should
// not depend on n.
func BenchmarkRecorderHugeFrame(b *testing.B) {
	for _, kind := range []string{"text", "blob", "echoes"} {
		frame := hugeResult(kind)
		for _, n := range []int{0, 1, 32} {
			b.Run(fmt.Sprintf("%s/secrets=%d", kind, n), func(b *testing.B) {
				rec, err := NewRecorder(io.Discard, RecorderOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer rec.Close()
				for i := range n {
					rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: fmt.Appendf(nil,
						`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"login","arguments":{"token":"tk-%08d-LIVE-secret"}}}`, i+1, i)})
				}
				b.SetBytes(int64(len(frame)))
				b.ResetTimer()
				for range b.N {
					rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: frame})
					rec.Flush()
				}
			})
		}
	}
}
