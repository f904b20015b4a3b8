package record

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// FuzzCanonical checks how replay and verify match messages: a frame
// that holds no message is kept whole as one invalid message, and a
// message's identity (canonical) does not depend on white space or member
// order. (The decoding itself is jsonrpc's, fuzzed by FuzzJSONRPCFrame
// there.)
func FuzzCanonical(f *testing.F) {
	for _, s := range fuzzing.Frames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, batch := parseFrame(data)
		if _, _, err := jsonrpc.DecodeFrame(data); err != nil {
			if batch || len(msgs) != 1 || !bytes.Equal(msgs[0].Raw, data) || msgs[0].Kind() != jsonrpc.KindInvalid {
				t.Fatalf("parseFrame(%q) = %d messages (batch %v), want the frame as one invalid message", data, len(msgs), batch)
			}
		}
		for _, m := range msgs {
			checkCanonical(t, m)
		}
	})
}

// checkCanonical checks that the message re-encoded with sorted members
// and no white space has the same identity.
func checkCanonical(t *testing.T, m *jsonrpc.Message) {
	t.Helper()
	key := canonical(m, nil)
	if m.Kind() == jsonrpc.KindInvalid {
		return
	}
	v, ok := decode(m.Raw)
	if !ok {
		t.Fatalf("message %q of kind %v does not decode", m.Raw, m.Kind())
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	again := parseMessage(bytes.TrimSpace(b.Bytes()))
	if got := canonical(again, nil); got != key {
		t.Fatalf("message %q re-encoded as %s: canonical %s, was %s", m.Raw, b.Bytes(), got, key)
	}
}
