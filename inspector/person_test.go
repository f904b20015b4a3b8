package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// scriptedPerson answers the prompt policies' questions with fixed
// answers and remembers what it was asked.
type scriptedPerson struct {
	form       ElicitResult
	visit      ElicitResult
	reply      SamplingReply
	confirm    bool
	err        error // returned by every method when set
	onQuestion func(ctx context.Context)

	mu        sync.Mutex
	forms     []*FormQuestion
	urls      []*URLQuestion
	samples   []*SamplingQuestion
	questions []string
}

func (p *scriptedPerson) asked(ctx context.Context) {
	if p.onQuestion != nil {
		p.onQuestion(ctx)
	}
}

func (p *scriptedPerson) FillForm(ctx context.Context, q *FormQuestion) (ElicitResult, error) {
	p.mu.Lock()
	p.forms = append(p.forms, q)
	p.mu.Unlock()
	p.asked(ctx)
	return p.form, p.err
}

func (p *scriptedPerson) VisitURL(ctx context.Context, q *URLQuestion) (ElicitResult, error) {
	p.mu.Lock()
	p.urls = append(p.urls, q)
	p.mu.Unlock()
	p.asked(ctx)
	return p.visit, p.err
}

func (p *scriptedPerson) Sample(ctx context.Context, q *SamplingQuestion) (SamplingReply, error) {
	p.mu.Lock()
	p.samples = append(p.samples, q)
	p.mu.Unlock()
	p.asked(ctx)
	return p.reply, p.err
}

func (p *scriptedPerson) Confirm(ctx context.Context, question string, def bool) (bool, error) {
	p.mu.Lock()
	p.questions = append(p.questions, question)
	p.mu.Unlock()
	p.asked(ctx)
	return p.confirm, p.err
}

// The prompt policy puts a form to the person with what the server sent,
// and sends the person's answer; a person who goes away or dismisses the
// question cancels; any other failure is the handler's error.
func TestPromptPolicyFillsFormsThroughThePerson(t *testing.T) {
	params := json.RawMessage(`{"message":"Who are you?","requestedSchema":` + sep1034Schema + `}`)
	person := &scriptedPerson{form: ElicitResult{Action: ActionAccept, Content: json.RawMessage(`{"name":"Ada"}`)}}
	e := elicitor(t, "prompt", person)
	e.Who = func() string { return "demo 1.0" }
	raw, err := e.Handle(testCtx(t), mcp.MethodElicitationCreate, params)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{"name":"Ada"}}`; string(raw) != want {
		t.Errorf("answer %s, want %s", raw, want)
	}
	if len(person.forms) != 1 {
		t.Fatalf("asked %d forms", len(person.forms))
	}
	if q := person.forms[0]; q.Server != "demo 1.0" || q.Message != "Who are you?" || len(q.Form.Fields) != 5 {
		t.Errorf("question %+v", q)
	}

	for name, tc := range map[string]struct {
		err    error
		action string
	}{
		"end of input": {io.EOF, ActionCancel},
		"dismissed":    {ErrDismissed, ActionCancel},
	} {
		e := elicitor(t, "prompt", &scriptedPerson{err: tc.err})
		raw, err := e.Handle(testCtx(t), mcp.MethodElicitationCreate, params)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if action, _ := decodeAnswer(t, raw); action != tc.action {
			t.Errorf("%s: answer %s", name, raw)
		}
	}
	e = elicitor(t, "prompt", &scriptedPerson{err: context.Canceled})
	if _, err := e.Handle(testCtx(t), mcp.MethodElicitationCreate, params); !errors.Is(err, context.Canceled) {
		t.Errorf("a question whose context ended: %v", err)
	}
	var np *NoPersonError
	if _, err := NewElicitor(context.Background(), ElicitPolicy{Mode: PolicyPrompt}, nil); !errors.As(err, &np) {
		t.Errorf("prompt without a person: want a *NoPersonError, got %v", err)
	}
}

// A URL elicitation is put to the person with what makes it easy to
// misread; a URL mcpx does not open is declined whatever the person
// answers; an accepted one is awaited for its completion.
func TestPromptPolicyVisitsURLsThroughThePerson(t *testing.T) {
	person := &scriptedPerson{visit: ElicitResult{Action: ActionAccept}}
	e := elicitor(t, "prompt", person)
	raw, err := e.Handle(testCtx(t), mcp.MethodElicitationCreate,
		json.RawMessage(`{"mode":"url","elicitationId":"e-1","url":"https://xn--pple-43d.com/pay?x=1","message":"Pay"}`))
	if err != nil {
		t.Fatal(err)
	}
	if action, _ := decodeAnswer(t, raw); action != ActionAccept {
		t.Errorf("answer %s", raw)
	}
	q := person.urls[0]
	if q.URL != "https://xn--pple-43d.com/pay?x=1" || q.Parsed.Hostname() != "xn--pple-43d.com" || !q.Openable || q.AwaitDone || q.Message != "Pay" {
		t.Errorf("question %+v", q)
	}
	if len(q.Warnings) != 1 || !strings.Contains(q.Warnings[0], "Punycode") {
		t.Errorf("warnings %q", q.Warnings)
	}
	if _, _, known := e.Complete(json.RawMessage(`{"elicitationId":"e-1"}`)); !known {
		t.Error("an accepted URL elicitation must be awaited for completion")
	}

	raw, err = e.Handle(testCtx(t), mcp.MethodElicitationCreate,
		json.RawMessage(`{"mode":"url","elicitationId":"e-2","url":"file:///etc/passwd","message":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	if action, _ := decodeAnswer(t, raw); action != ActionDecline || person.urls[1].Openable {
		t.Errorf("a file URL: answer %s, openable %v", raw, person.urls[1].Openable)
	}
	if _, _, known := e.Complete(json.RawMessage(`{"elicitationId":"e-2"}`)); known {
		t.Error("a declined URL elicitation is not awaited")
	}

	// In the 2026-07-28 era the person says when they are done.
	person = &scriptedPerson{visit: ElicitResult{Action: ActionAccept}}
	e = elicitor(t, "prompt", person)
	(&ClientFeatures{Elicitor: e}).ModernCapabilities()
	if _, err := e.Handle(testCtx(t), mcp.MethodElicitationCreate, json.RawMessage(`{"mode":"url","url":"https://example.com/","message":"m"}`)); err != nil {
		t.Fatal(err)
	}
	if !person.urls[0].AwaitDone {
		t.Error("modern era: the person is not asked to say when they are done")
	}
}

