package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// catalogSession connects to a fake server declaring caps.
func catalogSession(t *testing.T, caps string) (*Session, *fakeServer) {
	t.Helper()
	ch, srv, _ := startConnect(t, Options{})
	init := srv.nextRequest("initialize")
	srv.reply(init, `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"srv","version":"1"}}`)
	srv.next() // notifications/initialized
	r := waitConnect(t, ch)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.s, srv
}

// modernCatalogSession is catalogSession in the 2026-07-28 era.
func modernCatalogSession(t *testing.T) (*Session, *fakeServer) {
	t.Helper()
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{})
	openModern(t, s, srv)
	return s, srv
}

type toolsResult struct {
	tools []ToolInfo
	err   error
}

func TestCatalogCachesAndRefreshes(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{"listChanged":true},"completions":{}}`)
	c := NewCatalog(s)
	ctx := context.Background()

	get := func() <-chan toolsResult {
		ch := make(chan toolsResult, 1)
		go func() {
			tools, err := c.Tools(ctx)
			ch <- toolsResult{tools, err}
		}()
		return ch
	}
	names := func(r toolsResult) []string {
		var out []string
		for _, t := range r.tools {
			out = append(out, t.Name)
		}
		return out
	}

	// Two callers, one request (with pagination followed).
	a, b := get(), get()
	req := srv.nextRequest("tools/list")
	srv.reply(req, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`)
	req = srv.nextRequest("tools/list")
	srv.reply(req, `{"tools":[{"name":"add"}]}`)
	for _, ch := range []<-chan toolsResult{a, b} {
		r := <-ch
		if r.err != nil || !cmp.Equal(names(r), []string{"echo", "add"}) {
			t.Fatalf("tools %v, %v", names(r), r.err)
		}
	}
	// Cached: nothing is sent.
	if r := <-get(); !cmp.Equal(names(r), []string{"echo", "add"}) {
		t.Fatalf("cached tools %v", names(r))
	}
	srv.quietUntil(mark(t, s))

	// A list change makes it stale; the next use fetches it again.
	if !c.Notify(&jsonrpc.Message{Method: "notifications/tools/list_changed"}) {
		t.Fatal("Notify did not recognize a list change")
	}
	if c.Notify(&jsonrpc.Message{Method: "notifications/message"}) {
		t.Fatal("Notify took a log message for a list change")
	}
	ch := get()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"echo2"}]}`)
	if r := <-ch; !cmp.Equal(names(r), []string{"echo2"}) {
		t.Fatalf("refreshed tools %v", names(r))
	}

	// Lists the server does not declare are never asked for.
	ps, err := c.Prompts(ctx)
	if err != nil || ps != nil {
		t.Errorf("prompts %v, %v", ps, err)
	}
	srv.quietUntil(mark(t, s))

	// A tool that is not listed: close names.
	_, err = c.Tool(ctx, "ecoh2")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !cmp.Equal(nf.Suggestions, []string{"echo2"}) {
		t.Errorf("Tool(ecoh2): %v", err)
	}
	// Its text says once that the list lacks it.
	if want := `tools/list has no tool "ecoh2" (did you mean echo2?)`; err == nil || err.Error() != want {
		t.Errorf("Tool(ecoh2): %v, want %s", err, want)
	}
}

// TestCatalogIncompleteList: a list that stopped early gives completion
// the items it read, and Tool a tool among them; its error is kept for
// the others.
func TestCatalogIncompleteList(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{}}`)
	c := NewCatalog(s)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	ch := make(chan toolsResult, 1)
	go func() {
		tools, err := c.Tools(ctx)
		ch <- toolsResult{tools, err}
	}()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"echo"}],"nextCursor":"p2"}`)
	req := srv.nextRequest("tools/list")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32603,"message":"down"}}`)
	r := <-ch
	var inc *IncompleteListError
	if !errors.As(r.err, &inc) || len(r.tools) != 1 || r.tools[0].Name != "echo" {
		t.Fatalf("Tools = %v, %v; want echo and the list's error", r.tools, r.err)
	}
	// Remembered (until the next change): nothing more is sent.
	if tool, err := c.Tool(ctx, "echo"); err != nil || tool.Name != "echo" {
		t.Errorf("Tool(echo) = %v, %v", tool, err)
	}
	if _, err := c.Tool(ctx, "add"); !errors.As(err, &inc) {
		t.Errorf("Tool(add): %v, want the list's error", err)
	}
	srv.quietUntil(mark(t, s))
}

