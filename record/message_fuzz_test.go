package record

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzJSONRPCFrame checks the trace's frame decoder (parseFrame, which
// replay and verify match messages with) against the reference decoding
// of internal/fuzzing, shared with inspector's and transport's targets of
// the same name: the same messages, kinds and ids; and a message's
// identity (canonical) does not depend on white space or member order.
func FuzzJSONRPCFrame(f *testing.F) {
	for _, s := range fuzzing.Frames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, batch := parseFrame(data)
		ref, refBatch, valid := fuzzing.Decode(data)
		if !valid || !refBatch || len(ref) == 0 {
			// Anything but a non-empty batch is one message.
			if batch || len(msgs) != 1 || !bytes.Equal(msgs[0].raw, data) {
				t.Fatalf("parseFrame(%q) = %d messages (batch %v), want the frame as one", data, len(msgs), batch)
			}
			if !valid || refBatch {
				// Not JSON, or an empty batch: no message.
				ref = []fuzzing.Message{{Raw: data}}
			}
		} else if !batch || len(msgs) != len(ref) {
			t.Fatalf("parseFrame(%q) = %d messages (batch %v), want %d in a batch", data, len(msgs), batch, len(ref))
		}
		for i, m := range msgs {
			r := ref[i]
			if batch && !bytes.Equal(m.raw, r.Raw) {
				t.Fatalf("message %d of %q: raw %q, want %q", i, data, m.raw, r.Raw)
			}
			id, kind := refKind(r)
			if m.kind != kind || !bytes.Equal(m.id, id) {
				t.Fatalf("message %q: %v with id %q, want %v with id %q", m.raw, m.kind, m.id, kind, id)
			}
			if kind == kindRequest || kind == kindNotification {
				if m.method != *r.Method {
					t.Fatalf("message %q: method %q, want %q", m.raw, m.method, *r.Method)
				}
			}
			checkCanonical(t, m)
		}
	})
}

// refKind is what the reference decoding makes of a message, in record's
// terms: a null id is no id, and a message with neither a method nor a
// result or error is invalid.
func refKind(r fuzzing.Message) (json.RawMessage, msgKind) {
	if !r.Object {
		return nil, kindInvalid
	}
	id := r.ID
	if string(id) == "null" {
		id = nil
	}
	switch {
	case r.Method != nil && id != nil:
		return id, kindRequest
	case r.Method != nil:
		return id, kindNotification
	case len(r.Result) > 0 || len(r.Error) > 0:
		return id, kindResponse
	}
	return id, kindInvalid
}

// checkCanonical checks that the message re-encoded with sorted members
// and no white space has the same identity.
func checkCanonical(t *testing.T, m message) {
	t.Helper()
	key := canonical(m, nil)
	if m.kind == kindInvalid {
		return
	}
	v, ok := decode(m.raw)
	if !ok {
		t.Fatalf("message %q of kind %v does not decode", m.raw, m.kind)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	again := parseMessage(bytes.TrimSpace(b.Bytes()))
	if got := canonical(again, nil); got != key {
		t.Fatalf("message %q re-encoded as %s: canonical %s, was %s", m.raw, b.Bytes(), got, key)
	}
}
