package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// Policy modes shared by sampling and elicitation.
const (
	PolicyPrompt         = "prompt"
	PolicyDecline        = "decline"
	PolicyCancel         = "cancel"
	PolicyAcceptDefaults = "accept-defaults"
	PolicyFile           = "file"
)

// SamplingPolicy says how sampling/createMessage is answered:
// prompt (a person types the reply), decline, or file:PATH (a
// CreateMessageResult read from a JSON file).
type SamplingPolicy struct {
	Mode string
	File string
	// OnWait, when set, is told that reading File waits for the writer
	// of a named pipe (Ctrl-C ends the wait).
	OnWait func(path string)
}

// ParseSamplingPolicy parses a policy as written: prompt, decline or
// file:PATH.
func ParseSamplingPolicy(s string) (SamplingPolicy, error) {
	switch {
	case s == PolicyPrompt || s == PolicyDecline:
		return SamplingPolicy{Mode: s}, nil
	case strings.HasPrefix(s, "file:") && len(s) > len("file:"):
		return SamplingPolicy{Mode: PolicyFile, File: s[len("file:"):]}, nil
	}
	return SamplingPolicy{}, fmt.Errorf("unknown sampling policy %q: use prompt, decline or file:PATH", s)
}

func (p SamplingPolicy) String() string {
	if p.Mode == PolicyFile {
		return "file:" + p.File
	}
	return p.Mode
}

// Sampler answers sampling/createMessage by policy
// (spec 2025-11-25: client/sampling).
type Sampler struct {
	Policy SamplingPolicy
	// Person is asked when the policy is prompt.
	Person Person
	// Tools is true when the sampling.tools capability is declared, so
	// requests may carry tools and toolChoice.
	Tools bool
	// Who names the server for the person ("server-everything 1.0"), or
	// the view when View is set.
	Who func() string
	// View says the sampler answers an MCP Apps view's requests, not the
	// server's (SamplingQuestion.View).
	View bool

	mu      sync.Mutex
	answers []json.RawMessage // policy file: results used in turn, the last repeating
	next    int
	uses    int // tool uses answered so far: their ids are unique on the connection
}

// NewSampler checks the policy and, for file:PATH, reads and checks the file
// now so that a mistake is reported before the server is started. A
// prompt policy needs a person to ask (a *NoPersonError otherwise).
func NewSampler(ctx context.Context, p SamplingPolicy, person Person) (*Sampler, error) {
	s := &Sampler{Policy: p, Person: person}
	switch p.Mode {
	case PolicyPrompt:
		if person == nil {
			return nil, &NoPersonError{Feature: "sampling"}
		}
	case PolicyFile:
		answers, err := LoadSamplingFile(ctx, p.File, p.OnWait)
		if err != nil {
			return nil, err
		}
		s.answers = answers
	case PolicyDecline:
	default:
		return nil, fmt.Errorf("unknown sampling policy %q", p.Mode)
	}
	return s, nil
}

// Clone returns a sampler with the same policy and a fresh state, for
// another connection.
func (s *Sampler) Clone() *Sampler {
	return &Sampler{Policy: s.Policy, Person: s.Person, Tools: s.Tools, Who: s.Who, View: s.View, answers: s.answers}
}

func (s *Sampler) who() string {
	if s.Who != nil {
		if w := s.Who(); w != "" {
			return w
		}
	}
	if s.View {
		return "the view"
	}
	return "the server"
}

