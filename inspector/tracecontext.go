package inspector

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// TraceContext is the OpenTelemetry trace context every request of a
// session carries in its _meta, so that the server's spans join the
// caller's trace (spec 2026-07-28: basic/index, "OpenTelemetry trace
// context": the keys traceparent, tracestate and baggage, whose values
// MUST follow W3C Trace Context and W3C Baggage). Build it with
// ParseTraceContext, which holds the values to those formats.
type TraceContext struct {
	// Parent is the W3C traceparent; State and Baggage may be "".
	Parent, State, Baggage string
}

// Bounds of the values taken: W3C Baggage allows 8192 bytes in all, and
// tracestate 32 members of at most 256 bytes each.
const (
	maxBaggage    = 8192
	maxTraceState = 32 * 257
)

// ParseTraceContext checks a trace context's values against their W3C
// formats (Trace Context, sections 3.2 and 3.3; Baggage, section 3): a
// value that breaks them is refused, since the spec has every value sent
// follow them. parent "" with state or baggage set is refused too: a
// tracestate means nothing without its traceparent. All three "" is no
// trace context: nil.
func ParseTraceContext(parent, state, baggage string) (*TraceContext, error) {
	if parent == "" && state == "" && baggage == "" {
		return nil, nil
	}
	if parent == "" {
		return nil, fmt.Errorf("a tracestate or baggage needs a traceparent")
	}
	if err := checkTraceParent(parent); err != nil {
		return nil, fmt.Errorf("traceparent %s: %w", jsonrpc.QuoteClipped(parent), err)
	}
	if err := checkMembers(state, maxTraceState, ',', false); err != nil {
		return nil, fmt.Errorf("tracestate %s: %w", jsonrpc.QuoteClipped(state), err)
	}
	if err := checkMembers(baggage, maxBaggage, ',', true); err != nil {
		return nil, fmt.Errorf("baggage %s: %w", jsonrpc.QuoteClipped(baggage), err)
	}
	return &TraceContext{Parent: parent, State: state, Baggage: baggage}, nil
}

// checkTraceParent holds v to version-format = version "-" trace-id "-"
// parent-id "-" trace-flags, all lowercase hex; version ff is invalid and
// an all-zero trace-id or parent-id too (W3C Trace Context, section
// 3.2.2). A later version may append "-" and more, which is kept.
func checkTraceParent(v string) error {
	const form = "it is not version-traceid-parentid-flags (00-<32 hex digits>-<16 hex digits>-<2 hex digits>)"
	if len(v) < 55 || (len(v) > 55 && (v[:2] == "00" || v[55] != '-')) {
		return fmt.Errorf("%s", form)
	}
	fields := strings.Split(v[:55], "-")
	if len(fields) != 4 {
		return fmt.Errorf("%s", form)
	}
	for i, n := range []int{2, 32, 16, 2} {
		if len(fields[i]) != n || !lowerHex(fields[i]) {
			return fmt.Errorf("%s", form)
		}
	}
	// What a later version appends is kept as it is: printable ASCII, as
	// the fields before it (invalid UTF-8 would not reach _meta as sent).
	for i := 55; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return fmt.Errorf("%s: what follows the flags holds a byte that is not printable ASCII", form)
		}
	}
	switch {
	case fields[0] == "ff":
		return fmt.Errorf("version ff is invalid")
	case strings.Trim(fields[1], "0") == "":
		return fmt.Errorf("its trace-id is all zeros, which is invalid")
	case strings.Trim(fields[2], "0") == "":
		return fmt.Errorf("its parent-id is all zeros, which is invalid")
	}
	return nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkMembers holds a tracestate or baggage header value to what both
// share: at most max bytes of printable ASCII (tabs and spaces as optional
// white space), list members separated by sep, each key=value with a
// non-empty key (a baggage member may add ;properties after its value).
// Empty members are allowed, as both formats allow them.
func checkMembers(v string, max int, sep byte, properties bool) error {
	if len(v) > max {
		return fmt.Errorf("it is %d bytes, more than the %d allowed", len(v), max)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return fmt.Errorf("it holds a character that is not printable ASCII (byte %d)", i)
		}
	}
	for _, m := range strings.Split(v, string(sep)) {
		m = strings.Trim(m, " \t")
		if m == "" {
			continue
		}
		if properties {
			m, _, _ = strings.Cut(m, ";")
		}
		key, _, ok := strings.Cut(m, "=")
		if !ok || strings.Trim(key, " \t") == "" {
			return fmt.Errorf("member %s is not key=value", jsonrpc.QuoteClipped(m))
		}
	}
	return nil
}

// apply adds the trace context to params' _meta, leaving a key the
// request already carries as it is (a request built by hand that names
// its own trace).
func (tc *TraceContext) apply(params json.RawMessage) (json.RawMessage, error) {
	if tc == nil {
		return params, nil
	}
	return withMeta(params, func(meta *Object) {
		for _, f := range []struct{ key, value string }{
			{mcp.MetaTraceParent, tc.Parent}, {mcp.MetaTraceState, tc.State}, {mcp.MetaBaggage, tc.Baggage},
		} {
			if f.value != "" && !meta.Has(f.key) {
				meta.Set(f.key, marshalRaw(f.value))
			}
		}
	})
}
