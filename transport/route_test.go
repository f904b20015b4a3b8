package transport

import (
	"net/http"
	"testing"
)

// The Value Encoding examples of spec 2026-07-28:
// basic/transports/streamable-http.
func TestEncodeHeaderValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"us west 1", "us west 1"},
		{"\tindented", "=?base64?CWluZGVudGVk?="},
		{"a\tb", "=?base64?YQli?="},
		{"", ""},
		{"42", "42"},
	}
	for _, tt := range tests {
		got := EncodeHeaderValue(tt.in)
		if got != tt.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := DecodeHeaderValue(got)
		if err != nil || back != tt.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", got, back, err, tt.in)
		}
	}
}

func TestValidHeaderName(t *testing.T) {
	for _, ok := range []string{"Region", "X-Tenant_ID", "a.b~c", "Method"} {
		if !ValidHeaderName(ok) {
			t.Errorf("%q rejected", ok)
		}
	}
	for _, bad := range []string{"", "My Region", "Region:Primary", "Région", "Region\t1", "a\r\nb"} {
		if ValidHeaderName(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSetRouteHeaders(t *testing.T) {
	h := http.Header{}
	err := setRouteHeaders(h, &Route{ProtocolVersion: "2026-07-28", Method: "tools/call", Name: "naïve tool",
		Params: []RouteParam{{Name: "Region", Value: "eu"}, {Name: "Method", Value: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Mcp-Protocol-Version": "2026-07-28",
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             "=?base64?bmHDr3ZlIHRvb2w=?=",
		"Mcp-Param-Region":     "eu",
		"Mcp-Param-Method":     "x",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if err := setRouteHeaders(http.Header{}, &Route{Params: []RouteParam{{Name: "bad name", Value: "x"}}}); err == nil {
		t.Error("an invalid header name was accepted")
	}
}
