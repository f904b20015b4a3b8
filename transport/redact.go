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

// RedactURL removes a password in the user info and the values of query
// parameters whose names suggest credentials (token, key, secret,
// password, code, signature, auth). It returns u unchanged when it does
// not parse. Every URL mcpx prints (notes, --wire lines, error messages)
// and every URL it records goes through it: a URL given on the command
// line or sent by a server may carry an API key or a signed token.
func RedactURL(u string) string {
	r, _ := redactURL(u)
	return r
}

// redactURL is RedactURL, also reporting whether anything was redacted.
func redactURL(u string) (string, bool) {
	p, err := url.Parse(u)
	if err != nil {
		return u, false
	}
	changed := false
	if p.User != nil {
		if _, ok := p.User.Password(); ok {
			p.User = url.UserPassword(p.User.Username(), "redacted")
			changed = true
		}
	}
	if p.RawQuery != "" {
		parts := strings.Split(p.RawQuery, "&")
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
		p.RawQuery = strings.Join(parts, "&")
	}
	return p.String(), changed
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

// urlInText finds the http(s) URLs quoted in free text.
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("https?://[^\\s\"'`<>()]+") })

// RedactURLs returns s with every http(s) URL in it that holds a secret
// redacted by RedactURL (the others are left exactly as they are): for
// free text (an error message, a note) that may quote one.
func RedactURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlInText().ReplaceAllStringFunc(s, func(u string) string {
		// Punctuation that ends a sentence or introduces what follows
		// ("POST URL: refused") is not part of the URL.
		end := strings.TrimRight(u, ".,;:!?")
		if r, changed := redactURL(end); changed {
			return r + u[len(end):]
		}
		return u
	})
}

// redactedError shows its error's message with the URLs in it redacted,
// and unwraps to it, so errors.Is and errors.As see the original chain.
type redactedError struct{ err error }

func (e *redactedError) Error() string { return RedactURLs(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

// maxExcerpt bounds server-supplied text (a header value) echoed in a
// message.
const maxExcerpt = 300

// Excerpt makes server-supplied text fit a one-line message: control
// characters (C0, DEL, C1) are shown as \x or \u escapes, and text longer
// than a few hundred bytes is cut, saying how long it was. A server can
// send a header of hundreds of kilobytes; an error quoting it whole would
// bury everything else. Programs that need the full value keep it in the
// error's fields.
func Excerpt(s string) string {
	cut := len(s) > maxExcerpt
	t := s
	if cut {
		t = s[:maxExcerpt]
		if i := lastRuneStart(t); !utf8.FullRuneInString(t[i:]) {
			t = t[:i] // do not split a character
		}
	}
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
	if cut {
		fmt.Fprintf(&b, "… (%d bytes)", len(s))
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
