package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
)

// A tool use typed in reply to a sampling request must be one the
// request allows; a wrong one is said at once and asked again, not sent.
func TestSamplingToolUseChecked(t *testing.T) {
	params := strings.Replace(toolParams, `"inputSchema":{"type":"object"}`, `"inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, 1)
	s, out := sampler(t, "prompt", strings.Join([]string{
		`/tool get_time {}`,
		`/tool get_weather [1,2]`,
		`/tool get_weather {}`,
		`/tool`,
		`/tool get_weather {"city":"Paris"}`,
		"", "s", "",
	}, "\n"))
	raw, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(params))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := `{"content":[{"id":"mcpx_tool_1","input":{"city":"Paris"},"name":"get_weather","type":"tool_use"}],"model":"mcpx-human","role":"assistant","stopReason":"toolUse"}`
	if string(raw) != want {
		t.Errorf("got %s\nwant %s\n%s", raw, want, out)
	}
	for _, s := range []string{
		`"get_time" is not one of the tools offered: get_weather`,
		"the tool's input must be a JSON object",
		"does not match get_weather's inputSchema",
		"usage: /tool NAME {json input}",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("conversation lacks %q:\n%s", s, out)
		}
	}

	// toolChoice required: text alone is refused; Enter again declines.
	s, out = sampler(t, "prompt", "just text\n\n\n")
	_, err = s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(strings.Replace(toolParams, `"auto"`, `"required"`, 1)))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -1 {
		t.Errorf("required, text then two empty lines: want the rejection (-1), got %v\n%s", err, out)
	}
	if !containsAll(out.String(), `The server requires a tool use`, `must use at least one tool; add a /tool line, or press Enter again to decline`, "(declined)") {
		t.Errorf("conversation:\n%s", out)
	}

	// toolChoice none: no tool use is offered or taken.
	s, out = sampler(t, "prompt", "/tool get_weather {}\nSunny.\n\ns\n")
	raw, err = s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(strings.Replace(toolParams, `"auto"`, `"none"`, 1)))
	if err != nil || !strings.Contains(string(raw), `"text":"Sunny."`) || strings.Contains(string(raw), "tool_use") {
		t.Errorf("none: got %s, %v\n%s", raw, err, out)
	}
	if strings.Contains(out.String(), `A line "/tool NAME`) || !strings.Contains(out.String(), `toolChoice is "none"`) {
		t.Errorf("none: conversation:\n%s", out)
	}
}

