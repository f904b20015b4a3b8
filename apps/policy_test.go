package apps

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Without declarations the view gets exactly the spec's restrictive
// default, with the directives the sandbox rules add.
func TestPolicyDefault(t *testing.T) {
	p := buildPolicy(CSP{}, Permissions{}, []string{"http://127.0.0.1:1"})
	want := "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; " +
		"object-src 'none'; base-uri 'self'; form-action 'none'; frame-ancestors http://127.0.0.1:1"
	if p.Header != want {
		t.Errorf("default policy\n got %s\nwant %s", p.Header, want)
	}
	if p.External() || len(p.Refused) > 0 || p.Permissions.Allow() != "" {
		t.Errorf("policy %+v", p)
	}
}

func TestPolicyDeclared(t *testing.T) {
	p := buildPolicy(CSP{
		ConnectDomains:  []string{"https://api.example.com", "wss://rt.example.com:8443", "*", "https:", "'unsafe-eval'", "https://a.example.com; script-src *"},
		ResourceDomains: []string{"https://*.cdn.example.com", "cdn.example.org", "*.com", "data:", "https://x.example.com/path?q"},
		FrameDomains:    []string{"https://www.youtube.com"},
		BaseURIDomains:  []string{"https://base.example.com", "http://[::1]:80", "http://[zz]", "https://a.example.com:+80", "https://a.example.com:", "http://[::1]:"},
	}, Permissions{Camera: true, ClipboardWrite: true}, []string{"http://127.0.0.1:1"})
	for _, d := range []string{
		"script-src 'self' 'unsafe-inline' https://*.cdn.example.com cdn.example.org;",
		"style-src 'self' 'unsafe-inline' https://*.cdn.example.com cdn.example.org;",
		"img-src 'self' data: https://*.cdn.example.com cdn.example.org;",
		"media-src 'self' data: https://*.cdn.example.com cdn.example.org;",
		"font-src https://*.cdn.example.com cdn.example.org;",
		"connect-src https://api.example.com wss://rt.example.com:8443;",
		"frame-src https://www.youtube.com;",
		"object-src 'none';",
		"base-uri https://base.example.com http://[::1]:80;",
	} {
		if !strings.Contains(p.Header, d) {
			t.Errorf("policy lacks %q:\n%s", d, p.Header)
		}
	}
	if strings.Contains(p.Header, "unsafe-eval") || strings.Contains(p.Header, " * ") || strings.Contains(p.Header, "https:;") {
		t.Errorf("a refused source got in:\n%s", p.Header)
	}
	if len(p.Refused) != 11 {
		t.Errorf("refused %d entries, want 11:\n%s", len(p.Refused), strings.Join(p.Refused, "\n"))
	}
	if got := p.Permissions.Allow(); got != "camera; clipboard-write" {
		t.Errorf("allow %q", got)
	}
	if b, _ := json.Marshal(p.Permissions); string(b) != `{"camera":{},"clipboardWrite":{}}` {
		t.Errorf("permissions JSON %s", b)
	}
	if !p.External() {
		t.Error("External is false")
	}
}