// LoadSamplingFile reads a CreateMessageResult, or an array of them to be
// used in turn (for multi-turn tool loops; the last one repeats). Missing
// role and model are filled in ("assistant", "mcpx-file"). A named pipe's
// wait for its writer ends with ctx; onWait, when not nil, is told of it.
func LoadSamplingFile(ctx context.Context, name string, onWait func(path string)) ([]json.RawMessage, error) {
	data, err := readAnswerFile(ctx, name, onWait)
	if err != nil {
		return nil, fmt.Errorf("sampling reply file: %w", err)
	}
	var many []json.RawMessage
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "[") {
		if err := json.Unmarshal(data, &many); err != nil {
			return nil, fmt.Errorf("sampling reply file %s: %w", name, err)
		}
	} else {
		many = []json.RawMessage{json.RawMessage(trimmed)}
	}
	if len(many) == 0 {
		return nil, fmt.Errorf("sampling reply file %s: the array is empty", name)
	}
	for i, r := range many {
		obj, err := ParseObject(r)
		if err != nil {
			return nil, fmt.Errorf("sampling reply file %s: not a CreateMessageResult object: %w", name, err)
		}
		if c := obj.Get("content"); len(c) == 0 || string(c) == "null" {
			return nil, fmt.Errorf(`sampling reply file %s: the result needs "content", e.g. {"content":{"type":"text","text":"…"}}`, name)
		}
		if !obj.Has("role") {
			obj.Set("role", json.RawMessage(`"assistant"`))
		}
		if !obj.Has("model") {
			obj.Set("model", json.RawMessage(`"mcpx-file"`))
		}
		many[i] = obj.Marshal()
	}
	return many, nil
}

// SamplingRequest is the part of CreateMessageRequest params mcpx reads.
type SamplingRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	SystemPrompt     string          `json:"systemPrompt"`
	ModelPreferences json.RawMessage `json:"modelPreferences"`
	MaxTokens        *int64          `json:"maxTokens"`
	Temperature      *float64        `json:"temperature"`
	StopSequences    []string        `json:"stopSequences"`
	IncludeContext   string          `json:"includeContext"`
	Tools            []SamplingTool  `json:"tools"`
	ToolChoice       *struct {
		Mode string `json:"mode"`
	} `json:"toolChoice"`
}

// SamplingTool is a tool a sampling request offers the model.
type SamplingTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// The modes of a sampling request's toolChoice (spec 2025-11-25:
// client/sampling, "Tool Choice Modes").
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
)

// ToolChoiceMode returns the request's toolChoice mode: auto when it
// names none.
func (r *SamplingRequest) ToolChoiceMode() string {
	if r.ToolChoice == nil || r.ToolChoice.Mode == "" {
		return ToolChoiceAuto
	}
	return r.ToolChoice.Mode
}

// OffersTools reports whether a reply may use tools: the request offers
// some and its toolChoice does not forbid them.
func (r *SamplingRequest) OffersTools() bool {
	return len(r.Tools) > 0 && r.ToolChoiceMode() != ToolChoiceNone
}

