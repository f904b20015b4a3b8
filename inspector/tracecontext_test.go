package inspector

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

const testTraceParent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"

func TestParseTraceContext(t *testing.T) {
	for _, c := range []struct {
		parent, state, baggage string
		bad                    string // "" for valid
	}{
		{testTraceParent, "", "", ""},
		{testTraceParent, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "userId=alice, serverNode=DF%2028;p=1", ""},
		{"01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-later", "", "", ""},
		{"", "", "", ""},
		{"", "rojo=1", "", "needs a traceparent"},
		{"", "", "k=v", "needs a traceparent"},
		{"00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01", "", "", "not version-traceid"},
		{"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-x", "", "", "not version-traceid"},
		{"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7", "", "", "not version-traceid"},
		{"ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "", "", "version ff"},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", "", "trace-id is all zeros"},
		{"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "", "", "parent-id is all zeros"},
		{testTraceParent, "rojo", "", `tracestate "rojo": member "rojo" is not key=value`},
		{testTraceParent, "rojo=1\n", "", "not printable ASCII"},
		{testTraceParent, "", "=v", "baggage"},
		{testTraceParent, "", "k=" + strings.Repeat("v", 8192), "more than the 8192 allowed"},
	} {
		tc, err := ParseTraceContext(c.parent, c.state, c.baggage)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%q %q %q: %v", c.parent, c.state, c.baggage, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%q %q %q: got %v, want an error saying %q", c.parent, c.state, c.baggage, err, c.bad)
		case c.bad == "" && c.parent == "" && tc != nil:
			t.Errorf("no values gave %+v, want nil", tc)
		}
	}
}

// Every request carries the trace context in _meta, in either era; what
// a request's own _meta names stays, and a raw request is sent as given.
func TestTraceContextInEveryRequest(t *testing.T) {
	tc, err := ParseTraceContext(testTraceParent, "rojo=1", "k=v")
	if err != nil {
		t.Fatal(err)
	}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			var life Lifecycle = &Legacy{}
			if era == "modern" {
				life = &Modern{}
			}
			s, srv, _, _ := newModernSession(t, life, false, Options{TraceContext: tc})
			ctx := context.Background()
			ch := goCall(ctx, s, "tools/list", nil)
			m := srv.nextRequest("tools/list")
			meta := metaOf(t, m)
			for k, v := range map[string]string{"traceparent": testTraceParent, "tracestate": "rojo=1", "baggage": "k=v"} {
				if got, _ := json.Marshal(v); string(meta[k]) != string(got) {
					t.Errorf("_meta.%s = %s, want %s (params %s)", k, meta[k], got, m.Params)
				}
			}
			if era == "modern" && meta["io.modelcontextprotocol/protocolVersion"] == nil {
				t.Errorf("the era's own _meta is gone: %s", m.Params)
			}
			srv.reply(m, `{"tools":[]}`)
			if r := result(t, ch); r.err != nil {
				t.Fatal(r.err)
			}

			ch = goCall(ctx, s, "tools/call", json.RawMessage(`{"name":"x","_meta":{"traceparent":"00-11111111111111111111111111111111-2222222222222222-00"}}`))
			m = srv.nextRequest("tools/call")
			if got := string(metaOf(t, m)["traceparent"]); got != `"00-11111111111111111111111111111111-2222222222222222-00"` {
				t.Errorf("the request's own traceparent was replaced: %s", m.Params)
			}
			srv.reply(m, `{"content":[]}`)
			result(t, ch)

			ch = goCall(ctx, s, "tools/call", json.RawMessage(`{"name":"x"}`), Raw())
			m = srv.nextRequest("tools/call")
			if string(m.Params) != `{"name":"x"}` {
				t.Errorf("a raw request was decorated: %s", m.Params)
			}
			srv.reply(m, `{"content":[]}`)
			result(t, ch)
		})
	}
}
