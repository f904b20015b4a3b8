package transport_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:3001/mcp":                            "http://127.0.0.1:3001/mcp",
		"https://user:pw@h/mcp?token=abc&x=1":                  "https://user:redacted@h/mcp?token=[redacted]&x=1",
		"https://h/cb?code=c&state=s&X-Amz-Signature=z&k=v":    "https://h/cb?code=[redacted]&state=s&X-Amz-Signature=[redacted]&k=v",
		"https://user@h/?api_key=1&client_secret=2&Password=3": "https://redacted@h/?api_key=[redacted]&client_secret=[redacted]&Password=[redacted]",
		"%%not a url": "%%not a url",
		// Text that does not parse is redacted by hand.
		"http://u:pw@[::1/?token=t#f":  "http://u:redacted@[::1/?token=[redacted]#f",
		"TOKEN@127.0.0.1:3001/mcp?x=1": "redacted@127.0.0.1:3001/mcp?x=1",
		// The authority is the one the text starts with, not what follows
		// the first "://" (here a URL in the query, redacted too).
		"u:pw@h/x?next=https://a:b@c": "u:redacted@h/x?next=https://a:redacted@c",
	} {
		if got := transport.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		// Punctuation and quotes after a URL are not part of it.
		"POST http://h/mcp?token=S: refused.":         "POST http://h/mcp?token=[redacted]: refused.",
		"run `mcpx auth login --url http://h/?key=S`": "run `mcpx auth login --url http://h/?key=[redacted]`",
		// A URL without secrets is left exactly as it was.
		"run `mcpx auth login --url http://h/mcp`, or http://h/a|b?q=é": "run `mcpx auth login --url http://h/mcp`, or http://h/a|b?q=é",
	} {
		if got := transport.RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q) = %q, want %q", in, got, want)
		}
	}
	got := transport.RedactURLs(`Post "http://u:pw@127.0.0.1:1/mcp?token=SECRET": dial tcp: refused; see https://h/x?sig=S2 (or not)`)
	want := `Post "http://u:redacted@127.0.0.1:1/mcp?token=[redacted]": dial tcp: refused; see https://h/x?sig=[redacted] (or not)`
	if got != want {
		t.Errorf("RedactURLs = %q\nwant %q", got, want)
	}
}