// CheckToolUse says what is wrong with a tool use in reply to the
// request, or nil: the tool must be one the request offers, its input a
// JSON object that its inputSchema accepts, and toolChoice must allow
// tools (spec 2025-11-25: client/sampling, "Tools in Sampling", "Tool
// Choice Modes"; schema: ToolUseContent.input is an object).
func (r *SamplingRequest) CheckToolUse(name string, input json.RawMessage) error {
	if !r.OffersTools() {
		if len(r.Tools) > 0 {
			return errors.New(`the request's toolChoice is "none": answer with text only`)
		}
		return errors.New("the request offers no tools")
	}
	var tool *SamplingTool
	var names []string
	for i := range r.Tools {
		names = append(names, r.Tools[i].Name)
		if r.Tools[i].Name == name {
			tool = &r.Tools[i]
		}
	}
	if tool == nil {
		return fmt.Errorf("%q is not one of the tools offered: %s", name, strings.Join(names, ", "))
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if _, err := ParseObject(input); err != nil || !json.Valid(input) {
		return errors.New(`the tool's input must be a JSON object, e.g. {"city":"Paris"}`)
	}
	if sch, err := CompileSchema(tool.InputSchema); err == nil && len(tool.InputSchema) > 0 {
		if verr := sch.Validate(input); verr != nil {
			return fmt.Errorf("the input does not match %s's inputSchema: %v", name, verr)
		}
	}
	return nil
}

// CheckReply says what is wrong with a reply to the request, or nil: each
// tool use must pass CheckToolUse, and a request whose toolChoice is
// required needs at least one.
func (r *SamplingRequest) CheckReply(reply SamplingReply) error {
	for _, u := range reply.ToolUses {
		if err := r.CheckToolUse(u.Name, u.Input); err != nil {
			return fmt.Errorf("tool use %q: %w", u.Name, err)
		}
	}
	if len(reply.ToolUses) == 0 && len(r.Tools) > 0 && r.ToolChoiceMode() == ToolChoiceRequired {
		return errors.New(`the request's toolChoice is "required": the reply must use at least one tool`)
	}
	return nil
}

// Handle answers sampling/createMessage.
func (s *Sampler) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != mcp.MethodSamplingCreateMessage {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + jsonrpc.Clip(method)}
	}
	var req SamplingRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, invalidParams("sampling/createMessage params: %s", rawjson.DecodeProblem(err))
	}
	if err := s.check(params, &req); err != nil {
		return nil, err
	}
	switch s.Policy.Mode {
	case PolicyDecline:
		return nil, rejectError("User rejected sampling request (declined by the client's policy)")
	case PolicyFile:
		s.mu.Lock()
		r := s.answers[min(s.next, len(s.answers)-1)]
		s.next++
		s.mu.Unlock()
		return r, nil
	case PolicyPrompt:
		reply, err := asking(ctx, func() (SamplingReply, error) {
			return s.Person.Sample(ctx, &SamplingQuestion{Server: s.who(), View: s.View, Request: &req})
		})
		if errors.Is(err, io.EOF) {
			// The person dismissed the question or their input ended:
			// they rejected it (spec 2025-11-25: client/sampling, "Error
			// Handling"), which the server is told as such, not as a
			// failure of mcpx's.
			return nil, rejectError("User rejected sampling request (dismissed)")
		}
		if err != nil {
			return nil, err
		}
		if reply.Empty() {
			return nil, rejectError("User rejected sampling request")
		}
		if cerr := req.CheckReply(reply); cerr != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpx: the reply does not fit the request: " + cerr.Error()}
		}
		return s.result(reply), nil
	}
	return nil, fmt.Errorf("unknown sampling policy %q", s.Policy.Mode)
}

// check applies the spec's rules on the request
// (spec 2025-11-25: client/sampling, "Tools in Sampling", "Message Content
// Constraints", "Error Handling").
func (s *Sampler) check(params json.RawMessage, req *SamplingRequest) error {
	obj, _ := ParseObject(params)
	if !obj.Has("messages") {
		return invalidParams("sampling/createMessage: messages is required")
	}
	if !s.Tools && (obj.Has("tools") || obj.Has("toolChoice")) {
		return invalidParams("sampling/createMessage: tools and toolChoice need the sampling.tools capability, which mcpx did not declare")
	}
	var pendingUses []string
	for i, m := range req.Messages {
		blocks := ContentBlocks(m.Content)
		var uses, results []string
		others := 0
		for _, b := range blocks {
			var c struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"toolUseId"`
			}
			_ = json.Unmarshal(b, &c)
			switch c.Type {
			case "tool_use":
				uses = append(uses, c.ID)
			case "tool_result":
				results = append(results, c.ToolUseID)
			default:
				others++
			}
		}
		if len(results) > 0 && others > 0 {
			return invalidParams("sampling/createMessage: message %d mixes tool results with other content", i)
		}
		if len(pendingUses) > 0 {
			for _, id := range pendingUses {
				found := false
				for _, r := range results {
					found = found || r == id
				}
				if !found || m.Role != "user" {
					return invalidParams("Tool result missing in request: no result for tool use %s", jsonrpc.QuoteClipped(id))
				}
			}
		}
		pendingUses = nil
		if m.Role == "assistant" {
			pendingUses = uses
		}
	}
	return nil
}

// ContentBlocks returns a message's content as a list of blocks: the
// content of a sampling message (and of a tool result) is a single block
// or an array of them (spec 2025-11-25: client/sampling, "Messages").
func ContentBlocks(raw json.RawMessage) []json.RawMessage {
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, "[") {
		var blocks []json.RawMessage
		_ = json.Unmarshal(raw, &blocks)
		return blocks
	}
	if t == "" || t == "null" {
		return nil
	}
	return []json.RawMessage{raw}
}
