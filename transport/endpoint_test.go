package transport_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// Every URL net/url takes but no client should dial as written is refused
// with what is wrong and how to write it, and the message never shows the
// URL's credentials.
func TestParseEndpoint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, problem, fix string }{
		// net/http dialed port 80 for an empty port.
		{"http://127.0.0.1:/", `the port after ":" is empty`, `write the port (http://127.0.0.1:PORT/) or drop the ":" to use port 80`},
		{"https://h:/mcp", `the port after ":" is empty`, "(https://h:PORT/mcp) or drop the \":\" to use port 443"},
		{"127.0.0.1:3001/mcp", "no http:// or https:// scheme", "did you mean http://127.0.0.1:3001/mcp?"},
		{"localhost:3001", "no http:// or https:// scheme", "did you mean http://localhost:3001?"},
		{":3001", "no http:// or https:// scheme", "did you mean http://127.0.0.1:3001?"},
		{"mcp.example.com/mcp", "no http:// or https:// scheme", "did you mean https://mcp.example.com/mcp?"},
		{"http:/127.0.0.1/", `followed by "//"`, "did you mean http://127.0.0.1/?"},
		{"ftp://h/", `"ftp://" is not a scheme`, "use http:// or https://"},
		{"ws://h:1/mcp", "WebSocket", "did you mean http://h:1/mcp?"},
		{"http:///mcp", "no host", "http://127.0.0.1:3001/mcp"},
		{"http://:3001/mcp", "no host", "did you mean http://127.0.0.1:3001/mcp?"},
		{"http://::1:3001/mcp", "must be in brackets", "did you mean http://[::1]:3001/mcp?"},
		{"http://[::1/", "no closing ']'", "http://[::1]:3001/mcp"},
		{"http://h:99999/", "99999 is not from 1 to 65535", ""},
		{"http://h:0/", "0 is not from 1 to 65535", ""},
		{"http://h:x1/", `"x1" is not a number`, ""},
		{"http://h/mcp#top", "fragment (#top), which is never sent", "did you mean http://h/mcp?"},
		{" http://h/", "white space", `did you mean http://h/?`},
		{"http://[fe80::1%eth0]:1/", "invalid URL escape", "%25"},
		// Credentials given with a mistake are not shown.
		{"http://u:hunter2@h:/", "port", ""},
		{"u:hunter2@127.0.0.1:3001/mcp", "no http:// or https:// scheme", "did you mean http://u:redacted@127.0.0.1:3001/mcp?"},
		{"http://TOKEN9@h/#f", "fragment", "did you mean http://redacted@h/?"},
		// A fragment of parameters (an OAuth redirect's) redacts those
		// named like a credential, as a query's are.
		{"http://h/mcp#token=TOKEN9", "fragment (#token=[redacted]), which is never sent", "did you mean http://h/mcp?"},
		{"http://h/mcp#access_token=TOKEN9&token_type=bearer&state=s1", "fragment (#access_token=[redacted]&token_type=[redacted]&state=s1)", ""},
		{"http://h/mcp?api_key=TOKEN9#x", "fragment (#x)", "did you mean http://h/mcp?api_key=[redacted]?"},
		{"ftp://u:hunter2@h/?token=TOKEN9", "ftp", ""},
		{"http:/u:hunter2@h/", `followed by "//"`, "did you mean http://u:redacted@h/?"},
		{"http:u:hunter2@h/", `followed by "//"`, "did you mean http://u:redacted@h/?"},
		{"http://h://u:hunter2@x", `the port after ":" is empty`, "(http://h:PORT//u:redacted@x)"},
		{"u:hunter2@h/cb?next=https://a:TOKEN9@c", "no http:// or https:// scheme", "did you mean https://u:redacted@h/cb?next=https://a:redacted@c?"},
		{"//u:hunter2@h/cb?next=http://x", "no http:// or https:// scheme", "did you mean https://u:redacted@h/cb?next=http://x?"},
		{"h#x://u:hunter2@h", "no http:// or https:// scheme", "did you mean https://h#x://u:redacted@h?"},
		// A socket's URL (VS Code's unix:///PATH#/HTTP-PATH).
		{"unix://tmp/s.sock#/mcp", `must be absolute, with no host ("tmp")`, "did you mean unix:///tmp/s.sock#/mcp?"},
		{"unix://u:hunter2@/s.sock", "no user info or host", "did you mean unix:///u:redacted@/s.sock?"},
		{"unix:/tmp/s.sock#/mcp", `followed by "//" and the socket's absolute path`, "did you mean unix:///tmp/s.sock#/mcp?"},
		{"unix:///#/mcp", "it names no socket", "unix:///PATH/TO/SOCKET#/mcp"},
		{"unix://", "it names no socket", ""},
		{"unix:///tmp/s.sock#mcp", `after '#' ("mcp") must start with '/'`, "did you mean unix:///tmp/s.sock#/mcp?"},
		{"unix:///tmp/s.sock?a=1#/mcp?token=TOKEN9", "the query after '#'", "did you mean unix:///tmp/s.sock?a=1&token=[redacted]#/mcp?"},
		{"unix:///tmp/s%00.sock", "control characters", ""},
		{"ftp:///tmp/s.sock", `"ftp://" is not a scheme`, "unix:// for a Unix socket"},
	} {
		_, err := transport.ParseEndpoint(tt.in)
		var ue *transport.URLError
		if !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a *URLError", tt.in, err)
			continue
		}
		if !strings.Contains(ue.Problem, tt.problem) || !strings.Contains(ue.Fix, tt.fix) {
			t.Errorf("%q: %s\nwant a problem with %q, a fix with %q", tt.in, err, tt.problem, tt.fix)
		}
		if msg := err.Error(); strings.Contains(msg, "hunter2") || strings.Contains(msg, "TOKEN9") {
			t.Errorf("%q: the message shows a credential: %s", tt.in, msg)
		}
	}
	for _, ok := range []string{"http://127.0.0.1:3001/mcp", "HTTPS://Example.com/mcp?x=1", "http://[::1]:3001/", "http://[fe80::1%25eth0]:1/", "http://u:p@h/",
		"unix:///tmp/s.sock", "unix:///tmp/s.sock#/mcp", "UNIX:///tmp/s.sock?x=1#/a/b%2Fc", "unix:///run/user/1000/my%20server.sock#/"} {
		if _, err := transport.ParseEndpoint(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// FuzzParseEndpoint checks that a URL ParseEndpoint accepts is one net/http
// dials as written: http or https, a host, a port that is absent or a
// number from 1 to 65535 (never a bare ":"), no fragment; and that a
// refusal never quotes a password.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:3001/mcp", "http://127.0.0.1:/", "http://[::1]:/", "localhost:1", "http://u:pw@h:1/#x", "https://[fe80::1%25en0]:443/a?b=c", "00000:0000@0", "u:https@h", "u:hunter2@h",
		// Not a password shown: its text is in the path, or in the problem
		// (net/url refuses " " in a password: "invalid userinfo").
		"http://u:a<bc@h/a<bc", "http://u:pass@h:0/:pass@", "http://u:d userinfo@h",
		// Shown: the authority was taken to follow the first "://", wherever
		// it was (h#00:// found by fuzzing), and "http:/" was not skipped.
		"h#00://0:0000@0", "u:hunter2@h/?next=https://a:b@c", "//u:hunter2@h/?next=http://x", "u:hunter2@h:1/https://",
		"http:/u:hunter2@h", "example.com/?next=https://u:hunter2@h", "u:pw@h://x:hunter2@y",
		"unix:///tmp/s.sock#/mcp", "unix://u:hunter2@/s", "unix:/u:hunter2@h", "pipe:///pipe/x#/mcp", "unix:///s?token=T#/a?b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := transport.ParseEndpoint(raw)
		if err != nil {
			var ue *transport.URLError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %T %v", raw, err, err)
			}
			for _, at := range authorities(raw) {
				if p, at, ok := userPassword(raw, at); ok {
					checkPasswordHidden(t, raw, err, p, at)
				}
			}
			return
		}
		if u.Scheme == "unix" || u.Scheme == "pipe" {
			// A socket's path, no host, and the HTTP path in the fragment.
			if u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") || len(u.Path) < 2 ||
				u.Fragment != "" && !strings.HasPrefix(u.Fragment, "/") || strings.Contains(u.Fragment, "?") {
				t.Fatalf("%q accepted as %#v", raw, u)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.Fragment != "" || strings.HasSuffix(u.Host, ":") {
			t.Fatalf("%q accepted as %#v", raw, u)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("%q accepted with port %q", raw, p)
			}
		}
	})
}

