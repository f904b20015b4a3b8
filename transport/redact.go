package transport

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// redactedValue replaces a secret in a URL's query.
const redactedValue = "[redacted]"

// RedactURL removes a password in the user info (a user name given
// alone, which is then the credential, too) and the values of query
// parameters whose names suggest credentials (token, key, secret,
// password, code, signature, auth). Text that does not parse as a URL
// gets the same treatment by hand (see redactLoose). Every URL mcpx prints (notes, --wire lines, error messages)
// and every URL it records goes through it: a URL given on the command
// line or sent by a server may carry an API key or a signed token.
func RedactURL(u string) string {
	r, _ := redactURL(u)
	return r
}

// URLHoldsSecret reports whether RedactURL would hide anything of u (a
// password, a user name given alone, a secret query parameter): whether
// u, a word of a command line or a variable's value, is a credential.
// RedactURL's result alone cannot tell, as it may escape what it
// leaves ({name} becomes %7Bname%7D).
func URLHoldsSecret(u string) bool {
	_, changed := redactURL(u)
	return changed
}

// redactURL is RedactURL, also reporting whether anything was redacted.
func redactURL(u string) (string, bool) {
	p, err := url.Parse(u)
	if err != nil || p.Opaque != "" {
		// Not a URL net/url reads as one with a host: the user info and
		// the query are found by hand (a URL given with a mistake is
		// quoted in the error about it).
		r := redactLoose(u)
		return r, r != u
	}
	changed := false
	if p.User != nil {
		if _, ok := p.User.Password(); ok {
			p.User = url.UserPassword(p.User.Username(), "redacted")
		} else {
			// https://TOKEN@host: a user name alone is the credential.
			p.User = url.User("redacted")
		}
		changed = true
	}
	if p.RawQuery != "" {
		var c bool
		p.RawQuery, c = redactQuery(p.RawQuery)
		changed = changed || c
	}
	return p.String(), changed
}

// redactQuery redacts the values of the sensitive parameters of a raw
// query.
func redactQuery(q string) (string, bool) {
	changed := false
	parts := strings.Split(q, "&")
	for i, part := range parts {
		k, _, ok := strings.Cut(part, "=")
		// The name as the server reads it: %74oken is token.
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if ok && sensitiveParam(name) {
			parts[i] = k + "=" + redactedValue
			changed = true
		}
	}
	return strings.Join(parts, "&"), changed
}

// redactLoose is RedactURL for text that may not parse as a URL (one given
// with a mistake, or without a scheme): the user info, everything before
// an @ in what would be an authority, is redacted, and the query's
// sensitive values are redacted, and so are those of a fragment of
// parameters (#access_token=…). The authorities are the one the text
// starts with (looseAuthority) and each one after a later "://": a URL
// inside this one, or after a scheme that is none ("h#x://u:pw@h").
func redactLoose(u string) string {
	u, end := redactUserInfo(u, looseAuthority(u))
	for {
		// The ":" of "://" may end the first authority ("u:pw@h://").
		i := strings.Index(u[max(end-1, 0):], "://")
		if i < 0 {
			break
		}
		u, end = redactUserInfo(u, max(end-1, 0)+i+len("://"))
	}
	if q := strings.IndexByte(u, '?'); q >= 0 {
		frag := len(u)
		if i := strings.IndexByte(u[q:], '#'); i >= 0 {
			frag = q + i
		}
		rq, _ := redactQuery(u[q+1 : frag])
		u = u[:q+1] + rq + u[frag:]
	}
	if f := strings.IndexByte(u, '#'); f >= 0 {
		// A fragment of parameters, as an OAuth redirect's
		// (#access_token=…&state=…): never sent, but quoted in the
		// error that refuses it, which may end up in a CI log.
		rf, _ := redactQuery(u[f+1:])
		u = u[:f+1] + rf
	}
	return u
}

