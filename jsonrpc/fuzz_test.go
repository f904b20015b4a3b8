package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzJSONRPCFrame checks DecodeFrame, the one JSON-RPC decoder of mcpx
// (the session, the trace library and the transport all use it), against
// the reference decoding of reference_test.go: it finds the same messages
// with the same method, id, result and error, classifies each as exactly
// one kind, reports a problem for every message that departs from
// JSON-RPC 2.0, and finds the requests and responses the reference finds
// (what the transport follows streams by). Its corpus joins those of the
// targets the session's, the trace library's and the transport's decoders
// had before they became this one.
func FuzzJSONRPCFrame(f *testing.F) {
	for _, s := range fuzzing.Frames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, batch, err := DecodeFrame(data)
		ref, refBatch, valid := refDecode(data)
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
			for _, k := range []bool{m.IsRequest(), m.IsNotification(), m.IsResponse(), m.Kind() == KindInvalid} {
				if k {
					kinds++
				}
			}
			if kinds != 1 {
				t.Fatalf("message %q is %d kinds at once", m.Raw, kinds)
			}
			if !r.Object {
				// An object whose method is of another type keeps its
				// id, to be answered with (InvalidRequest).
				if len(m.Problems) == 0 || m.Method != "" || !m.ID.IsZero() && !m.badMethod || m.Kind() != KindInvalid {
					t.Fatalf("message %q is no JSON-RPC message, decoded as %+v", m.Raw, m)
				}
				continue
			}
			checkAgainstReference(t, m, r)
		}
	})
}

func checkAgainstReference(t *testing.T, m *Message, r refMessage) {
	t.Helper()
	hasMethod := m.IsRequest() || m.IsNotification()
	if (r.Method != nil) != hasMethod || r.Method != nil && m.Method != *r.Method {
		t.Fatalf("message %q: method %q (kind %v), want %v", m.Raw, m.Method, m.Kind(), r.Method)
	}
	if !bytes.Equal(m.ID.Raw(), bytes.TrimSpace(r.ID)) {
		t.Fatalf("message %q: id %q, want %q", m.Raw, m.ID, r.ID)
	}
	// The requests and responses a transport follows.
	if _, ok := r.RequestID(); ok != (m.IsRequest() && !m.ID.IsNull()) {
		t.Fatalf("message %q: a request with an id is %v, want %v", m.Raw, !ok, ok)
	}
	if _, ok := r.Answers(); ok != (m.IsResponse() && !m.ID.IsZero() && !m.ID.IsNull()) {
		t.Fatalf("message %q: a response with an id is %v, want %v", m.Raw, !ok, ok)
	}
	if invalid := r.Method == nil && r.ID == nil && r.Result == nil && r.Error == nil; invalid != (m.Kind() == KindInvalid) {
		t.Fatalf("message %q: kind %v, want invalid exactly when it has no method, id, result or error", m.Raw, m.Kind())
	}
	if m.IsResponse() {
		if !bytes.Equal(m.Result, r.Result) || (m.Error != nil) != (len(r.Error) > 0) || !bytes.Equal(m.ErrorRaw, r.Error) {
			t.Fatalf("message %q: result %q, error %v; want %q, %q", m.Raw, m.Result, m.Error, r.Result, r.Error)
		}
	}
	if why := departure(r); why != "" && len(m.Problems) == 0 {
		t.Fatalf("message %q departs from JSON-RPC 2.0 (%s), but DecodeFrame reports no problem", m.Raw, why)
	}
	if !m.ID.IsZero() && len(m.Problems) == 0 {
		// Ids that differ in JSON type never share a Key; LooseKey makes 7
		// and "7" one id, and nothing else.
		loose := m.ID.LooseKey()
		retyped := String(loose)
		if m.ID.IsString() {
			retyped = RawID([]byte(loose))
		}
		if retyped.Valid() && retyped.Key() == m.ID.Key() {
			t.Fatalf("id %s and %s share the key %q", m.ID, retyped, m.ID.Key())
		}
		if quoted := String(loose); quoted.LooseKey() != loose {
			t.Fatalf("LooseKey(%s) = %q, want %q", quoted, quoted.LooseKey(), loose)
		}
		if RawID(m.ID.Raw()).Key() != m.ID.Key() {
			t.Fatalf("id %s does not keep its key through Raw", m.ID)
		}
	}
}

// departure says how a message that decodes as an object departs from
// JSON-RPC 2.0 with MCP's ids (strings or integers), or "".
func departure(r refMessage) string {
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
	if m := decode(`{"jsonrpc":2.0,"id":1,"result":{}}`); !m.IsResponse() || m.ID.String() != "1" || string(m.Result) != "{}" || len(m.Problems) != 1 {
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

// FuzzEncodeMethod: a frame names its method as json.Marshal writes the
// string, whether it takes the plain way or not.
func FuzzEncodeMethod(f *testing.F) {
	for _, m := range []string{"tools/call", "notifications/initialized", "a<b>&\"c\"\\", "é\x00\xff", "x\u2028y", ""} {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, method string) {
		var got bytes.Buffer
		writeJSONString(&got, method)
		want, _ := json.Marshal(method)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("writeJSONString(%q) = %s, json.Marshal writes %s", method, got.Bytes(), want)
		}
	})
}

// A plain method name is written without json.Marshal.
func TestEncodePlainMethodAllocatesOnce(t *testing.T) {
	id := Int(1)
	if n := testing.AllocsPerRun(10, func() { EncodeRequest(id, "tools/list", nil) }); n > 1 {
		t.Fatalf("EncodeRequest allocates %v times", n)
	}
}
