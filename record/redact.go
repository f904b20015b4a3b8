package record

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpx-dev/mcpx/transport"
)

// Placeholder replaces every redacted value.
const Placeholder = "[redacted]"

var placeholderJSON = []byte(`"` + Placeholder + `"`)

// sensitiveKeys are the object member names whose values are redacted from
// every frame by default, at any depth, compared without regard to case:
// credentials and the tokens of OAuth exchanges.
var sensitiveKeys = []string{
	"access_token", "refresh_token", "id_token", "client_secret", "code_verifier",
	"authorization", "cookie", "set-cookie", "password", "api_key", "apikey", "x-api-key",
}

// RedactOptions say what is removed before anything reaches a trace.
type RedactOptions struct {
	// Disabled turns redaction off (--no-redact): the trace may then hold
	// secrets.
	Disabled bool
	// Paths are JSONPath expressions (see Path) whose values are replaced
	// in every frame, in addition to sensitiveKeys (--redact).
	Paths []string
	// Secrets are literal values known to be secret (a bearer token, the
	// value of an Authorization header given with -H): they are removed
	// wherever they appear, in frames, text and metadata.
	Secrets []string
}

// Redactor removes secrets from frames, text and metadata. The zero value
// and nil redact nothing.
type Redactor struct {
	on      bool
	paths   []*Path
	secrets [][]byte
	keys    [maxKeyLen + 1][][]byte // sensitive keys by length
}

// maxKeyLen bounds the length of sensitiveKeys.
const maxKeyLen = 24

// NewRedactor compiles o.
func NewRedactor(o RedactOptions) (*Redactor, error) {
	if o.Disabled {
		return &Redactor{}, nil
	}
	paths, err := ParsePaths(o.Paths)
	if err != nil {
		return nil, err
	}
	r := &Redactor{on: true, paths: paths}
	for _, k := range sensitiveKeys {
		r.keys[len(k)] = append(r.keys[len(k)], []byte(k))
	}
	for _, s := range o.Secrets {
		// Very short values would redact innocent text everywhere.
		if len(s) >= 4 {
			r.secrets = append(r.secrets, []byte(s))
		}
	}
	return r, nil
}

// Enabled reports whether r redacts anything.
func (r *Redactor) Enabled() bool { return r != nil && r.on }

// sensitive reports whether a member name is one of sensitiveKeys.
func (r *Redactor) sensitive(key []byte) bool {
	if len(key) > maxKeyLen {
		return false
	}
	for _, k := range r.keys[len(key)] {
		if bytes.EqualFold(k, key) {
			return true
		}
	}
	return false
}

func (r *Redactor) matchFrame(path []elem) bool {
	if n := len(path); n > 0 && path[n-1].index < 0 && r.sensitive([]byte(path[n-1].key)) {
		return true
	}
	return anyMatch(r.paths, path)
}

// Frame returns data with secrets replaced by "[redacted]": the values of
// sensitive members and of the configured paths (when data is JSON; the
// rest of the frame keeps its exact bytes), known secret values, and, in
// frames that are not JSON, anything that looks like a credential.
func (r *Redactor) Frame(data []byte) []byte {
	out, _ := r.frame(data)
	return out
}

// frame is Frame, also returning what a scan of the result found (so the
// writer need not scan it again).
func (r *Redactor) frame(data []byte) ([]byte, scanResult) {
	out, res, _ := r.frameValues(data, false)
	return out, res
}

