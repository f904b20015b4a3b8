package inspector

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func TestResourceContentWriteTo(t *testing.T) {
	data := []byte("any carnal pleasure, and then some\x00\xff")
	std := base64.StdEncoding.EncodeToString(data)
	raw := base64.RawStdEncoding.EncodeToString(data)
	for _, tc := range []struct {
		name, value string
		binary      bool
		want        []byte
		bad         bool
	}{
		{"text", `"plain text"`, false, []byte("plain text"), false},
		{"text with escapes", `"a\nb \"q\" \u00e9"`, false, []byte("a\nb \"q\" é"), false},
		{"padded blob", `"` + std + `"`, true, data, false},
		{"unpadded blob", `"` + raw + `"`, true, data, false},
		{"over-padded blob", `"` + raw + `===="`, true, data, false},
		{"blob with line breaks", `"` + std[:8] + `\r\n` + std[8:] + `\n"`, true, data, false},
		{"blob with an escaped slash", `"` + strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xff}), "/", `\/`) + `"`, true, []byte{0xff, 0xff, 0xff}, false},
		{"not base64", `"a*b="`, true, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := `{"contents":[{"uri":"x:/1","text":` + tc.value + `}]}`
			if tc.binary {
				res = `{"contents":[{"uri":"x:/1","blob":` + tc.value + `}]}`
			}
			cs, err := DecodeContents(json.RawMessage(res))
			if err != nil || len(cs) != 1 || cs[0].Binary != tc.binary {
				t.Fatalf("DecodeContents: %v, %+v", err, cs)
			}
			var b bytes.Buffer
			n, err := cs[0].WriteTo(&b)
			if tc.bad {
				if err == nil || !strings.Contains(err.Error(), "blob is not valid base64") || !errors.Is(err, ErrProtocolViolation) || !errors.Is(cs[0].Check(), ErrProtocolViolation) {
					t.Fatalf("WriteTo: %v; want a base64 error (Check too)", err)
				}
				return
			}
			if err != nil || cs[0].Check() != nil || !bytes.Equal(b.Bytes(), tc.want) || n != int64(len(tc.want)) {
				t.Fatalf("WriteTo = %d, %v: %q, want %q", n, err, b.Bytes(), tc.want)
			}
		})
	}
}

// A large blob is decoded as it is written: never held decoded whole.
func TestResourceContentWriteToStreams(t *testing.T) {
	const size = 3 << 21
	res := []byte(`{"contents":[{"uri":"x:/big","blob":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1, 2, 3}, size/3)) + `"}]}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cs, err := DecodeContents(res)
	if err != nil {
		t.Fatal(err)
	}
	var count countingWriter
	if _, err := cs[0].WriteTo(&count); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if count != size {
		t.Fatalf("wrote %d bytes, want %d", count, size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/8 {
		t.Errorf("allocated %d bytes to write a %d-byte blob", alloc, size)
	}
}

// A text of many lines is written in few writes, whatever its escapes:
// each "\n" ended a piece, each piece was a write, and each write to a
// file (-o) a system call (a 100 MiB text of short lines took 10 s).
func TestResourceContentWriteToBuffersText(t *testing.T) {
	line := strings.Repeat("x", 15) + `\n`
	const lines = 64 << 10
	res := []byte(`{"contents":[{"uri":"x:/log","text":"` + strings.Repeat(line, lines) + `"}]}`)
	cs, err := DecodeContents(res)
	if err != nil {
		t.Fatal(err)
	}
	var w writeCounter
	n, err := cs[0].WriteTo(&w)
	if err != nil || n != 16*lines || w.n != n {
		t.Fatalf("WriteTo = %d, %v; wrote %d", n, err, w.n)
	}
	if w.writes > 32 {
		t.Errorf("%d writes for %d bytes", w.writes, n)
	}
}

type writeCounter struct{ n, writes int64 }

func (w *writeCounter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.writes++
	return len(p), nil
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// TestToolContents reads every kind of content block of a CallToolResult
// (spec: server/tools, "Tool Result"): what tools call -o can write.
func TestToolContents(t *testing.T) {
	raw := json.RawMessage(`{"content":[
		{"type":"text","text":"a\nb"},
		{"type":"image","data":"AAEC","mimeType":"image/png"},
		{"type":"audio","data":"AwQ=","mimeType":"audio/wav"},
		{"type":"resource_link","uri":"test://x","name":"x"},
		{"type":"resource","resource":{"uri":"test://t","mimeType":"text/plain","text":"note"}},
		{"type":"resource","resource":{"uri":"test://b","blob":"BQY="}},
		{"type":"video","data":"AAEC"}
	]}`)
	got, err := ToolContents(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ, mime, uri string
		binary, data   bool
		bytes          string
	}{
		{"text", "", "", false, true, "a\nb"},
		{"image", "image/png", "", true, true, "\x00\x01\x02"},
		{"audio", "audio/wav", "", true, true, "\x03\x04"},
		{"resource_link", "", "test://x", false, false, ""},
		{"resource", "text/plain", "test://t", false, true, "note"},
		{"resource", "", "test://b", true, true, "\x05\x06"},
		{"video", "", "", false, false, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d contents, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		var b strings.Builder
		if _, err := g.WriteTo(&b); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if g.Type != w.typ || g.MimeType != w.mime || g.URI != w.uri || g.Binary != w.binary || g.HasData() != w.data || b.String() != w.bytes {
			t.Errorf("%d: got %+v %q, want %+v", i, g, b.String(), w)
		}
	}
	if _, err := ToolContents(json.RawMessage(`{"content":[{"type":"resource"}]}`)); err == nil {
		t.Error("a resource block without its resource was accepted")
	}
	// Data that is not base64 is named for what it is: an image has no
	// URI and no blob.
	bad, err := ToolContents(json.RawMessage(`{"content":[{"type":"image","data":"a*b=","mimeType":"image/png"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := bad[0].Check(); err == nil || err.Error() != "image content: data is not valid base64: illegal base64 data at input byte 1" || !errors.Is(err, ErrProtocolViolation) {
		t.Errorf("Check = %v", err)
	}
}