// checkPasswordHidden fails t if err, ParseEndpoint's refusal of raw,
// shows the password p, at offset at in raw. p's text may also come from
// elsewhere (the user name "00000" holds the password "0000", the advice
// says "https", the path repeats it), so the message is compared with the
// one for raw with the password masked: shown, p occurs in it once more.
// The mask keeps what net/url reads in a password (maskPassword), so that
// both are refused for the same reason.
func checkPasswordHidden(t *testing.T, raw string, err error, p string, at int) {
	t.Helper()
	if len(p) <= 3 || !strings.Contains(err.Error(), p) {
		return
	}
	masked, ok := maskPassword(p)
	if !ok {
		return
	}
	_, err2 := transport.ParseEndpoint(raw[:at] + masked + raw[at+len(p):])
	if err2 == nil {
		t.Fatalf("%q: refused, but accepted with the password %q as %q", raw, p, masked)
	}
	if strings.Count(err.Error(), p) > strings.Count(err2.Error(), p) {
		t.Fatalf("%q: the message shows the password: %s", raw, err)
	}
}

// maskPassword returns p with each byte net/url takes as itself in user
// info (a letter, a digit, -._~!$&'()*+,;=:@) replaced by a letter p does
// not hold, and the rest (an escape "%XX", a byte net/url refuses there)
// kept, so that net/url accepts or refuses both alike; false when p holds
// every candidate letter.
func maskPassword(p string) (string, bool) {
	const letters = "xyzXYZqQjJ"
	k := strings.IndexFunc(letters, func(r rune) bool { return !strings.ContainsRune(p, r) })
	if k < 0 {
		return "", false
	}
	m := letters[k]
	b := []byte(p)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '%':
			i += 2 // the escape stays as it is, valid or not
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0:
			b[i] = m
		}
	}
	return string(b), true
}

