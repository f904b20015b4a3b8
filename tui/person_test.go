package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// The prompt policies of elicitation and sampling, asked of the person
// at the terminal: inspector's Elicitor and Sampler with a Person reading
// scripted input, the conversation written to a buffer.

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func elicitor(t *testing.T, policy, input string) (*inspector.Elicitor, *bytes.Buffer) {
	t.Helper()
	p, err := inspector.ParseElicitPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e, err := inspector.NewElicitor(context.Background(), p, NewPerson(NewPrompter(strings.NewReader(input), &out, true), nil))
	if err != nil {
		t.Fatal(err)
	}
	(&inspector.ClientFeatures{Elicitor: e}).Capabilities() // declares form and url
	return e, &out
}

// setOpenURL sets the browser of e's person.
func setOpenURL(e *inspector.Elicitor, open func(string) error) { e.Person.(*Person).OpenURL = open }

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

// The schema of the conformance scenario elicitation-sep1034-client-defaults.
const sep1034Schema = `{"type":"object","properties":{
 "name":{"type":"string","description":"User name","default":"John Doe"},
 "age":{"type":"integer","description":"User age","default":30},
 "score":{"type":"number","description":"User score","default":95.5},
 "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
 "verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`

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
	pr, _ := io.Pipe()
	e, err := inspector.NewElicitor(context.Background(), inspector.ElicitPolicy{Mode: inspector.PolicyPrompt}, NewPerson(NewPrompter(pr, &bytes.Buffer{}, true), nil))
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
	setOpenURL(e, func(u string) error { opened = append(opened, u); return nil })
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
		setOpenURL(e, func(u string) error { opened = append(opened, u); return nil })
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
	setOpenURL(e, func(u string) error { t.Error("a policy opened the browser"); return nil })
	var notes []string
	e.Note = func(s string) { notes = append(notes, s) }
	raw, _ = e.Handle(testCtx(t), "elicitation/create", params)
	if a, _ := decodeAnswer(t, raw); a != "accept" || len(notes) != 1 || !strings.Contains(notes[0], "https://example.com/connect?x=1") {
		t.Errorf("accept-defaults on URL: %s, notes %q", raw, notes)
	}

	// Only http(s) is ever opened.
	e, out = elicitor(t, "prompt", "y\n")
	setOpenURL(e, func(u string) error { t.Error("opened a non-web URL"); return nil })
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

func TestURLElicitationRequired(t *testing.T) {
	err := fmtErr(&jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "needs auth",
		Data: json.RawMessage(`{"elicitations":[{"mode":"url","elicitationId":"p-1","url":"https://example.com/auth","message":"Authorize first"}]}`)})
	if got := inspector.URLElicitationsRequired(err); len(got) != 1 {
		t.Fatalf("elicitations: %v", got)
	}
	if inspector.URLElicitationsRequired(fmtErr(&jsonrpc.Error{Code: jsonrpc.CodeInternalError})) != nil {
		t.Error("other errors carry no elicitations")
	}

	var opened []string
	e, out := elicitor(t, "prompt", "y\ny\n") // consent, then retry
	setOpenURL(e, func(u string) error { opened = append(opened, u); return nil })
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
	(&inspector.ClientFeatures{Elicitor: e}).ModernCapabilities()
	var opened []string
	setOpenURL(e, func(u string) error { opened = append(opened, u); return nil })
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

func fmtErr(e *jsonrpc.Error) error { return errors.Join(errors.New("tools/call"), e) }

func sampler(t *testing.T, policy, input string) (*inspector.Sampler, *bytes.Buffer) {
	t.Helper()
	p, err := inspector.ParseSamplingPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s, err := inspector.NewSampler(context.Background(), p, NewPerson(NewPrompter(strings.NewReader(input), &out, true), nil))
	if err != nil {
		t.Fatal(err)
	}
	(&inspector.ClientFeatures{Sampler: s}).Capabilities() // declares sampling.tools
	return s, &out
}

const samplingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],
 "modelPreferences":{"hints":[{"name":"claude-3-sonnet"}],"intelligencePriority":0.8,"speedPriority":0.5},
 "systemPrompt":"You are a helpful assistant.","maxTokens":100,"temperature":0.7}`

const toolParams = `{"messages":[{"role":"user","content":{"type":"text","text":"Weather in Paris?"}}],
 "tools":[{"name":"get_weather","description":"Get current weather","inputSchema":{"type":"object"}}],
 "toolChoice":{"mode":"auto"},"maxTokens":1000}`

func TestSamplingPrompt(t *testing.T) {
	s, out := sampler(t, "prompt", "The capital\nis Paris.\n\ns\n")
	s.Who = func() string { return "demo-server 1.0" }
	raw, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":{"text":"The capital\nis Paris.","type":"text"},"model":"mcpx-human","role":"assistant","stopReason":"endTurn"}`
	if string(raw) != want {
		t.Errorf("got %s\nwant %s", raw, want)
	}
	for _, s := range []string{
		"demo-server 1.0 asks for an LLM completion",
		"System prompt: You are a helpful assistant.",
		"Model preferences: hints claude-3-sonnet; speed 0.5; intelligence 0.8",
		"max tokens 100, temperature 0.7",
		"[user]\n  What is the capital of France?",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("prompt lacks %q:\n%s", s, out)
		}
	}

	// An empty reply declines.
	s, _ = sampler(t, "prompt", "\n")
	if _, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams)); err == nil {
		t.Error("an empty reply must decline")
	}
	if _, err := inspector.NewSampler(context.Background(), inspector.SamplingPolicy{Mode: inspector.PolicyPrompt}, nil); err == nil {
		t.Error("prompt without a person must be refused")
	}
}

