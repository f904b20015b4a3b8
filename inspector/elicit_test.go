package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// elicitor returns an elicitor for policy, declaring form and URL mode;
// person answers the prompt policy.
func elicitor(t *testing.T, policy string, person Person) *Elicitor {
	t.Helper()
	p, err := ParseElicitPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewElicitor(context.Background(), p, person)
	if err != nil {
		t.Fatal(err)
	}
	(&ClientFeatures{Elicitor: e}).Capabilities() // declares form and url
	return e
}

func decodeAnswer(t *testing.T, raw json.RawMessage) (string, map[string]any) {
	t.Helper()
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	return r.Action, r.Content
}

// The schema of the conformance scenario elicitation-sep1034-client-defaults
// (@modelcontextprotocol/conformance 0.1.16): every field optional, each with
// a default that the client must fill in.
const sep1034Schema = `{"type":"object","properties":{
 "name":{"type":"string","description":"User name","default":"John Doe"},
 "age":{"type":"integer","description":"User age","default":30},
 "score":{"type":"number","description":"User score","default":95.5},
 "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
 "verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`

// TestAcceptDefaultsSEP1034 checks what the conformance scenario checks:
// accepted, with each default applied and of the right JSON type, and the
// applyDefaults capability declared.
func TestAcceptDefaultsSEP1034(t *testing.T) {
	e := elicitor(t, "accept-defaults", nil)
	params := `{"message":"Test client default value handling - please accept with defaults","requestedSchema":` + sep1034Schema + `}`
	raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}}`; string(raw) != want {
		t.Fatalf("answer\n got %s\nwant %s", raw, want)
	}
	caps := (&ClientFeatures{Elicitor: e}).Capabilities()
	if !strings.Contains(string(caps), `"elicitation":{"form":{"applyDefaults":true},"url":{}}`) {
		t.Errorf("capabilities %s lack elicitation.form.applyDefaults", caps)
	}
}

func TestDeclineCancel(t *testing.T) {
	for _, policy := range []string{"decline", "cancel"} {
		e := elicitor(t, policy, nil)
		raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+sep1034Schema+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if action, content := decodeAnswer(t, raw); action != policy || content != nil {
			t.Errorf("%s: got %s", policy, raw)
		}
	}
}

func TestFilePolicyValidatesAgainstSchema(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := dir + "/" + name
		if err := writeFile(p, data); err != nil {
			t.Fatal(err)
		}
		return p
	}
	schema := `{"type":"object","properties":{"email":{"type":"string","format":"email"},"age":{"type":"integer","minimum":18}},"required":["email"]}`
	params := json.RawMessage(`{"message":"m","requestedSchema":` + schema + `}`)

	good := write("good.json", `{"email":"ada@example.com","age":36}`)
	e := elicitor(t, "file:"+good, nil)
	raw, err := e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{"email":"ada@example.com","age":36}}`; string(raw) != want {
		t.Errorf("got %s, want %s", raw, want)
	}

	for name, data := range map[string]string{
		"bad-format.json":   `{"email":"not an email"}`,
		"bad-minimum.json":  `{"email":"a@b.co","age":3}`,
		"bad-required.json": `{"age":40}`,
	} {
		e := elicitor(t, "file:"+write(name, data), nil)
		var notes []string
		e.Note = func(s string) { notes = append(notes, s) }
		_, err := e.Handle(testCtx(t), "elicitation/create", params)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "does not match the requested schema") {
			t.Errorf("%s: want a schema mismatch error, got %v", name, err)
		}
		if len(notes) != 1 {
			t.Errorf("%s: want one note for the person, got %q", name, notes)
		}
	}

	if _, err := NewElicitor(context.Background(), ElicitPolicy{Mode: PolicyFile, File: write("arr.json", `[1]`)}, nil); err == nil {
		t.Error("a file that is not a JSON object must be refused up front")
	}
	if _, err := NewElicitor(context.Background(), ElicitPolicy{Mode: PolicyFile, File: dir + "/missing.json"}, nil); err == nil {
		t.Error("a missing file must be refused up front")
	}
}

func TestModesNotDeclared(t *testing.T) {
	e := elicitor(t, "decline", nil)
	(&ClientFeatures{Version: "2025-06-18", Elicitor: e}).Capabilities()
	_, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"url","elicitationId":"e","url":"https://example.com","message":"m"}`))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("url mode with a 2025-06-18 capability: want -32602, got %v", err)
	}
	_, err = e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"telepathy","message":"m"}`))
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown mode: want -32602, got %v", err)
	}
}

