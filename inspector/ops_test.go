package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

type opResult struct {
	res  json.RawMessage
	warn []string
	err  error
}

func goOp(f func() (json.RawMessage, []string, error)) <-chan opResult {
	ch := make(chan opResult, 1)
	go func() {
		res, warn, err := f()
		ch <- opResult{res, warn, err}
	}()
	return ch
}

func opDone(t *testing.T, ch <-chan opResult) opResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatal("operation did not return")
	}
	panic("unreachable")
}

const toolsPage = `{"tools":[{"name":"get-sum","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"label":{"type":"string"}}}},{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}]}`

func TestToolArgumentsUsesTheToolsSchema(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ctx := context.Background()
	ch := goOp(func() (json.RawMessage, []string, error) {
		return s.ToolArguments(ctx, "get-sum", []string{"a=2", "b=3", "label=007"}, nil)
	})
	srv.reply(srv.nextRequest("tools/list"), toolsPage)
	r := opDone(t, ch)
	if r.err != nil || len(r.warn) != 0 || string(r.res) != `{"a":2,"b":3,"label":"007"}` {
		t.Errorf("ToolArguments = %s, %q, %v", r.res, r.warn, r.err)
	}

	// A tool the server does not list (in the list already fetched): typed
	// without a schema, with a warning.
	ch = goOp(func() (json.RawMessage, []string, error) {
		return s.ToolArguments(ctx, "missing", []string{"a=2", "z=012"}, nil)
	})
	r = opDone(t, ch)
	if r.err != nil || string(r.res) != `{"a":2,"z":"012"}` || len(r.warn) != 1 || !containsAll(r.warn[0], "missing", "tools/list") {
		t.Errorf("ToolArguments for an unlisted tool = %s, %q, %v", r.res, r.warn, r.err)
	}

	// No pairs: no tools/list round trip.
	args, warn, err := s.ToolArguments(ctx, "echo", nil, json.RawMessage(`{"message":"hi"}`))
	if err != nil || len(warn) != 0 || string(args) != `{"message":"hi"}` {
		t.Errorf("ToolArguments with --args only = %s, %q, %v", args, warn, err)
	}
	srv.quietUntil(mark(t, s))
}

func TestCallToolUnknownSuggestsNames(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := goOp(func() (json.RawMessage, []string, error) {
		res, err := s.CallTool(context.Background(), "get_sum", json.RawMessage(`{"a":1}`))
		return res, nil, err
	})
	req := srv.nextRequest("tools/call")
	if !jsonEqual(t, req.Params, []byte(`{"name":"get_sum","arguments":{"a":1}}`)) {
		t.Errorf("tools/call params = %s", req.Params)
	}
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32602,"message":"Unknown tool: get_sum"}}`)
	srv.reply(srv.nextRequest("tools/list"), toolsPage)
	r := opDone(t, ch)
	var nf *NotFoundError
	if !errors.As(r.err, &nf) {
		t.Fatalf("err = %v, want *NotFoundError", r.err)
	}
	if diff := cmp.Diff([]string{"get-sum"}, nf.Suggestions); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(r.err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("the server's error is not reachable through the NotFoundError: %v", r.err)
	}
	if !containsAll(r.err.Error(), "Unknown tool", "get-sum", "did you mean") {
		t.Errorf("message %q", r.err)
	}
}

func TestCallToolListedToolErrorStaysRPCError(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := goOp(func() (json.RawMessage, []string, error) {
		res, err := s.CallTool(context.Background(), "echo", nil)
		return res, nil, err
	})
	req := srv.nextRequest("tools/call")
	if string(req.Params) != `{"name":"echo"}` {
		t.Errorf("params = %s", req.Params)
	}
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32603,"message":"crashed"}}`)
	srv.reply(srv.nextRequest("tools/list"), toolsPage)
	r := opDone(t, ch)
	var nf *NotFoundError
	var rpcErr *jsonrpc.Error
	if errors.As(r.err, &nf) || !errors.As(r.err, &rpcErr) {
		t.Errorf("err = %v (%T): want the plain RPC error for a listed tool", r.err, r.err)
	}
}

