package inspector

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzJSONRPCFrame checks the session's frame decoder against the
// reference decoding of internal/fuzzing (shared with record's and
// transport's targets of the same name): it finds the same messages with
// the same method, id, result and error, classifies each as exactly one
// kind, and reports no problem for a message that departs from JSON-RPC
// 2.0.
func FuzzJSONRPCFrame(f *testing.F) {
	for _, s := range fuzzing.Frames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, batch, err := DecodeFrame(data)
		ref, refBatch, valid := fuzzing.Decode(data)
		switch {
		case !valid || refBatch && len(ref) == 0:
			if err == nil {
				t.Fatalf("DecodeFrame(%q) accepted a frame that is not JSON or an empty batch", data)
			}
			return
		case err != nil:
			t.Fatalf("DecodeFrame(%q): %v", data, err)
		case batch != refBatch || len(msgs) != len(ref):
			t.Fatalf("DecodeFrame(%q) = %d messages (batch %v), want %d (batch %v)", data, len(msgs), batch, len(ref), refBatch)
		}
		for i, m := range msgs {
			r := ref[i]
			if !json.Valid(m.Raw) || !bytes.Equal(bytes.TrimSpace(m.Raw), bytes.TrimSpace(r.Raw)) {
				t.Fatalf("message %d of %q: Raw %q, want %q", i, data, m.Raw, r.Raw)
			}
			kinds := 0
			for _, k := range []bool{m.IsRequest(), m.IsNotification(), m.IsResponse()} {
				if k {
					kinds++
				}
			}
			if kinds != 1 {
				t.Fatalf("message %q is %d kinds at once", m.Raw, kinds)
			}
			if !r.Object {
				if len(m.Problems) == 0 || m.Method != "" || m.ID != nil {
					t.Fatalf("message %q is no JSON-RPC message, decoded as %+v", m.Raw, m)
				}
				continue
			}
			checkAgainstReference(t, m, r)
		}
	})
}

func checkAgainstReference(t *testing.T, m *Message, r fuzzing.Message) {
	t.Helper()
	if (r.Method != nil) != !m.IsResponse() || r.Method != nil && m.Method != *r.Method {
		t.Fatalf("message %q: method %q (response %v), want %v", m.Raw, m.Method, m.IsResponse(), r.Method)
	}
	if !bytes.Equal(m.ID, r.ID) {
		t.Fatalf("message %q: id %q, want %q", m.Raw, m.ID, r.ID)
	}
	if m.IsResponse() {
		if !bytes.Equal(m.Result, r.Result) || (m.Error != nil) != (len(r.Error) > 0) {
			t.Fatalf("message %q: result %q, error %v; want %q, %q", m.Raw, m.Result, m.Error, r.Result, r.Error)
		}
	}
	if why := departure(r); why != "" && len(m.Problems) == 0 {
		t.Fatalf("message %q departs from JSON-RPC 2.0 (%s), but DecodeFrame reports no problem", m.Raw, why)
	}
	if m.ID != nil && len(m.Problems) == 0 {
		// Ids that differ in JSON type never share a key.
		if k := idKey(m.ID); k == otherTypeKey(m.ID) {
			t.Fatalf("id %s: idKey and otherTypeKey agree (%q)", m.ID, k)
		}
	}
}

// departure says how a message that decodes as an object departs from
// JSON-RPC 2.0 with MCP's ids (strings or integers), or "".
func departure(r fuzzing.Message) string {
	var w struct {
		JSONRPC *string `json:"jsonrpc"`
	}
	if json.Unmarshal(r.Raw, &w) != nil || w.JSONRPC == nil || *w.JSONRPC != "2.0" {
		return `no "jsonrpc": "2.0"`
	}
	id := string(r.ID)
	idOK := id == "" || id[0] == '"'
	if _, err := strconv.ParseInt(id, 10, 64); err == nil {
		idOK = true
	}
	if r.Method != nil {
		switch {
		case *r.Method == "":
			return "empty method"
		case !idOK:
			return "id " + id
		}
		return ""
	}
	switch {
	case len(r.Result) > 0 == (len(r.Error) > 0):
		return "not exactly one of result and error"
	case id == "":
		return "response without id"
	case !idOK && id != "null":
		return "id " + id
	case len(r.Error) > 0:
		var e struct {
			Code    *json.Number `json:"code"`
			Message *string      `json:"message"`
		}
		if json.Unmarshal(r.Error, &e) != nil || e.Code == nil || e.Message == nil {
			return "error is not an object with a code and a message"
		}
		if _, err := strconv.ParseInt(string(*e.Code), 10, 64); err != nil {
			return "error code is not an integer"
		}
	}
	return ""
}

// TestDecodeFrameFuzzFindings pins what FuzzJSONRPCFrame found.
func TestDecodeFrameFuzzFindings(t *testing.T) {
	decode := func(s string) *Message {
		t.Helper()
		msgs, _, err := DecodeFrame([]byte(s))
		if err != nil || len(msgs) != 1 {
			t.Fatalf("DecodeFrame(%s) = %v, %v", s, msgs, err)
		}
		return msgs[0]
	}
	// A request with an empty method name is a request (that no handler
	// has), not a response that could settle a pending request.
	if m := decode(`{"jsonrpc":"2.0","id":1,"method":""}`); !m.IsRequest() || len(m.Problems) != 1 {
		t.Errorf("empty method: request %v, problems %q", m.IsRequest(), m.Problems)
	}
	if m := decode(`{"jsonrpc":"2.0","method":""}`); !m.IsNotification() {
		t.Errorf("empty method without id: notification %v", m.IsNotification())
	}
	// A wrong jsonrpc member is a problem of the message, which still
	// answers its request.
	if m := decode(`{"jsonrpc":2.0,"id":1,"result":{}}`); !m.IsResponse() || string(m.ID) != "1" || string(m.Result) != "{}" || len(m.Problems) != 1 {
		t.Errorf("numeric jsonrpc: %+v", m)
	}
	// An error object needs a code and a message.
	m := decode(`{"jsonrpc":"2.0","id":1,"error":{"code":-5}}`)
	if len(m.Problems) != 1 || m.Error == nil || m.Error.Code != -5 {
		t.Errorf("error without message: %+v", m)
	}
	if m := decode(`{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`); len(m.Problems) != 1 || m.Error.Code != CodeInternalError {
		t.Errorf("error without code: %+v, %+v", m, m.Error)
	}
}
