package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// toolsHandshake plays a view that declares appCapabilities.tools
// through the handshake and the tool input.
func toolsHandshake(t *testing.T, p *fakePage, id string) {
	t.Helper()
	p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/sandbox-proxy-ready","params":{}}`)
	p.rpc() // sandbox-resource-ready
	p.post(id, `{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"protocolVersion":"2026-01-26","appInfo":{"name":"t","version":"1"},"appCapabilities":{"tools":{"listChanged":true}}}}`)
	if m := p.rpc(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("ui/initialize answer: %v", m)
	}
	p.post(id, `{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}`)
	if m := p.rpc(); m["method"] != methodToolInput {
		t.Fatalf("after initialized: %v", m)
	}
}

// expectRequest reads the host's next message, which must be a request
// of method; it returns the request.
func expectRequest(t *testing.T, p *fakePage, method string) map[string]any {
	t.Helper()
	m := p.rpc()
	if m["method"] != method || m["id"] == nil {
		t.Fatalf("want a %s request, got %v", method, m)
	}
	return m
}

func answer(p *fakePage, id string, req map[string]any, result string) {
	p.post(id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, req["id"], result))
}

func toolNames(tools []AppTool) string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return strings.Join(names, ",")
}

// App-provided tools (draft spec "App-Provided Tools"): a view that
// declares appCapabilities.tools is sent tools/list once initialized, the
// program is told its tools, a tool it offers is called with tools/call
// and its result returned; notifications/tools/list_changed lists them
// again; a tool it does not offer is not called.
func TestAppTools(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	told := make(chan []AppTool, 8)
	o.Handlers.ViewTools = func(v ViewInfo, tools []AppTool) { told <- tools }
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	toolsHandshake(t, p, id)
	wantTold := func(names string) {
		t.Helper()
		select {
		case tools := <-told:
			if toolNames(tools) != names {
				t.Fatalf("told the tools %q, want %q", toolNames(tools), names)
			}
		case <-time.After(testwait.Bound):
			t.Fatalf("not told the tools %q", names)
		}
	}

	req := expectRequest(t, p, methodToolsList)
	answer(p, id, req, `{"tools":[{"name":"get_board_state","description":"Get the board","inputSchema":{"type":"object"}},
		{"name":"make_move","inputSchema":{"type":"object","properties":{"position":{"type":"number"}}}}]}`)
	wantTold("get_board_state,make_move")
	if got := toolNames(v.Tools()); got != "get_board_state,make_move" {
		t.Errorf("Tools() = %q", got)
	}

	type called struct {
		res json.RawMessage
		err error
	}
	done := make(chan called, 1)
	go func() {
		res, err := v.CallTool(context.Background(), "make_move", json.RawMessage(`{"position":4}`))
		done <- called{res, err}
	}()
	req = expectRequest(t, p, methodToolsCall)
	if params := fmt.Sprint(req["params"]); params != "map[arguments:map[position:4] name:make_move]" {
		t.Errorf("tools/call params %s", params)
	}
	answer(p, id, req, `{"content":[{"type":"text","text":"moved"}]}`)
	select {
	case c := <-done:
		if c.err != nil || !strings.Contains(string(c.res), `"moved"`) {
			t.Errorf("CallTool: %s, %v", c.res, c.err)
		}
	case <-time.After(testwait.Bound):
		t.Fatal("CallTool did not return")
	}

	// The view's error answer.
	go func() {
		res, err := v.CallTool(context.Background(), "get_board_state", nil)
		done <- called{res, err}
	}()
	req = expectRequest(t, p, methodToolsCall)
	p.post(id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"error":{"code":-32602,"message":"no board"}}`, req["id"]))
	var rpc *Error
	if c := <-done; !errors.As(c.err, &rpc) || rpc.Message != "no board" {
		t.Errorf("CallTool of an erring tool: %v", c.err)
	}

	if _, err := v.CallTool(context.Background(), "format_disk", nil); !errors.Is(err, ErrNoSuchTool) {
		t.Errorf("CallTool of a tool not offered: %v", err)
	}

	// list_changed: listed again.
	p.post(id, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	req = expectRequest(t, p, methodToolsList)
	answer(p, id, req, `{"tools":[{"name":"reset_game","inputSchema":{"type":"object"}}]}`)
	wantTold("reset_game")
	if _, err := v.CallTool(context.Background(), "make_move", nil); !errors.Is(err, ErrNoSuchTool) {
		t.Errorf("CallTool of a tool no longer offered: %v", err)
	}

	// A malformed list is a problem, and keeps the last list.
	p.post(id, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	req = expectRequest(t, p, methodToolsList)
	answer(p, id, req, `{"tools":[{"description":"no name"}]}`)
	rec.waitFor(t, "the malformed list reported", func(r *recorder) bool {
		return r.hasProblem(ErrMalformed, "has no name")
	})
	if got := toolNames(v.Tools()); got != "reset_game" {
		t.Errorf("after a malformed list, Tools() = %q", got)
	}
}

// A view offers at most 50 tools: the others are left out, and said so.
func TestAppToolsBounded(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	told := make(chan []AppTool, 1)
	o.Handlers.ViewTools = func(v ViewInfo, tools []AppTool) { told <- tools }
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	toolsHandshake(t, p, id)
	var tools []string
	for i := range 60 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i))
	}
	answer(p, id, expectRequest(t, p, methodToolsList), `{"tools":[`+strings.Join(tools, ",")+`]}`)
	select {
	case got := <-told:
		if len(got) != maxAppTools {
			t.Errorf("told %d tools, want %d", len(got), maxAppTools)
		}
	case <-time.After(testwait.Bound):
		t.Fatal("not told the tools")
	}
	rec.waitFor(t, "the tools left out reported", func(r *recorder) bool {
		return r.hasProblem(ErrRefused, "more than 50 tools")
	})
}

// A view that declares no tools is not listed, and its list_changed is
// taken quietly.
func TestNoAppTools(t *testing.T) {
	rec, v, p, id := startedView(t)
	p.post(id, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if m := p.rpc(); m["id"] != float64(9) {
		t.Fatalf("after list_changed and ping: %v", m)
	}
	if tools := v.Tools(); tools != nil {
		t.Errorf("Tools() = %v", tools)
	}
	if _, err := v.CallTool(context.Background(), "x", nil); !errors.Is(err, ErrNoSuchTool) {
		t.Errorf("CallTool: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.problems) > 0 {
		t.Errorf("problems %v", rec.problems)
	}
}
