package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func elicitor(t *testing.T, policy, input string) (*Elicitor, *bytes.Buffer) {
	t.Helper()
	p, err := ParseElicitPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e, err := NewElicitor(p, NewTerminalPerson(NewPrompter(strings.NewReader(input), &out, true), nil))
	if err != nil {
		t.Fatal(err)
	}
	(&ClientFeatures{Elicitor: e}).Capabilities() // declares form and url
	return e, &out
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
	e, _ := elicitor(t, "accept-defaults", "")
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
		e, _ := elicitor(t, policy, "")
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
	e, _ := elicitor(t, "file:"+good, "")
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
		e, _ := elicitor(t, "file:"+write(name, data), "")
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

	if _, err := NewElicitor(ElicitPolicy{Mode: PolicyFile, File: write("arr.json", `[1]`)}, nil); err == nil {
		t.Error("a file that is not a JSON object must be refused up front")
	}
	if _, err := NewElicitor(ElicitPolicy{Mode: PolicyFile, File: dir + "/missing.json"}, nil); err == nil {
		t.Error("a missing file must be refused up front")
	}
}

// A form with every kind of field, answered field by field through injected
// input, including wrong answers that must be asked again.
const richSchema = `{"type":"object","properties":{
 "name":{"type":"string","title":"Name","description":"Your name","minLength":2},
 "email":{"type":"string","format":"email"},
 "age":{"type":"integer","minimum":1,"maximum":150,"default":42},
 "ratio":{"type":"number"},
 "agree":{"type":"boolean","description":"Agree to the terms"},
 "hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Wonder Woman"}]},
 "fish":{"type":"array","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"},{"const":"fish-3","title":"Trout"}]}},
 "pet":{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"],"default":"pet-2"},
 "nick":{"type":"string","default":"ace"}},
 "required":["name","email","agree","hero","fish"]}`

func TestPromptFormFieldByField(t *testing.T) {
	input := strings.Join([]string{
		"",                // [a]nswer
		"A",               // name: too short
		"Ada",             // name
		"nope",            // email: bad format
		"ada@example.com", // email
		"200",             // age: above maximum
		"x",               // age: not a number
		"",                // age: keep default 42
		"-",               // ratio: leave out
		"maybe",           // agree: not y/n
		"y",               // agree
		"3",               // hero: no such choice
		"Wonder Woman",    // hero by title
		"",                // fish: required, no default
		"1,2,3",           // fish: too many
		"1, salmon",       // fish by number and title
		"1",               // pet: Cats
		"-",               // nick: leave out despite the default
		"s",               // send
	}, "\n") + "\n"
	e, out := elicitor(t, "prompt", input)
	raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"form","message":"Tell us about you","requestedSchema":`+richSchema+`}`))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := `{"action":"accept","content":{"name":"Ada","email":"ada@example.com","age":42,"agree":true,"hero":"hero-2","fish":["fish-1","fish-2"],"pet":"pet-1"}}`
	if string(raw) != want {
		t.Fatalf("answer\n got %s\nwant %s\nconversation:\n%s", raw, want, out)
	}
	text := out.String()
	for _, s := range []string{
		"Tell us about you",
		"Wonder Woman  [hero-2]",
		"Cats  [pet-1]",
		"[42]",
		"this field is required",
		"expected a whole number",
		"answer y or n",
		"is not one of the choices",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("conversation lacks %q:\n%s", s, text)
		}
	}
	if n := strings.Count(text, "✗"); n != 8 {
		t.Errorf("want 8 re-asked answers, got %d:\n%s", n, text)
	}
}

func TestPromptFormDeclineAndEOF(t *testing.T) {
	params := json.RawMessage(`{"message":"m","requestedSchema":` + sep1034Schema + `}`)
	e, _ := elicitor(t, "prompt", "d\n")
	raw, err := e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := decodeAnswer(t, raw); a != "decline" {
		t.Errorf("d: got %s", raw)
	}
	// End of input in the middle of the form: the person went away.
	e, _ = elicitor(t, "prompt", "a\nBob\n")
	raw, err = e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := decodeAnswer(t, raw); a != "cancel" {
		t.Errorf("EOF: got %s", raw)
	}
}

func TestPromptFormReview(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
	// Answer 1, edit, answer 2, send.
	e, out := elicitor(t, "prompt", "\n1\ne\n2\n\n")
	raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+schema+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{"n":2}}`; string(raw) != want {
		t.Errorf("got %s want %s\n%s", raw, want, out)
	}
}