func TestGetPromptAndComplete(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ctx := context.Background()
	tests := []struct {
		name    string
		method  string
		call    func() (json.RawMessage, error)
		want    string
		wantErr bool
	}{
		{"prompt with arguments", "prompts/get", func() (json.RawMessage, error) {
			return s.GetPrompt(ctx, "greet", json.RawMessage(`{"city":"Paris"}`))
		}, `{"name":"greet","arguments":{"city":"Paris"}}`, false},
		{"prompt without arguments", "prompts/get", func() (json.RawMessage, error) {
			return s.GetPrompt(ctx, "greet", json.RawMessage(`{}`))
		}, `{"name":"greet"}`, false},
		{"complete a prompt argument", "completion/complete", func() (json.RawMessage, error) {
			return s.Complete(ctx, CompletionRef{Prompt: "greet"}, "city", "Pa", nil)
		}, `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"city","value":"Pa"}}`, false},
		{"complete a template argument with context", "completion/complete", func() (json.RawMessage, error) {
			return s.Complete(ctx, CompletionRef{URI: "file:///{path}"}, "path", "", map[string]string{"root": "/"})
		}, `{"ref":{"type":"ref/resource","uri":"file:///{path}"},"argument":{"name":"path","value":""},"context":{"arguments":{"root":"/"}}}`, false},
		{"read a resource", "resources/read", func() (json.RawMessage, error) {
			return s.ReadResource(ctx, "file:///a")
		}, `{"uri":"file:///a"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := goOp(func() (json.RawMessage, []string, error) { r, err := tt.call(); return r, nil, err })
			req := srv.nextRequest(tt.method)
			if !jsonEqual(t, req.Params, []byte(tt.want)) {
				t.Errorf("params = %s, want %s", req.Params, tt.want)
			}
			// Results as the spec has them (a departure would be a warning).
			result := map[string]string{
				"prompts/get":         `{"messages":[]}`,
				"completion/complete": `{"completion":{"values":[]}}`,
				"resources/read":      `{"contents":[]}`,
			}[tt.method]
			srv.reply(req, result)
			if r := opDone(t, ch); r.err != nil || string(r.res) != result {
				t.Errorf("result = %s, %v", r.res, r.err)
			}
		})
	}
	for _, ref := range []CompletionRef{{}, {Prompt: "p", URI: "u"}} {
		if _, err := s.Complete(ctx, ref, "a", "", nil); err == nil {
			t.Errorf("Complete(%+v) succeeded", ref)
		}
	}
	srv.quietUntil(mark(t, s))
}

// completion/complete's errors name what was completed, and a prompt the
// server does not list gets the closest names it does, as prompts get's.
func TestCompleteUnknownPromptSuggestsNames(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := goOp(func() (json.RawMessage, []string, error) {
		res, err := s.Complete(context.Background(), CompletionRef{Prompt: "gret"}, "name", "", nil)
		return res, nil, err
	})
	req := srv.nextRequest("completion/complete")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32602,"message":"Prompt gret not found"}}`)
	srv.reply(srv.nextRequest("prompts/list"), `{"prompts":[{"name":"greet"},{"name":"summarize"}]}`)
	r := opDone(t, ch)
	var nf *NotFoundError
	if !errors.As(r.err, &nf) || !cmp.Equal(nf.Suggestions, []string{"greet"}) {
		t.Fatalf("err = %v, want a *NotFoundError suggesting greet", r.err)
	}
	if !strings.HasPrefix(r.err.Error(), `completion/complete "gret": server error -32602`) {
		t.Errorf("message %q", r.err)
	}

	// A template's: named, nothing else asked.
	ch = goOp(func() (json.RawMessage, []string, error) {
		res, err := s.Complete(context.Background(), CompletionRef{URI: "x://{a}"}, "a", "", nil)
		return res, nil, err
	})
	req = srv.nextRequest("completion/complete")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32602,"message":"no such template"}}`)
	if r := opDone(t, ch); r.err == nil || !strings.HasPrefix(r.err.Error(), `completion/complete "x://{a}": server error -32602`) {
		t.Errorf("err = %v", r.err)
	}
	srv.quietUntil(mark(t, s))
}

// A resource template read as it is listed is named as one (the
// templates are asked for only for a URI with a brace).
func TestReadResourceTemplateAsURI(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := goOp(func() (json.RawMessage, []string, error) {
		res, err := s.ReadResource(context.Background(), "a://{b}")
		return res, nil, err
	})
	req := srv.nextRequest("resources/read")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32002,"message":"Resource not found"}}`)
	srv.reply(srv.nextRequest("resources/list"), `{"resources":[]}`)
	srv.reply(srv.nextRequest("resources/templates/list"), `{"resourceTemplates":[{"name":"b","uriTemplate":"a://{b}"}]}`)
	r := opDone(t, ch)
	var nf *NotFoundError
	if !errors.As(r.err, &nf) || !nf.Template || !strings.Contains(r.err.Error(), `"a://{b}" is one of the server's resource templates`) {
		t.Fatalf("err = %v, want a *NotFoundError for a template", r.err)
	}
	srv.quietUntil(mark(t, s))

	// Refused with another code (server-everything's -32603): named as a
	// template all the same; but a URI no template is stays the server's
	// error alone.
	for _, tc := range []struct {
		uri      string
		template bool
	}{{"a://{b}", true}, {"a://{c}", false}} {
		ch = goOp(func() (json.RawMessage, []string, error) {
			res, err := s.ReadResource(context.Background(), tc.uri)
			return res, nil, err
		})
		req = srv.nextRequest("resources/read")
		srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32603,"message":"Unknown resource"}}`)
		srv.reply(srv.nextRequest("resources/list"), `{"resources":[]}`)
		srv.reply(srv.nextRequest("resources/templates/list"), `{"resourceTemplates":[{"name":"b","uriTemplate":"a://{b}"}]}`)
		r = opDone(t, ch)
		nf = nil
		if errors.As(r.err, &nf) != tc.template || (tc.template && !nf.Template) {
			t.Errorf("%s refused with -32603: err = %v, want a template's *NotFoundError: %v", tc.uri, r.err, tc.template)
		}
		srv.quietUntil(mark(t, s))
	}
}

func TestPrepareToolArgumentsValidates(t *testing.T) {
	s, srv, w := newTestSession(t, Options{})
	ctx := context.Background()
	const tools = `{"tools":[
		{"name":"weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"units":{"enum":["metric","imperial"]},"site":{"type":"string","format":"uri"}},"required":["city"]}},
		{"name":"broken","inputSchema":{"type":"object","properties":{"a":{"type":"no-such-type"}}}},
		{"name":"bare"}]}`
	listed := false
	prepare := func(name string, in ToolInput) opResult {
		t.Helper()
		ch := goOp(func() (json.RawMessage, []string, error) { return s.PrepareToolArguments(ctx, name, in) })
		if !listed {
			// Listed once: the session keeps the list.
			srv.reply(srv.nextRequest("tools/list"), tools)
			listed = true
		}
		return opDone(t, ch)
	}
	for _, c := range []struct {
		name     string
		tool     string
		in       ToolInput
		problems []string
	}{
		{"missing required", "weather", ToolInput{Validate: true}, []string{"missing property 'city'"}},
		{"outside the enum", "weather", ToolInput{Pairs: []string{"city=Paris", "units=kelvin"}, Validate: true}, []string{"at /units: value must be one of 'metric', 'imperial'"}},
		{"wrong type from --args", "weather", ToolInput{Base: json.RawMessage(`{"city":"Paris","days":"three"}`), Validate: true}, []string{"at /days: got string, want integer"}},
		{"two problems", "weather", ToolInput{Base: json.RawMessage(`{"days":1.5}`), Validate: true}, []string{"missing property 'city'", "at /days"}},
	} {
		r := prepare(c.tool, c.in)
		var ie *InvalidArgumentsError
		if !errors.As(r.err, &ie) || ie.Tool != c.tool {
			t.Fatalf("%s: err = %v, want an *InvalidArgumentsError", c.name, r.err)
		}
		if !containsAll(r.err.Error(), c.problems...) || len(ie.Problems) != len(c.problems) {
			t.Errorf("%s: %q, want the problems %q", c.name, ie.Problems, c.problems)
		}
	}
	// A number beyond float64 cannot be checked: said as such, by where it
	// is, not as arguments that do not match.
	for _, base := range []string{`{"city":"Paris","days":1e999}`, `{"city":"Paris","extra":[-1e400]}`} {
		r := prepare("weather", ToolInput{Base: json.RawMessage(base), Validate: true})
		var ne *NumberRangeError
		if !errors.As(r.err, &ne) || !containsAll(r.err.Error(), `tool "weather"`, ne.At+": "+ne.Number+" is out of the range") {
			t.Errorf("%s: err = %v, want a *NumberRangeError", base, r.err)
		}
	}
	if r := prepare("weather", ToolInput{Base: json.RawMessage(`{"city":"Paris","days":1e999}`)}); r.err != nil || string(r.res) != `{"city":"Paris","days":1e999}` {
		t.Errorf("without validation: %s, %v; want the arguments as given", r.res, r.err)
	}
	// So for a key=value pair: refused with validation, sent as the JSON
	// number written without.
	if r := prepare("weather", ToolInput{Pairs: []string{"city=Paris", "days=1e999"}, Validate: true}); !errors.As(r.err, new(*NumberRangeError)) {
		t.Errorf("days=1e999: err = %v, want a *NumberRangeError", r.err)
	}
	if r := prepare("weather", ToolInput{Pairs: []string{"city=Paris", "days=1e999"}}); r.err != nil || string(r.res) != `{"city":"Paris","days":1e999}` {
		t.Errorf("days=1e999 without validation: %s, %v; want it sent as written", r.res, r.err)
	}
	for _, c := range []struct {
		name, tool string
		in         ToolInput
		warning    string
	}{
		{"valid", "weather", ToolInput{Pairs: []string{"city=Paris", "days=3"}, Validate: true}, ""},
		{"formats are not asserted", "weather", ToolInput{Pairs: []string{"city=Paris", "site=not a uri"}, Validate: true}, ""},
		{"not asked to validate", "weather", ToolInput{Pairs: []string{"days=3"}}, ""},
		{"a tool not listed", "nosuch", ToolInput{Validate: true}, "not in the server's tools/list"},
		{"a schema that does not compile", "broken", ToolInput{Validate: true}, "the arguments are not checked"},
		// The server's departure, not the caller's: the session's.
		{"no schema", "bare", ToolInput{Validate: true}, ""},
	} {
		r := prepare(c.tool, c.in)
		if r.err != nil {
			t.Errorf("%s: %v", c.name, r.err)
		}
		if c.warning == "" && len(r.warn) > 0 || c.warning != "" && (len(r.warn) != 1 || !containsAll(r.warn[0], c.warning)) {
			t.Errorf("%s: warnings %q, want %q", c.name, r.warn, c.warning)
		}
	}
	w.expect(`tool "bare" has no inputSchema; its arguments are not checked`)
}
