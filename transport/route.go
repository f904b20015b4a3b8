package transport

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpx-dev/mcpx/internal/httptoken"
)

// Headers of the 2026-07-28 Streamable HTTP binding that mirror a Route
// (spec 2026-07-28: basic/transports/streamable-http, "Request Metadata").
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
)

// base64Prefix and base64Suffix mark an encoded header value.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// EncodeHeaderValue returns v as it goes into an Mcp-Name or
// Mcp-Param-{Name} header: as is when it is plain visible ASCII (spaces
// allowed inside), else "=?base64?{Base64 of its UTF-8}?=". Values with
// control characters (tab included), non-ASCII characters or leading or
// trailing whitespace are encoded, and so is a plain value that looks like
// an encoded one, so that it cannot be misread (spec 2026-07-28:
// basic/transports/streamable-http, "Value Encoding").
func EncodeHeaderValue(v string) string {
	if headerSafe(v) {
		return v
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(v)) + base64Suffix
}

// headerSafe reports whether v can be sent as a plain header value.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	if strings.TrimFunc(v, unicode.IsSpace) != v {
		return false
	}
	return !(strings.HasPrefix(v, base64Prefix) && strings.HasSuffix(v, base64Suffix))
}

// DecodeHeaderValue reverses EncodeHeaderValue (for tests and for showing
// headers to people).
func DecodeHeaderValue(v string) (string, error) {
	if !strings.HasPrefix(v, base64Prefix) || !strings.HasSuffix(v, base64Suffix) || len(v) < len(base64Prefix)+len(base64Suffix) {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
	if err != nil {
		return "", fmt.Errorf("header value %q: invalid base64: %w", v, err)
	}
	return string(b), nil
}

// ValidHeaderName reports whether s is an HTTP field name: one or more
// tchar (RFC 9110, section 5.1).
func ValidHeaderName(s string) bool { return httptoken.Valid(s) }

// setRouteHeaders mirrors r into h.
func setRouteHeaders(h http.Header, r *Route) error {
	if r.ProtocolVersion != "" {
		// It comes from the message's _meta, which may be anything.
		if !headerSafe(r.ProtocolVersion) {
			return fmt.Errorf("protocol version %q cannot be sent in the Mcp-Protocol-Version header", r.ProtocolVersion)
		}
		h.Set(headerProtocolVersion, r.ProtocolVersion)
	}
	if r.Method != "" {
		if !headerSafe(r.Method) {
			return fmt.Errorf("method %q cannot be sent in the Mcp-Method header", r.Method)
		}
		h.Set(headerMethod, r.Method)
	}
	if r.Name != "" {
		h.Set(headerName, EncodeHeaderValue(r.Name))
	}
	for _, p := range r.Params {
		if !ValidHeaderName(p.Name) {
			return fmt.Errorf("Mcp-Param-%s: %q is not a valid header name", p.Name, p.Name)
		}
		h[http.CanonicalHeaderKey(headerParamPrefix+p.Name)] = []string{EncodeHeaderValue(p.Value)}
	}
	return nil
}

// routeHeaderNames lists the route headers present in h, for --wire.
func routeHeaderNames(h http.Header) []string {
	var params []string
	for k := range h {
		if strings.HasPrefix(k, headerParamPrefix) {
			params = append(params, k)
		}
	}
	slices.Sort(params) // the same order every run
	return append([]string{headerMethod, headerName}, params...)
}
