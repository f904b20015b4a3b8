package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

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
}

// ParseSamplingPolicy parses --on-sampling.
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
	// Prompter asks the person (policy prompt).
	Prompter *Prompter
	// Tools is true when the sampling.tools capability is declared, so
	// requests may carry tools and toolChoice.
	Tools bool
	// Who names the server for the person ("server-everything 1.0").
	Who func() string

	mu      sync.Mutex
	answers []json.RawMessage // policy file: results used in turn, the last repeating
	next    int
}

// NewSampler checks the policy and, for file:PATH, reads and checks the file
// now so that a mistake is reported before the server is started.
func NewSampler(p SamplingPolicy, prompter *Prompter) (*Sampler, error) {
	s := &Sampler{Policy: p, Prompter: prompter}
	switch p.Mode {
	case PolicyPrompt:
		if !prompter.Interactive() {
			return nil, fmt.Errorf("--on-sampling prompt needs a terminal on stdin and stderr; use decline or file:PATH")
		}
	case PolicyFile:
		answers, err := LoadSamplingFile(p.File)
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
	return &Sampler{Policy: s.Policy, Prompter: s.Prompter, Tools: s.Tools, Who: s.Who, answers: s.answers}
}

// LoadSamplingFile reads a CreateMessageResult, or an array of them to be
// used in turn (for multi-turn tool loops; the last one repeats). Missing
// role and model are filled in ("assistant", "mcpx-file").
func LoadSamplingFile(name string) ([]json.RawMessage, error) {
	data, err := os.ReadFile(name)
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
	Tools            []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tools"`
	ToolChoice *struct {
		Mode string `json:"mode"`
	} `json:"toolChoice"`
}

// Handle answers sampling/createMessage.
func (s *Sampler) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != mcp.MethodSamplingCreateMessage {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + method}
	}
	var req SamplingRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, invalidParams("sampling/createMessage params: %v", err)
	}
	if err := s.check(params, &req); err != nil {
		return nil, err
	}
	switch s.Policy.Mode {
	case PolicyDecline:
		return nil, rejectError("User rejected sampling request (mcpx --on-sampling decline)")
	case PolicyFile:
		s.mu.Lock()
		r := s.answers[min(s.next, len(s.answers)-1)]
		s.next++
		s.mu.Unlock()
		return r, nil
	case PolicyPrompt:
		return s.prompt(ctx, &req)
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
		blocks := contentBlocks(m.Content)
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
					return invalidParams("Tool result missing in request: no result for tool use %q", id)
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

// contentBlocks returns a message's content as a list of blocks (content
// is a single block or an array of them).
func contentBlocks(raw json.RawMessage) []json.RawMessage {
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

// prompt shows the request and asks the person for the reply.
func (s *Sampler) prompt(ctx context.Context, req *SamplingRequest) (json.RawMessage, error) {
	p := s.Prompter
	end, err := p.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	who := "the server"
	if s.Who != nil {
		who = s.Who()
	}
	p.Println("")
	p.Println(fmt.Sprintf("── %s asks for an LLM completion (sampling/createMessage) ──", EscapeLine(who)))
	p.Printf("%s", RenderSamplingRequest(req))
	p.Println("Type the assistant's reply; end it with an empty line. An empty reply declines.")
	if len(req.Tools) > 0 {
		p.Println(`A line "/tool NAME {json input}" answers with a tool use instead of text.`)
	}
	var lines []string
	var uses []map[string]any
	for {
		line, err := p.ReadLine(ctx, "> ")
		if err != nil {
			if errors.Is(err, ErrNoTerminal) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrDismissed) {
				return nil, err
			}
			break // end of input ends the reply
		}
		if line == "" {
			break
		}
		if rest, ok := strings.CutPrefix(line, "/tool "); ok && len(req.Tools) > 0 {
			name, input, _ := strings.Cut(strings.TrimSpace(rest), " ")
			if strings.TrimSpace(input) == "" {
				input = "{}"
			}
			if !json.Valid([]byte(input)) {
				p.Println("  the tool input must be JSON, e.g. /tool get_weather {\"city\":\"Paris\"}")
				continue
			}
			uses = append(uses, map[string]any{
				"type": "tool_use", "id": fmt.Sprintf("mcpx_tool_%d", len(uses)+1),
				"name": name, "input": json.RawMessage(input),
			})
			continue
		}
		lines = append(lines, line)
	}
	text := strings.Join(lines, "\n")
	if text == "" && len(uses) == 0 {
		p.Println("(declined)")
		return nil, rejectError("User rejected sampling request")
	}
	res := map[string]any{"role": "assistant", "model": "mcpx-human", "stopReason": "endTurn"}
	if len(uses) > 0 {
		var blocks []any
		if text != "" {
			blocks = append(blocks, map[string]string{"type": "text", "text": text})
		}
		for _, u := range uses {
			blocks = append(blocks, u)
		}
		res["content"] = blocks
		res["stopReason"] = "toolUse"
	} else {
		res["content"] = map[string]string{"type": "text", "text": text}
	}
	return marshalRaw(res), nil
}

// RenderSamplingRequest describes a sampling request for a person: system
// prompt, model preferences, limits, tools and every message.
func RenderSamplingRequest(req *SamplingRequest) string {
	var b strings.Builder
	if req.SystemPrompt != "" {
		fmt.Fprintf(&b, "System prompt: %s\n", Escape(req.SystemPrompt))
	}
	if prefs := describeModelPreferences(req.ModelPreferences); prefs != "" {
		fmt.Fprintf(&b, "Model preferences: %s\n", prefs)
	}
	var limits []string
	if req.MaxTokens != nil {
		limits = append(limits, fmt.Sprintf("max tokens %d", *req.MaxTokens))
	}
	if req.Temperature != nil {
		limits = append(limits, fmt.Sprintf("temperature %s", num(*req.Temperature)))
	}
	if len(req.StopSequences) > 0 {
		q := make([]string, len(req.StopSequences))
		for i, s := range req.StopSequences {
			q[i] = fmt.Sprintf("%q", s)
		}
		limits = append(limits, "stop at "+EscapeLine(strings.Join(q, ", ")))
	}
	if req.IncludeContext != "" && req.IncludeContext != "none" {
		limits = append(limits, "include context "+EscapeLine(req.IncludeContext))
	}
	if len(limits) > 0 {
		fmt.Fprintf(&b, "Limits: %s\n", strings.Join(limits, ", "))
	}
	if len(req.Tools) > 0 {
		var names []string
		for _, t := range req.Tools {
			n := EscapeLine(t.Name)
			if t.Description != "" {
				n += " (" + firstLine(t.Description) + ")"
			}
			names = append(names, n)
		}
		choice := "auto"
		if req.ToolChoice != nil && req.ToolChoice.Mode != "" {
			choice = req.ToolChoice.Mode
		}
		fmt.Fprintf(&b, "Tools (choice %s): %s\n", EscapeLine(choice), strings.Join(names, "; "))
	}
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "[%s]\n", EscapeLine(m.Role))
		for _, blk := range contentBlocks(m.Content) {
			b.WriteString(indent(describeBlock(blk), "  "))
		}
	}
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// describeBlock renders one sampling content block as text.
func describeBlock(raw json.RawMessage) string {
	var c struct {
		Type      string            `json:"type"`
		Text      string            `json:"text"`
		Data      string            `json:"data"`
		MimeType  string            `json:"mimeType"`
		ID        string            `json:"id"`
		Name      string            `json:"name"`
		Input     json.RawMessage   `json:"input"`
		ToolUseID string            `json:"toolUseId"`
		Content   []json.RawMessage `json:"content"`
		IsError   bool              `json:"isError"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return EscapeLine(string(raw))
	}
	switch c.Type {
	case "text":
		return Escape(c.Text)
	case "image", "audio":
		return fmt.Sprintf("[%s: %s, %s]", c.Type, EscapeLine(c.MimeType), HumanSize(int64(len(c.Data)*3/4)))
	case "tool_use":
		return fmt.Sprintf("[tool use %s id=%s] %s", EscapeLine(c.Name), EscapeLine(c.ID), EscapeLine(compactString(c.Input)))
	case "tool_result":
		var parts []string
		for _, inner := range c.Content {
			parts = append(parts, describeBlock(inner))
		}
		head := fmt.Sprintf("[tool result for %s]", EscapeLine(c.ToolUseID))
		if c.IsError {
			head = fmt.Sprintf("[tool error for %s]", EscapeLine(c.ToolUseID))
		}
		return head + " " + strings.Join(parts, " ")
	}
	return fmt.Sprintf("[%s] %s", EscapeLine(c.Type), EscapeLine(compactString(raw)))
}

func describeModelPreferences(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var mp struct {
		Hints []struct {
			Name string `json:"name"`
		} `json:"hints"`
		Cost         *float64 `json:"costPriority"`
		Speed        *float64 `json:"speedPriority"`
		Intelligence *float64 `json:"intelligencePriority"`
	}
	if json.Unmarshal(raw, &mp) != nil {
		return EscapeLine(string(raw))
	}
	var parts []string
	if len(mp.Hints) > 0 {
		var h []string
		for _, x := range mp.Hints {
			h = append(h, EscapeLine(x.Name))
		}
		parts = append(parts, "hints "+strings.Join(h, ", "))
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"cost", mp.Cost}, {"speed", mp.Speed}, {"intelligence", mp.Intelligence}} {
		if p.v != nil {
			parts = append(parts, fmt.Sprintf("%s %s", p.name, num(*p.v)))
		}
	}
	return strings.Join(parts, "; ")
}
