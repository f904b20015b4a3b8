package record

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"

	"github.com/mcpx-dev/mcpx/transport"
)

// Placeholder replaces every redacted value.
const Placeholder = "[redacted]"

var placeholderJSON = []byte(`"` + Placeholder + `"`)

// SensitiveKeys are the object member names whose values are redacted from
// every frame by default, at any depth, compared without regard to case:
// credentials and the tokens of OAuth exchanges.
var SensitiveKeys = []string{
	"access_token", "refresh_token", "id_token", "client_secret", "code_verifier",
	"authorization", "cookie", "set-cookie", "password", "api_key", "apikey", "x-api-key",
}

// RedactOptions say what is removed before anything reaches a trace.
type RedactOptions struct {
	// Disabled turns redaction off (--no-redact): the trace may then hold
	// secrets.
	Disabled bool
	// Paths are JSONPath expressions (see Path) whose values are replaced
	// in every frame, in addition to SensitiveKeys (--redact).
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

// maxKeyLen bounds the length of SensitiveKeys.
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
	for _, k := range SensitiveKeys {
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

// sensitive reports whether a member name is one of SensitiveKeys.
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
	if !r.Enabled() {
		return data, scanJSON(data, nil)
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
			return data, scanJSON(data, nil)
		}
		return data, res
	}
	if len(res.spans) == 0 {
		return data, res
	}
	data = splice(data, res.spans, func([]byte) []byte { return placeholderJSON })
	return data, scanJSON(data, nil)
}

// credential patterns in free text (stderr lines, HTTP summaries, frames
// that are not JSON).
var (
	authSchemeRE = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}`)
	urlRE        = regexp.MustCompile(`https?://[^\s"'<>()]+`)
	keyValueRE   = regexp.MustCompile(`(?i)((?:access_token|refresh_token|id_token|client_secret|code_verifier|password|api[_-]?key|authorization|set-cookie|cookie)"?\s*[:=]\s*"?)([^"&\s,;)]+)`)
)

// Text returns s with known secrets, credential-like values and the
// secrets in URLs (see RedactURL) replaced.
func (r *Redactor) Text(s string) string {
	if !r.Enabled() || s == "" {
		return s
	}
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, string(sec), Placeholder)
	}
	if strings.Contains(s, "://") {
		s = urlRE.ReplaceAllStringFunc(s, RedactURL)
	}
	s = authSchemeRE.ReplaceAllString(s, "${1}${2}"+Placeholder)
	return keyValueRE.ReplaceAllString(s, "${1}"+Placeholder)
}

// URL returns u with a password and the values of credential-like query
// parameters replaced.
func (r *Redactor) URL(u string) string {
	if !r.Enabled() || u == "" {
		return u
	}
	return r.Text(u)
}

// RedactURL removes a password in the user info and the values of query
// parameters whose names suggest credentials (token, key, secret,
// password, code, signature). It returns u unchanged when it does not
// parse.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	if p.User != nil {
		if _, ok := p.User.Password(); ok {
			p.User = url.UserPassword(p.User.Username(), "redacted")
		}
	}
	if p.RawQuery != "" {
		parts := strings.Split(p.RawQuery, "&")
		for i, part := range parts {
			k, _, ok := strings.Cut(part, "=")
			if ok && sensitiveParam(k) {
				parts[i] = k + "=" + Placeholder
			}
		}
		p.RawQuery = strings.Join(parts, "&")
	}
	return p.String()
}

func sensitiveParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"token", "key", "secret", "password", "code", "signature", "sig", "auth"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
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
