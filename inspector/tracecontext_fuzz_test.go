package inspector

import (
	"encoding/json"
	"testing"
)

// ParseTraceContext never panics; what it takes is of the W3C forms'
// shape (a traceparent of at least 55 bytes whose fields are lowercase
// hex, tracestate and baggage of printable ASCII within their bounds), and
// apply carries the values taken into a request's _meta unchanged.
func FuzzParseTraceContext(f *testing.F) {
	f.Add("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "userId=alice;p=1, serverNode=DF%2028")
	f.Add("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra", "", "")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", "")
	f.Add("", "a=b", "")
	f.Add("ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "=x", "k")
	f.Fuzz(func(t *testing.T, parent, state, baggage string) {
		tc, err := ParseTraceContext(parent, state, baggage)
		if err != nil {
			if tc != nil {
				t.Fatalf("a context with an error: %+v", tc)
			}
			return
		}
		if tc == nil {
			if parent != "" || state != "" || baggage != "" {
				t.Fatalf("no context and no error for %q %q %q", parent, state, baggage)
			}
			return
		}
		if len(tc.Parent) < 55 || !lowerHex(tc.Parent[:2]+tc.Parent[3:35]+tc.Parent[36:52]+tc.Parent[53:55]) {
			t.Fatalf("traceparent %q taken", tc.Parent)
		}
		if len(tc.State) > maxTraceState || len(tc.Baggage) > maxBaggage {
			t.Fatalf("values past their bounds taken: %d, %d bytes", len(tc.State), len(tc.Baggage))
		}
		out, err := tc.apply(json.RawMessage(`{"name":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Meta map[string]string `json:"_meta"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if got.Meta["traceparent"] != tc.Parent || got.Meta["tracestate"] != tc.State && tc.State != "" || got.Meta["baggage"] != tc.Baggage && tc.Baggage != "" {
			t.Fatalf("_meta %v, context %+v", got.Meta, tc)
		}
	})
}