// A huge message is shown cut, so that who asks and what to answer stay
// on the screen; how much was left out is said.
func TestHugeServerTextIsCut(t *testing.T) {
	msg := strings.Repeat("M", 1<<20)
	e, out := elicitor(t, "prompt", "d\n")
	params, _ := json.Marshal(map[string]any{"message": msg, "requestedSchema": json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","description":"` + strings.Repeat("D", 100000) + `"}}}`)})
	if _, err := e.Handle(testCtx(t), "elicitation/create", params); err != nil {
		t.Fatal(err)
	}
	if out.Len() > 64<<10 || !strings.Contains(out.String(), "1016.0 KiB more, 1 line, not shown)") {
		t.Errorf("%d bytes shown; tail:\n%s", out.Len(), out.String()[max(0, out.Len()-400):])
	}

	lines := strings.Repeat("line\n", 1000)
	s, out := sampler(t, "prompt", "\n")
	var msgs []string
	for range 50 {
		msgs = append(msgs, `{"role":"user","content":{"type":"text","text":`+strconvQuote(lines)+`}}`)
	}
	_, _ = s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(`{"messages":[`+strings.Join(msgs, ",")+`],"maxTokens":5}`))
	if !containsAll(out.String(), "(30 earlier messages not shown)", "more, 940 lines, not shown)") || out.Len() > 200<<10 {
		t.Errorf("%d bytes shown:\n%s", out.Len(), out.String()[:2000])
	}
}

// syncBuffer is output written by one goroutine and read by another.
type syncBuffer = testwait.Buffer

// waitFor waits until out holds s.
func waitFor(t *testing.T, out *syncBuffer, s string) {
	t.Helper()
	testwait.For(t, "the terminal to show "+strconvQuote(s), func() bool { return strings.Contains(out.String(), s) })
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// On a terminal that does not edit lines (a one-shot command), arrow keys
// and Esc put escape sequences in the line: such an answer is asked
// again rather than sent, and Esc alone dismisses the question (an
// elicitation is cancelled).
func TestControlCharactersInTypedAnswers(t *testing.T) {
	schema := `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	params := json.RawMessage(`{"message":"m","requestedSchema":` + schema + `}`)
	e, out := elicitor(t, "prompt", "\nab\x1b[A\x1b[D\nAda\ns\n")
	raw, err := e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{"name":"Ada"}}`; string(raw) != want {
		t.Errorf("got %s, want %s\n%s", raw, want, out)
	}
	if !strings.Contains(out.String(), "that line holds control characters") {
		t.Errorf("conversation:\n%s", out)
	}

	e, out = elicitor(t, "prompt", "\n\x1b\n")
	raw, err = e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := decodeAnswer(t, raw); a != inspector.ActionCancel || !strings.Contains(out.String(), "(dismissed)") {
		t.Errorf("Esc: got %s\n%s", raw, out)
	}
}

// A question the server withdraws goes away with a word why; what the
// person had begun to type for it does not answer the next question.
func TestWithdrawnQuestionLeavesNoAnswerBehind(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuffer
	p := NewPrompter(pr, &out, true)
	person := NewPerson(p, nil)
	ctx, withdraw := context.WithCancelCause(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := person.Sample(ctx, &inspector.SamplingQuestion{Server: "s", Request: &inspector.SamplingRequest{}})
		done <- err
	}()
	waitFor(t, &out, "> ")
	withdraw(peer.ErrCancelled)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the question did not go away")
	}
	if !strings.Contains(out.String(), "(the server withdrew its request; nothing was sent)") {
		t.Errorf("no word why:\n%s", out.String())
	}

	// The line the person finishes now was begun for the withdrawn
	// question: the next one asks again.
	answered := make(chan string, 1)
	go func() {
		line, _ := p.ReadLine(testCtx(t), "next? ")
		answered <- line
	}()
	if _, err := pw.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, "type the answer again")
	if _, err := pw.Write([]byte("n\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-answered:
		if got != "n" {
			t.Errorf("answer %q, want n", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}

// Conversations that wait take their turns in the order the server sent
// the requests they answer, whatever order they began in; those of no
// request go last, in the order they began. One that gives up leaves the
// queue.
func TestConversationsInOrder(t *testing.T) {
	p := NewPrompter(strings.NewReader(""), io.Discard, true)
	end, err := p.Begin(peer.WithArrival(testCtx(t), 1))
	if err != nil {
		t.Fatal(err)
	}
	arrivals := []uint64{5, 3, 0, 4, 0, 2}
	order := make(chan int, len(arrivals))
	for i, n := range arrivals {
		go func() {
			end, err := p.Begin(peer.WithArrival(testCtx(t), n))
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			end()
		}()
		testwait.For(t, "the conversation to queue", func() bool { return p.conv.waiters() == i+1 })
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if _, err := p.Begin(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled Begin: %v", err)
	}
	end()
	var got []uint64
	for range arrivals {
		select {
		case i := <-order:
			got = append(got, arrivals[i])
			if arrivals[i] == 0 {
				got[len(got)-1] = uint64(100 + i) // which of the two
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a conversation never had its turn")
		}
	}
	if want := []uint64{2, 3, 4, 5, 102, 104}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("turns in the order of arrivals %v, want %v", got, want)
	}
}

// A URL is shown with its host and port; one mcpx does not open is
// declined with the reason, whatever the person would answer.
func TestURLShownAndRefused(t *testing.T) {
	for _, tc := range []struct{ url, shown, action string }{
		{"https://google.com@evil.example:8443/login", "Host: evil.example:8443", inspector.ActionAccept},
		{"https:///nohost", "the URL names no host: declined.", inspector.ActionDecline},
		{"https://good.com\u202emoc.live/", "its host holds the character U+202E, which no host name has", inspector.ActionDecline},
		{"javascript:alert(1)", "mcpx opens only http and https URLs; this one is javascript:: declined.", inspector.ActionDecline},
	} {
		e, out := elicitor(t, "prompt", "y\n")
		var opened []string
		setOpenURL(e, func(u string) error { opened = append(opened, u); return nil })
		raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"url","elicitationId":"e","message":"m","url":`+strconvQuote(tc.url)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := decodeAnswer(t, raw); a != tc.action || (a == inspector.ActionDecline) != (len(opened) == 0) {
			t.Errorf("%s: answer %s, opened %q", tc.url, raw, opened)
		}
		if !strings.Contains(out.String(), tc.shown) {
			t.Errorf("%s: conversation lacks %q:\n%s", tc.url, tc.shown, out)
		}
	}
}

// A field's bounds are said before the person answers, and a default the
// field's own schema refuses is not offered (Enter would keep it).
func TestFieldHints(t *testing.T) {
	schema := `{"type":"object","properties":{
	 "age":{"type":"integer","minimum":0,"maximum":150},
	 "code":{"type":"string","minLength":3,"maxLength":5,"pattern":"^[a-z]+$"},
	 "tags":{"type":"array","minItems":1,"items":{"enum":["a","b"]}},
	 "n":{"type":"integer","minimum":5,"default":1}}}`
	e, out := elicitor(t, "prompt", "\n\n\n\n\nd\n")
	if _, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+schema+`}`)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"(integer, 0 to 150;",
		"(string, 3 to 5 characters, matching ^[a-z]+$;",
		"(choose at least 1, comma-separated numbers;",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("conversation lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out.String(), "[1]") || strings.Contains(out.String(), "(* required)") {
		t.Errorf("an invalid default offered, or a required mark with no required field:\n%s", out)
	}
}

// On a terminal, a conversation begins by dropping what was typed ahead:
// a "y" typed twice for one URL does not consent to the next.
func TestTypeAheadIsDropped(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuffer
	p := NewPrompter(pr, &out, true)
	discarded := 0
	p.DiscardTypeAhead(func() error { discarded++; return nil })
	var opened []string
	person := NewPerson(p, func(u string) error { opened = append(opened, u); return nil })
	e, err := inspector.NewElicitor(context.Background(), inspector.ElicitPolicy{Mode: inspector.PolicyPrompt}, person)
	if err != nil {
		t.Fatal(err)
	}
	(&inspector.ClientFeatures{Elicitor: e}).Capabilities()
	ask := func(id string) <-chan string {
		done := make(chan string, 1)
		go func() {
			raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"mode":"url","elicitationId":"`+id+`","message":"m","url":"https://example.com/`+id+`"}`))
			if err != nil {
				done <- err.Error()
				return
			}
			a, _ := decodeAnswer(t, raw)
			done <- a
		}()
		return done
	}
	first := ask("one")
	waitFor(t, &out, "Open it in your browser?")
	if _, err := pw.Write([]byte("y\ny\n")); err != nil { // one read takes both
		t.Fatal(err)
	}
	if got := <-first; got != inspector.ActionAccept {
		t.Fatalf("first: %s", got)
	}
	second := ask("two")
	testwait.For(t, "the second question", func() bool { return strings.Count(out.String(), "Open it in your browser?") == 2 })
	if _, err := pw.Write([]byte("n\n")); err != nil {
		t.Fatal(err)
	}
	if got := <-second; got != inspector.ActionDecline {
		t.Errorf("second: %s, want decline: the line typed ahead answered it", got)
	}
	if discarded != 2 || len(opened) != 1 {
		t.Errorf("terminal discarded %d times (want 2, once a conversation), opened %q", discarded, opened)
	}
}

// A form whose schema requires a field it does not define is shown with
// a warning before the person answers: no answer can be sent.
func TestFormRequiresUndefinedField(t *testing.T) {
	e, out := elicitor(t, "prompt", "d\n")
	schema := `{"type":"object","properties":{"a":{"type":"string"}},"required":["gh\u001b[2Jost"]}`
	raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+schema+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"action":"decline"}` {
		t.Errorf("answer %s", raw)
	}
	if want := `warning: the schema requires gh\x1b[2Jost, which it does not define: no answer satisfies it (decline or cancel)`; !strings.Contains(out.String(), want) {
		t.Errorf("conversation lacks %q:\n%s", want, out)
	}
}

// A hostile form or sampling request cannot flood the question: a
// thousand choices, a hundred fields, a thousand tools or model hints,
// and long names, formats, patterns, stop sequences and ids (a server
// may send a hundred times as many) are shown cut, saying
// how much was left out (the request is on the wire in full).
func TestHostileQuestionsAreShownCut(t *testing.T) {
	big := strings.Repeat("P", 64<<10)
	var enum []string
	for i := range 1000 {
		enum = append(enum, fmt.Sprintf("opt%d", i))
	}
	enumJSON, _ := json.Marshal(enum)
	props := []string{
		`"p":{"type":"string","format":"` + big + `","pattern":"` + big + `","default":"` + big + `"}`,
		`"e":{"type":"string","enum":` + string(enumJSON) + `}`,
	}
	for i := range 100 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"string"}`, i))
	}
	schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	e, out := elicitor(t, "prompt", "a\n-\n\n")
	if _, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":`+schema+`}`)); err != nil {
		t.Fatal(err)
	}
	if !containsAll(out.String(), "(82 more fields not shown)", "  100) opt99", "… (900 more choices not shown: type the number or the value of one)") || out.Len() > 16<<10 {
		t.Errorf("form: %d bytes shown:\n%.3000s", out.Len(), out.String())
	}

	var tools, hints []string
	for i := range 1000 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"d","inputSchema":{"type":"object"}}`, i))
		hints = append(hints, `{"name":"h"}`)
	}
	tools = append(tools, `{"name":"`+big+`","description":"`+big+`","inputSchema":{"type":"object"}}`)
	var blocks []string
	for range 1000 {
		blocks = append(blocks, `{"type":"text","text":"b"}`)
	}
	params := `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"` + big + `","name":"` + big + `","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","toolUseId":"` + big + `","content":[` + strings.Join(blocks, ",") + `]}]},` +
		`{"role":"user","content":[` + strings.Join(blocks, ",") + `]}],` +
		`"stopSequences":["` + big + `"],"includeContext":"` + big + `","modelPreferences":{"hints":[` + strings.Join(hints, ",") + `]},` +
		`"tools":[` + strings.Join(tools, ",") + `],"toolChoice":{"mode":"auto"},"maxTokens":5}`
	s, out := sampler(t, "prompt", "\n")
	_, _ = s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(params))
	if !containsAll(out.String(), "(981 more tools not shown)", "(980 more hints not shown)", "(980 more blocks not shown)", "(980 earlier content blocks not shown)") || out.Len() > 32<<10 {
		t.Errorf("sampling: %d bytes shown:\n%.3000s", out.Len(), out.String())
	}
}