func TestCatalogAutoRefresh(t *testing.T) {
	s, srv := catalogSession(t, `{"prompts":{"listChanged":true},"resources":{"listChanged":true}}`)
	c := NewCatalog(s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.AutoRefresh(ctx)
	c.Prefetch(ctx)
	seen := map[string]*jsonrpc.Message{}
	for range 3 {
		m := srv.next()
		seen[m.Method] = m
	}
	srv.reply(seen["prompts/list"], `{"prompts":[{"name":"greet","arguments":[{"name":"name","required":true},{"name":"style"}]}]}`)
	srv.reply(seen["resources/list"], `{"resources":[{"uri":"test://a","name":"a"}]}`)
	srv.reply(seen["resources/templates/list"], `{"resourceTemplates":[{"uriTemplate":"test://greet/{name}","name":"g"}]}`)

	ps, err := c.Prompts(ctx)
	want := []PromptInfo{{Name: "greet", Args: []PromptArg{{Name: "name", Required: true}, {Name: "style"}}}}
	if err != nil || !cmp.Equal(ps, want) {
		t.Errorf("prompts %+v, %v", ps, err)
	}
	rs, _ := c.Resources(ctx)
	ts, _ := c.Templates(ctx)
	if !cmp.Equal(rs, []ResourceInfo{{URI: "test://a", Name: "a"}}) || !cmp.Equal(ts, []ResourceInfo{{URI: "test://greet/{name}", Name: "g"}}) {
		t.Errorf("resources %v, templates %v", rs, ts)
	}

	// A resources list change refetches both resource lists at once.
	c.Notify(&jsonrpc.Message{Method: "notifications/resources/list_changed"})
	got := map[string]bool{}
	for range 2 {
		m := srv.next()
		got[m.Method] = true
		key := map[string]string{"resources/list": "resources", "resources/templates/list": "resourceTemplates"}[m.Method]
		srv.reply(m, `{"`+key+`":[]}`)
	}
	if !got["resources/list"] || !got["resources/templates/list"] {
		t.Errorf("refetched %v", got)
	}

	// No completions declared: nothing asked.
	vals, err := c.CompleteValues(ctx, CompletionRef{Prompt: "greet"}, "name", "a", nil)
	if vals != nil || err != nil {
		t.Errorf("CompleteValues = %v, %v", vals, err)
	}
	srv.quietUntil(mark(t, s))
}

func TestCatalogCompleteValues(t *testing.T) {
	s, srv := catalogSession(t, `{"prompts":{},"completions":{}}`)
	c := NewCatalog(s)
	ch := make(chan []string, 1)
	go func() {
		v, _ := c.CompleteValues(context.Background(), CompletionRef{Prompt: "code-review"}, "code", "fm", map[string]string{"language": "go"})
		ch <- v
	}()
	req := srv.nextRequest("completion/complete")
	if !jsonEqual(t, req.Params, []byte(`{"ref":{"type":"ref/prompt","name":"code-review"},"argument":{"name":"code","value":"fm"},"context":{"arguments":{"language":"go"}}}`)) {
		t.Errorf("params %s", req.Params)
	}
	srv.reply(req, `{"completion":{"values":["fmt.Println(1)"],"total":1}}`)
	if v := <-ch; !cmp.Equal(v, []string{"fmt.Println(1)"}) {
		t.Errorf("values %v", v)
	}
}

// A 2024-11-05 server cannot declare completions (the capability came in
// 2025-03-26) but may answer completion/complete: the catalog asks it, and
// stops asking once it answers "method not found". A 2025-03-26 server
// that does not declare completions is not asked.
func TestCatalogCompleteBeforeTheCapability(t *testing.T) {
	open := func(version string) (*Session, *fakeServer) {
		ch, srv, _ := startConnect(t, Options{})
		srv.reply(srv.nextRequest("initialize"), `{"protocolVersion":"`+version+`","capabilities":{"prompts":{}},"serverInfo":{"name":"srv","version":"1"}}`)
		srv.next() // notifications/initialized
		r := waitConnect(t, ch)
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.s, srv
	}
	ctx := context.Background()
	ask := func(c *Catalog) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.CompleteValues(ctx, CompletionRef{Prompt: "greet"}, "name", "a", nil)
			done <- err
		}()
		return done
	}

	s, srv := open("2024-11-05")
	c := NewCatalog(s)
	if !c.CanComplete() {
		t.Fatal("CanComplete false for a 2024-11-05 session")
	}
	done := ask(c)
	srv.reply(srv.nextRequest("completion/complete"), `{"completion":{"values":["alice"]}}`)
	if err := recv(t, done); err != nil {
		t.Fatal(err)
	}
	done = ask(c)
	req := srv.nextRequest("completion/complete")
	srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32601,"message":"Method not found"}}`)
	if err := recv(t, done); err == nil {
		t.Fatal("no error for -32601")
	}
	if c.CanComplete() {
		t.Error("CanComplete true after -32601")
	}
	if err := recv(t, ask(c)); err != nil {
		t.Fatal(err)
	}
	srv.quietUntil(mark(t, s))

	s, srv = open("2025-03-26")
	if NewCatalog(s).CanComplete() {
		t.Error("CanComplete true for a 2025-03-26 session that does not declare completions")
	}
	srv.quietUntil(mark(t, s))
}

func TestSchemaArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","description":"Who\nto greet"},
		"count":{"type":"integer","default":3},
		"color":{"type":"string","enum":["red","green"]},
		"size":{"oneOf":[{"const":1,"title":"S"},{"const":2,"title":"M"}]},
		"maybe":{"type":["integer","null"]},
		"any":{}
	},"required":["name"]}`)
	got := SchemaArgs(schema)
	want := []ArgInfo{
		{Name: "name", Type: "string", Required: true, Description: "Who\nto greet"},
		{Name: "count", Type: "integer", Default: json.RawMessage("3")},
		{Name: "color", Type: "string", Enum: []string{"red", "green"}},
		{Name: "size", Type: "number", Enum: []string{"1", "2"}},
		{Name: "maybe", Type: "integer|null"},
		{Name: "any"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SchemaArgs (-want +got):\n%s", diff)
	}

}

