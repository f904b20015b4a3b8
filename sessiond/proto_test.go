package sessiond

import (
	"bytes"
	"encoding/json"
	"runtime"
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
