package inspector

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

func TestCapabilities(t *testing.T) {
	mk := func(version string, roots, sampling bool, elicit string, tasks bool) *ClientFeatures {
		f := &ClientFeatures{Version: version}
		if roots {
			f.Roots = NewRoots([]Root{{URI: "file:///tmp", Name: "tmp"}})
		}
		if sampling {
			f.Sampler, _ = NewSampler(context.Background(), SamplingPolicy{Mode: PolicyDecline}, nil)
		}
		if elicit != "" {
			f.Elicitor, _ = NewElicitor(context.Background(), ElicitPolicy{Mode: elicit}, nil)
		}
		if tasks {
			f.Tasks = NewTaskStore()
		}
		return f
	}
	for _, tc := range []struct {
		name string
		f    *ClientFeatures
		want string
	}{
		{"nothing", mk("", false, false, "", false), `{}`},
		{"latest, everything", mk("", true, true, "decline", true),
			`{"roots":{"listChanged":true},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}},"tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}}`},
		{"accept-defaults declares applyDefaults", mk("2025-11-25", false, false, "accept-defaults", false),
			`{"elicitation":{"form":{"applyDefaults":true},"url":{}}}`},
		{"2025-06-18: plain elicitation, no tools, no tasks", mk("2025-06-18", true, true, "cancel", true),
			`{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`},
		{"2025-03-26: no elicitation", mk("2025-03-26", false, true, "decline", true), `{"sampling":{}}`},
		{"tasks only for what is declared", mk("", false, false, "decline", true),
			`{"elicitation":{"form":{},"url":{}},"tasks":{"list":{},"cancel":{},"requests":{"elicitation":{"create":{}}}}}`},
		{"tasks with nothing to run: not declared", mk("", true, false, "", true), `{"roots":{"listChanged":true}}`},
	} {
		got := string(tc.f.Capabilities())
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		var names []string
		for m := range tc.f.Handlers() {
			names = append(names, m)
		}
		// A handler exists exactly for each declared capability.
		for cap, method := range map[string]string{"roots": "roots/list", "sampling": "sampling/createMessage", "elicitation": "elicitation/create", "tasks": "tasks/get"} {
			declared := strings.Contains(got, `"`+cap+`":`)
			_, handled := tc.f.Handlers()[method]
			if declared != handled {
				t.Errorf("%s: %s declared=%v but %s handled=%v", tc.name, cap, declared, method, handled)
			}
		}
	}
}

// The 2026-07-28 capabilities: no roots.listChanged (its notification is
// gone), no core tasks capability but the tasks extension.
func TestModernCapabilities(t *testing.T) {
	f := &ClientFeatures{Roots: NewRoots([]Root{{URI: "file:///tmp"}}), Tasks: NewTaskStore()}
	f.Sampler, _ = NewSampler(context.Background(), SamplingPolicy{Mode: PolicyDecline}, nil)
	f.Elicitor, _ = NewElicitor(context.Background(), ElicitPolicy{Mode: PolicyAcceptDefaults}, nil)
	want := `{"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{"applyDefaults":true},"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	if got := string(f.ModernCapabilities()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string((&ClientFeatures{}).ModernCapabilities()); got != `{"extensions":{"io.modelcontextprotocol/tasks":{}}}` {
		t.Errorf("nothing enabled: %s", got)
	}
}

func TestRoots(t *testing.T) {
	dir := t.TempDir()
	r, err := RootFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.ToSlash(dir); r.URI != want || r.Name != filepath.Base(dir) {
		t.Errorf("got %+v, want uri %s", r, want)
	}
	wd, _ := os.Getwd()
	rel, err := RootFromPath(".")
	if err != nil || rel.URI != "file://"+filepath.ToSlash(wd) {
		t.Errorf("relative root: %+v %v", rel, err)
	}
	if _, err := RootFromPath(filepath.Join(dir, "missing")); err == nil || !strings.HasSuffix(err.Error(), filepath.Join(dir, "missing")+" does not exist") {
		t.Errorf("a missing directory must be refused, saying so: %v", err)
	}
	for _, empty := range []string{"", " "} {
		if _, err := RootFromPath(empty); err == nil || !strings.Contains(err.Error(), "the one given is empty") {
			t.Errorf("an empty path must be refused, not taken as the working directory: %v", err)
		}
	}
	if _, err := RootFromPath("https://example.com"); err == nil {
		t.Error("a non-file URI must be refused")
	}
	spaced := filepath.Join(dir, "a b")
	_ = os.Mkdir(spaced, 0o755)
	if r, _ := RootFromPath(spaced); !strings.HasSuffix(r.URI, "/a%20b") {
		t.Errorf("spaces must be escaped: %s", r.URI)
	}

	roots := NewRoots([]Root{r})
	var sent []string
	roots.Notify = func(_ context.Context, method string) error { sent = append(sent, method); return nil }
	raw, err := Adapt(roots.Handle)(context.Background(), &jsonrpc.Message{Method: "roots/list"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(raw.(json.RawMessage)); got != `{"roots":[{"uri":"`+r.URI+`","name":"`+r.Name+`"}]}` {
		t.Errorf("roots/list: %s", got)
	}
	if err := roots.Set(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	raw, _ = roots.Handle(context.Background(), "roots/list", nil)
	if string(raw.(json.RawMessage)) != `{"roots":[]}` || !cmp.Equal(sent, []string{"notifications/roots/list_changed"}) {
		t.Errorf("after Set: %s, sent %v", raw, sent)
	}
}

// Adapt echoes related-task metadata into the answer.
func TestAdaptRelatedTask(t *testing.T) {
	h := Adapt(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"decline"}`), nil
	})
	res, err := h(context.Background(), &jsonrpc.Message{Method: "elicitation/create", Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-9"}},"message":"m"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.(json.RawMessage)); got != `{"action":"decline","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-9"}}}` {
		t.Errorf("got %s", got)
	}
}