func TestParseToolUI(t *testing.T) {
	for _, tc := range []struct {
		tool     string
		uri      string
		model    bool
		app      bool
		wantErr  bool
		hasView  bool
		appOnly  bool
		visibleN int
	}{
		{tool: `{"name":"a"}`, model: true, app: true},
		{tool: `{"name":"a","_meta":{"ui":{"resourceUri":"ui://x"}}}`, uri: "ui://x", model: true, app: true, hasView: true},
		{tool: `{"name":"a","_meta":{"ui/resourceUri":"ui://legacy"}}`, uri: "ui://legacy", model: true, app: true, hasView: true},
		{tool: `{"name":"a","_meta":{"ui":{"visibility":["app"]}}}`, app: true, appOnly: true},
		{tool: `{"name":"a","_meta":{"ui":{"visibility":["model"]}}}`, model: true},
		{tool: `{"name":"a","_meta":{"ui":{"visibility":[]}}}`, appOnly: true},
		{tool: `{"name":"a","_meta":{"ui":{"visibility":["everyone"]}}}`, wantErr: true},
		{tool: `{"name":"a","_meta":{"ui":{"resourceUri":"https://x"}}}`, wantErr: true},
		{tool: `{"name":"a","_meta":{"ui":{"resourceUri":5}}}`, wantErr: true},
	} {
		u, err := ParseToolUI(json.RawMessage(tc.tool))
		if tc.wantErr {
			if !errors.Is(err, ErrBadMeta) {
				t.Errorf("%s: err %v, want ErrBadMeta", tc.tool, err)
			}
			continue
		}
		if err != nil || u.ResourceURI != tc.uri || u.VisibleTo(VisibleToModel) != tc.model || u.VisibleTo(VisibleToApp) != tc.app ||
			u.HasView() != tc.hasView || u.AppOnly() != tc.appOnly {
			t.Errorf("%s: %+v %v", tc.tool, u, err)
		}
	}
}