// After a URLElicitationRequiredError, only a person who took part is
// asked whether to retry; the policies never are.
func TestURLElicitationRequiredAsksToRetry(t *testing.T) {
	err := errors.Join(errors.New("tools/call"), &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "needs auth",
		Data: json.RawMessage(`{"elicitations":[{"mode":"url","elicitationId":"p-1","url":"https://example.com/auth","message":"Authorize first"}]}`)})
	person := &scriptedPerson{visit: ElicitResult{Action: ActionAccept}, confirm: true}
	e := elicitor(t, "prompt", person)
	var notes []string
	e.Note = func(s string) { notes = append(notes, s) }
	if !e.Required(testCtx(t), err) {
		t.Error("want a retry")
	}
	if len(person.questions) != 1 || !strings.Contains(person.questions[0], "retry the request") {
		t.Errorf("questions %q", person.questions)
	}
	if len(notes) != 1 || notes[0] != `URL elicitation required by the server: url https://example.com/auth, "Authorize first" → accept` {
		t.Errorf("notes %q", notes)
	}
	person = &scriptedPerson{visit: ElicitResult{Action: ActionAccept}, confirm: false}
	if elicitor(t, "prompt", person).Required(testCtx(t), err) {
		t.Error("the person said no: no retry")
	}
	person = &scriptedPerson{visit: ElicitResult{Action: ActionDecline}, confirm: true}
	if elicitor(t, "prompt", person).Required(testCtx(t), err) || len(person.questions) != 0 {
		t.Errorf("declined: no retry and no question, asked %q", person.questions)
	}
	e = elicitor(t, "accept-defaults", nil)
	if e.Required(testCtx(t), err) {
		t.Error("a policy cannot complete a browser flow: no retry")
	}
}