func TestServerDeclares(t *testing.T) {
	info := &ServerInfo{Capabilities: json.RawMessage(`{"resources":{"subscribe":true,"listChanged":false},"tasks":{"requests":{"tools":{"call":{}}}}}`)}
	for path, want := range map[string]bool{
		"resources/subscribe": true, "resources/listChanged": false, "tasks/requests/tools/call": true,
		"tasks/list": false, "tools": false, "resources": true,
	} {
		if got := info.Declares(strings.Split(path, "/")...); got != want {
			t.Errorf("%s: got %v", path, got)
		}
	}
	if (*ServerInfo)(nil).Declares("tools") {
		t.Error("nil info declares nothing")
	}
}

// TestUndeclaredCapabilityWarnsAndSends: a request for a capability the
// server did not declare is sent, after one warning per capability.
func TestUndeclaredCapabilityWarnsAndSends(t *testing.T) {
	ch, srv, w := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25")) // tools and logging
	if n := srv.next(); n.Method != "notifications/initialized" {
		t.Fatalf("sent %s", n.Raw)
	}
	s := waitConnect(t, ch).s
	ctx := context.Background()
	call := func(method string, opts ...CallOption) {
		t.Helper()
		done := goCall(ctx, s, method, nil, opts...)
		srv.reply(srv.nextRequest(method), `{}`)
		if r := result(t, done); r.err != nil {
			t.Fatalf("%s: %v", method, r.err)
		}
	}
	call("prompts/list")
	w.expect("does not declare the prompts capability", "sending prompts/list anyway")
	call("prompts/get")
	call("tools/list")
	call("logging/setLevel")
	call("ping")
	call("x/custom")
	w.none()
	call("resources/read")
	w.expect("does not declare the resources capability", "resources/read")
	call("resources/subscribe")
	w.expect("resources.subscribe capability")
	call("completion/complete")
	w.expect("completions capability")
	call("tasks/list")
	w.expect("tasks.list capability")
	// A caller that warned itself.
	call("logging/setLevel", capabilityWarned())
	if err := func() error {
		done := make(chan error, 1)
		go func() { done <- s.Subscribe(ctx, "x://y") }()
		srv.reply(srv.nextRequest("resources/subscribe"), `{}`)
		return <-done
	}(); err != nil {
		t.Fatal(err)
	}
	w.none()
}