// frameValues is frame; with values, it also returns the values it
// replaced, in the form a route header mirrors them (strings as they
// are, numbers as written, booleans as true or false).
func (r *Redactor) frameValues(data []byte, values bool) ([]byte, scanResult, map[string]bool) {
	if !r.Enabled() {
		return data, scanJSON(data, nil), nil
	}
	for _, s := range r.secrets {
		if bytes.Contains(data, s) {
			data = bytes.ReplaceAll(data, s, []byte(Placeholder))
		}
	}
	var res scanResult
	if len(r.paths) > 0 {
		// Paths need the full path of every value: the slower walk.
		if res = scanJSON(data, nil); res.valid {
			res.spans = findSpans(data, r.matchFrame)
		}
	} else {
		res = scanJSON(data, r.sensitive)
	}
	if !res.valid {
		if t := r.Text(string(data)); t != string(data) {
			data = []byte(t)
			return data, scanJSON(data, nil), nil
		}
		return data, res, nil
	}
	if len(res.spans) == 0 {
		return data, res, nil
	}
	var replaced map[string]bool
	if values {
		replaced = map[string]bool{}
		for _, sp := range res.spans {
			if v, ok := headerForm(data[sp.start:sp.end]); ok {
				replaced[v] = true
			}
		}
	}
	data = splice(data, res.spans, func([]byte) []byte { return placeholderJSON })
	return data, scanJSON(data, nil), replaced
}

// headerForm returns a JSON scalar as a route header mirrors it (spec
// 2026-07-28: basic/transports/streamable-http, "Value Encoding", before
// encoding): a string as it is, a number as written, a boolean as true or
// false. Objects, arrays and null are never mirrored.
func headerForm(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case c == 't' || c == 'f' || c == '-' || c >= '0' && c <= '9':
		return string(raw), true
	}
	return "", false
}

// FrameRoute redacts a frame and the route it was sent with. A route
// mirrors parts of its frame (the method, a tool's name or a resource's
// URI, tool arguments designated with x-mcp-header), so a mirrored value
// is replaced wherever the same value was redacted from the frame
// (sensitive member names, --redact paths); an Mcp-Param-{Name} value is
// also replaced when its Name is one of sensitiveKeys (with "-" read as
// "_": Api-Key is api_key), and known secrets are removed from every
// value. The route returned is a copy when anything changed.
func (r *Redactor) FrameRoute(data []byte, route *transport.Route) ([]byte, *transport.Route) {
	out, _, rt := r.frameRoute(data, route)
	return out, rt
}

func (r *Redactor) frameRoute(data []byte, route *transport.Route) ([]byte, scanResult, *transport.Route) {
	if route == nil || !r.Enabled() {
		out, res := r.frame(data)
		return out, res, route
	}
	out, res, replaced := r.frameValues(data, true)
	return out, res, r.route(route, replaced)
}

// route redacts a route given the values redacted from its frame.
func (r *Redactor) route(route *transport.Route, replaced map[string]bool) *transport.Route {
	c := *route
	changed := false
	value := func(v string, sensitiveName bool) string {
		if v == "" {
			return v
		}
		if sensitiveName || replaced[v] {
			changed = true
			return Placeholder
		}
		for _, s := range r.secrets {
			if strings.Contains(v, string(s)) {
				changed = true
				v = strings.ReplaceAll(v, string(s), Placeholder)
			}
		}
		return v
	}
	// The version and the method are the protocol's, not the user's data.
	c.Name = value(c.Name, false)
	if len(route.Params) > 0 {
		c.Params = make([]transport.RouteParam, len(route.Params))
		for i, p := range route.Params {
			name := []byte(strings.ReplaceAll(p.Name, "-", "_"))
			c.Params[i] = transport.RouteParam{Name: p.Name, Value: value(p.Value, r.sensitive([]byte(p.Name)) || r.sensitive(name))}
		}
	}
	if !changed {
		return route
	}
	return &c
}

// Text returns s with known secrets, credential-like values and the
// secrets in URLs (see transport.RedactCredentials) replaced.
func (r *Redactor) Text(s string) string {
	if !r.Enabled() || s == "" {
		return s
	}
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, string(sec), Placeholder)
	}
	return transport.RedactCredentials(s)
}

// URL returns u with a password and the values of credential-like query
// parameters replaced.
func (r *Redactor) URL(u string) string {
	if !r.Enabled() || u == "" {
		return u
	}
	return r.Text(u)
}

// Meta returns m with its URL redacted (a copy when anything changed).
func (r *Redactor) Meta(m *transport.Meta) *transport.Meta {
	if !r.Enabled() || m == nil || m.URL == "" {
		return m
	}
	if u := r.URL(m.URL); u != m.URL {
		c := *m
		c.URL = u
		return &c
	}
	return m
}