// looseAuthority returns where the authority of u begins, as meant by
// whoever may have mistyped it: after a scheme and the slashes that follow
// it ("http://", or "http:/" and "http:///"), after the slashes u starts
// with ("//host"), or at its start ("user:pw@host:3001"). A scheme is one
// by RFC 3986 (validScheme): in "h#x://u:pw@h" the authority is "h", and
// in "u:pw@h/?next=https://x" it is "u:pw@h", not what follows a "://".
// "http:" and "https:" are schemes with no slash after them too
// ("http:u:pw@h"), as ParseEndpoint reads them when it says so.
func looseAuthority(u string) int {
	rest := u
	if scheme, r, ok := strings.Cut(u, ":"); ok && validScheme(scheme) && (strings.HasPrefix(r, "/") || httpScheme(scheme)) {
		rest = r
	}
	return len(u) - len(strings.TrimLeft(rest, "/"))
}

// httpScheme reports whether scheme is http or https, in any case.
func httpScheme(scheme string) bool {
	return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// redactUserInfo redacts the user info of the authority that starts at
// start in u, as RedactURL does: user:redacted, or redacted for a user
// given alone. It returns u and where the authority ends in it.
func redactUserInfo(u string, start int) (string, int) {
	end := len(u)
	if i := strings.IndexAny(u[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(u[start:end], '@')
	if at < 0 {
		return u, end
	}
	info := "redacted"
	if user, _, ok := strings.Cut(u[start:start+at], ":"); ok {
		info = user + ":redacted"
	}
	return u[:start] + info + u[start+at:], end - at + len(info)
}

func sensitiveParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range sensitiveWords {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// sensitiveWords are the words of a query parameter's name that suggest a
// credential.
var sensitiveWords = []string{"token", "key", "secret", "password", "code", "signature", "sig", "auth"}

// RedactURLs returns s with every URL in it that holds a secret redacted
// by RedactURL (the others are left exactly as they are): for free text
// (an error message, a note) that may quote one. A URL is what the
// regular expression (https?|unix|pipe)://[^\s"'`<>()]+ matches, less punctuation
// that ends a sentence or introduces what follows ("POST URL: refused").
// It is found by hand and parsed only when it could hold a secret: every
// HTTP exchange's note goes through here, and the regular expression and
// the parse were a twentieth of an HTTP request's CPU.
func RedactURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		after := i + j + len("://")
		start := i + j - urlSchemeLen(s[i:i+j])
		end := after
		for start < after-len("://") && end < len(s) && !endsURL(s[end]) {
			end++
		}
		if end == after || start == after-len("://") {
			i = after // not a URL: no scheme, or nothing after it
			continue
		}
		u := s[start:end]
		trimmed := strings.TrimRight(u, ".,;:!?")
		if mayHoldSecret(trimmed) {
			if r, changed := redactURL(trimmed); changed {
				b.WriteString(s[done:start])
				b.WriteString(r)
				b.WriteString(u[len(trimmed):])
				done = end
			}
		}
		i = end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// urlSchemeLen returns the length of the scheme of a URL that s ends
// with and "://" follows: "https", "http", or a socket's "unix" or
// "pipe" (see socketEndpoint); 0 if none.
func urlSchemeLen(s string) int {
	for _, scheme := range []string{"https", "http", "unix", "pipe"} {
		if strings.HasSuffix(s, scheme) {
			return len(scheme)
		}
	}
	return 0
}

// endsURL reports whether c cannot be part of a URL in free text: white
// space (as \s in a Go regular expression: tab, newline, form feed,
// carriage return, space), quotes, angle brackets or parentheses.
func endsURL(c byte) bool {
	switch c {
	case '\t', '\n', '\f', '\r', ' ', '"', '\'', '`', '<', '>', '(', ')':
		return true
	}
	return false
}

// mayHoldSecret reports whether redactURL could change u: a password
// needs user info (an @), a secret parameter a query (a ?) or, in a URL
// net/url does not read (redactLoose), a fragment (a #) with one of
// sensitiveParam's words in its name, or percent-escapes that could spell
// one.
func mayHoldSecret(u string) bool {
	if strings.ContainsAny(u, "@%") {
		return true
	}
	if !strings.ContainsAny(u, "?#") {
		return false
	}
	lower := strings.ToLower(u)
	for _, w := range sensitiveWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// Credential patterns in free text (stderr lines, HTTP summaries and
// error bodies, frames that are not JSON).
var (
	authSchemeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{4,})`) })
	// challengeParamRE is what follows the scheme in a WWW-Authenticate
	// challenge rather than a token: one of the parameters of RFC 6750
	// section 3, RFC 9728 section 5.1 and RFC 9449 section 7.1, with its
	// value quoted.
	challengeParamRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(?:realm|scope|error|error_description|error_uri|resource_metadata|algs)="`)
	})
	keyValueRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)((?:access_token|refresh_token|id_token|client_secret|code_verifier|password|api[_-]?key|authorization|set-cookie|cookie)"?\s*[:=]\s*"?)([^"&\s,;)]+)`)
	})
)