// A 2024-11-05 server cannot declare completions (the capability came in
// 2025-03-26), so completion/complete to it is sent without a warning; a
// 2025-03-26 server that leaves it out is warned about.
func TestCompletionsCapabilityBySessionVersion(t *testing.T) {
	// An old version mcpx does not know, offered and accepted, is
	// followed as the latest one (with a warning that says so).
	for _, tt := range []struct {
		version string
		warns   bool
	}{{"2024-11-05", false}, {"2025-03-26", true}, {"2024-01-01", true}} {
		t.Run(tt.version, func(t *testing.T) {
			ch, srv, w := startConnect(t, Options{Lifecycle: &Legacy{ProtocolVersion: tt.version}})
			srv.reply(srv.nextRequest("initialize"), initResult(tt.version)) // no completions
			srv.next()
			s := waitConnect(t, ch).s
			if tt.version == "2024-01-01" {
				w.expect("accepted protocol version 2024-01-01, which mcpx does not know")
			}
			done := goCall(context.Background(), s, "completion/complete", nil)
			srv.reply(srv.nextRequest("completion/complete"), `{"completion":{"values":[]}}`)
			if r := result(t, done); r.err != nil {
				t.Fatal(r.err)
			}
			if tt.warns {
				w.expect("does not declare the completions capability")
			}
			w.none()
		})
	}
}

// A method of a capability the server declared, answered with -32601, is
// a contradiction worth a warning (once per method); an undeclared one's,
// or tools/call's (how a task-only tool is refused), is not.
func TestDeclaredButMethodNotFound(t *testing.T) {
	ch, srv, w := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25")) // tools and logging
	srv.next()
	s := waitConnect(t, ch).s
	refuse := func(method string) {
		t.Helper()
		done := goCall(context.Background(), s, method, nil, capabilityWarned())
		m := srv.nextRequest(method)
		srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32601,"message":"Method not found"}}`)
		if r := result(t, done); r.err == nil {
			t.Fatalf("%s succeeded", method)
		}
	}
	refuse("tools/list")
	w.expect("the server declares the tools capability, yet answers tools/list with -32601 (method not found)")
	refuse("tools/list")
	refuse("tools/call")
	refuse("prompts/list")
	w.none()
	refuse("logging/setLevel")
	w.expect("declares the logging capability, yet answers logging/setLevel")
}

// Extensions (MCP Apps with --ui) are declared under
// capabilities.extensions in both eras, beside the tasks extension in
// the modern one.
func TestExtensionsDeclared(t *testing.T) {
	f := &ClientFeatures{Extensions: map[string]json.RawMessage{
		"io.modelcontextprotocol/ui": json.RawMessage(`{"mimeTypes":["text/html;profile=mcp-app"]}`),
	}}
	if got, want := string(f.Capabilities()), `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`; got != want {
		t.Errorf("legacy:\n got %s\nwant %s", got, want)
	}
	if got, want := string(f.ModernCapabilities()), `{"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`; got != want {
		t.Errorf("modern:\n got %s\nwant %s", got, want)
	}
}

// Subscribe's and Unsubscribe's errors name the method once, with the
// URI quoted, as every other call's do (tools/call "echo": …); they read
// `resources/subscribe "x://y": resources/subscribe: server error …`.
func TestSubscribeErrorNamesTheMethodOnce(t *testing.T) {
	ch, srv, _ := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25"))
	srv.next()
	s := waitConnect(t, ch).s
	for _, tc := range []struct {
		method string
		call   func(context.Context, string) error
	}{
		{"resources/subscribe", s.Subscribe},
		{"resources/unsubscribe", s.Unsubscribe},
	} {
		done := make(chan error, 1)
		go func() { done <- tc.call(context.Background(), "x://y") }()
		m := srv.nextRequest(tc.method)
		srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32601,"message":"Method not found"}}`)
		err := <-done
		if err == nil || !strings.HasPrefix(err.Error(), tc.method+` "x://y": server error -32601`) {
			t.Errorf("%s: error %v", tc.method, err)
		}
	}
}

// The server's departures from the protocol reach OnDeparture, kept apart
// from the warnings that are not its fault (a request for a capability it
// did not declare, which mcpx sends anyway), so that a program can fail
// on the ones and not the others (mcpx --strict).
func TestDeparturesApartFromWarnings(t *testing.T) {
	d := &warnings{t: t, ch: make(chan string, 100)}
	ch, srv, w := startConnect(t, Options{OnDeparture: d.depart})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25")) // tools and logging
	srv.next()
	s := waitConnect(t, ch).s
	// Not the server's: a warning.
	done := goCall(context.Background(), s, "prompts/list", nil)
	srv.reply(srv.nextRequest("prompts/list"), `{"prompts":[]}`)
	if r := result(t, done); r.err != nil {
		t.Fatal(r.err)
	}
	w.expect("does not declare the prompts capability")
	d.none()
	// The server's, in the session (a declared method it does not know)
	// and in the JSON-RPC layer (a frame that is not JSON-RPC, a response
	// nobody asked for): departures.
	done = goCall(context.Background(), s, "tools/list", nil)
	m := srv.nextRequest("tools/list")
	srv.send(`not json`)
	srv.send(`{"jsonrpc":"2.0","id":"nobody","result":{}}`)
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32601,"message":"Method not found"}}`)
	if r := result(t, done); r.err == nil {
		t.Fatal("tools/list succeeded")
	}
	d.expect("not JSON-RPC")
	d.expect("response to unknown request id")
	d.expect("declares the tools capability, yet answers tools/list with -32601")
	w.none()
	d.none()
}