// A view's sampling request (MCP Apps) is asked as the view's: the
// person sees which view asks, its name escaped, and that the reply goes
// to the view, not the server.
func TestSamplingFromView(t *testing.T) {
	s, out := sampler(t, "prompt", "Paris.\n\ns\n")
	s.View = true
	s.Who = func() string { return "the view of get\x1b[31m-time (server 1.0)" }
	raw, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(toolParams))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(raw), `"text":"Paris."`) {
		t.Errorf("got %s\n%s", raw, out)
	}
	if !containsAll(out.String(), `── the view of get\x1b[31m-time (server 1.0) asks for an LLM completion (sampling/createMessage) ──`,
		"Send it to the view? [s]end, [e]dit or [d]ecline: ") || strings.Contains(out.String(), "\x1b") || strings.Contains(out.String(), "server?") {
		t.Errorf("conversation:\n%s", out)
	}
}

// The reply is shown back before it is sent: the person sends it, edits
// it (types it again) or declines the request, which the server gets as
// the spec's refusal (-1). Enter alone does not send it (the reply ends
// with an empty line, so an Enter too many would), and input that ends
// before the review sends nothing.
func TestSamplingReview(t *testing.T) {
	s, out := sampler(t, "prompt", "Paris.\n\n\nx\ne\nLyon.\n\ns\n")
	raw, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(raw), `"text":"Lyon."`) {
		t.Errorf("got %s, want the edited reply\n%s", raw, out)
	}
	if !containsAll(out.String(), "Your reply:\n  Paris.\n", "Send it to the server? [s]end, [e]dit or [d]ecline: ",
		"Please answer s, e or d: ", "please answer send, edit, decline", "Type the reply again; it replaces the one above", "Your reply:\n  Lyon.\n") {
		t.Errorf("conversation:\n%s", out)
	}

	for name, tc := range map[string]struct{ input, said string }{
		"declined":               {"Paris.\n\nd\n", "(declined)"},
		"dismissed":              {"Paris.\n\n\x1b\n", "(dismissed)"},
		"input ended":            {"Paris.\n", "(end of input before the review: declined)"},
		"input ended at review":  {"Paris.\n\n", "(end of input before the review: declined)"},
		"declined after an edit": {"Paris.\n\ne\n\n", "(declined)"},
	} {
		s, out := sampler(t, "prompt", tc.input)
		_, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -1 || !strings.HasPrefix(rpcErr.Message, "User rejected sampling request") {
			t.Errorf("%s: want the rejection (-1), got %v\n%s", name, err, out)
		}
		if !strings.Contains(out.String(), "Send it to the server?") || !strings.Contains(out.String(), tc.said) {
			t.Errorf("%s: conversation:\n%s", name, out)
		}
	}
}

// Composing a reply and reviewing it are one conversation: a question
// waiting for its turn does not come between them.
func TestSamplingReviewKeepsTheTurn(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuffer
	p := NewPrompter(pr, &out, true)
	person := NewPerson(p, nil)
	ctx := testCtx(t)
	done := make(chan error, 1)
	go func() {
		_, err := person.Sample(ctx, &inspector.SamplingQuestion{Server: "s", Request: &inspector.SamplingRequest{}})
		done <- err
	}()
	waitFor(t, &out, "> ")
	next := make(chan struct{})
	go func() {
		end, err := p.Begin(ctx)
		if err == nil {
			close(next)
			end()
		}
	}()
	testwait.For(t, "the other conversation to wait", func() bool { return p.conv.waiters() == 1 })
	if _, err := pw.Write([]byte("hi\n\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, "Send it to the server?")
	select {
	case <-next:
		t.Fatal("another conversation began between the reply and its review")
	default:
	}
	if _, err := pw.Write([]byte("s\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sampling question did not end")
	}
	select {
	case <-next:
	case <-time.After(10 * time.Second):
		t.Fatal("the other conversation did not begin")
	}
}

func TestSamplingTools(t *testing.T) {
	s, out := sampler(t, "prompt", "/tool get_weather {\"city\":\"Paris\"}\n\ns\n")
	raw, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(toolParams))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"id":"mcpx_tool_1","input":{"city":"Paris"},"name":"get_weather","type":"tool_use"}],"model":"mcpx-human","role":"assistant","stopReason":"toolUse"}`
	if string(raw) != want {
		t.Errorf("got %s\nwant %s", raw, want)
	}
	if !strings.Contains(out.String(), "Tools (choice auto): get_weather (Get current weather)") {
		t.Errorf("tools not shown:\n%s", out)
	}

	good := `{"messages":[{"role":"user","content":{"type":"text","text":"q"}},
		{"role":"assistant","content":{"type":"tool_use","id":"a","name":"w","input":{}}},
		{"role":"user","content":{"type":"tool_result","toolUseId":"a","content":[{"type":"text","text":"18C"}]}}],"maxTokens":10}`
	s, out = sampler(t, "prompt", "Mild.\n\ns\n")
	if _, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(good)); err != nil {
		t.Errorf("a balanced tool loop was refused: %v", err)
	}
	if !strings.Contains(out.String(), "[tool result for a] 18C") || !strings.Contains(out.String(), "[tool use w id=a] {}") {
		t.Errorf("tool blocks not rendered:\n%s", out)
	}
}