// The prompt policy of sampling sends the person's reply as a
// CreateMessageResult; an empty reply is the spec's user rejection.
func TestPromptPolicySamplesThroughThePerson(t *testing.T) {
	person := &scriptedPerson{reply: SamplingReply{Text: "Paris."}}
	s := sampler(t, "prompt", person)
	s.Who = func() string { return "demo 1.0" }
	raw, err := s.Handle(testCtx(t), mcp.MethodSamplingCreateMessage, json.RawMessage(samplingParams))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":{"text":"Paris.","type":"text"},"model":"mcpx-human","role":"assistant","stopReason":"endTurn"}`; string(raw) != want {
		t.Errorf("got %s\nwant %s", raw, want)
	}
	if q := person.samples[0]; q.Server != "demo 1.0" || q.Request.SystemPrompt != "You are a helpful assistant." || len(q.Request.Messages) != 1 {
		t.Errorf("question %+v", q)
	}

	person = &scriptedPerson{reply: SamplingReply{Text: "Let me look.", ToolUses: []ToolUse{
		{Name: "get_weather", Input: json.RawMessage(`{"city": "Paris"}`)}, {Name: "get_weather"}}}}
	s = sampler(t, "prompt", person)
	raw, err = s.Handle(testCtx(t), mcp.MethodSamplingCreateMessage, json.RawMessage(toolParams))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"text":"Let me look.","type":"text"},{"id":"mcpx_tool_1","input":{"city":"Paris"},"name":"get_weather","type":"tool_use"},` +
		`{"id":"mcpx_tool_2","input":{},"name":"get_weather","type":"tool_use"}],"model":"mcpx-human","role":"assistant","stopReason":"toolUse"}`
	if string(raw) != want {
		t.Errorf("got %s\nwant %s", raw, want)
	}
	// The next turn of a tool loop sends the earlier tool uses back: the
	// ids of this one's must differ from theirs.
	raw, err = s.Handle(testCtx(t), mcp.MethodSamplingCreateMessage, json.RawMessage(toolParams))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"id":"mcpx_tool_3"`) || !strings.Contains(string(raw), `"id":"mcpx_tool_4"`) {
		t.Errorf("second turn: %s, want tool use ids 3 and 4", raw)
	}

	// A reply the request does not allow is not sent as if it were the
	// model's: a tool not offered, an input that is not an object or
	// that the tool's schema refuses, a tool use where toolChoice is
	// none, none where it is required.
	for name, tc := range map[string]struct {
		params string
		reply  SamplingReply
	}{
		"tool not offered":    {toolParams, SamplingReply{ToolUses: []ToolUse{{Name: "get_time"}}}},
		"input not an object": {toolParams, SamplingReply{ToolUses: []ToolUse{{Name: "get_weather", Input: json.RawMessage(`[1]`)}}}},
		"input against the schema": {strings.Replace(toolParams, `"inputSchema":{"type":"object"}`, `"inputSchema":{"type":"object","required":["city"]}`, 1),
			SamplingReply{ToolUses: []ToolUse{{Name: "get_weather"}}}},
		"toolChoice none":     {strings.Replace(toolParams, `"auto"`, `"none"`, 1), SamplingReply{ToolUses: []ToolUse{{Name: "get_weather"}}}},
		"toolChoice required": {strings.Replace(toolParams, `"auto"`, `"required"`, 1), SamplingReply{Text: "no tools"}},
	} {
		_, err := sampler(t, "prompt", &scriptedPerson{reply: tc.reply}).Handle(testCtx(t), mcp.MethodSamplingCreateMessage, json.RawMessage(tc.params))
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || !strings.Contains(rpcErr.Message, "does not fit the request") {
			t.Errorf("%s: want the reply refused, got %v", name, err)
		}
	}

	_, err = sampler(t, "prompt", &scriptedPerson{}).Handle(testCtx(t), mcp.MethodSamplingCreateMessage, json.RawMessage(samplingParams))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -1 {
		t.Errorf("an empty reply: want the user-rejected error (-1), got %v", err)
	}
	// A person who dismissed the question (Ctrl-C in the REPL) rejected
	// the request: the server gets the spec's rejection, not an internal
	// error.
	for _, gone := range []error{ErrDismissed, io.EOF} {
		_, err = sampler(t, "prompt", &scriptedPerson{err: gone}).Handle(testCtx(t), mcp.MethodSamplingCreateMessage, json.RawMessage(samplingParams))
		if !errors.As(err, &rpcErr) || rpcErr.Code != -1 {
			t.Errorf("%v: want the user-rejected error (-1), got %v", gone, err)
		}
	}
	_, err = sampler(t, "prompt", &scriptedPerson{err: context.Canceled}).Handle(testCtx(t), mcp.MethodSamplingCreateMessage, json.RawMessage(samplingParams))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a question whose context ended: %v", err)
	}
	if _, err := NewSampler(context.Background(), SamplingPolicy{Mode: PolicyPrompt}, nil); err == nil {
		t.Error("prompt without a person must be refused")
	}
}