// RedactCredentials returns s with what looks like a credential in free
// text replaced by [redacted]: the secrets of the URLs in it (see
// RedactURLs), the token after Bearer or Basic (RedactAuthTokens), and
// the value after a credential's name (access_token=, "password": ,
// Cookie: ). --wire redacts the bodies of HTTP error answers with it,
// which a server or a proxy may fill with the request it refused, and
// traces of redaction rules 1 their text (package record).
func RedactCredentials(s string) string {
	if s == "" {
		return s
	}
	s = RedactAuthTokens(RedactURLs(s))
	return keyValueRE().ReplaceAllString(s, "${1}"+redactedValue)
}

// RedactAuthTokens returns s with the token after "Bearer" or "Basic"
// (an Authorization header quoted in free text) replaced by [redacted].
//
// A challenge (WWW-Authenticate: Bearer error="invalid_token", …, as
// --wire and traces show a 401) is left as it is: what follows its scheme
// is a parameter, which holds no credential, not a token. Its first
// parameter's name was replaced, so that a trace of an authorization
// lost the error (Bearer [redacted]"insufficient_scope").
func RedactAuthTokens(s string) string {
	re := authSchemeRE()
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		if challengeParamRE().MatchString(s[m[6]:]) {
			continue
		}
		b.WriteString(s[last:m[6]])
		b.WriteString(redactedValue)
		last = m[7]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// RedactSecrets returns s with every one of secrets, as it is and
// form-encoded (as a server echoing a request would show it), replaced
// by [redacted]: for text a server sent back that may quote the
// credentials mcpx sent it. Empty secrets are skipped.
func RedactSecrets(s string, secrets []string) string {
	for _, v := range secrets {
		if v == "" {
			continue
		}
		s = strings.ReplaceAll(s, v, redactedValue)
		if q := url.QueryEscape(v); q != v {
			s = strings.ReplaceAll(s, q, redactedValue)
		}
	}
	return s
}

// redactedError shows its error's message with the URLs in it redacted,
// and unwraps to it, so errors.Is and errors.As see the original chain.
type redactedError struct{ err error }

func (e *redactedError) Error() string { return RedactURLs(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

// maxExcerpt bounds server-supplied text (a header value) echoed in a
// message.
const maxExcerpt = 300

// QuoteExcerpt is Excerpt in double quotes: a value quoted in a one-line
// message, whether a server sent it (a header, an OAuth error) or the
// user typed it (a key=value argument, a flag's value, a word where a
// command was expected): a value pasted by mistake may be a whole
// document, or hold a line break that would split the message.
func QuoteExcerpt(s string) string {
	return `"` + Excerpt(s) + `"`
}

// Excerpt makes server-supplied text fit a one-line message: control
// characters (C0, DEL, C1) are shown as \x or \u escapes, and text longer
// than a few hundred bytes is cut, saying how long it was. A server can
// send a header of hundreds of kilobytes; an error quoting it whole would
// bury everything else. Programs that need the full value keep it in the
// error's fields.
func Excerpt(s string) string {
	t := cutAt(s, maxExcerpt)
	out := escapeControls(t)
	if len(t) < len(s) {
		out += fmt.Sprintf("… (%d bytes)", len(s))
	}
	return out
}

// cutAt returns s cut to at most n bytes, never within a character.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := lastRuneStart(s); !utf8.FullRuneInString(s[i:]) {
		s = s[:i]
	}
	return s
}

// escapeControls returns s with its control characters (C0, DEL, C1)
// and the bytes that are not UTF-8 shown as \x or \u escapes.
func escapeControls(t string) string {
	var b strings.Builder
	for i := 0; i < len(t); {
		r, size := utf8.DecodeRuneInString(t[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, t[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(t[i : i+size])
		}
		i += size
	}
	return b.String()
}

// lastRuneStart returns the index where the last (possibly incomplete)
// UTF-8 sequence of s starts.
func lastRuneStart(s string) int {
	i := len(s) - 1
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