func TestParseElicitPolicy(t *testing.T) {
	for _, ok := range []string{"prompt", "decline", "cancel", "accept-defaults", "file:x.json"} {
		if _, err := ParseElicitPolicy(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "accept", "file:", "yes"} {
		if _, err := ParseElicitPolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := NewElicitor(context.Background(), ElicitPolicy{Mode: PolicyPrompt}, nil); err == nil {
		t.Error("prompt without a person must be refused")
	}
}

func fmtErr(e *jsonrpc.Error) error { return errors.Join(errors.New("tools/call"), e) }

// accept-defaults sends only defaults their own field's schema accepts:
// a server's default of the wrong type or outside an enum or a range is
// left out and reported, not sent as if the person had chosen it.
func TestAcceptDefaultsLeavesOutDefaultsTheSchemaRefuses(t *testing.T) {
	e := elicitor(t, "accept-defaults", nil)
	var notes []string
	e.Note = func(s string) { notes = append(notes, s) }
	schema := `{"type":"object","properties":{
	 "n":{"type":"integer","minimum":5,"default":"abc"},
	 "small":{"type":"integer","minimum":5,"default":1},
	 "pick":{"type":"string","enum":["a","b"],"default":"zzz"},
	 "ok":{"type":"string","default":"fine"}}}`
	raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+schema+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{"ok":"fine"}}`; string(raw) != want {
		t.Errorf("answer %s, want %s", raw, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "n, small, pick") {
		t.Errorf("notes %q: want one naming n, small, pick", notes)
	}
}

// A request that does not decode is refused with what is wrong in JSON's
// terms, not in mcpx's Go types.
func TestMalformedClientRequestsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		handle func(context.Context, string, json.RawMessage) (json.RawMessage, error)
		method string
		params string
		want   string
	}{
		{sampler(t, "decline", nil).Handle, "sampling/createMessage", `{"messages":"hi","maxTokens":1}`, "sampling/createMessage params: its messages is a string, not an array"},
		{sampler(t, "decline", nil).Handle, "sampling/createMessage", `{"messages":[],"maxTokens":1e30}`, "sampling/createMessage params: its maxTokens is a number, not an integer"},
		{elicitor(t, "decline", nil).Handle, "elicitation/create", `{"message":7,"requestedSchema":{}}`, "elicitation/create params: its message is a number, not a string"},
	} {
		_, err := tc.handle(testCtx(t), tc.method, json.RawMessage(tc.params))
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || rpcErr.Message != tc.want {
			t.Errorf("%s: got %v, want -32602 %q", tc.params, err, tc.want)
		}
	}
}

// URLs mcpx does not open, and why: anything but http and https, no host,
// and a host with a character no host name has (a bidirectional override
// that makes it read as another). A policy that accepts URL elicitations
// declines those too, and reports the others with their warnings.
func TestURLsNotOpened(t *testing.T) {
	for raw, want := range map[string]string{
		"https://example.com/pay":          "",
		"http://127.0.0.1:8080/x":          "",
		"https://[::1]:8443/x":             "",
		"https://bücher.example/":          "",
		"javascript:alert(1)":              "mcpx opens only http and https URLs; this one is javascript:",
		"file:///etc/passwd":               "mcpx opens only http and https URLs; this one is file:",
		"https:///nohost":                  "the URL names no host",
		"https://good.com\u202emoc.live/":  "U+202E",
		"https://exa\u200bmple.com/":       "U+200B",
		"https://google.com@evil.example/": "",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got := NotOpenable(u)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("NotOpenable(%q) = %q, want %q", raw, got, want)
		}
	}

	for _, policy := range []string{"accept-defaults", "file:" + writeTemp(t, `{}`)} {
		e := elicitor(t, policy, nil)
		var notes []string
		e.Note = func(s string) { notes = append(notes, s) }
		for _, tc := range []struct{ url, action, note string }{
			{"javascript:alert(1)", ActionDecline, "declined a URL elicitation: javascript:alert(1) (mcpx opens only http and https"},
			{"https://google.com@evil.example/x", ActionAccept, "host evil.example); warning: the URL contains a user name before the host"},
		} {
			notes = nil
			raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"url","elicitationId":"e","message":"m","url":`+strconvQuote(tc.url)+`}`))
			if err != nil {
				t.Fatal(err)
			}
			if action, _ := decodeAnswer(t, raw); action != tc.action {
				t.Errorf("%s, %s: answer %s, want %s", policy, tc.url, raw, tc.action)
			}
			if len(notes) != 1 || !strings.Contains(notes[0], tc.note) {
				t.Errorf("%s, %s: notes %q, want one with %q", policy, tc.url, notes, tc.note)
			}
		}
	}
}

func writeTemp(t *testing.T, data string) string {
	t.Helper()
	p := t.TempDir() + "/content.json"
	if err := writeFile(p, data); err != nil {
		t.Fatal(err)
	}
	return p
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The URL elicitations a policy accepted are remembered for their
// completion notifications up to maxPendingURL, the oldest forgotten
// first: a server cannot fill mcpx's memory with them.
func TestPendingURLElicitationsBounded(t *testing.T) {
	e := elicitor(t, "accept-defaults", nil)
	e.Note = func(string) {}
	for i := range maxPendingURL + 10 {
		id := strconv.Itoa(i)
		if _, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"url","elicitationId":"`+id+`","message":"m","url":"https://example.com/`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	e.mu.Lock()
	n := len(e.pending)
	e.mu.Unlock()
	if n != maxPendingURL {
		t.Errorf("%d URL elicitations remembered, want %d", n, maxPendingURL)
	}
	if _, _, known := e.Complete(json.RawMessage(`{"elicitationId":"0"}`)); known {
		t.Error("the oldest URL elicitation is still remembered")
	}
	last := strconv.Itoa(maxPendingURL + 9)
	if _, u, known := e.Complete(json.RawMessage(`{"elicitationId":"` + last + `"}`)); !known || u != "https://example.com/"+last {
		t.Errorf("the latest URL elicitation: %q %v", u, known)
	}
	if _, _, known := e.Complete(json.RawMessage(`{"elicitationId":"` + last + `"}`)); known {
		t.Error("a URL elicitation completed twice")
	}
}

// A schema that requires a field it does not define cannot be answered
// so that it validates: accept-defaults says so rather than accept as if
// nothing were missing.
func TestRequiredFieldNotDefined(t *testing.T) {
	e := elicitor(t, "accept-defaults", nil)
	var notes []string
	e.Note = func(s string) { notes = append(notes, s) }
	schema := `{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a","ghost","ghost"]}`
	raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+schema+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{"a":"x"}}`; string(raw) != want {
		t.Errorf("answer %s, want %s", raw, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "the schema requires field(s) ghost, which are not among its properties") {
		t.Errorf("notes %q: want one naming ghost once", notes)
	}
}
