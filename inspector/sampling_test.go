package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
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

// A sampling request asking for includeContext "thisServer" or
// "allServers", deprecated values servers should not use unless the
// client declares sampling.context (spec 2026-07-28: client/sampling,
// "Capabilities"; deprecated), is warned about once, in either era, and
// answered all the same; "none", or sampling.context declared, is not.
func TestSamplingIncludeContextUndeclared(t *testing.T) {
	const warning = `asks for includeContext "thisServer", a deprecated value that servers should not use unless the client declares sampling.context`
	params := func(ctx string) string {
		return `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5,"includeContext":"` + ctx + `"}`
	}
	decline := map[string]RequestHandler{mcp.MethodSamplingCreateMessage: Adapt((&Sampler{Policy: SamplingPolicy{Mode: PolicyDecline}}).Handle)}

	t.Run("legacy", func(t *testing.T) {
		for _, c := range []struct {
			caps string
			warn bool
		}{{`{"sampling":{}}`, true}, {`{"sampling":{"context":{}}}`, false}} {
			ch, srv, w := startConnect(t, Options{Lifecycle: &Legacy{Capabilities: json.RawMessage(c.caps)}, Handlers: decline})
			srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25"))
			srv.next()
			if r := waitConnect(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
			for i, ic := range []string{"none", "thisServer", "thisServer"} {
				id := fmt.Sprintf(`"s%d"`, i)
				srv.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"sampling/createMessage","params":` + params(ic) + `}`)
				if m := srv.next(); m.ID.String() != id || m.Error == nil || m.Error.Code != -1 {
					t.Fatalf("answered with %s, want the policy's refusal", m.Raw)
				}
			}
			if c.warn {
				w.expect(warning, `spec client/sampling, "Capabilities"`)
			}
			w.none()
		}
	})

	// Before 2025-11-25 the values were not deprecated and there was no
	// sampling.context to declare: a server of 2025-06-18 that asks for
	// them departs from nothing (--strict counted it).
	t.Run("before 2025-11-25", func(t *testing.T) {
		for _, v := range []string{"2025-06-18", "2024-11-05"} {
			ch, srv, w := startConnect(t, Options{Lifecycle: &Legacy{Capabilities: json.RawMessage(`{"sampling":{}}`)}, Handlers: decline})
			srv.reply(srv.nextRequest("initialize"), initResult(v))
			srv.next()
			if r := waitConnect(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
			srv.send(`{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":` + params("allServers") + `}`)
			if m := srv.next(); m.Error == nil || m.Error.Code != -1 {
				t.Fatalf("answered with %s, want the policy's refusal", m.Raw)
			}
			w.none()
		}
	})

	t.Run("modern", func(t *testing.T) {
		s, srv, w, _ := newModernSession(t, &Modern{Capabilities: json.RawMessage(`{"sampling":{}}`), OnNote: func(string) {}}, false, Options{Handlers: decline})
		openModern(t, s, srv)
		ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "ask"})
		srv.reply(srv.nextRequest("tools/call"), `{"resultType":"input_required","inputRequests":{"llm":{"method":"sampling/createMessage","params":`+params("thisServer")+`}},"requestState":"s"}`)
		srv.reply(srv.nextRequest("tools/call"), `{"resultType":"complete","content":[]}`)
		if r := result(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
		w.expect(warning)
		w.none()
	})
}