// URLSecrets lists what RedactURL hides, and the Basic credentials
// net/http sends for the user info, for what shows a server's echo of
// them.
func TestURLSecrets(t *testing.T) {
	for in, want := range map[string][]string{
		"http://127.0.0.1:3001/mcp?x=1":              nil,
		"https://user:pw-1@h/mcp?token=tk-2&x=long1": {"pw-1", "dXNlcjpwdy0x", "tk-2"},
		// A user name given alone is the credential.
		"https://tk-3@h/":  {"tk-3", "dGstMzo="},
		"https://h/?key=a": nil, // too short to redact
		"%%not a url":      nil,
	} {
		if got := transport.URLSecrets(in); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("URLSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server's 400 KB challenge is cut in the message (the field keeps it
// whole), and its control characters are escaped.
func TestUnauthorizedErrorShortensChallenge(t *testing.T) {
	long := "Bearer error=\"invalid_token\", error_description=\"\x1b[31mred\x1b[0m\", junk=\"" + strings.Repeat("x", 400<<10) + "\""
	e := &transport.UnauthorizedError{Method: "POST", URL: "http://127.0.0.1:1/mcp", Status: 401, Challenge: long}
	msg := e.Error()
	if len(msg) > 600 {
		t.Errorf("message of %d bytes", len(msg))
	}
	if !strings.Contains(msg, `\x1b[31mred\x1b[0m`) || strings.ContainsRune(msg, 0x1b) {
		t.Errorf("control characters not escaped: %q", msg[:200])
	}
	if !strings.HasSuffix(msg, fmt.Sprintf("… (%d bytes)", len(long))) {
		t.Errorf("message does not say it was cut: …%q", msg[len(msg)-40:])
	}
	if e.Challenge != long {
		t.Error("the field lost the full challenge")
	}
	// A short one is shown as it is; a multi-byte character is never split.
	e.Challenge = `Bearer realm="é"`
	if !strings.HasSuffix(e.Error(), `WWW-Authenticate: Bearer realm="é"`) {
		t.Errorf("short challenge: %s", e.Error())
	}
	if got := transport.Excerpt(strings.Repeat("é", 400)); !strings.HasPrefix(got, strings.Repeat("é", 150)+"…") {
		t.Errorf("Excerpt split a character: %q", got[290:])
	}
}

// Errors and events quote URLs with their secrets redacted; the fields of
// the error types keep the URL as it was, for programs.
func TestErrorsRedactURLs(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&transport.HTTPError{Method: "POST", URL: "http://user:pw@h/mcp?token=SECRET&x=1", Status: 500, Body: "see http://h/?key=SECRET"},
		&transport.UnauthorizedError{Method: "POST", URL: "http://user:pw@h/mcp?token=SECRET&x=1", Status: 401, Challenge: `Bearer resource_metadata="http://h/prm?sig=SECRET"`},
		&transport.RedirectError{Method: "POST", From: "http://user:pw@h/mcp?token=SECRET&x=1", To: "http://h2/?code=SECRET", Status: 307, Reason: "no"},
	} {
		if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, ":pw@") || !strings.Contains(msg, "x=1") {
			t.Errorf("%T: %s", err, msg)
		}
	}

	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(ts.Close)
	secretURL := strings.Replace(ts.URL, "http://", "http://user:hunter2pw@", 1) + "/mcp?token=SECRET-TOKEN&x=1"
	rec := newRecorder()
	_, _, err := dial(t, transport.HTTPOptions{URL: secretURL, Mode: transport.ModeStreamable}, rec)
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.URL != secretURL {
		t.Fatalf("err = %v", err)
	}
	all := err.Error() + "\n" + rec.eventText(transport.EventHTTP) + rec.eventText(transport.EventNote)
	if strings.Contains(all, "SECRET") || strings.Contains(all, "hunter2pw") || !strings.Contains(all, "x=1") {
		t.Errorf("secrets shown:\n%s", all)
	}

	// A server that cannot be reached: the error from the HTTP client
	// quotes the URL too.
	dead := "http://user:hunter2pw@127.0.0.1:1/mcp?token=SECRET-TOKEN"
	_, _, err = dial(t, transport.HTTPOptions{URL: dead, Mode: transport.ModeStreamable}, nil)
	if !errors.Is(err, transport.ErrConnect) || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "hunter2pw") {
		t.Errorf("err = %v", err)
	}
}

// A status without a standard text (a server's 600, 299 or 499) is shown
// as its number: the message read "HTTP 600 : body".
func TestHTTPErrorUnknownStatus(t *testing.T) {
	e := &transport.HTTPError{Method: "POST", URL: "http://h/mcp", Status: 600, Body: "weird"}
	if got, want := e.Error(), "POST http://h/mcp: HTTP 600: weird"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.Body = ""
	if got, want := e.Error(), "POST http://h/mcp: HTTP 600"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// The token after Bearer or Basic in free text is redacted; a
// WWW-Authenticate challenge's parameters are not tokens, and stay as
// they are (a trace of an authorization showed Bearer [redacted]"…").
func TestRedactAuthTokens(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Authorization: Bearer at-SECRET.x_y~z+/==", "Authorization: Bearer [redacted]"},
		{`{"authorization":"Bearer abcd=="}`, `{"authorization":"Bearer [redacted]"}`},
		{"basic dXNlcjpwYXNz, then bearer eyJhbGciOi.eyJzdWIi.sig", "basic [redacted], then bearer [redacted]"},
		{"Bearer error=x", "Bearer [redacted]"},
		{"Bearer scope=", "Bearer [redacted]"},
		{`WWW-Authenticate: Bearer resource_metadata="http://h/prm", scope="a b"`, `WWW-Authenticate: Bearer resource_metadata="http://h/prm", scope="a b"`},
		{`Bearer error="insufficient_scope", scope="mcp:call"; DPoP algs="ES256"`, `Bearer error="insufficient_scope", scope="mcp:call"; DPoP algs="ES256"`},
		{`Bearer realm="x" and Bearer tok-1234`, `Bearer realm="x" and Bearer [redacted]`},
		{"Bearer abc", "Bearer abc"},
	} {
		if got := transport.RedactAuthTokens(c.in); got != c.want {
			t.Errorf("RedactAuthTokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
