package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// sampler returns a sampler for policy, declaring sampling.tools; person
// answers the prompt policy.
func sampler(t *testing.T, policy string, person Person) *Sampler {
	t.Helper()
	p, err := ParseSamplingPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(context.Background(), p, person)
	if err != nil {
		t.Fatal(err)
	}
	(&ClientFeatures{Sampler: s}).Capabilities() // declares sampling.tools
	return s
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
	s := sampler(t, "file:"+one, nil)
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
	s = sampler(t, "file:"+many, nil)
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
		if _, err := NewSampler(context.Background(), SamplingPolicy{Mode: PolicyFile, File: dir + "/" + name}, nil); err == nil {
			t.Errorf("%s: a bad reply file must be refused up front", name)
		}
	}
}

func TestSamplingDecline(t *testing.T) {
	s := sampler(t, "decline", nil)
	_, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(samplingParams))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -1 {
		t.Fatalf("want the spec's user-rejected error (-1), got %v", err)
	}
}

const toolParams = `{"messages":[{"role":"user","content":{"type":"text","text":"Weather in Paris?"}}],
 "tools":[{"name":"get_weather","description":"Get current weather","inputSchema":{"type":"object"}}],
 "toolChoice":{"mode":"auto"},"maxTokens":1000}`

// Tools in a sampling request need the sampling.tools capability, and a
// tool use must be answered by matching tool results only (spec
// 2025-11-25: client/sampling, "Tools in Sampling").
func TestSamplingToolRules(t *testing.T) {
	// Without the sampling.tools capability (2025-06-18), tools are refused.
	old := sampler(t, "decline", nil)
	(&ClientFeatures{Version: "2025-06-18", Sampler: old}).Capabilities()
	_, err := old.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(toolParams))
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
		s := sampler(t, "decline", nil)
		_, err := s.Handle(testCtx(t), "sampling/createMessage", json.RawMessage(params))
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: want -32602, got %v", name, err)
		}
	}
}