func TestPromptCancelledContext(t *testing.T) {
	pr, _ := ioPipe()
	e, err := NewElicitor(ElicitPolicy{Mode: PolicyPrompt}, NewTerminalPerson(NewPrompter(pr, &bytes.Buffer{}, true), nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.Handle(ctx, "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+sep1034Schema+`}`))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a prompt waiting for input did not end when its context was cancelled")
	}
}

func TestURLMode(t *testing.T) {
	params := json.RawMessage(`{"mode":"url","elicitationId":"e-1","url":"https://example.com/connect?x=1","message":"Connect your account"}`)

	var opened []string
	e, out := elicitor(t, "prompt", "y\n")
	e.Person.(*TerminalPerson).OpenURL = func(u string) error { opened = append(opened, u); return nil }
	raw, err := e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if a, c := decodeAnswer(t, raw); a != "accept" || c != nil {
		t.Errorf("consent: got %s", raw)
	}
	if len(opened) != 1 || opened[0] != "https://example.com/connect?x=1" {
		t.Errorf("opened %q", opened)
	}
	for _, s := range []string{"Connect your account", "URL:  https://example.com/connect?x=1", "Host: example.com"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("prompt lacks %q:\n%s", s, out)
		}
	}
	// notifications/elicitation/complete: known once, then ignored.
	if id, u, known := e.Complete(json.RawMessage(`{"elicitationId":"e-1"}`)); !known || id != "e-1" || u == "" {
		t.Errorf("complete e-1: %q %q %v", id, u, known)
	}
	if _, _, known := e.Complete(json.RawMessage(`{"elicitationId":"e-1"}`)); known {
		t.Error("a second completion of e-1 must be ignored")
	}

	// No consent: never opened.
	for input, want := range map[string]string{"n\n": "decline", "c\n": "cancel", "": "cancel"} {
		opened = nil
		e, _ := elicitor(t, "prompt", input)
		e.Person.(*TerminalPerson).OpenURL = func(u string) error { opened = append(opened, u); return nil }
		raw, err := e.Handle(testCtx(t), "elicitation/create", params)
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := decodeAnswer(t, raw); a != want || len(opened) != 0 {
			t.Errorf("input %q: got %s, opened %q", input, raw, opened)
		}
	}

	// Policies never open the browser.
	e, _ = elicitor(t, "accept-defaults", "")
	e.Person.(*TerminalPerson).OpenURL = func(u string) error { t.Error("a policy opened the browser"); return nil }
	var notes []string
	e.Note = func(s string) { notes = append(notes, s) }
	raw, _ = e.Handle(testCtx(t), "elicitation/create", params)
	if a, _ := decodeAnswer(t, raw); a != "accept" || len(notes) != 1 || !strings.Contains(notes[0], "https://example.com/connect?x=1") {
		t.Errorf("accept-defaults on URL: %s, notes %q", raw, notes)
	}

	// Only http(s) is ever opened.
	e, out = elicitor(t, "prompt", "y\n")
	e.Person.(*TerminalPerson).OpenURL = func(u string) error { t.Error("opened a non-web URL"); return nil }
	raw, _ = e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"url","elicitationId":"e-2","url":"file:///etc/passwd","message":"m"}`))
	if a, _ := decodeAnswer(t, raw); a != "decline" {
		t.Errorf("file URL: %s\n%s", raw, out)
	}

	// Punycode hosts are pointed out.
	e, out = elicitor(t, "prompt", "n\n")
	_, _ = e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"url","elicitationId":"e-3","url":"https://xn--pple-43d.com/","message":"m"}`))
	if !strings.Contains(out.String(), "Punycode") {
		t.Errorf("no Punycode warning:\n%s", out)
	}
}

func TestModesNotDeclared(t *testing.T) {
	e, _ := elicitor(t, "decline", "")
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
	if _, err := NewElicitor(ElicitPolicy{Mode: PolicyPrompt}, nil); err == nil {
		t.Error("prompt without a person must be refused")
	}
}

func TestURLElicitationRequired(t *testing.T) {
	err := fmtErr(&jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "needs auth",
		Data: json.RawMessage(`{"elicitations":[{"mode":"url","elicitationId":"p-1","url":"https://example.com/auth","message":"Authorize first"}]}`)})
	if got := URLElicitationsRequired(err); len(got) != 1 {
		t.Fatalf("elicitations: %v", got)
	}
	if URLElicitationsRequired(fmtErr(&jsonrpc.Error{Code: jsonrpc.CodeInternalError})) != nil {
		t.Error("other errors carry no elicitations")
	}

	var opened []string
	e, out := elicitor(t, "prompt", "y\ny\n") // consent, then retry
	e.Person.(*TerminalPerson).OpenURL = func(u string) error { opened = append(opened, u); return nil }
	if !e.Required(testCtx(t), err) {
		t.Errorf("want a retry\n%s", out)
	}
	if len(opened) != 1 || opened[0] != "https://example.com/auth" {
		t.Errorf("opened %q", opened)
	}
	if _, _, known := e.Complete(json.RawMessage(`{"elicitationId":"p-1"}`)); !known {
		t.Error("the accepted elicitation must be awaited for completion")
	}

	e, _ = elicitor(t, "prompt", "n\n") // no consent: no retry
	if e.Required(testCtx(t), err) {
		t.Error("declined: no retry")
	}
	e, _ = elicitor(t, "accept-defaults", "")
	if e.Required(testCtx(t), err) {
		t.Error("a policy cannot complete a browser flow: no retry")
	}
}

func fmtErr(e *jsonrpc.Error) error { return errors.Join(errors.New("tools/call"), e) }

// In the 2026-07-28 era URL elicitations carry no elicitationId, and mcpx
// waits for the person to finish before the request is retried.
func TestURLModeModern(t *testing.T) {
	params := json.RawMessage(`{"mode":"url","url":"https://example.com/pay","message":"Pay"}`)
	// Without the modern capabilities the id is required.
	e, _ := elicitor(t, "prompt", "y\n\n")
	if _, err := e.Handle(testCtx(t), "elicitation/create", params); err == nil {
		t.Error("handshake era: a URL elicitation without elicitationId was accepted")
	}
	e, out := elicitor(t, "prompt", "y\n\n")
	(&ClientFeatures{Elicitor: e}).ModernCapabilities()
	var opened []string
	e.Person.(*TerminalPerson).OpenURL = func(u string) error { opened = append(opened, u); return nil }
	raw, err := e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := decodeAnswer(t, raw); a != "accept" || len(opened) != 1 {
		t.Errorf("got %s, opened %q", raw, opened)
	}
	if !strings.Contains(out.String(), "Press Enter when you have finished in the browser") {
		t.Errorf("no wait for the person:\n%s", out)
	}
}
