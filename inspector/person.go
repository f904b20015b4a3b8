package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
)

// Person is the person at the client whom the prompt policies ask: the
// spec leaves it to the client how it involves its user in an
// elicitation or a sampling request, but wants one in the loop (spec
// 2025-11-25: client/elicitation, "User Interaction Model"; client/sampling,
// "User Interaction Model"). The policies (ElicitPolicy, SamplingPolicy)
// decide when a person is asked; a Person decides how. The terminal UI
// implements it (package tui), tests with scripted answers.
//
// Server requests are answered concurrently, but a person answers one
// question at a time: an implementation serialises its conversations.
// Every method gets the context of the server request it answers, so
// that AfterAnswer works from within it.
//
// A method returns an error when its question could not be put or
// answered: the context ended, there is nobody to ask (ErrNoTerminal),
// or the person dismissed the question (ErrDismissed) or their input
// ended (an error matching io.EOF) where the method has no answer that
// says so. For an elicitation, a person who dismisses it or goes away
// cancels it (spec: the "cancel" action), so FillForm and VisitURL may
// answer cancel instead, and the policy takes an io.EOF error as cancel.
type Person interface {
	// FillForm asks for the fields of a form-mode elicitation; the
	// answer is accept with content the form validates, decline or
	// cancel.
	FillForm(ctx context.Context, q *FormQuestion) (ElicitResult, error)
	// VisitURL asks for consent to visit the page of a URL-mode
	// elicitation and, once given, opens it (or tells the person to);
	// the answer is accept (consent given, and, when q.AwaitDone, the
	// person said they were done there), decline or cancel. The browser
	// is never opened without consent, nor for a URL that is not
	// q.Openable.
	VisitURL(ctx context.Context, q *URLQuestion) (ElicitResult, error)
	// Sample shows a sampling request and returns the reply the person
	// wrote and, having seen it as it will be sent, chose to send; an
	// empty reply (no text, no tool use) declines the request, which the
	// server is told with the spec's rejection. The person must be able
	// to decline on reading the request and again on reviewing their
	// reply, and to edit the reply before it goes (spec 2025-11-25:
	// client/sampling, "User Interaction Model"). Composing and
	// reviewing are one conversation, so that no other question comes
	// between them; a Person whose input ends before the review
	// declines rather than sends what was not reviewed.
	Sample(ctx context.Context, q *SamplingQuestion) (SamplingReply, error)
	// Confirm asks a yes-or-no question; an empty answer is def.
	Confirm(ctx context.Context, question string, def bool) (bool, error)
}

// ErrDismissed is returned when the person dismissed a question (Ctrl-C
// in the REPL) rather than answering it. It matches io.EOF, so every
// conversation ends as at the end of input: an elicitation is cancelled.
var ErrDismissed error = dismissed{}

type dismissed struct{}

func (dismissed) Error() string        { return "dismissed" }
func (dismissed) Is(target error) bool { return target == io.EOF }

// Withdrawn reports whether ctx, the context of a server request's
// handler, ended because the server withdrew the request
// (notifications/cancelled; spec 2025-11-25: basic/utilities/cancellation):
// a question put to the person for it is moot, and no answer is sent.
func Withdrawn(ctx context.Context) bool { return errors.Is(context.Cause(ctx), peer.ErrCancelled) }

// Arrival returns the place of the server request whose handler ctx is
// in the order the server sent its requests (1 for the first), 0 when
// ctx is no server request's. Server requests are answered concurrently:
// a Person that asks one question at a time asks them in this order.
func Arrival(ctx context.Context) uint64 { return peer.Arrival(ctx) }

// asking puts a question to the person: while they answer, the session's
// requests wait without their idle timeouts running (peer.HoldTimeouts),
// so that a tool call waiting on a form the person takes a minute over is
// not given up as unanswered; the hard cap (Options.MaxTimeout) still
// bounds it.
func asking[T any](ctx context.Context, ask func() (T, error)) (T, error) {
	defer peer.HoldTimeouts(ctx)()
	return ask()
}

