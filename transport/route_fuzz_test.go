package transport

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzHeaderValue checks the value encoding of the 2026-07-28 routing
// headers (Mcp-Name, Mcp-Param-{Name}; spec basic/transports/
// streamable-http, "Value Encoding") on arbitrary values: a value decodes
// back to itself, is sent as is exactly when it is plain, and is always a
// valid header field value; and setRouteHeaders either refuses a route or
// sets only valid field names and values. DecodeHeaderValue takes anything
// a server sends without panicking.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "us west 1",
		"\tindented", "a\tb", "", "42", "=?base64?=", "=?base64?SGVsbG8=?=", "=?base64?!!?=", "\xff\x00", "2026-07-28"} {
		f.Add(s, "Region", s)
	}
	f.Fuzz(func(t *testing.T, v, name, version string) {
		enc := EncodeHeaderValue(v)
		if dec, err := DecodeHeaderValue(enc); err != nil || dec != v {
			t.Fatalf("DecodeHeaderValue(EncodeHeaderValue(%q) = %q) = %q, %v", v, enc, dec, err)
		}
		if (enc == v) != headerSafe(v) {
			t.Fatalf("EncodeHeaderValue(%q) = %q, but headerSafe says %v", v, enc, headerSafe(v))
		}
		if !validFieldValue(enc) || strings.TrimSpace(enc) != enc {
			t.Fatalf("EncodeHeaderValue(%q) = %q is not a plain field value", v, enc)
		}
		_, _ = DecodeHeaderValue(v)

		h := http.Header{}
		r := &Route{ProtocolVersion: version, Method: v, Name: v, Params: []RouteParam{{Name: name, Value: v}}}
		if err := setRouteHeaders(h, r); err != nil {
			return
		}
		for k, vs := range h {
			if !ValidHeaderName(k) {
				t.Fatalf("route %+v: header name %q", r, k)
			}
			for _, x := range vs {
				if !validFieldValue(x) {
					t.Fatalf("route %+v: %s: %q is not a valid field value", r, k, x)
				}
			}
		}
	})
}

// validFieldValue reports what net/http sends: no control characters but
// HTAB (RFC 9110 section 5.5).
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