// authorities returns the offsets in raw of the authorities whose
// passwords no message may show: the one raw starts with, after its
// scheme and slashes (RFC 3986's scheme, even with one slash or three:
// "http:/u:pw@h" is mistyped; "http:" and "https:" even with none, as
// in "http:u:pw@h"), after the slashes it starts with, or at
// its start ("u:pw@h:3001", "localhost:1"); and each one after a later
// "://" (a URL in the query, or after a "scheme" that is none:
// "h#x://u:pw@h", "h/?next=https://u:pw@x").
func authorities(raw string) []int {
	first := len(raw) - len(strings.TrimLeft(raw, "/"))
	if i := strings.IndexByte(raw, ':'); i > 0 && i+1 < len(raw) && isScheme(raw[:i]) && (raw[i+1] == '/' || strings.EqualFold(raw[:i], "http") || strings.EqualFold(raw[:i], "https")) {
		first = i + 1 + len(raw[i+1:]) - len(strings.TrimLeft(raw[i+1:], "/"))
	}
	offsets := []int{first}
	for i := 0; i+3 <= len(raw); i++ {
		if raw[i:i+3] == "://" && i+3 > first {
			offsets = append(offsets, i+3)
		}
	}
	return offsets
}

// isScheme reports whether s is a URL scheme by RFC 3986: a letter, then
// letters, digits, "+", "-" and ".".
func isScheme(s string) bool {
	for i, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// userPassword returns the password of the user info of the authority at
// offset start in raw (up to the first "/", "?" or "#"; the user info up
// to its last "@", the password after its first ":"), and its offset.
func userPassword(raw string, start int) (string, int, bool) {
	rest := raw[start:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return "", 0, false
	}
	colon := strings.IndexByte(rest[:at], ':')
	if colon < 0 {
		return "", 0, false
	}
	return rest[colon+1 : at], start + colon + 1, true
}