func TestParseResource(t *testing.T) {
	html := `<!DOCTYPE html><html><body>x</body></html>`
	content := func(extra string) json.RawMessage {
		return json.RawMessage(`{"contents":[{"uri":"ui://a","mimeType":"text/html;profile=mcp-app",` + extra + `}]}`)
	}
	r, err := parseResource("ui://a", content(`"text":`+string(mustJSON(html))+`,"_meta":{"ui":{"csp":{"connectDomains":["https://x.example"]},"permissions":{"geolocation":{}},"prefersBorder":false}}`))
	if err != nil || r.html != html || len(r.csp.ConnectDomains) != 1 || !r.permissions.Geolocation || r.prefersBorder == nil || *r.prefersBorder {
		t.Fatalf("%+v %v", r, err)
	}
	if len(r.refusedPermissions) != 0 {
		t.Errorf("refused permissions %q", r.refusedPermissions)
	}
	// Permissions the spec does not define, or not given as objects,
	// grant nothing and are reported.
	r, err = parseResource("ui://a", content(`"text":`+string(mustJSON(html))+`,"_meta":{"ui":{"permissions":{"camera":{},"microphone":true,"usb":{},"geolocation":null}}}`))
	want := []string{
		`permissions member "geolocation": its value null is not an object ({} asks for it)`,
		`permissions member "microphone": its value true is not an object ({} asks for it)`,
		`permissions member "usb": not a permission of the spec (camera, microphone, geolocation, clipboardWrite)`,
	}
	if err != nil || r.permissions != (Permissions{Camera: true}) || !slices.Equal(r.refusedPermissions, want) {
		t.Errorf("odd permissions: %+v %v, want refused %q", r, err, want)
	}
	blob := base64.StdEncoding.EncodeToString([]byte(html))
	if r, err := parseResource("ui://a", content(`"blob":"`+blob+`"`)); err != nil || r.html != html {
		t.Fatalf("blob: %+v %v", r, err)
	}
	// Spaced and cased MIME types are the same type.
	spaced := json.RawMessage(`{"contents":[{"uri":"ui://a","mimeType":"Text/HTML; profile=mcp-app","text":"<html></html>"}]}`)
	if _, err := parseResource("ui://a", spaced); err != nil {
		t.Errorf("spaced MIME type: %v", err)
	}
	// Of several contents, the one with the URI.
	two := json.RawMessage(`{"contents":[{"uri":"ui://b","mimeType":"text/plain","text":"no"},{"uri":"ui://a","mimeType":"text/html;profile=mcp-app","text":"<html></html>"}]}`)
	if _, err := parseResource("ui://a", two); err != nil {
		t.Errorf("two contents: %v", err)
	}
	for _, tc := range []struct {
		name   string
		result string
		want   error
	}{
		{"no contents", `{"contents":[]}`, ErrResourceRead},
		{"not a result", `[1]`, ErrResourceRead},
		{"text/html", `{"contents":[{"uri":"ui://a","mimeType":"text/html","text":"<html></html>"}]}`, ErrMIMEType},
		{"other profile", `{"contents":[{"uri":"ui://a","mimeType":"text/html;profile=other","text":"<html></html>"}]}`, ErrMIMEType},
		{"no text", `{"contents":[{"uri":"ui://a","mimeType":"text/html;profile=mcp-app"}]}`, ErrInvalidHTML},
		{"bad blob", `{"contents":[{"uri":"ui://a","mimeType":"text/html;profile=mcp-app","blob":"%%%"}]}`, ErrInvalidHTML},
		{"JSON text", `{"contents":[{"uri":"ui://a","mimeType":"text/html;profile=mcp-app","text":"{\"a\":1}"}]}`, ErrInvalidHTML},
		{"NUL", `{"contents":[{"uri":"ui://a","mimeType":"text/html;profile=mcp-app","text":"<html>\u0000</html>"}]}`, ErrInvalidHTML},
		{"bad csp", `{"contents":[{"uri":"ui://a","mimeType":"text/html;profile=mcp-app","text":"<html></html>","_meta":{"ui":{"csp":[]}}}]}`, ErrBadMeta},
	} {
		if _, err := parseResource("ui://a", json.RawMessage(tc.result)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestCheckHTML(t *testing.T) {
	for _, ok := range []string{
		"<!DOCTYPE html><html></html>", "<!doctype html>", "\uFEFF  <!-- c --> <html lang=en>", "<html>", "\n<HTML>\n",
	} {
		if err := checkHTML([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "hello", "<htmlx>", "<!-- never closed", "\xff\xfe<html>", "<p>fragment</p>"} {
		if err := checkHTML([]byte(bad)); err == nil {
			t.Errorf("%q admitted", bad)
		}
	}
}

func TestDecodeMessage(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		kind string // request, notification, response, or "" for malformed
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "request"},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`, "request"},
		{`{"jsonrpc":"2.0","method":"ui/notifications/initialized"}`, "notification"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "response"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`, "response"},
		{`{"jsonrpc":"2.0","ID":1,"method":"ping"}`, "notification"}, // "ID" is not "id"
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, ""},
		{`{"id":1,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","method":""}`, ""},
		{`{"jsonrpc":"2.0","method":"x","params":[1]}`, ""},
		{`{"jsonrpc":"2.0","method":"x","result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":1}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"error":"bad"}`, ""},
		{`{"jsonrpc":"2.0","result":{}}`, ""},
		{`[{"jsonrpc":"2.0","method":"x"}]`, ""},
		{`"text"`, ""},
		{`{"jsonrpc":"2.0",`, ""},
	} {
		m, err := decodeMessage([]byte(tc.raw))
		kind := ""
		switch {
		case err != nil:
			if !errors.Is(err, errMalformed) {
				t.Errorf("%s: error %v does not wrap errMalformed", tc.raw, err)
			}
		case m.isRequest():
			kind = "request"
		case m.isNotification():
			kind = "notification"
		case m.isResponse():
			kind = "response"
		}
		if kind != tc.kind {
			t.Errorf("%s: %q (%v), want %q", tc.raw, kind, err, tc.kind)
		}
	}
	// The number 1 and the string "1" are different ids.
	if idKey(json.RawMessage(`1`)) == idKey(json.RawMessage(`"1"`)) {
		t.Error("ids 1 and \"1\" share a key")
	}
	b, _ := encodeNotification("x", map[string]string{"html": "<b>&</b>"})
	if string(b) != `{"jsonrpc":"2.0","method":"x","params":{"html":"<b>&</b>"}}` {
		t.Errorf("encoded %s", b)
	}
}

// A clipped text stays valid UTF-8: the cut falls between characters.
func TestClipString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"}, {"abcd", 3, "abc…"}, {"aé", 2, "a…"}, {"é", 1, "…"}, {"a😀b", 4, "a…"}, {"a😀b", 5, "a😀…"},
	} {
		if got := clipString(tc.in, tc.max); got != tc.want || !utf8.ValidString(got) {
			t.Errorf("clipString(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
