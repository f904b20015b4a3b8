package transport

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// FuzzRedactURL checks URL redaction on arbitrary URLs: a URL that does
// not parse (or parses without a host) is redacted by hand, keeping no
// user info; one that does still parses, with any password (or a user
// name given alone) replaced, and no query parameter whose name (as the
// server decodes it) suggests a credential keeps its value.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{
		"https://user:hunter2@mcp.example.com/mcp?api_key=abc&x=1",
		"http://127.0.0.1:8080/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz&iss=https%3A%2F%2Fas",
		"https://h/p?access_token=t;x=1&Signature=s&X-Amz-Signature=abc",
		"https://h/p?%74oken=secret", "https://h/p?token", "https://h/?a=b=c&&=", "not a url", "https://h/p#access_token=frag",
		"u:hunter2@h/?next=https://a:b@c", "//u:hunter2@h/%zz?next=http://x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		out := RedactURL(u)
		orig, err := url.Parse(u)
		if err != nil || orig.Opaque != "" {
			if out != redactLoose(u) {
				t.Fatalf("RedactURL(%q) = %q, want %q", u, out, redactLoose(u))
			}
			if strings.Contains(authority(u), "@") {
				a := authority(out)
				info := a[:max(strings.LastIndexByte(a, '@'), 0)]
				if info != "redacted" && !strings.HasSuffix(info, ":redacted") || strings.Count(info, ":") > 1 {
					t.Fatalf("RedactURL(%q) = %q keeps user info", u, out)
				}
			}
			return
		}
		red, err := url.Parse(out)
		if err != nil {
			t.Fatalf("RedactURL(%q) = %q, which does not parse: %v", u, out, err)
		}
		if _, has := orig.User.Password(); has {
			if p, _ := red.User.Password(); p != "redacted" {
				t.Fatalf("RedactURL(%q) = %q keeps a password", u, out)
			}
		} else if orig.User != nil && red.User.Username() != "redacted" {
			t.Fatalf("RedactURL(%q) = %q keeps a user name given alone", u, out)
		}
		for _, part := range strings.Split(red.RawQuery, "&") {
			k, v, ok := strings.Cut(part, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if ok && sensitiveParam(name) && v != redactedValue {
				t.Fatalf("RedactURL(%q) = %q keeps %s", u, out, part)
			}
		}
	})
}

// authority returns what would be the authority of u, the part
// redactLoose looks for user info in first: after a scheme (RFC 3986;
// http: and https: even with no slash after them) and
// the slashes that follow it, after the slashes u starts with, or from its
// start, to the first /, ? or #. Not after the first "://" wherever it is:
// "u:pw@h/?next=https://x" has the authority "u:pw@h".
func authority(u string) string {
	rest := u
	if scheme, r, ok := strings.Cut(u, ":"); ok && (strings.HasPrefix(r, "/") || strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) && schemeRE.MatchString(scheme) {
		rest = r
	}
	u = strings.TrimLeft(rest, "/")
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	return u
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// FuzzRedactURLs checks the URLs found in free text against the regular
// expression that defines them (RedactURLs's documentation), each redacted
// by RedactURL: arbitrary text, with or without URLs and secrets, gives
// what replacing every match would give.
func FuzzRedactURLs(f *testing.F) {
	for _, s := range []string{
		`Post "http://u:pw@127.0.0.1:1/mcp?token=SECRET": dial tcp: refused; see https://h/x?sig=S2 (or not)`,
		"POST http://127.0.0.1:8080/mcp?tools=3&page=100 → 200 OK", "https://h/p?%74oken=secret.", "https://h/p?%74oken=x", "http://", "https://",
		"hthttp://a@b:c@d/", "http://x?KEY=1, https://y?a=b\thttp://z?code=2)", "plain text", "http:// x", "https://h/p?x=1;",
		"http://h/?tok\x80en=1", "http://u:p@h:1(x)", "xhttps://h?auth=a&sig=b!?",
		"POST unix:///tmp/s.sock?api_key=K#/mcp: refused", "unixhttp://h?key=1", "pipe:///pipe/x?token=t", "unix://",
	} {
		f.Add(s)
	}
	urls := regexp.MustCompile("(?:https?|unix|pipe)://[^\\s\"'`<>()]+")
	f.Fuzz(func(t *testing.T, s string) {
		want := urls.ReplaceAllStringFunc(s, func(u string) string {
			end := strings.TrimRight(u, ".,;:!?")
			if r, changed := redactURL(end); changed {
				return r + u[len(end):]
			}
			return u
		})
		if got := RedactURLs(s); got != want {
			t.Fatalf("RedactURLs(%q) = %q, want %q", s, got, want)
		}
	})
}
