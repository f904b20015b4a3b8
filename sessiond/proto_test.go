package sessiond

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// responseLine writes the line frameLine writes for the response, for
// every kind of id and result, and falls back to it for a result that
// needs compacting or is not JSON.
func TestResponseLine(t *testing.T) {
	for _, tt := range []struct {
		id     jsonrpc.ID
		result string
	}{
		{jsonrpc.Int(7), `{"content":[{"type":"text","text":"hi"}]}`},
		{jsonrpc.RawID([]byte(`"a\"b"`)), `{}`},
		{jsonrpc.ID{}, `{"x":1}`},
		{jsonrpc.Int(1), ``},
		{jsonrpc.Int(2), "{\n  \"pretty\": true\r\n}"},
	} {
		want, werr := frameLine(jsonrpc.EncodeResponse(tt.id, json.RawMessage(tt.result), nil))
		got, err := responseLine(tt.id, json.RawMessage(tt.result))
		if !bytes.Equal(got, want) || (err == nil) != (werr == nil) {
			t.Errorf("responseLine(%s, %q) = %s, %v; want %s, %v", tt.id, tt.result, got, err, want, werr)
		}
	}
	if _, err := responseLine(jsonrpc.Int(3), json.RawMessage(`{"x":`)); err == nil {
		t.Error("a result that is not JSON made a line")
	}
}

// A large result costs the session one buffer of about its size for its
// line: building the response and then the line around it allocated it
// twice.
func TestResponseLineAllocatesOnce(t *testing.T) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + string(bytes.Repeat([]byte("x"), 8<<20)) + `"}]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	line, err := responseLine(jsonrpc.Int(1), result)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(result))*5/4 {
		t.Errorf("a line of %d bytes allocated %d", len(line), n)
	}
}

// parseEnvelope reads what json.Unmarshal read, with the frame a slice of
// the line rather than a copy of it.
func TestParseEnvelope(t *testing.T) {
	for _, tt := range []struct {
		line string
		want envelope
		bad  bool
	}{
		{`{"frame":{"jsonrpc":"2.0","id":1,"result":{}}}`, envelope{Frame: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, false},
		{` {"frame": [{"a":1}] , "tooLarge": 65536}`, envelope{Frame: json.RawMessage(`[{"a":1}]`), TooLarge: 65536}, false},
		{`{"closed":"the session ended \"now\""}`, envelope{Closed: `the session ended "now"`}, false},
		{`{"dropped":"dropped a line","other":[1,2]}`, envelope{Dropped: "dropped a line"}, false},
		{`{"frame":{"id":1},"failed":"connection"}`, envelope{Frame: json.RawMessage(`{"id":1}`), Failed: "connection"}, false},
		{`{"failed":true}`, envelope{}, true},
		{`{"Frame":{},"closed":null}`, envelope{Frame: json.RawMessage(`{}`)}, false},
		{`{"frame":"x"}`, envelope{}, true},
		{`{"tooLarge":"big"}`, envelope{}, true},
		{`{"closed":3}`, envelope{}, true},
		{`[{"frame":{}}]`, envelope{}, true},
		{`nope`, envelope{}, true},
	} {
		got, err := parseEnvelope([]byte(tt.line))
		if (err != nil) != tt.bad || !bytes.Equal(got.Frame, tt.want.Frame) || got.Closed != tt.want.Closed ||
			got.Dropped != tt.want.Dropped || got.TooLarge != tt.want.TooLarge || got.Failed != tt.want.Failed {
			t.Errorf("parseEnvelope(%s) = %+v, %v; want %+v (error: %v)", tt.line, got, err, tt.want, tt.bad)
		}
	}
	line := []byte(`{"frame":{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 1<<20) + `"}}}`)
	env, err := parseEnvelope(line)
	if err != nil || &env.Frame[0] != &line[len(`{"frame":`)] {
		t.Errorf("the frame is not read in place: %v", err)
	}
}

// What json.Unmarshal reads as an envelope whose frame is a message or a
// batch, parseEnvelope reads alike.
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"frame":{"jsonrpc":"2.0","id":1,"result":{}}}`,
		`{"frame":[{"a":"\u0041"}],"tooLarge":12}`,
		`{"closed":"x\ny","dropped":"z"}`,
		`{"FRAME":{},"Dropped":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := parseEnvelope(line)
		var want envelope
		if json.Unmarshal(line, &want) != nil || bytes.HasPrefix(bytes.TrimSpace(line), []byte("null")) {
			return
		}
		if fr := bytes.TrimSpace(want.Frame); len(fr) > 0 && fr[0] != '{' && fr[0] != '[' && string(fr) != "null" {
			return
		}
		if string(want.Frame) == "null" {
			want.Frame = nil
		}
		if err != nil {
			t.Fatalf("parseEnvelope(%q): %v; json.Unmarshal read %+v", line, err, want)
		}
		if !bytes.Equal(got.Frame, want.Frame) || got.Closed != want.Closed || got.Dropped != want.Dropped || got.TooLarge != want.TooLarge || got.Failed != want.Failed {
			t.Fatalf("parseEnvelope(%q) = %+v; json.Unmarshal read %+v", line, got, want)
		}
	})
}
