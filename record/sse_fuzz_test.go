package record

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
	"github.com/mcpx-dev/mcpx/transport"
)

// FuzzProxySSE feeds an arbitrary SSE stream, in chunks chosen by the
// fuzzer, through the recording proxy's stream forwarding: the client
// gets the stream byte for byte, and the frames recorded are the messages
// the client's SSE parser delivers (the standard's interpretation,
// fuzzing.SSE; events with data, of type message), with the event id
// each carried.
func FuzzProxySSE(f *testing.F) {
	for i, s := range fuzzing.SSEStreams() {
		f.Add([]byte(s), []byte{byte(i), 7, 0, 200})
	}
	upstream, _ := url.Parse("http://127.0.0.1:1/mcp")
	f.Fuzz(func(t *testing.T, stream, chunks []byte) {
		events, _, _ := fuzzing.SSE(stream)
		var want []fuzzing.SSEEvent
		for _, ev := range events {
			if ev.Type == "endpoint" {
				return // rewritten by the proxy, on purpose
			}
			if ev.Type == "message" && len(ev.Data) > 0 {
				want = append(want, ev)
			}
		}
		var got []transport.Frame
		p := &HTTPProxy{upstream: upstream, o: HTTPProxyOptions{OnFrame: func(_ time.Time, _ transport.Direction, fr transport.Frame) {
			got = append(got, fr)
		}}}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:2/mcp", nil)
		resp := &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(fuzzing.ChunkReader(stream, chunks))}
		p.stream(w, r, resp, &transport.Meta{}, "get-1", nil)
		if !bytes.Equal(w.Body.Bytes(), stream) {
			t.Fatalf("the proxy forwarded %q for %q", w.Body.Bytes(), stream)
		}
		if len(got) != len(want) {
			t.Fatalf("stream %q: recorded %d frames %+v, the client gets %+v", stream, len(got), got, want)
		}
		for i, fr := range got {
			wantID := ""
			if want[i].HasID {
				wantID = want[i].ID
			}
			if !bytes.Equal(fr.Data, want[i].Data) || fr.Meta == nil || fr.Meta.EventID != wantID {
				t.Fatalf("stream %q: recorded %q (meta %+v), the client gets %+v", stream, fr.Data, fr.Meta, want[i])
			}
		}
	})
}

// FuzzReplaySSE writes an arbitrary recorded frame as the replay server's
// SSE event and reads it back as a client does: one message event whose
// data is the frame, its line breaks (which SSE cannot carry as such)
// normalised to LF, so that a JSON frame stays the same JSON.
func FuzzReplaySSE(f *testing.F) {
	for _, fr := range fuzzing.Frames() {
		f.Add(fr)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var b bytes.Buffer
		if err := writeEvent(&b, frame); err != nil {
			t.Fatal(err)
		}
		events, _, _ := fuzzing.SSE(b.Bytes())
		want := bytes.ReplaceAll(bytes.ReplaceAll(frame, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		if len(events) != 1 || events[0].Type != "message" || !bytes.Equal(events[0].Data, want) {
			t.Fatalf("frame %q written as %q reads back as %+v", frame, b.Bytes(), events)
		}
	})
}