// TestSchemaArgsComposedRoot: an inputSchema that is a $ref, or an allOf
// of object schemas, has the arguments those describe (it was said to take
// none), the root's own first.
func TestSchemaArgsComposedRoot(t *testing.T) {
	for schema, want := range map[string][]ArgInfo{
		`{"type":"object","$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"s":{"type":"string"},"i":{"$ref":"#/$defs/I"}},"required":["s"]},"I":{"type":"integer"}}}`: {
			{Name: "s", Type: "string", Required: true}, {Name: "i", Type: "integer"}},
		`{"type":"object","properties":{"o":{"type":"object"}},"required":["o"],"allOf":[{"properties":{"s":{"type":"string"},"o":{"type":"string"}},"required":["s"]},{"$ref":"#/$defs/B"}],"$defs":{"B":{"properties":{"i":{"type":"integer"}}}}}`: {
			{Name: "o", Type: "object", Required: true}, {Name: "s", Type: "string", Required: true}, {Name: "i", Type: "integer"}},
		`{"$ref":"#"}`: nil,
	} {
		if diff := cmp.Diff(want, SchemaArgs(json.RawMessage(schema))); diff != "" {
			t.Errorf("%s: SchemaArgs (-want +got):\n%s", schema, diff)
		}
	}
}

// TestSchemaArgsFollowsRefs: a property given as a local $ref (to $defs,
// to definitions, through a chain, in a nullable anyOf) is described by
// the schema it points to — its type, allowed values, default and
// description — as key=value typing reads it; what the property says
// itself comes first. A $ref to nothing, to another document or round in
// a circle describes nothing, without hanging. So is one given as allOf
// [{"$ref"}], as pydantic v1 writes one with a description.
func TestSchemaArgsFollowsRefs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"owner":{"$ref":"#/$defs/Person"},
		"color":{"$ref":"#/definitions/Color","description":"the pen's colour"},
		"backup":{"anyOf":[{"$ref":"#/$defs/Person"},{"type":"null"}],"default":null},
		"alias":{"$ref":"#/$defs/Alias"},
		"size":{"oneOf":[{"$ref":"#/$defs/Small"},{"const":"l"}]},
		"loop":{"$ref":"#/$defs/Loop"},
		"ext":{"$ref":"other.json#/$defs/Person"},
		"nowhere":{"$ref":"#/$defs/Nope"},
		"shade":{"allOf":[{"$ref":"#/definitions/Color"}],"description":"pydantic v1"}
	},
	"$defs":{"Person":{"type":"object","description":"Someone","properties":{"name":{"type":"string"}}},
		"Alias":{"$ref":"#/definitions/Color","default":"red"},
		"Small":{"const":"s"},
		"Loop":{"$ref":"#/$defs/Loop2"},"Loop2":{"$ref":"#/$defs/Loop","description":"round"}},
	"definitions":{"Color":{"type":"string","enum":["red","green"],"description":"A colour","default":"green"}}}`)
	got := SchemaArgs(schema)
	want := []ArgInfo{
		{Name: "owner", Type: "object", Description: "Someone"},
		{Name: "color", Type: "string", Enum: []string{"red", "green"}, Default: json.RawMessage(`"green"`), Description: "the pen's colour"},
		{Name: "backup", Type: "null|object", Default: json.RawMessage("null")},
		{Name: "alias", Type: "string", Enum: []string{"red", "green"}, Default: json.RawMessage(`"red"`), Description: "A colour"},
		{Name: "size", Type: "string", Enum: []string{"s", "l"}},
		{Name: "loop", Description: "round"},
		{Name: "ext"},
		{Name: "nowhere"},
		{Name: "shade", Type: "string", Enum: []string{"red", "green"}, Description: "pydantic v1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SchemaArgs (-want +got):\n%s", diff)
	}
}

// completion/complete's context came in 2025-06-18. Asked for with an
// older session, it is sent after one warning; the catalog (the REPL's
// Tab) leaves it out there, silently. A 2025-06-18 session sends it as is.
func TestCompletionContextBeforeItsRevision(t *testing.T) {
	for _, tt := range []struct {
		version string
		warns   bool
	}{{"2025-03-26", true}, {"2025-06-18", false}} {
		t.Run(tt.version, func(t *testing.T) {
			ch, srv, w := startConnect(t, Options{})
			srv.reply(srv.nextRequest("initialize"), `{"protocolVersion":"`+tt.version+`","capabilities":{"prompts":{},"completions":{}},"serverInfo":{"name":"srv","version":"1"}}`)
			srv.next() // notifications/initialized
			s := waitConnect(t, ch).s
			ctx := context.Background()
			lang := map[string]string{"language": "go"}
			withContext := `{"ref":{"type":"ref/prompt","name":"code-review"},"argument":{"name":"code","value":"fm"},"context":{"arguments":{"language":"go"}}}`
			for range 2 {
				done := goOp(func() (json.RawMessage, []string, error) {
					r, err := s.Complete(ctx, CompletionRef{Prompt: "code-review"}, "code", "fm", lang)
					return r, nil, err
				})
				req := srv.nextRequest("completion/complete")
				if !jsonEqual(t, req.Params, []byte(withContext)) {
					t.Errorf("params %s", req.Params)
				}
				srv.reply(req, `{"completion":{"values":[]}}`)
				if r := opDone(t, done); r.err != nil {
					t.Fatal(r.err)
				}
			}
			if tt.warns {
				w.expect("speaks "+tt.version+", whose completion/complete has no context", "sending it anyway")
			}
			w.none()

			want := withContext
			if tt.warns {
				want = `{"ref":{"type":"ref/prompt","name":"code-review"},"argument":{"name":"code","value":"fm"}}`
			}
			done := make(chan error, 1)
			go func() {
				_, err := NewCatalog(s).CompleteValues(ctx, CompletionRef{Prompt: "code-review"}, "code", "fm", lang)
				done <- err
			}()
			req := srv.nextRequest("completion/complete")
			if !jsonEqual(t, req.Params, []byte(want)) {
				t.Errorf("catalog params %s, want %s", req.Params, want)
			}
			srv.reply(req, `{"completion":{"values":[]}}`)
			if err := recv(t, done); err != nil {
				t.Fatal(err)
			}
			w.none()
		})
	}
}