// ErrNoTerminal is returned when a policy needs a person but there is no
// one to ask.
var ErrNoTerminal = errors.New("no terminal to ask on")

// NoPersonError reports a prompt policy configured without a Person to
// ask.
type NoPersonError struct {
	// Feature is "sampling" or "elicitation".
	Feature string
}

func (e *NoPersonError) Error() string {
	return fmt.Sprintf("the %s policy prompt needs a person to ask, and there is none", e.Feature)
}

// The actions of an elicitation's answer (spec 2025-11-25:
// client/elicitation, "Response Actions").
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitResult is the answer to an elicitation: an action, and for an
// accepted form the content.
type ElicitResult struct {
	Action  string
	Content json.RawMessage
}

// FormQuestion is a form-mode elicitation as a person is asked it.
type FormQuestion struct {
	// Server names the server that asks ("the server" when unknown).
	Server string
	// Message is the server's message, as received.
	Message string
	Form    *Form
}

// URLQuestion is a URL-mode elicitation as a person is asked it.
type URLQuestion struct {
	// Server names the server that asks ("the server" when unknown).
	Server string
	// Message is the server's message, as received.
	Message string
	// URL is the page the server asks the person to visit, as received.
	URL string
	// Parsed is URL parsed: an absolute URL.
	Parsed *url.URL
	// Warnings say what makes the URL easy to misread (see URLWarnings).
	Warnings []string
	// Openable is false for a URL mcpx does not open (see NotOpenable):
	// the person is shown it, and it is declined.
	Openable bool
	// NotOpenable says why a URL that is not Openable is not.
	NotOpenable string
	// AwaitDone asks the person to say when they are done on the page
	// before the answer goes out: in the 2026-07-28 era the client learns
	// the outcome by retrying the request at once (spec 2026-07-28:
	// changelog, minor change 11).
	AwaitDone bool
}

// SamplingQuestion is a sampling request as a person is asked it.
type SamplingQuestion struct {
	// Server names the server that asks ("the server" when unknown), or
	// when View is set the view that asks.
	Server string
	// View says the request is an MCP Apps view's (draft extension
	// io.modelcontextprotocol/ui, "Sampling"), not the server's: the
	// reply goes to the view.
	View    bool
	Request *SamplingRequest
}

// SamplingReply is what a person wrote in reply to a sampling request:
// text, tool uses (when the request offered tools), or both.
type SamplingReply struct {
	Text     string
	ToolUses []ToolUse
}

// ToolUse is a tool use a person answered a sampling request with.
type ToolUse struct {
	Name string
	// Input is the tool's input, a JSON object.
	Input json.RawMessage
}

// Empty reports whether the reply declines the request.
func (r SamplingReply) Empty() bool { return r.Text == "" && len(r.ToolUses) == 0 }

// result builds the CreateMessageResult of the reply (spec 2025-11-25:
// client/sampling, "Tools in Sampling" for tool uses). The ids of its
// tool uses are unique on the connection: a tool loop sends back every
// earlier turn, and the server matches each tool result to its use by id.
func (s *Sampler) result(r SamplingReply) json.RawMessage {
	s.mu.Lock()
	first := s.uses + 1
	s.uses += len(r.ToolUses)
	s.mu.Unlock()
	res := map[string]any{"role": "assistant", "model": "mcpx-human", "stopReason": "endTurn"}
	if len(r.ToolUses) == 0 {
		res["content"] = map[string]string{"type": "text", "text": r.Text}
		return marshalRaw(res)
	}
	var blocks []any
	if r.Text != "" {
		blocks = append(blocks, map[string]string{"type": "text", "text": r.Text})
	}
	for i, u := range r.ToolUses {
		input := u.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		blocks = append(blocks, map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("mcpx_tool_%d", first+i),
			"name": u.Name, "input": input,
		})
	}
	res["content"] = blocks
	res["stopReason"] = "toolUse"
	return marshalRaw(res)
}
