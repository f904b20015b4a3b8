package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

func sampler(t *testing.T, policy, input string) (*Sampler, *bytes.Buffer) {
	t.Helper()
	p, err := ParseSamplingPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s, err := NewSampler(p, NewTerminalPerson(NewPrompter(strings.NewReader(input), &out, true), nil))
	if err != nil {
		t.Fatal(err)
	}
	(&ClientFeatures{Sampler: s}).Capabilities() // declares sampling.tools
	return s, &out
}

const samplingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],
 "modelPreferences":{"hints":[{"name":"claude-3-sonnet"}],"intelligencePriority":0.8,"speedPriority":0.5},
 "systemPrompt":"You are a helpful assistant.","maxTokens":100,"temperature":0.7}`

func TestSamplingFile(t *testing.T) {
	dir := t.TempDir()
	one := dir + "/one.json"
	if err := writeFile(one, `{"content":{"type":"text","text":"Paris."}}`); err != nil {
		t.Fatal(err)
	}
	s, _ := sampler(t, "file:"+one, "")
	raw, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":{"type":"text","text":"Paris."},"role":"assistant","model":"mcpx-file"}`; string(raw) != want {
		t.Errorf("got %s want %s", raw, want)
	}

	// An array is used in turn; the last answer repeats.
	many := dir + "/many.json"
	if err := writeFile(many, `[{"role":"assistant","model":"m","content":{"type":"text","text":"first"}},{"role":"assistant","model":"m","content":{"type":"text","text":"second"}}]`); err != nil {
		t.Fatal(err)
	}
	s, _ = sampler(t, "file:"+many, "")
	var got []string
	for range 3 {
		raw, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Content struct{ Text string } }
		_ = json.Unmarshal(raw, &r)
		got = append(got, r.Content.Text)
	}
	if strings.Join(got, ",") != "first,second,second" {
		t.Errorf("answers in turn: %v", got)
	}

	for name, data := range map[string]string{"nocontent.json": `{"role":"assistant"}`, "notjson.json": `hello`, "empty.json": `[]`} {
		if err := writeFile(dir+"/"+name, data); err != nil {
			t.Fatal(err)
		}
		if _, err := NewSampler(SamplingPolicy{Mode: PolicyFile, File: dir + "/" + name}, nil); err == nil {
			t.Errorf("%s: a bad reply file must be refused up front", name)
		}
	}
}

func TestSamplingDecline(t *testing.T) {
	s, _ := sampler(t, "decline", "")
	_, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -1 {
		t.Fatalf("want the spec's user-rejected error (-1), got %v", err)
	}
}

func TestSamplingPrompt(t *testing.T) {
	s, out := sampler(t, "prompt", "The capital\nis Paris.\n\n")
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
	if _, err := NewSampler(SamplingPolicy{Mode: PolicyPrompt}, nil); err == nil {
		t.Error("prompt without a person must be refused")
	}
}

const toolParams = `{"messages":[{"role":"user","content":{"type":"text","text":"Weather in Paris?"}}],
 "tools":[{"name":"get_weather","description":"Get current weather","inputSchema":{"type":"object"}}],
 "toolChoice":{"mode":"auto"},"maxTokens":1000}`

func TestSamplingTools(t *testing.T) {
	s, out := sampler(t, "prompt", "/tool get_weather {\"city\":\"Paris\"}\n\n")
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

	// Without the sampling.tools capability (2025-06-18), tools are refused.
	old, _ := sampler(t, "decline", "")
	(&ClientFeatures{Version: "2025-06-18", Sampler: old}).Capabilities()
	_, err = old.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(toolParams))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("tools without the capability: want -32602, got %v", err)
	}

	// A tool use must be answered by matching tool results only.
	bad := map[string]string{
		"missing result": `{"messages":[{"role":"user","content":{"type":"text","text":"q"}},
			{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"w","input":{}},{"type":"tool_use","id":"b","name":"w","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","toolUseId":"a","content":[]}]}],"maxTokens":10}`,
		"mixed content": `{"messages":[{"role":"user","content":[{"type":"text","text":"here"},{"type":"tool_result","toolUseId":"a","content":[]}]}],"maxTokens":10}`,
	}
	for name, params := range bad {
		s, _ := sampler(t, "decline", "")
		_, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(params))
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: want -32602, got %v", name, err)
		}
	}
	good := `{"messages":[{"role":"user","content":{"type":"text","text":"q"}},
		{"role":"assistant","content":{"type":"tool_use","id":"a","name":"w","input":{}}},
		{"role":"user","content":{"type":"tool_result","toolUseId":"a","content":[{"type":"text","text":"18C"}]}}],"maxTokens":10}`
	s, out = sampler(t, "prompt", "Mild.\n\n")
	if _, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(good)); err != nil {
		t.Errorf("a balanced tool loop was refused: %v", err)
	}
	if !strings.Contains(out.String(), "[tool result for a] 18C") || !strings.Contains(out.String(), "[tool use w id=a] {}") {
		t.Errorf("tool blocks not rendered:\n%s", out)
	}
}
