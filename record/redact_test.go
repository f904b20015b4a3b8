package record

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

func TestRedactFrame(t *testing.T) {
	t.Parallel()
	r, err := NewRedactor(RedactOptions{Paths: []string{"$.params.arguments.pin"}, Secrets: []string{"SECRET-TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	in := `{ "jsonrpc":"2.0","id":1, "result":{"Access_Token":"abc","nested":[{"refresh_token":"r","client_secret":{"x":1}}],"progressToken":5,"note":"uses SECRET-TOKEN here"}}`
	got := string(r.Frame([]byte(in)))
	want := `{ "jsonrpc":"2.0","id":1, "result":{"Access_Token":"[redacted]","nested":[{"refresh_token":"[redacted]","client_secret":"[redacted]"}],"progressToken":5,"note":"uses [redacted] here"}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = string(r.Frame([]byte(`{"params":{"arguments":{"pin":1234,"name":"x"}}}`)))
	if got != `{"params":{"arguments":{"pin":"[redacted]","name":"x"}}}` {
		t.Errorf("--redact path: %s", got)
	}
	// Frames without secrets are returned as they are.
	clean := `{"jsonrpc":"2.0" ,"id":2,"method":"tools/list"}`
	if got := string(r.Frame([]byte(clean))); got != clean {
		t.Errorf("a clean frame changed: %s", got)
	}
	// Not JSON: credential-looking text goes.
	if got := string(r.Frame([]byte("token dump: access_token=abc123&x=1 Bearer eyJhbGciOi"))); strings.Contains(got, "abc123") || strings.Contains(got, "eyJhbGciOi") {
		t.Errorf("non-JSON frame kept a secret: %s", got)
	}
}

func TestRedactDisabled(t *testing.T) {
	t.Parallel()
	r, _ := NewRedactor(RedactOptions{Disabled: true, Secrets: []string{"SECRET-TOKEN"}})
	in := `{"access_token":"SECRET-TOKEN"}`
	if got := string(r.Frame([]byte(in))); got != in {
		t.Errorf("--no-redact changed the frame: %s", got)
	}
	if r.Enabled() {
		t.Error("disabled redactor says it is enabled")
	}
	var nilR *Redactor
	if nilR.Text("Bearer abcdef") != "Bearer abcdef" || string(nilR.Frame([]byte("x"))) != "x" {
		t.Error("a nil redactor must redact nothing")
	}
}

func TestRedactTextAndURL(t *testing.T) {
	t.Parallel()
	r, _ := NewRedactor(RedactOptions{Secrets: []string{"hunter22"}})
	for in, want := range map[string]string{
		"Authorization: Bearer abc.def-ghi":           "Authorization: [redacted] [redacted]",
		"password=hunter22 and more":                  "password=[redacted] and more",
		`{"client_secret": "xyz", "ok": 1}`:           `{"client_secret": "[redacted]", "ok": 1}`,
		"POST /token (Cookie: [redacted])":            "POST /token (Cookie: [redacted])",
		"nothing to see":                              "nothing to see",
		"refresh_token=r1&access_token=a1&scope=read": "refresh_token=[redacted]&access_token=[redacted]&scope=read",
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	u := r.URL("https://user:pw@example.com/mcp?token=abc&x=1&api_key=k&code=c")
	for _, bad := range []string{"pw@", "token=abc", "api_key=k", "code=c"} {
		if strings.Contains(u, bad) {
			t.Errorf("URL kept %q: %s", bad, u)
		}
	}
	if !strings.Contains(u, "x=1") || !strings.Contains(u, "example.com/mcp") {
		t.Errorf("URL lost too much: %s", u)
	}
	m := r.Meta(&transport.Meta{URL: "http://h/mcp?access_token=zz", SessionID: "s"})
	if strings.Contains(m.URL, "zz") || m.SessionID != "s" {
		t.Errorf("Meta = %+v", m)
	}
}

func TestRedactBadPath(t *testing.T) {
	t.Parallel()
	if _, err := NewRedactor(RedactOptions{Paths: []string{"params.x"}}); err == nil {
		t.Error("a bad --redact path was accepted")
	}
}