// A person is asked under the context of the server request the answer
// is for, so that AfterAnswer defers work until the answer is shown.
func TestPersonIsAskedUnderTheHandlersContext(t *testing.T) {
	var order []string
	person := &scriptedPerson{form: ElicitResult{Action: ActionCancel}}
	person.onQuestion = func(ctx context.Context) {
		AfterAnswer(ctx, func() { order = append(order, "after the answer") })
		order = append(order, "asked")
	}
	f := &ClientFeatures{Elicitor: elicitor(t, "prompt", person)}
	f.Capabilities()
	h := f.Handlers()[mcp.MethodElicitationCreate]
	ctx, after := withAfterAnswer(testCtx(t))
	if _, err := h(ctx, &jsonrpc.Message{Method: mcp.MethodElicitationCreate,
		Params: json.RawMessage(`{"message":"m","requestedSchema":` + sep1034Schema + `}`)}); err != nil {
		t.Fatal(err)
	}
	order = append(order, "answered")
	after.run()
	if got := strings.Join(order, ", "); got != "asked, answered, after the answer" {
		t.Errorf("order: %s", got)
	}
}

// A server that withdraws its request (notifications/cancelled) while the
// person is asked ends the question's context, and Withdrawn says so: the
// person can be told why the question went away. No answer is sent.
func TestWithdrawnQuestion(t *testing.T) {
	asked := make(chan struct{})
	withdrawn := make(chan bool, 1)
	person := &scriptedPerson{form: ElicitResult{Action: ActionAccept}}
	person.onQuestion = func(ctx context.Context) {
		close(asked)
		<-ctx.Done()
		withdrawn <- Withdrawn(ctx)
	}
	f := &ClientFeatures{Elicitor: elicitor(t, "prompt", person)}
	f.Capabilities()
	s, srv, _ := newTestSession(t, Options{Handlers: f.Handlers()})
	srv.send(`{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"message":"m","requestedSchema":` + sep1034Schema + `}}`)
	select {
	case <-asked:
	case <-time.After(wait):
		t.Fatal("the person was not asked")
	}
	srv.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"q1","reason":"no longer needed"}}`)
	select {
	case w := <-withdrawn:
		if !w {
			t.Error("Withdrawn is false for a question the server withdrew")
		}
	case <-time.After(wait):
		t.Fatal("the question's context did not end")
	}
	srv.quietUntil(mark(t, s))

	// mcpx closing the session (Ctrl-C, exit) ends the question too,
	// but the server withdrew nothing.
	asked = make(chan struct{})
	srv.send(`{"jsonrpc":"2.0","id":"q2","method":"elicitation/create","params":{"message":"m","requestedSchema":` + sep1034Schema + `}}`)
	select {
	case <-asked:
	case <-time.After(wait):
		t.Fatal("the person was not asked again")
	}
	s.Close()
	select {
	case w := <-withdrawn:
		if w {
			t.Error("Withdrawn is true for a question the session's close ended")
		}
	case <-time.After(wait):
		t.Fatal("the question's context did not end with the session")
	}

	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if Withdrawn(ctx) {
		t.Error("Withdrawn is true for a context that merely ended")
	}
}

// A tool call waiting on a form the person takes longer over than the
// idle timeout is not given up: the timeout does not run while they
// answer (peer.HoldTimeouts), and the call ends when the server answers.
func TestIdleTimeoutWaitsForThePerson(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const answering = 5 * time.Second
		person := &scriptedPerson{form: ElicitResult{Action: ActionAccept, Content: json.RawMessage(`{"name":"Ada"}`)},
			onQuestion: func(context.Context) { time.Sleep(answering) }}
		e := elicitor(t, "prompt", person)
		s, srv, _ := newTestSession(t, Options{Handlers: map[string]RequestHandler{mcp.MethodElicitationCreate: Adapt(e.Handle)}})
		start := time.Now()
		ch := goCall(t.Context(), s, mcp.MethodToolsCall, map[string]any{"name": "ask"}, WithTimeout(time.Second, 0))
		req := srv.nextRequest(mcp.MethodToolsCall)
		srv.send(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"Who are you?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)
		if ans := srv.next(); ans.ID.String() != `"e1"` || !strings.Contains(string(ans.Result), `"accept"`) {
			t.Fatalf("the answer to the elicitation: %s", ans.Raw)
		}
		srv.reply(req, `{"content":[]}`)
		if res := result(t, ch); res.err != nil {
			t.Fatalf("the tool call, %s after it was sent, with the form answered in %s: %v", time.Since(start), answering, res.err)
		}
	})
}