// A departure tied to a request comes to OnDeparture with the context its
// caller passed, so that a program running requests at once (the REPL's
// lines) can tell whose it is — even once the request has ended (a second
// answer to it); one tied to no request comes with context.Background().
func TestDeparturesComeWithTheirRequestsContext(t *testing.T) {
	type tagKey struct{}
	got := make(chan string, 100)
	onDeparture := func(ctx context.Context, msg string) {
		tag, _ := ctx.Value(tagKey{}).(string)
		got <- tag + ": " + msg
	}
	ch, srv, _ := startConnect(t, Options{OnDeparture: onDeparture})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25")) // tools and logging
	srv.next()
	s := waitConnect(t, ch).s
	expect := func(want ...string) {
		t.Helper()
		select {
		case d := <-got:
			if !containsAll(d, want...) {
				t.Errorf("departure %q, want one with %q", d, want)
			}
		case <-time.After(wait):
			t.Fatalf("no departure with %q", want)
		}
	}
	tagged := func(tag string) context.Context { return context.WithValue(context.Background(), tagKey{}, tag) }

	// A's answer comes with its id retyped (a JSON-RPC departure), B's is
	// -32601 for a declared capability (the session's).
	a := goCall(tagged("A"), s, "tools/list", nil)
	ma := srv.nextRequest("tools/list")
	b := goCall(tagged("B"), s, "tools/list", nil)
	mb := srv.nextRequest("tools/list")
	srv.send(`{"jsonrpc":"2.0","id":"` + ma.ID.String() + `","result":{"tools":[]}}`)
	if r := result(t, a); r.err != nil {
		t.Fatal(r.err)
	}
	expect("A: ", "the id's JSON type changed")
	srv.send(`{"jsonrpc":"2.0","id":` + mb.ID.String() + `,"error":{"code":-32601,"message":"Method not found"}}`)
	if r := result(t, b); r.err == nil {
		t.Fatal("B's tools/list succeeded")
	}
	expect("B: ", "yet answers tools/list with -32601")
	// A second answer to A, after A ended: still A's.
	srv.reply(ma, `{"tools":[]}`)
	expect("A: ", "second response to tools/list request")
	// Progress for C that goes backwards: C's.
	c := goCall(tagged("C"), s, "tools/call", map[string]any{"name": "slow"}, WithProgress(func(Progress) {}))
	mc := srv.nextRequest("tools/call")
	token := progressToken(t, mc)
	sendProgress(srv, token, 2, 10, "")
	sendProgress(srv, token, 1, 10, "")
	expect("C: ", "went from 2 to 1")
	srv.reply(mc, `{"content":[]}`)
	if r := result(t, c); r.err != nil {
		t.Fatal(r.err)
	}
	// Tied to no request.
	srv.send(`not json`)
	expect(": server sent a frame that is not JSON-RPC")
	srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":"x"}}`)
	expect(": log message with the level")
	srv.send(`{"jsonrpc":"2.0","id":"nobody","result":{}}`)
	expect(": response to unknown request id")
	select {
	case d := <-got:
		t.Errorf("unexpected departure %q", d)
	default:
	}
}
